"""The local executor: a pool of spawned worker processes on this machine, each pinned to a CPU core of
its own (`burstbuffer.affinity`), with one progress bar for the plan and one per running run.

The only state outside an executor object is each worker process's own context (its progress queue and
its CPU core), set once by the pool's initializer in that process: `_WorkerContext.current`.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import queue as queue_mod
import signal
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from ..affinity import resolve_cpu
from .execute import RunSettings, describe, run_one
from .runs import RunSpec


@dataclass
class _WorkerContext:
    """Inside a pool worker process: where progress goes (a queue, or None: no bars) and its CPU core."""

    queue: object | None
    cpu: int | None
    current = None  # the context of this worker process (set by _init_worker, in the worker only)


class _QueueReporter:
    """Inside a worker: passes runner.run's progress (jobs started or rejected, total) to the parent's
    bars through a queue, at most every 0.5 s and always on the last job."""

    def __init__(self, key: str, q):
        self.key = key
        self.q = q
        self._last = 0.0

    def __call__(self, done: int, total: int | None) -> None:
        now = time.monotonic()
        if not (now - self._last >= 0.5 or (total and done >= total)):
            return
        self._last = now
        try:
            self.q.put_nowait((self.key, done, total))
        except Exception:  # noqa: BLE001 - a full or closed queue only loses a bar update
            pass


def _init_worker(q, counter, pin: bool) -> None:
    """Worker start: an idle worker ignores Ctrl-C (the parent cancels what has not started); `q` (or
    None: no progress bars) carries the runs' progress to the parent; with `pin`, the k-th worker
    started (`counter`) runs its simulations on the k-th available CPU core (`burstbuffer.affinity`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with counter.get_lock():
        slot = counter.value
        counter.value += 1
    _WorkerContext.current = _WorkerContext(q, resolve_cpu("auto", slot=slot) if pin else None)


def _pool_task(spec: RunSpec, settings: RunSettings) -> dict:
    """In a pool worker: `run_one` with this worker's CPU core and progress queue."""
    ctx = _WorkerContext.current
    return run_one(spec, replace(settings, cpu=ctx.cpu),
                   _QueueReporter(spec.key, ctx.queue) if ctx.queue is not None else None)


class LocalPoolExecutor:
    """`workers` spawned processes (at most one per run to do), each pinned to a CPU core of its own when
    `pin`; tqdm bars when `progress`, else one line per finished run through `log`."""

    def __init__(self, workers: int, *, pin: bool = True, progress: bool = True, log=print):
        self.workers = max(1, workers)
        self.pin = pin
        self.progress = progress
        self.log = log

    def run(self, todo: Sequence[RunSpec], settings: RunSettings,
            on_done: Callable[[RunSpec, dict], None], *, total: int, kept: int) -> None:
        """See `burstbuffer.reproduce.execute.Executor.run`."""
        workers = self.workers
        ctx = mp.get_context("spawn")
        q = ctx.Queue() if self.progress else None
        bars: dict[str, object] = {}
        slots: dict[str, int] = {}
        overall = None
        if self.progress:
            from tqdm import tqdm
            overall = tqdm(total=total, initial=kept, unit="run", desc="reproduce", position=0,
                           dynamic_ncols=True, leave=True)
        say = (lambda m: overall.write(m)) if overall is not None else self.log
        pending_keys = {s.key for s in todo}

        def drain():
            if q is None:
                return
            from tqdm import tqdm
            while True:
                try:
                    key, n, tot = q.get_nowait()
                except (queue_mod.Empty, OSError, EOFError):
                    return
                if key not in bars and key in pending_keys:
                    used = set(slots.values())
                    slot = next(i for i in range(1, workers + 2) if i not in used)
                    slots[key] = slot
                    bars[key] = tqdm(total=tot, unit="job", desc=key, position=slot, leave=False,
                                     dynamic_ncols=True)
                b = bars.get(key)
                if b is not None:
                    b.update(n - b.n)

        pool = ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=ctx,
                                   initializer=_init_worker, initargs=(q, ctx.Value("i", 0), self.pin))
        futures = {pool.submit(_pool_task, s, settings): s for s in todo}
        try:
            pending = set(futures)
            while pending:
                done, pending = wait(pending, timeout=0.3, return_when=FIRST_COMPLETED)
                drain()
                for f in done:
                    s = futures[f]
                    pending_keys.discard(s.key)
                    try:
                        info = f.result()
                    except Exception as exc:  # a worker process died
                        info = {"key": s.key, "error": f"{type(exc).__name__}: {exc}"}
                    on_done(s, info)
                    b = bars.pop(s.key, None)
                    slots.pop(s.key, None)
                    if b is not None:
                        b.close()
                    if overall is not None:
                        overall.update(1)
                    say(describe(s, info))
        except KeyboardInterrupt:
            for f in futures:
                f.cancel()
            # interrupt the running workers too (a Ctrl-C at a terminal reaches them already; a signal sent
            # to this process alone does not): each stops its simulator and returns
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                try:
                    os.kill(proc.pid, signal.SIGINT)
                except (OSError, AttributeError):
                    pass
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            for b in bars.values():
                b.close()
            if overall is not None:
                overall.close()
        pool.shutdown(wait=True)
