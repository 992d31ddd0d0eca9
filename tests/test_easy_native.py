"""The EASY family's pass in C (`burstbuffer.schedulers._easy_native`) decides exactly as the Python pass: the same
starts (processors, BB node per processor), reservations, wait reasons, kept reservation and profile change counts
at every decision, on generated workloads and platforms (several BB nodes with chassis preferences, compute ids past
64 and 128: masks of several words), with periodic decisions and queue orders. Skipped without a C compiler."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from procset import ProcSet

from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers import _easy_native, make_scheduler
from burstbuffer.schedulers.base import Job

from .conftest import examples
from .test_policies import GB, PROPS, simulate, workloads

pytestmark = pytest.mark.skipif(not _easy_native.available(),
                                reason=f"native EASY pass unavailable: {_easy_native.LIBRARY.reason}")


def _chassis_platform(n: int, caps: list[int], per_chassis: int) -> Platform:
    """`n` compute ids 0..n-1 in chassis of `per_chassis` (two chassis per group), one BB node per cap, BB node j in
    chassis j: each compute node prefers its chassis's BB node, then its group's, then any."""
    names = {i: f"node_{i}" for i in range(n)}
    location = {i: ((i // per_chassis) // 2, i // per_chassis) for i in range(n)}
    bb = {}
    for j, cap in enumerate(caps):
        bb[n + j] = cap
        names[n + j] = f"bb_{j}"
        location[n + j] = (j // 2, j)
    return Platform(ProcSet((0, n - 1)), names, bb, None, location)


@st.composite
def wide_workloads(draw):
    """Up to 150 compute ids (masks of 1 to 3 words), 1 to 6 BB nodes by chassis, up to 25 jobs."""
    n = draw(st.integers(2, 150), label="nb compute")
    caps = draw(st.lists(st.integers(1, 8), min_size=1, max_size=6), label="BB caps (GB)")
    per = draw(st.integers(1, max(1, n // len(caps))), label="nodes per chassis")
    plat = _chassis_platform(n, [c * GB for c in caps], per)
    jobs, runtime = [], {}
    for i in range(draw(st.integers(1, 25), label="nb jobs")):
        wall = draw(st.integers(1, 20))
        res = draw(st.integers(1, n))
        bb = draw(st.integers(0, 2 * max(caps))) * GB // max(1, draw(st.integers(1, 8)))
        jobs.append(Job(f"w0!{i}", float(draw(st.integers(0, 30))), float(wall), res, bb))
        runtime[f"w0!{i}"] = float(draw(st.integers(1, wall))) - draw(st.sampled_from([0.0, 0.5]))
    return plat, jobs, runtime


def _run(policy, wl, native: bool, **opts):
    """The trace of `simulate` plus, after every decision: the wait reasons handed over, the last reservation, the
    kept reservation and the profile's change counts."""
    plat, jobs, runtime = wl
    with pytest.MonkeyPatch.context() as m:
        if not native:
            m.setattr(_easy_native, "available", lambda: False)
        sched = make_scheduler(policy, plat, seed=0, **opts)
        seen = []
        decide = sched.decide

        def spy(now):
            out = decide(now)
            r, k = sched.last_reservation, sched._kept
            seen.append((now, dict(sched.wait_reasons_changed or {}), sched.wait_reasons,
                         None if r is None else (r.job_id, r.start, r.end, str(r.procs), r.bb_per_storage, r.made_at),
                         None if k is None else (k[0], k[1], k[2].start, str(k[2].procs)),
                         sched.profile.changes, sched.profile.releases))
            return out
        sched.decide = spy
        tr = simulate(sched, jobs, runtime, period=opts.get("period"), horizon=100_000.0)
        assert (sched._easy_pass is not None) == (native and bool(tr.start))   # used from the first decision
        return tr, seen


def _same(policy, wl, **opts):
    (a, sa), (b, sb) = _run(policy, wl, True, **opts), _run(policy, wl, False, **opts)
    assert a.decisions == b.decisions
    assert a.reservations == b.reservations
    assert a.rejected == b.rejected
    assert sa == sb


@PROPS
@given(workloads(), st.sampled_from(["fcfs-easy", "fcfs-bb", "sjf-bb"]), st.sampled_from([None, 1.0, 3.0]))
def test_native_pass_decides_as_python_small(wl, policy, period):
    _same(policy, wl, period=period)


@settings(max_examples=examples(5), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wide_workloads(), st.sampled_from(["fcfs-easy", "fcfs-bb", "sjf-bb"]), st.sampled_from([None, 2.0]),
       st.sampled_from(["fcfs", "sjf", "wfp"]))
def test_native_pass_decides_as_python_wide(wl, policy, period, order):
    _same(policy, wl, period=period, order=order)


def test_native_pass_hand_checked():
    """2 processors, one 10 GB BB node (id 2): a runs [0, 10) on processor 0 with 6 GB. At t=1: b (2 processors,
    2 x 2 GB) is the head (Resources: 1 processor free), reserved at 10 on 0-1 with 4 GB; by ascending walltime, c
    (5 s, 5 GB) does not fit the 4 GB free (BurstBufferResources), e (5 s, 1 GB) starts on processor 1 with its GB
    on node 2 (it ends at 6, before the reservation), then no processor is free: d (20 s) is not looked at, its
    reason after the decision is Priority (it fitted before e started)."""
    plat = Platform.simple(2, [10 * GB])
    sched = make_scheduler("sjf-bb", plat)
    sched.submit(Job("w0!a", 0.0, 10.0, 1, 6 * GB), 0.0)
    assert [s.job.id for s in sched.decide(0.0)] == ["w0!a"]
    for j in (Job("w0!b", 0.0, 5.0, 2, 2 * GB), Job("w0!c", 0.0, 5.0, 1, 5 * GB), Job("w0!d", 0.0, 20.0, 1, 2 * GB),
              Job("w0!e", 0.0, 5.0, 1, GB)):
        sched.submit(j, 1.0)
    starts = sched.decide(1.0)
    assert sched._easy_pass is not None
    assert [(s.job.id, str(s.procs), s.bb_of_node) for s in starts] == [("w0!e", "1", {1: 2})]
    r = sched.last_reservation
    assert (r.job_id, r.start, r.end, str(r.procs), r.bb_per_storage) == ("w0!b", 10.0, 15.0, "0-1", {2: 4 * GB})
    assert sched.wait_reasons == {"w0!b": "Resources", "w0!c": "BurstBufferResources", "w0!d": "Priority"}
