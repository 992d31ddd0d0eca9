"""The regime a run ran in: how loaded the machine was and how long the queue, from the per-job table.

- offered load = Σ nodes × run time / (compute nodes × submission span): the work the jobs bring per unit
  of machine time while they arrive; above 1 the queue must grow;
- mean queue length over [a, b] = Σ |[submission, start] ∩ [a, b]| / (b − a) (Little's law: the mean
  number of jobs submitted and not started; a job that never started counts until b);
- the usages are the summary tables' (`metrics.tables.summary_table`: CPU and BB utilisation over the
  makespan).

Columns read: submission_time, starting_time [s], requested_number_of_resources, runtime [s].
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["mean_queue", "offered_load"]


def mean_queue(jobs: pd.DataFrame, a: float | None = None, b: float | None = None) -> float:
    """Mean number of queued jobs over [a, b] (default: first to last submission); NaN when b ≤ a."""
    sub = jobs["submission_time"].to_numpy(float)
    a = float(np.nanmin(sub)) if a is None else a
    b = float(np.nanmax(sub)) if b is None else b
    if not b > a:
        return math.nan
    st = jobs["starting_time"].to_numpy(float)
    st = np.where(np.isnan(st), b, st)
    overlap = np.clip(np.minimum(st, b) - np.maximum(sub, a), 0.0, None)
    return float(overlap.sum() / (b - a))


def offered_load(jobs: pd.DataFrame, nodes: int) -> float:
    """Σ nodes × run time / (`nodes` × submission span); NaN for a span of 0 or no node."""
    sub = jobs["submission_time"].to_numpy(float)
    span = float(np.nanmax(sub) - np.nanmin(sub)) if len(sub) else 0.0
    work = float(np.nansum(jobs["requested_number_of_resources"].to_numpy(float) * jobs["runtime"].to_numpy(float)))
    return work / (nodes * span) if span > 0 and nodes > 0 else math.nan
