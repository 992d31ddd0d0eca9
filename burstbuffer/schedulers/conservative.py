"""`conservative-bb`: conservative backfilling with processor + burst-buffer reservations.

Conservative backfilling (docs/policies.md; the ICS 632 "Job Scheduling" lecture; batsched's `conservative_bf`):
*every* queued job holds a reservation, and a job may start ahead of its reservation only if that
delays no other reservation. Here a reservation holds processors *and* BB bytes (as in fcfs-bb,
docs/policies.md), for the job's whole walltime.

Each `decide(now)`:
1. the reservations made before are put back in the profile (those still valid: start ≥ now and
   resources still free — always the case when every job's runtime ≤ its walltime);
2. compression, in submission order: each queued job drops its own reservation and takes the
   earliest fit (processors + BB) given the running jobs and *all other* reservations. Its old slot
   is still free (every other reservation was made around it), so the new start is never later;
   a job without reservation (just submitted, or whose reservation became invalid) is placed
   around the reservations of everyone else — it delays nobody;
3. the jobs whose reservation starts now are started on their reserved processors and BB nodes.

Hence, when runtimes do not exceed walltimes, a job starts no later than its first reservation
(tests/test_plan.py checks it). Reservations stay in the profile between calls; a job that cannot
be placed at all (behind a hold without end) gets none until it can.

Cost per decision: one `release` + `earliest_fit` + `reserve` per queued job.

Under a job model that separates the stagings (three-phase, `holds`) a reservation holds the nodes over the
running phase and the BB over the stage-in and stage-out too (the job's `holds.HoldShape`); a job whose
stage-in can start now gets its `StageIn` during the compression. The reservations are out of the profile
between decisions (the staged jobs' holds move then).
"""
from __future__ import annotations

from ..platforms.model import Platform
from .base import StageIn, Start
from .profile_scheduler import QUEUE_OPTIONS, ProfileScheduler, Reservation
from .profile_scheduler.book import PlannedHold

__all__ = ["ConservativeBB", "PlannedHold"]


class ConservativeBB(ProfileScheduler):
    """`conservative-bb` (conservative backfilling with BB reservations; docs/policies.md).

    Args: as `ProfileScheduler` (platform, seed, period, overdue_grace, order, queues,
    order_params, staging, staging_bandwidth). Compression and starts follow the queue order (default:
    submission order); a job whose queue is at its share of the machine gets no reservation in that decision.
    The reservations persist in the scheduler's reservation book (`profile_scheduler.book`).

    After `decide`, ``last_plan`` maps every job queued at that call to its reservation start [s]
    (now for the jobs started; absent for a job that cannot be placed), and `reservations` gives
    the current reservations.
    """

    name = "conservative-bb"
    declared_options = ProfileScheduler.declared_options + QUEUE_OPTIONS
    default_staging = "bb-first"
    keep_staged_nodes = True

    def __init__(self, platform: Platform, *, seed: int = 0, **options):
        super().__init__(platform, seed=seed, **options)   # `ProfileScheduler`'s options, at its defaults
        self.last_plan: dict[str, float] | None = None

    @property
    def reservations(self) -> dict[str, Reservation]:
        """Current reservations of the queued jobs: job id → `Reservation`."""
        return self._book.reservations

    def decide(self, now: float) -> list[Start | StageIn]:
        self.last_plan = None
        return super().decide(now)

    def _schedule(self, now: float) -> list[Start | StageIn]:
        queue = self._ordered(now)
        book, profile = self._book, self.profile
        kept = book.restore(profile, queue, now)
        out: list[Start | StageIn] = []
        plan_starts: dict[str, float] = {}
        for job in queue:                                       # compression, queue order
            prev = kept.pop(job.id, None)
            if prev is not None:
                book.take(profile, prev)
            if not self._plain and not self._eligible(job):
                continue
            fit = self.profile.earliest_fit(job, now, shape=self.shape(job))
            if fit is None:
                continue
            plan_starts[job.id] = fit.start
            if fit.start <= now + self.shape(job).stage_in:     # its stage-in (or run) starts now
                out.append(self._start(job, fit, now))
                continue
            p = book.plan(profile, job, fit, self.shape(job), now, prev)
            if self.staged:
                self._staging.wake_at(p.b_start)
                if self.last_reservation is None:
                    self.last_reservation = Reservation(job.id, fit.start, p.n_end, fit.procs, p.bbs, p.made_at)
        self.last_plan = plan_starts
        return out
