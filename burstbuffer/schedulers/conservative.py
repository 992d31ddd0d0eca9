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

from dataclasses import dataclass

from procset import ProcSet

from ..platforms.model import Platform
from .base import Job, StageIn, Start
from .profile import Fit
from .profile_scheduler import QUEUE_OPTIONS, ProfileScheduler, Reservation

__all__ = ["ConservativeBB", "PlannedHold"]


@dataclass
class PlannedHold:
    """A queued job's reservation: nodes `fit.procs` over [fit.start, n_end), BB `bbs` over [b_start, b_end)
    (the same window for the two-phase hold shape); `made_at` [s] the decision that first made it."""

    fit: Fit
    n_end: float
    bbs: dict[int, int]
    b_start: float
    b_end: float
    made_at: float


class ConservativeBB(ProfileScheduler):
    """`conservative-bb` (conservative backfilling with BB reservations; docs/policies.md).

    Args: as `ProfileScheduler` (platform, seed, period, overdue_grace, order, queues,
    order_params, staging, staging_bandwidth). Compression and starts follow the queue order (default:
    submission order); a job whose queue is at its share of the machine gets no reservation in that decision.

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
        self._plans: dict[str, PlannedHold] = {}
        self.last_plan: dict[str, float] | None = None

    @property
    def reservations(self) -> dict[str, Reservation]:
        """Current reservations of the queued jobs: job id → `Reservation`."""
        return {jid: Reservation(jid, h.fit.start, h.n_end, h.fit.procs, dict(h.bbs), h.made_at)
                for jid, h in self._plans.items()}

    def job_ended(self, job_id: str, now: float) -> None:
        """As `ProfileScheduler.job_ended`; a queued job removed this way gives its reservation up."""
        self._plans.pop(job_id, None)
        super().job_ended(job_id, now)

    def decide(self, now: float) -> list[Start | StageIn]:
        """`ProfileScheduler.decide`; the reservations are then taken out of the profile until the next
        decision (after the wait reasons were read from it)."""
        self.last_plan = None
        out = super().decide(now)
        for p in self._plans.values():
            self._take(p)
        return out

    # ------------------------------------------------------------------ reservations
    def _put(self, p: PlannedHold) -> None:
        """Hold `p` in the profile (ValueError, profile unchanged, if its resources are taken)."""
        prof = self.profile
        if p.b_start == p.fit.start and p.b_end == p.n_end:
            prof.reserve(p.fit.start, p.n_end, p.fit.procs, p.bbs)
            return
        prof.begin()
        try:
            prof.reserve(p.fit.start, p.n_end, p.fit.procs, {})
            if p.bbs:
                prof.reserve(p.b_start, p.b_end, ProcSet(), p.bbs)
        except ValueError:
            prof.rollback()
            raise
        prof.commit()

    def _take(self, p: PlannedHold) -> None:
        prof = self.profile
        if p.b_start == p.fit.start and p.b_end == p.n_end:
            prof.release(p.fit.start, p.n_end, p.fit.procs, p.bbs)
            return
        prof.release(p.fit.start, p.n_end, p.fit.procs, {})
        if p.bbs:
            prof.release(p.b_start, p.b_end, ProcSet(), p.bbs)

    def _restore(self, queue: list[Job], now: float) -> dict[str, PlannedHold]:
        """Put the previous reservations of `queue`'s jobs back in the profile (those still valid: BB window
        from now on, resources still free); returns them. `_plans` is emptied."""
        old, self._plans = self._plans, {}
        kept: dict[str, PlannedHold] = {}
        for job in queue:
            p = old.get(job.id)
            if p is None or p.b_start < now:
                continue
            try:
                self._put(p)
            except ValueError:                                  # resources taken (a job overdue)
                continue
            kept[job.id] = p
        return kept

    def _plan(self, job: Job, fit: Fit, now: float, prev: PlannedHold | None, *, bb: bool = True) -> PlannedHold:
        """Reserve `fit` for `job` in its hold shape (BB too if `bb`) and record it in `_plans`."""
        shape = self.shape(job)
        end = fit.start + job.walltime
        bbs = fit.bb_per_storage(job.bb) if (bb and job.bb > 0) else {}
        s_in, s_out = (shape.stage_in, shape.stage_out) if bb else (0.0, 0.0)
        p = PlannedHold(fit, end, bbs, max(fit.start - s_in, now), end + s_out,
                        prev.made_at if (prev is not None and prev.fit == fit) else now)
        self._put(p)
        self._plans[job.id] = p
        return p

    def _schedule(self, now: float) -> list[Start | StageIn]:
        queue = self._ordered(now)
        kept = self._restore(queue, now)
        out: list[Start | StageIn] = []
        plan_starts: dict[str, float] = {}
        for job in queue:                                       # compression, queue order
            prev = kept.pop(job.id, None)
            if prev is not None:
                self._take(prev)
            if not self._plain and not self._eligible(job):
                continue
            fit = self.profile.earliest_fit(job, now, shape=self.shape(job))
            if fit is None:
                continue
            plan_starts[job.id] = fit.start
            if fit.start <= now + self.shape(job).stage_in:     # its stage-in (or run) starts now
                out.append(self._start(job, fit, now))
                continue
            p = self._plan(job, fit, now, prev)
            if self.staged:
                self._wake = p.b_start if self._wake is None else min(self._wake, p.b_start)
                if self.last_reservation is None:
                    self.last_reservation = Reservation(job.id, fit.start, p.n_end, fit.procs, p.bbs, p.made_at)
        self.last_plan = plan_starts
        return out
