"""The simulator's ZeroMQ link to the scheduler: Batsim's REQ socket, one request at a time.

`connect(cfg)` returns a transport whose `request(text, n)` sends message `n` and returns the scheduler's
answer, or raises SimulationError: no answer within ``cfg.timeout`` s (None: no limit), the scheduler
disconnected — or silent past ZeroMQ's heartbeats, ``cfg.heartbeat_timeout`` s — for more than
``cfg.disconnect_grace`` s (its request is then lost: the answer can never come), or a ZeroMQ error. Its
socket: ZMQ_LINGER 0, heartbeats every sixth of ``cfg.heartbeat_timeout``, EVENT_DISCONNECTED monitored;
the answer is awaited in slices of 250 ms, Python's signal handlers run between them.

Three implementations of that one contract. `PipeTransport`, when ``cfg.socket`` is a pipe pair
(``fd://OUT,IN``, `burstbuffer.pipelink`: `burstbuffer run`'s link to its own scheduler; the scheduler is
gone when its pipe ends, so no heartbeat is needed). Otherwise, on ZeroMQ (docs/startup.md):
`CompiledTransport`, on libzmq's C API through a small compiled module (``native/simzmq.cpp``, built on
first use like the simulator's bridge; it spares the simulator's start pyzmq's Python package, about a
tenth of a one-job run), and `PyZmqTransport` on pyzmq, when that module cannot be built (no compiler or no
``zmq.h``; ``BURSTBUFFER_NATIVE=0``). A bad endpoint is InputError (``-s``, one line) under all three.
"""
from __future__ import annotations

import os
import time

from .. import pipelink
from ..errors import InputError
from .state import SimConfig, SimulationError

__all__ = ["CompiledTransport", "PipeTransport", "PyZmqTransport", "connect"]

#: the slice of a wait for an answer [ms]: disconnections and signals are looked at between slices
SLICE_MS = 250


def _no_answer(cfg: SimConfig) -> SimulationError:
    return SimulationError(f"no answer from the scheduler on {cfg.socket} within {cfg.timeout:g} s")


def _disconnected(cfg: SimConfig, n: int) -> SimulationError:
    return SimulationError(f"the scheduler on {cfg.socket} disconnected (or stopped answering ZeroMQ "
                           f"heartbeats) without answering message {n}")


def _zmq_error(cfg: SimConfig, what) -> SimulationError:
    return SimulationError(f"ZeroMQ error talking to {cfg.socket}: {what}")


class CompiledTransport:
    """The transport on libzmq's C API (``native/simzmq.cpp``'s Client)."""

    def __init__(self, cfg: SimConfig, module):
        self.cfg = cfg
        try:
            self.client = module.Client(cfg.socket, int(cfg.heartbeat_timeout * 1000))
        except ValueError as exc:
            raise InputError("-s", cfg.socket, f"ZeroMQ cannot connect there: {exc}") from None
        self.timeout = -1.0 if cfg.timeout is None else float(cfg.timeout)

    def request(self, text: str, n: int) -> str:
        status, answer = self.client.request(text, self.timeout, self.cfg.disconnect_grace)
        if status == 0:
            return answer.decode()
        if status == 1:
            raise _no_answer(self.cfg)
        if status == 2:
            raise _disconnected(self.cfg, n)
        raise _zmq_error(self.cfg, answer.decode(errors="replace"))

    def close(self) -> None:
        self.client.close()


class PipeTransport:
    """The transport on a pipe pair (`burstbuffer.pipelink`): messages written to `out_fd`, answers read
    from `in_fd`."""

    def __init__(self, cfg: SimConfig, out_fd: int, in_fd: int):
        self.cfg, self.out_fd, self.in_fd = cfg, out_fd, in_fd
        for fd in (out_fd, in_fd):
            try:
                os.fstat(fd)
            except OSError as exc:
                raise InputError("-s", cfg.socket, f"file descriptor {fd} is not open ({exc.strerror})") from None
        self.readable = pipelink.readable(in_fd)

    def request(self, text: str, n: int) -> str:
        try:
            pipelink.write_frame(self.out_fd, text.encode())
            if not self.readable(self.cfg.timeout):
                raise _no_answer(self.cfg)
            answer = pipelink.read_frame(self.in_fd)
        except (BrokenPipeError, EOFError):
            answer = None
        if answer is None:
            raise SimulationError(f"the scheduler on {self.cfg.socket} closed its pipe without answering "
                                  f"message {n}")
        return answer.decode()

    def close(self) -> None:
        pipelink.close(self.out_fd, self.in_fd)


class PyZmqTransport:
    """The transport on pyzmq (the fallback)."""

    def __init__(self, cfg: SimConfig):
        import zmq  # noqa: PLC0415

        self.cfg, self.zmq = cfg, zmq
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.REQ)
        self.sock.setsockopt(zmq.LINGER, 0)
        hb = int(cfg.heartbeat_timeout * 1000)
        self.sock.setsockopt(zmq.HEARTBEAT_IVL, max(1, hb // 6))
        self.sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, hb)
        self.monitor = self.sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        try:
            self.sock.connect(cfg.socket)
        except zmq.ZMQError as exc:
            self.close()
            raise InputError("-s", cfg.socket, f"ZeroMQ cannot connect there: {exc}") from None

    def request(self, text: str, n: int) -> str:
        zmq, sock, monitor, cfg = self.zmq, self.sock, self.monitor, self.cfg
        try:
            while monitor.poll(0):            # disconnections before this request do not concern it
                monitor.recv_multipart()
            sock.send_string(text)
            deadline = None if cfg.timeout is None else time.monotonic() + cfg.timeout
            lost_at = None
            while True:
                if sock.poll(SLICE_MS, zmq.POLLIN):
                    return sock.recv_string()
                while monitor.poll(0):
                    monitor.recv_multipart()
                    lost_at = lost_at or time.monotonic()
                now = time.monotonic()
                if lost_at is not None and now - lost_at > cfg.disconnect_grace:
                    raise _disconnected(cfg, n)
                if deadline is not None and now > deadline:
                    raise _no_answer(cfg)
        except zmq.ZMQError as exc:
            raise _zmq_error(cfg, exc) from None

    def close(self) -> None:
        zmq = self.zmq
        try:
            self.sock.disable_monitor()
        except zmq.ZMQError:
            pass
        self.monitor.close(0)
        self.sock.close(0)
        self.ctx.term()


def load_native():
    """The compiled module of `CompiledTransport` (``native/simzmq.cpp``, linked with libzmq; built on first
    use and cached like the simulator's bridge). Raises NativeUnavailable when it cannot be built (one
    line: why)."""
    from . import _bridge  # noqa: PLC0415

    return _bridge.load_extension("simzmq.cpp", "_bb_simzmq", libs=("-lzmq",))


def connect(cfg: SimConfig):
    """The transport to the scheduler at ``cfg.socket``: a pipe pair's for ``fd://OUT,IN``; else ZeroMQ's,
    the compiled one when its module can be built (or is), else pyzmq's. InputError on a bad endpoint."""
    from ..cbuild import NativeUnavailable  # noqa: PLC0415

    try:
        fds = pipelink.parse_endpoint(cfg.socket)
    except ValueError as exc:
        raise InputError("-s", cfg.socket, str(exc)) from None
    if fds is not None:
        return PipeTransport(cfg, *fds)
    from ..fileio import check_ipc_endpoint  # noqa: PLC0415
    check_ipc_endpoint(cfg.socket, "-s")

    try:
        module = load_native()
    except (NativeUnavailable, OSError, ImportError):
        return PyZmqTransport(cfg)
    return CompiledTransport(cfg, module)
