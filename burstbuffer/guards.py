"""Guards around a policy's decisions, whichever scheduler API made them (docs/reliability.md).

`DecisionGuard.decide(scheduler, now, records)` is the one place where `burstbuffer.app.SchedulerApp` asks
the policy for its decisions. It

- turns an exception raised by the policy into a `SchedulerFault` (one line naming the policy, the
  decision time and the error; the caller keeps its outputs);
- bounds the decision's wall-clock time (`decision_timeout` [s], None: no limit) with a `Watchdog`: a policy
  stuck in a loop becomes a `SchedulerFault` instead of a hang;
- refuses any decision that would over-fill a burst-buffer node (`BBLedger`), as the simulator refuses a
  processor that is already in use: a `SchedulerFault` naming the job, the BB node, the bytes held and the
  node's capacity. A BB node's bytes are held from a job's first decision (`Start`, or `StageIn` under the
  three-phase model) until the job ends.
"""
from __future__ import annotations

import ctypes
import threading
import time

from .batsim.protocol import ProtocolError


class SchedulerFault(ProtocolError):
    """The policy broke a rule or failed while deciding: one line, ``policy NAME at t=T: WHAT``. The CLI
    prints it and exits with status 1; a campaign records the run as failed and goes on."""


class PolicyExit(SystemExit):
    """Raised instead of ending the process when the policy calls ``os._exit`` (`refused_exit`)."""


def refused_exit(status: int = 0) -> None:
    """What ``os._exit`` is while the policy's hooks run (`app.SchedulerApp.on_event`, `after_events`): a
    `PolicyExit`, so that the run ends as a failed run with its outputs, never as a process gone silently."""
    raise PolicyExit(f"os._exit({status})")


def exit_fault(name: str, now: float, exc: SystemExit) -> SchedulerFault:
    """The `SchedulerFault` of a policy `name` that called ``sys.exit`` or ``os._exit`` at time `now`: a run
    whose policy exits failed (exit status 1), it did not succeed."""
    what = exc.code if isinstance(exc, PolicyExit) else f"sys.exit({exc.code!r})"
    return SchedulerFault(f"policy {name} at t={now:g}: the policy called {what}: the run cannot go on")


class DecisionTimeout(BaseException):
    """Raised asynchronously in the deciding thread by `Watchdog` when a decision outlives its limit
    (a BaseException: a policy's ``except Exception`` does not swallow it)."""


def _set_async_exc(thread_id: int, exc) -> None:
    """Raise `exc` (a class) in thread `thread_id` at its next Python instruction; None clears it."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id),
                                               ctypes.py_object(exc) if exc is not None else None)


class Watchdog:
    """One daemon thread that raises `DecisionTimeout` in the armed thread once its deadline passes.

    `arm(limit)` (in the thread to watch) / `disarm()`: cheap (a lock, no thread per decision); the watcher
    wakes every `period` s. A decision stuck in C code is interrupted when it returns to Python.
    `disarm()` returns True when the deadline had passed (the caller raises then); a pending
    asynchronous exception is cleared, so none escapes after the guarded block.
    """

    def __init__(self, period: float = 0.2):
        self.period = period
        self._lock = threading.Lock()
        self._target: int | None = None
        self._deadline = 0.0
        self._fired = False
        self._thread: threading.Thread | None = None

    def arm(self, limit: float) -> None:
        with self._lock:
            self._target = threading.get_ident()
            self._deadline = time.monotonic() + limit
            self._fired = False
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="burstbuffer-watchdog", daemon=True)
                self._thread.start()

    def disarm(self) -> bool:
        with self._lock:
            target, fired = self._target, self._fired
            self._target, self._fired = None, False
        if fired and target is not None:
            _set_async_exc(target, None)          # clear it if not raised yet
        return fired

    def _watch(self) -> None:
        while True:
            time.sleep(self.period)
            with self._lock:
                if self._target is not None and not self._fired and time.monotonic() > self._deadline:
                    self._fired = True
                    _set_async_exc(self._target, DecisionTimeout)


_WATCHDOG = Watchdog()


class BBLedger:
    """Bytes held on each BB node (`platform.bb_capacity`: BB-node resource id → capacity [bytes]) by the
    jobs decided and not ended (`records[job_id].end` None)."""

    def __init__(self, capacity: dict[int, int], names: dict[int, str] | None = None):
        self.capacity = dict(capacity)
        self.names = names or {}
        self.held = dict.fromkeys(self.capacity, 0)
        self._holders: dict[str, tuple[object, dict[int, int]]] = {}

    def _release_ended(self) -> None:
        ended = [jid for jid, (rec, _) in self._holders.items() if getattr(rec, "end", None) is not None]
        for jid in ended:
            _, alloc = self._holders.pop(jid)
            for node, b in alloc.items():
                self.held[node] -= b

    def take(self, job_id: str, rec, alloc: dict[int, int]) -> str | None:
        """Hold `alloc` ({BB node id: bytes}) for job `job_id` (replacing what it held: a `Start` after its
        `StageIn`); None if it fits, else the reason (nothing is held then)."""
        self._release_ended()
        old = self._holders.get(job_id, (None, {}))[1]
        for node, b in sorted(alloc.items()):
            if b <= 0:
                continue
            if node not in self.capacity:
                return f"job {job_id}: {b} B on resource {node}, which is not a burst-buffer node"
            after = self.held[node] - old.get(node, 0) + b
            if after > self.capacity[node]:
                name = self.names.get(node, "")
                return (f"job {job_id} would put {b} B on BB node {node}{f' ({name})' if name else ''}, which holds "
                        f"{self.held[node] - old.get(node, 0)} B of its {self.capacity[node]} B: burst buffer "
                        "over-filled, decision refused")
        for node, b in old.items():
            self.held[node] -= b
        for node, b in alloc.items():
            self.held[node] = self.held.get(node, 0) + b
        self._holders[job_id] = (rec, dict(alloc))
        return None


class DecisionGuard:
    """The checks of every decision of one run (module docstring): `platform` (its `bb_capacity` and
    `names`), the policy's `name` for messages, `decision_timeout` [s] (None: no limit)."""

    def __init__(self, platform, name: str, decision_timeout: float | None = None):
        self.name = name
        self.decision_timeout = decision_timeout
        self.ledger = BBLedger(getattr(platform, "bb_capacity", {}) or {}, getattr(platform, "names", {}))

    def fault(self, now: float, what: str) -> SchedulerFault:
        return SchedulerFault(f"policy {self.name} at t={now:g}: {what}")

    def decide(self, sched, now: float, records: dict) -> list:
        """`sched.decide(now)` as a list, each decision checked against the BB capacity (a decision of a
        job already holding BB, a Start after its StageIn, replaces its holding). SchedulerFault if the
        policy raises, outlives `decision_timeout`, returns anything but `Start`/`StageIn`/`StageOut` decisions
        of jobs of `records`, or over-fills a BB node."""
        limit = self.decision_timeout
        try:
            if limit is not None:
                _WATCHDOG.arm(limit)
            try:
                decisions = list(sched.decide(now))
            finally:
                if limit is not None and _WATCHDOG.disarm():
                    raise DecisionTimeout
        except DecisionTimeout:
            raise self.fault(now, f"a decision took longer than {limit:g} s (decision timeout): the policy "
                                  "is stuck or too slow") from None
        except Exception as exc:   # noqa: BLE001 - the policy's own bug: one line, outputs kept
            msg = " ".join(str(exc).split())
            raise self.fault(now, f"decide raised {type(exc).__name__}: {msg[:300]}") from None
        from .schedulers.base import StageIn, StageOut, Start
        for d in decisions:
            if not isinstance(d, (Start, StageIn, StageOut)):
                from .jsonvalues import excerpt
                raise self.fault(now, f"decide returned {excerpt(d, 60)} ({type(d).__name__}), not a Start, StageIn "
                                      "or StageOut")
            if getattr(d.job, "id", None) not in records:
                raise self.fault(now, f"decide returned a decision for {excerpt(getattr(d.job, 'id', d.job), 60)}, "
                                      "not a job of this run")
            job = getattr(d, "job", None)
            alloc = getattr(d, "bb_per_storage", None)
            if job is None or alloc is None:
                continue
            why = self.ledger.take(job.id, records.get(job.id), alloc)
            if why is not None:
                raise self.fault(now, why)
        return decisions
