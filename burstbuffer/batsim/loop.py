"""The decision loop: receive a Batsim message, let a handler react to each event, answer once.

Ordering rules of protocol v4 (docs/protocol.md) are enforced here, once, for every handler:
- the answer's `now` = max(received `now`, last decision time);
- decision timestamps are non-decreasing and ≤ the answer's `now`;
- a CALL_ME_LATER is sent only if strictly later than the answer's `now` (else dropped: the
  handler is being called at that time anyway).
"""
from __future__ import annotations

import logging
import math
import time
from typing import Callable, Protocol

from ..errors import TimedOut
from .protocol import (CallMeLater, Decision, Event, EventText, ExecuteJob, ProtocolError, SimulationEnds, decision_of,
                       decode, encode)


class TransportTimeout(Exception):
    """A transport's `recv` saw nothing for its poll period (`run_loop` then checks the simulator and its limits);
    defined here, not beside the ZeroMQ socket, so that the loop imports no transport."""


class Outbox:
    """Decisions of one answer, with their timestamps.

    `now` is the received message's `now`; `add(d, at)` timestamps a decision at
    max(at, now, last timestamp) so timestamps never go backwards; `add_text(text, at)` does the same for a
    decision already written as text (`EventText`: a job model's sub-jobs). `started` lists the job ids of the
    answer's EXECUTE_JOBs, in order.
    """

    __slots__ = ("received_now", "items", "_last", "started", "_calls")

    def __init__(self, received_now: float):
        self.received_now = received_now
        self.items: list[tuple[float, Decision | EventText]] = []
        self._last = received_now
        self.started: list[str] = []
        self._calls = False                    # a CALL_ME_LATER was added (`finish` looks for them)

    def add(self, decision: Decision, at: float | None = None) -> None:
        ts = self._last if at is None or at < self._last else at
        self._last = ts
        self.items.append((ts, decision))
        if isinstance(decision, ExecuteJob):
            self.started.append(decision.job_id)
        elif isinstance(decision, CallMeLater):
            self._calls = True

    def add_text(self, text: EventText, at: float, started: str | None = None) -> None:
        """Add a decision written as text (`EventText`) at max(`at`, last timestamp); `started`: the job id it
        executes (an EXECUTE_JOB's), else None."""
        ts = self._last if at < self._last else at
        self._last = ts
        self.items.append((ts, text))
        if started is not None:
            self.started.append(started)

    @property
    def now(self) -> float:
        """The answer's `now`: max(received now, last decision time)."""
        return self._last

    def finish(self) -> list[tuple[float, Decision | EventText]]:
        """Items with CALL_ME_LATER not strictly in the future removed."""
        if not self._calls:
            return self.items
        now = self._last
        return [(ts, d) for ts, d in self.items if not (isinstance(d, CallMeLater) and d.at <= now)]

    def decisions(self) -> list[tuple[float, Decision]]:
        """`finish()` with every decision written as text read back as a decision object (`decision_of`): for a
        reader of decisions rather than of the answer's bytes."""
        return [(ts, decision_of(d) if type(d) is EventText else d) for ts, d in self.finish()]


class Handler(Protocol):
    """What the loop drives (the scheduler application)."""

    def on_event(self, timestamp: float, event: Event, out: Outbox) -> None: ...

    def after_events(self, now: float, out: Outbox) -> None:
        """Called once per message, after its events (not after SIMULATION_ENDS)."""


class BatsimDied(Exception):
    """The simulator stopped talking (timeout or dead process)."""


class SimulatorTimedOut(BatsimDied, TimedOut):
    """The simulator said nothing for the silence limit, or the run outlived its wall-clock limit (exit 124)."""


def run_timed_out(run_timeout: float) -> SimulatorTimedOut:
    """The error of a run that outlived its wall-clock limit `run_timeout` [s] (docs/reliability.md)."""
    return SimulatorTimedOut(f"the run took longer than its wall-clock limit of {run_timeout:g} s (run timeout)")


def peer_error(message: str, strict: bool) -> None:
    """A Batsim message breaks the protocol (time going backwards, an event for an unknown job or a job in
    the wrong state): ProtocolError if `strict` (``--check-protocol``), else a logged warning and go on."""
    if strict:
        raise ProtocolError(f"protocol error from Batsim: {message}")
    logging.getLogger("burstbuffer").warning("Batsim broke the protocol: %s", message)


class Exchange:
    """One answer per Batsim message, for `handler`: the protocol's ordering rules of the module docstring.

    `answer(raw)` decodes a message, lets the handler react to each event (then `after_events`, unless the
    message ends the simulation) and returns the encoded answer; `ended` is True once SIMULATION_ENDS was
    handled. A message whose `now` is earlier than the previous one's, or with an event timestamp after its
    `now`, goes to `peer_error` (ProtocolError if `strict`; else a warning, and the times are moved forward so
    that the handler never sees time go backwards). `run_loop` drives it over a transport; a caller that
    owns the other side's loop (a simulator in this process) calls `answer` itself.
    """

    __slots__ = ("handler", "strict", "n", "last_now", "ended")

    def __init__(self, handler: Handler, *, strict: bool = False):
        self.handler, self.strict = handler, strict
        self.n = 0                              # messages answered
        self.last_now = -math.inf
        self.ended = False

    def answer(self, raw: bytes | str) -> bytes:
        n, strict, last_now = self.n, self.strict, self.last_now
        now, events = decode(raw)
        if now < last_now:
            peer_error(f"message {n + 1}: now = {now!r} is earlier than the previous message's {last_now!r}", strict)
            now = last_now                     # lenient: time never goes backwards for the policy
        t = last_now
        for i, (ts, ev) in enumerate(events):
            if ts > now:
                peer_error(f"message {n + 1}: an event's timestamp {ts!r} is after now = {now!r}", strict)
                now = ts
            if ts < t:                         # before the previous event or message: lenient, moved forward
                events[i] = (t, ev)
            if ts > t:
                t = ts
        self.last_now = now
        out = Outbox(now)
        ended = False
        on_event = self.handler.on_event
        for ts, ev in events:
            on_event(ts, ev, out)
            if isinstance(ev, SimulationEnds):
                ended = True
        if not ended:
            self.handler.after_events(now, out)
        self.n = n + 1
        self.ended = ended
        return encode(out.now, out.finish())


def run_loop(transport, handler: Handler, *, alive: Callable[[], bool] | None = None,
             timeout: float | None = None, on_message: Callable[[bytes, bytes], None] | None = None,
             strict: bool = False, run_timeout: float | None = None) -> int:
    """Serve Batsim until SIMULATION_ENDS; return the number of messages exchanged (each answered by an
    `Exchange`, whose docstring says how a message breaking the protocol is handled).

    `transport` has `recv() -> bytes` (may raise TransportTimeout after its own poll period) and
    `send(bytes)`. `alive()` is checked whenever the transport times out: if it returns False,
    BatsimDied is raised. `timeout` [s]: total silence after which BatsimDied is raised.
    `on_message(received, answer)` sees every exchange (used by conformance checks and traces).
    `run_timeout` [s]: wall-clock limit of the whole loop, checked between messages (BatsimDied).
    """
    exchange = Exchange(handler, strict=strict)
    answer = exchange.answer
    monotonic = time.monotonic
    recv, send = transport.recv, transport.send
    silent_since = monotonic()
    deadline = None if run_timeout is None else silent_since + run_timeout

    def over_time() -> None:
        if deadline is not None and time.monotonic() > deadline:
            raise run_timed_out(run_timeout)

    while True:
        try:
            raw = recv()
        except TransportTimeout:
            if alive is not None and not alive():
                raise BatsimDied("the simulator process exited before SIMULATION_ENDS") from None
            if timeout is not None and time.monotonic() - silent_since > timeout:
                raise SimulatorTimedOut(f"no message from Batsim for {timeout:g} s") from None
            over_time()
            continue
        if deadline is not None:
            over_time()
        silent_since = monotonic()
        reply = answer(raw)
        send(reply)
        if on_message is not None:
            on_message(raw, reply)
        if exchange.ended:
            return exchange.n
