"""BBSched's GA: the C loop (`_ga_native`, the package's one implementation) and its oracle, the numpy loop
(tests/oracles/ga_numpy.py, the package's GA before the C loop) give the same front, hence the same §3.2.4
decision, on generated windows; and a `bbsched` run makes the same decisions with the C loop and with
the oracle (docs/bbsched.md "The GA")."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import examples

from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers import Job, make_scheduler, moo

from .oracles.ga_numpy import ga_front_numpy
from .test_policies import simulate

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

GB = 10**9


def fronts(n, b, cn, cb, seed, **opts):
    """(the numpy oracle, the package's C loop) fronts of one window with generators in the same state."""
    ref = ga_front_numpy(n, b, cn, cb, np.random.default_rng(seed), **opts)
    nat = moo.ga_front(n, b, cn, cb, np.random.default_rng(seed), **opts)
    return ref, nat


def assert_same(ref, other, total_nodes, total_bb):
    assert other.points.dtype == ref.points.dtype and other.sets.dtype == ref.sets.dtype
    assert np.array_equal(other.points, ref.points)
    assert np.array_equal(other.sets, ref.sets)
    assert moo.choose(other, total_nodes, total_bb) == moo.choose(ref, total_nodes, total_bb)


@st.composite
def windows(draw, max_k=30):
    """A window of k jobs (nodes, total BB bytes in one of several units) and capacities in
    [0, the window's sums + 1]."""
    k = draw(st.integers(1, max_k))
    n = np.array(draw(st.lists(st.integers(0, 64), min_size=k, max_size=k)), np.int64)
    unit = draw(st.sampled_from([1, 10**6, GB, 40 * GB]))
    b = np.array(draw(st.lists(st.integers(0, 400), min_size=k, max_size=k)), np.int64) * unit
    cn = draw(st.integers(0, int(n.sum()) + 1))
    cb = draw(st.integers(0, int(b.sum()) + 1))
    return n, b, cn, cb


@settings(max_examples=examples(1.5), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(w=windows(), seed=st.integers(0, 2**32 - 1), P=st.integers(1, 24), G=st.integers(0, 80),
       pm=st.sampled_from([0.0, 0.0005, 0.01, 0.05, 0.3, 1.0]))
def test_native_equals_the_numpy_oracle(w, seed, P, G, pm):
    n, b, cn, cb = w
    ref, nat = fronts(n, b, cn, cb, seed, population=P, generations=G, mutation_rate=pm)
    total_nodes, total_bb = max(int(n.sum()), 1), max(int(b.sum()), 1)
    assert_same(ref, nat, total_nodes, total_bb)


@settings(max_examples=examples(0.1), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(w=windows(max_k=moo.GA_LIMIT), seed=st.integers(0, 2**32 - 1))
def test_native_equals_the_reference_at_the_default_settings(w, seed):
    # the benchmark's settings: P = 20, G = 500, p_m = 0.0005 (and windows up to GA_LIMIT jobs)
    n, b, cn, cb = w
    ref, nat = fronts(n, b, cn, cb, seed)
    assert_same(ref, nat, 96, 480 * GB)


@pytest.mark.parametrize("seed", [0, 1])
def test_native_equals_the_reference_on_a_large_window(seed):
    # w = 50, G = 2000 (the paper's second setting), the default and a high mutation rate; BB requests
    # shrink as node requests grow, so that node usage and BB usage conflict (fronts of 3-5 points)
    rng = np.random.default_rng(100 + seed)
    n = rng.integers(1, 40, 50)
    b = (40 - n) * rng.integers(1, 20, 50) * GB
    sizes = []
    for pm in (0.0005, 0.05):
        ref, nat = fronts(n, b, 60, 300 * GB, seed, generations=2000, mutation_rate=pm)
        assert_same(ref, nat, 96, 480 * GB)
        sizes.append(len(ref))
    assert max(sizes) > 1                                         # a real front, not a trivial one


def kth_like_jobs(seed: int, n_jobs: int = 40) -> tuple[list[Job], dict[str, float]]:
    """Jobs on an 8-processor, 2 × 10 GB machine that often queue together (GA decisions)."""
    rng = np.random.default_rng(seed)
    jobs = [Job(f"j{i}", float(rng.integers(0, 40)), float(rng.integers(5, 30)), int(rng.integers(1, 6)),
                int(rng.integers(0, 4)) * GB) for i in range(n_jobs)]
    return jobs, {j.id: j.walltime * float(rng.choice([0.5, 1.0])) for j in jobs}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bbsched_run_same_with_the_c_loop_and_its_oracle(seed, monkeypatch):
    plat = Platform.simple(8, [10 * GB, 10 * GB])
    jobs, run = kth_like_jobs(seed)

    def one():
        sched = make_scheduler("bbsched", plat, seed=seed, generations=60, window=8)
        return simulate(sched, jobs, run, horizon=1e6), sched.decisions

    a, rec_a = one()
    monkeypatch.setattr(moo, "ga_front", ga_front_numpy)              # the policy's GA, in numpy
    b, rec_b = one()
    assert sum(r.solver == "ga" for r in rec_a) >= 3                 # the GA did decide
    assert a.decisions == b.decisions and a.start == b.start
    assert rec_a == rec_b
