"""The job-model interface: what the scheduler process (`burstbuffer.app.SchedulerApp`) asks of a job model.

A job model turns a policy's decision (`Start`: a job, its compute nodes and the burst-buffer node of
each) into Batsim requests, and maps Batsim's JOB_COMPLETED events back to the end of an original job.
The two models and their rules are described in ``docs/io-model.md`` (after Kopanski & Rzadca,
*Plan-based Job Scheduling for Supercomputers with Shared Burst Buffers*, Euro-Par 2021, §4.1).

Call order, driven by `SchedulerApp` (times in seconds, non-decreasing):

1. `begin(platform, profiles)` once, at SIMULATION_BEGINS;
2. for every message: `on_completed(ev, now, out)` for each JOB_COMPLETED in it, then `flush(now, out)`
   once, then `start(start, now, out)` for each job the policy starts;
3. `busy` tells whether a started job still has work in flight (the app sends
   ``registration_finished`` only when nothing is queued and the model is not busy).

Optional, for a model whose jobs hold BB before and after their nodes (``three-phase``, docs/io-model.md §3):
`stage_in(decision, now, out)` carries out a policy's `StageIn`, and `take_phase_events()` returns the
[("staged" | "nodes-released", job id)] since the last call; the app looks them up with ``getattr``, so
the two-phase models need neither.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # imported for the annotations only
    from ..batsim.loop import Outbox
    from ..batsim.protocol import JobCompleted
    from ..platforms.model import Platform
    from ..schedulers.base import Start


@runtime_checkable
class JobModel(Protocol):
    """Interface of a job model (see the module docstring for the call order).

    Attributes:
        name: the model's registry name (e.g. ``"io-aware"``).
        uses_dynamic_jobs: True if the model registers sub-jobs, i.e. Batsim must run with
            ``--enable-dynamic-jobs --enable-profile-reuse``.
    """

    name: str
    uses_dynamic_jobs: bool

    def begin(self, platform: Platform, profiles: dict[str, dict[str, dict]]) -> None:
        """Called at SIMULATION_BEGINS with the platform view and the workloads' profiles
        ({workload name: {profile name: profile object}}). Raises InputError if the platform lacks
        what the model needs (e.g. a PFS storage host)."""

    def start(self, start: Start, now: float, out: Outbox) -> None:
        """Carry out the policy's decision `start` at time `now` [s]: append the Batsim requests to `out`."""

    def on_completed(self, ev: JobCompleted, now: float, out: Outbox) -> tuple[str, str] | None:
        """Handle one JOB_COMPLETED at `now` [s] (it may append further requests to `out`). Returns
        (original job id, final state) when an original job ended, None otherwise (a sub-job
        finished, or the job is not one this model started)."""

    def flush(self, now: float, out: Outbox) -> None:
        """Called once per message, after its events: send what had to wait until every event of
        the message was seen (e.g. kills of sub-jobs)."""

    @property
    def busy(self) -> bool:
        """True while some started job has work in flight."""
