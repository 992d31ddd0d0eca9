"""The stable interface of a user policy (docs/writing-a-policy.md).

A policy subclasses `Policy` and implements one method::

    def schedule(self, now, queue, profile, rng) -> list[Start]

called at every decision (after a submission, a job end or a requested wake-up) with

- ``now``: the simulated time [s];
- ``queue``: the jobs waiting, in submission order (`Job`: ``id``, ``subtime`` [s], ``walltime`` [s], ``res``
  compute nodes, ``bb`` burst-buffer bytes per node, ``bb_total``);
- ``profile``: the `AvailabilityProfile` — free processors and free BB bytes per BB node as a step function of
  time, in which every running job holds its processors and BB until start + walltime;
- ``rng``: the policy's own `random.Random`, seeded with ``--seed`` (the only allowed source of randomness).

It returns the jobs to start now, each made by ``self.start(job, fit)`` from a ``fit`` of
``self.fit_now(job)`` (or of ``profile.fit_at`` / ``profile.earliest_fit`` at ``now``), in the order they were
started. ``self.reserve(job)`` holds a job's earliest processors + BB window during this call only (an EASY
reservation: later fits go around it); every reservation is dropped when `schedule` returns.

What the base class guarantees: a start that does not fit the profile raises ValueError (no over-allocation
can be sent to Batsim); returning a start not made by ``self.start`` in this call, or leaving out one that was,
raises RuntimeError; jobs that can never fit the platform (`can_ever_fit`, which a policy may extend) are
rejected before they reach the queue. Source of the EASY vocabulary (head job, reservation, shadow time,
backfilling): Kopanski & Rzadca, Euro-Par 2021, §3.2 and Algorithm 1; docs/policies.md.
"""
from __future__ import annotations

import random

from ..platforms.model import Platform
from .base import Job, Start
from .profile import AvailabilityProfile, Fit
from .profiled import ProfileScheduler, Reservation

__all__ = ["Policy"]


class Policy(ProfileScheduler):
    """Base of a user policy: implement `schedule` (see the module docstring).

    Args:
        platform: the scheduler's view of the platform (``platform.nb_compute``, ``platform.bb_capacity``
            {BB node id: bytes}, ``platform.total_bb`` [bytes]).
        seed: seed of ``self.rng``.
        period: if set (> 0, seconds), `schedule` is also called at every multiple of `period` while jobs wait.
    Subclasses add their own keyword options (``burstbuffer policies`` lists them from the signature).
    """

    name = "?"

    def __init__(self, platform: Platform, *, seed: int = 0, period: float | None = None):
        super().__init__(platform, seed=seed, period=period)
        self._now = 0.0
        self._made: list[Start] = []
        self._resv: list[Reservation] = []

    # ------------------------------------------------------------------ to implement
    def schedule(self, now: float, queue: list[Job], profile: AvailabilityProfile,
                 rng: random.Random) -> list[Start]:
        """The jobs to start at `now` (see the module docstring)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement schedule()")

    # ------------------------------------------------------------------ helpers
    def fit_now(self, job: Job, *, bb: bool = True) -> Fit | None:
        """Where `job` fits from now for its whole walltime (processors and, if `bb`, burst buffers), around
        the running jobs and this call's reservations; None if it does not."""
        return self.profile.fit_at(job, self._now, bb_aware=bb)

    def start(self, job: Job, fit: Fit) -> Start:
        """Start queued `job` now on `fit` (from `fit_now` or a fit at ``now``): holds its processors and BB
        until now + walltime. Raises ValueError if `fit` is not at ``now``, is for another size, or does not
        fit the profile any more (over-allocation); KeyError if `job` is not queued."""
        now = self._now
        if job.id not in self._queue:
            raise KeyError(f"start: job {job.id} is not in the queue")
        if fit.start != now:
            raise ValueError(f"start: job {job.id}: the fit starts at {fit.start}, not now ({now})")
        if len(fit.procs) != job.res or (job.bb > 0 and len(fit.bb_of_node) != job.res):
            raise ValueError(f"start: job {job.id}: the fit is for another job size (use fit_now(job))")
        try:
            st = self._start(job, fit, now)   # profile.reserve refuses any over-allocation
        except ValueError as exc:
            raise ValueError(f"start: job {job.id} does not fit now: {exc}") from None
        self._made.append(st)
        return st

    def reserve(self, job: Job, *, bb: bool = True) -> Reservation | None:
        """Reserve `job`'s earliest window from now (processors and, if `bb`, burst buffers) until the end of
        this call: later `fit_now` answers go around it. Returns it (``start`` is the shadow time [s]), or
        None if the job can never be placed."""
        fit = self.profile.earliest_fit(job, self._now, bb_aware=bb)
        if fit is None:
            return None
        bbs = fit.bb_per_storage(job.bb) if bb else {}
        r = Reservation(job.id, fit.start, fit.start + job.walltime, fit.procs, bbs, self._now)
        self.profile.reserve(r.start, r.end, r.procs, r.bb_per_storage)
        self._resv.append(r)
        return r

    # ------------------------------------------------------------------ the contract with ProfileScheduler
    def _schedule(self, now: float) -> list[Start]:
        self._now, self._made, self._resv = now, [], []
        try:
            out = self.schedule(now, self.queue, self.profile, self.rng)
        finally:
            for r in reversed(self._resv):
                self.profile.release(r.start, r.end, r.procs, r.bb_per_storage)
            self._resv = []
        out = list(out or [])
        if [id(s) for s in out] != [id(s) for s in self._made]:
            raise RuntimeError(f"policy {type(self).__name__}: schedule() must return exactly the starts made by "
                               "self.start() during the call, in that order")
        return out
