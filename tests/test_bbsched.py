"""BBSched and its baselines (Fan et al. 2019 §3-4.3): hand-checked windows, the starvation bound, the
placement rule, the exact oracle against brute force, the GA, determinism, no over-allocation."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import examples

from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers import Job, make_scheduler
from burstbuffer.schedulers import moo
from burstbuffer.schedulers.registry import names_taking

from .test_policies import simulate

GB = 10**9
TB = 10**12


def brute_front(n, b, cn, cb):
    """Pareto front by brute force: {(f1, f2): largest front_key selection}."""
    k = len(n)
    pts = {}
    for bits in itertools.product([0, 1], repeat=k):
        x = np.array(bits, bool)
        f1, f2 = int(np.sum(n[x])), int(np.sum(b[x]))
        if f1 <= cn and f2 <= cb:
            key = moo.front_key(x)
            if (f1, f2) not in pts or key > moo.front_key(pts[(f1, f2)]):
                pts[(f1, f2)] = x
    nd = {p: x for p, x in pts.items()
          if not any(q[0] >= p[0] and q[1] >= p[1] and q != p for q in pts)}
    return dict(sorted(nd.items(), reverse=True))


# ---------------------------------------------------------------------------- the 4-job window
# 100 nodes, 100 GB of BB, all free. Jobs (nodes, total BB GB): A (50, 0), B (25, 60), C (40, 20),
# D (40, 20). Feasible selections (≤ 100 nodes, ≤ 100 GB): the four singletons, AB (75, 60),
# AC (90, 20), AD (90, 20), BC (65, 80), BD (65, 80), CD (80, 40); every triple has > 100 nodes.
# Pareto set: (90, 20) AC|AD, (80, 40) CD, (75, 60) AB, (65, 80) BC|BD — the singletons are dominated
# (A by AC, B by AB, C and D by CD). Ties → nearest the front of the window: AC (1010 > 1001), BC.
# §3.2.4: start from (90, 20) = AC. CD: BB gain 20 % vs node loss 10 %: 20 > 2 × 10? no (equal).
# AB: 40 % > 2 × 15 % = 30 % → qualifies. BC: 60 % > 2 × 25 % = 50 % → qualifies. Largest gain: BC.
FOUR = [("A", 50, 0), ("B", 25, 60), ("C", 40, 20), ("D", 40, 20)]
FOUR_FRONT = [(90, 20, "AC"), (80, 40, "CD"), (75, 60, "AB"), (65, 80, "BC")]


def test_four_job_window_front_and_choice():
    n = np.array([j[1] for j in FOUR])
    b = np.array([j[2] for j in FOUR]) * GB
    for front in (moo.exact_front(n, b, 100, 100 * GB),
                  moo.ga_front(n, b, 100, 100 * GB, np.random.default_rng(0))):
        got = [(int(p[0]), int(p[1]) // GB, "".join(j[0] for j, s in zip(FOUR, x) if s))
               for p, x in zip(front.points, front.sets)]
        assert got == FOUR_FRONT
        assert moo.choose(front, 100, 100 * GB) == 3


def four_job_run(policy):
    plat = Platform.simple(100, [100 * GB])
    jobs = [Job(name, 0.0, 100.0, res, tot * GB // res) for name, res, tot in FOUR]
    return simulate(make_scheduler(policy, plat), jobs, {j.id: 100.0 for j in jobs})


@pytest.mark.parametrize("policy", ["bbsched", "bbsched-exact", "bbsched-nsga2"])
def test_four_job_window_schedule(policy):
    # t=0: B and C start (the choice); A (50 nodes, 35 free) is the head, reserved at 100; D (40) does
    # not fit. t=100: A and D fit together (90 nodes, 20 GB) → both start.
    tr = four_job_run(policy)
    assert tr.start == {"B": 0.0, "C": 0.0, "A": 100.0, "D": 100.0}


# ---------------------------------------------------------------------------- paper Table 1
# Fan et al. 2019 Table 1: 100 nodes, 100 TB; J1 (80, 20), J2 (10, 85), J3 (40, 5), J4 (10, 0), J5 (20, 0).
# Worked out in the module notes of docs/bbsched.md; the paper: naive → J1 + J4 (backfilled);
# constrained, weighted (80/20) and bin packing → J1, J5; the Pareto set {J1 J5, J2 J3 J4 J5}; BBSched →
# J2-J5. Weighted 50/50: J2-J5 scores .85 vs .60; 20/80: .88 vs .36. Constrained_BB: 90 TB is the
# most BB (J1 and J2 together exceed it), reached by J2 J3 + any of J4, J5 → nearest the front: J2-J5.
TABLE1 = [("J1", 80, 20), ("J2", 10, 85), ("J3", 40, 5), ("J4", 10, 0), ("J5", 20, 0)]
TABLE1_CHOICE = {
    "bbsched-naive": {"J1", "J4"}, "weighted-cpu": {"J1", "J5"}, "constrained-cpu": {"J1", "J5"},
    "bin-packing": {"J1", "J5"}, "weighted": {"J2", "J3", "J4", "J5"}, "weighted-bb": {"J2", "J3", "J4", "J5"},
    "constrained-bb": {"J2", "J3", "J4", "J5"}, "bbsched": {"J2", "J3", "J4", "J5"},
    "bbsched-exact": {"J2", "J3", "J4", "J5"}, "bbsched-nsga2": {"J2", "J3", "J4", "J5"},
}


@pytest.mark.parametrize("policy", sorted(TABLE1_CHOICE))
def test_table1_choice_of_each_method(policy):
    plat = Platform.simple(100, [100 * TB])
    jobs = [Job(name, 0.0, 100.0, res, tb * TB // res) for name, res, tb in TABLE1]
    sched = make_scheduler(policy, plat)
    for j in jobs:
        sched.submit(j, 0.0)
    started = {s.job.id for s in sched.decide(0.0)}
    assert started == TABLE1_CHOICE[policy]


def test_table1_pareto_set():
    n = np.array([t[1] for t in TABLE1])
    b = np.array([t[2] for t in TABLE1]) * TB
    f = moo.exact_front(n, b, 100, 100 * TB)
    assert f.points.tolist() == [[100, 20 * TB], [80, 90 * TB]]
    assert f.sets.astype(int).tolist() == [[1, 0, 0, 0, 1], [0, 1, 1, 1, 1]]


# ---------------------------------------------------------------------------- starvation bound
def starvation_run(bound):
    """10 nodes. R (5 nodes) holds half the machine for ever. J (3 nodes) and K1 (5) arrive at 1, K2, K3,
    K4 (5 nodes each) at 2, 3, 4; walltime = runtime = 10. constrained-cpu prefers a 5-node job to J at
    every choice. Default bound: J waits behind every K: K1 [1, 11), K2 [11, 21), K3 [21, 31),
    K4 [31, 41), J at 41. Bound 2: J is in the window at t = 1, 2, 3 → forced at 3 (> 2 iterations); it
    does not fit (0 free) → head, reserved at 11; at 11 it starts first; K2 then waits for 21."""
    plat = Platform.simple(10, [10 * GB])
    jobs = [Job("R", 0.0, 1e6, 5, 0), Job("J", 1.0, 10.0, 3, 0), Job("K1", 1.0, 10.0, 5, 0)]
    jobs += [Job(f"K{i}", float(i), 10.0, 5, 0) for i in (2, 3, 4)]
    sched = make_scheduler("constrained-cpu", plat, starvation_bound=bound)
    tr = simulate(sched, jobs, {j.id: j.walltime for j in jobs}, horizon=2e6)
    return tr, sched


def test_starvation_bound_forces_a_job():
    tr, _ = starvation_run(50)
    assert tr.start == {"R": 0.0, "K1": 1.0, "K2": 11.0, "K3": 21.0, "K4": 31.0, "J": 41.0}
    tr, sched = starvation_run(2)
    assert tr.start == {"R": 0.0, "K1": 1.0, "J": 11.0, "K2": 21.0, "K3": 31.0, "K4": 41.0}
    forced = [(d.time, d.forced, d.forced_started) for d in sched.decisions if d.forced]
    # at 11, J, K2 and K3 are all past the bound; J (first in the window) starts, K2 then waits (head)
    assert forced[0] == (3.0, 1, 0) and (11.0, 3, 1) in forced


# ---------------------------------------------------------------------------- placement
def test_pooled_fit_but_not_placeable_is_dropped():
    # Two BB nodes of 10 GB. A and B (1 node, 7 GB each) and C (1 node, 6 GB): 20 GB pooled = the free
    # 20 GB, so the three are selected; placement: A → bb0 (3 GB left), B → bb1 (3 GB left), C (6 GB)
    # fits on neither → not started, counted as dropped; C is then the EASY head and starts at 100.
    plat = Platform.simple(4, [10 * GB, 10 * GB])
    jobs = [Job("A", 0.0, 100.0, 1, 7 * GB), Job("B", 0.0, 200.0, 1, 7 * GB), Job("C", 0.0, 50.0, 1, 6 * GB)]
    sched = make_scheduler("bbsched", plat)
    tr = simulate(sched, jobs, {j.id: j.walltime for j in jobs})
    assert tr.start == {"A": 0.0, "B": 0.0, "C": 100.0}
    d0 = sched.decisions[0]
    assert (d0.solver, d0.selected, d0.started, d0.dropped) == ("all", 3, 2, 1)


# ---------------------------------------------------------------------------- exact oracle, GA
@settings(max_examples=examples(0.6), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_exact_front_equals_brute_force(data):
    k = data.draw(st.integers(0, 8))
    n = np.array(data.draw(st.lists(st.integers(0, 20), min_size=k, max_size=k)), np.int64)
    b = np.array(data.draw(st.lists(st.integers(0, 30), min_size=k, max_size=k)), np.int64) * GB
    cn = data.draw(st.integers(0, 60))
    cb = data.draw(st.integers(0, 100)) * GB
    bf = brute_front(n, b, cn, cb)
    f = moo.exact_front(n, b, cn, cb)
    assert [tuple(map(int, p)) for p in f.points] == list(bf)
    assert [x.tolist() for x in f.sets] == [x.tolist() for x in bf.values()]


@settings(max_examples=examples(0.25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_ga_front_is_feasible_and_approximates_the_true_front(data):
    k = data.draw(st.integers(1, 6))
    n = np.array(data.draw(st.lists(st.integers(1, 20), min_size=k, max_size=k)), np.int64)
    b = np.array(data.draw(st.lists(st.integers(0, 30), min_size=k, max_size=k)), np.int64)
    cn, cb = data.draw(st.integers(0, 60)), data.draw(st.integers(0, 80))
    f = moo.ga_front(n, b, cn, cb, np.random.default_rng(data.draw(st.integers(0, 99))), generations=300)
    for p, x in zip(f.points, f.sets):
        assert p[0] == n[x].sum() <= cn and p[1] == b[x].sum() <= cb
    # an approximation of the true front: every point is weakly dominated by a true one, and the GA's
    # front is itself non-dominated (f1 strictly decreasing, f2 strictly increasing)
    true = list(brute_front(n, b, cn, cb))
    for p in f.points:
        assert any(q[0] >= p[0] and q[1] >= p[1] for q in true)
    assert all(np.diff(f.points[:, 0]) < 0) and all(np.diff(f.points[:, 1]) > 0)


def test_ga_is_a_function_of_the_generator_state():
    rng = np.random.default_rng(5)
    n, b = rng.integers(1, 30, 20), rng.integers(0, 50, 20) * GB
    a = moo.ga_front(n, b, 150, 300 * GB, np.random.default_rng(42))
    c = moo.ga_front(n, b, 150, 300 * GB, np.random.default_rng(42))
    assert np.array_equal(a.points, c.points) and np.array_equal(a.sets, c.sets)
    ex = moo.exact_front(n, b, 150, 300 * GB)
    gd = moo.generational_distance(a.points, ex.points, 96, 480 * GB)
    assert gd >= 0.0
    assert moo.generational_distance(ex.points, ex.points, 96, 480 * GB) == 0.0


def test_generational_distance_by_hand():
    # approx {(0.5, 0.5)}, true {(0.5, 0.3), (1, 1)} in fractions: nearest distance 0.2
    assert moo.generational_distance([[50, 50]], [[50, 30], [100, 100]], 100, 100) == pytest.approx(0.2)


# ---------------------------------------------------------------------------- invariants on runs
def random_jobs(data, n_jobs):
    jobs = []
    for i in range(n_jobs):
        res = data.draw(st.integers(1, 8))
        bb = data.draw(st.sampled_from([0, 1, 2, 3, 5, 8])) * GB
        sub = float(data.draw(st.integers(0, 30)))
        wall = float(data.draw(st.integers(1, 20)))
        jobs.append(Job(f"j{i}", sub, wall, res, bb))
    run = {j.id: j.walltime * data.draw(st.sampled_from([0.5, 1.0])) for j in jobs}
    return jobs, run


@pytest.mark.parametrize("policy", sorted(names_taking("window")))
@settings(max_examples=examples(0.08), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_job_runs_and_nothing_is_over_allocated(policy, data):
    # simulate() asserts at every start that no processor is used twice and no BB node exceeds its capacity
    plat = Platform.simple(8, [10 * GB, 10 * GB])
    jobs, run = random_jobs(data, data.draw(st.integers(1, 14)))
    opts = {"generations": 50} if policy in ("bbsched", "bbsched-nsga2") else {}
    tr = simulate(make_scheduler(policy, plat, window=data.draw(st.integers(1, 6)),
                                 starvation_bound=data.draw(st.integers(0, 5)), **opts), jobs, run, horizon=1e5)
    assert set(tr.start) | set(tr.rejected) == {j.id for j in jobs}


@settings(max_examples=examples(0.1), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_naive_without_starvation_is_fcfs_bb(data):
    plat = Platform.simple(8, [10 * GB, 10 * GB])
    jobs, run = random_jobs(data, data.draw(st.integers(1, 14)))
    a = simulate(make_scheduler("bbsched-naive", plat, starvation_bound=10**9), jobs, run, horizon=1e5)
    b = simulate(make_scheduler("fcfs-bb", plat), jobs, run, horizon=1e5)
    assert a.decisions == b.decisions


@settings(max_examples=examples(0.06), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_same_seed_same_schedule(data):
    plat = Platform.simple(8, [10 * GB, 10 * GB])
    jobs, run = random_jobs(data, 14)
    seed = data.draw(st.integers(0, 1000))
    a = simulate(make_scheduler("bbsched", plat, seed=seed, generations=60), jobs, run, horizon=1e5)
    b = simulate(make_scheduler("bbsched", plat, seed=seed, generations=60), jobs, run, horizon=1e5)
    assert a.decisions == b.decisions


def test_bad_options_raise():
    plat = Platform.simple(4, [GB])
    for policy, opts in [("bbsched", {"window": 0}), ("bbsched", {"mutation_rate": 2.0}),
                         ("bbsched-exact", {"window": 21}), ("weighted", {"starvation_bound": -1}),
                         ("bbsched", {"population": 1})]:
        with pytest.raises(ValueError):
            make_scheduler(policy, plat, **opts)
    with pytest.raises(TypeError):
        make_scheduler("weighted", plat, generations=5)
