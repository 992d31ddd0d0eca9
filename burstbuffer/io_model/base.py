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

The shape of a job's holds (`burstbuffer.schedulers.holds.HoldShape`): `stages_separately` and
`hold_shape(job, bandwidth)` tell the policies whether a job holds its burst buffer alone before and after its
nodes (``three-phase``, docs/io-model.md §3) and for how long; the policies plan with that shape and never
with the model's name. Such a model also carries out a policy's `StageIn` (`stage_in`) and reports the phase
changes (`take_phase_events`); `JobModelBase` gives every hook its two-phase default.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..schedulers.holds import NO_STAGING, HoldShape, stage_estimate

if TYPE_CHECKING:  # imported for the annotations only
    from ..batsim.loop import Outbox
    from ..batsim.protocol import JobCompleted
    from ..platforms.model import Platform
    from ..schedulers.base import Job, StageIn, Start


@runtime_checkable
class JobModel(Protocol):
    """Interface of a job model (see the module docstring for the call order).

    Attributes:
        name: the model's registry name (e.g. ``"io-aware"``).
        uses_dynamic_jobs: True if the model registers sub-jobs, i.e. Batsim must run with
            ``--enable-dynamic-jobs --enable-profile-reuse``.
        stages_separately: True if a job may hold its BB alone before and after its nodes (a policy's
            `StageIn`, then its `Start`; the phase columns in jobs.csv).
    """

    name: str
    uses_dynamic_jobs: bool
    stages_separately: bool
    #: set by the app when the policy decides the stage-outs (`Scheduler.decides_stage_out`): a job that ended
    #: its computation reports "computed" and waits for `stage_out`
    stage_out_decided: bool

    def hold_shape(self, job: Job, bandwidth: float) -> HoldShape:
        """The shape of `job`'s holds (`holds.HoldShape`: stage-in and stage-out estimates [s] at `bandwidth`
        [B/s]); `holds.NO_STAGING` for a two-phase model."""

    def stage_in(self, decision: StageIn, now: float, out: Outbox) -> None:
        """Carry out a policy's `StageIn` at `now` [s] (a model that stages separately)."""

    def stage_out(self, decision, now: float, out: Outbox) -> tuple[str, str] | None:
        """Carry out a policy's `StageOut` at `now` [s] (a model that stages separately, `stage_out_decided`);
        (job id, final state) if the job ended at once, else None."""

    def take_phase_events(self) -> list[tuple[str, str]]:
        """The phase changes since the last call, in order: ("staged" | "computed" | "nodes-released", original
        job id)."""

    def cannot_carry(self, profile: dict) -> str | None:
        """None if the model can run a job of `profile` (its profile object), else the one-line reason it
        cannot: the app then rejects the job with that reason (jobs.csv), as a job that never fits."""

    def begin(self, platform: Platform, profiles: dict[str, dict[str, dict]]) -> None:
        """Called at SIMULATION_BEGINS with the platform view and the workloads' profiles
        ({workload name: {profile name: profile object}}). Raises InputError if the platform lacks
        what the model needs (e.g. a PFS storage host)."""

    def start(self, start: Start, now: float, out: Outbox) -> None:
        """Carry out the policy's decision `start` at time `now` [s]: append the Batsim requests to `out` (as
        decisions, `out.add`, or written as text, `out.add_text`: `burstbuffer.batsim.protocol.EventText`)."""

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


class JobModelBase:
    """The two-phase defaults of the `JobModel` hooks, for a model to subclass: no separate stagings
    (`holds.NO_STAGING`), no phase events, and a `StageIn` refused (ValueError naming the model)."""

    name = "?"
    uses_dynamic_jobs = False
    stages_separately = False
    stage_out_decided = False

    def hold_shape(self, job: Job, bandwidth: float) -> HoldShape:
        """`holds.NO_STAGING` (two-phase), or the three-phase estimate when `stages_separately`
        (`holds.stage_estimate` both ways)."""
        if not self.stages_separately:
            return NO_STAGING
        s = stage_estimate(job, bandwidth)
        return HoldShape(s, s) if s > 0 else NO_STAGING

    def cannot_carry(self, profile: dict) -> str | None:
        """None: the job runs its own profile, whatever its type, as Batsim runs it."""
        return None

    def stage_in(self, decision: StageIn, now: float, out: Outbox) -> None:
        raise ValueError(f"the {self.name} job model does not stage in apart from the job's nodes "
                         "(a StageIn needs the three-phase job model)")

    def stage_out(self, decision, now: float, out: Outbox) -> tuple[str, str] | None:
        raise ValueError(f"the {self.name} job model does not stage out apart from the job's nodes "
                         "(a StageOut needs the three-phase job model)")

    def take_phase_events(self) -> list[tuple[str, str]]:
        return []
