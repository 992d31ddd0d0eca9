"""Why jobs waited: the per-reason waiting-time columns of jobs.csv, summed up (docs/wait-reasons.md).

The scheduler's jobs.csv has one column per reason (`definitions.WAIT_COLUMNS`, seconds) for every
started job; they add up to its waiting time. `wait_table` aggregates them, `wait_lines` is the
per-reason summary `burstbuffer run` prints.
"""
from __future__ import annotations

import pandas as pd

from .definitions import WAIT_REASONS

__all__ = ["wait_table", "wait_lines", "has_wait_columns"]


def has_wait_columns(jobs: pd.DataFrame) -> bool:
    """True if `jobs` (a jobs.csv as a DataFrame) has every per-reason column (older runs do not)."""
    return all(c in jobs.columns for c in WAIT_REASONS.values())


def wait_table(jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per reason (index: reason name, `WAIT_REASONS` order) for the started jobs of `jobs`
    (a jobs.csv DataFrame with the per-reason columns): ``total_h`` (hours summed over jobs),
    ``mean_h`` (hours per started job), ``share`` (fraction of the total waiting time, NaN if nobody
    waited), ``jobs`` (jobs that waited > 0 s for it). Raises KeyError if a column is missing."""
    started = jobs[pd.to_numeric(jobs["starting_time"], errors="coerce").notna()]
    cols = {r: pd.to_numeric(started[c], errors="coerce").fillna(0.0) for r, c in WAIT_REASONS.items()}
    total = sum(float(v.sum()) for v in cols.values())
    n = max(len(started), 1)
    rows = {r: {"total_h": float(v.sum()) / 3600, "mean_h": float(v.sum()) / 3600 / n,
                "share": float(v.sum()) / total if total > 0 else float("nan"), "jobs": int((v > 0).sum())}
            for r, v in cols.items()}
    return pd.DataFrame.from_dict(rows, orient="index")


def wait_lines(jobs: pd.DataFrame) -> list[str]:
    """The per-reason summary lines (`burstbuffer run`): for each reason some job waited for, its mean
    waiting time per started job [h], its share of the total waiting time and the number of jobs."""
    t = wait_table(jobs)
    out = []
    for reason, r in t.iterrows():
        if r["jobs"] == 0:
            continue
        out.append(f"  waiting for {reason + ':':22}{r['mean_h']:.3f} h per job, {100 * r['share']:5.1f} % of "
                   f"waiting time, {int(r['jobs'])} jobs")
    return out or ["  (no job waited)"]
