"""The staged lifecycle of a profile-based policy on a job model that stages separately (docs/io-model.md §3,
docs/policies.md "On the three-phase model"): a job's BB held over its stagings and its nodes over its run
(`StagedHold`), the stage-in started first (`StageIn`), the nodes placed once it is staged (`_place_started`).
One of the four concerns of `ProfileScheduler` (its class docstring states the rule); the state it reads
(``staged``, ``holds``, ``_wake``, ``_shape_model``) is set by `ProfileScheduler.__init__`."""
from __future__ import annotations

import logging
from dataclasses import dataclass

from procset import ProcSet

from ..base import Job, StageIn, Start
from ..holds import NO_STAGING, STAGINGS, HoldShape, bind_slots
from ..options import Choice, Number, Option
from ..placement import mask_of
from ..profile import Fit

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
    """The staged lifecycle of a `ProfileScheduler` (module docstring)."""

    #: keep a staged job's previous nodes when they are still free over its new window (`_place_started`)
    keep_staged_nodes = False

    def _decide_staged(self, now: float) -> list[Start | StageIn]:
        """`decide` of the staged lifecycle (class docstring): the jobs whose stage-in started are placed
        first (`_place_started`), then the policy's `_schedule` decides for the queued jobs."""
        self.last_reservation = None
        self._waits.begin(self.profile.free_counts_at(now))
        self._wake = None
        prev: dict[str, ProcSet] = {}
        for h in self.holds.values():             # node windows of the jobs not yet on nodes: re-placed below
            if h.phase in ("staging", "staged"):
                prev[h.job.id] = h.procs
                self._drop_nodes(h, now)
        self._extend_staged(now)
        out = self._place_started(now, prev)
        if self._queue:
            out += self._schedule(now)
        if self._held is not None:
            self._unreserve()
        self._record_wait_reasons(now)
        return out

    def bind_job_model(self, model) -> None:
        """Plan with `model`'s hold shapes (`holds.HoldShape`): the staged lifecycle is on when the model
        separates the stagings (``model.stages_separately``) and ``staging="bb-first"``, unless the policy
        names an option the lifecycle does not support (`_staging_unsupported`; then, with a warning, the
        nodes are held from stage-in to stage-out as under ``staging="with-nodes"``)."""
        self._shape_model = model
        self.staged = False
        if not getattr(model, "stages_separately", False) or self.staging != "bb-first":
            return
        why = self._staging_unsupported()
        if why:
            logging.getLogger("burstbuffer").warning(
                "%s with %s keeps its two-phase behaviour on the %s job model (nodes held during the stagings)",
                self.name, why, getattr(model, "name", "?"))
            return
        self.staged = True

    @property
    def frees_nodes_before_stage_out(self) -> bool:
        """True while the staged lifecycle is on (the nodes are freed at "nodes-released")."""
        return self.staged

    def _staging_unsupported(self) -> str | None:
        """The option of this policy the staged lifecycle does not support (a one-word reason), or None."""
        return "queues" if self.queues is not None else None

    def shape(self, job: Job) -> HoldShape:
        """`job`'s hold shape under the bound job model (`holds.NO_STAGING` unless the staged lifecycle is
        on: then the model's estimate at ``staging_bandwidth``)."""
        if not self.staged:
            return NO_STAGING
        return self._shape_model.hold_shape(job, self.staging_bandwidth)

    def stage_in_done(self, job_id: str, now: float) -> None:
        h = self.holds.get(job_id)
        if h is not None and h.phase == "staging":
            h.phase = "staged"

    def nodes_released(self, job_id: str, now: float) -> None:
        h = self.holds.get(job_id)
        if h is None or h.phase != "running":
            return
        self._ensure_profile(now)
        self.profile.advance(now)
        self._drop_nodes(h, now)
        h.phase = "finishing"
        self._bb_to(h, now + h.s_out, now)

    def _bb_to(self, h: StagedHold, end: float, now: float) -> None:
        """Move the end of `h`'s BB hold to `end` (its start is in the past)."""
        if h.bbs:
            if end > h.bb_end and end > now:
                self.profile.reserve(max(h.bb_end, now), end, ProcSet(), h.bbs)
            elif end < h.bb_end and h.bb_end > now:
                self.profile.release(max(end, now), h.bb_end, ProcSet(), h.bbs)
        h.bb_end = end

    def _drop_nodes(self, h: StagedHold, now: float) -> None:
        if h.procs and h.n_end > now:
            self.profile.release(max(h.n_start, now), h.n_end, h.procs, {})
        h.procs = ProcSet()

    def _take_nodes(self, h: StagedHold, procs: ProcSet, start: float) -> None:
        end = start + h.job.walltime
        self.profile.reserve(start, end, procs, {})
        h.procs, h.n_start, h.n_end = procs, start, end

    def _extend_staged(self, now: float) -> None:
        """Holds past their expected end (a running phase, a stage-out) are extended to now + overdue_grace."""
        g = now + self.overdue_grace
        for h in self.holds.values():
            if h.phase == "running" and h.n_end <= now:
                self.profile.reserve(now, g, h.procs, {})
                h.n_start, h.n_end = now, g
            if h.bbs and h.bb_end <= now:
                self._bb_to(h, g, now)
            if h.phase == "running" and h.bb_end < h.n_end + h.s_out:
                self._bb_to(h, h.n_end + h.s_out, now)

    def _place_started(self, now: float, prev: dict[str, ProcSet] | None = None) -> list[Start]:
        """Node windows of the jobs in stage-in or staged, in the order their stage-in started; the staged
        ones whose window starts now are started (class docstring). With `keep_staged_nodes` (conservative
        backfilling) a job keeps the nodes of its previous window (`prev`: job id → nodes) when they are free
        over its new one: the queued jobs' reservations were planned around them, so taking the lowest free
        nodes instead could break one (a job then starting after its reservation). Otherwise a job takes the
        lowest free nodes."""
        out: list[Start] = []
        prev = prev or {}
        for h in list(self.holds.values()):
            if h.phase not in ("staging", "staged"):
                continue
            t0 = now if h.phase == "staged" else (h.ready if h.ready > now else now + self.overdue_grace)
            fit = self.profile.earliest_fit(h.job, t0, bb_aware=False)
            if fit is None:                      # behind a hold without end
                continue
            procs = fit.procs
            old = prev.get(h.job.id) if self.keep_staged_nodes else None
            if old and len(old) == h.job.res and self._nodes_free(old, fit.start, fit.start + h.job.walltime):
                procs = old
            self._take_nodes(h, procs, fit.start)
            self._bb_to(h, h.n_end + h.s_out, now)
            if h.phase == "staged" and fit.start == now:
                h.phase = "running"
                out.append(Start(h.job, procs, bind_slots(self.platform, procs, h.slots)))
        return out

    def _nodes_free(self, procs: ProcSet, start: float, end: float) -> bool:
        """Whether every node of `procs` is free over [start, end) in the profile."""
        want = mask_of(procs)
        for k in self.profile.window_keys(start, end):
            mask, _, _ = self.profile.value_at_key(k)
            if mask & want != want:
                return False
        return True

    def _commit(self, job: Job, fit: Fit, now: float) -> Start | StageIn:
        """Staged lifecycle: start `job`'s stage-in now on `fit` (nodes from ``fit.start``; a job without BB:
        start it on its nodes, which must start now)."""
        del self._queue[job.id]
        shape = self.shape(job)
        s, w = shape.stage_in, job.walltime
        bbs = fit.bb_per_storage(job.bb) if job.bb > 0 else {}
        h = StagedHold(job, tuple(sorted(fit.bb_of_node.values())), bbs, now, ProcSet(), fit.start, fit.start,
                       now + s, "staging", shape.stage_out)
        self._take_nodes(h, fit.procs, fit.start)
        self._bb_to(h, fit.start + w + shape.stage_out, now)
        self.holds[job.id] = h
        if job.bb <= 0:
            h.phase = "running"
            return Start(job, fit.procs, {})
        return StageIn(job, h.slots)
