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
"""
from __future__ import annotations

from dataclasses import dataclass

from ..platforms.model import Platform
from .base import Start
from .profile import Fit
from .profiled import ProfileScheduler, Reservation

__all__ = ["ConservativeBB"]


@dataclass
class _Held:
    fit: Fit
    end: float
    bbs: dict[int, int]
    made_at: float


class ConservativeBB(ProfileScheduler):
    """`conservative-bb` (conservative backfilling with BB reservations; docs/policies.md).

    Args: as `ProfileScheduler` (platform, seed, period, overdue_grace, order, queues,
    order_params). Compression and starts follow the queue order (default: submission order); a
    job whose queue is at its share of the machine gets no reservation in that decision.

    After `decide`, ``last_plan`` maps every job queued at that call to its reservation start [s]
    (now for the jobs started; absent for a job that cannot be placed), and `reservations` gives
    the current reservations.
    """

    name = "conservative-bb"

    def __init__(self, platform: Platform, *, seed: int = 0, period: float | None = None,
                 overdue_grace: float = 1.0, staging: str = "bb-first", staging_bandwidth: float = 5e9,
                 **order_options):
        super().__init__(platform, seed=seed, period=period, overdue_grace=overdue_grace, **order_options)
        self._resv: dict[str, _Held] = {}
        self.last_plan: dict[str, float] | None = None
        from .staged import check_staging
        check_staging(staging, staging_bandwidth)
        self.staging, self.staging_bandwidth = staging, staging_bandwidth

    def for_job_model(self, model: str):
        """On ``three-phase`` (unless ``staging="with-nodes"``): conservative backfilling planning BB over the
        stagings and nodes over the running phase (`burstbuffer.schedulers.staged`; docs/policies.md)."""
        from .staged import staged_variant
        return staged_variant(self, model, mode="conservative", reserve_bb=True, sjf=False,
                              unsupported="queues" if self.queues is not None else None)

    @property
    def reservations(self) -> dict[str, Reservation]:
        """Current reservations of the queued jobs: job id → `Reservation`."""
        return {jid: Reservation(jid, h.fit.start, h.end, h.fit.procs, dict(h.bbs), h.made_at)
                for jid, h in self._resv.items()}

    def job_ended(self, job_id: str, now: float) -> None:
        """As `ProfileScheduler.job_ended`; a queued job removed this way gives its reservation back."""
        h = self._resv.pop(job_id, None)
        if h is not None:
            self.profile.release(h.fit.start, h.end, h.fit.procs, h.bbs)
        super().job_ended(job_id, now)

    def decide(self, now: float) -> list[Start]:
        """Step 1 takes the reservations out of the profile before time moves on (a job running past
        its walltime has its hold extended first), then `ProfileScheduler.decide`."""
        self._ensure_profile(now)
        for h in self._resv.values():
            self.profile.release(h.fit.start, h.end, h.fit.procs, h.bbs)
        self.last_plan = None
        return super().decide(now)

    def _schedule(self, now: float) -> list[Start]:
        prof = self.profile
        queue = self._ordered(now)
        old, self._resv = self._resv, {}
        kept: dict[str, _Held] = {}
        starting: dict[str, int] = {}                           # per queue: processors starting now
        for job in queue:                                       # 1. previous reservations back
            h = old.get(job.id)
            if h is None or h.fit.start < now:
                continue
            try:
                prof.reserve(h.fit.start, h.end, h.fit.procs, h.bbs)
            except ValueError:                                  # resources taken (job overdue)
                continue
            kept[job.id] = h
        for job in queue:                                       # 2. compression, queue order
            h = kept.pop(job.id, None)
            if h is not None:
                prof.release(h.fit.start, h.end, h.fit.procs, h.bbs)
            if not self._plain and not self._eligible(job, starting):
                continue
            fit = prof.earliest_fit(job, now)
            if fit is None:
                continue
            if self.queues is not None and fit.start == now:
                q = self._queue_of[job.id].name
                starting[q] = starting.get(q, 0) + job.res
            end = fit.start + job.walltime
            bbs = fit.bb_per_storage(job.bb)
            prof.reserve(fit.start, end, fit.procs, bbs)
            made = h.made_at if (h is not None and fit == h.fit) else now
            self._resv[job.id] = _Held(fit, end, bbs, made)
        self.last_plan = {jid: h.fit.start for jid, h in self._resv.items()}
        starts: list[Start] = []
        for job in queue:                                       # 3. start the reservations of now
            h = self._resv.get(job.id)
            if h is not None and h.fit.start == now:
                del self._resv[job.id]
                prof.release(now, h.end, h.fit.procs, h.bbs)
                starts.append(self._start(job, h.fit, now))
        return starts
