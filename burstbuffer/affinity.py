"""Keep one simulation on one CPU core (Linux).

A run is sequential by construction: the scheduler and the simulator take turns (ZeroMQ REQ/REP), and
inside the simulator SimGrid 3.32's Python actors are threads that run one at a time, handing over to
each other at every simulation call. When those hand-overs cross cores, each one pays a cross-core
wake-up; on one core they are plain switches. Measured on the 2-core development machine (3000 KTH
jobs, sjf-bb, io-aware, `burstbuffer run`, single runs, nothing else running): 80-88 s unpinned, 38-42 s
pinned, the same outputs.

`pinned(cpu)` pins every thread of this process to `cpu` for the duration of a `with` block (threads
and child processes started inside inherit it: the simulator process, ZeroMQ's I/O thread) and then
restores the previous affinity. Where CPU affinity is not supported it does nothing.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator

from .errors import InputError

#: The values of the ``--cpu`` option besides a CPU number.
CPU_CHOICES = ("auto", "off")


def available_cpus() -> list[int]:
    """The CPUs this process may run on, ascending ([] where affinity is not supported)."""
    if not hasattr(os, "sched_getaffinity"):
        return []
    return sorted(os.sched_getaffinity(0))


def current_cpu() -> int | None:
    """The CPU this process last ran on (field 39 of /proc/self/stat), or None if unknown."""
    try:
        with open("/proc/self/stat") as f:
            stat = f.read()
        return int(stat[stat.rindex(")") + 2:].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def resolve_cpu(spec: str | int | None, *, slot: int | None = None) -> int | None:
    """The CPU to pin a run to, or None for no pinning.

    `spec`: "off" or None (no pinning); "auto" (the CPU of `slot`-th worker, cycling through the
    available CPUs, or without `slot` the CPU this process runs on; no pinning when only one CPU is
    available); a CPU number (as int or str). Raises InputError for anything else or a CPU this
    process may not use."""
    cpus = available_cpus()
    if spec is None or spec == "off" or not cpus:
        return None
    if spec == "auto":
        if len(cpus) < 2:
            return None
        if slot is not None:
            return cpus[slot % len(cpus)]
        cpu = current_cpu()
        return cpu if cpu in cpus else cpus[0]
    try:
        cpu = int(spec)
    except (TypeError, ValueError):
        raise InputError("--cpu", str(spec), "expected auto, off or a CPU number") from None
    if cpu not in cpus:
        raise InputError("--cpu", str(spec), f"not a CPU this process may use ({', '.join(map(str, cpus))})")
    return cpu


def _threads() -> list[int]:
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return [0]


@contextmanager
def pinned(cpu: int | None) -> Iterator[None]:
    """Pin every thread of this process to `cpu` inside the block (None: do nothing), then restore
    each surviving thread's previous affinity."""
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        yield
        return
    before: dict[int, set[int]] = {}
    for tid in _threads():
        try:
            before[tid] = os.sched_getaffinity(tid)
            os.sched_setaffinity(tid, {cpu})
        except OSError:          # a thread that ended meanwhile, or a CPU taken away
            pass
    try:
        yield
    finally:
        restore = before.get(os.getpid())   # for threads started inside the block
        for tid in _threads():
            try:
                os.sched_setaffinity(tid, before.get(tid, restore))
            except (OSError, TypeError):
                pass


def one_blas_thread() -> None:
    """Ask numpy's OpenBLAS for one thread (``OPENBLAS_NUM_THREADS=1`` unless the environment says otherwise):
    it otherwise starts a thread per core at numpy's import, which spin beside the run (3 % of the embedded
    simulator's samples under `perf` on 1000 jobs). Neither process does linear algebra on matrices large
    enough to gain from threads, and a run's two processes share the cores already. Call it before numpy is
    imported (the command lines' entry points do); afterwards it changes nothing."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
