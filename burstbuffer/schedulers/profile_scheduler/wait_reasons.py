"""Why each queued job waits (docs/wait-reasons.md): the reason noted by the passes (`_note_wait`), else the one
the free counts give after the decision, for the whole queue at once (`_record_wait_reasons`,
`wait_table.QueueTable`). One of the four concerns of `ProfileScheduler` (the rule: the package docstring); the
state it reads (``_free0``, ``_noted``, ``limit_reasons``, ``_wait_table``) is set by `ProfileScheduler.__init__`."""
from __future__ import annotations

from ..base import Job
from ..placement import bb_room

__all__ = ["WaitReasons"]


class WaitReasons:
    """The wait reasons of a `ProfileScheduler` (module docstring)."""

    @property
    def wait_reasons(self) -> dict[str, str]:
        """Job id → reason (`burstbuffer.metrics.definitions.WAIT_REASONS`) of every job queued after the
        last `decide`, in submission order (docs/wait-reasons.md). A policy may assign its own map; the
        decision loop then reads it whole."""
        if self._wait_override is not None:
            return self._wait_override
        return self._wait_table.reasons()

    @wait_reasons.setter
    def wait_reasons(self, value: dict[str, str]) -> None:
        self._wait_override = value
        self.wait_reasons_changed = None

    def _record_wait_reasons(self, now: float) -> None:
        """Classify the jobs still queued (module docstring; docs/wait-reasons.md): the reason noted during
        the pass, else the one the free counts give after the decision (no reservation held), for the whole
        queue at once (`wait_table.QueueTable`); sets `wait_reasons_changed` to the jobs whose reason
        changed."""
        table = self._wait_table
        table.sync(self._queue)
        self._wait_override = None
        if not self._queue:
            self.wait_reasons_changed = {}
            return
        free0, bb0 = self._free0
        free1, bb1 = self.profile.free_counts_at(now)
        self.wait_reasons_changed = table.classify(free0, bb0, free1, bb1, self.blocked_reason,
                                                   self.limit_reasons, self._noted)

    def _note_wait(self, job: Job, now: float) -> None:
        """Note why `job`, looked at now by the pass and not started, waits (module docstring)."""
        r = self.limit_reasons.get(job.id) if self.limit_reasons else None
        if r is None and self.queues is not None and not self._eligible(job):
            r = "QOSGrpNodeLimit"      # its queue holds its share of the machine (Slurm's name for a group limit)
        if r is None:
            free0, bb0 = self._free0
            if job.res > free0:
                r = "Resources"
            elif job.bb > 0 and not bb_room(bb0, job.bb, job.res):
                r = "BurstBufferResources"
            else:
                free, bb = self.profile.free_counts_at(now)
                held = self._held
                if held is not None and held.start <= now:   # counts without the reservation
                    free += len(held.procs)
                    if held.bb_per_storage:
                        bb = tuple(b + held.bb_per_storage.get(i, 0) for i, b in zip(self.profile.bb_ids, bb))
                if job.res > free or (job.bb > 0 and not bb_room(bb, job.bb, job.res)):
                    r = "Priority"
                else:
                    r = "Reservation" if held is not None else self.blocked_reason
        self._noted[job.id] = r
