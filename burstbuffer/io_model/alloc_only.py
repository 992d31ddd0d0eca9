"""The "alloc-only" job model (docs/io-model.md §2): a started job simply runs its own Batsim profile
on its compute nodes; no I/O phase. Its BB space is held (in the scheduler's profile) for the
job's whole run.
"""
from __future__ import annotations

from ..batsim.loop import Outbox
from ..batsim.protocol import ExecuteJob, JobCompleted
from ..schedulers.base import Start
from .base import JobModelBase


class AllocOnlyModel(JobModelBase):
    """Job model "alloc-only" (implements `JobModel`, docs/io-model.md): turns a policy's `Start` into one
    EXECUTE_JOB of the original job.

    `on_completed` maps a JOB_COMPLETED back to (original job id, final state), or None if the
    event is not about a job this model started.
    """

    name = "alloc-only"
    uses_dynamic_jobs = False

    def __init__(self) -> None:
        self._running: set[str] = set()

    def begin(self, platform, profiles: dict[str, dict[str, dict]]) -> None:
        """Nothing to prepare: the job runs its own profile."""

    def flush(self, now: float, out: Outbox) -> None:
        """Nothing is ever deferred."""

    def start(self, start: Start, now: float, out: Outbox) -> None:
        self._running.add(start.job.id)
        out.add(ExecuteJob(start.job.id, start.procs), now)

    def on_completed(self, ev: JobCompleted, now: float, out: Outbox) -> tuple[str, str] | None:
        if ev.job_id not in self._running:
            return None
        self._running.discard(ev.job_id)
        return ev.job_id, ev.job_state

    @property
    def busy(self) -> bool:
        return bool(self._running)
