"""`ProfileScheduler`, the base of the policies on the availability profile: the queue, the running jobs and
their holds, and the decision — put together from three concerns, each a module a policy author reads alone:
`queue_order` (in which order the queue is looked at), `reservations` (the head job's reservation and
backfilling) and `staging` (the staged lifecycle on a job model that stages separately); and owning two
objects: the reservation book (`book.ReservationBook`, ``_book``) and the wait-reason log
(`wait_reasons.WaitLog`, ``_waits``: why each queued job waits)."""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace

from procset import ProcSet

from ...platforms.model import Platform
from ..base import Job, Scheduler, StageIn, Start
from ..holds import STAGING_BANDWIDTH, check_staging, platform_fit_reason
from ..options import PERIOD_MIN, Custom, Number, Option, period_check
from ..orders import Order
from ..profile import AvailabilityProfile, Fit
from ..queues import QueueConfig
from ..placement import bb_room
from ..wait_table import TrackedQueue
from .book import ReservationBook
from .queue_order import QueueOrder
from .reservations import Reservation, Reservations
from .staging import STAGING, STAGING_BANDWIDTH_OPTION, StagedHold, StagedLifecycle
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


class ProfileScheduler(QueueOrder, Reservations, StagedLifecycle, Scheduler):
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
        self._submission: dict[str, int] = {}      # job id → its submission index (not the queue `order`)
        self._seq = 0
        self._max_bb_node = max(platform.bb_capacity.values(), default=0)
        #: the head job's reservation made by the last `decide` (None if none was needed)
        self.last_reservation: Reservation | None = None
        self._held: Reservation | None = None
        #: the queued jobs' reservations kept from one decision to the next (`book`; empty unless the policy
        #: keeps some: conservative-bb, a reservation depth); out of the profile between decisions
        self._book = ReservationBook()
        #: the held reservation while it is not in the profile yet (`_reserve` with `lazy`): entered at the first fit
        #: asked for (`_fits_now`), never if none is
        self._pending: Reservation | None = None
        #: the head's reservation kept for the next decision (`_reserve`): (profile's `releases` when it was made,
        #: (job id, bb), the reservation), then, once dropped, (profile's `changes` after that, …)
        self._kept: tuple[int, tuple[str, bool], Reservation] | None = None
        #: why each queued job waits (`wait_reasons.WaitLog`: the reasons noted by the passes, the free counts)
        self._waits = WaitLog()
        self._init_orders(order, queues, order_params or {})

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
        h = self.holds.pop(job_id, None)
        if h is not None:                      # staged lifecycle
            self._submission.pop(job_id, None)
            self._drop_nodes(h, now)
            self._bb_to(h, now, now)
            return
        run = self.running.pop(job_id, None)
        if run is None:
            if self._queue.pop(job_id, None) is None:
                raise KeyError(f"job_ended: unknown job {job_id!r}")
            self._submission.pop(job_id, None)
            self._queue_of.pop(job_id, None)
            return
        self._submission.pop(job_id, None)
        q = self._queue_of.pop(job_id, None)
        if q is not None:
            self._held_by_queue[q.name] -= run.job.res
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

    def _decide(self, now: float) -> list[Start]:
        if self.staged:
            return self._decide_staged(now)
        self._extend_overdue(now)
        self.last_reservation = None
        self._waits.begin(self.profile.free_counts_at(now))
        starts = self._schedule(now) if self._queue else []
        if self._held is not None:  # a policy must drop its reservation (Algorithm 1 line 18)
            self._unreserve()
        self._record_wait_reasons(now)
        return starts

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
        return sorted(jobs, key=lambda j: self._submission[j.id])

    def _schedule(self, now: float) -> list[Start]:  # pragma: no cover - abstract
        raise NotImplementedError

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
        """Note why `job`, looked at now by the pass and not started, waits (package docstring): a limit reason,
        its queue's share (QOSGrpNodeLimit), else Resources / BurstBufferResources from the free counts before
        the decision, Priority if this decision's starts took what it needed, else Reservation while the head's
        reservation is held, or the policy's `blocked_reason`."""
        limits = self._waits.limits
        r = limits.get(job.id) if limits else None
        if r is None and self.queues is not None and not self._eligible(job):
            r = "QOSGrpNodeLimit"      # its queue holds its share of the machine (Slurm's name for a group limit)
        if r is None:
            free0, bb0 = self._waits.free0
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
        self._waits.note(job, r)

