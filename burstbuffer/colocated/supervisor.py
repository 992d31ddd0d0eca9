"""The parent's side of the report pipe (`burstbuffer.colocated`): frames handled, the child's last rows
written when it could not write them (`Supervisor`)."""
from __future__ import annotations

import logging
import os
import pickle
import signal

from .. import pipelink
from ..batsim.loop import BatsimDied, SimulatorTimedOut
from ..signals import SIGNALS
from .frames import Outcome


class Supervisor:
    """The parent's side of the report pipe `fd` (`burstbuffer.colocated`): `progress(done, total)` is called for each
    progress frame, each record is logged under the ``burstbuffer`` logger. The frames read but not handled yet
    are kept between two calls of `wait` (one after an interruption, to drain the pipe)."""

    def __init__(self, fd: int, progress):
        self.fd, self.progress = fd, progress
        self.columns: list[str] | None = None          # the child's last ``jobs`` frames (`write_seen`)
        self.rows: dict[tuple, dict] = {}
        self.info: dict | None = None
        self.sizes: tuple = (None, None)
        self.stuck: str | None = None
        self.seen_written = False
        self.buffer = bytearray()
        self.ready = pipelink.readable(fd)
        self.log = logging.getLogger("burstbuffer")

    def _handle(self) -> tuple[bool, Outcome | None]:
        """Handle the complete frames of the buffer: (True, outcome) at the end frame, else (False, None)."""
        buf = self.buffer
        while len(buf) >= 4:
            size = int.from_bytes(buf[:4], "little")
            if len(buf) < 4 + size:
                break
            frame = bytes(buf[4:4 + size])
            del buf[:4 + size]
            try:
                kind, *rest = pickle.loads(frame)
            except Exception as exc:  # noqa: BLE001 (e.g. an error the child could pickle but not this process)
                raise BatsimDied(f"unreadable report from the simulation: {type(exc).__name__}: {exc}") from None
            if kind == "end":
                return True, rest[0]
            if kind == "jobs":
                self.columns = rest[0]
                self.rows.update(rest[1])
                self.info = rest[2] or self.info
                self.sizes = rest[3]
            elif kind == "stuck":
                self.stuck = rest[0]
            elif kind == "progress":
                self.progress(*rest)
            elif kind == "log":
                self.log.log(rest[0], "%s", rest[1])
        return False, None

    def wait(self, timeout: float | None, *, draining: bool = False) -> Outcome | None:
        """Handle frames until the child's Outcome, returned; None if the pipe ends without one (the child
        died). Raises BatsimDied after `timeout` s (None: no limit) without a frame: "no message from the
        simulator". SIGINT, SIGTERM and SIGHUP are held while frames are read and handled, so that the
        `Interrupted` they raise never cuts one. `draining`: after an interruption, the frames up to the end,
        and None (not BatsimDied) after `timeout` s."""
        while True:
            held = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
            try:
                done, outcome = self._handle()
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
            if done:
                return outcome
            if not self.ready(timeout):
                if draining:
                    return None
                raise SimulatorTimedOut(f"no message from the simulator for {timeout:g} s")
            held = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
            try:
                chunk = os.read(self.fd, 1 << 16)
                self.buffer += chunk
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
            if not chunk:
                return None


    def write_seen(self, output) -> bool:
        """jobs.csv (the rows last reported, in submission order, unfinished jobs marked RUNNING or PENDING),
        run.json (once the platform was reported) and bb_occupancy.csv in the folder `output`, for a child that
        could not write them. False if the child reported no job (nothing is written then). Once."""
        if self.seen_written or self.columns is None:
            return self.seen_written
        import csv  # noqa: PLC0415
        import io  # noqa: PLC0415
        from pathlib import Path  # noqa: PLC0415

        from ..fileio import atomic_write_text  # noqa: PLC0415
        from ..metrics.runinfo import write_run_json  # noqa: PLC0415
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=self.columns)
        w.writeheader()
        w.writerows(self.rows[k] for k in sorted(self.rows))
        atomic_write_text(Path(output) / "jobs.csv", buf.getvalue())
        if self.info is not None:
            write_run_json(Path(output) / "run.json", None, "", "", info=self.info)
            from ..session import write_tables  # noqa: PLC0415
            write_tables(Path(output))
        self.seen_written = True
        return True
