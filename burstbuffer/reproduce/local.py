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
from ..logs import progress_bar
from ..signals import Interrupted
from .execute import RunSettings, describe, run_one
from .runs import PlannedRun


@dataclass
class _WorkerContext:
    """Inside a pool worker process: where progress goes (a queue, or None: no bars) and its CPU core."""

    queue: object | None
    cpu: int | None
    stop: object = None   # a multiprocessing Event: set by the parent when interrupted (no new run starts)
    busy: bool = False    # a run is under way (`_pool_task`)
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


def _init_worker(q, counter, pin: bool, stop=None, parent: int | None = None) -> None:
    """Worker start: an idle worker ignores Ctrl-C (the parent cancels what has not started) and dies
    with its parent `parent` (its pid), even a SIGKILLed one: `signals.die_with_parent`, and `_watch_parent`
    for what that signal cannot reach; `q` (or None: no progress bars) carries the runs' progress to the
    parent; with `pin`, the k-th worker started (`counter`) runs its simulations on the k-th available CPU
    core (`burstbuffer.affinity`); `stop` (an Event) set: no run starts any more."""
    from ..signals import die_with_parent
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    with counter.get_lock():
        slot = counter.value
        counter.value += 1
    _WorkerContext.current = _WorkerContext(q, resolve_cpu("auto", slot=slot) if pin else None, stop)
    if parent is not None:
        import threading
        threading.Thread(target=_watch_parent, args=(parent,), name="watch-parent", daemon=True).start()


#: [s] how often a worker checks that its parent is alive (`_watch_parent`)
PARENT_POLL = 0.5


def _watch_parent(parent: int) -> None:
    """In a worker, a thread: once process `parent` (the pool's owner) is gone, end this worker — after the
    run under way, if any, had `LocalPoolExecutor.STOP_GRACE` s to stop and write its outputs. The
    parent-death signal alone leaves two holes: a parent killed before the worker set it up (a spawned
    worker imports for seconds on a loaded machine), and a worker whose run it interrupted, which then
    waits for its next task for ever (its task queue never ends: every worker holds its other end), holding
    multiprocessing's resource tracker alive with it."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL)
    deadline = time.monotonic() + LocalPoolExecutor.STOP_GRACE
    while _WorkerContext.current.busy and time.monotonic() < deadline:
        time.sleep(0.1)
    os._exit(128 + signal.SIGTERM)


def _interrupt(signum, frame):
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _pool_task(spec: PlannedRun, settings: RunSettings) -> dict:
    """In a pool worker: `run_one` with this worker's CPU core and progress queue; ``{"key", "error",
    "interrupted": True}`` without simulating once the parent was interrupted (its stop event set).
    Ctrl-C is armed before the stop event is read, so the parent's SIGINT (sent after setting the event)
    either finds the event set or interrupts the run."""
    ctx = _WorkerContext.current
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # a SIGTERM or SIGHUP sent to the whole process group (a closed terminal, a batch system) stops the
    # run as cleanly as Ctrl-C does: its simulator stopped, its outputs written
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, _interrupt)
    ctx.busy = True
    try:
        if ctx.stop is not None and ctx.stop.is_set():
            return {"key": spec.key, "error": "interrupted before it started", "interrupted": True}
        return run_one(spec, replace(settings, cpu=ctx.cpu),
                       _QueueReporter(spec.key, ctx.queue) if ctx.queue is not None else None)
    except KeyboardInterrupt:
        return {"key": spec.key, "error": "interrupted before it started", "interrupted": True}
    finally:
        ctx.busy = False
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for s in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_DFL)


class LocalPoolExecutor:
    """`workers` spawned processes (at most one per run to do), each pinned to a CPU core of its own when
    `pin`; tqdm bars when `progress`, else one line per finished run through `log`."""

    #: [s] after an interruption, how long the running runs get to stop their simulators and return
    #: before their workers are terminated
    STOP_GRACE = 20.0

    def __init__(self, workers: int, *, pin: bool = True, progress: bool = True, log=print,
                 desc: str = "runs"):
        self.workers = max(1, workers)
        self.pin = pin
        self.progress = progress
        self.log = log
        self.desc = desc

    def run(self, todo: Sequence[PlannedRun], settings: RunSettings,
            on_done: Callable[[PlannedRun, dict], None], *, total: int, kept: int) -> None:
        """See `burstbuffer.reproduce.execute.Executor.run`."""
        workers = self.workers
        ctx = mp.get_context("spawn")
        q = ctx.Queue() if progress_bar(self.progress) else None
        bars: dict[str, object] = {}
        slots: dict[str, int] = {}
        overall = None
        if progress_bar(self.progress):   # else one line per finished run: no carriage returns in logs
            from tqdm import tqdm
            overall = tqdm(total=total, initial=kept, unit="run", desc=self.desc, position=0,
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

        stop = ctx.Event()
        pool = ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=ctx,
                                   initializer=_init_worker,
                                   initargs=(q, ctx.Value("i", 0), self.pin, stop, os.getpid()))
        futures = {pool.submit(_pool_task, s, settings): s for s in todo}
        pending = set(futures)

        def finished(f) -> None:
            s = futures[f]
            pending_keys.discard(s.key)
            try:
                info = f.result()
            except BaseException as exc:  # noqa: BLE001 - a worker process died (or was stopped)
                info = {"key": s.key, "error": f"{type(exc).__name__}: {exc}"}
            on_done(s, info)
            b = bars.pop(s.key, None)
            slots.pop(s.key, None)
            if b is not None:
                b.close()
            if overall is not None:
                overall.update(1)
            say(describe(s, info))

        try:
            while pending:
                done, pending = wait(pending, timeout=0.3, return_when=FIRST_COMPLETED)
                drain()
                for f in done:
                    finished(f)
        except (KeyboardInterrupt, Interrupted):
            self._stop(pool, futures, pending, stop, finished)
            raise
        finally:
            for b in bars.values():
                b.close()
            if overall is not None:
                overall.close()
        pool.shutdown(wait=True)

    def _stop(self, pool, futures, pending, stop, finished) -> None:
        """After an interruption: no queued run starts (the workers' `stop` event, the queued futures
        cancelled), the running ones are sent SIGINT (a Ctrl-C at a terminal reaches them already, a
        signal sent to this process alone does not: each stops its simulator and returns), their results
        are collected for up to `STOP_GRACE` s (`finished`), and the workers still alive then are
        terminated. Returns once every worker process has exited."""
        stop.set()
        for f in futures:
            f.cancel()
        procs = list((getattr(pool, "_processes", None) or {}).values())
        for proc in procs:
            try:
                os.kill(proc.pid, signal.SIGINT)
            except (OSError, AttributeError):
                pass
        deadline = time.monotonic() + self.STOP_GRACE
        running = {f for f in pending if not f.cancelled()}
        while running and time.monotonic() < deadline:
            done, running = wait(running, timeout=0.2, return_when=FIRST_COMPLETED)
            for f in done:
                if not f.cancelled():
                    finished(f)
        for proc in procs:            # a run that ignores SIGINT (e.g. stuck in C code) is not waited for
            if proc.is_alive() and running:
                proc.terminate()
        for proc in procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=5)
        pool.shutdown(wait=True, cancel_futures=True)
