"""The staged lifecycle of a profile-based policy on a job model that stages separately (docs/io-model.md §3,
docs/policies.md "On the three-phase model"): a job's BB held over its stagings and its nodes over its run
(`StagedHold`), the stage-in started first (`StageIn`), the nodes placed once it is staged (`StagedLifecycle.place_started`).
One of the concerns of `ProfileScheduler` (its class docstring states the rule), an object it owns (``_staging``)
with its own state; the profile, the platform and the overdue grace are passed to it."""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from procset import ProcSet

from ..base import Job, StageIn, Start
from ..holds import NO_STAGING, STAGINGS, HoldShape, bind_slots, check_staging
from ..options import Choice, Number, Option
from ..placement import mask_of
from ..profile import AvailabilityProfile, Fit

__all__ = ["STAGING", "STAGING_BANDWIDTH_OPTION", "StagedHold", "StagedLifecycle"]


STAGING = Option("staging", Choice(STAGINGS),
                 "on a job model that separates the stagings (three-phase): bb-first plans BB over the stagings "
                 "and nodes over the run, with-nodes holds the nodes from stage-in to stage-out (null: the "
                 "policy's own, bb-first for the EASY family, conservative-bb and plan, with-nodes for the others)",
                 nullable=True)


STAGING_BANDWIDTH_OPTION = Option("staging_bandwidth", Number(0, open_low=True),
                                  "[B/s] bandwidth of the stage-in/out estimates on the three-phase model")


@dataclass
class StagedHold:
    """A job whose stage-in started under a staged hold shape (three-phase model): its BB (`bbs` per BB node,
    until `bb_end`) and its nodes (`procs` over [`n_start`, `n_end`): planned while in stage-in, allocated
    while running, none once released).

    Attributes: job; slots (`StageIn.bb_slots`); bbs; bb_end [s]; procs; n_start, n_end [s]; ready (estimated
    end of the stage-in [s]); phase ("staging" | "staged" | "running" | "finishing"); s_out (stage-out
    estimate [s])."""

    job: Job
    slots: tuple[int, ...]
    bbs: dict[int, int]
    bb_end: float
    procs: ProcSet
    n_start: float
    n_end: float
    ready: float
    phase: str
    s_out: float


class StagedLifecycle:
    """The staged lifecycle of a `ProfileScheduler` (module docstring), owned as ``_staging``.

    Args:
        staging: "bb-first" or "with-nodes" (`holds.STAGINGS`).
        bandwidth: [B/s] of the stage estimates.

    Raises ValueError on a bad `staging` or `bandwidth` (`holds.check_staging`).

    Attributes: staging, bandwidth; staged (the lifecycle is on: `bind`); holds (job id → `StagedHold` of the jobs
    whose stage-in started, until they end); wake (a planned stage-in start [s] no event may come at, or None);
    model (the bound job model, or None). The profile is passed to each call that reads or changes it."""

    def __init__(self, staging: str, bandwidth: float) -> None:
        check_staging(staging, bandwidth)
        self.staging, self.bandwidth = staging, float(bandwidth)
        self.staged = False
        self.holds: dict[str, StagedHold] = {}
        self.wake: float | None = None
        self.model = None

    def wake_at(self, t: float) -> None:
        """Be called at `t` too (the earliest of the planned stage-in starts)."""
        self.wake = t if self.wake is None else min(self.wake, t)

    def bind(self, model, name: str, unsupported: Callable[[], str | None]) -> None:
        """Plan with `model`'s hold shapes (`holds.HoldShape`): the staged lifecycle is on when the model
        separates the stagings (``model.stages_separately``) and ``staging="bb-first"``, unless the policy
        (`name`) names an option the lifecycle does not support (``unsupported()``, a one-word reason; then, with a
        warning, the nodes are held from stage-in to stage-out as under ``staging="with-nodes"``)."""
        self.model = model
        self.staged = False
        if not getattr(model, "stages_separately", False) or self.staging != "bb-first":
            return
        why = unsupported()
        if why:
            logging.getLogger("burstbuffer").warning(
                "%s with %s keeps its two-phase behaviour on the %s job model (nodes held during the stagings)",
                name, why, getattr(model, "name", "?"))
            return
        self.staged = True

    def shape(self, job: Job) -> HoldShape:
        """`job`'s hold shape under the bound job model (`holds.NO_STAGING` unless the staged lifecycle is
        on: then the model's estimate at `bandwidth`)."""
        if not self.staged:
            return NO_STAGING
        return self.model.hold_shape(job, self.bandwidth)

    def waiting_jobs(self) -> list[Job]:
        """The jobs whose stage-in started and that are not on their nodes yet."""
        return [h.job for h in self.holds.values() if h.phase in ("staging", "staged")]

    def stage_in_done(self, job_id: str) -> None:
        h = self.holds.get(job_id)
        if h is not None and h.phase == "staging":
            h.phase = "staged"

    def nodes_released(self, profile: AvailabilityProfile, job_id: str, now: float) -> None:
        """`job_id`'s nodes are free (its stage-out starts): its BB is held until its stage-out's estimated end."""
        h = self.holds.get(job_id)
        if h is None or h.phase != "running":
            return
        self._drop_nodes(profile, h, now)
        h.phase = "finishing"
        self._bb_to(profile, h, now + h.s_out, now)

    def ended(self, profile: AvailabilityProfile, job_id: str, now: float) -> bool:
        """`job_id` ended: the rest of its holds is released. False if it holds none here."""
        h = self.holds.pop(job_id, None)
        if h is None:
            return False
        self._drop_nodes(profile, h, now)
        self._bb_to(profile, h, now, now)
        return True

    @staticmethod
    def _bb_to(profile: AvailabilityProfile, h: StagedHold, end: float, now: float) -> None:
        """Move the end of `h`'s BB hold to `end` (its start is in the past)."""
        if h.bbs:
            if end > h.bb_end and end > now:
                profile.reserve(max(h.bb_end, now), end, ProcSet(), h.bbs)
            elif end < h.bb_end and h.bb_end > now:
                profile.release(max(end, now), h.bb_end, ProcSet(), h.bbs)
        h.bb_end = end

    @staticmethod
    def _drop_nodes(profile: AvailabilityProfile, h: StagedHold, now: float) -> None:
        if h.procs and h.n_end > now:
            profile.release(max(h.n_start, now), h.n_end, h.procs, {})
        h.procs = ProcSet()

    @staticmethod
    def _take_nodes(profile: AvailabilityProfile, h: StagedHold, procs: ProcSet, start: float) -> None:
        end = start + h.job.walltime
        profile.reserve(start, end, procs, {})
        h.procs, h.n_start, h.n_end = procs, start, end

    def begin(self, profile: AvailabilityProfile, now: float, grace: float) -> dict[str, ProcSet]:
        """A decision starts: the node windows of the jobs not yet on nodes leave the profile (re-placed by
        `place_started`; returned: job id → its previous nodes), and the holds past their expected end (a running
        phase, a stage-out) are extended to now + `grace` (the overdue grace)."""
        self.wake = None
        prev: dict[str, ProcSet] = {}
        for h in self.holds.values():
            if h.phase in ("staging", "staged"):
                prev[h.job.id] = h.procs
                self._drop_nodes(profile, h, now)
        g = now + grace
        for h in self.holds.values():
            if h.phase == "running" and h.n_end <= now:
                profile.reserve(now, g, h.procs, {})
                h.n_start, h.n_end = now, g
            if h.bbs and h.bb_end <= now:
                self._bb_to(profile, h, g, now)
            if h.phase == "running" and h.bb_end < h.n_end + h.s_out:
                self._bb_to(profile, h, h.n_end + h.s_out, now)
        return prev

    def place_started(self, profile: AvailabilityProfile, platform, now: float, grace: float,
                      prev: dict[str, ProcSet], keep_nodes: bool) -> list[Start]:
        """Node windows of the jobs in stage-in or staged, in the order their stage-in started; the staged
        ones whose window starts now are started (`ProfileScheduler`'s docstring; a stage-in running past its
        estimate is placed from now + `grace`). With `keep_nodes` (conservative backfilling) a job keeps the nodes
        of its previous window (`prev`: job id → nodes) when they are free over its new one: the queued jobs'
        reservations were planned around them, so taking the lowest free nodes instead could break one (a job
        then starting after its reservation). Otherwise a job takes the lowest free nodes."""
        out: list[Start] = []
        for h in list(self.holds.values()):
            if h.phase not in ("staging", "staged"):
                continue
            t0 = now if h.phase == "staged" else (h.ready if h.ready > now else now + grace)
            fit = profile.earliest_fit(h.job, t0, bb_aware=False)
            if fit is None:                      # behind a hold without end
                continue
            procs = fit.procs
            old = prev.get(h.job.id) if keep_nodes else None
            if old and len(old) == h.job.res and _nodes_free(profile, old, fit.start, fit.start + h.job.walltime):
                procs = old
            self._take_nodes(profile, h, procs, fit.start)
            self._bb_to(profile, h, h.n_end + h.s_out, now)
            if h.phase == "staged" and fit.start == now:
                h.phase = "running"
                out.append(Start(h.job, procs, bind_slots(platform, procs, h.slots)))
        return out

    def commit(self, profile: AvailabilityProfile, job: Job, fit: Fit, now: float) -> Start | StageIn:
        """Start `job`'s stage-in now on `fit` (nodes from ``fit.start``; a job without BB: start it on its nodes,
        which must start now). The caller takes it out of its queue."""
        shape = self.shape(job)
        s, w = shape.stage_in, job.walltime
        bbs = fit.bb_per_storage(job.bb) if job.bb > 0 else {}
        h = StagedHold(job, tuple(sorted(fit.bb_of_node.values())), bbs, now, ProcSet(), fit.start, fit.start,
                       now + s, "staging", shape.stage_out)
        self._take_nodes(profile, h, fit.procs, fit.start)
        self._bb_to(profile, h, fit.start + w + shape.stage_out, now)
        self.holds[job.id] = h
        if job.bb <= 0:
            h.phase = "running"
            return Start(job, fit.procs, {})
        return StageIn(job, h.slots)


def _nodes_free(profile: AvailabilityProfile, procs: ProcSet, start: float, end: float) -> bool:
    """Whether every node of `procs` is free over [start, end) in `profile`."""
    want = mask_of(procs)
    for k in profile.window_keys(start, end):
        mask, _, _ = profile.value_at_key(k)
        if mask & want != want:
            return False
    return True
