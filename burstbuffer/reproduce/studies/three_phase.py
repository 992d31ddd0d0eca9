"""Study ``three-phase`` (issue 14): the same policies on the io-aware and the three-phase job models
(docs/io-model.md §1, §3), beside Cerberus (Yan et al., "Cerberus: A 3-Phase Burst Buffer Aware Batch
Scheduler for HPC Systems", §3) and Slurm's burst-buffer scheduling (`slurm-bb`, docs/policies.md).

Columns (`Variant` labels ``POLICY/MODEL``): fcfs-easy, sjf-bb and plan-2 on both models; slurm-bb and
cerberus on three-phase. Cerberus is judged as written (``cerberus-paper``: ``phases=as-written`` — bb_in, bb_run,
bb_out per job, Problem 2 under free nodes and free BB, Problem 1 on Q_O deciding the stage-outs —,
``starvation=none``: the paper has no starvation rule, ``knapsack_method=exact``: every knapsack solved exactly);
beside it, not judged: the same with the project's 24-h starvation rule (``cerberus-paper-24h``), the one-amount
policy without a rule and with exact knapsacks (``cerberus-one``), and the project's defaults (``cerberus``: one
amount, 24-h rule ``fcfs``, ``auto`` knapsacks) and ``reserve`` rule (``cerberus-reserve``). On three-phase fcfs-easy, sjf-bb and plan-2 plan BB over
the stagings and nodes over the running phase (`burstbuffer.schedulers.profile_scheduler`, the hold shapes of
`burstbuffer.schedulers.holds`: their default there, option
``staging=bb-first``).

Report section (`sections`): per variant, waiting time, bounded slowdown, node and BB utilisation, and how long
jobs held BB while pending — the jobs.csv column ``stage_in_pending`` of a three-phase run (stage-in + wait
for nodes after it) and the stage-in itself (``stage_in_end − starting_time``).

Claims: Cerberus' poster gives no number; its claim "boosts system responsiveness, improves job performance"
is judged on ``cerberus-paper`` (Cerberus as the paper states it) against the other policies, with the other
Cerberus variants reported beside it (not judged): responsiveness as the mean waiting time, job performance as the mean
bounded slowdown (τ = 600 s, docs/metrics.md), each against the same policies on io-aware and on three-phase.
A fourth row asks whether the three-phase model itself (stage-in before the nodes) helps the policies that
run on both models.
"""
from __future__ import annotations

import math
from pathlib import Path

from ...metrics.claims import AllHold, AtLeast, Claim, Measurement
from ..study import Study, Variant
from ...lazy import lazy

np = lazy("numpy")  # numpy and pandas: imported on first use (burstbuffer.lazy)
pd = lazy("pandas")

IO, TP = "io-aware", "three-phase"
#: the policies run on both job models
BOTH = ("fcfs-easy", "sjf-bb", "plan-2")
#: the Cerberus the claims judge: as written (three BB amounts, stage-out decisions), no starvation rule (the
#: paper states none), exact knapsacks at every size
CERBERUS = f"cerberus-paper/{TP}"
PAPER = {"phases": "as-written", "starvation": "none", "knapsack_method": "exact"}
#: the other Cerberus variants (the project's starvation rules, one BB amount), reported beside the judged one
RULE_VARIANTS = (f"cerberus-paper-24h/{TP}", f"cerberus-one/{TP}", f"cerberus/{TP}", f"cerberus-reserve/{TP}")

VARIANTS = (
    *(Variant(f"{p}/{IO}", p, model=IO) for p in BOTH),
    *(Variant(f"{p}/{TP}", p, model=TP) for p in BOTH),
    Variant(f"slurm-bb/{TP}", "slurm-bb", model=TP),
    Variant(f"cerberus/{TP}", "cerberus", model=TP),
    Variant(f"cerberus-reserve/{TP}", "cerberus", {"starvation": "reserve"}, model=TP),
    Variant(f"cerberus-one/{TP}", "cerberus", {"starvation": "none", "knapsack_method": "exact"}, model=TP),
    Variant(f"cerberus-paper-24h/{TP}", "cerberus", {**PAPER, "starvation": "fcfs"}, model=TP),
    Variant(CERBERUS, "cerberus", PAPER, model=TP),
)


def _get(s: pd.DataFrame, label: str, col: str) -> float:
    r = s[(s["policy"] == label) & (s["scope"] == "whole")] if "scope" in s else s[s["policy"] == label]
    return float(r[col].iloc[0]) if len(r) else math.nan


def _others(s: pd.DataFrame, model: str | None) -> list[str]:
    """The non-Cerberus variants in the table, on `model` (None: every model)."""
    labels = s[s["scope"] == "whole"]["policy"] if "scope" in s else s["policy"]
    return [p for p in dict.fromkeys(labels) if not p.startswith("cerberus")
            and (model is None or p.endswith("/" + model)) and not math.isnan(_get(s, p, "wait_h_mean"))]


def _versus(col: str, what: str, model: str | None):
    """Measure: Cerberus' mean `col` against the `model` variants'; value = the best other / Cerberus' (≥ 1:
    Cerberus is at least as good as every one), partly_value = the worst other / Cerberus' (> 1: better
    than at least one)."""
    def measure(s: pd.DataFrame) -> Measurement | None:
        others = _others(s, model)
        c = _get(s, CERBERUS, col)
        if not others or math.isnan(c) or c <= 0:
            return None
        vals = {p: _get(s, p, col) for p in others}
        best, worst = min(vals, key=vals.get), max(vals, key=vals.get)
        beaten = [p for p in others if vals[p] > c]
        rules = {p: _get(s, p, col) for p in RULE_VARIANTS}
        beside = ", ".join(f"{p.split('/')[0]} {v:.3g}" for p, v in rules.items() if not math.isnan(v))
        return Measurement(f"{what}: cerberus-paper {c:.3g}; " + ", ".join(f"{p} {v:.3g}" for p, v in vals.items())
                           + (f" (the other Cerberus variants, not judged: {beside})" if beside else ""),
                           f"cerberus-paper is below {len(beaten)} of {len(others)} ({', '.join(beaten) or 'none'}); "
                           f"best other {best} is {vals[best] / c:.2f}× cerberus-paper's",
                           value=vals[best] / c, partly_value=vals[worst] / c)
    return measure


def model_helps(s: pd.DataFrame) -> Measurement | None:
    """For each policy run on both models: three-phase's mean bounded slowdown below io-aware's."""
    pairs = [(p, _get(s, f"{p}/{IO}", "bsld_mean"), _get(s, f"{p}/{TP}", "bsld_mean")) for p in BOTH]
    pairs = [(p, a, b) for p, a, b in pairs if not (math.isnan(a) or math.isnan(b))]
    if not pairs:
        return None
    ok = [p for p, a, b in pairs if b < a]
    return Measurement("mean bounded slowdown io-aware → three-phase: " +
                       ", ".join(f"{p} {a:.3g} → {b:.3g}" for p, a, b in pairs),
                       f"lower on three-phase for {len(ok)} of {len(pairs)} ({', '.join(ok) or 'none'})",
                       count=(len(ok), len(pairs)))


_SRC = "Yan et al., Cerberus, abstract and §4"
CLAIMS = (
    Claim("responsive-io", "Cerberus boosts system responsiveness (mean waiting time) over the same policies on "
          "the io-aware model", _SRC, "whole", (CERBERUS,) + tuple(f"{p}/{IO}" for p in BOTH), "qualitative",
          _versus("wait_h_mean", "mean waiting time [h]", IO), AtLeast(1.0, 1.0), "cerberus and the io-aware runs"),
    Claim("responsive-3p", "Cerberus boosts system responsiveness (mean waiting time) over the other policies on "
          "the three-phase model", _SRC, "whole", (CERBERUS, f"slurm-bb/{TP}") + tuple(f"{p}/{TP}" for p in BOTH),
          "qualitative", _versus("wait_h_mean", "mean waiting time [h]", TP), AtLeast(1.0, 1.0),
          "cerberus and the three-phase runs"),
    Claim("performance", "Cerberus improves job performance (mean bounded slowdown) over every other policy, "
          "either model", _SRC, "whole", (CERBERUS,), "qualitative",
          _versus("bsld_mean", "mean bounded slowdown", None), AtLeast(1.0, 1.0), "cerberus and the other runs"),
    Claim("three-phase-model", "Staging in before the nodes (the three-phase model) improves job performance of "
          "the same policy", "Yan et al., Cerberus, §2", "whole", tuple(f"{p}/{m}" for p in BOTH for m in (IO, TP)),
          "qualitative", model_helps, AllHold(), "a policy on both models"),
)


def _num(df: pd.DataFrame, col: str) -> pd.Series:
    return pd.to_numeric(df[col], errors="coerce") if col in df else pd.Series(np.nan, index=df.index)


def staging_rows(specs, results) -> list[list]:
    """Per finished whole-scope run: the staging columns of the report (module docstring)."""
    rows = []
    for s in specs:
        if s.scope != "whole" or "error" in results.get(s.key, {"error": 1}):
            continue
        jobs = pd.read_csv(Path(s.out) / "jobs.csv", dtype={"job_id": str})
        started = jobs[_num(jobs, "starting_time").notna()]
        pend = _num(started, "stage_in_pending")
        stage = _num(started, "stage_in_end") - _num(started, "starting_time")
        wait = _num(started, "waiting_time")
        summ = results[s.key].get("summary", {})
        pct = lambda x: "n/a" if x is None or x != x else f"{100 * x:.1f} %"  # noqa: E731
        early = int((pend > 0).sum())
        rows.append([s.column or s.policy, s.model, f"{wait.mean() / 3600:.3g}",
                     f"{_num(started, 'bounded_slowdown').mean():.3g}", pct(summ.get("cpu_utilisation")),
                     pct(summ.get("bb_utilisation")),
                     "n/a" if pend.isna().all() else f"{pend.mean() / 60:.3g}",
                     "n/a" if pend.isna().all() else f"{pend.max() / 3600:.3g}",
                     "n/a" if stage.isna().all() else f"{stage.mean():.3g}",
                     "n/a" if pend.isna().all() else f"{early} of {len(started)}"])
    return rows


def sections(data) -> list:
    rep = data.report
    rep.h(1, "Three-phase: node and BB usage, stage-in while pending")
    rep.p("Per run: waiting time (submission → the first resource held: the stage-in's start), bounded slowdown, "
          "node utilisation (three-phase: the running phase only), BB utilisation (stage-in start → end), and "
          "stage_in_pending = nodes start − stage-in start (the stage-in plus any wait for nodes after it, BB "
          "held, no node), from each run's jobs.csv. io-aware runs have no such column (n/a): their stage-in "
          "holds the nodes.")
    rep.table(["variant", "model", "mean wait [h]", "mean bsld", "node util.", "BB util.",
               "mean stage_in_pending [min]", "max stage_in_pending [h]", "mean stage-in [s]",
               "jobs pending with BB"], staging_rows(data.specs, data.results))
    return []


STUDY = Study(
    name="three-phase",
    title="Three-phase burst-buffer scheduling: Cerberus and Slurm's stage-in beside the EASY family and plan-2",
    description="issue 14: cerberus, slurm-bb, fcfs-easy, sjf-bb, plan-2 on the io-aware vs the three-phase job "
                "model; Cerberus' claim judged against them",
    policies=BOTH + ("slurm-bb", "cerberus"), reference=f"sjf-bb/{IO}", claims=CLAIMS, variants=VARIANTS,
    sections=sections, paper="Yan et al., Cerberus",
)
