"""A run's outputs as the audit reads them (`burstbuffer.audit`): jobs.csv, run.json, bb_holds.csv."""
from __future__ import annotations

import json
from pathlib import Path

from ..metrics.runinfo import BB_HOLDS_CSV
from .report import AuditError


def split_pairs(texts, sep: str):
    """Explode space-separated "A<sep>B" items of the strings `texts` (a pandas Series, index kept): a DataFrame
    indexed by the row each item came from, with integer columns a and b (b = a when an item has no `sep`):
    "0-3 7" → (0, 3), (7, 7) for a procset; "96:100 97:5" → (96, 100), (97, 5) for a BB allocation."""
    import pandas as pd
    items = texts[texts != ""].str.split().explode().dropna()
    if not len(items):
        return pd.DataFrame({"a": pd.Series([], dtype="int64"), "b": pd.Series([], dtype="int64")})
    parts = items.str.partition(sep)
    a = parts[0].astype("int64")
    b = parts[2].where(parts[2] != "", parts[0]).astype("int64")
    return pd.DataFrame({"a": a, "b": b})


def numeric(col):
    import pandas as pd
    return pd.to_numeric(col, errors="coerce").to_numpy(float)


def load_jobs(run_dir: Path):
    """jobs.csv of `run_dir` as a DataFrame of strings (AuditError if missing or not a jobs.csv)."""
    return read_jobs_csv(Path(run_dir) / "jobs.csv")


def read_jobs_csv(path: Path):
    """A jobs.csv (or Batsim's PREFIX_jobs.csv) at `path` as a DataFrame of strings (AuditError if missing or
    without Batsim's columns)."""
    import pandas as pd
    try:
        jobs = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as exc:
        raise AuditError(f"{path}: cannot read it ({exc})") from None
    need = {"job_id", "submission_time", "requested_time", "final_state", "starting_time", "finish_time",
            "allocated_resources"}
    missing = need - set(jobs.columns)
    if missing:
        raise AuditError(f"{path}: not a jobs.csv (no column {sorted(missing)[0]})")
    return jobs


def load_run_json(run_dir: Path) -> dict:
    try:
        return json.loads((Path(run_dir) / "run.json").read_text())
    except (OSError, ValueError):
        return {}


def load_holds(run_dir: Path):
    """bb_holds.csv of `run_dir` (strings, plus its time as float column ``t``), or None without one."""
    import pandas as pd
    path = Path(run_dir) / BB_HOLDS_CSV
    if not path.is_file():
        return None
    try:
        h = pd.read_csv(path, dtype=str, keep_default_na=False)
        h["t"] = numeric(h["time"])
        return h[["job_id", "t", "phase", "bb_allocation"]]
    except (OSError, ValueError, KeyError) as exc:
        raise AuditError(f"{path}: not a bb_holds.csv ({exc})") from None
