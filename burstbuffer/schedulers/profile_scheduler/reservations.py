"""Reservations and backfilling on the availability profile (Kopanski & Rzadca 2021, §3.2, Algorithm 1): the
head job's reservation (`_reserve`, kept between decisions by `_reserve_kept`, dropped by `_unreserve`), the fit
of a job now around it (`_fits_now`) and the backfilling pass (`_backfill`). One of the four concerns of
`ProfileScheduler`; the state it reads (``last_reservation``, ``_held``, ``_pending``, ``_kept``) is set by
`ProfileScheduler.__init__`."""
from __future__ import annotations

from dataclasses import dataclass, replace

from procset import ProcSet

from ..base import Job, StageIn, Start
from ..holds import NO_STAGING
from ..profile import Fit

__all__ = ["Reservation", "Reservations"]


@dataclass(frozen=True)
class Reservation:
    """The EASY head job's reservation made during the last `decide` (dropped at its end).

    Attributes:
        job_id: the head job (first queued job that did not fit now).
        start: shadow time [s], the reservation's start.
        end: start + walltime [s].
        procs: reserved compute ids.
        bb_per_storage: reserved BB bytes per storage id ({} for fcfs-easy: processors only).
        made_at: the `decide` time [s] it was computed at.
    """

    job_id: str
    start: float
    end: float
    procs: ProcSet
    bb_per_storage: dict[int, int]
    made_at: float


class Reservations:
    """The reservations and backfilling of a `ProfileScheduler` (module docstring)."""

    def _backfill(self, jobs: list[Job], now: float) -> list[Start | StageIn]:
        """BACKFILL of Algorithm 1 (Kopanski & Rzadca 2021): start, in the given order, every job whose processors
        and BB fit now on the profile (so around any reservation it holds). Returns the starts (staged
        lifecycle: also stage-ins). Two-phase: a job asking more processors than are free now is passed over
        without a profile query, and the pass ends when none is free (a staged job's nodes start later)."""
        starts: list[Start | StageIn] = []
        staged = self.staged
        free_procs = self.profile.nb_free_at(now)
        for job in jobs:
            if not staged and free_procs == 0:
                break
            if (not staged and job.res > free_procs) or not self._eligible(job):
                self._note_wait(job, now)
                continue
            fit = self._fits_now(job, now)
            if fit is not None:
                starts.append(self._start(job, fit, now))
                free_procs -= job.res
            else:
                self._note_wait(job, now)
        return starts

    def _fits_now(self, job: Job, now: float, *, bb: bool = True) -> Fit | None:
        """Where `job` fits if it starts now, given holds and reservations: processors and (`bb`) BB free
        over [now, now + walltime); staged lifecycle: its stage-in can start now — nodes over
        [now + stage-in, … + walltime), BB from now to the stage-out's end (`shape`)."""
        if self._pending is not None:          # the head's reservation enters the profile before the first fit
            r, self._pending = self._pending, None
            self.profile.reserve(r.start, r.end, r.procs, r.bb_per_storage)
        shape = self.shape(job) if self.staged else NO_STAGING
        if shape.empty:
            return self.profile.fit_at(job, now, bb_aware=bb)
        return self.profile.fit_at(job, now + shape.stage_in, bb_aware=bb, shape=shape, now=now)

    def _reserve(self, job: Job, now: float, *, bb: bool, lazy: bool = False) -> Reservation | None:
        """Reserve for `job` at its earliest time ≥ now: processors and, if `bb`, burst buffers
        (Kopanski & Rzadca 2021, Algorithm 1 line 14), in its hold shape (`shape`: BB over the stagings too).
        The staged lifecycle asks to be called when the reserved stage-in should start (`wakeup`).
        None if it can never fit.

        `lazy` (two-phase): a reservation after `now` enters the profile only when `_fits_now` is first asked
        for a fit while it is held, and not at all if it never is. Only for a pass that reads the profile
        through `_fits_now` alone, its free counts at `now` and `_note_wait` (`_backfill`): none of those at
        `now` depends on a hold that starts later."""
        profile, kept = self.profile, self._kept
        self._kept = None
        if (kept is not None and kept[0] == profile.changes and kept[1] == (job.id, bb) and now < kept[2].start
                and not self.staged):
            r = kept[2]                        # the same earliest fit (`_reserve_kept`)
            if not lazy:
                profile.reserve(r.start, r.end, r.procs, r.bb_per_storage)
            self._held = self.last_reservation = replace(r, made_at=now)
            if lazy:
                self._pending = self._held
            self._kept = (profile.releases, (job.id, bb), self._held)
            return self._held
        shape = self.shape(job)
        fit = profile.earliest_fit(job, now, bb_aware=bb, shape=shape)
        if fit is None:
            return None
        end = fit.start + job.walltime
        if not self.staged:
            bbs = fit.bb_per_storage(job.bb) if bb else {}
            lazy = lazy and fit.start > now
            if not lazy:
                profile.reserve(fit.start, end, fit.procs, bbs)
        else:
            s = shape.stage_in if bb else 0.0
            bbs = fit.bb_per_storage(job.bb) if (bb and job.bb > 0) else {}
            self.profile.reserve(fit.start, end, fit.procs, {})
            b0 = max(fit.start - s, now)                        # ≥ now but for rounding
            b1 = end + (shape.stage_out if bb else 0.0)
            if bbs:
                self.profile.reserve(b0, b1, ProcSet(), bbs)
            self._held_bb = (b0, b1, bbs)
            self._wake = max(fit.start - shape.stage_in, now)
        self._held = Reservation(job.id, fit.start, end, fit.procs, bbs, now)
        self.last_reservation = self._held
        if not self.staged and lazy:
            self._pending = self._held
        if not self.staged:
            self._kept = (profile.releases, (job.id, bb), self._held)
        return self._held

    def _reserve_kept(self) -> None:
        """Keep the reservation being dropped for the head's next `_reserve` (called by `_unreserve`), when nothing
        was released since it was made: every change of the profile since then took resources around it.

        Then, as long as the profile does not change, the head's earliest fit at a later decision (now < its
        start) is the same: a start before it fitted neither then nor now (taking resources and a later `now`
        only shrink a window's free resources: a later window at a time between two breakpoints holds every
        breakpoint of the earlier candidate's); its own window still fits, as the takes left its processors and
        BB bytes free; its processors are still the lowest ids free over the window (an id free there and not
        chosen was above them), and the BB placement's greedy makes the same choices (a node it skipped has no
        more room than before; a node it chose still has the bytes of every share placed on it)."""
        kept, r = self._kept, self._held
        self._kept = None
        if kept is not None and r is not None and kept[2] is r and kept[0] == self.profile.releases:
            self._kept = (-1, kept[1], r)            # stamped by `_unreserve` once released

    def _unreserve(self) -> None:
        """Drop the reservation (Algorithm 1 line 18: re-acquired at the next scheduling; kept when it
        stays the same, `_reserve_kept`)."""
        self._reserve_kept()
        r = self._held
        self._held = None
        if r is not None:
            if self._pending is r:             # never entered the profile (`_reserve` with `lazy`)
                self._pending = None
                if self._kept is not None:
                    self._kept = (self.profile.changes, *self._kept[1:])
            elif self._held_bb is None:
                self.profile.release(r.start, r.end, r.procs, r.bb_per_storage)
                if self._kept is not None:
                    self._kept = (self.profile.changes, *self._kept[1:])
            else:
                self.profile.release(r.start, r.end, r.procs, {})
                b0, b1, bbs = self._held_bb
                if bbs:
                    self.profile.release(b0, b1, ProcSet(), bbs)
        self._held_bb = None
