"""The default study: Kopanski & Rzadca, "Plan-based Job Scheduling for Supercomputers with Shared
Burst Buffers", Euro-Par 2021, §4.2 — eight policies on the io-aware model over the KTH trace (or its
first 1000 jobs) and its 16 three-week parts, Fig. 3 and 5-12, and the paper's eleven claims.

`CLAIMS` is the claims table (`burstbuffer.metrics.claims.Claim` rows, the paper's order); each
measure reads the summary tables only: ``whole`` claims the `summary_table` rows of the whole scope
(means and quantiles of the waiting time in hours, of the bounded slowdown with τ = 600 s, see
``docs/metrics.md``), ``parts`` claims the `part_means` rows (part means normalised by sjf-bb's).
"""
from __future__ import annotations

import math
from pathlib import Path

from ...metrics.claims import AllHold, Above, AtLeast, Claim, Measurement, Within
from ..study import GanttRun, Study
from ...lazy import lazy

np = lazy("numpy")  # numpy and pandas: imported on first use (burstbuffer.lazy)
pd = lazy("pandas")

#: the policies of the paper's §4.2, in its order
POLICIES = ("fcfs", "fcfs-easy", "filler", "fcfs-bb", "sjf-bb", "plan-1", "plan-2", "plan-3")
#: the policy the part means are normalised by (§4.2, Fig. 11-12)
REFERENCE = "sjf-bb"
#: the BB-aware policies that do not starve jobs, in the paper's order
BB_AWARE = ("fcfs-bb", "sjf-bb", "plan-1", "plan-2", "plan-3")
TAIL_JOBS = 3000


def _pct(x: float) -> str:
    return "n/a" if x != x else f"{100 * x:.1f} %"


def _g(x: float, d: int = 3) -> str:
    return "n/a" if x is None or x != x else f"{x:.{d}g}"


def _get(s: pd.DataFrame, policy: str, col: str = "wait_h_mean") -> float:
    """`col` of `policy`'s row of the summary `s` (NaN if the policy is absent)."""
    r = s[s["policy"] == policy]
    return float(r[col].iloc[0]) if len(r) else math.nan


def _have(s: pd.DataFrame, *policies: str) -> bool:
    return all((s["policy"] == p).any() and not math.isnan(_get(s, p)) for p in policies)


# --- measures over the whole workload (summary_table rows, one per policy) ---------------------------
def fcfs_easy_orders(s: pd.DataFrame) -> Measurement | None:
    """fcfs-easy's means / the highest mean of every policy but fcfs and fcfs-easy; value: the smaller
    of the two ratios (waiting time, bounded slowdown)."""
    others = [p for p in s["policy"] if p not in ("fcfs", "fcfs-easy")]
    if not (_have(s, "fcfs-easy") and others):
        return None
    rw = _get(s, "fcfs-easy") / max(_get(s, p) for p in others)
    rb = _get(s, "fcfs-easy", "bsld_mean") / max(_get(s, p, "bsld_mean") for p in others)
    return Measurement(f"fcfs-easy / the highest of {', '.join(others)}: waiting time {rw:.3g}×, "
                       f"bounded slowdown {rb:.3g}× (mean waiting time {_get(s, 'fcfs-easy'):.3g} h)",
                       f"10^{np.log10(rw):.2f} and 10^{np.log10(rb):.2f} vs 10^2 claimed "
                       f"(reproduced from 10^1.5, i.e. two orders when rounded)", value=min(rw, rb))


def easy_vs_fcfs(s: pd.DataFrame) -> Measurement | None:
    """Three conditions: fcfs-easy's mean below fcfs's, its median not above, its 31/32-quantile above."""
    if not _have(s, "fcfs", "fcfs-easy"):
        return None
    m = lambda p, c="wait_h_mean": _get(s, p, c)  # noqa: E731
    ok = [m("fcfs-easy") < m("fcfs"), m("fcfs-easy", "wait_h_q0.5") <= m("fcfs", "wait_h_q0.5"),
          m("fcfs-easy", "wait_h_q0.96875") > m("fcfs", "wait_h_q0.96875")]
    n_ok = sum(map(int, ok))
    return Measurement(f"mean waiting time fcfs-easy {m('fcfs-easy'):.3g} h vs fcfs {m('fcfs'):.3g} h; median "
                       f"{m('fcfs-easy', 'wait_h_q0.5'):.3g} vs {m('fcfs', 'wait_h_q0.5'):.3g} h; 31/32-quantile "
                       f"{m('fcfs-easy', 'wait_h_q0.96875'):.3g} vs {m('fcfs', 'wait_h_q0.96875'):.3g} h; max "
                       f"{m('fcfs-easy', 'wait_h_max'):.3g} vs {m('fcfs', 'wait_h_max'):.3g} h",
                       f"{n_ok} of 3 conditions hold (lower mean, lower median, higher 31/32-quantile)",
                       count=(n_ok, 3))


def sjf_vs_fcfs_bb(s: pd.DataFrame) -> Measurement | None:
    """value: how much lower sjf-bb's mean waiting time is than fcfs-bb's [percent]."""
    if not _have(s, "sjf-bb", "fcfs-bb"):
        return None
    d = 1 - _get(s, "sjf-bb") / _get(s, "fcfs-bb")
    return Measurement(f"sjf-bb {_get(s, 'sjf-bb'):.4g} h, fcfs-bb {_get(s, 'fcfs-bb'):.4g} h: {_pct(d)} lower",
                       f"{100 * d - 4.5:+.1f} percentage points from 4.5 % (tolerance ±2.5)",
                       value=100 * d, partly_value=d)


def plan2_improvement(col: str, claimed: float, tol: float):
    """A measure: plan-2's improvement of `col` over sjf-bb [percent], value = the improvement."""
    def measure(s: pd.DataFrame) -> Measurement | None:
        if not _have(s, "plan-2", "sjf-bb"):
            return None
        imp = 100 * (1 - _get(s, "plan-2", col) / _get(s, "sjf-bb", col))
        return Measurement(f"plan-2 {_get(s, 'plan-2', col):.4g}, sjf-bb {_get(s, 'sjf-bb', col):.4g}: {imp:.1f} % better",
                           f"{imp - claimed:+.1f} percentage points from {claimed:g} %"
                           + (f" (tolerance −{tol:g})" if tol else " (claimed as a lower bound)"), value=imp)
    return measure


def plan2_first(s: pd.DataFrame) -> Measurement | None:
    """Two conditions: plan-2 ranks first on mean waiting time, and on mean bounded slowdown."""
    if not (_have(s, "plan-2") and len(s) > 1):
        return None
    res = []
    for col, label in (("wait_h_mean", "waiting time"), ("bsld_mean", "bounded slowdown")):
        ranked = s.sort_values(col)[["policy", col]]
        rank = int(np.flatnonzero(ranked["policy"].to_numpy() == "plan-2")[0]) + 1
        best_other = ranked[ranked["policy"] != "plan-2"].iloc[0]
        res.append((rank, label, best_other["policy"], _get(s, "plan-2", col) / float(best_other[col]) - 1))
    return Measurement("; ".join(f"{label}: plan-2 ranks {rank} of {len(s)}" for rank, label, _, _ in res),
                       "; ".join(f"{label}: {100 * gap:+.1f} % vs the best other ({p})" for _, label, p, gap in res),
                       count=(sum(r[0] == 1 for r in res), 2))


def filler_starves(s: pd.DataFrame) -> Measurement | None:
    """value: filler's maximum waiting time / the highest maximum of the BB-aware policies run;
    partly_value: filler's maximum minus the first BB-aware policy's [h]."""
    aware = [p for p in BB_AWARE if _have(s, p)]
    if not (_have(s, "filler") and aware):
        return None
    mx = {p: _get(s, p, "wait_h_max") for p in aware}
    top = max(mx, key=mx.get)
    fmax = _get(s, "filler", "wait_h_max")
    ratio = fmax / mx[top]
    med = _get(s, "filler", "wait_h_q0.5") <= min(_get(s, p, "wait_h_q0.5") for p in aware)
    return Measurement(f"max waiting time filler {fmax:.3g} h vs the highest of "
                       f"{', '.join(aware)} ({top}) {mx[top]:.3g} h; filler median {_get(s, 'filler', 'wait_h_q0.5'):.3g} h"
                       f" ({'lowest' if med else 'not the lowest'} of these)",
                       f"filler's maximum is {ratio:.2f}× the highest of the BB-aware policies",
                       value=ratio, partly_value=fmax - mx[aware[0]])


def plan1_delays(s: pd.DataFrame) -> Measurement | None:
    """Conditions: plan-1's maximum waiting time above plan-2's, above sjf-bb's (those run)."""
    refs = [p for p in ("plan-2", "sjf-bb") if _have(s, p)]
    if not (_have(s, "plan-1") and refs):
        return None
    ratios = {p: _get(s, "plan-1", "wait_h_max") / _get(s, p, "wait_h_max") for p in refs}
    return Measurement(f"max waiting time plan-1 {_get(s, 'plan-1', 'wait_h_max'):.3g} h; "
                       + ", ".join(f"{p} {_get(s, p, 'wait_h_max'):.3g} h" for p in refs),
                       ", ".join(f"{r:.2f}× {p}'s" for p, r in ratios.items()),
                       count=(sum(r > 1 for r in ratios.values()), len(refs)))


# --- measures over the parts (part_means rows, one per part and policy) ------------------------------
def _nparts(pm: pd.DataFrame) -> int:
    return pm["scope"].nunique() if len(pm) else 0


def filler_above_reference(pm: pd.DataFrame) -> Measurement | None:
    """Conditions: filler's part mean above sjf-bb's in a majority of parts, for the waiting time and
    for the bounded slowdown."""
    if not (_nparts(pm) and (pm["policy"] == "filler").any() and pm["wait_norm"].notna().any()):
        return None
    r = {c: pm[pm["policy"] == "filler"][c].dropna() for c in ("wait_norm", "bsld_norm")}
    kw, nw = int((r["wait_norm"] > 1).sum()), len(r["wait_norm"])
    kb, nb = int((r["bsld_norm"] > 1).sum()), len(r["bsld_norm"])
    return Measurement(f"filler's part mean above sjf-bb's in {kw} of {nw} parts (waiting time), {kb} of {nb} "
                       f"(bounded slowdown)", "majority needed on both metrics",
                       count=(int(kw > nw / 2) + int(kb > nb / 2), 2))


def plans_below_reference(pm: pd.DataFrame) -> Measurement | None:
    """Conditions: each plan policy's median normalised part mean below 1, for both metrics."""
    plans = [p for p in ("plan-1", "plan-2", "plan-3") if _nparts(pm) and (pm["policy"] == p).any()]
    if not (plans and pm["wait_norm"].notna().any()):
        return None
    meds = {p: (pm.loc[pm["policy"] == p, "wait_norm"].median(), pm.loc[pm["policy"] == p, "bsld_norm"].median())
            for p in plans}
    n_ok = sum(int(a < 1) + int(b < 1) for a, b in meds.values())
    return Measurement("median normalised mean (waiting time, bounded slowdown): "
                       + "; ".join(f"{p} {_g(a)}, {_g(b)}" for p, (a, b) in meds.items()),
                       f"{n_ok} of {2 * len(plans)} medians below 1 (sjf-bb = 1)", count=(n_ok, 2 * len(plans)))


def plan1_beats_plan2(pm: pd.DataFrame) -> Measurement | None:
    """Conditions: plan-1's part mean below plan-2's in a majority of parts, for both metrics."""
    if not (_nparts(pm) and all((pm["policy"] == p).any() for p in ("plan-1", "plan-2"))):
        return None
    w = pm.pivot(index="scope", columns="policy", values="wait_mean_h")
    b = pm.pivot(index="scope", columns="policy", values="bsld_mean")
    kw, kb = int((w["plan-1"] < w["plan-2"]).sum()), int((b["plan-1"] < b["plan-2"]).sum())
    n = int(w[["plan-1", "plan-2"]].notna().all(axis=1).sum())
    return Measurement(f"plan-1's part mean below plan-2's in {kw} of {n} parts (waiting time), {kb} of {n} "
                       f"(bounded slowdown)", "majority needed on both metrics",
                       count=(int(kw > n / 2) + int(kb > n / 2), 2))


#: The claims of §4.2, in the paper's order (the report numbers them 1-11).
CLAIMS: tuple[Claim, ...] = (
    Claim("easy-orders", "fcfs-easy has two orders of magnitude higher mean waiting time and mean bounded "
          "slowdown than every other policy except fcfs", "§4.2, Fig. 5-6", "whole",
          ("fcfs-easy", "*"), "10^2", fcfs_easy_orders, AtLeast(10 ** 1.5, 1),
          "fcfs-easy and another policy besides fcfs"),
    Claim("easy-vs-fcfs", "fcfs-easy does better than fcfs on average and for the majority of jobs, but worse "
          "in the last 32-quantile: it considerably delays numerous jobs", "§4.2, Fig. 5, 7, 9", "whole",
          ("fcfs", "fcfs-easy"), "qualitative", easy_vs_fcfs, AllHold(), "fcfs and fcfs-easy"),
    Claim("sjf-vs-fcfs-bb", "sjf-bb's mean waiting time is 4.5 % lower than fcfs-bb's (whole trace)",
          "§4.2 (choice of the reference)", "whole", ("sjf-bb", "fcfs-bb"), "4.5 %", sjf_vs_fcfs_bb,
          Within(4.5, 2.5, 0.0), "sjf-bb and fcfs-bb", missing_source="§4.2"),
    Claim("plan2-wait", "plan-2 improves the mean waiting time by over 20 % over sjf-bb",
          "§1 contribution 4, §4.2, Fig. 5", "whole", ("plan-2", "sjf-bb"), "> 20 %",
          plan2_improvement("wait_h_mean", 20.0, 0.0), AtLeast(20.0 - 0.0, 0), "plan-2 and sjf-bb",
          missing_source="§4.2, Fig. 5"),
    Claim("plan2-bsld", "plan-2 improves the mean bounded slowdown by 27 % over sjf-bb",
          "§1 contribution 4, §4.2, Fig. 6", "whole", ("plan-2", "sjf-bb"), "27 %",
          plan2_improvement("bsld_mean", 27.0, 2.5), AtLeast(27.0 - 2.5, 0), "plan-2 and sjf-bb",
          missing_source="§4.2, Fig. 6"),
    Claim("plan2-best", "plan-2 outperforms all other policies (mean waiting time and mean bounded slowdown)",
          "§4.2, Fig. 5-6", "whole", ("plan-2", "*"), "rank 1 of 8", plan2_first, AllHold(),
          "plan-2 and other policies", missing_source="§4.2"),
    Claim("filler-starves", "filler has a good distribution for most jobs but disproportionately delays some "
          "(near-starvation; tail of the waiting time)", "§4.2, Fig. 7-10", "whole", ("filler",) + BB_AWARE,
          "qualitative", filler_starves, Above(1, 0), "filler and a BB-aware policy",
          missing_source="§4.2, Fig. 9-10"),
    Claim("plan1-delays", "plan-1 delays selected jobs significantly (tail of the waiting time)", "§4.2, Fig. 9",
          "whole", ("plan-1", "plan-2", "sjf-bb"), "qualitative", plan1_delays, AllHold(),
          "plan-1 and plan-2 or sjf-bb"),
    Claim("parts-filler", "over the parts, filler has in most cases a higher mean than the non-starving "
          "BB-aware policies", "§4.2, Fig. 11-12", "parts", ("filler", REFERENCE), "most of 16 parts",
          filler_above_reference, AllHold(), "the parts with filler and sjf-bb"),
    Claim("parts-plans", "over the parts, plan-based scheduling outperforms greedy list scheduling (sjf-bb)",
          "§4.2, Fig. 11-12", "parts", ("plan-1", "plan-2", "plan-3", REFERENCE), "medians < 1",
          plans_below_reference, AllHold(), "the parts with a plan policy and sjf-bb"),
    Claim("parts-plan1", "in the shorter workloads (parts), plan-1 outperforms plan-2", "§4.2, Fig. 11-12",
          "parts", ("plan-1", "plan-2"), "most of 16 parts", plan1_beats_plan2, AllHold(),
          "the parts with plan-1 and plan-2"),
)


# --- figures ------------------------------------------------------------------------------------------
def whole_figures(wj: pd.DataFrame, figs: Path) -> list[tuple[list[Path], str]]:
    """Fig. 5-10 from the tidy per-job metrics of the whole scope: (PNG and SVG paths, caption) each."""
    from ...metrics import figures as F
    return [
        (F.mean_bars(wj, "waiting_time", figs, "fig05_mean_waiting_time", "Fig. 5: mean waiting time [h]"),
         "Fig. 5: mean waiting time [h], black bars: 95 % confidence intervals"),
        (F.mean_bars(wj, "bounded_slowdown", figs, "fig06_mean_bounded_slowdown", "Fig. 6: mean bounded slowdown"),
         "Fig. 6: mean bounded slowdown (τ = 600 s), black bars: 95 % confidence intervals"),
        (F.quantile_plot(wj, "waiting_time", figs, "fig07_waiting_time_quantiles", "Fig. 7: waiting time quantiles [h]"),
         "Fig. 7: waiting time quantiles [h] (letter-value plot, log scale)"),
        (F.quantile_plot(wj, "bounded_slowdown", figs, "fig08_bounded_slowdown_quantiles",
                         "Fig. 8: bounded slowdown quantiles"),
         "Fig. 8: bounded slowdown quantiles (letter-value plot, log scale)"),
        (F.tail_plot(wj, "waiting_time", figs, "fig09_waiting_time_tail", "Fig. 9: waiting time tail [h]", k=TAIL_JOBS),
         f"Fig. 9: waiting time tail distribution [h]: the {TAIL_JOBS} largest values per policy"),
        (F.tail_plot(wj, "bounded_slowdown", figs, "fig10_bounded_slowdown_tail", "Fig. 10: bounded slowdown tail",
                     k=TAIL_JOBS),
         f"Fig. 10: bounded slowdown tail distribution: the {TAIL_JOBS} largest values per policy"),
    ]


def part_figures(pm: pd.DataFrame, figs: Path) -> tuple[list[tuple[list[Path], str]], str | None]:
    """Fig. 11-12 from the part means (`part_means` rows): (figures, None), or ([], why they are left out)."""
    from ...metrics import figures as F
    from ...metrics.tables import normalised_wide
    ww, wb = normalised_wide(pm, "wait_norm"), normalised_wide(pm, "bsld_norm")
    if not ww.notna().any().any():
        return [], ("No normalised part mean: sjf-bb, the reference, did not run on the parts (or its means are 0). "
                    "Fig. 11-12 are left out.")
    return [(F.normalised_boxplot(ww, figs, "fig11_normalised_waiting_time",
                                  "Fig. 11: normalised mean waiting time", REFERENCE),
             "Fig. 11: mean waiting time per part normalised by sjf-bb's (one dot per part)"),
            (F.normalised_boxplot(wb, figs, "fig12_normalised_bounded_slowdown",
                                  "Fig. 12: normalised mean bounded slowdown", REFERENCE),
             "Fig. 12: mean bounded slowdown per part normalised by sjf-bb's (one dot per part)")], None


def whole_scope_note(manifest: dict) -> str | None:
    """The report's caveat when the whole-trace claims are judged on less than the whole KTH trace."""
    if manifest.get("jobs") == "all":
        return None
    return (f"The claims about the whole trace are judged here on {manifest.get('whole_label', 'whole')}; the "
            f"paper measured them on the whole KTH trace (28,453 jobs).")


STUDY = Study(
    name="kopanski2021",
    title="Reproduction of Kopanski & Rzadca, Euro-Par 2021, §4.2",
    description="Kopanski & Rzadca, Plan-based Job Scheduling for Supercomputers with Shared Burst Buffers "
                "(Euro-Par 2021), §4.2: eight policies, the KTH trace and its 16 parts, Fig. 3 and 5-12, 11 claims",
    policies=POLICIES, reference=REFERENCE, claims=CLAIMS,
    gantt=GanttRun(policy="fcfs-easy", model="alloc-only", figure="fig03_gantt_fcfs_easy", label="Fig. 3"),
    whole_figures=whole_figures, part_figures=part_figures, whole_scope_note=whole_scope_note,
)
