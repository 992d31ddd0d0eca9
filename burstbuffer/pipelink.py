"""Protocol messages over a pair of pipes: the link between `burstbuffer run`'s scheduler and its embedded simulator.

Both processes are on one machine and one the other's child, so the link needs none of ZeroMQ's machinery
(an I/O thread per process, which wakes three threads for every message and doubles the CPU that each message
costs each side, benchmarks/zmq_roundtrip.py): one pipe carries the simulator's messages, the other the
scheduler's answers, strictly in turn (request, answer, request ...), like Batsim's REQ and the scheduler's REP
socket. The simulator names them with the endpoint ``fd://OUT,IN``: the file descriptor it writes its
messages to, then the one it reads the answers from (`parse_endpoint`).

A message is a frame: its length (4 bytes, little-endian, unsigned), then its bytes. Since a side never
writes twice without reading, a pipe never holds more than one frame, and one ``read`` usually takes a whole
frame. Standard library only: both sides import it at start-up (docs/startup.md).
"""
from __future__ import annotations

import os
import select
import struct

__all__ = ["SCHEME", "parse_endpoint", "endpoint", "write_frame", "read_frame", "readable", "close"]

#: the endpoint scheme of a pipe pair (``fd://OUT,IN``)
SCHEME = "fd://"
_HEADER = struct.Struct("<I")
#: bytes asked of the first ``read`` of a frame: the header and, usually, the whole message
_FIRST_READ = 1 << 16


def endpoint(out_fd: int, in_fd: int) -> str:
    """The endpoint ``fd://OUT,IN`` of a simulator that writes to `out_fd` and reads from `in_fd`."""
    return f"{SCHEME}{out_fd},{in_fd}"


def parse_endpoint(text: str) -> tuple[int, int] | None:
    """(OUT, IN) of an ``fd://OUT,IN`` endpoint; None if `text` is not one. Raises ValueError (the reason) if it
    starts with ``fd://`` but does not name two file descriptors."""
    if not text.startswith(SCHEME):
        return None
    parts = text[len(SCHEME):].split(",")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ValueError("expected fd://OUT,IN with two file descriptor numbers")
    return int(parts[0]), int(parts[1])


def write_frame(fd: int, data: bytes) -> None:
    """Write `data` as one frame to `fd` (blocking). Raises BrokenPipeError when the reader has gone."""
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def readable(fd: int):
    """A function `wait(timeout)`: True once `fd` can be read (data or end of file), False after `timeout`
    seconds (None: no limit). Python's signal handlers run during the wait (PEP 475). Made once per link:
    the poll set it waits on is built here, not at every message."""
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    wait = poll.poll

    def ready(timeout: float | None) -> bool:
        return bool(wait(None if timeout is None else max(0, int(timeout * 1000))))

    return ready


def read_frame(fd: int) -> bytes | None:
    """The next frame's bytes from `fd` (blocking), or None at end of file (the writer has gone). Raises
    EOFError if the file ends inside a frame, ValueError if the pipe held more than this frame (its writer
    wrote twice without waiting for an answer: the link's rule is broken)."""
    chunk = os.read(fd, _FIRST_READ)
    if not chunk:
        return None
    while len(chunk) < 4:
        more = os.read(fd, 4 - len(chunk))
        if not more:
            raise EOFError("the pipe ended inside a frame's header")
        chunk += more
    (size,) = _HEADER.unpack_from(chunk)
    if len(chunk) >= size + 4:
        if len(chunk) > size + 4:
            raise ValueError(f"the pipe held more than one frame ({len(chunk) - size - 4} bytes after it)")
        return chunk[4:]
    parts = [chunk[4:]]
    left = size - (len(chunk) - 4)
    while left > 0:
        more = os.read(fd, min(left, 1 << 20))
        if not more:
            raise EOFError(f"the pipe ended inside a frame ({left} of {size} bytes missing)")
        parts.append(more)
        left -= len(more)
    return b"".join(parts)


def close(*fds: int) -> None:
    """Close each of `fds`, ignoring those already closed (a link closed twice)."""
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
