"""Plan-based scheduling with simulated annealing: `plan-α` (Kopanski & Rzadca 2021, §3.3, Algorithm 2, Eq. 1).

At each decision the queued jobs Q (n of them, submission order) are planned:

- an *execution plan* of a permutation P puts each job, in P's order, at the earliest time ≥ now
  at which its processors and its BB are free for its whole walltime (availability profile with
  the running jobs' holds and the jobs placed before it), and reserves them there;
- its score is S(P) = Σ_j W_j^α, W_j = planned start − subtime [s] (Eq. 1); lower is better;
- n ≤ `exhaustive_limit` (5): every permutation is planned (lexicographic order of submission
  indices; the first minimal one wins);
- otherwise (Algorithm 2): the 9 initial candidates — FCFS; processors asc/desc; BB per processor
  asc/desc; BB per processor ÷ processors asc/desc; walltime asc/desc (stable sorts: ties keep
  submission order) — give P_best/S_best and S_worst; if S_best = S_worst the search stops; else
  T = S_worst − S_best, P = P_best, and N (`cooling_steps`, 30) times: M (`temperature_steps`, 6)
  times P' = P with two random positions swapped, S' = S(P'); if S' < S_best then P_best, P = P'
  else P = P' with probability exp((S − S')/T); then T ← r·T (`cooling_rate`, 0.9) —
  9 + N·M = 189 plans per decision;
- the jobs whose planned start in the plan of P_best is *now* are started (on the processors and
  BB nodes the plan gives them); the other reservations are dropped (re-planned next time).

Every random choice (`random.Random.sample` for the two positions, `random.random` for the
acceptance) comes from the scheduler's ``rng`` seeded in `make_scheduler`: same seed and inputs,
same schedule.

A job that cannot be placed at all (only possible behind a hold without end: walltime = inf)
counts as waiting until the engine's `horizon` (`_plan_base.EngineBase`), later than any placed start.

Plans are built by `plan_engine.make_engine` (a scratch copy of the profile's breakpoints with an
undo log: a plan sharing its first c jobs with the previous one re-places only the others); the
reference `plan_on_profile` builds one plan directly on an `AvailabilityProfile` inside a
transaction (tests compare the two).
"""
from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from typing import Sequence

from ..platforms.model import Platform
from .base import Job, StageIn, Start
from .holds import wake_time
from .limits import MAX_EXHAUSTIVE
from .placement import staged_bb_start
from ._plan_base import EngineBase
from .plan_engine import make_engine
from .profile import AvailabilityProfile, Fit, procset_of
from .options import Number, Option
from .profile_scheduler import ProfileScheduler

__all__ = ["PlanScheduler", "SearchResult", "candidate_orders", "plan_search", "plan_on_profile",
           "MAX_EXHAUSTIVE", "wake_time"]



def candidate_orders(jobs: Sequence[Job]) -> list[list[int]]:
    """The 9 initial candidates of Kopanski & Rzadca 2021, §3.3 as permutations of ``range(len(jobs))``.

    `jobs` is in submission order. Order: (1) FCFS; (2) ascending and (3) descending requested
    processors; (4)/(5) BB per processor (``job.bb``, bytes per node) asc/desc; (6)/(7) BB per
    processor ÷ processors asc/desc; (8)/(9) walltime asc/desc. Sorts are stable, descending ones
    included: ties keep submission order.
    """
    idx = list(range(len(jobs)))
    res = [j.res for j in jobs]
    bbp = [j.bb for j in jobs]
    ratio = [j.bb / j.res for j in jobs]
    wall = [j.walltime for j in jobs]
    out = [idx]
    for key in (res, bbp, ratio, wall):
        out.append(sorted(idx, key=key.__getitem__))
        out.append(sorted(idx, key=lambda k, key=key: -key[k]))
    return out


@dataclass
class SearchResult:
    """Outcome of one plan search.

    Attributes:
        perm: the best permutation found (job indices into the planned list).
        score: its score S (Eq. 1) [s^α].
        plans: number of execution plans built (n! exhaustive; 9 + N·M with annealing; 9 when
            S_best = S_worst).
        exhaustive: whether the exhaustive search was used.
        annealed: whether simulated annealing ran (S_best ≠ S_worst).
        accepted: annealing moves accepted (improving or not).
    """

    perm: list[int]
    score: float
    plans: int
    exhaustive: bool
    annealed: bool = False
    accepted: int = 0


def plan_search(engine: EngineBase, n: int, rng: random.Random, *, candidates: list[list[int]],
                cooling_rate: float = 0.9, cooling_steps: int = 30, temperature_steps: int = 6,
                exhaustive_limit: int = 5) -> SearchResult:
    """Algorithm 2 of Kopanski & Rzadca 2021 (lines 2-21) over the `n` jobs of `engine`.

    Args:
        engine: a plan engine (`make_engine`) over the n queued jobs (its `apply(perm)` returns S(perm)).
        rng: the source of every random choice.
        candidates: the initial permutations (`candidate_orders`), used when n > exhaustive_limit.
        cooling_rate, cooling_steps, temperature_steps: r, N, M.
        exhaustive_limit: queues of at most this many jobs are searched exhaustively.
    Returns the `SearchResult`; the engine is left with an arbitrary plan applied.
    """
    if n == 0:
        return SearchResult([], 0.0, 0, True)
    if n <= exhaustive_limit:
        best: list[int] | None = None
        best_s = math.inf
        plans = 0
        for perm in itertools.permutations(range(n)):
            s = engine.apply(perm)
            plans += 1
            if best is None or s < best_s:
                best, best_s = list(perm), s
        return SearchResult(best, best_s, plans, True)
    scored = [(engine.apply(c), c) for c in candidates]
    s_best, p_best = scored[0]
    s_worst = s_best
    for s, c in scored[1:]:
        if s < s_best:
            s_best, p_best = s, c
        if s > s_worst:
            s_worst = s
    out = SearchResult(list(p_best), s_best, len(scored), False)
    if s_best == s_worst:                                     # line 7: skip the annealing
        return out
    temp = s_worst - s_best                                   # line 8
    p, s = list(p_best), s_best                               # line 9
    engine.apply(p)
    positions = range(n)
    sample, rand, exp = rng.sample, rng.random, math.exp
    for _ in range(cooling_steps):                            # line 10
        for _ in range(temperature_steps):                    # line 11
            a, b = sample(positions, 2)                       # line 12
            p2 = p.copy()
            p2[a], p2[b] = p2[b], p2[a]
            s2 = engine.apply(p2)                             # lines 13-15 (S of P is kept)
            out.plans += 1
            if s2 < s_best:                                   # lines 16-18
                s_best, p_best = s2, p2
                p, s = p2, s2
                out.accepted += 1
            elif rand() < exp(min((s - s2) / temp, 0.0)):     # lines 19-20
                p, s = p2, s2
                out.accepted += 1
            else:
                engine.revert()
        temp *= cooling_rate                                  # line 21
    out.perm, out.score, out.annealed = list(p_best), s_best, True
    return out


def set_search_options(sched, alpha, cooling_rate, cooling_steps, temperature_steps, exhaustive_limit) -> None:
    """Check plan-α's options (`PlanScheduler`) and set them on `sched` (``alpha``, ``cooling_rate``,
    ``cooling_steps``, ``temperature_steps``, ``exhaustive_limit``, and ``last_search`` /
    ``last_plan`` = None). Raises ValueError on an out-of-range value, TypeError on a non-integer count."""
    try:
        alpha = float(alpha)
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be a positive real, got {alpha!r}") from None
    if not (alpha > 0 and math.isfinite(alpha)):
        raise ValueError(f"alpha must be a positive real, got {alpha!r}")
    if not (0 < cooling_rate <= 1):
        raise ValueError(f"cooling_rate must be in (0, 1], got {cooling_rate!r}")
    for nm, v, hi in (("cooling_steps", cooling_steps, None), ("temperature_steps", temperature_steps, None),
                      ("exhaustive_limit", exhaustive_limit, MAX_EXHAUSTIVE)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{nm} must be an integer, got {v!r}")
        if v < 0 or (hi is not None and v > hi):
            raise ValueError(f"{nm} must be in [0, {hi if hi is not None else 'inf'}], got {v}")
    sched.alpha = alpha
    sched.cooling_rate = float(cooling_rate)
    sched.cooling_steps = cooling_steps
    sched.temperature_steps = temperature_steps
    sched.exhaustive_limit = exhaustive_limit
    sched.last_search = None
    sched.last_plan = None


def plan_on_profile(profile: AvailabilityProfile, jobs: Sequence[Job], perm: Sequence[int],
                    now: float, alpha: float, horizon: float | None = None
                    ) -> tuple[float, list[Fit | None]]:
    """Reference execution plan built directly on `profile` (left unchanged: transaction).

    Each job ``jobs[k]`` for k in `perm`, in that order, gets ``profile.earliest_fit(job, now)``
    (processors + BB) and is reserved there. Returns (S, fits in `perm` order, None for a job
    that cannot be placed — it counts as waiting until `horizon`, required then).
    Source: Kopanski & Rzadca 2021, §3.3, Eq. 1. Slow (one `earliest_fit` + `reserve` per job); the policy
    uses its plan engine (`make_engine`), which gives the same result.
    """
    fits: list[Fit | None] = []
    score = 0.0
    profile.begin()
    try:
        for k in perm:
            j = jobs[k]
            fit = profile.earliest_fit(j, now)
            fits.append(fit)
            if fit is None:
                if horizon is None:
                    raise ValueError(f"job {j.id} cannot be placed and no horizon was given")
                wait = horizon - j.subtime
            else:
                profile.reserve(fit.start, fit.start + j.walltime, fit.procs, fit.bb_per_storage(j.bb))
                wait = fit.start - j.subtime
            score += max(wait, 0.0) ** float(alpha)
    finally:
        profile.rollback()
    return score, fits


class PlanScheduler(ProfileScheduler):
    """`plan-α`: plan-based scheduling with simulated annealing (Kopanski & Rzadca 2021, §3.3, Algorithm 2).

    Args:
        platform, seed, period, overdue_grace: see `ProfileScheduler` (the seed drives the
            annealing's random choices).
        alpha: α > 0 of Eq. 1 (real); the presets plan-1/2/3 set it to 1/2/3 (`registry`).
        cooling_rate: r, 0 < r ≤ 1.
        cooling_steps: N ≥ 0.
        temperature_steps: M ≥ 0 moves per temperature.
        exhaustive_limit: queues of at most this many jobs are searched over all permutations
            (0 ≤ limit ≤ MAX_EXHAUSTIVE).
        staging, staging_bandwidth: as `ProfileScheduler` (default "bb-first": on the three-phase job model
            each job's nodes are planned over its running phase and its BB over its stagings too).

    Raises ValueError on an out-of-range option (TypeError on a non-integer count).

    After `decide`, ``last_search`` holds the `SearchResult` and ``last_plan`` the plan of the
    best permutation as [(job id, planned start [s] or None)] in plan order (None if nothing was
    queued).

    Under a job model that separates the stagings (docs/io-model.md §3, docs/policies.md "On the three-phase
    model") an execution plan places each job in its hold shape (`holds.HoldShape`,
    `placement.earliest_staged_window`: nodes over [t, t + walltime) from t ≥ now + s, BB over
    [b0, t + walltime + s), b0 = `placement.staged_bb_start`), the score counting W_j = b0 − subtime (the
    stage-in start is when Batsim starts the job); every job whose planned stage-in starts now gets its
    `StageIn` (a job without BB: its `Start`), and the policy asks to be called at the earliest planned
    stage-in start, on the microsecond grid (`wake_time`).
    """

    name = "plan"
    declared_options = ProfileScheduler.declared_options + (
        Option("alpha", Number(0, open_low=True),
               "α of the plan score Σ wait^α (Kopanski & Rzadca 2021, Eq. 1; plan-1, plan-2, plan-3 fix it)",
               flag="--alpha", metavar="A"),
        Option("cooling_rate", Number(0, 1, open_low=True), "simulated annealing's cooling rate r"),
        Option("cooling_steps", Number(0, integer=True), "simulated annealing's cooling steps N"),
        Option("temperature_steps", Number(0, integer=True), "moves per temperature M"),
        Option("exhaustive_limit", Number(0, MAX_EXHAUSTIVE, integer=True),
               "queues of at most this many jobs are searched over all permutations"),
    )
    #: a job that fits now but was planned later waits for the jobs the chosen order put before it
    blocked_reason = "Priority"
    default_staging = "bb-first"

    def __init__(self, platform: Platform, *, seed: int = 0, alpha: float = 2.0,
                 cooling_rate: float = 0.9, cooling_steps: int = 30, temperature_steps: int = 6,
                 exhaustive_limit: int = 5, **options):
        super().__init__(platform, seed=seed, **options)   # period, overdue_grace, staging, staging_bandwidth
        set_search_options(self, alpha, cooling_rate, cooling_steps, temperature_steps, exhaustive_limit)

    def decide(self, now: float) -> list[Start | StageIn]:
        self.last_search = None
        self.last_plan = None
        return super().decide(now)

    def _schedule(self, now: float) -> list[Start | StageIn]:
        jobs = list(self._queue.values())                      # submission order
        stage = None
        if self.staged:
            shapes = [self.shape(j) for j in jobs]
            if any(h.stage_out != h.stage_in for h in shapes):
                raise ValueError("plan-α's plan engines need equal stage-in and stage-out estimates")
            stage = [h.stage_in for h in shapes]
        engine = make_engine(self.profile, jobs, now, self.alpha, stage=stage)
        result = plan_search(engine, len(jobs), self.rng, candidates=candidate_orders(jobs),
                             cooling_rate=self.cooling_rate, cooling_steps=self.cooling_steps,
                             temperature_steps=self.temperature_steps,
                             exhaustive_limit=self.exhaustive_limit)
        engine.apply(result.perm)                              # line 22: the plan of P_best
        self.last_search = result
        plan = engine.placements()
        self.last_plan = [(jobs[k].id, None if pl is None else pl.start) for k, pl in plan]
        out: list[Start | StageIn] = []
        bb_ids = self.profile.bb_ids
        t_now = engine.now
        wake = None
        for k, pl in plan:
            if pl is None:
                continue
            job = jobs[k]
            b0 = staged_bb_start(pl.start, t_now, stage[k] if stage is not None else 0.0)
            if b0 <= t_now:                                    # its stage-in (or its run) starts now
                fit = Fit(pl.start, procset_of(pl.procs), engine.bb_of_node(pl, job.bb, bb_ids))
                out.append(self._start(job, fit, now))
            else:
                wake = b0 if wake is None else min(wake, b0)
        if self.staged:
            self._staging.wake = None if wake is None else wake_time(wake)
        return out
