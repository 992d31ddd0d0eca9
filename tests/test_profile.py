"""Unit and property tests of the availability profile (burstbuffer.schedulers.profile)."""
from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import examples
from procset import ProcSet

from burstbuffer.platforms.model import Dragonfly, Platform
from burstbuffer.schedulers.base import Job
from burstbuffer.schedulers.profile import AvailabilityProfile, lowest_procs, mask_of, procset_of

GB = 10**9


def job(res, walltime, bb=0, jid="j"):
    return Job(id=jid, subtime=0.0, walltime=walltime, res=res, bb=bb)


def snapshot(p: AvailabilityProfile):
    return [(t, str(procs), bb) for t, procs, bb in p.breakpoints()]


# ---------------------------------------------------------------------------- basics
def test_empty_profile_fits_now_on_lowest_ids():
    plat = Platform.simple(4, [100 * GB])
    p = AvailabilityProfile(plat, origin=5.0)
    fit = p.earliest_fit(job(2, 10, 10 * GB), 7.0)
    assert fit.start == 7.0
    assert fit.procs == ProcSet((0, 1))
    assert fit.bb_of_node == {0: 4, 1: 4}
    assert fit.bb_per_storage(10 * GB) == {4: 20 * GB}
    assert len(p) == 1 and p.origin == 5.0


@given(st.sets(st.integers(0, 200)), st.integers(0, 210))
def test_bitmask_round_trip(ids, k):
    ps = ProcSet(*ids)
    assert procset_of(mask_of(ps)) == ps
    assert mask_of(ps) == sum(1 << i for i in ids)
    if k <= len(ids):
        assert list(lowest_procs(ps, k)) == sorted(ids)[:k]


def test_lowest_procs():
    assert lowest_procs(ProcSet((2, 4), (7, 9)), 4) == ProcSet((2, 4), 7)
    assert lowest_procs(ProcSet((2, 4)), 3) == ProcSet((2, 4))
    assert lowest_procs(ProcSet((2, 4)), 0) == ProcSet()


def test_reserve_then_earliest_fit_waits_for_end():
    plat = Platform.simple(4, [100 * GB])
    p = AvailabilityProfile(plat)
    p.reserve(0, 10, ProcSet((0, 2)), {4: 50 * GB})
    # 1 processor free now: a 2-node job waits for t=10
    fit = p.earliest_fit(job(2, 5), 0)
    assert fit.start == 10 and fit.procs == ProcSet((0, 1))
    # a 1-node job fits now on node 3
    fit = p.earliest_fit(job(1, 5, 50 * GB), 0)
    assert fit.start == 0 and fit.procs == ProcSet(3)
    # … but not with more BB than left (50 GB) until t=10
    fit = p.earliest_fit(job(1, 5, 60 * GB), 0)
    assert fit.start == 10
    # processor-only view ignores the BB
    fit = p.earliest_fit(job(1, 5, 60 * GB), 0, bb_aware=False)
    assert fit.start == 0 and fit.bb_of_node == {}


def test_window_is_half_open():
    plat = Platform.simple(2, [GB])
    p = AvailabilityProfile(plat)
    p.reserve(10, 20, ProcSet((0, 1)), {})
    assert p.fit_at(job(2, 10), 0).procs == ProcSet((0, 1))      # ends exactly at 10
    assert p.fit_at(job(2, 10.5), 0) is None
    assert p.earliest_fit(job(2, 10.5), 0).start == 20
    assert p.fit_at(job(2, 1), 20) is not None                   # starts exactly at 20


def test_gap_too_short_is_skipped():
    plat = Platform.simple(2, [GB])
    p = AvailabilityProfile(plat)
    p.reserve(0, 5, ProcSet((0, 1)), {})
    p.reserve(8, 12, ProcSet((0, 1)), {})
    assert p.earliest_fit(job(2, 3), 0).start == 5
    assert p.earliest_fit(job(2, 4), 0).start == 12
    assert p.earliest_fit(job(1, 4), 1).start == 12
    assert p.earliest_fit(job(2, 2), 6).start == 6                # t0 inside a step


def test_intersection_over_window_not_just_counts():
    # 2 processors free in each slot, but never the same 2 over the whole window
    plat = Platform.simple(3, [GB])
    p = AvailabilityProfile(plat)
    p.reserve(0, 5, ProcSet(2), {})
    p.reserve(5, 10, ProcSet(0), {})
    assert p.fit_at(job(2, 4), 0).procs == ProcSet((0, 1))
    assert p.fit_at(job(2, 6), 0) is None
    fit = p.earliest_fit(job(2, 6), 0)
    assert fit.start == 5 and fit.procs == ProcSet((1, 2))


def test_bb_split_across_nodes_each_share_on_one_node():
    plat = Platform.simple(4, [30 * GB, 30 * GB])
    p = AvailabilityProfile(plat)
    # 3 shares of 20 GB: one per BB node fits only twice (30 // 20 = 1 per node)
    assert p.fit_at(job(3, 1, 20 * GB), 0) is None
    fit = p.fit_at(job(2, 1, 20 * GB), 0)
    assert fit.bb_of_node == {0: 4, 1: 5}
    assert p.earliest_fit(job(3, 1, 20 * GB), 0) is None           # never fits


def test_round_trip_reserve_release_restores_profile():
    plat = Platform.simple(6, [10 * GB, 20 * GB])
    p = AvailabilityProfile(plat, origin=1.0)
    before = snapshot(p)
    holds = [(1.0, 9.0, ProcSet((0, 1)), {6: 5 * GB}),
             (3.0, 7.0, ProcSet(4), {7: 20 * GB}),
             (7.0, math.inf, ProcSet(5), {6: 1}),
             (2.0, 9.0, ProcSet(2), {})]
    for h in holds:
        p.reserve(*h)
    assert len(p) == 5  # 1 (origin), 2, 3, 7, 9
    for h in reversed(holds[1:]):
        p.release(*h)
    p.release(*holds[0])
    assert snapshot(p) == before


def test_reserve_errors_leave_profile_unchanged():
    plat = Platform.simple(2, [10 * GB])
    p = AvailabilityProfile(plat, origin=0.0)
    p.reserve(0, 5, ProcSet(0), {2: 6 * GB})
    before = snapshot(p)
    with pytest.raises(ValueError):
        p.reserve(3, 8, ProcSet((0, 1)), {})          # processor 0 busy until 5
    with pytest.raises(ValueError):
        p.reserve(4, 8, ProcSet(1), {2: 5 * GB})      # only 4 GB free before 5
    with pytest.raises(ValueError):
        p.reserve(-1, 2, ProcSet(1), {})              # before the origin
    with pytest.raises(ValueError):
        p.reserve(2, 2, ProcSet(1), {})               # empty window
    with pytest.raises(ValueError):
        p.reserve(2, 3, ProcSet(1), {99: 1})          # not a BB node
    with pytest.raises(ValueError):
        p.release(0, 5, ProcSet(1), {})               # processor 1 was not held
    with pytest.raises(ValueError):
        p.release(0, 5, ProcSet(0), {2: 7 * GB})      # more BB than held
    assert snapshot(p) == before


def test_advance_forgets_the_past_and_keeps_the_present():
    plat = Platform.simple(3, [GB])
    p = AvailabilityProfile(plat)
    p.reserve(0, 10, ProcSet(0), {})
    p.reserve(2, 4, ProcSet(1), {})
    p.advance(3)
    assert p.origin == 3 and len(p) == 3
    procs, _ = p.free_at(3)
    assert procs == ProcSet(2)
    p.advance(4)
    assert [t for t, *_ in p.breakpoints()] == [4, 10]
    p.advance(50)
    assert [(t, str(pr)) for t, pr, _ in p.breakpoints()] == [(50, "0-2")]
    p.advance(40)  # the past: no-op
    assert p.origin == 50
    # releasing a hold partly in the past only gives back the future part
    p.reserve(50, 60, ProcSet(0), {})
    p.advance(55)
    p.release(50, 60, ProcSet(0), {})
    assert snapshot(p) == [(55, "0-2", {3: GB})]


def test_infinite_hold():
    plat = Platform.simple(2, [GB])
    p = AvailabilityProfile(plat)
    p.reserve(5, math.inf, ProcSet(0), {2: GB})
    assert p.earliest_fit(job(2, 6), 0) is None
    assert p.earliest_fit(job(2, 5), 0).start == 0
    assert p.earliest_fit(job(1, 100, 1), 0) is None                 # BB gone forever after 5
    assert p.earliest_fit(job(1, 100), 0).procs == ProcSet(1)


def test_bb_preference_chassis_then_group_then_any():
    # 2 groups × 2 chassis × 1 router × 3 nodes: node k of chassis c is host 3c+k; the first
    # node of each chassis (0, 3, 6, 9) is a BB node of 10 GB.
    shape = Dragonfly(2, 2, 1, 3)
    bbs = [0, 3, 6, 9]
    compute = [k for k in range(12) if k not in bbs]
    loc = {k: shape.coordinates(k) for k in range(12)}
    plat = Platform(ProcSet(*compute), {k: f"node_{k}" for k in range(12)},
                    {b: 10 * GB for b in bbs}, None, loc)
    assert plat.bb_preference(1) == (0, 3, 6, 9)
    assert plat.bb_preference(7) == (6, 9, 0, 3)
    p = AvailabilityProfile(plat)
    # nodes 1 and 2 (chassis 0, group 0), 6 GB each: 1 → bb 0, 2 → bb 3 (same group), own full
    fit = p.fit_at(job(2, 1, 6 * GB), 0)
    assert fit.procs == ProcSet(1, 2)
    assert fit.bb_of_node == {1: 0, 2: 3}
    # fill group 0's BB nodes: the next share goes to the other group
    p.reserve(0, 10, ProcSet(), {0: 10 * GB, 3: 5 * GB})
    fit = p.fit_at(job(2, 1, 6 * GB), 0)
    assert fit.bb_of_node == {1: 6, 2: 9}  # 6 has 10 GB: one 6-GB share, then 9
    # BB room is min over the window: at t=10 group 0 is free again
    fit = p.earliest_fit(job(2, 1, 6 * GB), 5)
    assert fit.start == 5 and fit.bb_of_node == {1: 6, 2: 9}
    fit = p.fit_at(job(2, 1, 6 * GB), 10)
    assert fit.bb_of_node == {1: 0, 2: 3}


def test_bb_preference_index_one_tuple_per_chassis():
    """The profile's BB preference (indices into bb_ids) equals the platform's order for every compute node,
    and the nodes of one chassis share one tuple: O(chassis x BB nodes) memory, not O(nodes x BB nodes)."""
    shape = Dragonfly(3, 2, 3, 2)          # 6 chassis of 6 nodes; nodes 0-1 of each chassis are BB nodes
    bbs = [c * 6 + j for c in range(6) for j in range(2)]
    compute = [k for k in range(36) if k not in bbs]
    plat = Platform(ProcSet(*compute), {k: f"node_{k}" for k in range(36)}, {b: GB for b in bbs}, None,
                    {k: shape.coordinates(k) for k in range(36)})
    p = AvailabilityProfile(plat)
    for c in compute:
        assert tuple(p.bb_ids[i] for i in p.bb_preference_index(c)) == plat.bb_preference(c)
    tuples = {id(p.bb_preference_index(c)) for c in compute}
    assert len(tuples) == 6
    assert p.bb_preference_index(2) is p.bb_preference_index(5)        # both in chassis 0
    assert p.bb_preference_index(2) is not p.bb_preference_index(8)    # chassis 1


# ---------------------------------------------------------------------------- property test
def brute_free(plat, holds, t):
    procs = ProcSet(plat.compute)
    bb = dict(plat.bb_capacity)
    for s, e, pr, b in holds:
        if s <= t < e:
            procs = procs - pr
            for k, v in b.items():
                bb[k] -= v
    return procs, bb


def brute_earliest(plat, holds, j, t0, bb_aware):
    """Reference: try t0 and every hold boundary after it; check every instant that matters."""
    cands = sorted({t0} | {x for s, e, _, _ in holds for x in (s, e) if x > t0 and x != math.inf})
    for t in cands:
        end = t + j.walltime
        pts = sorted({t} | {x for s, e, _, _ in holds for x in (s, e) if t < x < end})
        procs = ProcSet(plat.compute)
        bbmin = dict(plat.bb_capacity)
        for x in pts:
            pr, bb = brute_free(plat, holds, x)
            procs = procs & pr
            bbmin = {k: min(bbmin[k], bb[k]) for k in bbmin}
        if len(procs) < j.res:
            continue
        if bb_aware and j.bb > 0 and sum(v // j.bb for v in bbmin.values()) < j.res:
            continue
        return t, lowest_procs(procs, j.res)
    return None


@settings(max_examples=examples(1.5), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_profile_matches_brute_force(data):
    n = data.draw(st.integers(1, 6), label="nb_compute")
    caps = data.draw(st.lists(st.integers(1, 10), min_size=1, max_size=3), label="bb caps")
    plat = Platform.simple(n, caps)
    bb_ids = sorted(plat.bb_capacity)
    p = AvailabilityProfile(plat)
    holds = []
    for _ in range(data.draw(st.integers(0, 12), label="nb ops")):
        if holds and data.draw(st.booleans()):
            h = holds.pop(data.draw(st.integers(0, len(holds) - 1)))
            p.release(*h)
            continue
        s = data.draw(st.integers(0, 20))
        e = s + data.draw(st.integers(1, 10))
        free_p = ProcSet(plat.compute)
        free_b = dict(plat.bb_capacity)
        for x in {s} | {y for hs, he, _, _ in holds for y in (hs, he) if s < y < e}:
            pr, bb = brute_free(plat, holds, x)
            free_p &= pr
            free_b = {k: min(free_b[k], bb[k]) for k in free_b}
        k = data.draw(st.integers(0, len(free_p)))
        pr = ProcSet(*data.draw(st.permutations(list(free_p)))[:k]) if k else ProcSet()
        b = {i: data.draw(st.integers(0, free_b[i])) for i in bb_ids}
        h = (float(s), float(e), pr, b)
        p.reserve(*h)
        holds.append(h)
    # breakpoints agree with the brute force everywhere
    for t in range(0, 32):
        pr, bb = p.free_at(t)
        bpr, bbb = brute_free(plat, holds, t)
        assert pr == bpr and bb == bbb, t
    # no two consecutive breakpoints carry the same value (merged)
    vals = [(str(pr), bb) for _, pr, bb in p.breakpoints()]
    assert all(a != b for a, b in zip(vals, vals[1:]))
    for _ in range(4):
        j = job(data.draw(st.integers(1, n)), data.draw(st.integers(1, 12)),
                data.draw(st.integers(0, max(caps))))
        t0 = float(data.draw(st.integers(0, 25)))
        for bb_aware in (True, False):
            got = p.earliest_fit(j, t0, bb_aware=bb_aware)
            want = brute_earliest(plat, holds, j, t0, bb_aware)
            if want is None:
                assert got is None
                continue
            assert got is not None and (got.start, got.procs) == want
            if bb_aware:
                # the placement respects the free BB over the window
                assert set(got.bb_of_node) == (set(got.procs) if j.bb > 0 else set())
                use = got.bb_per_storage(j.bb)
                p.reserve(got.start, got.start + j.walltime, got.procs, use)   # must not raise
                p.release(got.start, got.start + j.walltime, got.procs, use)
            assert p.fit_at(j, got.start, bb_aware=bb_aware) is not None
    p.advance(10.0)
    for t in range(10, 32):
        pr, bb = p.free_at(t)
        assert (pr, bb) == brute_free(plat, holds, t)


# ---------------------------------------------------------------------------- transactions
def test_transaction_rollback_and_commit():
    plat = Platform.simple(4, [10 * GB])
    p = AvailabilityProfile(plat, origin=0.0)
    p.reserve(0, 10, ProcSet(0), {4: GB})
    before = snapshot(p)
    assert not p.in_transaction
    assert p.begin() == 1
    p.reserve(5, 20, ProcSet(1, 2), {4: 2 * GB})
    p.release(0, 10, ProcSet(0), {4: GB})                    # merges breakpoints away
    assert p.begin() == 2                                     # nested
    p.reserve(0, 3, ProcSet(3), {})
    inner = snapshot(p)
    p.rollback()                                              # only the inner changes go
    assert snapshot(p) != inner and p.in_transaction
    p.rollback()
    assert snapshot(p) == before and not p.in_transaction
    p.begin()
    p.reserve(2, 4, ProcSet(3), {})
    after = snapshot(p)
    p.begin()
    p.reserve(4, 6, ProcSet(3), {})
    p.commit()                                                # inner commit: undone by the outer rollback
    p.rollback()
    assert snapshot(p) == before
    p.begin()
    p.reserve(2, 4, ProcSet(3), {})
    p.commit()
    assert snapshot(p) == after and not p.in_transaction
    with pytest.raises(RuntimeError):
        p.rollback()
    with pytest.raises(RuntimeError):
        p.commit()
    p.begin()
    with pytest.raises(RuntimeError):
        p.advance(1.0)                                        # time cannot move in a transaction
    p.rollback()
    p.advance(1.0)
    assert p.origin == 1.0


@settings(max_examples=examples(1), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_transaction_rollback_restores_any_sequence(data):
    plat = Platform.simple(3, [4 * GB, 4 * GB])
    p = AvailabilityProfile(plat, origin=0.0)
    p.reserve(0, 7, ProcSet(0), {3: GB})
    before = snapshot(p)
    p.begin()
    for _ in range(data.draw(st.integers(0, 10))):
        j = job(data.draw(st.integers(1, 3)), data.draw(st.integers(1, 9)), data.draw(st.integers(0, 3)) * GB)
        fit = p.earliest_fit(j, float(data.draw(st.integers(0, 12))))
        if fit is not None:
            p.reserve(fit.start, fit.start + j.walltime, fit.procs, fit.bb_per_storage(j.bb))
            if data.draw(st.booleans()):
                p.release(fit.start, fit.start + j.walltime, fit.procs, fit.bb_per_storage(j.bb))
    p.rollback()
    assert snapshot(p) == before
