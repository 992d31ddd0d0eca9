"""`ProfileScheduler`, the base of the policies on the availability profile: the queue, the running jobs and
their holds, and the decision. It owns one object per concern, each with its own state and a small interface,
each a module a policy author reads alone, none reading another's attributes (the scheduler passes each what
it needs: the profile, a job's hold shape, the submission indices): the queue order (`queue_order.QueueOrder`,
``_orders``: in which order the queue is looked at, named queues), the head job's reservation
(`reservations.Reservations`, ``_res``), the staged lifecycle on a job model that stages separately
(`staging.StagedLifecycle`, ``_staging``), the reservation book (`book.ReservationBook`, ``_book``) and the
wait-reason log (`wait_reasons.WaitLog`, ``_waits``: why each queued job waits). A policy subclass calls them
through the documented hooks (`_ordered`, `_eligible`, `_fits_now`, `_reserve`, `_unreserve`, `_start`,
`_backfill`, `_note_wait`, `shape`; docs/policies.md).

The staged lifecycle (docs/io-model.md §3, docs/policies.md "On the three-phase model"), active when the bound
job model separates the stagings and ``staging="bb-first"``: a job that fits now (its stage-in can start now: its
nodes from now + stage-in) gets a `StageIn` (BB only) from `_start`; its planned nodes stay held in the profile
from its estimated stage-in end. At every decision the jobs whose stage-in started are placed first, in the
order their stage-in started: each takes the earliest node window from its stage-in's estimated end (from now
once the stage-in ended; one `overdue_grace` later while a stage-in runs past its estimate), and a staged job
whose window starts now gets its `Start` on those nodes, bound to the BB it staged into. Its BB hold is moved
to the window's end + stage-out. This never overbooks the BB: every BB hold of a job in stage-in, running or
stage-out began at or before now, so at every later instant the other holds are a subset of those at now.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace

from procset import ProcSet

from ...platforms.model import Platform
from ..base import Job, Scheduler, StageIn, Start
from ..holds import STAGING_BANDWIDTH, HoldShape, platform_fit_reason
from ..options import PERIOD_MIN, Custom, Number, Option, period_check
from ..orders import Order
from ..profile import AvailabilityProfile, Fit
from ..queues import QueueConfig
from ..wait_table import TrackedQueue
from .book import ReservationBook
from .queue_order import QueueOrder
from .reservations import Reservation, Reservations, backfill
from .staging import STAGING, STAGING_BANDWIDTH_OPTION, StagedLifecycle
from .wait_reasons import WaitLog

__all__ = ["ProfileScheduler", "Running"]


#: ``period``, ``overdue_grace``, ``staging``, ``staging_bandwidth``: every ProfileScheduler's
PERIOD = Option("period", Custom(period_check, "float", f">= {PERIOD_MIN:g}"),
                "[s] decide also at every multiple of PERIOD while jobs are queued (null: on events only)",
                nullable=True)


OVERDUE_GRACE = Option("overdue_grace", Number(0, open_low=True),
                       "[s] extension of the hold of a job still running past start + walltime")


@dataclass
class Running:
    """A started job's hold in the profile: `procs` and `bb_per_storage` over [start, hold_end)."""

    job: Job
    start: float
    hold_end: float
    procs: ProcSet
    bb_per_storage: dict[int, int]


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
            first, then a `Start`; module docstring); "with-nodes" keeps the two-phase plans there (the nodes
            held from stage-in to stage-out). None: the class's `default_staging`. Ignored under two-phase models.
        staging_bandwidth: [B/s] of the stage estimates (`holds.stage_estimate`; default the PFS link, 5 GB/s).
        walltime_factor: the policy sees every job's requested walltime multiplied by this factor (≥ 1; default
            1, the user's estimate): its holds, reservations, orders and queue routing use the inflated
            estimate, while the job still runs, and is killed, under its own walltime (the decisions carry
            the job as submitted). Casanova, ICS 632 "Job Scheduling" slides 31-32: inflating the estimates
            ×2-3 helps backfilling.

    Raises ValueError on a non-positive `period` or `overdue_grace`, a `walltime_factor` below 1, an unknown order or bad
    order parameters, a bad `staging` or `staging_bandwidth`; InputError for a bad queue file. Orders and
    queues: docs/orders-and-queues.md.
    """

    name = "?"
    declared_options = (PERIOD, OVERDUE_GRACE, STAGING, STAGING_BANDWIDTH_OPTION)
    #: reason of a queued job that fits now beside the running jobs but was not started (docs/wait-reasons.md)
    blocked_reason = "Reservation"
    #: the ``staging`` of a policy that does not choose one: its behaviour on the three-phase model before the
    #: policies shared one lifecycle (fcfs, filler and the window policies keep their nodes through the
    #: stagings unless asked; the EASY family, conservative-bb, plan-α and user `Policy` subclasses stage)
    default_staging = "with-nodes"
    #: staged lifecycle: keep a staged job's previous nodes when they are still free over its new window
    #: (`staging.StagedLifecycle.place_started`)
    keep_staged_nodes = False

    def __init__(self, platform: Platform, *, seed: int = 0, period: float | None = None,
                 overdue_grace: float = 1.0, order: str | Order | None = None,
                 queues: QueueConfig | None = None, order_params: dict | None = None,
                 staging: str | None = None, staging_bandwidth: float = STAGING_BANDWIDTH,
                 walltime_factor: float = 1.0):
        if not (isinstance(walltime_factor, (int, float)) and math.isfinite(walltime_factor) and walltime_factor >= 1):
            raise ValueError(f"walltime_factor must be a finite number >= 1, got {walltime_factor!r}")
        #: the factor every requested walltime is multiplied by in this policy's view (1: the user's estimate)
        self.walltime_factor = float(walltime_factor)
        self._as_submitted: dict[str, Job] = {}    # walltime_factor != 1: job id → the job as submitted
        #: the staged lifecycle (`staging.StagedLifecycle`: its option, its holds, its wake-up)
        self._staging = StagedLifecycle(self.default_staging if staging is None else staging, staging_bandwidth)
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
        self._submission: dict[str, int] = {}      # job id → its submission index (not the queue `order`)
        self._seq = 0
        #: the head job's reservation (`reservations.Reservations`: held, kept, the last one made)
        self._res = Reservations()
        #: the queued jobs' reservations kept from one decision to the next (`book`; empty unless the policy
        #: keeps some: conservative-bb, a reservation depth); out of the profile between decisions
        self._book = ReservationBook()
        #: why each queued job waits (`wait_reasons.WaitLog`: the reasons noted by the passes, the free counts)
        self._waits = WaitLog()
        #: the queue order and named queues (`queue_order.QueueOrder`)
        self._orders = QueueOrder(platform.nb_compute, order, queues, order_params or {})

    # ------------------------------------------------------------------ views of the owned objects
    order = property(lambda self: self._orders.order, doc="The queue order (`Order`).")
    queues = property(lambda self: self._orders.queues, doc="The named queues (`QueueConfig`), or None.")
    job_facts = property(lambda self: self._orders.job_facts,
                         doc="Per started job: (queue name, priority at start), for jobs.csv.")
    extra_job_columns = property(lambda self: self._orders.extra_job_columns,
                                 doc="Columns this run adds to jobs.csv (`QueueOrder.extra_job_columns`).")
    _plain = property(lambda self: self._orders.plain, doc="Queue order = submission order, one queue.")
    staged = property(lambda self: self._staging.staged,
                      doc="The staged lifecycle is on (module docstring; set by `bind_job_model`).")
    frees_nodes_before_stage_out = property(lambda self: self._staging.staged,
                                            doc="True while the staged lifecycle is on (nodes freed first).")
    holds = property(lambda self: self._staging.holds, doc="Job id → `StagedHold` of the jobs in a staged phase.")
    staging = property(lambda self: self._staging.staging, doc='"bb-first" or "with-nodes".')
    staging_bandwidth = property(lambda self: self._staging.bandwidth, doc="[B/s] of the stage estimates.")

    @property
    def last_reservation(self) -> Reservation | None:
        """The head job's reservation made by the last `decide` (None if none was needed)."""
        return self._res.last

    @last_reservation.setter
    def last_reservation(self, r: Reservation | None) -> None:
        self._res.last = r

    # ------------------------------------------------------------------ the Scheduler contract
    def can_ever_fit(self, job: Job) -> str | None:
        """None if `job` fits the empty platform, else a one-line reason.

        Reasons: walltime not > 0; res < 1; res > number of compute nodes; bb per node larger than
        the largest BB node; res × bb not placeable on the BB nodes with each node's share on a
        single BB node (docs/workload.md, docs/policies.md); no queue takes it (with queues).
        """
        job = self._seen(job)
        why = platform_fit_reason(self.platform, job)
        return why if why is not None else self._orders.route_reason(job)

    def _seen(self, job: Job) -> Job:
        """`job` as this policy sees it: its walltime × `walltime_factor` (the job itself when the factor is 1)."""
        if self.walltime_factor == 1.0:
            return job
        return replace(job, walltime=job.walltime * self.walltime_factor)

    def submit(self, job: Job, now: float) -> None:
        """Queue `job` (submission order = call order).

        Raises ValueError on a duplicate id, or if the job can never fit (`can_ever_fit`; the
        decision loop must reject such a job instead of submitting it)."""
        if job.id in self._queue or job.id in self.running or job.id in self._staging.holds:
            raise ValueError(f"job {job.id} submitted twice")
        reason = self.can_ever_fit(job)
        if reason is not None:
            raise ValueError(f"job {job.id} can never run: {reason}")
        if self.walltime_factor != 1.0:
            self._as_submitted[job.id] = job
            job = self._seen(job)
        self._ensure_profile(now)
        self._queue[job.id] = job
        self._orders.admit(job)
        self._submission[job.id] = self._seq
        self._seq += 1

    def job_ended(self, job_id: str, now: float) -> None:
        """A started job ended at `now`: the rest of its hold (now → start + walltime) is released.
        A still-queued job is simply removed (e.g. killed before start). Raises KeyError for an
        unknown id."""
        self._book.forget(job_id)
        self._ensure_profile(now)
        self.profile.advance(now)
        self._as_submitted.pop(job_id, None)
        if self._staging.ended(self.profile, job_id, now):       # staged lifecycle
            self._submission.pop(job_id, None)
            return
        run = self.running.pop(job_id, None)
        if run is None:
            if self._queue.pop(job_id, None) is None:
                raise KeyError(f"job_ended: unknown job {job_id!r}")
            self._submission.pop(job_id, None)
            self._orders.left(job_id, None)
            return
        self._submission.pop(job_id, None)
        self._orders.left(job_id, run.job.res)
        self._waits.limits.pop(job_id, None)
        if run.hold_end > now:
            self.profile.release(now, run.hold_end, run.procs, run.bb_per_storage)

    def decide(self, now: float) -> list[Start]:
        """The jobs to start now (docs/policies.md); they leave the queue and hold their resources."""
        self._ensure_profile(now)
        self.profile.advance(now)
        out = self._decide(now)
        if self._book.plans:       # the kept reservations leave the profile (after the wait reasons read it)
            self._book.lift(self.profile)
        if self._as_submitted:
            return [replace(d, job=self._as_submitted.get(d.job.id, d.job)) for d in out]
        return out

    def _decide(self, now: float) -> list[Start | StageIn]:
        """One decision: (staged lifecycle: the jobs whose stage-in started are placed first), then the policy's
        `_schedule` for the queued jobs; a reservation still held is dropped (Algorithm 1 line 18), and the
        queued jobs' wait reasons are recorded."""
        staging, profile = self._staging, self.profile
        if not staging.staged:
            self._extend_overdue(now)
        self._res.last = None
        self._waits.begin(profile.free_counts_at(now))
        out: list[Start | StageIn] = []
        if staging.staged:
            prev = staging.begin(profile, now, self.overdue_grace)
            out = staging.place_started(profile, self.platform, now, self.overdue_grace, prev, self.keep_staged_nodes)
        if self._queue:
            out += self._schedule(now)
        if self._res.held is not None:
            self._unreserve()
        self._record_wait_reasons(now)
        return out

    def wakeup(self, now: float) -> float | None:
        """Next multiple of `period` after `now` while jobs are queued; None without a period."""
        w = None
        if self.period is not None and self._queue:
            nxt = (math.floor(now / self.period) + 1) * self.period
            w = nxt if nxt > now else nxt + self.period
        wake = self._staging.wake
        if wake is not None and wake > now:     # staged: a planned stage-in start (no event may come)
            w = wake if w is None else min(w, wake)
        return w

    @property
    def queue(self) -> list[Job]:
        """Jobs submitted and not started on nodes (staged lifecycle: queued, in stage-in or staged), in
        submission order."""
        if not self._staging.holds:
            return list(self._queue.values())
        jobs = list(self._queue.values()) + self._staging.waiting_jobs()
        return sorted(jobs, key=lambda j: self._submission[j.id])

    def bind_job_model(self, model) -> None:
        """Plan with `model`'s hold shapes (`staging.StagedLifecycle.bind`; `_staging_unsupported`)."""
        self._staging.bind(model, self.name, self._staging_unsupported)

    def _staging_unsupported(self) -> str | None:
        """The option of this policy the staged lifecycle does not support (a one-word reason), or None."""
        return "queues" if self.queues is not None else None

    def stage_in_done(self, job_id: str, now: float) -> None:
        self._staging.stage_in_done(job_id)

    def nodes_released(self, job_id: str, now: float) -> None:
        h = self._staging.holds.get(job_id)
        if h is not None and h.phase == "running":
            self._ensure_profile(now)
            self.profile.advance(now)
            self._staging.nodes_released(self.profile, job_id, now)

    # ------------------------------------------------------------------ the hooks of a policy's `_schedule`
    def _schedule(self, now: float) -> list[Start]:  # pragma: no cover - abstract
        raise NotImplementedError

    def shape(self, job: Job) -> HoldShape:
        """`job`'s hold shape under the bound job model (`holds.NO_STAGING` unless the staged lifecycle is on)."""
        return self._staging.shape(job)

    def _ordered(self, now: float) -> list[Job]:
        """The queued jobs in queue order at `now` (ties: submission order; backfill-queue jobs
        after every production job)."""
        return self._orders.ordered(self._queue.values(), self._submission, now)

    def _eligible(self, job: Job, extra: dict[str, int] | None = None) -> bool:
        """False if starting `job` now would take its queue past its share of the machine (`QueueOrder.eligible`)."""
        return self._orders.eligible(job, extra)

    def _submission_index(self, job: Job) -> int:
        return self._submission[job.id]

    def _fits_now(self, job: Job, now: float, *, bb: bool = True) -> Fit | None:
        """Where `job` fits if it starts now, around holds and the held reservation (`Reservations.fits_now`; staged
        lifecycle: its stage-in can start now)."""
        return self._res.fits_now(self.profile, job, now, self._staging.shape(job), bb=bb)

    def _reserve(self, job: Job, now: float, *, bb: bool, lazy: bool = False) -> Reservation | None:
        """Reserve for `job` at its earliest time ≥ now (`Reservations.reserve`, in its hold shape); the staged
        lifecycle asks to be called when the reserved stage-in should start (`wakeup`). None if it can never fit."""
        staging = self._staging
        shape = staging.shape(job)
        r = self._res.reserve(self.profile, job, now, shape, bb=bb, lazy=lazy, staged=staging.staged)
        if r is not None and staging.staged:
            staging.wake = max(r.start - shape.stage_in, now)
        return r

    def _unreserve(self) -> None:
        """Drop the reservation (Algorithm 1 line 18: re-acquired at the next scheduling; `Reservations.unreserve`)."""
        self._res.unreserve(self.profile)

    def _backfill(self, jobs: list[Job], now: float) -> list[Start | StageIn]:
        """BACKFILL of Algorithm 1: start, in the given order, every job that fits now (`reservations.backfill`)."""
        return backfill(self, jobs, now, staged=self._staging.staged)

    def _start(self, job: Job, fit: Fit, now: float) -> Start | StageIn:
        """Start `job` now on `fit`: hold its resources until now + walltime, dequeue it. Staged lifecycle:
        its stage-in starts now (`StagedLifecycle.commit`)."""
        if self._staging.staged:
            del self._queue[job.id]
            return self._staging.commit(self.profile, job, fit, now)
        bbs = fit.bb_per_storage(job.bb)
        end = now + job.walltime
        self.profile.reserve(now, end, fit.procs, bbs)
        self.running[job.id] = Running(job, now, end, fit.procs, bbs)
        del self._queue[job.id]
        self._orders.started(job, now)
        return Start(job, fit.procs, dict(fit.bb_of_node))

    def _ensure_profile(self, now: float) -> None:
        if self.profile is None:
            self.profile = AvailabilityProfile(self.platform, origin=now)

    def _extend_overdue(self, now: float) -> None:
        for run in self.running.values():
            if run.hold_end <= now:
                new_end = now + self.overdue_grace
                self.profile.reserve(now, new_end, run.procs, run.bb_per_storage)
                run.hold_end = new_end

    # ------------------------------------------------------------------ why the queued jobs wait (`_waits`)
    @property
    def wait_reasons(self) -> dict[str, str]:
        """Job id → reason (`burstbuffer.metrics.definitions.WAIT_REASONS`) of every job queued after the
        last `decide`, in submission order (docs/wait-reasons.md). A policy may assign its own map; the
        decision loop then reads it whole."""
        return self._waits.reasons

    @wait_reasons.setter
    def wait_reasons(self, value: dict[str, str]) -> None:
        self._waits.set_reasons(value)

    @property
    def wait_reasons_changed(self) -> dict[str, str] | None:
        """Job id → reason of the jobs whose reason changed at the last `decide` (new jobs included); None: use
        `wait_reasons`."""
        return self._waits.changed

    @property
    def limit_reasons(self) -> dict[str, str]:
        """Hook for queue limits: job id → a limit reason (e.g. "QOSMaxJobsPerUserLimit") that a policy with
        queues sets for the jobs its limits hold back and removes when they no longer do; it takes precedence
        over every other reason (docs/wait-reasons.md). Empty in the built-in policies."""
        return self._waits.limits

    def _record_wait_reasons(self, now: float) -> None:
        """Classify the jobs still queued after the decision (`wait_reasons.WaitLog.record`)."""
        self._waits.record(self._queue, lambda: self.profile.free_counts_at(now), self.blocked_reason)

    def _note_wait(self, job: Job, now: float) -> None:
        """Note why `job`, looked at now by the pass and not started, waits (package docstring;
        `WaitLog.reason`): its queue's share (QOSGrpNodeLimit) when its queue may not start it."""
        over_share = self.queues is not None and not self._eligible(job)
        self._waits.note(job, self._waits.reason(job, self.profile, now, self._res.held, over_share,
                                                  self.blocked_reason))
