"""Per-run summary from a per-job table (docs/metrics.md).

Input: a jobs.csv with Batsim's `_jobs.csv` columns (the scheduler's own, one row per original
job; `bb_per_node` optional). Times in seconds in the table, waiting times reported in hours.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .definitions import TAU, bounded_slowdown, nodes_start, runtime, turnaround_time, waiting_time

__all__ = ["Summary", "node_time", "print_summary", "summarize", "summarize_csv", "TAU", "bounded_slowdown"]


#: Why the burst-buffer utilisation of a Batsim table is unknown (the `metrics` command's options supply it).
BB_UNKNOWN = "BB sizes unknown: --total-bb SIZE and the run's --workload"
#: Why the processor utilisation of a Batsim table is unknown (`metrics --platform` or `--nb-compute` supplies it).
CPU_UNKNOWN = "number of processors unknown: --platform FILE or --nb-compute N"


def value_or_na(x: float, spec: str, unit: str = "", why: str = "no job started") -> str:
    """``f"{x:{spec}}{unit}"``, or ``n/a (why)`` when `x` is NaN (a mean over no job, a ratio of nothing)."""
    return f"n/a ({why})" if x != x else f"{x:{spec}}{unit}"


@dataclass
class Summary:
    submitted: int
    completed: int          # COMPLETED_SUCCESSFULLY
    killed: int             # COMPLETED_WALLTIME_REACHED / COMPLETED_KILLED / COMPLETED_FAILED
    rejected: int           # REJECTED
    unfinished: int         # never ended (should be 0)
    mean_waiting_h: float
    max_waiting_h: float
    mean_bounded_slowdown: float
    makespan: float         # [s] the span: last finish time − first submission time (Batsim's makespan: from 0)
    cpu_utilisation: float  # Σ res·node time / (nb_compute · makespan); node time: `node_time`
    bb_utilisation: float   # Σ res·bb·execution_time / (total_bb · makespan); nan if unknown

    def lines(self) -> list[str]:
        """The summary as text; a value without data is "n/a (reason)", never nan."""
        why = "no job started" if self.submitted else "no job"
        none = f"n/a ({why})"
        empty = self.makespan <= 0

        def num(x: float, fmt: str, unit: str = "") -> str:
            return value_or_na(x, fmt, unit, why)

        def pct(x: float, unknown: str) -> str:
            return f"{100 * x:.1f} %" if x == x else none if empty else f"n/a ({unknown})"
        return [
            f"jobs submitted         {self.submitted}",
            f"  completed            {self.completed}",
            f"  killed/failed        {self.killed}",
            f"  rejected             {self.rejected}",
            *( [f"  unfinished           {self.unfinished}"] if self.unfinished else [] ),
            f"mean wait, started     {num(self.mean_waiting_h, '.3f', ' h')}",
            f"max wait, started      {num(self.max_waiting_h, '.3f', ' h')}",
            f"mean bounded slowdown  {num(self.mean_bounded_slowdown, '.3f', f'  (tau = {TAU:.0f} s)')}",
            f"span                   {self.makespan:.0f} s ({self.makespan / 86400:.2f} days, first submission "
            f"to last end)",
            f"processor utilisation  {pct(self.cpu_utilisation, CPU_UNKNOWN)}",
            f"burst-buffer util.     {pct(self.bb_utilisation, BB_UNKNOWN)}",
        ]

    def __str__(self) -> str:
        return "\n".join(self.lines())


def node_time(jobs: pd.DataFrame, run: pd.Series) -> pd.Series:
    """Seconds each job held its compute nodes: its running phase (``nodes_end − nodes_start``) where a
    three-phase run's jobs.csv gives it (docs/io-model.md §3: stage-in and stage-out hold BB only), else `run`
    (execution_time: the nodes are held from start to finish in the two-phase models)."""
    if "nodes_start" not in jobs or "nodes_end" not in jobs:
        return run
    held = pd.to_numeric(jobs["nodes_end"], errors="coerce") - pd.to_numeric(jobs["nodes_start"], errors="coerce")
    return held.where(held.notna(), run)


def summarize(jobs: pd.DataFrame, nb_compute: int | None = None, total_bb: int | None = None) -> Summary:
    """Summary of a run, by the project's definitions (docs/run-outputs.md gives them beside Batsim's, which
    `batsim_csv.schedule_fields` computes). `jobs` has Batsim `_jobs.csv` columns; waiting time and bounded slowdown
    are over jobs that started (waiting = start of the compute nodes − submission_time, `nodes_start`:
    docs/metrics.md §1). Utilisations need the platform size (`nb_compute` processors, `total_bb` bytes); nan
    when not given."""
    state = jobs["final_state"].fillna("").astype(str)
    started = jobs[pd.to_numeric(jobs["starting_time"], errors="coerce").notna()]
    sub = pd.to_numeric(started["submission_time"])
    st = pd.to_numeric(started["starting_time"])
    fin = pd.to_numeric(started["finish_time"])
    nodes = nodes_start(started)
    wait = waiting_time(sub, nodes)
    turn = turnaround_time(sub, fin)
    run = runtime(st, fin)                       # the first step to the end: the BB is held over it
    bsld = bounded_slowdown(turn, runtime(nodes, fin)) if len(started) else np.array([np.nan])
    if len(started):
        t0 = float(pd.to_numeric(jobs["submission_time"]).min())
        makespan = float(fin.max()) - t0
    else:
        makespan = 0.0
    res = pd.to_numeric(started["requested_number_of_resources"])
    cpu_u = float((res * node_time(started, run)).sum() / (nb_compute * makespan)) \
        if nb_compute and makespan > 0 else float("nan")
    if total_bb and makespan > 0 and "bb_per_node" in started:
        bb = pd.to_numeric(started["bb_per_node"], errors="coerce").fillna(0)
        bb_u = float((res * bb * run).sum() / (total_bb * makespan))
    else:
        bb_u = float("nan")
    return Summary(
        submitted=len(jobs),
        completed=int((state == "COMPLETED_SUCCESSFULLY").sum()),
        killed=int(state.isin(["COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED", "COMPLETED_FAILED"]).sum()),
        rejected=int((state == "REJECTED").sum()),
        unfinished=int(state.isin(["", "RUNNING", "PENDING"]).sum()),
        mean_waiting_h=float(wait.mean() / 3600) if len(started) else float("nan"),
        max_waiting_h=float(wait.max() / 3600) if len(started) else float("nan"),
        mean_bounded_slowdown=float(np.mean(bsld)),
        makespan=makespan,
        cpu_utilisation=cpu_u,
        bb_utilisation=bb_u,
    )


def summarize_csv(path: str, nb_compute: int | None = None, total_bb: int | None = None) -> Summary:
    return summarize(pd.read_csv(path, dtype={"job_id": str}), nb_compute, total_bb)


def print_summary(header: str, res, outputs: str) -> None:
    """The end-of-run report shared by `run` and `serve`: a header line, the summary (docs/metrics.md), the
    wall time and message count of `res` (a `burstbuffer.runner.RunResult`), and where the outputs are."""
    print(header)
    print(res.summary)
    if res.summary.rejected:
        _print_oversized(res.jobs_csv)
    _print_wait_reasons(res.jobs_csv)
    spent = f"; the scheduler's answers {res.scheduler_cpu:.1f} s of CPU" if res.scheduler_cpu is not None else ""
    audit = getattr(res, "audit", None)
    if audit is not None:
        print(f"schedule audit         {audit.verdict()} (docs/audit.md)")
    print(f"wall time              {res.wall_time:.1f} s ({res.messages} protocol messages{spent})")
    print(f"outputs                {outputs}")


def _print_oversized(jobs_csv) -> None:
    """The rejected jobs that ask for more compute nodes than the run's platform (run.json) has, and how to
    generate a platform that holds them."""
    from ..platforms.generator import larger_platform_hint
    from .runinfo import platform_size
    size = platform_size(Path(jobs_csv).parent)
    try:
        jobs = pd.read_csv(jobs_csv, usecols=["final_state", "requested_number_of_resources"])
    except (OSError, ValueError):
        return
    if size is None:
        return
    big = jobs[(jobs["final_state"] == "REJECTED") & (jobs["requested_number_of_resources"] > size[0])]
    if len(big):
        most = int(big["requested_number_of_resources"].max())
        print(f"  {len(big)} rejected jobs ask for more than the platform's {size[0]} compute nodes (up to {most}); "
              + larger_platform_hint(most))


def _print_wait_reasons(jobs_csv) -> None:
    """The per-reason waiting lines of a jobs.csv (docs/wait-reasons.md); nothing for a table without them."""
    from .waits import has_wait_columns, wait_lines
    try:
        jobs = pd.read_csv(jobs_csv)
    except (OSError, ValueError):
        return
    if has_wait_columns(jobs):
        print("why jobs waited (docs/wait-reasons.md)")
        print("\n".join(wait_lines(jobs)))
