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

The same policy runs under every job model. Under one that separates the stagings (three-phase,
docs/io-model.md §3) the helpers plan in the job's hold shape (`holds.HoldShape`, `self.shape(job)`):
``fit_now`` answers whether the job's stage-in can start now (its nodes from now + stage-in, its BB from now
to the end of its stage-out), ``start`` then starts the stage-in (a `StageIn`; the base class gives the job
its nodes once staged, and frees them before the stage-out), and ``reserve`` holds the BB over the stagings
too. ``staging="with-nodes"`` keeps a job's nodes from stage-in to stage-out instead.

What the base class guarantees: a start that does not fit the profile raises ValueError (no over-allocation
can be sent to Batsim); returning a start not made by ``self.start`` in this call, or leaving out one that was,
raises RuntimeError; jobs that can never fit the platform (`can_ever_fit`, which a policy may extend) are
rejected before they reach the queue. Source of the EASY vocabulary (head job, reservation, shadow time,
backfilling): Kopanski & Rzadca, Euro-Par 2021, §3.2 and Algorithm 1; docs/policies.md.
"""
from __future__ import annotations

import random

from ..platforms.model import Platform
from procset import ProcSet

from .base import Job, StageIn, Start
from .holds import STAGING_BANDWIDTH, wake_time
from .profile import AvailabilityProfile, Fit
from .base import Scheduler
from .profile_scheduler import ProfileScheduler, Reservation

__all__ = ["Policy", "RESERVED"]

#: the names a `Policy` subclass must not use for its own attributes: the documented interface, the policy's
#: label and options, and the `Scheduler` hooks the decision loop calls (docs/writing-a-policy.md "Reserved
#: names"). Every other name is the policy's own: the machinery (queue, running jobs, reservations, staging,
#: wait reasons) lives in an object the policy owns under a private name, not in attributes of the policy.
RESERVED = ("schedule", "fit_now", "start", "reserve", "can_ever_fit", "shape", "staged", "platform", "name",
            "declared_options", "needs_staged_model", "build", "options_conflict", "submit", "job_ended", "decide",
            "wakeup", "queue", "bind_job_model", "frees_nodes_before_stage_out", "stage_in_done", "nodes_released",
            "decides_stage_out", "job_computed", "job_facts", "wait_reasons_changed", "wait_reasons",
            "extra_job_columns", "write_outputs")


class _Machinery(ProfileScheduler):
    """What a `Policy` owns (as ``self._Policy__machinery``): the queue, the running jobs and their holds in the
    availability profile, the staged lifecycle and the wait reasons of `ProfileScheduler`, whose `_schedule` asks
    the policy (`Policy.schedule`) and whose job check is the policy's `Policy.can_ever_fit`."""

    default_staging = "bb-first"

    def __init__(self, policy: "Policy", platform: Platform, **options):
        super().__init__(platform, **options)
        self.policy = policy
        self.now = 0.0
        self.made: list[Start | StageIn] = []
        self.held: list[tuple[Reservation, float, float]] = []    # (reservation, BB window start, end)

    @property
    def name(self) -> str:                       # the policy's label in the machinery's messages
        return self.policy.name

    def can_ever_fit(self, job: Job) -> str | None:
        return self.policy.can_ever_fit(job)

    def fit_now(self, job: Job, bb: bool) -> Fit | None:
        return self._fits_now(job, self.now, bb=bb)

    def start(self, job: Job, fit: Fit) -> Start | StageIn:
        now = self.now
        if job.id not in self._queue:
            raise KeyError(f"start: job {job.id} is not in the queue")
        shape = self.shape(job)
        if fit.start != now + shape.stage_in:
            raise ValueError(f"start: job {job.id}: the fit starts at {fit.start}, not now ({now}"
                             + (f" + its stage-in {shape.stage_in} s)" if shape.stage_in else ")"))
        if len(fit.procs) != job.res or (job.bb > 0 and len(fit.bb_of_node) != job.res):
            raise ValueError(f"start: job {job.id}: the fit is for another job size (use fit_now(job))")
        prof = self.profile
        prof.begin()                                     # refuse any over-allocation before changing anything
        try:
            end = fit.start + job.walltime
            bbs = fit.bb_per_storage(job.bb) if job.bb > 0 else {}
            prof.reserve(fit.start, end, fit.procs, {})
            if bbs:
                prof.reserve(now, end + shape.stage_out, ProcSet(), bbs)
        except ValueError as exc:
            raise ValueError(f"start: job {job.id} does not fit now: {exc}") from None
        finally:
            prof.rollback()
        st = self._start(job, fit, now)
        self.made.append(st)
        return st

    def reserve(self, job: Job, bb: bool) -> Reservation | None:
        shape = self.shape(job)
        fit = self.profile.earliest_fit(job, self.now, bb_aware=bb, shape=shape)
        if fit is None:
            return None
        bbs = fit.bb_per_storage(job.bb) if (bb and job.bb > 0) else {}
        r = Reservation(job.id, fit.start, fit.start + job.walltime, fit.procs, bbs, self.now)
        b0 = max(fit.start - (shape.stage_in if bb else 0.0), self.now)
        b1 = r.end + (shape.stage_out if bb else 0.0)
        if b0 == r.start and b1 == r.end:
            self.profile.reserve(r.start, r.end, r.procs, bbs)
        else:
            self.profile.reserve(r.start, r.end, r.procs, {})
            if bbs:
                self.profile.reserve(b0, b1, ProcSet(), bbs)
        self.held.append((r, b0, b1))
        if self.staged:                                  # be called when its stage-in should start
            w = wake_time(max(fit.start - shape.stage_in, self.now))
            self._staging.wake_at(w)
        return r

    def _schedule(self, now: float) -> list[Start | StageIn]:
        self.now, self.made, self.held = now, [], []
        try:
            out = self.policy.schedule(now, list(self._queue.values()), self.profile, self.rng)
        finally:
            for r, b0, b1 in reversed(self.held):
                if b0 == r.start and b1 == r.end:
                    self.profile.release(r.start, r.end, r.procs, r.bb_per_storage)
                else:
                    self.profile.release(r.start, r.end, r.procs, {})
                    if r.bb_per_storage:
                        self.profile.release(b0, b1, ProcSet(), r.bb_per_storage)
            self.held = []
        out = list(out or [])
        if [id(s) for s in out] != [id(s) for s in self.made]:
            raise RuntimeError(f"policy {type(self.policy).__name__}: schedule() must return exactly the starts made "
                               "by self.start() during the call, in that order")
        return out


class Policy(Scheduler):
    """Base of a user policy: implement `schedule` (see the module docstring).

    Args:
        platform: the scheduler's view of the platform (``platform.nb_compute``, ``platform.bb_capacity``
            {BB node id: bytes}, ``platform.total_bb`` [bytes]).
        seed: seed of the ``rng`` given to `schedule`.
        period: if set (> 0, seconds), `schedule` is also called at every multiple of `period` while jobs wait.
        staging, staging_bandwidth: under a job model that separates the stagings, "bb-first" (default: BB alone
            during the stagings) or "with-nodes"; the stage estimates' bandwidth [B/s] (`ProfileScheduler`).
    Subclasses add their own keyword options (``burstbuffer policies`` lists them from the signature). Their
    attributes are their own but the names of `RESERVED`: the queue, the running jobs, the reservations, the
    staging and the wait reasons are kept by an object the policy owns (`_Machinery`, a `ProfileScheduler`).
    """

    name = "?"
    #: a user policy's options from its base: ``period``, ``staging``, ``staging_bandwidth``; its own keyword
    #: parameters are added to them (`burstbuffer.schedulers.options.takes`)
    declared_options = tuple(o for o in ProfileScheduler.declared_options
                             if o.name in ("period", "staging", "staging_bandwidth"))

    def __init__(self, platform: Platform, *, seed: int = 0, period: float | None = None,
                 staging: str | None = None, staging_bandwidth: float = STAGING_BANDWIDTH):
        self.platform = platform
        self.__machinery = _Machinery(self, platform, seed=seed, period=period, staging=staging,
                                      staging_bandwidth=staging_bandwidth)

    # ------------------------------------------------------------------ to implement
    def schedule(self, now: float, queue: list[Job], profile: AvailabilityProfile,
                 rng: random.Random) -> list[Start]:
        """The jobs to start at `now` (see the module docstring)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement schedule()")

    # ------------------------------------------------------------------ helpers
    def fit_now(self, job: Job, *, bb: bool = True) -> Fit | None:
        """Where `job` fits if it starts now for its whole walltime (processors and, if `bb`, burst buffers),
        around the running jobs and this call's reservations; None if it does not. Under a staged hold shape:
        whether its stage-in can start now (``fit.start`` is then its nodes' start, now + stage-in)."""
        return self.__machinery.fit_now(job, bb)

    def start(self, job: Job, fit: Fit) -> Start | StageIn:
        """Start queued `job` now on `fit` (from `fit_now`): holds its processors and BB until now + walltime
        (staged hold shape: starts its stage-in, a `StageIn`). Raises ValueError if `fit` does not start now
        (its nodes at now + stage-in), is for another size, or does not fit the profile any more
        (over-allocation); KeyError if `job` is not queued."""
        return self.__machinery.start(job, fit)

    def reserve(self, job: Job, *, bb: bool = True) -> Reservation | None:
        """Reserve `job`'s earliest window from now (processors and, if `bb`, burst buffers — over its stagings
        too under a staged hold shape) until the end of this call: later `fit_now` answers go around it.
        Returns it (``start`` is the shadow time [s], its nodes' start), or None if the job can never be
        placed."""
        return self.__machinery.reserve(job, bb)

    def can_ever_fit(self, job: Job) -> str | None:
        """None if `job` fits the empty platform, else a one-line reason (`ProfileScheduler.can_ever_fit`); a
        policy may extend it (the jobs it refuses are rejected before they reach the queue)."""
        return ProfileScheduler.can_ever_fit(self.__machinery, job)

    def shape(self, job: Job):
        """`job`'s hold shape under the bound job model (`holds.HoldShape`; `ProfileScheduler.shape`)."""
        return self.__machinery.shape(job)

    @property
    def staged(self) -> bool:
        """True while the staged lifecycle is on (a job model that stages separately, ``staging="bb-first"``)."""
        return self.__machinery.staged

    # ------------------------------------------------------------------ the Scheduler hooks, to the machinery
    def submit(self, job: Job, now: float) -> None:
        self.__machinery.submit(job, now)

    def job_ended(self, job_id: str, now: float) -> None:
        self.__machinery.job_ended(job_id, now)

    def decide(self, now: float) -> list[Start | StageIn]:
        return self.__machinery.decide(now)

    def wakeup(self, now: float) -> float | None:
        return self.__machinery.wakeup(now)

    @property
    def queue(self) -> list[Job]:
        return self.__machinery.queue

    def bind_job_model(self, model) -> None:
        self.__machinery.bind_job_model(model)

    @property
    def frees_nodes_before_stage_out(self) -> bool:
        return self.__machinery.frees_nodes_before_stage_out

    def stage_in_done(self, job_id: str, now: float) -> None:
        self.__machinery.stage_in_done(job_id, now)

    def nodes_released(self, job_id: str, now: float) -> None:
        self.__machinery.nodes_released(job_id, now)

    @property
    def job_facts(self):
        return self.__machinery.job_facts

    @property
    def wait_reasons_changed(self):
        return self.__machinery.wait_reasons_changed

    @property
    def wait_reasons(self) -> dict[str, str]:
        return self.__machinery.wait_reasons

    @property
    def extra_job_columns(self) -> list[str]:
        return self.__machinery.extra_job_columns
