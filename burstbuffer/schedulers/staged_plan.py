"""plan-α on the three-phase job model (docs/io-model.md §3, docs/policies.md "On the three-phase model";
issue 14): the plan search of Kopanski & Rzadca, Euro-Par 2021, §3.3 (Algorithm 2, Eq. 1) over plans in which
each job holds its nodes over its running phase only and its BB over its stage-in and stage-out too.

An execution plan of a permutation places each queued job, in its order, at the earliest node start t such that

- its nodes are free over the running phase [t, t + walltime),
- its BB shares fit over [b0, t + walltime + s), b0 = now for t = now + s (its stage-in starts now), else
  max(t − s, now),

with t ≥ now + s (a stage-in starts at or after now); s is the job's stage-in (= stage-out) estimate
(`staged.stage_estimate`: res × bb / ``staging_bandwidth``; 0 for a job without BB, placed as in the paper).
This is the EASY family's staged placement (`staged.StagedBackfilling`, `placement.earliest_staged_window`),
run by the plan engines (`plan_engine.PlanEngine`, the C mirror `_plan_native`) with ``stage`` estimates.
Score (Eq. 1): Σ_j W_j^α with W_j = b0 − subtime, the stage-in start being when Batsim starts the job (jobs.csv's
``starting_time`` and ``waiting_time`` on three-phase).

At each decision the jobs whose stage-in started are placed first (`StagedBackfilling`: in the order their
stage-ins started, each on the earliest node window from its stage-in's estimated end, started once staged and
its window starts now); the queued jobs are then planned around them (the 9 initial orders and the simulated
annealing of `plan.plan_search`, with the policy's seeded ``rng``); every job whose planned stage-in starts now
(b0 = now: its nodes from now + s, or from a breakpoint t with t − s rounded to now at a wake-up) gets a `StageIn`
(a job without BB: a `Start`) on the nodes and BB nodes of the plan; the other plans are dropped and the policy
asks to be called at the earliest planned stage-in start (when no event may come), rounded up to the microsecond
(`wake_time`).

`PlanScheduler.for_job_model("three-phase")` returns a `StagedPlan` unless ``staging="with-nodes"`` (the paper's
two-phase plans, the nodes then held from stage-in to stage-out); on io-aware and alloc-only plan-α is unchanged.
"""
from __future__ import annotations

import math

from ..platforms.model import Platform
from .base import StageIn, Start
from .plan import candidate_orders, plan_search, set_search_options
from .placement import staged_bb_start
from .plan_engine import make_engine
from .profile import Fit, procset_of
from .staged import STAGING_BANDWIDTH, StagedBackfilling

__all__ = ["StagedPlan", "staged_plan_variant", "wake_time"]


def staged_plan_variant(sched, model: str):
    """What `PlanScheduler.for_job_model` returns: on ``three-phase`` with ``staging="bb-first"`` the
    `StagedPlan` of the same α, search parameters, seed, period, grace and bandwidth; `sched` itself otherwise."""
    if model != "three-phase" or sched.staging != "bb-first":
        return sched
    return StagedPlan(sched.platform, alpha=sched.alpha, cooling_rate=sched.cooling_rate,
                      cooling_steps=sched.cooling_steps, temperature_steps=sched.temperature_steps,
                      exhaustive_limit=sched.exhaustive_limit, native=sched.native, name=sched.name,
                      staging_bandwidth=sched.staging_bandwidth, seed=sched.seed, period=sched.period,
                      overdue_grace=sched.overdue_grace)


class StagedPlan(StagedBackfilling):
    """plan-α on the three-phase job model (module docstring).

    Args:
        platform, seed, period, overdue_grace: as `ProfileScheduler` (the seed drives the annealing).
        alpha, cooling_rate, cooling_steps, temperature_steps, exhaustive_limit, native: as `PlanScheduler`.
        name: the policy's name (plan-1, plan-2, plan-3, plan).
        staging_bandwidth: [B/s] of the stage estimates (`staged.stage_estimate`).
    Raises ValueError / TypeError on a bad option (as `PlanScheduler`, `staged.check_staging`).

    After `decide`: ``last_search`` is the `plan.SearchResult` (None if nothing was queued), ``last_plan`` the
    plan of the best permutation as [(job id, planned node start [s] or None)] in plan order.
    """

    MODES = ("plan",)
    #: a job that fits now but was planned later waits for the jobs the chosen order put before it
    blocked_reason = "Priority"

    def __init__(self, platform: Platform, *, alpha: float = 2.0, cooling_rate: float = 0.9,
                 cooling_steps: int = 30, temperature_steps: int = 6, exhaustive_limit: int = 5,
                 native: bool | None = None, name: str = "plan", staging_bandwidth: float = STAGING_BANDWIDTH,
                 **options):
        super().__init__(platform, mode="plan", reserve_bb=True, sjf=False, name=name,
                         staging_bandwidth=staging_bandwidth, **options)
        set_search_options(self, alpha, cooling_rate, cooling_steps, temperature_steps, exhaustive_limit, native)

    def decide(self, now: float) -> list[Start | StageIn]:
        self.last_search = None
        self.last_plan = None
        return super().decide(now)

    def _schedule_queue(self, now: float) -> list[Start | StageIn]:
        jobs = list(self._queue.values())                      # submission order
        stage = [self._est(j) for j in jobs]
        engine = make_engine(self.profile, jobs, now, self.alpha, native=self.native, stage=stage)
        result = plan_search(engine, len(jobs), self.rng, candidates=candidate_orders(jobs),
                             cooling_rate=self.cooling_rate, cooling_steps=self.cooling_steps,
                             temperature_steps=self.temperature_steps, exhaustive_limit=self.exhaustive_limit)
        engine.apply(result.perm)                              # Algorithm 2 line 22: the plan of P_best
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
            b0 = staged_bb_start(pl.start, t_now, engine.stage[k])
            if b0 <= t_now:                                    # its stage-in (or, without BB, its run) starts now
                fit = Fit(pl.start, procset_of(pl.procs), engine.bb_of_node(pl, job.bb, bb_ids))
                out.append(self._commit(job, fit, now))
            else:
                wake = b0 if wake is None else min(wake, b0)
        self._wake = None if wake is None else wake_time(wake)
        return out


def wake_time(t: float) -> float:
    """The first time on the microsecond grid at or after `t` [s] (Batsim's message times have 6 decimals).

    Successive plans give the same planned stage-in start a few 1e-9 s apart (t − s from different
    breakpoints); asked as distinct CALL_ME_LATERs, the real Batsim 4.2.1 delivers them together and the
    embedded simulator one by one — one more decision, and plan-α's annealing then draws other random moves
    (benchmarks/three_phase_batsim.py). On the grid they are one time, asked once (the app skips a pending time).
    A wake-up up to 1 µs late starts the stage-in then, its plan being recomputed there."""
    w = math.ceil(t * 1e6) / 1e6
    return w if w >= t else (math.ceil(t * 1e6) + 1) / 1e6
