"""The per-job metrics and the per-job table's columns: the single definition the scheduler's jobs.csv,
the simulator's Batsim-format ``_jobs.csv`` and the analysis (`summary`, `tidy`, `batsim_csv`) use.

Definitions (``docs/metrics.md``; Kopanski & Rzadca, *Plan-based Job Scheduling for Supercomputers with
Shared Burst Buffers*, Euro-Par 2021, §4.2), all times in seconds:

- waiting time = start − submission;
- turnaround time = end − submission;
- runtime = end − start;
- bounded slowdown = max(turnaround / max(runtime, τ), 1), with τ = `TAU` = 600 s.

The functions are plain arithmetic on what they are given, so they work alike on floats, numpy long
doubles (the simulator computes as Batsim does, in long double) and numpy arrays / pandas Series
(NaN in, NaN out). This module imports numpy only: the simulator process loads it.
"""
from __future__ import annotations

import numpy as np

#: Bounded-slowdown threshold τ [s] (docs/metrics.md).
TAU = 600.0

#: Columns of Batsim's ``_jobs.csv`` (Batsim 4 `export.cpp`; docs/metrics.md), in order.
BATSIM_JOBS_COLUMNS = ("job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
                       "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
                       "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy",
                       "metadata")
#: What the scheduler's ``jobs.csv`` adds after Batsim's columns: the BB request per compute node [bytes],
#: the BB allocation ("<BB node id>:<bytes> ..."), and the bounded slowdown.
JOBS_CSV_EXTRA_COLUMNS = ("bb_per_node", "bb_allocation", "bounded_slowdown")
#: Columns of the scheduler's ``jobs.csv``: Batsim's, then ours.
JOBS_CSV_COLUMNS = BATSIM_JOBS_COLUMNS + JOBS_CSV_EXTRA_COLUMNS


def waiting_time(submission, start):
    """Waiting time [s] = start − submission (scalars or arrays, in seconds)."""
    return start - submission


def turnaround_time(submission, end):
    """Turnaround time [s] = end − submission (scalars or arrays, in seconds)."""
    return end - submission


def runtime(start, end):
    """Runtime [s] = end − start (scalars or arrays, in seconds)."""
    return end - start


def bounded_slowdown(turnaround, run, tau: float = TAU):
    """Bounded slowdown max(turnaround / max(run, τ), 1) (dimensionless; docs/metrics.md).

    `turnaround` and `run` (runtime) in seconds, scalars or arrays of the same shape; computed in
    float64. Returns a numpy float64 (scalars) or an ndarray; NaN where an input is NaN.
    """
    return np.maximum(np.asarray(turnaround, float) / np.maximum(np.asarray(run, float), tau), 1.0)
