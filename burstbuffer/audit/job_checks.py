"""The audit's checks of each job (`burstbuffer.audit`): every job accounted for, none started before its
submission or held past its walltime, EASY's head job started by its reservation.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from ..metrics.runinfo import RESERVATIONS_CSV
from .read import numeric
from .report import GRACE, KILLED_STATES, OVER, RAN_STATES, REJECTED, Violation


def workload_ids(path: Path) -> list[str] | None:
    try:
        doc = json.loads(Path(path).read_text())
        return [str(j["id"]).split("!", 1)[-1] for j in doc["jobs"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def workload_of(run_dir: Path, info: dict) -> Path | None:
    """The workload a run ran: run.json's ``workload`` (relative to the run folder if not absolute), else the
    one ``run --jobs N`` wrote in the folder (workload-first-N.json); None if unknown."""
    w = info.get("workload")
    if w:
        p = Path(w)
        return p if p.is_absolute() else Path(run_dir) / p
    found = sorted(Path(run_dir).glob("workload-first-*.json"))
    return found[0] if len(found) == 1 else None


def check_accounted(jobs, workload: Path | None, first: int, *, wanted: tuple[list[str], str] | None = None,
                    need_reason: bool = True):
    """(jobs, violations, note): the ``accounted`` check (`burstbuffer.audit`) against the job ids of `workload`,
    or against `wanted` (ids, what they are: the note) when given. `need_reason`: a rejected job must give its
    reason in ``metadata`` (Batsim's REJECT_JOB carries none: False for its outputs)."""
    out = []
    ids = jobs["job_id"].tolist()
    state = jobs["final_state"].tolist()
    reason = jobs["metadata"].tolist() if "metadata" in jobs else [""] * len(ids)
    for j, s, r, t0, t1 in zip(ids, state, reason, jobs["starting_time"], jobs["finish_time"]):
        if s == REJECTED:
            if need_reason and not r.strip():
                out.append(Violation("accounted", j, math.nan, "", "", (), "rejected without a reason"))
        elif s not in RAN_STATES:
            out.append(Violation("accounted", j, math.nan, "", "", (),
                                 f"final state {s or '(none)'}: neither completed, killed nor rejected"))
        elif not t0 or not t1:
            out.append(Violation("accounted", j, math.nan, "", "", (), f"{s} without a start and an end"))
    seen: dict[str, int] = {}
    for j in ids:
        seen[j] = seen.get(j, 0) + 1
    for j, n in seen.items():
        if n > 1:
            out.append(Violation("accounted", j, math.nan, "", "", (), f"{n} rows in jobs.csv"))
    note = "workload unknown: rows' states only"
    if wanted is not None:
        wanted, note = wanted
    elif workload is not None:
        wanted = workload_ids(workload)
        note = (f"workload {workload} unreadable: rows' states only" if wanted is None else
                f"{len(wanted)} jobs of {Path(workload).name}")
    if wanted is not None:
        known = set(wanted)
        for j in wanted:
            if j not in seen:
                out.append(Violation("accounted", j, math.nan, "", "", (), "submitted, missing from jobs.csv"))
        for j in seen:
            if j not in known:
                out.append(Violation("accounted", j, math.nan, "", "", (), "in jobs.csv, not in the workload"))
    return len(out), out[:first], note


def check_submission(jobs, first: int):
    import numpy as np
    sub, start = numeric(jobs["submission_time"]), numeric(jobs["starting_time"])
    bad = np.nonzero(start < sub - OVER)[0]
    ids = jobs["job_id"].to_numpy()
    return len(bad), [Violation("submission", str(ids[i]), float(start[i]), "", f"{sub[i] - start[i]:.6f} s early",
                                (), f"submitted at {sub[i]:.6f}") for i in bad[:first]]


def check_walltime(jobs, holds, first: int):
    """Jobs not killed whose time on their nodes, as the walltime counts it, exceeds walltime + GRACE: two-phase
    models from starting_time to finish_time; three-phase from nodes_start to the end of the output step
    (bb_holds.csv's "released", else nodes_end), less a wait for a policy's stage-out decision (bb_holds.csv:
    "computed" to "stage-out"): the walltime counts neither that wait nor the stage-out."""
    import numpy as np
    wall = numeric(jobs["requested_time"])
    a, b = numeric(jobs["starting_time"]), numeric(jobs["finish_time"])
    if "nodes_start" in jobs:
        a, ne = numeric(jobs["nodes_start"]), numeric(jobs["nodes_end"])
        b = np.where(np.isnan(ne), b, ne)
    used = b - a
    if "nodes_start" in jobs and holds is not None:
        h = holds
        at = lambda phase: h[h["phase"] == phase].groupby("job_id")["t"].first()   # noqa: E731
        released = jobs["job_id"].map(at("released")).to_numpy(float)
        b = np.where(np.isnan(released), b, released)      # the stage-out is not bounded by the walltime
        waited = (at("stage-out") - at("computed")).dropna()
        used = b - a - jobs["job_id"].map(waited).fillna(0.0).to_numpy(float)
    killed = jobs["final_state"].isin(KILLED_STATES).to_numpy()
    bad = np.nonzero((wall > 0) & ~killed & (used > wall + GRACE))[0]
    ids = jobs["job_id"].to_numpy()
    return len(bad), [Violation("walltime", str(ids[i]), float(b[i]), "", f"{used[i] - wall[i]:.6f} s over",
                                (), f"walltime {wall[i]:.0f} s, ran {used[i]:.6f} s, not killed")
                      for i in bad[:first]]


def check_reservations(jobs, run_dir: Path, first: int):
    """EASY's guarantee (`burstbuffer.audit`'s docstring), or None when the run wrote no reservations.csv."""
    import numpy as np
    import pandas as pd
    path = Path(run_dir) / RESERVATIONS_CSV
    if not path.is_file():
        return None
    r = pd.read_csv(path, dtype=str, keep_default_na=False)
    if not len(r):
        return 0, []
    r["reserved"] = numeric(r["reserved_start"])
    r["t"] = numeric(r["time"])
    head = r.sort_values("t").groupby("job_id").first()          # the reservation it got on becoming head
    start = pd.Series(numeric(jobs["starting_time"]), index=jobs["job_id"])     # its first hold (a stage-in's too)
    s = start.reindex(head.index).to_numpy(float)
    late = s - head["reserved"].to_numpy(float)
    bad = np.nonzero(late > GRACE)[0]
    ids = head.index.to_numpy()
    return len(bad), [Violation("easy-reservation", str(ids[i]), float(s[i]), "", f"{late[i]:.6f} s late", (),
                                f"head at t={head['t'].iloc[i]:.6f} with a reservation at "
                                f"{head['reserved'].iloc[i]:.6f}") for i in bad[:first]]
