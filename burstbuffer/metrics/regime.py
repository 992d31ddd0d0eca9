"""The regime a run ran in: how loaded the machine was and how long the queue, from the per-job table.

- offered load = Σ nodes × run time / (compute nodes × submission span): the work the jobs bring per unit
  of machine time while they arrive; above 1 the queue must grow;
- mean queue length over [a, b] = Σ |[submission, start] ∩ [a, b]| / (b − a) (Little's law: the mean
  number of jobs submitted and not started; a job that never started counts until b);
- the usages are the summary tables' (`metrics.tables.summary_table`: CPU and BB utilisation over the
  makespan);
- idle share while jobs wait = Σ idle nodes × dt / Σ nodes × dt over the times at least one job is queued
  (submitted, not started): the capacity a policy leaves unused while work waits — what draining nodes for a
  reservation costs (Allcock et al., Argonne, §4: "this draining obviously hurts utilization"), measurable
  even when the machine is not saturated, where the utilisation over the makespan follows the arrivals.

Columns read: submission_time, starting_time, finish_time [s], requested_number_of_resources, runtime [s].
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["idle_while_queued", "idle_while_queued_windows", "mean_queue", "offered_load", "trace_identity"]


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


def _idle_steps(jobs: pd.DataFrame, nodes: int, cuts=()):
    """(t, dt, queued-at-least-one mask, idle nodes) over the steps between the run's events and the times
    `cuts` (so that no step crosses one), or None."""
    sub = jobs["submission_time"].to_numpy(float)
    st = jobs["starting_time"].to_numpy(float)
    fin = jobs["finish_time"].to_numpy(float)
    res = jobs["requested_number_of_resources"].to_numpy(float)
    ran = ~np.isnan(st) & ~np.isnan(fin)
    if nodes <= 0 or not len(sub):
        return None
    t = np.unique(np.concatenate([sub, st[ran], fin[ran], np.asarray(cuts, float)]))
    if len(t) < 2:
        return None
    queued = np.searchsorted(np.sort(sub), t, "right") - np.searchsorted(np.sort(st[ran]), t, "right")
    o_st, o_fin = np.argsort(st[ran]), np.argsort(fin[ran])
    c_st = np.concatenate([[0.0], np.cumsum(res[ran][o_st])])
    c_fin = np.concatenate([[0.0], np.cumsum(res[ran][o_fin])])
    busy = (c_st[np.searchsorted(st[ran][o_st], t, "right")] - c_fin[np.searchsorted(fin[ran][o_fin], t, "right")])
    return t, np.diff(t), queued[:-1] > 0, np.clip(nodes - busy[:-1], 0.0, None)


def idle_while_queued(jobs: pd.DataFrame, nodes: int) -> float:
    """Share of the node-time idle while at least one job is queued (module docstring), in [0, 1]; NaN when
    no job ever waits or `nodes` ≤ 0. A job holds its requested nodes from its start to its finish; a job
    that never started stays queued until the last event."""
    steps = _idle_steps(jobs, nodes)
    if steps is None:
        return math.nan
    _, dt, on, idle = steps
    total = float(dt[on].sum()) * nodes
    if not total > 0:
        return math.nan
    return float((idle[on] * dt[on]).sum() / total)


def idle_while_queued_windows(jobs: pd.DataFrame, nodes: int, windows: int) -> pd.Series:
    """`idle_while_queued` in each of `windows` equal windows of the submission span (first to last
    submission; window k, from 0, covers [a + k·w, a + (k+1)·w)): a Series indexed by k, NaN where nobody
    waits. The windows depend on the submissions only, so two schedules of one workload share them: the
    paired units of a comparison of the idle share (`burstbuffer.metrics.claims.Metric`)."""
    sub = jobs["submission_time"].to_numpy(float)
    out = pd.Series(np.full(windows, np.nan), index=np.arange(windows))
    if not len(sub) or windows <= 0:
        return out
    a, b = float(np.nanmin(sub)), float(np.nanmax(sub))
    if not b > a:
        return out
    edges = a + (b - a) * np.arange(windows + 1) / windows
    steps = _idle_steps(jobs, nodes, edges)
    if steps is None:
        return out
    t, dt, on, idle = steps
    k = np.clip(np.searchsorted(edges, t[:-1], "right") - 1, 0, windows - 1)
    inside = (t[:-1] >= a) & (t[:-1] < b) & on
    q = np.bincount(k[inside], weights=dt[inside], minlength=windows) * nodes
    i = np.bincount(k[inside], weights=(idle * dt)[inside], minlength=windows)
    with np.errstate(divide="ignore", invalid="ignore"):
        out[:] = np.where(q > 0, i / q, np.nan)
    return out


def trace_identity(path) -> str:
    """The identity of the trace behind the Batsim workload `path`: the first 16 hex digits of the SHA-256 of
    its jobs' id, submission time, walltime and processors, in file order — what Kopanski & Rzadca §4.1 take
    from the KTH log ("we extract submission times, walltimes and the requested number of processors"). The
    burst-buffer and communication draws (``workload from-swf --seed``) do not change it; another trace, a
    subset or a reordered file does. InputError (`burstbuffer.workloads.batsim_json.load_workload`) for a
    missing or malformed file."""
    import hashlib
    from ..workloads.batsim_json import load_workload
    h = hashlib.sha256()
    for j in load_workload(path, require_bb=False).jobs:
        h.update(f"{j.id} {j.subtime:g} {j.walltime:g} {j.res}\n".encode())
    return h.hexdigest()[:16]
