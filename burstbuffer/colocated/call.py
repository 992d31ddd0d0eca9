"""The in-simulator link: the simulator's messages answered by a function call (`CallTransport`), in the
child of `burstbuffer run` (`burstbuffer.colocated`)."""
from __future__ import annotations

import signal
import time

from ..batsim.loop import Exchange, run_timed_out
from ..signals import SIGNALS, Interrupted
from .frames import StartedPage
from .reporting import JobsMirror, Reporter


class CallTransport:
    """The simulator's link to a scheduler in its own process (the contract of `simulator.transport.connect`:
    `request(text, n)` returns the answer or raises SimulationError).

    Each message is answered by an `Exchange` over `session`'s application, checked with a ConformanceChecker
    if `check_protocol`. Before each message, a pending signal of `SIGNALS` or a passed `deadline`
    (time.monotonic(), None: none) ends the simulation; so does anything the scheduler raises. The cause is
    kept in `failure` and the simulator is given a SimulationError, so that it stops cleanly.
    """

    def __init__(self, session, *, check_protocol: bool, deadline: float | None, run_timeout: float | None,
                 reporter: Reporter, page: StartedPage | None, mirror: JobsMirror | None = None):
        from ..simulator.state import SimulationError  # noqa: PLC0415

        self.SimulationError = SimulationError
        self.app = session.app
        self.app.strict_peer = check_protocol
        self.exchange = Exchange(self.app, strict=check_protocol)
        self.checker = None
        if check_protocol:
            from ..batsim.conformance import ConformanceChecker  # noqa: PLC0415
            self.checker = ConformanceChecker()
        self.deadline, self.run_timeout = deadline, run_timeout
        self.reporter, self.page, self.mirror = reporter, page, mirror
        self.failure: BaseException | None = None
        self.cpu = 0.0
        self._started = self.app.last_started
        self._signals = set(SIGNALS)

    def _stop(self, failure: BaseException, why: str):
        self.failure = failure
        return self.SimulationError(why)

    def request(self, text: str, n: int) -> str:
        if self.failure is not None:
            raise self.SimulationError("the scheduler has stopped")
        pending = signal.sigpending() & self._signals
        if pending:
            signum = min(pending)
            raise self._stop(Interrupted(signum), f"interrupted by {signal.Signals(signum).name}")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise self._stop(run_timed_out(self.run_timeout), "run timeout")
        t = time.thread_time()
        try:
            if self.checker is not None:
                self.checker.received(text.encode())
                answer = self.exchange.answer(text)
                self.checker.answered(answer)
            else:
                answer = self.exchange.answer(text)
        except BaseException as exc:  # noqa: BLE001 (anything the scheduler raises ends the run, reported)
            raise self._stop(exc, f"the scheduler failed: {type(exc).__name__}: {exc}") from None
        finally:
            self.cpu += time.thread_time() - t
        started = self.app.last_started
        if started is not self._started:
            self._started = started
            if self.page is not None:
                self.page.write(started)
        if self.mirror is not None:
            frame = self.mirror.frame()
            if frame is not None:
                self.reporter.send(*frame)
        self.reporter.tick()
        return answer.decode()

    def close(self) -> None:
        pass
