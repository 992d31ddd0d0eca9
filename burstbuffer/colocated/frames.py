"""What the child of `burstbuffer run` and its parent share (`burstbuffer.colocated`): the periods of the
child's reports, its last report (`Outcome`), the page of the jobs being started (`StartedPage`)."""
from __future__ import annotations

import mmap
import os
import pickle
from dataclasses import dataclass

from ..batsim.loop import BatsimDied

#: the least time between two progress frames [s]
PROGRESS_PERIOD = 0.1
#: the most time between two frames while messages flow [s]
ALIVE_PERIOD = 1.0
#: the size of the shared page with the jobs being started [bytes]
PAGE = 4096
#: the most time between two reports of every job's row while messages flow [s]
MIRROR_PERIOD = 0.5
#: the most time between a job's submission, start or end and its row's report to the parent [s]
REPORT_PERIOD = 0.01


@dataclass
class Outcome:
    """What the child reports last: `messages` answered, `sizes` (compute nodes, total BB [bytes]) of the platform
    (None, None before SIMULATION_BEGINS; the parent summarises jobs.csv with them), `error` (the exception that
    ended the simulation early, None when it ended), `scheduler_cpu` [s] (the CPU time spent answering messages:
    the scheduler's own cost), `written` (jobs.csv was written)."""
    messages: int = 0
    sizes: tuple = (None, None)
    error: BaseException | None = None
    scheduler_cpu: float = 0.0
    written: bool = False


class StartedPage:
    """The job ids of the scheduler's last EXECUTE_JOBs, on a page of shared memory (a memfd): the child
    writes it after each answer that starts jobs, the parent reads it after a SimGrid abort (`read`)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.map: mmap.mmap | None = None

    @classmethod
    def create(cls) -> StartedPage:
        fd = os.memfd_create("burstbuffer-started", 0)
        os.ftruncate(fd, PAGE)
        return cls(fd)

    def write(self, ids: list[str]) -> None:
        if self.map is None:
            self.map = mmap.mmap(self.fd, PAGE)
        data = ", ".join(ids).encode()
        if len(data) > PAGE - 4:                # the ids that fit whole (none if the first does not)
            data = data[:max(0, data.rfind(b", ", 0, PAGE - 4))]
        self.map[:4 + len(data)] = len(data).to_bytes(4, "little") + data

    def read(self) -> list[str]:
        raw = os.pread(self.fd, PAGE, 0)
        n = int.from_bytes(raw[:4], "little")
        return raw[4:4 + n].decode(errors="replace").split(", ") if n else []

    def close(self) -> None:
        if self.map is not None:
            self.map.close()
        os.close(self.fd)


def portable(exc: BaseException) -> BaseException:
    """`exc` if it survives pickling, else a BatsimDied naming it (the parent re-raises what it receives)."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001
        return BatsimDied(f"{type(exc).__name__}: {exc}")
