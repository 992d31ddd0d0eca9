"""Reservation depth K: the BB-aware EASY family with reservations for the first K queued jobs.

EASY (Kopański & Rzadca, Euro-Par 2021, Algorithm 1; Casanova's ICS 632 slides, "EASY Backfilling") reserves for one job, the head;
conservative backfilling (the same slides, "Conservative Backfilling") for every queued job. Depth K sits
between them: walking the queue in its order, every job takes its earliest fit (processors and, for
fcfs-bb / sjf-bb, BB) until K jobs hold a reservation in the future; the jobs whose fit is now are
started; the remaining jobs are backfilled (in queue order, or by ascending walltime for sjf-bb) if
they fit now around the K reservations.

Reservations persist between decisions as in `conservative-bb`: at each decision the previous
reservations are put back, then each of the first jobs, in queue order, gives up its own and takes
its earliest fit around all the others (compression: never later). So no reservation is ever delayed
by a job that did not hold one. Hence:
- K = 1 with the submission order is EASY exactly (fcfs-easy, fcfs-bb, sjf-bb): the head is the
  first job that does not fit and no other queued job ever holds a reservation;
- K ≥ number of queued jobs ("all") is conservative backfilling: `conservative-bb`'s schedule
  (tests/test_orders.py checks both on generated workloads).
With another order a job that overtakes the head is placed around the head's old reservation.
"""
from __future__ import annotations

import math

from ..platforms.model import Platform
from .base import Start
from .conservative import ConservativeBB
from .profile_scheduler import Reservation

__all__ = ["DepthBackfilling", "parse_depth"]


def parse_depth(value) -> float:
    """K from an int ≥ 1 or "all" (→ math.inf). Raises ValueError otherwise."""
    if isinstance(value, str):
        if value.strip().lower() == "all":
            return math.inf
        try:
            value = int(value)
        except ValueError:
            raise ValueError(f"reservation depth must be a positive integer or 'all', got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 1 or (
            value != math.inf and int(value) != value):
        raise ValueError(f"reservation depth must be a positive integer or 'all', got {value!r}")
    return value


class DepthBackfilling(ConservativeBB):
    """EASY-family policy with reservation depth K (module docstring).

    Args: `platform`, `reservation_depth` (int ≥ 1 or "all"), `reserve_bb` (reservations hold BB:
    fcfs-bb, sjf-bb; processors only: fcfs-easy), `sjf_backfill` (backfill by ascending walltime:
    sjf-bb), `name`, and the `ProfileScheduler` options. Raises ValueError on a bad depth.
    After `decide`, ``last_reservation`` is the first job's future reservation (the head, made now),
    ``last_plan`` maps the reserved jobs to their start [s].
    """

    def __init__(self, platform: Platform, *, reservation_depth=1, reserve_bb: bool = True,
                 sjf_backfill: bool = False, name: str = "fcfs-bb", **options):
        super().__init__(platform, **options)
        self.depth = parse_depth(reservation_depth)
        self.reserve_bb = reserve_bb
        self.sjf_backfill = sjf_backfill
        self.name = name

    def _staging_unsupported(self) -> str | None:
        """A reservation depth keeps its two-phase behaviour on the three-phase model (nodes held during the
        stagings; docs/policies.md), with a warning there."""
        return "reservation_depth"

    def _schedule(self, now: float) -> list[Start]:
        queue = self._ordered(now)
        kept = self._restore(queue, now)
        starting: dict[str, int] = {}                           # per queue: processors starting now
        now_ids: set[str] = set()
        plan_starts: dict[str, float] = {}
        future = 0
        rest = []
        for i, job in enumerate(queue):                         # the first jobs: reservations
            if future >= self.depth:
                rest = queue[i:]
                break
            prev = kept.pop(job.id, None)
            if prev is not None:
                self._take(prev)
            if not self._plain and not self._eligible(job, starting):
                continue
            fit = self.profile.fit_at(job, now)                 # processors and BB free now: start
            starts_now = fit is not None
            if fit is None:                                     # else a reservation (BB too if reserve_bb;
                fit = self.profile.earliest_fit(job, now, bb_aware=self.reserve_bb)   # it may start at `now`
                if fit is None:                                 # on processors only: not startable)
                    continue
            p = self._plan(job, fit, now, prev, bb=starts_now or self.reserve_bb)
            plan_starts[job.id] = fit.start
            if starts_now:
                now_ids.add(job.id)
                if self.queues is not None:
                    q = self._queue_of[job.id].name
                    starting[q] = starting.get(q, 0) + job.res
            else:
                if future == 0:
                    self.last_reservation = Reservation(job.id, fit.start, p.n_end, fit.procs, dict(p.bbs), now)
                future += 1
        for job in rest:                                        # the others hold none
            prev = kept.pop(job.id, None)
            if prev is not None:
                self._take(prev)
        self.last_plan = plan_starts
        starts: list[Start] = []
        for job in queue:                                       # start the reservations of now
            if job.id in now_ids:
                p = self._plans.pop(job.id)
                self._take(p)
                starts.append(self._start(job, p.fit, now))
        if rest:                                                # backfilling
            if self.sjf_backfill:
                rest = sorted(rest, key=lambda j: (j.walltime, self._submission_index(j)))
            starts += self._backfill(rest, now)
        return starts
