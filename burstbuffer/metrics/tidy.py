"""Per original job metrics (docs/metrics.md) as one tidy table.

`load_jobs` reads any run's per-job table: this project's ``jobs.csv`` (already one row per
original job) or a real Batsim ``_jobs.csv`` (one row per job, or, for an I/O-aware run, static
jobs REJECTED and sub-jobs in workloads ``w0%<id>``: rebuilt by `batsim_csv`).
`job_metrics` turns it into the metrics table; `describe` summarises one metric column.
Times in seconds unless a column name says ``_h`` (hours).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .batsim_csv import is_subjob_csv, normalise_layout, rebuild_original_jobs
from .stats import QUANTILES, mean_ci, quantiles
from .definitions import TAU, bounded_slowdown, nodes_start, runtime, turnaround_time, waiting_time

#: columns of the tidy table, in order (`scope` and `policy` are added by the caller)
METRIC_COLUMNS = ["job_id", "submission_time", "starting_time", "finish_time", "requested_number_of_resources",
                  "requested_time", "bb_per_node", "final_state", "waiting_time", "turnaround_time", "runtime",
                  "bounded_slowdown", "wait_to_stage_in"]


#: the time columns of a jobs table: empty (never started or ended) or a finite number of seconds
TIME_COLUMNS = ("submission_time", "starting_time", "finish_time")


#: How the jobs-table readers read cells: only an empty cell is missing; ``nan``, ``NA`` written out stay
#: text, so that `check_times` refuses them instead of taking them for "never started".
CSV_MISSING = {"keep_default_na": False, "na_values": [""]}


def check_times(df: pd.DataFrame, columns=TIME_COLUMNS) -> None:
    """ValueError naming the first row (1-based, after the header) and column of `columns` whose cell is
    neither empty nor a finite number (text, ``inf``, ``nan`` written out), quoting a short excerpt."""
    from ..jsonvalues import excerpt
    for c in columns:
        if c not in df:
            continue
        raw = df[c]
        num = pd.to_numeric(raw, errors="coerce")
        blank = raw.isna() | (raw.astype(str).str.strip() == "")
        bad = ~blank & ~np.isfinite(num.astype(float).fillna(np.nan))
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise ValueError(f"row {i + 1}, column {c}: {excerpt(str(raw.iloc[i]), 40)} is not a finite number "
                             "of seconds")


def read_table(path: str | Path) -> pd.DataFrame:
    """The rows of a run's jobs table at `path` as written (a Batsim ``_jobs.csv``: one row per job Batsim wrote,
    sub-jobs and rejected jobs included), in the Batsim 3.0-4.2 layout (`batsim_csv.normalise_layout`, its note
    in ``attrs["layout_note"]``). Raises KeyError/ValueError as `load_jobs`."""
    from ..fileio import open_input
    with open_input(path, "jobs.csv") as f:
        df = pd.read_csv(f, dtype={"job_id": str, "jobID": str, "workload_name": str, "profile": str,
                                   "allocated_resources": str, "allocated_processors": str, "metadata": str,
                                   "bb_allocation": str},
                         **CSV_MISSING)
    df, note = normalise_layout(df)
    missing = {"job_id", "submission_time", "starting_time", "finish_time", "final_state"} - set(df.columns)
    if missing:
        raise KeyError(f"missing column(s) {', '.join(sorted(missing))}")
    df.attrs["layout_note"] = note
    check_times(df)
    return df


def load_jobs(path: str | Path, bb_per_node: dict | None = None) -> pd.DataFrame:
    """One row per original job (Batsim `_jobs.csv` columns) from a run's jobs table at `path`: this project's
    jobs.csv or a Batsim ``_jobs.csv`` of any layout 1.x-4.2 (older ones translated by
    `batsim_csv.normalise_layout`, which says what it did in ``attrs["layout_note"]``).

    Raises KeyError/ValueError (from pandas, `check_times` or `rebuild_original_jobs`) if it is not such a
    table (a time cell that is neither empty nor a finite number included).
    """
    df = read_table(path)
    if is_subjob_csv(df):
        return rebuild_original_jobs(df, bb_per_node)
    if bb_per_node and "bb_per_node" not in df:
        df["bb_per_node"] = df["job_id"].map(bb_per_node)
    return df


def job_metrics(jobs: pd.DataFrame, tau: float = TAU) -> pd.DataFrame:
    """The metrics of each original job (docs/metrics.md §1): waiting time = start of its compute nodes −
    submission (`definitions.nodes_start`: on the three-phase model the stage-in before the nodes counts as
    waiting), turnaround = end − submission, runtime = turnaround − waiting, bounded slowdown = max(turnaround /
    max(runtime, τ), 1), and wait_to_stage_in = starting_time − submission (the wait for the first resource:
    the stage-in's BB on three-phase, the nodes otherwise), all NaN for a job that never started (rejected).
    Columns `METRIC_COLUMNS`."""
    out = pd.DataFrame({"job_id": jobs["job_id"].astype(str)})
    for c in ("submission_time", "starting_time", "finish_time", "requested_number_of_resources",
              "requested_time", "bb_per_node"):
        out[c] = pd.to_numeric(jobs[c], errors="coerce") if c in jobs else np.nan
    out["final_state"] = jobs["final_state"].fillna("").astype(str)
    ok = out["starting_time"].notna() & out["finish_time"].notna()
    nodes = nodes_start(jobs).set_axis(out.index)
    out["waiting_time"] = waiting_time(out["submission_time"], nodes).where(ok)
    out["turnaround_time"] = turnaround_time(out["submission_time"], out["finish_time"]).where(ok)
    out["runtime"] = runtime(nodes, out["finish_time"]).where(ok)
    out["bounded_slowdown"] = pd.Series(bounded_slowdown(out["turnaround_time"], out["runtime"], tau),
                                        index=out.index).where(ok)
    out["wait_to_stage_in"] = waiting_time(out["submission_time"], out["starting_time"]).where(ok)
    return out[METRIC_COLUMNS]


def describe(values, *, scale: float = 1.0) -> dict[str, float]:
    """n, mean, 95 % CI (low, high, ± half width), quantiles (`stats.QUANTILES`, keys ``q0.5`` …)
    and max of one metric, each value divided by `scale` (3600 for hours)."""
    a = np.asarray(values, dtype=float) / scale
    ci = mean_ci(a)
    d = {"n": ci.n, "mean": ci.mean, "ci_low": ci.low, "ci_high": ci.high, "ci_half": ci.half_width}
    d.update({f"q{q:g}": v for q, v in quantiles(a).items()})
    d["max"] = float(np.nanmax(a)) if ci.n else float("nan")
    return d


def describe_lines(metrics: pd.DataFrame) -> list[str]:
    """Text lines for the CLI: waiting time [h] and bounded slowdown, mean ± CI, quantiles, max."""
    lines = []
    for col, scale, label in (("waiting_time", 3600.0, "waiting time [h]"), ("bounded_slowdown", 1.0,
                                                                            "bounded slowdown")):
        d = describe(metrics[col], scale=scale)
        lines.append(f"{label:<22} mean {d['mean']:.4g} ± {d['ci_half']:.3g} (95 % CI, n = {d['n']})")
        qs = "  ".join(f"q{q:g} {d[f'q{q:g}']:.4g}" for q in QUANTILES)
        lines.append(f"{'':<22} {qs}  max {d['max']:.4g}")
    return lines
