"""The BBSched study: Fan, Lan, Rich, Allcock, Papka, Austin, Paul, *Scheduling Beyond CPUs for HPC*
(HPDC'19), §4 — BBSched and its seven baselines (§4.3) on the paper's own workloads, Cori-like and
Theta-like Original and S1-S4 built as §4.1 builds them (`bbsched_regime`, `burstbuffer.workloads.fan2019`),
with the regime checks that gate the verdicts; the paper's metrics (§4.2: node usage, BB usage, mean
waiting time, mean slowdown), Table 3 (window 10, 20, 50), figures like Fig. 6-8, 10 and 12, the GA's
generational distance, and the claims of §4.4 and §6 (`bbsched_claims`). The selected KTH workload and
KTH-S1..S4 (with sjf-bb and plan-2 of Kopanski & Rzadca 2021) run beside for context and judge no claim.

`burstbuffer reproduce --study bbsched [--jobs 1000|all] --output DIR`. The variants (`VARIANTS`) are the
columns; ``bbsched`` records the GD per decision (``record_gd``, which does not change its schedule).
Table 3's ``bbsched/w10`` and ``bbsched/w50`` run on the S4 workloads only, as the paper's Table 3 covers
Cori-S4 and Theta-S4 only. ``bbsched-nsga2`` (pymoo's NSGA-II, minutes per run) and ``bbsched-exact`` are
not default variants; ``--policies bbsched,bbsched-exact,…`` adds them. KTH-S1-S4 are made from the
selected workload by `burstbuffer.workloads.transform.transform_bb` with the run's ``--seed``
(docs/bbsched.md, "Workloads S1-S4"), for the BB nodes and capacity of the study's ``--platform``. The
metrics and the measurement window: `bbsched_tables`.
"""
from __future__ import annotations

import math
from pathlib import Path

from ...metrics.claims import Claim, RegimeCheck
from ..study import ExtraWorkload, Study, StudyData, Variant
from . import bbsched_claims as C
from . import bbsched_regime as R
from . import bbsched_tables as T
from ...lazy import lazy

pd = lazy("pandas")  # imported on first use (burstbuffer.lazy)

#: BBSched and the baselines of §4.3, in the paper's order (bbsched-naive is the paper's "Baseline")
METHODS = ("bbsched-naive", "weighted", "weighted-cpu", "weighted-bb", "constrained-cpu", "constrained-bb",
           "bin-packing", "bbsched")
BASELINE = "bbsched-naive"
#: the workload scopes of the KTH regime: the selected KTH workload ("whole") and the four synthetic ones
KTH_SCOPES = ("whole", "S1", "S2", "S3", "S4")
#: every scope the claims judge: the paper regime's groups (means over replicates, `bbsched_regime`), then KTH's
SCOPES = R.GROUPS + KTH_SCOPES
SCOPE_NAMES = {"whole": "KTH", "S1": "KTH-S1", "S2": "KTH-S2", "S3": "KTH-S3", "S4": "KTH-S4",
               **{g: R.group_label(g) for g in R.GROUPS}}
#: Table 3's workloads (the paper: Cori-S4 and Theta-S4) and windows
TABLE3_SCOPE = "S4"
TABLE3_GROUPS = tuple(g for g in R.GROUPS if g.endswith("-S4"))
REGIME_SCOPES = tuple(R.scope_name(m, s, k) for m in R.MACHINES for s in R.SCENARIOS for k in range(R.REPLICATES))
WINDOWS = {10: "bbsched/w10", 20: "bbsched", 50: "bbsched/w50"}
VARIANTS = tuple([Variant("bbsched", "bbsched", {"record_gd": True})]
                 + [Variant(m, m) for m in METHODS if m != "bbsched"]
                 + [Variant("sjf-bb", "sjf-bb", scopes=KTH_SCOPES), Variant("plan-2", "plan-2", scopes=KTH_SCOPES)]
                 + [Variant(WINDOWS[w], "bbsched", {"window": w, "record_gd": True},
                            scopes=(TABLE3_SCOPE,) + tuple(x for x in REGIME_SCOPES if R.group_of(x).endswith("-S4")))
                    for w in (10, 50)])
#: the paper's Table 3 (Cori-S4, Theta-S4): node usage, BB usage [%], mean wait [s], mean slowdown
PAPER_TABLE3 = {"node_usage": ((60.18, 64.90, 65.06), (67.12, 73.29, 74.34)),
                "bb_usage": ((92.53, 94.74, 94.65), (84.23, 89.54, 89.63)),
                "wait_s": ((55732, 51028, 50871), (10402, 8847, 8792)),
                "slowdown": ((162.37, 154.43, 153.20), (8.93, 8.16, 8.08))}


# --- workloads ------------------------------------------------------------------------------------
def derive_workloads(whole: Path, work: Path, seed: int, platform: Path | None = None) -> list[ExtraWorkload]:
    """KTH-S1 … KTH-S4 (Fan et al. 2019 §4.1) from the Batsim workload `whole`, with `seed`, for the BB
    nodes and capacity of `platform` (`burstbuffer.workloads.cli.platform_params`; the paper's 12 × 40 GB
    for what the file does not say, or without a file), written to `work`/<stem>-S<k>-seed<seed>.json
    (rewritten only when the content differs). InputError when `whole` or `platform` cannot be read or
    `whole` has no BB request above a threshold."""
    from ...workloads.batsim_json import _dumps, load_workload, write_workload
    from ...workloads.cli import PAPER_PLATFORM, platform_params
    from ...workloads.transform import SCENARIOS, transform_bb
    w = load_workload(whole, require_bb=False)
    params = {**PAPER_PLATFORM, **(platform_params(platform) if platform is not None else {})}
    nodes, cap = params["bb_nodes"], params["bb_capacity"]
    out = []
    for name, (share, frac) in SCENARIOS.items():
        res = transform_bb(w, share=share, from_above=frac, seed=seed, total_bb=nodes * cap, bb_nodes=nodes,
                           bb_capacity=cap, source=str(whole))
        path = work / f"{whole.stem}-{name}-seed{seed}.json"
        text = _dumps(res.workload.to_dict())
        if not (path.is_file() and path.read_text(encoding="utf-8") == text):
            write_workload(path, res.workload)
        out.append(ExtraWorkload(name, path, f"{SCOPE_NAMES[name]} ({share:g} of jobs with BB, drawn above "
                                             f"{frac:.4g} of the BB; seed {seed}): {res.summary()}"))
    return out + R.derive(whole, work, seed, Path(__file__).resolve().parents[3])


# --- the claims' measures (rows of `claim_rows`: scope, policy, node_usage, bb_usage, wait_h_mean, …) ------
def _pivot(rows: pd.DataFrame, col: str) -> pd.DataFrame:
    """`col` as a scope × policy table of the workload scopes present (SCOPES order)."""
    if rows.empty:
        return pd.DataFrame()
    t = rows.pivot_table(index="scope", columns="policy", values=col, aggfunc="first")
    return t.reindex([s for s in SCOPES if s in t.index])


def _methods(t: pd.DataFrame) -> list[str]:
    return [m for m in METHODS if m in t.columns]


def _s4_scopes(rows: pd.DataFrame) -> list[str]:
    return [s for s in (*TABLE3_GROUPS, TABLE3_SCOPE) if (rows["scope"] == s).any()]


def regime(data: StudyData) -> list[RegimeCheck]:
    """The regime checks of every paper-regime workload run (`bbsched_regime.GroupRegime.checks`); none when no
    paper-regime workload ran (a KTH-only run judges nothing: the claims are about the paper's workloads)."""
    return [RegimeCheck(*c) for g in R.group_regimes(data, BASELINE) for c in g.checks()]


#: the claims (`bbsched_claims`), judged on the paper-regime workloads
CLAIMS: tuple[Claim, ...] = C.CLAIMS


# --- tables and sections --------------------------------------------------------------------------
def _capacities(data: StudyData) -> dict:
    from ...workloads.cli import PAPER_PLATFORM as p
    default = (p["nb_res"], p["bb_nodes"] * p["bb_capacity"])
    return {(s.scope, s.column or s.policy): T.read_capacity(Path(s.out), default)
            for s in data.specs if "error" not in data.results.get(s.key, {"error": 1})}


def claim_rows(data: StudyData) -> pd.DataFrame:
    """The paper's metrics (`bbsched_tables.paper_metrics`) of every workload scope: the report's tables;
    also written to ``OUTPUT/paper_metrics.csv``."""
    caps = _capacities(data)
    j = data.jobs[data.jobs["scope"].isin(KTH_SCOPES)]
    rows = T.paper_metrics(j, caps) if len(j) else T.paper_metrics(j, {})
    if len(j):
        rows = rows.merge(T.class_waits(j, caps), on=["scope", "policy"], how="left")
    jr = data.jobs[data.jobs["scope"].isin(REGIME_SCOPES)]
    if len(jr):
        rep = T.paper_metrics(jr, caps, window_fn=R.window)
        rep = rep.merge(T.class_waits(jr, caps, window_fn=R.window), on=["scope", "policy"], how="left")
        rep.to_csv(data.out / "paper_metrics_replicates.csv", index=False)
        rows = pd.concat([R.aggregate(rep), rows], ignore_index=True)
    rows.to_csv(data.out / "paper_metrics.csv", index=False)
    return rows


def _labels(rows: pd.DataFrame) -> list[str]:
    known = [v.label for v in VARIANTS]
    present = list(dict.fromkeys(rows["policy"]))
    return [p for p in known if p in present] + sorted(p for p in present if p not in known)


def _fmt(col: str, v: float) -> str:
    if v != v:
        return "n/a"
    return f"{100 * v:.1f} %" if col.endswith("usage") else f"{v:.3g}"


def _ci(col: str, ci: pd.DataFrame | None, p: str, k: int) -> str:
    """" ± half width" of the confidence interval in cell (policy p, k-th workload), "" without one."""
    if ci is None or p not in ci.index:
        return ""
    v = ci.loc[p].iloc[k]
    if v != v:
        return ""
    return f" ± {100 * v:.1f}" if col.endswith("usage") else f" ± {v:.2g}"


METRIC_NAMES = {"node_usage": "node usage", "bb_usage": "BB usage", "wait_h_mean": "mean waiting time [h]",
                "bsld_mean": "mean bounded slowdown"}


def sections(data: StudyData) -> list:
    """The study's report sections: workloads, the paper's metrics per workload (Fig. 6-8, 12), Table 3,
    waiting time by BB request class (Fig. 10), the GA's GD."""
    rep, figs = data.report, data.figures
    rows = claim_rows(data)
    if rows.empty:
        return []
    out = []
    rep.h(1, "BBSched study: the paper's metrics (Fan et al. 2019, §4.2)")
    body = R.regime_table(R.group_regimes(data, BASELINE))
    if body:
        rep.h(2, "The paper regime: Cori-like and Theta-like machines, Original and S1-S4 (§4.1)")
        rep.p(f"Each workload is {R.REPLICATES} replicates (workload and policy seed {R.REPLICATES} × --seed + k) of the KTH jobs made "
              "into the machine's workload by burstbuffer.workloads.fan2019 (96 compute nodes with the machine's BB per "
              "node; the paper's share of jobs with a request, each request the same share of the BB as in the paper; "
              "submissions as the trace has them; alloc-only; base order FCFS on Cori, WFP on Theta). Metrics: the "
              f"means over the replicates ± the 95 % Student-t half width, over the submission span without its first "
              f"and last {100 * R.TRIM:g} % (the paper's half-month warm-up and cool-down). Regime checks per workload "
              f"(a failed one makes the claims out of regime): offered load below {R.LOAD_MAX:g}; the Baseline's BB "
              f"usage at least {100 * R.BB_HEAVY:g} % on the heavy workloads ({', '.join(map(R.group_label, R.HEAVY))}), "
              f"below it on the others; bbsched's GA decides at least {100 * R.GA_MIN:g} % of its decisions; the "
              f"starvation bound (50 window iterations, §3.1) forces a job at no more than {100 * R.FORCED_MAX:g} %.")
        rep.table(R.REGIME_HEADER, body)
    w = rows[rows["scope"].isin(KTH_SCOPES)].drop_duplicates("scope").set_index("scope")
    trimmed = bool(w["trimmed"].any())
    rep.p("Node and BB usage are measured over the measurement window, waiting time and bounded slowdown "
          "(τ = 600 s, instead of the paper's slowdown without abnormal jobs) over the jobs submitted in it. "
          + ("The first and last half-month are dropped, as in the paper." if trimmed else
             "The submissions span less than 60 days: no half-month is dropped; the window runs from the first "
             "to the last submission (the drain after it is left out, as the paper's cool-down leaves it out)."))
    rep.table(["workload", "window [d from first submission]", "jobs in window", "jobs with BB", "mean BB request of those [GB]"],
              [[SCOPE_NAMES.get(s, s), f"{(r['window_start'] - _first(data, s)) / T.DAY:.1f}–"
                f"{(r['window_end'] - _first(data, s)) / T.DAY:.1f}", int(r["jobs"]), _bb_share(data, s), _bb_volume(data, s)]
               for s, r in w.iterrows()])
    labels = [p for p in _labels(rows) if p not in (WINDOWS[10], WINDOWS[50])]
    for i, (col, name) in enumerate(METRIC_NAMES.items()):
        t = _pivot(rows, col).T.reindex(labels)
        t.columns = [SCOPE_NAMES.get(c, c) for c in t.columns]
        rep.h(2, name)
        ci = (_pivot(rows, col + "_ci").T.reindex(index=labels, columns=_pivot(rows, col).index)
              if col + "_ci" in rows.columns else None)
        rep.table(["policy", *t.columns], [[p, *(_fmt(col, v) + _ci(col, ci, p, k) for k, v in enumerate(t.loc[p]))]
                                           for p in t.index])
        fig = {0: "fig06", 1: "fig07", 2: "fig08", 3: "fig12"}[i]
        out.append((T.grouped_bars(t, figs, f"{fig}_{col}", f"{name} per workload", name, percent=col.endswith("usage")),
                    f"{fig.replace('fig', 'Fig. ').replace('Fig. 0', 'Fig. ')}-like: {name} per workload and policy"))
    _vs_baseline(rep, rows, labels)
    out += _table3(data, rows)
    out += _bb_classes(data)
    _gd_section(data)
    return out


def _vs_baseline(rep, rows: pd.DataFrame, labels: list[str]) -> None:
    """Each policy's relative change of node usage, BB usage and mean waiting time vs bbsched-naive [%]."""
    tabs = {c: _pivot(rows, c) for c in ("node_usage", "bb_usage", "wait_h_mean")}
    if BASELINE not in tabs["node_usage"].columns:
        return
    scopes = list(tabs["node_usage"].index)
    body = []
    for p in labels:
        if p == BASELINE:
            continue
        cells = []
        for s in scopes:
            # no relative change against a baseline of 0 (a baseline that never waits): n/a
            ch = [100 * (tabs[c].loc[s, p] / tabs[c].loc[s, BASELINE] - 1)
                  if p in tabs[c].columns and tabs[c].loc[s, BASELINE] != 0 else math.nan for c in tabs]
            cells.append(" / ".join("n/a" if x != x else f"{x:+.1f}" for x in ch))
        body.append([p, *cells])
    rep.h(2, "Change vs the baseline (bbsched-naive) [%]: node usage / BB usage / mean waiting time")
    rep.table(["policy", *(SCOPE_NAMES.get(s, s) for s in scopes)], body)


def _first(data: StudyData, scope: str) -> float:
    return float(data.jobs.loc[data.jobs["scope"] == scope, "submission_time"].min())


def _one_run(data: StudyData, scope: str) -> pd.DataFrame:
    j = data.jobs[data.jobs["scope"] == scope]
    return j[j["policy"] == j["policy"].iloc[0]] if len(j) else j


def _bb_share(data: StudyData, scope: str) -> str:
    j = _one_run(data, scope)
    return f"{(T.bb_bytes(j) > 0).sum()} ({100 * (T.bb_bytes(j) > 0).mean():.0f} %)" if len(j) else "n/a"


def _bb_volume(data: StudyData, scope: str) -> str:
    j = _one_run(data, scope)
    tot = T.bb_bytes(j)
    return f"{tot[tot > 0].mean() / 1e9:.3g}" if (tot > 0).any() else "0"


def _table3(data: StudyData, rows: pd.DataFrame) -> list:
    """Table 3: bbsched at w = 10, 20, 50 on each S4 workload run, the paper's Cori-S4 and Theta-S4 beside."""
    p = PAPER_TABLE3
    data.report.h(2, "Table 3: BBSched under window sizes 10, 20, 50 (S4 workloads)")
    body = []
    for scope in _s4_scopes(rows):
        sc = rows[rows["scope"] == scope].set_index("policy")
        present = [w for w in WINDOWS if WINDOWS[w] in sc.index]
        if not present:
            continue
        for col, key, name, conv, d in (("node_usage", "node_usage", "node usage [%]", 100, 2),
                                        ("bb_usage", "bb_usage", "BB usage [%]", 100, 2),
                                        ("wait_h_mean", "wait_s", "mean waiting time [s]", 3600, 0),
                                        ("bsld_mean", "slowdown", "mean slowdown (ours: bounded, τ = 600 s)", 1, 2)):
            meas = [f"{conv * float(sc.loc[WINDOWS[w], col]):.{d}f}" if w in present else "not run" for w in WINDOWS]
            body.append([SCOPE_NAMES[scope], name, *meas, " / ".join(f"{v:g}" for v in p[key][0]),
                         " / ".join(f"{v:g}" for v in p[key][1])])
    if not body:
        data.report.p("No bbsched run on an S4 workload: Table 3 is left out.")
        return []
    data.report.p("The paper's Table 3 covers the S4 workloads only (Cori-S4, Theta-S4); so do the w = 10 and 50 runs "
                  "here (G = 500 at every w, as the defaults; the paper's overhead paragraph uses G = 2000 at w = 50). "
                  "Cori-like and Theta-like rows: means over the replicates.")
    data.report.table(["workload", "metric", "w = 10", "w = 20", "w = 50", "paper Cori-S4 (10 / 20 / 50)",
                       "paper Theta-S4 (10 / 20 / 50)"], body)
    return []


def _bb_classes(data: StudyData) -> list:
    """Fig. 10: mean waiting time by BB request class on S4 (else the last workload scope run)."""
    scopes = [s for s in SCOPES if (data.jobs["scope"] == s).any()]
    if not scopes:
        return []
    scope = TABLE3_SCOPE if TABLE3_SCOPE in scopes else scopes[-1]
    j = data.jobs[(data.jobs["scope"] == scope) & data.jobs["policy"].isin([m for m in METHODS] + ["sjf-bb", "plan-2"])]
    if j.empty:
        return []
    caps = _capacities(data)
    total_bb = next(iter(caps.values()))[1] if caps else 480e9
    t = T.wait_by_bb_class(j, total_bb)
    data.report.h(2, f"Fig. 10: mean waiting time [h] by BB request size ({SCOPE_NAMES[scope]})")
    data.report.p("Classes by the job's total request (nodes × BB per node) as a share of the machine's BB "
                  f"({total_bb / 1e9:.0f} GB); the last row counts the jobs of each class. The paper (Theta-S4, "
                  "Baseline): jobs with > 200 TB (> 9 % of the BB) waited 10.25 h on average, jobs without BB 2.5 h.")
    data.report.table(["policy", *t.columns],
                      [[p, *(("n/a" if v != v else (f"{int(v)}" if p == "jobs" else f"{v:.3g}")) for v in t.loc[p])]
                       for p in t.index])
    body = t.drop(index="jobs")
    return [(T.grouped_bars(body, data.figures, "fig10_wait_by_bb_class",
                            f"mean waiting time by BB request ({SCOPE_NAMES[scope]})", "mean waiting time [h]"),
             f"Fig. 10-like: mean waiting time by BB request size on {SCOPE_NAMES[scope]}")]


def _gd_section(data: StudyData) -> None:
    """The GA's generational distance to the true front per run that recorded it (decisions.csv)."""
    body = []
    for s in data.specs:
        path = Path(s.out) / "decisions.csv"
        if s.policy != "bbsched" or "error" in data.results.get(s.key, {"error": 1}) or not path.is_file():
            continue
        g = T.gd_summary(pd.read_csv(path))
        if not g["recorded"]:
            continue
        body.append([SCOPE_NAMES.get(s.scope, s.scope), s.column or s.policy, g["ga"], f"{g['candidates_median']:.3g}",
                     g["recorded"], f"{g['exact']} ({100 * g['exact'] / g['recorded']:.0f} %)",
                     f"{g['mean']:.2g}", f"{g['q0.9']:.2g}", f"{g['max']:.2g}"])
    data.report.h(2, "The GA's generational distance to the true Pareto front (§3.2.3)")
    if not body:
        data.report.p("No run recorded the GD (bbsched with record_gd; decisions.csv).")
        return
    data.report.p("Per GA decision with ≤ 20 candidates the true front is enumerated and the GD computed on (node "
                  "usage, BB usage) as fractions of the machine (docs/bbsched.md, 'Exact oracle and GD').")
    data.report.table(["workload", "variant", "GA decisions", "median candidates", "with GD", "GD = 0 (exact front)",
                       "mean GD", "q0.9 GD", "max GD"], body)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def whole_scope_note(manifest: dict) -> str | None:
    """Where the claims are judged: the paper regime's workloads, gated by its regime checks."""
    return ("The claims are judged on the paper regime: Cori-like and Theta-like machines (burstbuffer.workloads."
            "fan2019) with the Original and S1-S4 workloads built as §4.1 builds them, "
            f"{R.REPLICATES} replicates each, one condition per workload whose noise floor is its replicates (bbsched_claims). They are out of regime when "
            "a regime check fails (the table 'The paper regime' below gives each workload's offered load, the "
            "Baseline's usages and the share of bbsched's decisions the GA made). "
            f"{_capital(manifest.get('whole_label', 'the selected workload'))} (KTH) and KTH-S1 … S4 derived from it are run "
            "beside for context and judge no claim. The paper measured 10 workloads: Cori and Theta, original and "
            "S1-S4, 4-5 months each. Metrics: the paper's §4.2 (see 'BBSched study: the paper's metrics' below).")


STUDY = Study(
    name="bbsched",
    title="Reproduction of Fan et al., Scheduling Beyond CPUs for HPC (BBSched), HPDC'19, §4",
    description="Fan et al., BBSched (HPDC'19), §4: BBSched and its 7 baselines on Cori-/Theta-like Original and "
                "S1-S4 (§4.1, 3 seeds; KTH and KTH-S1..S4 beside), node/BB usage, wait, slowdown, Table 3, Fig. 6-11",
    policies=(), reference=BASELINE, claims=CLAIMS, variants=VARIANTS, workloads=derive_workloads,
    sections=sections, whole_scope_note=whole_scope_note, paper="Fan et al. 2019",
    regime=regime,
)
