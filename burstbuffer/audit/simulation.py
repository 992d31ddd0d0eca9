"""The audit of a simulation's Batsim outputs (``burstbuffer simulate``, `burstbuffer.audit`)."""
from __future__ import annotations

from pathlib import Path

from .job_checks import workload_ids, check_accounted, check_submission, check_walltime
from .read import read_jobs_csv
from .report import adder, report_of, AuditError, AuditReport, GRACE
from .sweeps import check_burst_buffer, check_processors


def audit_simulation(prefix: str | Path, workloads, compute, *, bb_capacity: dict[int, int] | None = None,
                     compute_sharing: bool = False, first: int = 10) -> AuditReport:
    """Audit what Batsim's outputs of a simulation (``burstbuffer simulate``, docs/audit.md) let one check:
    ``PREFIX_jobs.csv`` read alone, jobs named ``WORKLOAD!ID`` (its workload_name and job_id).

    `workloads`: the static workloads' (name, JSON path) pairs in order (w0, w1, ...): each of their jobs must
    have a row (rows of other workloads, the scheduler's dynamic jobs, are accepted); `compute`: the compute
    machines' resource ids (the platform's compute role), the only ones the ``processors`` check sweeps: a
    storage host is legitimately shared by the I/O sub-jobs of several jobs; `bb_capacity`: BB node id →
    capacity [bytes] the platform declares (None or empty: none); checked only if the outputs carry a per-job
    ``bb_allocation``, which Batsim's columns do not. `compute_sharing` (``--enable-compute-sharing``): jobs may
    share compute hosts, ``processors`` is skipped. Returns an `AuditReport` (``run_dir``: the prefix); raises
    AuditError if PREFIX_jobs.csv is missing or malformed."""
    path = Path(f"{prefix}_jobs.csv")
    try:
        jobs = read_jobs_csv(path)
        if "workload_name" in jobs:
            jobs["job_id"] = jobs["workload_name"] + "!" + jobs["job_id"]
        rows, viol = [], []
        add = adder(rows, viol)
        compute = sorted(int(c) for c in compute)
        if compute_sharing:
            add("processors", None, "not checked: --enable-compute-sharing lets jobs share compute hosts")
        else:
            add("processors", check_processors(jobs, first, only=compute),
                f"{len(compute)} compute hosts, starting_time → finish_time (storage hosts are shared by I/O)")
        if not bb_capacity:
            add("burst-buffer", None, "not checked: the platform declares no BB capacity")
        elif "bb_allocation" not in jobs:
            add("burst-buffer", None, f"not checked: the platform declares {len(bb_capacity)} BB capacities, but "
                                      f"{path.name} carries no per-job BB amount (Batsim's columns)")
        else:
            add("burst-buffer", check_burst_buffer(jobs, None, bb_capacity, {}, first),
                f"{len(bb_capacity)} BB nodes (platform); starting_time → finish_time")
        static = [name for name, _ in workloads]
        wanted, unread = [], []
        for name, wl in workloads:
            ids = workload_ids(wl)
            if ids is None:
                unread.append(str(wl))
            else:
                wanted += [f"{name}!{j}" for j in ids]
        if unread:
            n, v, note = check_accounted(jobs, None, first, need_reason=False)
            note = f"workload {unread[0]} unreadable: rows' states only"
        else:
            dynamic = jobs["job_id"][~jobs["workload_name"].isin(static)].tolist() if "workload_name" in jobs else []
            n, v, note = check_accounted(jobs, None, first, need_reason=False, wanted=(
                wanted + dynamic, f"{len(wanted)} jobs of {len(static)} workload(s)"
                                  + (f", {len(dynamic)} dynamic" if dynamic else "")))
        add("accounted", (n, v), note)
        add("submission", check_submission(jobs, first))
        add("walltime", check_walltime(jobs, None, first), f"grace {GRACE:g} s")
        add("easy-reservation", None, "not checked: Batsim's outputs record no reservation")
    except AuditError:
        raise
    except (ValueError, KeyError, TypeError) as exc:
        raise AuditError(f"{path}: malformed ({type(exc).__name__}: {exc})") from None
    return report_of(Path(prefix), rows, viol)
