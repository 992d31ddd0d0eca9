"""The EASY family and conservative-bb on the three-phase job model (`burstbuffer.schedulers.profile_scheduler`,
docs/policies.md "On the three-phase model"): a hand-checked schedule whose head reservation holds BB over its
stage-in, invariants on generated workloads, and the app's choice of the variant from the job model."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import examples

from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers import Job, make_scheduler
from burstbuffer.schedulers.base import StageIn
from burstbuffer.io_model.alloc_only import AllocOnlyModel
from burstbuffer.io_model.io_aware import IOAwareModel
from burstbuffer.io_model.three_phase import ThreePhaseModel

from .staged_sim import simulate

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

GB = 10**9
STAGED = ("fcfs-easy", "fcfs-bb", "sjf-bb", "conservative-bb")


def bound(policy: str, plat: Platform, model, **options):
    s = make_scheduler(policy, plat, **options)
    s.bind_job_model(model)
    return s


def staged(policy: str, plat: Platform, **options):
    return bound(policy, plat, ThreePhaseModel(), **options)


def _hand_jobs():
    return [Job("w0!A", 0, 100, 1, 0), Job("w0!B", 1, 10, 2, 5 * GB), Job("w0!C", 2, 93, 1, 5 * GB),
            Job("w0!D", 3, 70, 1, 5 * GB)]


def test_fcfs_bb_reservation_holds_the_bb_of_the_head_jobs_stage_in():
    """2 nodes, one 10 GB BB node, stagings at 1 GB/s (the policy's estimate too). A (1 node, no BB, 100 s)
    runs 0-100 on node 0. B (2 nodes, 5 GB each: stage-in 10 s, 10 s) is the head: its nodes are free at 100,
    so its reservation holds the nodes over [100, 110) and the whole BB over [90, 120) — stage-in from 90,
    stage-out to 120. C (1 node, 5 GB, 93 s), at 2, would stage in over [2, 7), run [7, 100) on node 1 and
    stage out to 105: its BB overlaps B's stage-in, so it waits. D (1 node, 5 GB, 70 s), at 3, stages in
    [3, 8), runs [8, 78), stages out to 83: before 90, backfilled. The policy asks to be called at 90; B
    stages in 90-100 and runs 100-110 (stage-out to 120); C's stage-in needs B's BB, free at 120: C runs
    125-218, stage-out to 223."""
    plat = Platform.simple(2, [10 * GB])
    sched = staged("fcfs-bb", plat, staging_bandwidth=GB)
    assert sched.staged
    t = simulate(sched, plat, _hand_jobs())
    assert t == {"w0!A": (0, 0, 100), "w0!D": (3, 8, 83), "w0!B": (90, 100, 120), "w0!C": (120, 125, 223)}


def test_fcfs_easy_reserves_the_heads_nodes_only():
    """The same jobs under fcfs-easy (processors-only reservation, Kopanski & Rzadca 2021 §3.1): C takes the
    BB B's stage-in needed (stage-in 2-7, nodes 7-100, stage-out to 105), D finds no node, and B stages in
    only at 105 (nodes 115-125, stage-out to 135); D then waits for B's BB: 135-215."""
    plat = Platform.simple(2, [10 * GB])
    t = simulate(staged("fcfs-easy", plat, staging_bandwidth=GB), plat, _hand_jobs())
    assert t == {"w0!A": (0, 0, 100), "w0!C": (2, 7, 105), "w0!B": (105, 115, 135), "w0!D": (135, 140, 215)}


def test_the_job_model_turns_the_staged_lifecycle_on():
    """One policy object for every job model: the three-phase model's hold shapes turn the staged lifecycle on,
    the two-phase models' empty ones leave it off, and so do staging="with-nodes" and a reservation depth."""
    plat = Platform.simple(2, [10 * GB])
    for p in STAGED:
        assert staged(p, plat).staged
        for model in (IOAwareModel(), AllocOnlyModel()):
            assert not bound(p, plat, model).staged
        assert not staged(p, plat, staging="with-nodes").staged
    assert not staged("sjf-bb", plat, reservation_depth=2).staged     # a depth keeps the two-phase behaviour
    for bad in ({"staging": "later"}, {"staging_bandwidth": 0}, {"staging_bandwidth": float("inf")}):
        with pytest.raises(ValueError):
            make_scheduler("fcfs-bb", plat, **bad)


@st.composite
def workloads(draw):
    nb = draw(st.integers(2, 8))
    caps = draw(st.lists(st.integers(1, 10), min_size=1, max_size=3))
    plat = Platform.simple(nb, [c * GB for c in caps])
    jobs = []
    probe = make_scheduler("fcfs-bb", plat)
    for i in range(draw(st.integers(1, 14))):
        res = draw(st.integers(1, nb))
        bb = draw(st.integers(0, max(caps))) * GB // 2
        job = Job(f"w0!{i}", draw(st.integers(0, 60)), draw(st.integers(1, 40)), res, bb)
        if probe.can_ever_fit(job) is None:
            jobs.append(job)
    frac = draw(st.floats(0.1, 1.0))
    return plat, jobs, frac


@settings(max_examples=examples(1.2), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.sampled_from(STAGED), st.sampled_from([GB / 4, GB, 4 * GB]))
def test_never_overallocated_and_every_job_ends(wl, policy, estimate):
    """BB held by pending, running and finishing jobs within every BB node's capacity, nodes never given twice,
    every job ends — with runtimes shorter than the walltime and stage estimates 4× too short or too long."""
    plat, jobs, frac = wl
    sched = staged(policy, plat, staging_bandwidth=estimate)
    times = simulate(sched, plat, jobs, runtime=lambda j: max(1.0, round(frac * j.walltime)))
    assert set(times) == {j.id for j in jobs}
    assert all(len(t) == 3 and t[0] <= t[1] <= t[2] for t in times.values())
    assert not sched.queue and not sched.holds


@settings(max_examples=examples(0.6), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_conservative_jobs_start_no_later_than_their_first_reservation(wl):
    """Exact estimates and runtimes = walltimes: a conservative-bb job's nodes start no later than the plan it
    got at its submission (compression never delays a reservation)."""
    plat, jobs, _ = wl
    sched = staged("conservative-bb", plat, staging_bandwidth=GB)
    first: dict[str, float] = {}
    orig = sched.decide

    def decide(now):
        out = orig(now)
        for jid, t in (sched.last_plan or {}).items():
            first.setdefault(jid, t)
        for d in out:
            first.setdefault(d.job.id, now + d.job.bb_total / GB if isinstance(d, StageIn) else now)
        return out

    sched.decide = decide
    times = simulate(sched, plat, jobs)
    for jid, (_, n, _) in times.items():
        assert n <= first[jid] + 1e-6, (jid, n, first[jid])


# ---------------------------------------------------------------------------- cerberus' starvation rules
def test_cerberus_reserve_lets_short_jobs_pass_a_starving_job():
    """3 nodes, starvation limit 100 s. R (1 node, 1000 s) runs from 0; O (3 nodes, 100 s, at 0.5) waits for
    it. At 200, X (1 node, 50 s) and L (1 node, 5000 s) arrive while O starves. "fcfs": Q_R is served first
    come first served and stops at O, so X and L wait until O ends at 1100. "reserve": O gets a reservation at
    R's expected end (1000, no extra node), X ends before it and runs 200-250, L would not and waits; O runs
    1000-1100, then L."""
    plat = Platform.simple(3, [GB])
    jobs = [Job("w0!R", 0, 1000, 1, 0), Job("w0!O", 0.5, 100, 3, 0), Job("w0!X", 200, 50, 1, 0),
            Job("w0!L", 200, 5000, 1, 0)]
    fcfs = simulate(make_scheduler("cerberus-fcfs-24h", plat, starvation_limit=100, phases="one"), plat, jobs)
    assert fcfs["w0!O"] == (1000, 1000, 1100) and fcfs["w0!X"] == (1100, 1100, 1150)
    resv = simulate(make_scheduler("cerberus", plat, starvation_limit=100, starvation="reserve", phases="one"), plat, jobs)
    assert resv == {"w0!R": (0, 0, 1000), "w0!O": (1000, 1000, 1100), "w0!X": (200, 200, 250),
                    "w0!L": (1100, 1100, 6100)}
    with pytest.raises(ValueError):
        make_scheduler("cerberus", plat, starvation="never")


def test_cerberus_reserve_drains_the_bb_for_a_starving_stage_in():
    """One 10 GB BB node, 4 nodes, stagings at 1 GB/s, limit 50 s. A (1 node, 6 GB, 100 s) stages in 0-6, runs
    6-106 and stages out to 112. B (1 node, 8 GB, 10 s, at 1) cannot stage in (4 GB free) and starves from 51.
    C (1 node, 4 GB, 10 s, at 60) would fit the 4 GB, but "reserve" withholds them for B (the drain): B stages in
    112-120 once A's BB is free, runs 120-130, stages out to 138; C (4 GB + B's 8 GB > 10 GB) then stages in
    138-142, runs 142-152, stages out to 156. Without a limit C stages in at 60."""
    plat = Platform.simple(4, [10 * GB])
    jobs = [Job("w0!A", 0, 100, 1, 6 * GB), Job("w0!B", 1, 10, 1, 8 * GB), Job("w0!C", 60, 10, 1, 4 * GB)]
    t = simulate(make_scheduler("cerberus", plat, starvation_limit=50, starvation="reserve", phases="one"), plat, jobs)
    assert t == {"w0!A": (0, 6, 112), "w0!B": (112, 120, 138), "w0!C": (138, 142, 156)}
    patient = simulate(make_scheduler("cerberus", plat, phases="one"), plat, jobs)
    assert patient["w0!C"][0] == 60                     # without a limit C takes the 4 GB at once


# ---------------------------------------------------------------------------- in the embedded simulator
def _wl(tmp_path, jobs):
    from .test_three_phase import _workload
    return _workload(tmp_path, jobs)


def test_three_phase_columns_and_node_utilisation(tmp_path):
    """cerberus, A (96 nodes, 1 GB per node, 100 s of compute) at 0, B (96 nodes, no BB, 10 s) at 50: A stages in
    96 GB at 5 GB/s (0-19.2), runs 19.2-125.6 (100 s + its output 8 GB per BB node at 1250 MB/s = 6.4 s), stages
    out to 144.8; B runs 125.6-135.6. jobs.csv gives those phases; the processor utilisation counts the running
    phases only: 96 × (106.4 + 10) / (96 × 144.8) = 80.4 % (it was (144.8 + 10) / 144.8 = 107 %)."""
    from burstbuffer.metrics.summary import summarize_csv
    from burstbuffer.runner import run
    from .conftest import PLATFORM
    res = run("cerberus", _wl(tmp_path, [(1, 0, 96, 100e9, GB), (2, 50, 96, 10e9, 0)]), PLATFORM,
              tmp_path / "c", model="three-phase", progress=False, timeout=120)
    import pandas as pd
    j = pd.read_csv(res.jobs_csv).set_index("job_id")
    assert list(j.columns[-4:]) == ["stage_in_end", "nodes_start", "nodes_end", "stage_in_pending"]
    assert j.loc[1, "stage_in_end"] == pytest.approx(19.2, rel=1e-3)        # (+ network latencies)
    assert j.loc[1, "nodes_start"] == pytest.approx(19.2, rel=1e-3)
    assert j.loc[1, "stage_in_pending"] == pytest.approx(19.2, rel=1e-3)
    assert j.loc[1, "nodes_end"] == pytest.approx(125.6, rel=1e-3)
    assert j.loc[1, "finish_time"] == pytest.approx(144.8, rel=1e-3)
    assert j.loc[2, "nodes_start"] == pytest.approx(125.6, rel=1e-3) and j.loc[2, "stage_in_pending"] == 0
    assert j.loc[2, "nodes_end"] - j.loc[2, "nodes_start"] == pytest.approx(10, rel=1e-3)
    s = summarize_csv(str(res.jobs_csv), 96)
    assert s.cpu_utilisation == pytest.approx(116.4 / 144.8, rel=1e-3)


@pytest.mark.parametrize("policy", ["sjf-bb", "plan-2"])
def test_staged_policies_free_the_nodes_before_the_stage_out(tmp_path, policy):
    """sjf-bb and plan-2 on three-phase (staging bb-first, the default): A (96 nodes, 1 GB each) stages in without
    nodes (0-19.2 s at 5 GB/s), B (96 nodes, no BB, at 50) takes the nodes once A's output is written, before A's
    stage-out ends — as cerberus. With staging=with-nodes (the two-phase behaviour, plans) B waits for A's end, and
    jobs.csv counts A's nodes until then."""
    from burstbuffer.runner import run
    from .conftest import PLATFORM
    from .test_three_phase import _phases
    import pandas as pd
    wl = _wl(tmp_path, [(1, 0, 96, 100e9, GB), (2, 50, 96, 10e9, 0)])
    run(policy, wl, PLATFORM, tmp_path / "s", model="three-phase", progress=False, timeout=120)
    ph = _phases(tmp_path / "s")
    j = pd.read_csv(tmp_path / "s" / "jobs.csv").set_index("job_id")
    assert j.loc[1, "starting_time"] == 0 and j.loc[1, "nodes_start"] == pytest.approx(19.2, rel=1e-3)
    assert ph[2]["compute"] == pytest.approx(ph[1]["nodes_free"], abs=1e-2)
    assert ph[2]["compute"] < j.loc[1, "finish_time"] - 19
    run(policy, wl, PLATFORM, tmp_path / "w", model="three-phase", progress=False, timeout=120,
        policy_options={"staging": "with-nodes"})
    ph = _phases(tmp_path / "w")
    j = pd.read_csv(tmp_path / "w" / "jobs.csv").set_index("job_id")
    assert ph[2]["compute"] >= j.loc[1, "finish_time"]
    assert j.loc[1, "nodes_start"] == 0 and j.loc[1, "nodes_end"] == j.loc[1, "finish_time"]
