"""The EASY family and conservative backfilling on the three-phase job model (docs/io-model.md §3,
docs/policies.md "On the three-phase model"; issue 14).

On the three-phase model a job holds burst buffer (BB) alone during its stage-in (it is still pending) and its
stage-out (its compute nodes are released), and nodes + BB while it runs. These policies plan each job as two
intervals on the one availability profile (`profile.AvailabilityProfile`):

- nodes over the running phase ``[t, t + walltime)``;
- BB over ``[t − s_in, t + walltime + s_out)``, where ``s_in`` and ``s_out`` are the stage-in and stage-out
  estimates of `stage_estimate`.

"Fits now" means: the job's stage-in can start now, i.e. it fits with its nodes from ``t = now + s_in`` (a job
without BB: ``t = now``). The head job's reservation (fcfs-bb, sjf-bb: nodes and BB; fcfs-easy: nodes only,
the flaw of Kopanski & Rzadca, Euro-Par 2021, §3.1) is the earliest such plan; conservative backfilling gives
one to every queued job (kept between decisions and compressed, as `conservative-bb`).

A job that fits now gets a `StageIn` (BB only); its planned nodes stay held in the profile from its estimated
stage-in end. At every decision the jobs whose stage-in started are placed first, in the order their stage-in
started: each takes the earliest node window from its stage-in's estimated end (from now once the stage-in
ended; one `overdue_grace` later while a stage-in runs past its estimate), and a staged job whose window starts
now gets its `Start` on those nodes, bound to the BB it staged into. Its BB hold is moved to the window's end +
``s_out``. This never overbooks the BB: every BB hold of a job in stage-in, running or stage-out began at or
before now, so at every later instant the other holds are a subset of those at now.

**Stage estimates** (`stage_estimate`): the job's bytes (res × bb) over ``staging_bandwidth`` [B/s], by default
the paper's PFS link, 5 GB/s (docs/platform.md §1): the time of the transfer alone on the link, a lower bound;
both stagings are bounded by nothing else in the model (docs/io-model.md §3). A stage-in that runs longer moves
the job's node window later at each decision (its nodes stay free for others meanwhile, but for what the
profile reserves beyond); a stage-out that runs longer keeps its BB held, extended by ``overdue_grace`` at
each decision, as every overdue hold.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass

from procset import ProcSet

from ..platforms.model import Platform
from .base import Job, StageIn, Start
from .placement import bb_room, lowest_mask, mask_of, place_bb, procset_of
from .profile import Fit
from .profiled import ProfileScheduler, Reservation

__all__ = ["StagedBackfilling", "bind_slots", "stage_estimate", "STAGING_BANDWIDTH", "STAGINGS", "staged_variant"]

#: default stage-in / stage-out bandwidth [B/s]: the paper's PFS link (docs/platform.md §1)
STAGING_BANDWIDTH = 5e9
#: values of the EASY family's and conservative-bb's ``staging`` option
STAGINGS = ("bb-first", "with-nodes")


def stage_estimate(job: Job, bandwidth: float) -> float:
    """Estimated length [s] of `job`'s stage-in (= of its stage-out): res × bb bytes / `bandwidth` [B/s]; 0 for
    a job without BB."""
    return job.bb_total / bandwidth if job.bb > 0 else 0.0


def bind_slots(platform: Platform, procs: ProcSet, slots: tuple[int, ...]) -> dict[int, int]:
    """Compute node → BB node: each node of `procs`, in id order, takes a remaining slot (BB node of one of
    the job's shares, `StageIn.bb_slots`) on the first BB node of its preference list (docs/platform.md §2:
    own chassis, own group, any). {} for a job without BB."""
    if not slots:
        return {}
    left: dict[int, int] = {}
    for b in slots:
        left[b] = left.get(b, 0) + 1
    out = {}
    for node in procs:
        b = next((b for b in platform.bb_preference(node) if left.get(b, 0) > 0), None)
        if b is None:
            b = next(b for b, k in left.items() if k > 0)
        left[b] -= 1
        out[node] = b
    return out


def check_staging(staging: str, bandwidth: float) -> None:
    """ValueError unless `staging` is one of `STAGINGS` and `bandwidth` > 0 and finite."""
    if staging not in STAGINGS:
        raise ValueError(f"unknown staging {staging!r}; valid: {', '.join(STAGINGS)}")
    if not (isinstance(bandwidth, (int, float)) and 0 < bandwidth < math.inf):
        raise ValueError(f"staging_bandwidth must be a positive number of bytes per second, got {bandwidth!r}")


def staged_variant(sched: ProfileScheduler, model: str, *, mode: str, reserve_bb: bool, sjf: bool,
                   unsupported: str | None):
    """What `Scheduler.for_job_model` of the EASY family and conservative-bb returns: on ``three-phase`` with
    ``staging="bb-first"`` the `StagedBackfilling` of the same policy and options; `sched` itself otherwise
    (also, with a warning, when `unsupported` names an option the three-phase variant does not have)."""
    if model != "three-phase" or sched.staging != "bb-first":
        return sched
    if unsupported:
        logging.getLogger("burstbuffer").warning(
            "%s with %s keeps its two-phase behaviour on the three-phase model (nodes held during the stagings)",
            sched.name, unsupported)
        return sched
    return StagedBackfilling(sched.platform, mode=mode, reserve_bb=reserve_bb, sjf=sjf, name=sched.name,
                             staging_bandwidth=sched.staging_bandwidth, seed=sched.seed, period=sched.period,
                             overdue_grace=sched.overdue_grace, order=sched.order)


@dataclass
class _Held:
    """A job whose stage-in started: its BB (`bbs` per BB node, until `bb_end`) and its nodes (`procs` over
    [`n_start`, `n_end`): planned while in stage-in, allocated while running, none once released)."""

    job: Job
    slots: tuple[int, ...]
    bbs: dict[int, int]
    bb_end: float
    procs: ProcSet
    n_start: float
    n_end: float
    ready: float          # estimated end of the stage-in [s]
    phase: str            # "staging" | "staged" | "running" | "finishing"
    s_out: float


@dataclass
class _Plan:
    """A queued job's reservation (nodes over [fit.start, n_end), BB `bbs` over [b_start, b_end))."""

    fit: Fit
    n_end: float
    bbs: dict[int, int]
    b_start: float
    b_end: float
    made_at: float


class StagedBackfilling(ProfileScheduler):
    """fcfs-easy, fcfs-bb, sjf-bb (``mode="easy"``) or conservative-bb (``mode="conservative"``) on the
    three-phase job model (module docstring).

    Args:
        platform, seed, period, overdue_grace, order: as `ProfileScheduler` (queues are not supported).
        mode: "easy" (one reservation, for the first job in queue order that does not fit now; dropped after
            the decision) or "conservative" (every queued job holds one, compressed at each decision).
        reserve_bb: the reservations hold BB (fcfs-bb, sjf-bb, conservative-bb) or nodes only (fcfs-easy).
        sjf: EASY's backfilling pass by ascending walltime (sjf-bb).
        name: the policy's name.
        staging_bandwidth: [B/s] of the stage estimates (`stage_estimate`).
    Raises ValueError on a bad mode or bandwidth.
    """

    blocked_reason = "Reservation"
    #: valid `mode` values (a subclass planning the queue its own way, `_schedule_queue`, names its own)
    MODES = ("conservative", "easy")

    def __init__(self, platform: Platform, *, mode: str = "easy", reserve_bb: bool = True, sjf: bool = False,
                 name: str = "fcfs-bb", staging_bandwidth: float = STAGING_BANDWIDTH, **options):
        super().__init__(platform, **options)
        if mode not in self.MODES:
            raise ValueError(f"unknown mode {mode!r}; valid: {', '.join(self.MODES)}")
        check_staging("bb-first", staging_bandwidth)
        self.mode, self.reserve_bb, self.sjf, self.name = mode, reserve_bb, sjf, name
        self.staging, self.staging_bandwidth = "bb-first", float(staging_bandwidth)
        self.holds: dict[str, _Held] = {}          # jobs whose stage-in started, until they end
        self._plans: dict[str, _Plan] = {}         # conservative: reservations, out of the profile between calls
        self._held_bb: tuple[float, float, dict[int, int]] | None = None
        self.last_plan: dict[str, float] | None = None
        self._wake: float | None = None

    # ------------------------------------------------------------------ Scheduler contract
    def wakeup(self, now: float) -> float | None:
        """The planned stage-in start of the head's reservation (conservative: the earliest of every
        reservation's) if it is in the future — no event may come then —, or the period's next call."""
        w = super().wakeup(now)
        if self._wake is not None and self._wake > now:
            w = self._wake if w is None else min(w, self._wake)
        return w

    @property
    def queue(self) -> list[Job]:
        """Jobs not started on nodes (queued, in stage-in or staged), in submission order."""
        jobs = list(self._queue.values()) + [h.job for h in self.holds.values() if h.phase in ("staging", "staged")]
        return sorted(jobs, key=lambda j: self._order[j.id])

    def submit(self, job: Job, now: float) -> None:
        if job.id in self.holds:
            raise ValueError(f"job {job.id} submitted twice")
        super().submit(job, now)

    def stage_in_done(self, job_id: str, now: float) -> None:
        h = self.holds.get(job_id)
        if h is not None and h.phase == "staging":
            h.phase = "staged"

    def nodes_released(self, job_id: str, now: float) -> None:
        h = self.holds.get(job_id)
        if h is None or h.phase != "running":
            return
        self._now(now)
        self._drop_nodes(h, now)
        h.phase = "finishing"
        self._bb_to(h, now + h.s_out, now)

    def job_ended(self, job_id: str, now: float) -> None:
        self._now(now)
        h = self.holds.pop(job_id, None)
        if h is None:
            self._plans.pop(job_id, None)
            super().job_ended(job_id, now)        # a queued job (KeyError if unknown)
            return
        self._order.pop(job_id, None)
        self._drop_nodes(h, now)
        self._bb_to(h, now, now)

    def decide(self, now: float) -> list[Start | StageIn]:
        self._now(now)
        self.last_reservation = None
        self._free0 = self.profile.free_counts_at(now)
        self._noted = {}
        self._wake = None
        prev: dict[str, ProcSet] = {}
        for h in self.holds.values():             # node windows of the jobs not yet on nodes: re-placed below
            if h.phase in ("staging", "staged"):
                prev[h.job.id] = h.procs
                self._drop_nodes(h, now)
        self._extend(now)
        out = self._place_started(now, prev)
        if self._queue:
            out += self._schedule_queue(now)
        self._record_wait_reasons(now)
        return out

    def _schedule_queue(self, now: float) -> list[Start | StageIn]:
        """The decisions for the queued jobs, once the jobs whose stage-in started are placed: EASY's or
        conservative backfilling's (`mode`)."""
        return self._easy(now) if self.mode == "easy" else self._conservative(now)

    # ------------------------------------------------------------------ holds
    def _now(self, now: float) -> None:
        self._ensure_profile(now)
        self.profile.advance(now)

    def _bb_to(self, h: _Held, end: float, now: float) -> None:
        """Move the end of `h`'s BB hold to `end` (its start is in the past)."""
        if h.bbs:
            if end > h.bb_end and end > now:
                self.profile.reserve(max(h.bb_end, now), end, ProcSet(), h.bbs)
            elif end < h.bb_end and h.bb_end > now:
                self.profile.release(max(end, now), h.bb_end, ProcSet(), h.bbs)
        h.bb_end = end

    def _drop_nodes(self, h: _Held, now: float) -> None:
        if h.procs and h.n_end > now:
            self.profile.release(max(h.n_start, now), h.n_end, h.procs, {})
        h.procs = ProcSet()

    def _take_nodes(self, h: _Held, procs: ProcSet, start: float) -> None:
        end = start + h.job.walltime
        self.profile.reserve(start, end, procs, {})
        h.procs, h.n_start, h.n_end = procs, start, end

    def _extend(self, now: float) -> None:
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
        ones whose window starts now are started (module docstring). Under conservative-bb a job keeps the
        nodes of its previous window (`prev`: job id → nodes) when they are free over its new one: the queued
        jobs' reservations were planned around them, so taking the lowest free nodes instead could break one (a
        job then starting after its reservation). The EASY family takes the lowest free nodes, as before."""
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
            old = prev.get(h.job.id) if self.mode == "conservative" else None
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

    # ------------------------------------------------------------------ fits of queued jobs
    def _est(self, job: Job) -> float:
        return stage_estimate(job, self.staging_bandwidth)

    def _fit(self, job: Job, t: float, bb: bool) -> tuple[Fit | None, float]:
        """The plan of `job` with its nodes from `t` (BB from t − s_in, `bb`: checked and placed), or None and
        the earliest node start worth trying next."""
        prof, s = self.profile, self._est(job)
        res, w = job.res, job.walltime
        keys, m = prof.window_keys(t, t + w), None
        for k in keys:
            mk, _, c = prof.value_at_key(k)
            if c < res:
                return None, prof.next_key(k)
            m = mk if m is None else m & mk
            if m.bit_count() < res:
                return None, math.nextafter(t, math.inf)
        need = job.bb if bb else 0
        bbmin = None
        if need > 0:
            for k in prof.window_keys(t - s, t + w + s):
                _, b, _ = prof.value_at_key(k)
                if not bb_room(b, need, res):
                    return None, prof.next_key(k) + s
                bbmin = b if bbmin is None else tuple(map(min, bbmin, b))
            if not bb_room(bbmin, need, res):
                return None, math.nextafter(t, math.inf)
        chosen = lowest_mask(m, res)
        ids = prof.bb_ids
        of = {p: ids[b] for p, b in place_bb(chosen, bbmin, need, prof.bb_preference_index)} if need > 0 else {}
        return Fit(t, procset_of(chosen), of), t

    def _fit_now(self, job: Job, now: float) -> Fit | None:
        return self._fit(job, now + self._est(job), True)[0]

    def _earliest(self, job: Job, now: float, bb: bool) -> Fit | None:
        """The earliest plan of `job` whose stage-in starts at or after now (candidates: now + s_in, every
        breakpoint after it, every breakpoint + s_in after it)."""
        s = self._est(job) if (bb and job.bb > 0) else 0.0
        t0 = now + self._est(job)
        keys = self.profile.keys_from(now)
        cands = sorted({t0, *(k for k in keys if k > t0), *(k + s for k in keys if k + s > t0)})
        nxt = t0
        for t in cands:
            if t < nxt:
                continue
            fit, nxt = self._fit(job, t, bb)
            if fit is not None:
                return fit
        return None

    def _commit(self, job: Job, fit: Fit, now: float) -> Start | StageIn:
        """Start `job`'s stage-in now on `fit` (a job without BB: start it on its nodes)."""
        del self._queue[job.id]
        s = self._est(job)
        w = job.walltime
        bbs = fit.bb_per_storage(job.bb) if job.bb > 0 else {}
        h = _Held(job, tuple(sorted(fit.bb_of_node.values())), bbs, now, ProcSet(), fit.start, fit.start,
                  now + s, "staging", s)
        self._take_nodes(h, fit.procs, fit.start)
        self._bb_to(h, fit.start + w + s, now)
        self.holds[job.id] = h
        if job.bb <= 0:
            h.phase = "running"
            return Start(job, fit.procs, {})
        return StageIn(job, h.slots)

    # ------------------------------------------------------------------ EASY
    def _easy(self, now: float) -> list[Start | StageIn]:
        out: list[Start | StageIn] = []
        head = None
        for job in self._ordered(now):                          # FCFS pass
            fit = self._fit_now(job, now)
            if fit is None:
                self._note_wait(job, now)
                head = job
                break
            out.append(self._commit(job, fit, now))
        if head is None:
            return out
        fit = self._earliest(head, now, self.reserve_bb)        # the head's reservation
        if fit is not None:
            s = self._est(head) if self.reserve_bb else 0.0
            bbs = fit.bb_per_storage(head.bb) if (self.reserve_bb and head.bb > 0) else {}
            end = fit.start + head.walltime
            self.profile.reserve(fit.start, end, fit.procs, {})
            b0 = max(fit.start - s, now)                         # ≥ now but for rounding
            if bbs:
                self.profile.reserve(b0, end + s, ProcSet(), bbs)
            self._held = Reservation(head.id, fit.start, end, fit.procs, bbs, now)
            self._held_bb = (b0, end + s, bbs)
            self.last_reservation = self._held
            self._wake = max(fit.start - self._est(head), now)
        rest = [j for j in self._ordered(now) if j is not head]
        if self.sjf:
            rest.sort(key=lambda j: (j.walltime, self._submission_index(j)))
        for job in rest:                                        # backfilling
            fit = self._fit_now(job, now)
            if fit is None:
                self._note_wait(job, now)
            else:
                out.append(self._commit(job, fit, now))
        self._unreserve()
        return out

    def _unreserve(self) -> None:
        r, self._held = self._held, None
        if r is not None:
            self.profile.release(r.start, r.end, r.procs, {})
            b0, b1, bbs = self._held_bb
            if bbs:
                self.profile.release(b0, b1, ProcSet(), bbs)
        self._held_bb = None

    # ------------------------------------------------------------------ conservative
    def _put(self, p: _Plan) -> None:
        self.profile.begin()
        try:
            self.profile.reserve(p.fit.start, p.n_end, p.fit.procs, {})
            if p.bbs:
                self.profile.reserve(p.b_start, p.b_end, ProcSet(), p.bbs)
        except ValueError:
            self.profile.rollback()
            raise
        self.profile.commit()

    def _take(self, p: _Plan) -> None:
        self.profile.release(p.fit.start, p.n_end, p.fit.procs, {})
        if p.bbs:
            self.profile.release(p.b_start, p.b_end, ProcSet(), p.bbs)

    def _conservative(self, now: float) -> list[Start | StageIn]:
        queue = self._ordered(now)
        old, self._plans = self._plans, {}
        kept: dict[str, _Plan] = {}
        for job in queue:                                       # previous reservations back
            p = old.get(job.id)
            if p is None or p.b_start < now:
                continue
            try:
                self._put(p)
            except ValueError:
                continue
            kept[job.id] = p
        out: list[Start | StageIn] = []
        for job in queue:                                       # compression, queue order
            p = kept.pop(job.id, None)
            if p is not None:
                self._take(p)
            fit = self._earliest(job, now, True)
            if fit is None:
                continue
            s = self._est(job)
            if fit.start <= now + s:
                out.append(self._commit(job, fit, now))
                continue
            end = fit.start + job.walltime
            q = _Plan(fit, end, fit.bb_per_storage(job.bb) if job.bb > 0 else {}, max(fit.start - s, now), end + s,
                      p.made_at if (p is not None and p.fit == fit) else now)
            self._put(q)
            self._plans[job.id] = q
            self._wake = q.b_start if self._wake is None else min(self._wake, q.b_start)
            if self.last_reservation is None:
                self.last_reservation = Reservation(job.id, fit.start, end, fit.procs, q.bbs, q.made_at)
        for q in self._plans.values():                          # out of the profile until the next decision
            self._take(q)
        self.last_plan = {jid: q.fit.start for jid, q in self._plans.items()}
        return out
