"""FCFS, filler and the EASY-backfilling family (docs/policies.md; Kopanski & Rzadca 2021, §3.2, Algorithm 1, §4.2).

- `fcfs`: start queued jobs in submission order, stop at the first that does not fit now
  (processors and BB) — Algorithm 1 procedure FCFS alone.
- `filler`: start every queued job that fits now, in submission order, no reservation
  (Algorithm 1 without line 14).
- `fcfs-easy`: FCFS pass; the first job that does not fit (the head) gets a *processor-only*
  reservation at its earliest time (the shadow time); the other queued jobs, in submission order,
  are backfilled if they fit now — processors *and* BB over their whole walltime — without
  colliding with the reserved processors; the reservation is then dropped. BB is not reserved for
  the head job: the flaw the paper exposes (§3.1, Fig. 1).
- `fcfs-bb`: the same with the head job's reservation of processors *and* BB at the earliest time
  both are free (Algorithm 1 with the bracketed part of line 14).
- `sjf-bb`: `fcfs-bb` whose backfilling pass visits the queue by ascending walltime (ties:
  submission order); the head job is still the first job in submission order.

Every policy here visits the queue in its *order* (`orders.py`, ``order=NAME``; default fcfs =
submission order, which is the behaviour described above): the FCFS pass, the head job and the
backfilling pass follow it (sjf-bb: its backfilling pass is always by ascending walltime). A job
whose queue is at its share of the machine (`queues.py`) is passed over. ``easy_extra_nodes``
(EASY family): the slides' variant (Casanova's ICS 632 slides, "EASY Backfilling": extra nodes) that also backfills
a job needing no more than the processors left idle at the shadow time by the head job, wherever
they are: the head's processors are then chosen again (docs/orders-and-queues.md).

"Fits now" always means: free for the whole window [now, now + walltime) in the availability
profile, where running jobs hold their resources until start + walltime and the head job's
reservation is present during backfilling. Under a job model that separates the stagings (three-phase) the
same passes run on the job's hold shape (`holds`, `profile_scheduler.ProfileScheduler`): a job fits now when its
stage-in can start now, and the head's reservation holds its BB over its stagings too (fcfs-easy: nodes only). A backfilled job therefore either ends before the
shadow time or avoids the reserved processors (and, for *-bb, leaves the reserved BB bytes free).
"""
from __future__ import annotations

from procset import ProcSet

from .base import Job, Start
from .options import Bool, Depth, Option
from .depth import parse_depth
from .profile_scheduler import QUEUE_OPTIONS, ProfileScheduler, Reservation

__all__ = ["FcfsPolicy", "Filler", "EasyBackfilling"]


class FcfsPolicy(ProfileScheduler):
    """`fcfs`: FCFS without backfilling (Kopanski & Rzadca 2021, Algorithm 1 procedure FCFS; docs/policies.md)."""

    name = "fcfs"
    declared_options = ProfileScheduler.declared_options + QUEUE_OPTIONS
    blocked_reason = "Priority"   # a queued job that fits now waits behind the first one that does not

    def _schedule(self, now: float) -> list[Start]:
        starts, _ = self._fcfs_pass(now)
        return starts

    def _fcfs_pass(self, now: float) -> tuple[list[Start], Job | None]:
        """Start jobs in queue order until the first that does not fit now; return the starts and
        that first non-fitting job (the head), or None if the queue was emptied. Jobs of a queue at
        its share limit are passed over."""
        starts: list[Start] = []
        for job in self._ordered(now):
            if not self._eligible(job):
                continue
            fit = self._fits_now(job, now)
            if fit is None:
                self._note_wait(job, now)
                return starts, job
            starts.append(self._start(job, fit, now))
        return starts, None


class Filler(ProfileScheduler):
    """`filler`: start every queued job that fits now, in queue order, no reservation
    (Kopanski & Rzadca 2021, §4.2: Algorithm 1 without line 14; docs/policies.md)."""

    name = "filler"
    declared_options = ProfileScheduler.declared_options + QUEUE_OPTIONS
    blocked_reason = "Priority"   # never used: every job that fits now is started

    def _schedule(self, now: float) -> list[Start]:
        return self._backfill(self._ordered(now), now)


class EasyBackfilling(FcfsPolicy):
    """EASY backfilling (Kopanski & Rzadca 2021, Algorithm 1; docs/policies.md), with a reservation depth K
    (`depth`: reservations for the first K queued jobs, kept from one decision to the next) when
    ``reservation_depth`` is given. Presets: ``fcfs-easy``, ``fcfs-bb``, ``sjf-bb`` (`registry`).

    Args (besides `ProfileScheduler`'s):
        reserve_bb: the reservations include burst buffers (fcfs-bb, sjf-bb) or only processors (fcfs-easy).
        sjf_backfill: backfill by ascending walltime, ties in submission order (sjf-bb), instead of queue order.
        reservation_depth: None (EASY's one reservation, for the head job), an int K >= 1 or "all"
            (`depth.parse_depth`; K = 1 with the submission order is EASY, "all" conservative backfilling).
        easy_extra_nodes: also backfill a job needing no more than the nodes idle at the shadow time (EASY only).
    Raises ValueError on a bad depth, or ``easy_extra_nodes`` with a reservation depth.

    After `decide`, ``last_reservation`` holds the head job's reservation (shadow time, processors,
    BB) computed during that call, or None if every queued job started; with a depth, ``last_plan`` maps the
    reserved jobs to their start [s].
    """

    name = "easy"
    blocked_reason = "Reservation"   # fits now beside the running jobs, not around the head's reservation

    default_staging = "bb-first"
    declared_options = FcfsPolicy.declared_options + (
        Option("reservation_depth", Depth(),
               "reservations for the first K queued jobs (1 = EASY, all = conservative backfilling; null: EASY's)",
               nullable=True, flag="--reservation-depth", metavar="K"),
        Option("easy_extra_nodes", Bool(),
               "also backfill a job needing no more than the nodes left idle at the shadow time (ICS 632 slides, "
               "EASY; docs/orders-and-queues.md)", flag="--easy-extra-nodes"),
        Option("reserve_bb", Bool(), "the reservations hold burst buffers too (fcfs-bb, sjf-bb), else processors "
               "only (fcfs-easy)"),
        Option("sjf_backfill", Bool(), "backfill by ascending walltime (sjf-bb), else in queue order"),
    )

    @classmethod
    def options_conflict(cls, options: dict) -> str | None:
        if options.get("reservation_depth") is not None and options.get("easy_extra_nodes"):
            return "easy_extra_nodes applies to EASY's one reservation, not to a reservation depth"
        return super().options_conflict(options)

    def __init__(self, platform, *, reserve_bb: bool = True, sjf_backfill: bool = False, reservation_depth=None,
                 easy_extra_nodes: bool = False, **options):
        why = self.options_conflict({"reservation_depth": reservation_depth, "easy_extra_nodes": easy_extra_nodes})
        if why:
            raise ValueError(why)
        super().__init__(platform, **options)
        self.reserve_bb = bool(reserve_bb)
        self.sjf_backfill = bool(sjf_backfill)
        #: K (`depth.parse_depth`: an int or math.inf), or None: EASY's one reservation
        self.depth = None if reservation_depth is None else parse_depth(reservation_depth)
        self.easy_extra_nodes = bool(easy_extra_nodes)
        self.last_plan: dict[str, float] | None = None
        #: (job id, time [s], reserved start [s]): the reservation each head job got when it became head, for
        #: reservations.csv (`write_outputs`; the auditor checks EASY's guarantee with it, docs/audit.md). Only
        #: a reservation of processors and BB (`reserve_bb`) under a two-phase job model promises the head its
        #: start: fcfs-easy's, of processors only, leaves the head's BB to whatever frees it; under three-phase
        #: the stagings' durations are estimates, not walltime-bounded, so no start is promised.
        self.head_reservations: list[tuple[str, float, float]] = []

    def decide(self, now: float) -> list[Start]:
        starts = super().decide(now)
        r = self.last_reservation
        if r is not None and self._promises and (not self.head_reservations or self.head_reservations[-1][0] != r.job_id):
            self.head_reservations.append((r.job_id, now, r.start))
        return starts

    @property
    def _promises(self) -> bool:
        """Whether the head's reservation promises its start: processors and BB reserved (`reserve_bb`), every hold
        bounded by its walltime (a two-phase job model: not one that stages separately, whatever the staging)."""
        return self.reserve_bb and not getattr(self._staging.model, "stages_separately", False)

    def write_outputs(self, folder: str) -> None:
        """reservations.csv: ``job_id,time,reserved_start`` — each head job's reservation when it became head (its
        shadow time [s] at `time` [s]; docs/audit.md), when the reservation promises the head its start (`_promises`)."""
        super().write_outputs(folder)
        if not self._promises:
            return
        import csv
        import os
        from ..fileio import open_output, removing_on_error
        from ..metrics.runinfo import RESERVATIONS_CSV
        path = os.path.join(folder, RESERVATIONS_CSV)
        with removing_on_error(path + ".tmp"):
            with open_output(path + ".tmp", "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(("job_id", "time", "reserved_start"))
                for jid, t, start in self.head_reservations:
                    w.writerow((jid.split("!", 1)[-1], f"{t:.6f}", f"{start:.6f}"))
            os.replace(path + ".tmp", path)

    def _staging_unsupported(self) -> str | None:
        """A reservation depth keeps its two-phase behaviour on the three-phase model (nodes held during the
        stagings; docs/policies.md), with a warning there; so do the extra nodes."""
        if self.depth is not None:
            return "reservation_depth"
        return "easy_extra_nodes" if self.easy_extra_nodes else super()._staging_unsupported()

    def decide(self, now: float) -> list[Start]:
        self.last_plan = None
        return super().decide(now)

    def _schedule(self, now: float) -> list[Start]:
        if self.depth is not None:
            return self._depth_schedule(now)
        starts, head = self._fcfs_pass(now)                        # Algorithm 1 line 12
        if head is None:
            return starts
        # line 13-14; it enters the profile at the backfilling pass's first fit (`_reserve`'s `lazy`)
        self._reserve(head, now, bb=self.reserve_bb, lazy=not self.easy_extra_nodes)
        rest = [j for j in self._ordered(now) if j is not head]
        if self.sjf_backfill:                                      # lines 15-16
            rest.sort(key=lambda j: (j.walltime, self._submission_index(j)))
        if self.easy_extra_nodes and self._res.held is not None:
            starts += self._backfill_extra(head, rest, now)
        else:
            starts += self._backfill(rest, now)                    # line 17: BACKFILL
        self._unreserve()                                          # line 18
        return starts

    def _backfill_extra(self, head, jobs, now: float) -> list[Start]:
        """BACKFILL with the slides' extra nodes (ICS 632 slides, "EASY Backfilling"): a job that does not fit around the
        head's reservation still starts if it fits now on any processors and needs no more than the
        extra nodes (processors idle at the shadow time beside the head's); the head keeps its BB
        and its shadow time, its processors are chosen again among those left."""
        starts: list[Start] = []
        r = self._res.held
        shadow = r.start
        extra = self.profile.nb_free_at(shadow)                   # idle at the shadow time, head excluded
        for job in jobs:
            if extra <= 0 and self.profile.nb_free_at(now) == 0:
                break
            if not self._eligible(job):
                continue
            fit = self._fits_now(job, now)
            if fit is None and job.res <= extra:
                self.profile.release(r.start, r.end, r.procs, {})  # keep the head's BB only
                fit = self._fits_now(job, now)
                if fit is None:
                    self.profile.reserve(r.start, r.end, r.procs, {})
                    continue
                starts.append(self._start(job, fit, now))
                self.profile.release(r.start, r.end, ProcSet(), r.bb_per_storage)
                self._res.held = None
                r = self._reserve(head, now, bb=self.reserve_bb)
                # the head's processors are re-chosen among those idle at the shadow time (≥ head.res)
                assert r is not None and r.start <= shadow, "extra-nodes backfilling delayed the head"
            elif fit is not None:
                starts.append(self._start(job, fit, now))
            else:
                continue
            extra = self.profile.nb_free_at(r.start)
        return starts


    def _depth_schedule(self, now: float) -> list[Start]:
        """The decision with reservation depth K (`depth`): reservations for the first K queued jobs, from the
        reservation book, compressed in queue order; the jobs reserved now start; the others are backfilled."""
        queue = self._ordered(now)
        book, profile = self._book, self.profile
        kept = book.restore(profile, queue, now)
        starting: dict[str, int] = {}                           # per queue: processors starting now
        now_ids: set[str] = set()
        plan_starts: dict[str, float] = {}
        future = 0
        rest = []
        for i, job in enumerate(queue):                         # the first jobs: reservations
            if future >= self.depth:
                rest = queue[i:]
                break
            prev = kept.pop(job.id, None)
            if prev is not None:
                book.take(profile, prev)
            if not self._plain and not self._eligible(job, starting):
                continue
            fit = self.profile.fit_at(job, now)                 # processors and BB free now: start
            starts_now = fit is not None
            if fit is None:                                     # else a reservation (BB too if reserve_bb;
                fit = self.profile.earliest_fit(job, now, bb_aware=self.reserve_bb)   # it may start at `now`
                if fit is None:                                 # on processors only: not startable)
                    continue
            p = book.plan(profile, job, fit, self.shape(job), now, prev, bb=starts_now or self.reserve_bb)
            plan_starts[job.id] = fit.start
            if starts_now:
                now_ids.add(job.id)
                if self.queues is not None:
                    q = self._orders.queue_name(job)
                    starting[q] = starting.get(q, 0) + job.res
            else:
                if future == 0:
                    self.last_reservation = Reservation(job.id, fit.start, p.n_end, fit.procs, dict(p.bbs), now)
                future += 1
        for job in rest:                                        # the others hold none
            prev = kept.pop(job.id, None)
            if prev is not None:
                book.take(profile, prev)
        self.last_plan = plan_starts
        starts: list[Start] = []
        for job in queue:                                       # start the reservations of now
            if job.id in now_ids:
                p = book.plans.pop(job.id)
                book.take(profile, p)
                starts.append(self._start(job, p.fit, now))
        if rest:                                                # backfilling
            if self.sjf_backfill:
                rest = sorted(rest, key=lambda j: (j.walltime, self._submission_index(j)))
            starts += self._backfill(rest, now)
        return starts

