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
running phase (`burstbuffer.schedulers.profiled`, `burstbuffer.schedulers.holds`: their default there, option
``staging=bb-first``).

Same jobs in every mean (`common_jobs`): a job that a column rejects (as-written Cerberus rejects a job whose
largest phase share fits on no BB node) is left out of every column's means, and listed; the waiting time runs
to the start of the job's compute nodes on every model (docs/metrics.md §1), the wait to the stage-in beside it.

Report section (`sections`): per variant over the same jobs, waiting time, wait to the stage-in, bounded
slowdown, node and BB utilisation, the jobs it rejected, and how long jobs held BB while pending (jobs.csv
``stage_in_pending``: stage-in + wait for nodes after it) and the stage-in itself (``stage_in_end −
starting_time``).

Claims: the paper's text has sections 1-3 and gives no number; its §1 states that "the preliminary simulation
results demonstrate that the three-phase design of Cerberus not only boosts system responsiveness, but also
improves job performance", without the baseline. The comparisons are the project's: responsiveness as the mean
waiting time, job performance as the mean bounded slowdown (τ = 600 s, docs/metrics.md), Cerberus against the
best other policy of the set (every other policy, so the weakest one decides nothing). A fourth claim, whether
the three-phase model itself helps the policies run on both models, is the project's own hypothesis (§2 defines
the model and measures nothing).
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
#: the Cerberus the claims judge: the policy's defaults, the paper's algorithm
CERBERUS = f"cerberus/{TP}"
ONE = {"phases": "one"}
#: the project's Cerberus variants (starvation rules, one BB amount), reported beside the judged one
PROJECT_VARIANTS = (f"cerberus-fcfs-24h/{TP}", f"cerberus-one/{TP}", f"cerberus-one-fcfs-24h/{TP}",
                    f"cerberus-one-reserve/{TP}")

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


def claim_rows(data) -> pd.DataFrame:
    """The summary rows the claims judge: `tables.summary_table` over the jobs every column started."""
    from ...metrics.tables import summary_table
    same, _ = common_jobs(data.jobs)
    return summary_table(same)


def _get(s: pd.DataFrame, label: str, col: str) -> float:
    r = s[(s["policy"] == label) & (s["scope"] == "whole")] if "scope" in s else s[s["policy"] == label]
    return float(r[col].iloc[0]) if len(r) else math.nan


def _others(s: pd.DataFrame, model: str | None) -> list[str]:
    """The non-Cerberus variants in the table, on `model` (None: every model)."""
    labels = s[s["scope"] == "whole"]["policy"] if "scope" in s else s["policy"]
    return [p for p in dict.fromkeys(labels) if not p.startswith("cerberus")
            and (model is None or p.endswith("/" + model)) and not math.isnan(_get(s, p, "wait_h_mean"))]


def _versus(col: str, what: str, model: str | None):
    """Measure: Cerberus' mean `col` against the best of the `model` variants (None: every model); value = the
    best other's / Cerberus' (> 1: Cerberus better than every one of them)."""
    def measure(s: pd.DataFrame) -> Measurement | None:
        others = _others(s, model)
        c = _get(s, CERBERUS, col)
        if not others or math.isnan(c) or c <= 0:
            return None
        vals = {p: _get(s, p, col) for p in others}
        best = min(vals, key=vals.get)
        beside = {p: _get(s, p, col) for p in PROJECT_VARIANTS}
        beside_text = ", ".join(f"{p.split('/')[0]} {v:.3g}" for p, v in beside.items() if not math.isnan(v))
        beaten = [p for p in others if vals[p] > c]
        return Measurement(f"{what}: cerberus {c:.3g}; " + ", ".join(f"{p} {v:.3g}" for p, v in vals.items())
                           + (f" (the project's variants, not judged: {beside_text})" if beside_text else ""),
                           f"best other {best} is {vals[best] / c:.2f}× cerberus'; cerberus is below {len(beaten)} "
                           f"of {len(others)}", value=vals[best] / c)
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


#: where the paper states the claims (its text has sections 1-3; no number anywhere)
_SRC = "Yan et al., Cerberus, §1 (no number; comparison set: the project's)"
_OWN = "the project's hypothesis (Yan et al., Cerberus, §2 defines the model, measures nothing)"
CLAIMS = (
    Claim("responsive-io", "Cerberus boosts system responsiveness (mean waiting time) over the best of the same "
          "policies on the io-aware model", _SRC, "whole", (CERBERUS,) + tuple(f"{p}/{IO}" for p in BOTH),
          "qualitative", _versus("wait_h_mean", "mean waiting time [h]", IO), AtLeast(1.0, 1.0),
          "cerberus and the io-aware runs"),
    Claim("responsive-3p", "Cerberus boosts system responsiveness (mean waiting time) over the best other policy "
          "on the three-phase model", _SRC, "whole", (CERBERUS, f"slurm-bb/{TP}") + tuple(f"{p}/{TP}" for p in BOTH),
          "qualitative", _versus("wait_h_mean", "mean waiting time [h]", TP), AtLeast(1.0, 1.0),
          "cerberus and the three-phase runs"),
    Claim("performance", "Cerberus improves job performance (mean bounded slowdown) over the best other policy, "
          "either model", _SRC, "whole", (CERBERUS,), "qualitative",
          _versus("bsld_mean", "mean bounded slowdown", None), AtLeast(1.0, 1.0), "cerberus and the other runs"),
    Claim("three-phase-model", "Staging in before the nodes (the three-phase model) improves job performance of "
          "the same policy", _OWN, "whole", tuple(f"{p}/{m}" for p in BOTH for m in (IO, TP)),
          "qualitative", model_helps, AllHold(), "a policy on both models"),
)


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
    sections=sections, claim_rows=claim_rows, paper="Yan et al., Cerberus",
)
