"""Transports of the scheduler side (docs/protocol.md): every received message gets exactly one answer.

`ReplySocket` (and `MonitoredReplySocket`, for `serve`): a ZeroMQ REP socket that Batsim's REQ socket connects
to; the scheduler binds, so start it before Batsim. `PipeReplySocket`: the pipe pair of `burstbuffer run`
(`burstbuffer.pipelink`), whose simulator the scheduler starts itself.
"""
from __future__ import annotations

import time

import zmq

from .. import pipelink
from .loop import TransportTimeout  # noqa: F401  (re-exported: the transports' timeout, raised by recv)


class ReplySocket:
    """Scheduler side of protocol v4 over ZeroMQ.

    `endpoint` is a ZeroMQ address to bind, e.g. ``tcp://*:28000`` or ``ipc:///tmp/bb.sock``.
    `timeout` [s]: `recv` raises TransportTimeout when nothing arrives for that long (None = wait
    forever). The wait is the blocking receive's own (ZeroMQ's ``RCVTIMEO``): one call per message, where a
    poll before the receive made two.
    """

    def __init__(self, endpoint: str, timeout: float | None = None):
        self.endpoint = endpoint
        self.timeout = timeout
        self._ctx = zmq.Context.instance()
        self._sock = self._ctx.socket(zmq.REP)
        self._sock.setsockopt(zmq.LINGER, 0)
        if timeout is not None:
            self._sock.setsockopt(zmq.RCVTIMEO, max(int(timeout * 1000), 1))
        self._sock.bind(endpoint)

    @property
    def bound_endpoint(self) -> str:
        """The actual endpoint (useful with ``tcp://127.0.0.1:*``)."""
        return self._sock.getsockopt_string(zmq.LAST_ENDPOINT)

    def recv(self) -> bytes:
        try:
            return self._sock.recv()
        except zmq.Again:
            raise TransportTimeout(f"no message from Batsim on {self.endpoint} for {self.timeout:g} s") from None

    def send(self, raw: bytes) -> None:
        self._sock.send(raw)

    def close(self) -> None:
        self._sock.close(linger=0)

    def __enter__(self) -> "ReplySocket":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class PipeReplySocket:
    """Scheduler side over a pipe pair (`burstbuffer.pipelink`; `burstbuffer run`'s link to its simulator):
    messages read from `in_fd`, answers written to `out_fd`; the same `recv`/`send` as `ReplySocket`.

    `timeout` [s]: `recv` raises TransportTimeout when nothing arrives for that long (None = wait forever), and
    also once the simulator's pipe has ended (after waiting `timeout`, so that a caller polling its process
    does not spin): the caller then finds the process gone. An answer to a simulator that has gone is lost,
    as ZeroMQ loses it. `close` closes both descriptors.
    """

    def __init__(self, in_fd: int, out_fd: int, timeout: float | None = None):
        self.in_fd, self.out_fd, self.timeout = in_fd, out_fd, timeout
        self.readable = pipelink.readable(in_fd)
        self.ended = False

    def recv(self) -> bytes:
        if not self.ended:
            if self.readable(self.timeout):
                try:
                    raw = pipelink.read_frame(self.in_fd)
                except EOFError:
                    raw = None
                if raw is not None:
                    return raw
                self.ended = True
            else:
                raise TransportTimeout(f"no message from the simulator for {self.timeout:g} s")
        if self.timeout is not None:
            time.sleep(self.timeout)
        raise TransportTimeout("the simulator's pipe has ended")

    def send(self, raw: bytes) -> None:
        try:
            pipelink.write_frame(self.out_fd, raw)
        except BrokenPipeError:
            self.ended = True

    def close(self) -> None:
        pipelink.close(self.in_fd, self.out_fd)


class MonitoredReplySocket(ReplySocket):
    """A `ReplySocket` that also watches its peer's connection (ZeroMQ socket monitor).

    `peer_alive()` is False once Batsim's connection has been closed and not re-established for
    `grace` seconds (its process ended); True before any connection (waiting for Batsim).
    """

    def __init__(self, endpoint: str, timeout: float | None = None, grace: float = 1.0):
        super().__init__(endpoint, timeout)
        self.grace = grace
        self.peers = 0
        self.connected_once = False
        self._lost_at: float | None = None
        self._monitor = self._sock.get_monitor_socket(zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED)

    def _drain(self) -> None:
        from zmq.utils.monitor import recv_monitor_message
        while self._monitor.poll(0):
            ev = recv_monitor_message(self._monitor)["event"]
            if ev == zmq.EVENT_ACCEPTED:
                self.peers += 1
                self.connected_once = True
                self._lost_at = None
            elif ev == zmq.EVENT_DISCONNECTED:
                self.peers = max(self.peers - 1, 0)
                if self.peers == 0:
                    self._lost_at = time.monotonic()

    def peer_alive(self) -> bool:
        self._drain()
        return self._lost_at is None or time.monotonic() - self._lost_at < self.grace

    def close(self) -> None:
        try:
            self._sock.disable_monitor()
        except zmq.ZMQError:
            pass
        self._monitor.close(linger=0)
        super().close()
