"""plan-α on the three-phase job model (`burstbuffer.schedulers.staged_plan`, docs/policies.md "On the
three-phase model"): a hand-checked plan-2 schedule, the staged placement against the EASY family's, invariants
and determinism on generated workloads, the C engine against its oracle (tests/oracles/plan_engine.py), the choice of the variant, and a
run in the embedded simulator."""
from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from .conftest import examples

from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers import Job, make_scheduler
from burstbuffer.schedulers.placement import mask_of
from burstbuffer.schedulers.plan import PlanScheduler
from burstbuffer.schedulers.plan_engine import make_engine
from burstbuffer.io_model.alloc_only import AllocOnlyModel
from burstbuffer.io_model.io_aware import IOAwareModel
from burstbuffer.io_model.three_phase import ThreePhaseModel
from burstbuffer.schedulers.holds import HoldShape, stage_estimate
from burstbuffer.schedulers.plan import PlanScheduler

from .oracles.plan_engine import PlanEngine, oracle_plans
from .test_placement_mirror import cases
from .staged_sim import simulate
from .test_staged import workloads

GB = 10**9
PLANS = ("plan-1", "plan-2", "plan-3")


def bound(policy: str, plat: Platform, model, **options):
    s = make_scheduler(policy, plat, **options)
    s.bind_job_model(model)
    return s


def staged(policy: str, plat: Platform, **options):
    return bound(policy, plat, ThreePhaseModel(), **options)


def _hand_jobs():
    return [Job("w0!A", 0, 100, 2, 0), Job("w0!B", 1, 100, 2, 4 * GB), Job("w0!C", 2, 10, 1, 5 * GB)]


def test_plan2_stages_in_during_another_jobs_run_and_reorders():
    """2 nodes, one 10 GB BB node, stagings at 1 GB/s (the policy's estimate too: s = res × bb / 1 GB/s).
    A (2 nodes, no BB, 100 s) runs 0-100. B (2 nodes, 4 GB each: s = 8 s, 100 s) at 1, C (1 node, 5 GB: s = 5 s,
    10 s) at 2. At t = 2 plan-2 weighs the two orders (n ≤ 5: exhaustive), waiting time = planned stage-in
    start − submission:
    - B, C: B's nodes from A's end, 100 (BB over [92, 208)); C needs 5 GB, only 2 GB are left beside B's 8 GB, so
      its BB window [t − 5, t + 15) starts at 208: t = 213. S = (92 − 1)² + (208 − 2)² = 8,281 + 42,436 = 50,717;
    - C, B: C's nodes from 100 (node 0, BB over [95, 115)); B needs 8 GB, so its BB window [t − 8, t + 108) starts
      when C's stage-out ends, 115: t = 123. S = (95 − 1)² ... = 93² + 114² = 8,649 + 12,996 = 21,645: chosen.
    So C stages in 95-100 while A runs, and computes on node 0 at 100 (A's end), its 5 s of stage-in off the
    nodes (with its nodes held during the stagings, as on io-aware, it would compute from 105); C's stage-out
    ends at 115, B stages in 115-123, runs 123-223 and stages out to 231. The EASY family (fcfs-bb) keeps
    submission order: C would wait for B's stage-out (C's stage-in at 208)."""
    plat = Platform.simple(2, [10 * GB])
    sched = staged("plan-2", plat, staging_bandwidth=GB)
    assert sched.staged and sched.alpha == 2.0 and sched.name == "plan-2"
    plans = {}
    orig = sched.decide

    def decide(now):
        out = orig(now)
        plans[now] = (sched.last_plan, sched.last_search and sched.last_search.score)
        return out

    sched.decide = decide
    t = simulate(sched, plat, _hand_jobs())
    assert t == {"w0!A": (0, 0, 100), "w0!C": (95, 100, 115), "w0!B": (115, 123, 231)}
    assert plans[2] == ([("w0!C", 100.0), ("w0!B", 123.0)], 93.0 ** 2 + 114.0 ** 2)
    easy = simulate(staged("fcfs-bb", plat, staging_bandwidth=GB), plat, _hand_jobs())
    assert easy["w0!C"][0] == 208


def test_two_phase_plans_hold_the_nodes_through_the_stagings():
    """The same decision at t = 2 by two-phase plan-2 (io-aware, or staging=with-nodes): C then B, B at 110 —
    C's nodes and BB over [100, 110) only, nothing held before 100."""
    plat = Platform.simple(2, [10 * GB])
    for sched in (make_scheduler("plan-2", plat), make_scheduler("plan-2", plat, staging="with-nodes")):
        for j in _hand_jobs():
            sched.submit(j, j.subtime)
            sched.decide(j.subtime)
        assert sched.last_plan == [("w0!C", 100.0), ("w0!B", 110.0)]


def test_a_planned_stage_in_starts_at_its_wake_up_despite_rounding():
    """A (1 node, no BB) runs [0, T); B (1 node, bb B, s = bb / 5 GB/s) at 1 is planned with its nodes at T and
    its stage-in at T − s. For these T and s, (T − s) + s < T in floating point: called at exactly T − s, the
    policy cannot start B's nodes at now + s (A still holds them), plans them at T, whose BB window starts at
    max(T − s, now) = now — so B stages in then, not at A's end. The policy asks to be called at T − s rounded up
    to the microsecond (`wake_time`): in the simulation B stages in there and computes from A's end (or its own
    stage-in's end, if later)."""
    from burstbuffer.schedulers.base import StageIn
    from burstbuffer.schedulers.plan import wake_time
    T, bb = 3959601.855446, 284_502_966_000
    s = bb / 5e9
    assert (T - s) + s < T                            # the case this test is about
    plat = Platform.simple(1, [300 * GB])
    a, b = Job("w0!A", 0, T, 1, 0), Job("w0!B", 1, 10, 1, bb)
    sched = staged("plan-2", plat)
    sched.submit(a, 0)
    assert [d.job.id for d in sched.decide(0)] == ["w0!A"]
    sched.submit(b, 1)
    assert sched.decide(1) == [] and sched.last_plan == [("w0!B", T)]
    w = sched.wakeup(1)
    assert w == wake_time(T - s) and T - s <= w < T - s + 1e-6 and round(w, 6) == w
    [d] = sched.decide(T - s)
    assert isinstance(d, StageIn) and d.job is b
    t = simulate(staged("plan-2", plat), plat, [a, b], rate=5e9)
    assert t["w0!B"] == (w, max(T, w + s), max(T, w + s) + 10 + s)


def test_the_job_model_turns_the_staged_plans_on():
    plat = Platform.simple(2, [10 * GB])
    for p in PLANS:
        s = staged(p, plat, cooling_steps=3, seed=7)
        assert s.staged and s.name == p and s.cooling_steps == 3 and s.seed == 7
        for model in (IOAwareModel(), AllocOnlyModel()):
            assert not bound(p, plat, model).staged
        assert not staged(p, plat, staging="with-nodes").staged
    s = staged("plan", plat, alpha=1.5, staging_bandwidth=2e9)
    assert s.staged and s.alpha == 1.5 and s.staging_bandwidth == 2e9
    for bad in ({"staging": "later"}, {"staging_bandwidth": -1}):
        with pytest.raises(ValueError):
            make_scheduler("plan-2", plat, **bad)
    with pytest.raises(ValueError):
        PlanScheduler(plat, alpha=0)


# ---------------------------------------------------------------------------- the placement
@settings(max_examples=examples(0.8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from([0.5, 1.0, 3.0, 7.25]))
def test_one_staged_job_is_placed_as_the_easy_family_places_it(case, per_gb):
    """On generated profiles, a job alone in the plan engine with a stage estimate gets the start, nodes and BB
    nodes the profile's query for its hold shape (`AvailabilityProfile.earliest_fit` with a staged
    `HoldShape`, the one placement rule every policy asks) gives it; its waiting time counts from its stage-in
    start."""
    p, now, jobs, _, alpha = case
    assume(p.origin == now)                           # the policies plan on a profile advanced to now
    for job in jobs:
        if job.bb <= 0:
            continue
        s = stage_estimate(job, GB / per_gb)
        want = p.earliest_fit(job, now, shape=HoldShape(s, s))
        for build in (PlanEngine, make_engine):                   # the oracle, the C engine
            eng = build(p, [job], now, alpha, stage=[s])
            score = eng.apply([0])
            [(_, pl)] = eng.placements()
            if want is None:
                assert pl is None
                continue
            assert (pl.start, pl.procs, eng.bb_of_node(pl, job.bb, p.bb_ids)) == (
                want.start, mask_of(want.procs), want.bb_of_node)
            b0 = now if pl.start == now + s else max(pl.start - s, now)
            assert score == max(b0 - job.subtime, 0.0) ** alpha


@settings(max_examples=examples(0.8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.5, 9.0]), min_size=7, max_size=7))
def test_native_staged_plans_mirror_the_python_rule(case, est):
    """Staged plans (every job with BB and a positive estimate): through apply / revert, the C engine and its
    oracle give the same scores bit for bit and the same placements."""
    from .test_placement_mirror import assert_engines_agree
    p, now, jobs, perms, alpha = case
    stage = est[:len(jobs)]
    py = PlanEngine(p, jobs, now, alpha, stage=stage)
    c = make_engine(p, jobs, now, alpha, stage=stage)
    assert py.horizon == c.horizon and py.stage == c.stage
    assert_engines_agree(py, c, perms, jobs, p.bb_ids)


def test_stage_estimates_are_checked():
    plat = Platform.simple(2, [10 * GB])
    from burstbuffer.schedulers.profile import AvailabilityProfile
    p = AvailabilityProfile(plat, origin=0.0)
    jobs = [Job("a", 0, 10, 1, GB)]
    for bad in ([1.0, 2.0], [-1.0], [math.inf]):
        with pytest.raises(ValueError):
            PlanEngine(p, jobs, 0.0, 2.0, stage=bad)
    assert PlanEngine(p, [Job("b", 0, 10, 1, 0)], 0.0, 2.0, stage=[3.0]).stage == (0.0,)   # no BB: no staging


# ---------------------------------------------------------------------------- generated workloads
@settings(max_examples=examples(0.8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.sampled_from(PLANS), st.sampled_from([GB / 4, GB, 3 * GB, 4 * GB]), st.sampled_from([0, 2, 5]))
def test_never_overallocated_and_every_job_ends(wl, policy, estimate, limit):
    """BB held by jobs in stage-in, staged, running and in stage-out within every BB node's capacity at every
    instant, nodes never given twice, a job with BB started only after its stage-in, every job ends — with
    runtimes shorter than the walltime and stage estimates 4× too short or too long, or 3× too short (not a
    power of two: planned stage-in starts t − s rounded) (`simulate` checks)."""
    plat, jobs, frac = wl
    sched = staged(policy, plat, staging_bandwidth=estimate, exhaustive_limit=limit, cooling_steps=4,
                   temperature_steps=3, seed=3)
    times = simulate(sched, plat, jobs, runtime=lambda j: max(1.0, round(frac * j.walltime)))
    assert set(times) == {j.id for j in jobs}
    assert all(len(t) == 3 and t[0] <= t[1] <= t[2] for t in times.values())
    assert not sched.queue and not sched.holds


@settings(max_examples=examples(0.4), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.integers(0, 2**31))
def test_same_seed_same_schedule_in_either_engine(wl, seed):
    """Same seed and inputs, same schedule: twice with the C engine, and with its oracle, the pure-Python engine
    (the annealing runs: exhaustive search off)."""
    plat, jobs, frac = wl

    def once():
        s = staged("plan-2", plat, staging_bandwidth=GB, exhaustive_limit=0, cooling_steps=3, temperature_steps=2,
                   seed=seed)
        return simulate(s, plat, jobs, runtime=lambda j: max(1.0, round(frac * j.walltime)))

    first = once()
    assert once() == first
    with oracle_plans():
        assert once() == first


@settings(max_examples=examples(0.4), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_exact_estimates_no_job_waits_past_its_first_plan_when_alone(wl):
    """With exact estimates and runtimes = walltimes, a job's planned stage-in start, when nothing else is queued
    and nothing is submitted later, is kept: the last job submitted, planned alone after everyone else, starts
    its stage-in no later than its plan at its submission (plans around holds that do not move)."""
    plat, jobs, _ = wl
    assume(jobs)
    last = max(jobs, key=lambda j: (j.subtime, j.id))
    assume(sum(j.subtime == last.subtime for j in jobs) == 1)
    sched = staged("plan-2", plat, staging_bandwidth=GB)
    planned = {}
    orig = sched.decide

    def decide(now):
        out = orig(now)
        if now == last.subtime and len(sched.queue) == 1 and sched.queue[0].id == last.id:
            for jid, t in [(i, t) for i, t in sched.last_plan or [] if t is not None]:
                planned[jid] = max(t - last.bb_total / GB, now)
            for d in out:
                planned[d.job.id] = now
        return out

    sched.decide = decide
    times = simulate(sched, plat, jobs)
    if last.id in planned:
        assert times[last.id][0] <= planned[last.id] + 1e-6


# ---------------------------------------------------------------------------- the two-phase class
def test_plan_scheduler_keeps_its_two_phase_class():
    """io-aware plan-α is the class it always was, α fixed (its schedules are checked by
    benchmarks/schedule_hashes.py)."""
    s = make_scheduler("plan-2", Platform.simple(2, [GB]))
    assert isinstance(s, PlanScheduler) and s.alpha == 2 and s.name == "plan-2"
