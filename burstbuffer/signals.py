"""Signals that end a run cleanly: SIGINT, SIGTERM and SIGHUP become an `Interrupted` exception.

`burstbuffer run` and `burstbuffer serve` turn these signals into an exception raised in the main thread,
so that every `finally` on the way runs: the simulator child is stopped, jobs.csv is written with every job
so far (unfinished ones marked), and the summary is printed. The command then exits with 128 + the signal
number (130, 143, 129), as a shell reports a process killed by that signal.
"""
from __future__ import annotations

import contextlib
import ctypes
import signal
from collections.abc import Iterator

#: The signals `interruptible` turns into `Interrupted`.
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(BaseException):
    """A signal of `SIGNALS` arrived (BaseException: nothing on the way may swallow it).

    `signum`: the signal's number; `status`: the exit status to report (128 + signum); `result`: set by
    whoever wrote the outputs on the way up (e.g. `runner.run` sets its partial `RunResult`), else None.
    """

    def __init__(self, signum: int):
        self.signum = signum
        self.status = 128 + signum
        self.result = None
        super().__init__(signal.Signals(signum).name)

    def __reduce__(self):   # pickled by its number (a run's child reports it to the parent)
        return (type(self), (self.signum,))


def _raise_interrupted(signum, frame) -> None:
    for s in SIGNALS:   # a second signal must not cut the writing of the outputs short
        signal.signal(s, signal.SIG_IGN)
    if _Deferral.depth:   # within `deferred`: raised at its end
        _Deferral.pending = signum
        return
    raise Interrupted(signum)


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Within the block, SIGINT/SIGTERM/SIGHUP raise `Interrupted` in the main thread; the previous
    handlers are restored afterwards. Outside the main thread (where Python cannot set handlers) the
    block runs with the signals as they are."""
    try:
        previous = {s: signal.signal(s, _raise_interrupted) for s in SIGNALS}
    except ValueError:   # not the main thread
        previous = {}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


class _Deferral:
    """`deferred`'s state: blocks open, and the signal that arrived within them (None: none)."""

    depth = 0
    pending: int | None = None


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Within the block, a signal that `interruptible` turns into `Interrupted` is held and raised when the
    block ends: for a step that must not be cut in the middle (starting a cluster whose half-started
    processes a clean-up could not reach, then its clean-up). Held by the handler, not by a signal mask: a
    mask is per thread, inherited by the processes started within, and a signal goes to any thread that does
    not block it. Nested blocks raise at the end of the outermost; a block that raises drops the signal."""
    _Deferral.depth += 1
    try:
        yield
    finally:
        _Deferral.depth -= 1
    if _Deferral.depth == 0 and _Deferral.pending is not None:
        signum, _Deferral.pending = _Deferral.pending, None
        raise Interrupted(signum)


_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """For `subprocess.Popen(preexec_fn=...)`: the child receives SIGTERM when its parent dies, even by
    SIGKILL (Linux prctl PR_SET_PDEATHSIG); a no-op where prctl is not available."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        pass
