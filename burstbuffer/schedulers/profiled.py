"""Shared state of the profile-based policies: queue, running jobs, availability profile.

Every policy of docs/policies.md is a few lines on top of `ProfileScheduler` (docs/README.md): the decision loop
drives `submit` / `job_ended` / `decide` (the `Scheduler` contract of `base.py`); the subclass only
implements `_schedule(now)`, calling `_fits_now`, `_start`, `_reserve` and `_unreserve`.

Running jobs hold their processors and BB bytes in the profile from their start until
start + walltime (their expected end, pessimistic as in EASY); a job that ends early gives back the
rest of its hold. A job still running at its expected end (possible in the I/O-aware model, whose
drains are not bounded by the walltime) keeps its resources: at each call its hold is extended to
``now + overdue_grace``.

Why a job waits (docs/wait-reasons.md): at the end of each `decide`, `wait_reasons` maps every job still
queued to one reason. A queue limit recorded in `limit_reasons` (hook for queue / QOS limits) comes
first; else, with F0 the free processors and BB bytes now before the decision started any job:
Resources (it asks more processors than F0), BurstBufferResources (F0's processors suffice, its BB
shares do not); else Priority if jobs started by this decision before it was looked at took what it
needed; else Reservation while the EASY head job's reservation is held (the backfill window), or the
policy's `blocked_reason` otherwise. The passes note the reason of a job when they look at it
(`_note_wait`); jobs they never looked at are classified after the decision. Cost: one O(log n)
profile look-up per decision plus one per job that was looked at and not started, and a few vector
operations over the queue (`wait_table`): the decision loop gets only the jobs whose reason changed.
"""
from __future__ import annotations

import logging
import math
import random
from dataclasses import dataclass, replace

from procset import ProcSet

from ..platforms.model import Platform
from .base import Job, Scheduler, StageIn, Start
from .holds import (NO_STAGING, STAGING_BANDWIDTH, STAGINGS, HoldShape, bind_slots, check_staging,
                    platform_fit_reason)
from .options import PERIOD_MIN, Choice, Custom, Number, Option, order_check, order_params_check, period_check, \
    queues_check
from .orders import Order, make_order
from .placement import bb_room, mask_of
from .profile import AvailabilityProfile, Fit
from .queues import Queue, QueueConfig, queue_config
from .wait_table import QueueTable, TrackedQueue

__all__ = ["ORDER_OPTIONS", "ProfileScheduler", "QUEUE_OPTIONS", "Reservation", "Running", "StagedHold"]

# --------------------------------------------------------------------------- the options of the profile
#: ``period``, ``overdue_grace``, ``staging``, ``staging_bandwidth``: every ProfileScheduler's
PERIOD = Option("period", Custom(period_check, "float", f">= {PERIOD_MIN:g}"),
                "[s] decide also at every multiple of PERIOD while jobs are queued (null: on events only)",
                nullable=True)
OVERDUE_GRACE = Option("overdue_grace", Number(0, open_low=True),
                       "[s] extension of the hold of a job still running past start + walltime")
STAGING = Option("staging", Choice(STAGINGS),
                 "on a job model that separates the stagings (three-phase): bb-first plans BB over the stagings "
                 "and nodes over the run, with-nodes holds the nodes from stage-in to stage-out (null: the "
                 "policy's own, bb-first for the EASY family, conservative-bb and plan, with-nodes for the others)",
                 nullable=True)
STAGING_BANDWIDTH_OPTION = Option("staging_bandwidth", Number(0, open_low=True),
                                  "[B/s] bandwidth of the stage-in/out estimates on the three-phase model")
#: the options of a policy that orders its queue (the window policies: their base order)
ORDER_OPTIONS = (
    Option("order", Custom(order_check, "str", ""),
           "queue order (the window's base order for the window policies): fcfs, sjf, ljf, small, large, "
           "bb-small, bb-large, wfp (null: fcfs; docs/orders-and-queues.md)", nullable=True, flag="--order",
           metavar="NAME"),
    Option("order_params", Custom(order_params_check, "table", ""),
           "parameters of the wfp order [s]: period 15, unit 60 (--wfp-unit), wall_floor 3600, wall_ceiling 43200",
           nullable=True, flag="--wfp-unit", metavar="S", flag_key="unit", flag_kind=Number(0, open_low=True)),
    Option("walltime_factor", Number(1),
           "the policy sees every requested walltime × this factor (holds, reservations, orders, queue routing); "
           "jobs still run and are killed under their own walltime"),
)
#: the options of a queue-based policy: an order, named queues
QUEUE_OPTIONS = ORDER_OPTIONS + (
    Option("queues", Custom(queues_check, "path or table", ""),
           "named queues: routing, limits, per-queue order (a TOML file such as workloads/mira-like-queues.toml; "
           "docs/orders-and-queues.md; null: one queue); adds queue and priority to jobs.csv",
           nullable=True, flag="--queues", metavar="FILE"),
)


@dataclass
class Running:
    """A started job's hold in the profile: `procs` and `bb_per_storage` over [start, hold_end)."""

    job: Job
    start: float
    hold_end: float
    procs: ProcSet
    bb_per_storage: dict[int, int]


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


class ProfileScheduler(Scheduler):
    """Base of the profile-based policies (docs/policies.md, Kopanski & Rzadca 2021, §3.2).

    Args:
        platform: the scheduler's view of the platform.
        seed: seed of the policy's private `random.Random` (``self.rng``), the only source of
            randomness of a policy (plan-α draws its annealing moves from it; the EASY family,
            filler and conservative-bb make no random choice).
        period: if set (> 0, seconds), `wakeup` asks to be called again at the next multiple of
            `period` while jobs are queued (periodic scheduling, e.g. every minute as in the
            paper's §3.1 example); None = decide on events only.
        overdue_grace: extension [s] of the hold of a job still running past start + walltime.
        order: the queue order (`orders.ORDERS` name or an `Order`; default fcfs = submission order):
            the order in which `_ordered` lists the queue (head job, reservations, backfilling).
        queues: a `QueueConfig` (named queues: routing, limits, per-queue order; None = one queue), or
            what `queues.queue_config` turns into one (a TOML path, ``{"path": FILE, "order": NAME}``).
        order_params: parameters of the wfp order (period, unit, wall_floor, wall_ceiling).
        staging: under a job model that separates the stagings (`holds`, three-phase): "bb-first" plans each
            job's nodes over its running phase and its BB over its stage-in and stage-out too (a `StageIn`
            first, then a `Start`); "with-nodes" keeps the two-phase plans there (the nodes held from stage-in
            to stage-out). None: the class's `default_staging`. Ignored under two-phase models.
        staging_bandwidth: [B/s] of the stage estimates (`holds.stage_estimate`; default the PFS link, 5 GB/s).
        walltime_factor: the policy sees every job's requested walltime multiplied by this factor (≥ 1; default
            1, the user's estimate): its holds, reservations, orders and queue routing use the inflated
            estimate, while the job still runs, and is killed, under its own walltime (the decisions carry
            the job as submitted). Casanova, ICS 632 "Job Scheduling" slides 31-32: inflating the estimates
            ×2-3 helps backfilling.

    Raises ValueError on a non-positive `period` or `overdue_grace`, a `walltime_factor` below 1, an unknown order or bad
    order parameters, a bad `staging` or `staging_bandwidth`; InputError for a bad queue file. Orders and
    queues: docs/orders-and-queues.md.

    The staged lifecycle (docs/io-model.md §3, docs/policies.md "On the three-phase model"), active when the
    bound job model separates the stagings and ``staging="bb-first"``: a job that fits now (its stage-in can
    start now: its nodes from now + stage-in) gets a `StageIn` (BB only) from `_start`; its planned nodes stay
    held in the profile from its estimated stage-in end. At every decision the jobs whose stage-in started are
    placed first, in the order their stage-in started: each takes the earliest node window from its
    stage-in's estimated end (from now once the stage-in ended; one `overdue_grace` later while a stage-in
    runs past its estimate), and a staged job whose window starts now gets its `Start` on those nodes, bound
    to the BB it staged into. Its BB hold is moved to the window's end + stage-out. This never overbooks the
    BB: every BB hold of a job in stage-in, running or stage-out began at or before now, so at every later
    instant the other holds are a subset of those at now.
    """

    name = "?"
    declared_options = (PERIOD, OVERDUE_GRACE, STAGING, STAGING_BANDWIDTH_OPTION)
    #: reason of a queued job that fits now beside the running jobs but was not started (docs/wait-reasons.md)
    blocked_reason = "Reservation"
    #: the ``staging`` of a policy that does not choose one: its behaviour on the three-phase model before the
    #: policies shared one lifecycle (fcfs, filler and the window policies keep their nodes through the
    #: stagings unless asked; the EASY family, conservative-bb, plan-α and user `Policy` subclasses stage)
    default_staging = "with-nodes"

    def __init__(self, platform: Platform, *, seed: int = 0, period: float | None = None,
                 overdue_grace: float = 1.0, order: str | Order | None = None,
                 queues: QueueConfig | None = None, order_params: dict | None = None,
                 staging: str | None = None, staging_bandwidth: float = STAGING_BANDWIDTH,
                 walltime_factor: float = 1.0):
        staging = self.default_staging if staging is None else staging
        if not (isinstance(walltime_factor, (int, float)) and math.isfinite(walltime_factor) and walltime_factor >= 1):
            raise ValueError(f"walltime_factor must be a finite number >= 1, got {walltime_factor!r}")
        #: the factor every requested walltime is multiplied by in this policy's view (1: the user's estimate)
        self.walltime_factor = float(walltime_factor)
        self._as_submitted: dict[str, Job] = {}    # walltime_factor != 1: job id → the job as submitted
        check_staging(staging, staging_bandwidth)
        self.staging, self.staging_bandwidth = staging, float(staging_bandwidth)
        #: the staged lifecycle is on (class docstring): set by `bind_job_model`
        self.staged = False
        self.holds: dict[str, StagedHold] = {}     # staged: jobs whose stage-in started, until they end
        self._wake: float | None = None            # staged: a planned stage-in start no event may come at
        self._held_bb: tuple[float, float, dict[int, int]] | None = None
        self._shape_model = None
        if period is not None and not period > 0:
            raise ValueError(f"period must be > 0 seconds, got {period!r}")
        if not overdue_grace > 0:
            raise ValueError(f"overdue_grace must be > 0 seconds, got {overdue_grace!r}")
        self.platform = platform
        self.seed = seed
        self.rng = random.Random(seed)
        self.period = period
        self.overdue_grace = float(overdue_grace)
        self.profile: AvailabilityProfile | None = None  # created at the first call (origin = now)
        self.running: dict[str, Running] = {}
        self._queue: dict[str, Job] = TrackedQueue()  # insertion order = submission order
        self._wait_table = QueueTable()
        self._order: dict[str, int] = {}
        self._seq = 0
        self._max_bb_node = max(platform.bb_capacity.values(), default=0)
        #: the head job's reservation made by the last `decide` (None if none was needed)
        self.last_reservation: Reservation | None = None
        self._held: Reservation | None = None
        #: the held reservation while it is not in the profile yet (`_reserve` with `lazy`): entered at the first fit
        #: asked for (`_fits_now`), never if none is
        self._pending: Reservation | None = None
        #: the head's reservation kept for the next decision (`_reserve`): (profile's `releases` when it was made,
        #: (job id, bb), the reservation), then, once dropped, (profile's `changes` after that, …)
        self._kept: tuple[int, tuple[str, bool], Reservation] | None = None
        #: job id → reason (`burstbuffer.metrics.definitions.WAIT_REASONS`) of the jobs whose reason changed at
        #: the last `decide` (new jobs included); None: use `wait_reasons`
        self.wait_reasons_changed: dict[str, str] | None = None
        self.wait_reasons = {}
        #: hook for queue limits: job id → a limit reason (e.g. "QOSMaxJobsPerUserLimit") that a policy with
        #: queues sets for the jobs its limits hold back and removes when they no longer do; it takes
        #: precedence over every other reason (docs/wait-reasons.md). Empty in the built-in policies.
        self.limit_reasons: dict[str, str] = {}
        self._free0: tuple[int, tuple[int, ...]] = (0, ())   # free counts now, before this decision's starts
        self._noted: dict[str, str] = {}                        # reasons noted during this decision's pass
        self._init_orders(order, queues, order_params or {})

    # ------------------------------------------------------------------ Scheduler contract
    def can_ever_fit(self, job: Job) -> str | None:
        """None if `job` fits the empty platform, else a one-line reason.

        Reasons: walltime not > 0; res < 1; res > number of compute nodes; bb per node larger than
        the largest BB node; res × bb not placeable on the BB nodes with each node's share on a
        single BB node (docs/workload.md, docs/policies.md).
        """
        job = self._seen(job)
        why = platform_fit_reason(self.platform, job)
        if why is not None:
            return why
        n = self.platform.nb_compute
        if self.queues is not None:
            q, why = self.queues.route(job, n)
            if q is None:
                return why
        return None

    def _seen(self, job: Job) -> Job:
        """`job` as this policy sees it: its walltime × `walltime_factor` (the job itself when the factor is 1)."""
        if self.walltime_factor == 1.0:
            return job
        return replace(job, walltime=job.walltime * self.walltime_factor)

    def submit(self, job: Job, now: float) -> None:
        """Queue `job` (submission order = call order).

        Raises ValueError on a duplicate id, or if the job can never fit (`can_ever_fit`; the
        decision loop must reject such a job instead of submitting it)."""
        if job.id in self._queue or job.id in self.running or job.id in self.holds:
            raise ValueError(f"job {job.id} submitted twice")
        reason = self.can_ever_fit(job)
        if reason is not None:
            raise ValueError(f"job {job.id} can never run: {reason}")
        if self.walltime_factor != 1.0:
            self._as_submitted[job.id] = job
            job = self._seen(job)
        self._ensure_profile(now)
        self._queue[job.id] = job
        if self.queues is not None:
            self._queue_of[job.id] = self.queues.route(job, self.platform.nb_compute)[0]
        self._order[job.id] = self._seq
        self._seq += 1

    def job_ended(self, job_id: str, now: float) -> None:
        """A started job ended at `now`: the rest of its hold (now → start + walltime) is released.
        A still-queued job is simply removed (e.g. killed before start). Raises KeyError for an
        unknown id."""
        self._ensure_profile(now)
        self.profile.advance(now)
        self._as_submitted.pop(job_id, None)
        h = self.holds.pop(job_id, None)
        if h is not None:                      # staged lifecycle
            self._order.pop(job_id, None)
            self._drop_nodes(h, now)
            self._bb_to(h, now, now)
            return
        run = self.running.pop(job_id, None)
        if run is None:
            if self._queue.pop(job_id, None) is None:
                raise KeyError(f"job_ended: unknown job {job_id!r}")
            self._order.pop(job_id, None)
            self._queue_of.pop(job_id, None)
            return
        self._order.pop(job_id, None)
        q = self._queue_of.pop(job_id, None)
        if q is not None:
            self._held_by_queue[q.name] -= run.job.res
        self.limit_reasons.pop(job_id, None)
        if run.hold_end > now:
            self.profile.release(now, run.hold_end, run.procs, run.bb_per_storage)

    def decide(self, now: float) -> list[Start]:
        """The jobs to start now (docs/policies.md); they leave the queue and hold their resources."""
        self._ensure_profile(now)
        self.profile.advance(now)
        if self._as_submitted:
            return [replace(d, job=self._as_submitted.get(d.job.id, d.job)) for d in self._decide(now)]
        return self._decide(now)

    def _decide(self, now: float) -> list[Start]:
        if self.staged:
            return self._decide_staged(now)
        self._extend_overdue(now)
        self.last_reservation = None
        self._free0 = self.profile.free_counts_at(now)
        self._noted = {}
        starts = self._schedule(now) if self._queue else []
        if self._held is not None:  # a policy must drop its reservation (Algorithm 1 line 18)
            self._unreserve()
        self._record_wait_reasons(now)
        return starts

    def _decide_staged(self, now: float) -> list[Start | StageIn]:
        """`decide` of the staged lifecycle (class docstring): the jobs whose stage-in started are placed
        first (`_place_started`), then the policy's `_schedule` decides for the queued jobs."""
        self.last_reservation = None
        self._free0 = self.profile.free_counts_at(now)
        self._noted = {}
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

    @property
    def wait_reasons(self) -> dict[str, str]:
        """Job id → reason (`burstbuffer.metrics.definitions.WAIT_REASONS`) of every job queued after the
        last `decide`, in submission order (docs/wait-reasons.md). A policy may assign its own map; the
        decision loop then reads it whole."""
        if self._wait_override is not None:
            return self._wait_override
        return self._wait_table.reasons()

    @wait_reasons.setter
    def wait_reasons(self, value: dict[str, str]) -> None:
        self._wait_override = value
        self.wait_reasons_changed = None

    def _record_wait_reasons(self, now: float) -> None:
        """Classify the jobs still queued (module docstring; docs/wait-reasons.md): the reason noted during
        the pass, else the one the free counts give after the decision (no reservation held), for the whole
        queue at once (`wait_table.QueueTable`); sets `wait_reasons_changed` to the jobs whose reason
        changed."""
        table = self._wait_table
        table.sync(self._queue)
        self._wait_override = None
        if not self._queue:
            self.wait_reasons_changed = {}
            return
        free0, bb0 = self._free0
        free1, bb1 = self.profile.free_counts_at(now)
        self.wait_reasons_changed = table.classify(free0, bb0, free1, bb1, self.blocked_reason,
                                                   self.limit_reasons, self._noted)

    def _note_wait(self, job: Job, now: float) -> None:
        """Note why `job`, looked at now by the pass and not started, waits (module docstring)."""
        r = self.limit_reasons.get(job.id) if self.limit_reasons else None
        if r is None and self.queues is not None and not self._eligible(job):
            r = "QOSGrpNodeLimit"      # its queue holds its share of the machine (Slurm's name for a group limit)
        if r is None:
            free0, bb0 = self._free0
            if job.res > free0:
                r = "Resources"
            elif job.bb > 0 and not bb_room(bb0, job.bb, job.res):
                r = "BurstBufferResources"
            else:
                free, bb = self.profile.free_counts_at(now)
                held = self._held
                if held is not None and held.start <= now:   # counts without the reservation
                    free += len(held.procs)
                    if held.bb_per_storage:
                        bb = tuple(b + held.bb_per_storage.get(i, 0) for i, b in zip(self.profile.bb_ids, bb))
                if job.res > free or (job.bb > 0 and not bb_room(bb, job.bb, job.res)):
                    r = "Priority"
                else:
                    r = "Reservation" if held is not None else self.blocked_reason
        self._noted[job.id] = r

    def wakeup(self, now: float) -> float | None:
        """Next multiple of `period` after `now` while jobs are queued; None without a period."""
        w = None
        if self.period is not None and self._queue:
            nxt = (math.floor(now / self.period) + 1) * self.period
            w = nxt if nxt > now else nxt + self.period
        if self._wake is not None and self._wake > now:   # staged: a planned stage-in start (no event may come)
            w = self._wake if w is None else min(w, self._wake)
        return w

    @property
    def queue(self) -> list[Job]:
        """Jobs submitted and not started on nodes (staged lifecycle: queued, in stage-in or staged), in
        submission order."""
        if not self.holds:
            return list(self._queue.values())
        jobs = list(self._queue.values()) + [h.job for h in self.holds.values() if h.phase in ("staging", "staged")]
        return sorted(jobs, key=lambda j: self._order[j.id])

    # ------------------------------------------------------------------ job model and staged lifecycle
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

    #: keep a staged job's previous nodes when they are still free over its new window (`_place_started`)
    keep_staged_nodes = False

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

    # ------------------------------------------------------------------ orders and queues
    def _init_orders(self, order, queues: QueueConfig | None, params: dict) -> None:
        n = self.platform.nb_compute

        def mk(o):
            name = o.name if isinstance(o, Order) else (o or "fcfs")
            return make_order(o, n, **(params if name == "wfp" else {}))

        self.order: Order = mk(order)
        queues = queue_config(queues)
        self.queues = queues
        self._queue_of: dict[str, Queue] = {}
        self._held_by_queue: dict[str, int] = {}
        self._rank_order: dict[int, Order] = {}
        if queues is not None:
            for q in queues.queues:
                self._held_by_queue[q.name] = 0
                name = queues.order_of(q, self.order.name)
                if q.rank not in self._rank_order:
                    self._rank_order[q.rank] = self.order if name == self.order.name else mk(name)
                elif self._rank_order[q.rank].name != name:
                    raise ValueError(f"queues {queues.source}: queues of one rank have different orders")
        #: queue order = submission order, one queue: `_ordered` is the queue as it is
        self._plain = queues is None and self.order.name == "fcfs"
        #: per started job: (queue name, priority at start) for jobs.csv (`job_facts`)
        self.job_facts: dict[str, tuple[str, float | None]] = {}

    @property
    def extra_job_columns(self) -> list[str]:
        """Columns this run adds to jobs.csv: ["queue", "priority"] with queues or a priority order
        (wfp), else none (jobs.csv stays as without orders; docs/orders-and-queues.md)."""
        if self.queues is not None or self.order.name == "wfp" or any(
                o.name == "wfp" for o in self._rank_order.values()):
            return ["queue", "priority"]
        return []

    def _order_key(self, job: Job, now: float) -> tuple:
        seq = self._order[job.id]
        if self.queues is None:
            return self.order.key(job, now, seq)
        q = self._queue_of[job.id]
        return (q.rank, *self._rank_order[q.rank].key(job, now, seq))

    def _ordered(self, now: float) -> list[Job]:
        """The queued jobs in queue order at `now` (ties: submission order; backfill-queue jobs
        after every production job)."""
        if self._plain:
            return list(self._queue.values())
        return sorted(self._queue.values(), key=lambda j: self._order_key(j, now))

    def _eligible(self, job: Job, extra: dict[str, int] | None = None) -> bool:
        """False if starting `job` now would take its queue past its share of the machine
        (`extra`: processors of the queue's jobs about to start, not yet counted)."""
        if self.queues is None:
            return True
        q = self._queue_of[job.id]
        held = self._held_by_queue[q.name] + (extra.get(q.name, 0) if extra else 0)
        return held + job.res <= q.cap(self.platform.nb_compute)

    def _priority(self, job: Job, now: float) -> float | None:
        if self.queues is None:
            return self.order.priority(job, now)
        return self._rank_order[self._queue_of[job.id].rank].priority(job, now)

    # ------------------------------------------------------------------ for policies
    def _schedule(self, now: float) -> list[Start]:  # pragma: no cover - abstract
        raise NotImplementedError

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

    def _start(self, job: Job, fit: Fit, now: float) -> Start | StageIn:
        """Start `job` now on `fit`: hold its resources until now + walltime, dequeue it. Staged lifecycle:
        its stage-in starts now (`_commit`)."""
        if self.staged:
            return self._commit(job, fit, now)
        bbs = fit.bb_per_storage(job.bb)
        end = now + job.walltime
        self.profile.reserve(now, end, fit.procs, bbs)
        self.running[job.id] = Running(job, now, end, fit.procs, bbs)
        del self._queue[job.id]
        if self.queues is not None:
            q = self._queue_of[job.id]
            self._held_by_queue[q.name] += job.res
            self.job_facts[job.id] = (q.name, self._priority(job, now))
        elif not self._plain:
            self.job_facts[job.id] = ("", self._priority(job, now))
        return Start(job, fit.procs, dict(fit.bb_of_node))

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

    def _submission_index(self, job: Job) -> int:
        return self._order[job.id]

    # ------------------------------------------------------------------ internals
    def _ensure_profile(self, now: float) -> None:
        if self.profile is None:
            self.profile = AvailabilityProfile(self.platform, origin=now)

    def _extend_overdue(self, now: float) -> None:
        for run in self.running.values():
            if run.hold_end <= now:
                new_end = now + self.overdue_grace
                self.profile.reserve(now, new_end, run.procs, run.bb_per_storage)
                run.hold_end = new_end
