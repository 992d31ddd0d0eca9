"""Batsim's ``--no-sched`` (its *batexec* mode): the workloads run without a scheduler, as Batsim 4.2.1 runs
them (``batexec_job_launcher_process``, ``job_submitter.cpp``; ``execute_job_process``,
``jobs_execution.cpp``).

One launcher actor per workload, on the master host, starts every job of its workload at t = 0, whatever its
``subtime``, on machines 0 to res-1, in the order Batsim's job table iterates over them (`job_order`); the
jobs share those machines and run to their end or their walltime. No protocol message, no job row in
``PREFIX_jobs.csv`` (its header only: Batsim writes a job's row when the server hears of its end, and there
is no server; `execution.end_unheard`), ``PREFIX_machine_states.csv`` one row per job start and end, ``PREFIX_schedule.csv`` with no
job and the machines' times. Not with ``-E`` nor ``--events`` (InputError): Batsim's energy and event
submitters then wait for a server that never comes.

`job_order` builds that table with the C++ library through a small compiled helper
(``native/hashorder.cpp``), built on first use as the simulator's bridge is; without a C++ compiler,
``--no-sched`` is an input error.
"""
from __future__ import annotations

import os

from ..errors import InputError
from .execution import dispatch
from .handlers import start_job
from .protocol import parse_allocation
from .state import SimState

#: the compiled helper, once loaded (ctypes CDLL)
_LIB = None


def _lib():
    global _LIB
    if _LIB is None:
        import ctypes  # noqa: PLC0415

        from ..cbuild import NativeUnavailable, compile_file_cached  # noqa: PLC0415
        from ._bridge import CXXFLAGS, NATIVE_DIR, _first_error  # noqa: PLC0415
        try:
            so, _ = compile_file_cached(os.path.join(NATIVE_DIR, "hashorder.cpp"), "_bb_hashorder",
                                        compiler=os.environ.get("CXX", "c++"), flags=CXXFLAGS, src_suffix=".cpp",
                                        error_line=_first_error)
        except (NativeUnavailable, OSError) as exc:
            raise InputError("--no-sched", "option", f"needs its compiled helper (Batsim's job order), which "
                                                     f"cannot be built: {exc}") from None
        lib = ctypes.CDLL(str(so))
        lib.hash_table_order.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
        lib.hash_table_order.restype = ctypes.c_int
        _LIB = lib
    return _LIB


def job_order(ids: list[str]) -> list[int]:
    """The indices of job ids `ids` (full ids ``WORKLOAD!NAME``, in the workload file's order) in the order
    Batsim 4.2.1 iterates over its table of them (``std::unordered_map``, module docstring). InputError when
    the helper cannot be built."""
    import ctypes  # noqa: PLC0415

    lib = _lib()
    out = (ctypes.c_int * len(ids))()
    n = lib.hash_table_order(b"".join(i.encode() + b"\0" for i in ids), len(ids), out)
    return list(out[:n])


def check(st: SimState) -> None:
    """InputError for what --no-sched cannot run: -E, --events, a job needing more machines than there are."""
    if st.cfg.energy:
        raise InputError("--no-sched", "option", "not with -E (Batsim's energy waits for a server)")
    if st.cfg.events:
        raise InputError("--no-sched", "option", "not with --events (Batsim's event submitters wait for a server)")
    n = len(st.mstate) if st.mstate else len(st.machines.all)
    for name in st.static_names:
        for job in st.workloads[name].jobs.values():
            if job.res > n:
                raise InputError(st.workloads[name].file, f"job {job.id}",
                                 f"needs {job.res} machines, the platform has {n} (--no-sched gives a job "
                                 "machines 0 to res-1)")


def launch(st: SimState) -> None:
    """Start one launcher actor per workload on the master host (Batsim's order: the workloads' order)."""
    for name in st.static_names:
        jobs = list(st.workloads[name].jobs.values())
        order = [jobs[i] for i in job_order([j.id for j in jobs])]
        st.batexec_left += len(order)
        st.sg.Actor.create(f"workload_submitter_{name}", st.master_host, st.guarded, _launcher, st, order)
    if st.batexec_left == 0:
        st.end_ack = True


def _launcher(st: SimState, jobs: list) -> None:
    for job in jobs:
        alloc, ids, text = parse_allocation(f"0-{job.res - 1}" if job.res > 1 else "0")
        start_job(st, job, alloc, ids, text)
        dispatch(st, job, st.mstate[0].host)
