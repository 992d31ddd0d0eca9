"""Per original job from a real Batsim `_jobs.csv` of an I/O-aware run (docs/protocol.md, docs/metrics.md).

The paper's scheduler rejects every static job (workload ``w0``) in the message that registers its
first sub-job, so Batsim lists each static job as REJECTED and its steps (stage-in, compute
phases, checkpoints, drains, stage-out) as dynamic jobs of a workload named after it
(``w0%15`` holds ``w0%15!0``, ``w0%15!1``, … of static job ``w0!15``). Per original job:
start = the first sub-job's start, end = the last sub-job's end (docs/metrics.md); the job's state is
COMPLETED_SUCCESSFULLY if every sub-job was, else the first other state met in the order
WALLTIME_REACHED, KILLED, FAILED; a static job without sub-jobs stays REJECTED (it never ran).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from procset import ProcSet

from .definitions import (BATSIM_JOBS_COLUMNS, BatsimScheduleCounters, bounded_slowdown, runtime, turnaround_time,
                          waiting_time)
_BAD_STATES = ("COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED", "COMPLETED_FAILED")


#: Column names of the ``_jobs.csv`` layouts Batsim wrote before 3.0 → the 3.0-4.2 names (Batsim's changelog,
#: 3.0.0: "requested_number_of_processors and allocated_processors renamed ... final_state and profile added";
#: ``jobID``: Batsim 1.x, as in evalys' tests/batsim_out_jobs.csv).
OLD_COLUMN_NAMES = {"jobID": "job_id", "requested_number_of_processors": "requested_number_of_resources",
                    "allocated_processors": "allocated_resources", "turnAround_time": "turnaround_time"}


def normalise_layout(jobs: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """`jobs` in the Batsim 3.0-4.2 layout, and a note saying what was translated ("" when nothing was).

    Batsim 1.x-2.x tables (``jobID`` or ``job_id``, ``requested_number_of_processors``,
    ``allocated_processors``, no ``final_state``; the layouts of evalys' examples and tests) get the 3.x names
    (`OLD_COLUMN_NAMES`) and a ``final_state`` from ``success``: 1 → COMPLETED_SUCCESSFULLY; 0 → REJECTED when the
    job has no start (empty or negative starting_time or execution_time; its times are then emptied), else
    COMPLETED_KILLED (those versions did not say whether the walltime or the scheduler killed it). Raises
    KeyError if neither ``final_state`` nor ``success`` is there."""
    renamed = {c: OLD_COLUMN_NAMES[c] for c in jobs.columns if c in OLD_COLUMN_NAMES
               and OLD_COLUMN_NAMES[c] not in jobs.columns}
    notes = []
    if renamed:
        jobs = jobs.rename(columns=renamed)
        notes.append("columns " + ", ".join(f"{a} as {b}" for a, b in renamed.items()))
    if "final_state" not in jobs:
        if "success" not in jobs:
            raise KeyError("missing column(s) final_state (or success, in a Batsim table before 3.0)")
        jobs = jobs.copy()
        ok = pd.to_numeric(jobs["success"], errors="coerce") == 1
        st = pd.to_numeric(jobs.get("starting_time"), errors="coerce")
        ex = pd.to_numeric(jobs.get("execution_time", st), errors="coerce")
        never = ~ok & (st.isna() | (st < 0) | ex.isna() | (ex < 0))
        jobs["final_state"] = np.where(ok, "COMPLETED_SUCCESSFULLY", np.where(never, "REJECTED", "COMPLETED_KILLED"))
        for c in ("starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time", "stretch"):
            if c in jobs:
                jobs[c] = jobs[c].astype(object).where(~never, "")
        notes.append("final_state from success (1: completed; 0: rejected if it never started, else killed)")
    if "workload_name" not in jobs:
        jobs["workload_name"] = ""
    return jobs, ("a Batsim table of a layout before 3.0: " + "; ".join(notes)) if notes else ""


#: The fields of Batsim 4.2.1's ``PREFIX_schedule.csv`` that a ``_jobs.csv`` gives (`schedule_fields`), in the
#: file's order; the others (batsim_version, consumed_joules, the machine switches, scheduling_time,
#: simulation_time, the time_* of the machine states) come from the simulation, not from the jobs.
SCHEDULE_FIELDS_FROM_JOBS = ("makespan", "max_slowdown", "max_turnaround_time", "max_waiting_time", "mean_slowdown",
                             "mean_turnaround_time", "mean_waiting_time", "nb_computing_machines", "nb_jobs",
                             "nb_jobs_finished", "nb_jobs_killed", "nb_jobs_rejected", "nb_jobs_success",
                             "success_rate")


def schedule_fields(jobs: pd.DataFrame, nb_machines: int | None = None) -> dict[str, float]:
    """Batsim's ``PREFIX_schedule.csv`` fields (`SCHEDULE_FIELDS_FROM_JOBS`) computed from its ``_jobs.csv``
    `jobs` (one row per job Batsim wrote, sub-jobs and rejected jobs included; a layout before 3.0 first through
    `normalise_layout`) with Batsim 4.2.1's definitions (`definitions.BatsimScheduleCounters`: makespan from
    time 0, means over every job, rejected ones as zeros). `nb_machines`: the platform's machines
    (``nb_computing_machines``: compute and storage, not the master), NaN when None. Times in seconds; equal to
    Batsim's own file up to the %f rounding of the table's times."""
    counts = BatsimScheduleCounters(np.float64(0))
    num = {c: pd.to_numeric(jobs[c], errors="coerce").to_numpy(float)
           for c in ("submission_time", "starting_time", "finish_time", "execution_time") if c in jobs}
    if "execution_time" not in num:
        num["execution_time"] = runtime(num["starting_time"], num["finish_time"])
    with np.errstate(all="ignore"):   # a zero runtime's stretch is inf, as Batsim's
        for state, sub, start, run in zip(jobs["final_state"].astype(str), num["submission_time"],
                                          num["starting_time"], num["execution_time"]):
            counts.add(state, np.float64(sub), np.float64(start), np.float64(run))
        out = {k: float(v) for k, v in counts.fields().items()}
    out["nb_computing_machines"] = float(nb_machines) if nb_machines is not None else float("nan")
    return {k: out[k] for k in SCHEDULE_FIELDS_FROM_JOBS}


def read_schedule_csv(path) -> dict[str, str] | None:
    """The one row of a Batsim ``PREFIX_schedule.csv`` as {field: text}; None if `path` is absent or unreadable."""
    import csv
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    return rows[0] if len(rows) == 1 else None


def schedule_lines(fields: dict[str, float], beside: dict[str, str] | None = None) -> list[str]:
    """`schedule_fields` as text, one ``name value`` line each (counts as integers, the rest as Batsim's %f);
    with `beside` (Batsim's own `read_schedule_csv`), each value that differs from Batsim's by more than the
    rounding of the table (relative 1e-6, absolute 1e-5) is followed by Batsim's."""
    import math
    lines = []
    for k, v in fields.items():
        if v != v and k == "nb_computing_machines":
            lines.append(f"  {k:<22} n/a (the platform: --platform FILE)")
            continue
        text = f"{int(v)}" if k.startswith("nb_") else f"{v:f}"
        theirs = (beside or {}).get(k)
        if theirs is not None:
            try:
                t = float(theirs)
                same = (t != t and v != v) or math.isclose(v, t, rel_tol=1e-6, abs_tol=1e-5)
            except ValueError:
                same = False
            if not same:
                text += f"   (Batsim's _schedule.csv: {theirs})"
        lines.append(f"  {k:<22} {text}")
    return lines


def is_subjob_csv(jobs: pd.DataFrame) -> bool:
    """True if `jobs` is a Batsim `_jobs.csv` whose original jobs ran as dynamic sub-jobs
    (some workload name has the form ``<static workload>%<job id>``)."""
    if "workload_name" not in jobs:
        return False
    return bool(jobs["workload_name"].astype(str).str.contains("%", regex=False).any())


def _union(allocs: pd.Series) -> str:
    ps = ProcSet()
    for a in allocs.dropna().astype(str):
        if a.strip():
            ps |= ProcSet.from_str(a)
    return str(ps)


def rebuild_original_jobs(jobs: pd.DataFrame, bb_per_node: dict | None = None) -> pd.DataFrame:
    """One row per static job (Batsim `_jobs.csv` columns plus `bb_per_node`, `bounded_slowdown`,
    `nb_subjobs`), in submission order, from a sub-job `_jobs.csv` (module docstring for the rules).

    `allocated_resources` is the union of the compute sub-jobs' allocations (data stagings, which
    allocate the BB and PFS storage machines, are left out). `bb_per_node`: optional
    {job id (str): bytes per node}, e.g. from the workload file; NaN otherwise.
    Raises ValueError if a sub-job workload names a static job that is not in the table.
    """
    jobs = jobs.copy()
    jobs["job_id"] = jobs["job_id"].astype(str)
    wl = jobs["workload_name"].astype(str)
    is_sub = wl.str.contains("%", regex=False)
    static = jobs[~is_sub].copy()
    sub = jobs[is_sub].copy()
    parent_wl = wl[is_sub].str.split("%", n=1).str[0]
    sub["parent"] = parent_wl + "!" + wl[is_sub].str.split("%", n=1).str[1]
    static["key"] = static["workload_name"].astype(str) + "!" + static["job_id"]
    missing = set(sub["parent"]) - set(static["key"])
    if missing:
        raise ValueError(f"sub-jobs of unknown static jobs: {', '.join(sorted(missing)[:5])}")
    for c in ("starting_time", "finish_time", "submission_time", "requested_time"):
        jobs[c] = pd.to_numeric(jobs[c], errors="coerce")
        sub[c] = pd.to_numeric(sub[c], errors="coerce")
        static[c] = pd.to_numeric(static[c], errors="coerce")
    g = sub.groupby("parent")
    first = g["starting_time"].min()
    last = g["finish_time"].max()
    count = g.size()
    compute = sub[~sub["profile"].astype(str).str.startswith("data_staging")]
    alloc = compute.groupby("parent")["allocated_resources"].agg(_union)

    def state_of(states: pd.Series) -> str:
        s = set(states.astype(str))
        for bad in _BAD_STATES:
            if bad in s:
                return bad
        if s <= {"COMPLETED_SUCCESSFULLY"}:
            return "COMPLETED_SUCCESSFULLY"
        return sorted(s - {"COMPLETED_SUCCESSFULLY"})[0]
    state = g["final_state"].agg(state_of)

    out = static[list(BATSIM_JOBS_COLUMNS)].copy()
    key = static["key"]
    ran = key.isin(first.index)
    st = key.map(first)
    fin = key.map(last)
    out["starting_time"] = st
    out["finish_time"] = fin
    out["final_state"] = np.where(ran, key.map(state), static["final_state"])
    out["success"] = (out["final_state"] == "COMPLETED_SUCCESSFULLY").astype(int)
    sub_t = static["submission_time"]
    out["execution_time"] = runtime(st, fin)
    out["waiting_time"] = waiting_time(sub_t, st)
    out["turnaround_time"] = turnaround_time(sub_t, fin)
    run = out["execution_time"]
    out["stretch"] = (out["turnaround_time"] / run).where(run > 0)
    out["allocated_resources"] = key.map(alloc).fillna("")
    out["metadata"] = ""
    out["bb_per_node"] = static["job_id"].map(bb_per_node) if bb_per_node else np.nan
    out["bounded_slowdown"] = pd.Series(bounded_slowdown(out["turnaround_time"], run), index=out.index).where(ran)
    out["nb_subjobs"] = key.map(count).fillna(0).astype(int)
    return out.sort_values(["submission_time"], kind="stable").reset_index(drop=True)


#: The name a run gives the simulator's sub-job table (an io-aware or three-phase run), `split_subjob_table`.
SUBJOBS_CSV = "batsim_subjobs.csv"


def split_subjob_table(run_dir) -> bool:
    """In a run folder whose simulator's ``batsim_jobs.csv`` lists sub-jobs (an io-aware or three-phase run, the
    user's jobs REJECTED as Batsim sees them), rename that table `SUBJOBS_CSV` and write ``batsim_jobs.csv`` with
    one row per user job in Batsim's columns (``BATSIM_JOBS_COLUMNS``, copied from the run's jobs.csv;
    ``consumed_energy`` the sum of its sub-jobs' when the simulator measured energy [J]), the table evalys'
    ``JobSet.from_csv`` loads as the user's jobs (docs/run-outputs.md). True when it did; a folder
    without sub-jobs or without jobs.csv is left as it is. Standard library only."""
    import csv
    import os
    from pathlib import Path
    run_dir = Path(run_dir)
    bat, jobs = run_dir / "batsim_jobs.csv", run_dir / "jobs.csv"
    if not bat.is_file() or not jobs.is_file():
        return False
    with open(bat, newline="") as f:
        rows = csv.DictReader(f)
        if "workload_name" not in (rows.fieldnames or ()) or not any("%" in r["workload_name"] for r in rows):
            return False
    energy: dict[tuple[str, str], float] = {}     # (workload, job id) → its sub-jobs' energy (simulate -E)
    with open(bat, newline="") as f:
        for r in csv.DictReader(f):
            wl, _, job = r["workload_name"].partition("%")
            try:
                e = float(r.get("consumed_energy") or "nan")
            except ValueError:
                continue
            if job and e >= 0:
                energy[wl, job] = energy.get((wl, job), 0.0) + e
    os.replace(bat, run_dir / SUBJOBS_CSV)
    tmp = run_dir / "batsim_jobs.csv.tmp"
    from ..fileio import open_output, removing_on_error
    with removing_on_error(tmp):
        with open(jobs, newline="") as f, open_output(tmp, "w", newline="") as g:
            w = csv.writer(g, lineterminator="\n")
            w.writerow(BATSIM_JOBS_COLUMNS)
            for r in csv.DictReader(f):
                key = (r.get("workload_name", ""), r.get("job_id", ""))
                if key in energy:
                    r["consumed_energy"] = f"{energy[key]:.6f}"
                w.writerow([r.get(c, "") for c in BATSIM_JOBS_COLUMNS])
        os.replace(tmp, bat)
    return True

