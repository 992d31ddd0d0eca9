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

import contextlib
import ctypes
import os
import posix
import sys
import threading
import time
from typing import Callable

from .batsim.protocol import ProtocolError
from .errors import EXIT_TIMEOUT, TimedOut


class SchedulerFault(ProtocolError):
    """The policy broke a rule or failed while deciding: one line, ``policy NAME at t=T: WHAT``. The CLI
    prints it and exits with status 1; a campaign records the run as failed and goes on."""


class DecisionTimedOut(SchedulerFault, TimedOut):
    """A call into the policy outlived the decision timeout (exit 124, `errors.EXIT_TIMEOUT`)."""


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


def run_hook(fn, args: tuple, name: str, now: float, limit: float | None):
    """`fn(*args)`, a call into the policy's code (its construction, submit, job_ended, ... hooks; `decide` has
    `DecisionGuard`): under the watchdog when `limit` [s] is not None (SchedulerFault after `limit` s, the
    process ended if stuck in C code, `Watchdog`), with ``os._exit`` refused and ``sys.exit`` a
    SchedulerFault (`exit_fault`)."""
    exit_ = os._exit
    os._exit = posix._exit = refused_exit
    pid = os.getpid()
    try:
        if limit is None:
            return fn(*args)
        _WATCHDOG.arm(limit, lambda: f"policy {name} at t={now:g}: handling an event took longer than {limit:g} s "
                                     "(decision timeout)")
        try:
            return fn(*args)
        finally:
            if _WATCHDOG.disarm():
                raise DecisionTimeout
    except DecisionTimeout:
        raise DecisionTimedOut(f"policy {name} at t={now:g}: handling an event took longer than {limit:g} s "
                             "(decision timeout): the policy is stuck or too slow") from None
    except SystemExit as exc:
        raise exit_fault(name, now, exc) from None
    except BaseException as exc:
        if not is_policy_error(exc):
            raise
        raise policy_fault(name, now, exc) from None
    finally:
        os._exit = posix._exit = exit_
        if os.getpid() != pid:          # a copy the policy forked came back here: it must not run the simulation
            _EXIT(0)


def is_policy_error(exc: BaseException) -> bool:
    """True for an exception a policy's code raised that the run reports as the policy's fault: anything but
    this project's own errors (bad input, the peer's protocol errors, a signal, a time limit), an interruption
    from the keyboard and ``sys.exit`` (`exit_fault`). A BaseException (GeneratorExit, ``raise
    BaseException``) is the policy's too."""
    from .batsim.loop import BatsimDied
    from .errors import InputError
    from .signals import Interrupted
    ours = (InputError, ProtocolError, BatsimDied, TimedOut, Interrupted, KeyboardInterrupt, SystemExit,
            DecisionTimeout)
    return not isinstance(exc, ours)


def policy_fault(name: str, now: float, exc: BaseException) -> SchedulerFault:
    """The one-line `SchedulerFault` of a policy `name` whose code raised `exc` at time `now` (`is_policy_error`),
    naming the function of the policy's file that raised it (the innermost frame outside this package)."""
    from .jsonvalues import excerpt
    frame = user_frame(exc)
    where = f" in {frame[0]} (line {frame[1]} of {frame[2]})" if frame else ""
    msg = " ".join(str(exc).split())
    return SchedulerFault(f"policy {name} at t={now:g}: {type(exc).__name__}: {excerpt(msg, 300)}{where}")


def user_frame(exc: BaseException) -> tuple[str, int, str] | None:
    """(function, line, file) of the innermost frame of `exc`'s traceback outside this package: the user's code
    (a policy) that raised it; None if only this package's code did."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    found, tb = None, exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if not os.path.abspath(code.co_filename).startswith(package) and not code.co_filename.startswith("<frozen"):
            found = (code.co_name, tb.tb_lineno, code.co_filename)
        tb = tb.tb_next
    return found


class DecisionTimeout(BaseException):
    """Raised asynchronously in the deciding thread by `Watchdog` when a decision outlives its limit
    (a BaseException: a policy's ``except Exception`` does not swallow it)."""


def _set_async_exc(thread_id: int, exc) -> None:
    """Raise `exc` (a class) in thread `thread_id` at its next Python instruction; None clears it."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id),
                                               ctypes.py_object(exc) if exc is not None else None)


class Watchdog:
    """One daemon thread that raises `DecisionTimeout` in the armed thread once its deadline passes.

    `arm(limit, what, status)` (in the thread to watch) / `disarm()`: cheap (a lock, no thread per decision);
    the watcher wakes every `period` s. A decision stuck in C code is interrupted when it returns to Python;
    one that has not returned `STUCK_GRACE` s after its deadline (a C-level sleep, a blocking call) is
    ended by the watcher itself: the handler set by `on_stuck` (the run's: write what it can) is called with
    the line `what`, then the process exits with `status`.
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
        self._what, self._status, self._ended = "", 1, False

    def arm(self, limit: float, what: str | Callable[[], str] = "a decision outlived its limit",
            status: int = EXIT_TIMEOUT) -> None:
        with self._lock:
            self._target = threading.get_ident()
            self._deadline = time.monotonic() + limit
            self._fired = False
            self._what, self._status = what, status
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
            stuck = None
            with self._lock:
                now = time.monotonic()
                if self._target is not None and not self._fired and now > self._deadline:
                    self._fired = True
                    _set_async_exc(self._target, DecisionTimeout)
                elif (self._target is not None and self._fired and not self._ended
                      and now > self._deadline + STUCK_GRACE):
                    self._ended = True
                    stuck = (self._what, self._status)
            if stuck is not None:
                _end_stuck(*stuck)


#: [s] how long past its deadline a watched call may stay in code that never returns to Python before the
#: watchdog ends the process (`Watchdog`)
STUCK_GRACE = 5.0
_EXIT = os._exit            # the real one (`refused_exit` stands in for it while the policy's hooks run)
_ON_STUCK: list[Callable[[str], None]] = []


def on_stuck(handler: Callable[[str], None] | None) -> None:
    """Set (None: clear) what the watchdog calls, in its own thread, before it ends a process whose watched
    call is stuck: `handler(line)` writes the run's outputs and reports `line` (`runner`, `colocated`)."""
    _ON_STUCK[:] = [handler] if handler is not None else []


def _end_stuck(what, status: int) -> None:
    line = f"{what() if callable(what) else what}; stuck in code that does not return to Python, stopped {STUCK_GRACE:g} s later"
    try:
        for handler in _ON_STUCK:
            handler(line)
        print(f"burstbuffer: {line}", file=sys.stderr, flush=True)
    finally:
        _EXIT(status)


@contextlib.contextmanager
def bounded(limit: float | None, what: str, status: int = EXIT_TIMEOUT):
    """Run the block under the watchdog: DecisionTimeout (raised in the block) after `limit` s (None: no
    limit), the process ended with the line `what` and `status` if the block is stuck in C code
    (`Watchdog`). The caller turns DecisionTimeout into its own error (e.g. an InputError for a policy whose
    import does not finish)."""
    if limit is None:
        yield
        return
    _WATCHDOG.arm(limit, what, status)
    try:
        yield
    finally:
        if _WATCHDOG.disarm():
            raise DecisionTimeout


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

    def fault(self, now: float, what: str, kind: type[SchedulerFault] = SchedulerFault) -> SchedulerFault:
        return kind(f"policy {self.name} at t={now:g}: {what}")

    def decide(self, sched, now: float, records: dict) -> list:
        """`sched.decide(now)` as a list, each decision checked against the BB capacity (a decision of a
        job already holding BB, a Start after its StageIn, replaces its holding). SchedulerFault if the
        policy raises, outlives `decision_timeout`, returns anything but `Start`/`StageIn`/`StageOut` decisions
        of jobs of `records`, or over-fills a BB node."""
        limit = self.decision_timeout
        try:
            if limit is not None:
                _WATCHDOG.arm(limit, lambda: str(self.fault(now, f"a decision took longer than {limit:g} s "
                                                                 "(decision timeout)")))
            try:
                decisions = list(sched.decide(now))
            finally:
                if limit is not None and _WATCHDOG.disarm():
                    raise DecisionTimeout
        except DecisionTimeout:
            raise self.fault(now, f"a decision took longer than {limit:g} s (decision timeout): the policy "
                                  "is stuck or too slow", DecisionTimedOut) from None
        except BaseException as exc:   # noqa: BLE001 - the policy's own bug: one line, outputs kept
            if not is_policy_error(exc):
                raise
            msg = " ".join(str(exc).split())
            raise self.fault(now, f"decide raised {type(exc).__name__}: {msg[:300]}") from None
        from .jsonvalues import excerpt
        from .schedulers.base import StageIn, StageOut, Start
        for d in decisions:
            if not isinstance(d, (Start, StageIn, StageOut)):
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
