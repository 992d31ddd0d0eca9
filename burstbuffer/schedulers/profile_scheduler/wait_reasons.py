"""Why each queued job waits (docs/wait-reasons.md): the wait-reason log a `ProfileScheduler` owns
(``_waits``). During a decision the passes note the reason of each job they look at and do not start
(`WaitLog.reason` computes it, `WaitLog.note` keeps it; `ProfileScheduler._note_wait`); after the decision `WaitLog.record`
gives every other queued job the one the free counts give, for the whole queue at once
(`wait_table.QueueTable`)."""
from __future__ import annotations

from collections.abc import Callable, Mapping

from ..base import Job
from ..placement import bb_room
from ..wait_table import QueueTable

__all__ = ["WaitLog"]


class WaitLog:
    """The wait reasons of a scheduler's queue (module docstring).

    Attributes:
        limits: job id → a limit reason (e.g. "QOSMaxJobsPerUserLimit") a policy with queues sets for the jobs its
            limits hold back; it takes precedence over every other reason (`ProfileScheduler.limit_reasons`).
        changed: job id → reason of the jobs whose reason changed at the last `record` (new jobs included); None:
            read `reasons` whole.
        free0: (free processors, free bytes per BB node) now, before this decision's starts (`begin`).
        noted: the reasons noted during this decision's passes.
    """

    def __init__(self) -> None:
        self.table = QueueTable()
        self.limits: dict[str, str] = {}
        self.changed: dict[str, str] | None = None
        self.free0: tuple[int, tuple[int, ...]] = (0, ())
        self.noted: dict[str, str] = {}
        self._override: dict[str, str] | None = {}

    @property
    def reasons(self) -> dict[str, str]:
        """Job id → reason (`burstbuffer.metrics.definitions.WAIT_REASONS`) of every job queued after the last
        `record`, in submission order, or the map a policy set (`set_reasons`)."""
        if self._override is not None:
            return self._override
        return self.table.reasons()

    def set_reasons(self, value: dict[str, str]) -> None:
        """A policy's own map of the reasons: read whole by the decision loop until the next `record`."""
        self._override = value
        self.changed = None

    def begin(self, free0: tuple[int, tuple[int, ...]]) -> None:
        """A decision starts with the free counts `free0` at now: no reason noted yet."""
        self.free0 = free0
        self.noted = {}

    def reason(self, job: Job, profile, now: float, held, over_share: bool, blocked_reason: str) -> str:
        """Why `job`, looked at now by a pass and not started, waits (`burstbuffer.schedulers.profile_scheduler`'s
        docstring): its limit reason; QOSGrpNodeLimit if `over_share` (its queue holds its share of the machine,
        Slurm's name for a group limit); else Resources / BurstBufferResources from the free counts before the
        decision (`free0`); Priority if this decision's starts took what it needed (`profile`'s free counts at
        `now`, without the `held` reservation, a `Reservation` or None); else Reservation while a reservation is
        held, or the policy's `blocked_reason`."""
        r = self.limits.get(job.id) if self.limits else None
        if r is not None:
            return r
        if over_share:
            return "QOSGrpNodeLimit"
        free0, bb0 = self.free0
        if job.res > free0:
            return "Resources"
        if job.bb > 0 and not bb_room(bb0, job.bb, job.res):
            return "BurstBufferResources"
        free, bb = profile.free_counts_at(now)
        if held is not None and held.start <= now:   # counts without the reservation
            free += len(held.procs)
            if held.bb_per_storage:
                bb = tuple(b + held.bb_per_storage.get(i, 0) for i, b in zip(profile.bb_ids, bb))
        if job.res > free or (job.bb > 0 and not bb_room(bb, job.bb, job.res)):
            return "Priority"
        return "Reservation" if held is not None else blocked_reason

    def note(self, job: Job, reason: str) -> None:
        """`job`, looked at by a pass and not started, waits for `reason`."""
        self.noted[job.id] = reason

    def record(self, queue: Mapping[str, Job], free_now: Callable[[], tuple[int, tuple[int, ...]]],
               blocked_reason: str) -> None:
        """After the decision: the reason noted during the pass, else the one the free counts give (`free0`
        and ``free_now()``, called only when jobs are queued), for the whole `queue` at once; sets `changed` to
        the jobs whose reason changed."""
        table = self.table
        table.sync(queue)
        self._override = None
        if not queue:
            self.changed = {}
            return
        free0, bb0 = self.free0
        free1, bb1 = free_now()
        self.changed = table.classify(free0, bb0, free1, bb1, blocked_reason, self.limits, self.noted)
