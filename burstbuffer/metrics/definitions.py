"""The per-job metrics and the per-job table's columns: the single definition the scheduler's jobs.csv,
the simulator's Batsim-format ``_jobs.csv`` and the analysis (`summary`, `tidy`, `batsim_csv`) use.

Definitions (``docs/metrics.md``; Kopanski & Rzadca, *Plan-based Job Scheduling for Supercomputers with
Shared Burst Buffers*, Euro-Par 2021, §4.2), all times in seconds:

- waiting time = start − submission;
- turnaround time = end − submission;
- runtime = end − start;
- bounded slowdown = max(turnaround / max(runtime, τ), 1), with τ = `TAU` = 600 s;
- waiting time per reason (`WAIT_REASONS`, docs/wait-reasons.md): they sum to the waiting time.

The functions are plain arithmetic on what they are given, so they work alike on floats, long doubles
(the simulator computes as Batsim does, in long double: `burstbuffer.simulator.longdouble.LD`) and numpy
arrays / pandas Series (NaN in, NaN out). The module imports nothing at its top (the simulator process
loads it); `bounded_slowdown` imports numpy when called.
"""
from __future__ import annotations

#: Bounded-slowdown threshold τ [s] (docs/metrics.md).
TAU = 600.0

#: Columns of Batsim's ``_jobs.csv`` (Batsim 4 `export.cpp`; docs/metrics.md), in order.
BATSIM_JOBS_COLUMNS = ("job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
                       "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
                       "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy",
                       "metadata")
#: What the scheduler's ``jobs.csv`` adds after Batsim's columns: the BB request per compute node [bytes],
#: the BB allocation ("<BB node id>:<bytes> ..."), and the bounded slowdown.
#: Why a job waited (docs/wait-reasons.md): reason name, as a policy records it at each decision → the jobs.csv
#: column holding the seconds the job spent pending for it. Slurm's names where Slurm has the state
#: (``squeue`` REASON: Priority, Resources, BurstBufferResources); "Reservation" = the job fits now but would
#: delay a reservation (EASY's shadow window, conservative-bb's reservations); "QueueLimit" = a queue or QOS
#: limit (any reason name ending in "Limit", e.g. Slurm's QOSMaxJobsPerUserLimit, counts here); "Unknown" =
#: the policy recorded no reason (a policy without the hook).
WAIT_REASONS = {"Priority": "wait_priority", "Resources": "wait_resources",
                "BurstBufferResources": "wait_burst_buffer", "Reservation": "wait_reservation",
                "QueueLimit": "wait_queue_limit", "Unknown": "wait_unknown"}
#: the per-reason waiting-time columns of jobs.csv [s], in `WAIT_REASONS` order
WAIT_COLUMNS = tuple(WAIT_REASONS.values())
JOBS_CSV_EXTRA_COLUMNS = ("bb_per_node", "bb_allocation", "bounded_slowdown") + WAIT_COLUMNS
#: Columns of the scheduler's ``jobs.csv``: Batsim's, then ours.
JOBS_CSV_COLUMNS = BATSIM_JOBS_COLUMNS + JOBS_CSV_EXTRA_COLUMNS
#: Columns a three-phase run's ``jobs.csv`` adds last (docs/io-model.md §3), times [s]: the end of the job's
#: stage-in when it ran before the nodes (pending, BB only); the running phase on compute nodes (allocation,
#: release: end of the output step, or of the job if it ended on its nodes); and the time it held BB while
#: pending, nodes_start − starting_time (its stage-in plus any wait for nodes after it; 0 when its stage-in ran
#: on its nodes, as a two-phase policy's).
THREE_PHASE_COLUMNS = ("stage_in_end", "nodes_start", "nodes_end", "stage_in_pending")


def wait_reason_category(reason: str) -> str:
    """The `WAIT_REASONS` key a policy's reason name counts under: itself if it is one, "QueueLimit" for a
    name ending in "Limit" (Slurm's QOS/partition limit reasons), else "Unknown"."""
    if reason in WAIT_REASONS:
        return reason
    return "QueueLimit" if reason.endswith("Limit") else "Unknown"


def waiting_time(submission, start):
    """Waiting time [s] = start − submission (scalars or arrays, in seconds). For the metrics, `start` is the
    start of the job's compute nodes (`nodes_start`; docs/metrics.md §1)."""
    return start - submission


def nodes_start(jobs):
    """The start [s] of each job's compute nodes, where its waiting time ends (docs/metrics.md §1): the column
    ``nodes_start`` of a three-phase run's jobs.csv (its stage-in, before, held BB only), else — and for a job
    without it — ``starting_time`` (two-phase models: the nodes are held from the first step).

    `jobs`: a pandas DataFrame with ``starting_time`` (numbers or text); returns a float Series, NaN where the job
    never started."""
    import pandas as pd

    start = pd.to_numeric(jobs["starting_time"], errors="coerce")
    if "nodes_start" not in jobs:
        return start
    nodes = pd.to_numeric(jobs["nodes_start"], errors="coerce")
    return nodes.where(nodes.notna(), start)


def turnaround_time(submission, end):
    """Turnaround time [s] = end − submission (scalars or arrays, in seconds)."""
    return end - submission


def stretch(turnaround, runtime):
    """Batsim's stretch = turnaround / runtime (unbounded; the ``stretch`` column of ``_jobs.csv``,
    docs/metrics.md). Callers leave it empty when the runtime is 0."""
    return turnaround / runtime


def runtime(start, end):
    """Runtime [s] = end − start (scalars or arrays, in seconds)."""
    return end - start


def bounded_slowdown(turnaround, run, tau: float = TAU):
    """Bounded slowdown max(turnaround / max(run, τ), 1) (dimensionless; docs/metrics.md).

    `turnaround` and `run` (runtime) in seconds, scalars or arrays of the same shape; computed in
    float64. Returns a numpy float64 (scalars) or an ndarray; NaN where an input is NaN.
    """
    import numpy as np

    return np.maximum(np.asarray(turnaround, float) / np.maximum(np.asarray(run, float), tau), 1.0)


class BatsimScheduleCounters:
    """Batsim 4.2.1's schedule metrics, the numbers of ``PREFIX_schedule.csv`` that come from the jobs
    (``export.cpp``, ``JobsTracer::write_job`` and ``finalize``), accumulated one ended job at a time in the
    number type of `zero` (the simulator's long double `LD`, or float):

    - ``nb_jobs``: every job written, rejected ones included; ``nb_jobs_rejected``: REJECTED;
      ``nb_jobs_finished``: the others; of them ``nb_jobs_success`` (COMPLETED_SUCCESSFULLY) and
      ``nb_jobs_killed`` (any other end: walltime reached, killed, failed);
    - ``success_rate`` = nb_jobs_success / nb_jobs;
    - ``makespan`` = the latest completion (start + runtime) of a finished job, from time 0 (not from the first
      submission), 0 without one;
    - ``mean_waiting_time``, ``mean_turnaround_time``, ``mean_slowdown``: sums over the finished jobs divided by
      ``nb_jobs`` (rejected jobs count in the denominator, as zeros); slowdown = `stretch` (unbounded);
    - ``max_waiting_time``, ``max_turnaround_time``, ``max_slowdown``: over the finished jobs, 0 without one.

    Means and the rate are NaN when no job was written (Batsim prints ``-nan``). Times in seconds."""

    NAMES = ("nb_jobs", "nb_jobs_finished", "nb_jobs_success", "nb_jobs_killed", "nb_jobs_rejected",
             "success_rate", "makespan", "mean_waiting_time", "mean_turnaround_time", "mean_slowdown",
             "max_waiting_time", "max_turnaround_time", "max_slowdown")

    def __init__(self, zero=0.0):
        self.nb_jobs = self.nb_jobs_finished = self.nb_jobs_success = self.nb_jobs_killed = 0
        self.nb_jobs_rejected = 0
        self.sum_wait = self.sum_turn = self.sum_slow = zero
        self.makespan = self.max_wait = self.max_turn = self.max_slow = zero

    def add(self, state: str, submission, start=None, run=None):
        """Count one ended job (`state`: Batsim's final_state); for a job not REJECTED, `start` and `run`
        (runtime) give its waiting time, completion, turnaround time and stretch, returned as that tuple (in
        the type of the inputs); None for a rejected job."""
        self.nb_jobs += 1
        if state == "REJECTED":
            self.nb_jobs_rejected += 1
            return None
        self.nb_jobs_finished += 1
        if state == "COMPLETED_SUCCESSFULLY":
            self.nb_jobs_success += 1
        else:
            self.nb_jobs_killed += 1
        wait = waiting_time(submission, start)
        completion = start + run
        turn = turnaround_time(submission, completion)
        slow = stretch(turn, run)
        self.sum_wait += wait
        self.sum_turn += turn
        self.sum_slow += slow
        self.makespan = max(self.makespan, completion)
        self.max_wait = max(self.max_wait, wait)
        self.max_turn = max(self.max_turn, turn)
        self.max_slow = max(self.max_slow, slow)
        return wait, completion, turn, slow

    def fields(self) -> dict:
        """`NAMES` → value (counts as int, the rest in the accumulating type; NaN means without a job)."""
        n = self.nb_jobs
        nan = float("nan")
        return {"nb_jobs": n, "nb_jobs_finished": self.nb_jobs_finished, "nb_jobs_success": self.nb_jobs_success,
                "nb_jobs_killed": self.nb_jobs_killed, "nb_jobs_rejected": self.nb_jobs_rejected,
                "success_rate": self.nb_jobs_success / n if n else nan, "makespan": self.makespan,
                "mean_waiting_time": self.sum_wait / n if n else nan,
                "mean_turnaround_time": self.sum_turn / n if n else nan,
                "mean_slowdown": self.sum_slow / n if n else nan, "max_waiting_time": self.max_wait,
                "max_turnaround_time": self.max_turn, "max_slowdown": self.max_slow}
