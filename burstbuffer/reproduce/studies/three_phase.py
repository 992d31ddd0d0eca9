"""Study ``three-phase``: the same policies on the io-aware and the three-phase job models (docs/io-model.md §1,
§3), beside Cerberus (Yan et al., "Cerberus: A 3-Phase Burst Buffer Aware Batch Scheduler for HPC Systems", §3)
and Slurm's burst-buffer scheduling (`slurm-bb`, docs/policies.md).

Columns (`Variant` labels ``POLICY/MODEL``): fcfs-easy, sjf-bb and plan-2 on both models; slurm-bb and Cerberus on
three-phase. Every column runs its policy's defaults, so the judged Cerberus (``cerberus/three-phase``) is the
paper's algorithm (``phases=as-written``: bb_in, bb_run, bb_out per job, Problem 2 under free nodes and free BB,
Problem 1 on Q_O deciding the stage-outs; no starvation rule; exact knapsacks). Beside it, not judged, the
project's variants under their own labels: ``cerberus-fcfs-24h`` (the project's 24-h FCFS starvation rule),
``cerberus-one`` (one BB amount per job), ``cerberus-one-fcfs-24h`` (one amount, the 24-h rule, ``auto``
knapsacks: the policy's default before the paper's algorithm was) and ``cerberus-one-reserve`` (one amount, the
``reserve`` rule). On three-phase fcfs-easy, sjf-bb and plan-2 plan BB over the stagings and nodes over the
running phase (`burstbuffer.schedulers.profile_scheduler`, `burstbuffer.schedulers.holds`: their default there, option
``staging=bb-first``).

Same jobs in every mean: each claim's condition pairs the jobs both of its columns started, and the report's
table (`common_jobs`) is over the jobs every column started; a job a column rejects (as-written Cerberus rejects a
job whose largest phase share fits on no BB node) is named, not dropped from that column only. The waiting time
runs to the start of the job's compute nodes on every model (docs/metrics.md §1), the wait to the stage-in beside
it.

Report section (`sections`): per variant over the same jobs, waiting time, wait to the stage-in, bounded
slowdown, node and BB utilisation, the jobs it rejected, and how long jobs held BB while pending (jobs.csv
``stage_in_pending``: stage-in + wait for nodes after it) and the stage-in itself (``stage_in_end −
starting_time``).

Claims (docs/verdicts.md): the paper's text has sections 1-3 and reports no experiment; its §1 states that "the
preliminary simulation results demonstrate that the three-phase design of Cerberus not only boosts system
responsiveness, but also improves job performance", naming no baseline and no number. That statement is *not
testable* (`cerberus-results`). What the study judges are the project's own questions, listed apart as the
project's: responsiveness read as a lower mean waiting time than each other policy (three-phase; and the same
policies on io-aware), job performance as a lower mean bounded slowdown (τ = 600 s, docs/metrics.md) than each
other policy, and whether the three-phase model itself helps the policies run on both models; each a set of
direction-only conditions (band: any improvement, the project's own; noise floor: a paired bootstrap over jobs).
Every condition must hold, so no single weak baseline (fcfs-easy) decides a verdict. Regime (`regime`): jobs queue, and the burst buffer is
one of the resources they wait for, under the reference run (the report shows the checks, each claim's bands and
noise floor, and its verdicts as a placebo and reversed).
"""
from __future__ import annotations

import math
from pathlib import Path

from ...metrics.claims import LOWER, Band, Claim, Condition, Metric, Paired, RegimeCheck
from ...metrics.verdicts import PROJECT
from ...metrics.definitions import WAIT_COLUMNS
from ..study import Study, Variant
from ...lazy import lazy

np = lazy("numpy")  # numpy and pandas: imported on first use (burstbuffer.lazy)
pd = lazy("pandas")

IO, TP = "io-aware", "three-phase"
#: the policies run on both job models
BOTH = ("fcfs-easy", "sjf-bb", "plan-2")
#: the Cerberus the claims judge: the policy's defaults, the paper's algorithm
CERBERUS = f"cerberus/{TP}"
ONE = {"phases": "one"}

VARIANTS = (
    *(Variant(f"{p}/{IO}", p, model=IO) for p in BOTH),
    *(Variant(f"{p}/{TP}", p, model=TP) for p in BOTH),
    Variant(f"slurm-bb/{TP}", "slurm-bb", model=TP),
    Variant(CERBERUS, "cerberus", model=TP),
    Variant(f"cerberus-fcfs-24h/{TP}", "cerberus-fcfs-24h", model=TP),
    Variant(f"cerberus-one/{TP}", "cerberus", ONE, model=TP),
    Variant(f"cerberus-one-fcfs-24h/{TP}", "cerberus-fcfs-24h", {**ONE, "knapsack_method": "auto"}, model=TP),
    Variant(f"cerberus-one-reserve/{TP}", "cerberus", {**ONE, "starvation": "reserve"}, model=TP),
)


def common_jobs(jobs: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """(the rows of the whole-scope tidy table `jobs` whose job every column started, {column: the job ids it
    did not start}) — so that every column's means are over the same jobs."""
    w = jobs[jobs["scope"] == "whole"] if "scope" in jobs else jobs
    started = w[w["waiting_time"].notna()]
    cols = list(dict.fromkeys(w["policy"]))
    counts = started.groupby("job_id")["policy"].nunique()
    keep = set(counts[counts == len(cols)].index)
    left = {p: sorted(set(w.loc[w["policy"] == p, "job_id"]) - set(started.loc[started["policy"] == p, "job_id"]),
                      key=lambda j: (len(j), j)) for p in cols}
    return w[w["job_id"].isin(keep)], left


#: the one statement of results in the paper: §1 announces simulation results that its text (§1-3) does not report
_WORDS = ("As shown later on, the preliminary simulation results demonstrate that the three-phase design of Cerberus "
          "not only boosts system responsiveness, but also improves job performance.")
_NO_EXPERIMENT = ("the paper's text (§1-3) reports no experiment: no baseline, workload, metric or number for "
                  "'responsiveness' or 'job performance'; the simulation results §1 announces are not in it. "
                  "What this study measures are the project's own questions below")
_SRC = "Yan et al., Cerberus, §1"
_OWN = "the project's question (Yan et al., Cerberus, §1 names no baseline and gives no number)"
_OWN_MODEL = "the project's question (Yan et al., Cerberus, §2 defines the model and measures nothing)"
#: no number in the paper: the conditions are directional, the band every improvement (the project's own)
_ANY = Band(0.0, math.inf, "no source number: any improvement beyond the noise floor (direction only)", own=True)
WAIT = Metric("mean waiting time [h]", "waiting_time", "mean", 3600.0)
BSLD = Metric("mean bounded slowdown", "bounded_slowdown", "mean")
#: the controls: every other policy on three-phase, then the same policies on io-aware
OTHERS_TP = (f"slurm-bb/{TP}",) + tuple(f"{p}/{TP}" for p in BOTH)
OTHERS_IO = tuple(f"{p}/{IO}" for p in BOTH)


def _versus(metric: Metric, controls) -> tuple[Condition, ...]:
    """Cerberus (treatment) against each of `controls` on `metric`, lower better, paired over the jobs both
    started."""
    return tuple(Condition(CERBERUS, c, metric, _ANY, LOWER, "relative", noise=Paired()) for c in controls)


CLAIMS = (
    Claim("cerberus-results", "Cerberus' three-phase design boosts system responsiveness and improves job "
          "performance (preliminary simulation results)", _SRC, paper_value="none", words=_WORDS,
          not_testable=_NO_EXPERIMENT),
    Claim("responsive-3p", "Does Cerberus have a lower mean waiting time than each other policy on the three-phase "
          "model? (the project's reading of 'responsiveness')", _OWN, paper_value="none", origin=PROJECT,
          conditions=_versus(WAIT, OTHERS_TP)),
    Claim("responsive-io", "Does Cerberus have a lower mean waiting time than the same policies on the io-aware "
          "model, where the stage-in holds the nodes?", _OWN, paper_value="none", origin=PROJECT,
          conditions=_versus(WAIT, OTHERS_IO)),
    Claim("performance", "Does Cerberus have a lower mean bounded slowdown than each other policy, either model? "
          "(the project's reading of 'job performance')", _OWN, paper_value="none", origin=PROJECT,
          conditions=_versus(BSLD, OTHERS_TP + OTHERS_IO)),
    Claim("three-phase-model", "Does staging in before the nodes (the three-phase model) lower the mean bounded "
          "slowdown of the same policy?", _OWN_MODEL, paper_value="none", origin=PROJECT,
          conditions=tuple(Condition(f"{p}/{TP}", f"{p}/{IO}", BSLD, _ANY, LOWER, "relative", noise=Paired())
                           for p in BOTH)),
)

#: the regime the claims are about (the project's thresholds: the paper states none): jobs queue, and the
#: burst buffer is one of the resources they wait for, under the study's reference run
MIN_QUEUE = 1.0
MIN_BB_WAIT_SHARE = 0.05


def regime(data) -> list[RegimeCheck]:
    """The study's `RegimeCheck`s on the reference run (``sjf-bb/io-aware``): mean queue length
    (`metrics.regime.mean_queue`) at least `MIN_QUEUE` jobs, and at least `MIN_BB_WAIT_SHARE` of its waiting
    time spent waiting for the burst buffer (jobs.csv ``wait_burst_buffer``, docs/wait-reasons.md). No check
    without the reference run."""
    from ...metrics.regime import mean_queue
    ref = STUDY.reference
    j = data.jobs[(data.jobs["scope"] == "whole") & (data.jobs["policy"] == ref)] if len(data.jobs) else data.jobs
    spec = next((s for s in data.specs if s.scope == "whole" and (s.column or s.policy) == ref), None)
    if spec is None or not len(j) or "error" in data.results.get(spec.key, {"error": 1}):
        return []
    q = mean_queue(j)
    raw = pd.read_csv(Path(spec.out) / "jobs.csv")
    total = float(sum(_num(raw, c).sum() for c in WAIT_COLUMNS))
    share = float(_num(raw, "wait_burst_buffer").sum()) / total if total > 0 else math.nan
    return [RegimeCheck("jobs queue", q >= MIN_QUEUE, f"mean queue length {q:.3g} jobs under {ref}",
                        f">= {MIN_QUEUE:g} job (the project's threshold)"),
            RegimeCheck("the burst buffer is contended", share >= MIN_BB_WAIT_SHARE,
                        f"{'n/a' if share != share else f'{100 * share:.1f} %'} of {ref}'s waiting time for the "
                        "burst buffer", f">= {100 * MIN_BB_WAIT_SHARE:g} % (the project's threshold)")]


def _num(df: pd.DataFrame, col: str) -> pd.Series:
    return pd.to_numeric(df[col], errors="coerce") if col in df else pd.Series(np.nan, index=df.index)


def staging_rows(specs, results, jobs: pd.DataFrame) -> list[list]:
    """Per finished whole-scope run: the report's row (module docstring), its means over the jobs every column
    started (`common_jobs` of the tidy table `jobs`)."""
    same, left = common_jobs(jobs)
    rows = []
    for s in specs:
        if s.scope != "whole" or "error" in results.get(s.key, {"error": 1}):
            continue
        label = s.column or s.policy
        m = same[same["policy"] == label]
        raw = pd.read_csv(Path(s.out) / "jobs.csv", dtype={"job_id": str})
        raw = raw[raw["job_id"].astype(str).isin(set(m["job_id"]))]
        pend = _num(raw, "stage_in_pending")
        stage = _num(raw, "stage_in_end") - _num(raw, "starting_time")
        summ = results[s.key].get("summary", {})
        pct = lambda x: "n/a" if x is None or x != x else f"{100 * x:.1f} %"  # noqa: E731
        early = int((pend > 0).sum())
        own = left.get(label, [])
        rows.append([label, s.model, len(m), f"{m['waiting_time'].mean() / 3600:.3g}",
                     f"{m['wait_to_stage_in'].mean() / 3600:.3g}", f"{m['bounded_slowdown'].mean():.3g}",
                     pct(summ.get("cpu_utilisation")), pct(summ.get("bb_utilisation")),
                     f"{len(own)}" + (f" ({', '.join(own[:8])}{', …' if len(own) > 8 else ''})" if own else ""),
                     "n/a" if pend.isna().all() else f"{pend.mean() / 60:.3g}",
                     "n/a" if pend.isna().all() else f"{pend.max() / 3600:.3g}",
                     "n/a" if stage.isna().all() else f"{stage.mean():.3g}",
                     "n/a" if pend.isna().all() else f"{early} of {len(raw)}"])
    return rows


def sections(data) -> list:
    rep = data.report
    rep.h(1, "Three-phase: the same jobs in every column; node and BB usage, stage-in while pending")
    rep.p("Per run, over the jobs every column started (a job one column did not start — rejected, or not ended — "
          "is left out of every column's means and named in its row): waiting time (submission → the start of "
          "the job's compute nodes, on every model: docs/metrics.md §1), the wait to the stage-in (submission → "
          "the first resource held: on three-phase the stage-in's BB; on io-aware the same as the waiting time), "
          "bounded slowdown, node utilisation (three-phase: the running phase only) and BB utilisation (stage-in "
          "start → end) of the whole run, and stage_in_pending = nodes start − stage-in start (the stage-in plus any "
          "wait for nodes after it, BB held, no node), from each run's jobs.csv. io-aware runs have no such column "
          "(n/a): their stage-in holds the nodes.")
    rep.table(["variant", "model", "jobs in the means", "mean wait [h]", "mean wait to stage-in [h]", "mean bsld",
               "node util.", "BB util.", "not started", "mean stage_in_pending [min]", "max stage_in_pending [h]",
               "mean stage-in [s]", "jobs pending with BB"], staging_rows(data.specs, data.results, data.jobs))
    return []


STUDY = Study(
    name="three-phase",
    title="Three-phase burst-buffer scheduling: Cerberus and Slurm's stage-in beside the EASY family and plan-2",
    description="cerberus (the paper's algorithm), slurm-bb, fcfs-easy, sjf-bb, plan-2 on the io-aware vs the "
                "three-phase job model; Cerberus' claims judged against them over the same jobs",
    policies=BOTH + ("slurm-bb", "cerberus"), reference=f"sjf-bb/{IO}", claims=CLAIMS, variants=VARIANTS,
    sections=sections, regime=regime, paper="Yan et al., Cerberus",
)
