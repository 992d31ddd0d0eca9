"""Reservations and backfilling on the availability profile (Kopanski & Rzadca 2021, §3.2, Algorithm 1): the
head job's reservation (`Reservations.reserve`, kept between decisions, dropped by `unreserve`), the fit
of a job now around it (`fits_now`), behind the hooks `_reserve`, `_unreserve`, `_fits_now` of `ProfileScheduler`
(whose `_backfill` is the backfilling pass). One of the concerns of `ProfileScheduler`, an object it owns
(``_res``) with its own state; the profile and the job's hold shape are passed to it."""
from __future__ import annotations

from dataclasses import dataclass, replace

from procset import ProcSet

from ..base import Job, StageIn, Start
from ..holds import HoldShape
from ..profile import AvailabilityProfile, Fit

__all__ = ["Reservation", "Reservations", "backfill"]


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
    """The head job's reservation of a `ProfileScheduler` (module docstring), owned as ``_res``.

    Attributes:
        last: the head job's reservation made by the last decision (None if none was needed).
        held: the reservation held now (between `reserve` and `unreserve`), or None.
        kept: the head's reservation kept for the next decision (`reserve`): (profile's ``releases`` when it was
            made, (job id, bb), the reservation), then, once dropped, (profile's ``changes`` after that, …).
    The profile is passed to each call that reads or changes it."""

    def __init__(self) -> None:
        self.last: Reservation | None = None
        self.held: Reservation | None = None
        #: the held reservation while it is not in the profile yet (`reserve` with `lazy`): entered at the first
        #: fit asked for (`fits_now`), never if none is
        self._pending: Reservation | None = None
        self.kept: tuple[int, tuple[str, bool], Reservation] | None = None
        self._held_bb: tuple[float, float, dict[int, int]] | None = None    # staged: the held BB window

    def fits_now(self, profile: AvailabilityProfile, job: Job, now: float, shape: HoldShape, *,
                 bb: bool = True) -> Fit | None:
        """Where `job` fits if it starts now, given holds and reservations: processors and (`bb`) BB free
        over [now, now + walltime); in a staged hold `shape`: its stage-in can start now — nodes over
        [now + stage-in, … + walltime), BB from now to the stage-out's end."""
        if self._pending is not None:          # the head's reservation enters the profile before the first fit
            r, self._pending = self._pending, None
            profile.reserve(r.start, r.end, r.procs, r.bb_per_storage)
        if shape.empty:
            return profile.fit_at(job, now, bb_aware=bb)
        return profile.fit_at(job, now + shape.stage_in, bb_aware=bb, shape=shape, now=now)

    def reserve(self, profile: AvailabilityProfile, job: Job, now: float, shape: HoldShape, *, bb: bool,
                lazy: bool = False, staged: bool = False) -> Reservation | None:
        """Reserve for `job` at its earliest time ≥ now: processors and, if `bb`, burst buffers
        (Kopanski & Rzadca 2021, Algorithm 1 line 14), in its hold `shape` (under the `staged` lifecycle: BB over
        the stagings too). None if it can never fit.

        `lazy` (two-phase): a reservation after `now` enters the profile only when `fits_now` is first asked
        for a fit while it is held, and not at all if it never is. Only for a pass that reads the profile
        through `fits_now` alone, its free counts at `now` and the wait notes (`ProfileScheduler._backfill`):
        none of those at `now` depends on a hold that starts later."""
        kept = self.kept
        self.kept = None
        if (kept is not None and kept[0] == profile.changes and kept[1] == (job.id, bb) and now < kept[2].start
                and not staged):
            r = kept[2]                        # the same earliest fit (`_keep`)
            if not lazy:
                profile.reserve(r.start, r.end, r.procs, r.bb_per_storage)
            self.held = self.last = replace(r, made_at=now)
            if lazy:
                self._pending = self.held
            self.kept = (profile.releases, (job.id, bb), self.held)
            return self.held
        fit = profile.earliest_fit(job, now, bb_aware=bb, shape=shape)
        if fit is None:
            return None
        end = fit.start + job.walltime
        if not staged:
            bbs = fit.bb_per_storage(job.bb) if bb else {}
            lazy = lazy and fit.start > now
            if not lazy:
                profile.reserve(fit.start, end, fit.procs, bbs)
        else:
            s = shape.stage_in if bb else 0.0
            bbs = fit.bb_per_storage(job.bb) if (bb and job.bb > 0) else {}
            profile.reserve(fit.start, end, fit.procs, {})
            b0 = max(fit.start - s, now)                        # ≥ now but for rounding
            b1 = end + (shape.stage_out if bb else 0.0)
            if bbs:
                profile.reserve(b0, b1, ProcSet(), bbs)
            self._held_bb = (b0, b1, bbs)
        self.held = self.last = Reservation(job.id, fit.start, end, fit.procs, bbs, now)
        if not staged:
            if lazy:
                self._pending = self.held
            self.kept = (profile.releases, (job.id, bb), self.held)
        return self.held

    def _keep(self, profile: AvailabilityProfile) -> None:
        """Keep the reservation being dropped for the head's next `reserve` (called by `unreserve`), when nothing
        was released since it was made: every change of the profile since then took resources around it.

        Then, as long as the profile does not change, the head's earliest fit at a later decision (now < its
        start) is the same: a start before it fitted neither then nor now (taking resources and a later `now`
        only shrink a window's free resources: a later window at a time between two breakpoints holds every
        breakpoint of the earlier candidate's); its own window still fits, as the takes left its processors and
        BB bytes free; its processors are still the lowest ids free over the window (an id free there and not
        chosen was above them), and the BB placement's greedy makes the same choices (a node it skipped has no
        more room than before; a node it chose still has the bytes of every share placed on it)."""
        kept, r = self.kept, self.held
        self.kept = None
        if kept is not None and r is not None and kept[2] is r and kept[0] == profile.releases:
            self.kept = (-1, kept[1], r)            # stamped by `unreserve` once released

    def unreserve(self, profile: AvailabilityProfile) -> None:
        """Drop the reservation (Algorithm 1 line 18: re-acquired at the next scheduling; kept when it
        stays the same, `_keep`)."""
        self._keep(profile)
        r = self.held
        self.held = None
        if r is not None:
            if self._pending is r:             # never entered the profile (`reserve` with `lazy`)
                self._pending = None
                if self.kept is not None:
                    self.kept = (profile.changes, *self.kept[1:])
            elif self._held_bb is None:
                profile.release(r.start, r.end, r.procs, r.bb_per_storage)
                if self.kept is not None:
                    self.kept = (profile.changes, *self.kept[1:])
            else:
                profile.release(r.start, r.end, r.procs, {})
                b0, b1, bbs = self._held_bb
                if bbs:
                    profile.release(b0, b1, ProcSet(), bbs)
        self._held_bb = None


def backfill(policy, jobs: list[Job], now: float, *, staged: bool) -> list[Start | StageIn]:
    """BACKFILL of Algorithm 1 (Kopanski & Rzadca 2021), ``policy._backfill``: start, in the given order, every job
    whose processors and BB fit now on the profile (so around any reservation it holds), through `policy`'s hooks
    (``_eligible``, ``_fits_now``, ``_start``, ``_note_wait``). Returns the starts (`staged` lifecycle: also
    stage-ins). Two-phase: a job asking more processors than are free now is passed over without a profile
    query, and the pass ends when none is free (a staged job's nodes start later)."""
    starts: list[Start | StageIn] = []
    free_procs = policy.profile.nb_free_at(now)
    for job in jobs:
        if not staged and free_procs == 0:
            break
        if (not staged and job.res > free_procs) or not policy._eligible(job):
            policy._note_wait(job, now)
            continue
        fit = policy._fits_now(job, now)
        if fit is not None:
            starts.append(policy._start(job, fit, now))
            free_procs -= job.res
        else:
            policy._note_wait(job, now)
    return starts
