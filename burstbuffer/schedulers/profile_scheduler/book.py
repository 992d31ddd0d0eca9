"""The reservation book: the queued jobs' reservations that persist from one decision to the next
(conservative backfilling, and the EASY family with a reservation depth; docs/policies.md).

A `ProfileScheduler` owns one (`ProfileScheduler._book`, empty for the policies that keep no reservation):
during a decision the policy puts the previous reservations back in the profile (`restore`), moves each
(`take`, then `plan`), and after the decision they are lifted out of the profile again (`lift`), so that
between decisions the profile holds the running jobs only. A job that leaves the queue is `forget`-ten.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from procset import ProcSet

from ..base import Job
from ..profile import AvailabilityProfile, Fit
from .reservations import Reservation

if TYPE_CHECKING:
    from ..holds import HoldShape

__all__ = ["PlannedHold", "ReservationBook"]


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


class ReservationBook:
    """Job id → `PlannedHold` of the queued jobs holding a reservation (module docstring)."""

    def __init__(self) -> None:
        self.plans: dict[str, PlannedHold] = {}

    @property
    def reservations(self) -> dict[str, Reservation]:
        """Job id → `Reservation` (its nodes' window and BB) of every planned hold."""
        return {jid: Reservation(jid, h.fit.start, h.n_end, h.fit.procs, dict(h.bbs), h.made_at)
                for jid, h in self.plans.items()}

    def forget(self, job_id: str) -> None:
        """`job_id` left the queue: its reservation is dropped (nothing if it had none)."""
        self.plans.pop(job_id, None)

    def lift(self, profile: AvailabilityProfile) -> None:
        """Take every reservation out of `profile` (the book keeps them for the next decision)."""
        for p in self.plans.values():
            self.take(profile, p)

    @staticmethod
    def put(profile: AvailabilityProfile, p: PlannedHold) -> None:
        """Hold `p` in `profile` (ValueError, profile unchanged, if its resources are taken)."""
        if p.b_start == p.fit.start and p.b_end == p.n_end:
            profile.reserve(p.fit.start, p.n_end, p.fit.procs, p.bbs)
            return
        profile.begin()
        try:
            profile.reserve(p.fit.start, p.n_end, p.fit.procs, {})
            if p.bbs:
                profile.reserve(p.b_start, p.b_end, ProcSet(), p.bbs)
        except ValueError:
            profile.rollback()
            raise
        profile.commit()

    @staticmethod
    def take(profile: AvailabilityProfile, p: PlannedHold) -> None:
        """Release `p` from `profile`."""
        if p.b_start == p.fit.start and p.b_end == p.n_end:
            profile.release(p.fit.start, p.n_end, p.fit.procs, p.bbs)
            return
        profile.release(p.fit.start, p.n_end, p.fit.procs, {})
        if p.bbs:
            profile.release(p.b_start, p.b_end, ProcSet(), p.bbs)

    def restore(self, profile: AvailabilityProfile, queue: list[Job], now: float) -> dict[str, PlannedHold]:
        """Put the previous reservations of `queue`'s jobs back in `profile` (those still valid: BB window
        from now on, resources still free); returns them. The book is emptied."""
        old, self.plans = self.plans, {}
        kept: dict[str, PlannedHold] = {}
        for job in queue:
            p = old.get(job.id)
            if p is None or p.b_start < now:
                continue
            try:
                self.put(profile, p)
            except ValueError:                                  # resources taken (a job overdue)
                continue
            kept[job.id] = p
        return kept

    def plan(self, profile: AvailabilityProfile, job: Job, fit: Fit, shape: HoldShape, now: float,
             prev: PlannedHold | None, *, bb: bool = True) -> PlannedHold:
        """Reserve `fit` for `job` in its hold `shape` (BB too if `bb`) in `profile` and record it."""
        end = fit.start + job.walltime
        bbs = fit.bb_per_storage(job.bb) if (bb and job.bb > 0) else {}
        s_in, s_out = (shape.stage_in, shape.stage_out) if bb else (0.0, 0.0)
        p = PlannedHold(fit, end, bbs, max(fit.start - s_in, now), end + s_out,
                        prev.made_at if (prev is not None and prev.fit == fit) else now)
        self.put(profile, p)
        self.plans[job.id] = p
        return p
