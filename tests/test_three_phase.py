"""The three-phase job model and the cerberus policy (docs/io-model.md §3, docs/policies.md "cerberus"):
hand-checked schedules in the embedded simulator, invariants on generated workloads, starvation."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from burstbuffer.platforms.model import Platform
from burstbuffer.runner import run
from burstbuffer.schedulers import Job, make_scheduler
from burstbuffer.errors import InputError

from .conftest import PLATFORM, ParallelRuns, examples, selected_params, write_subset
from .staged_sim import simulate

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

GB = 10**9
PFS_BW = 5000e6          # docs/platform.md: the one PFS link, 5 GB/s
BB_LINK = 1250e6         # a BB node's link; 8 compute nodes per BB node (one per chassis)


def _workload(tmp_path, jobs):
    """jobs: [(id, subtime, res, cpu per node [flop], bb per node [B])] → a Batsim workload file."""
    wl = {"nb_res": 96, "jobs": [], "profiles": {}}
    for i, sub, res, cpu, bb in jobs:
        wl["jobs"].append({"id": i, "subtime": sub, "walltime": 10_000, "res": res, "profile": str(i)})
        wl["profiles"][str(i)] = {"type": "parallel_homogeneous", "cpu": cpu, "com": 0, "bb": bb}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(wl))
    return path


def _phases(out):
    """{job id: {"compute": first compute start, "nodes_free": end of the last sub-job on compute nodes}} from
    Batsim's sub-job rows (data stagings have 2 resources: a BB node and the PFS)."""
    bat = pd.read_csv(out / "batsim_subjobs.csv")
    sub = bat[bat.workload_name != "w0"].copy()
    sub["job"] = sub.workload_name.str.split("%").str[1].astype(int)
    on_nodes = sub[~sub.profile.str.startswith("data_staging")]
    return {j: {"compute": g.starting_time.min(), "nodes_free": g.finish_time.max()} for j, g in on_nodes.groupby("job")}


def test_stage_in_overlaps_another_jobs_compute(tmp_path):
    """A (96 nodes, no BB, 100 s of compute) and B (96 nodes, 1 GB per node) both at t = 0. io-aware (fcfs-bb):
    B's stage-in waits for A's nodes, then takes 96 GB / 5 GB/s = 19.2 s before B computes. Three-phase
    (cerberus): B stages in at t = 0 during A's compute and computes as soon as A's nodes are free, 19.2 s
    earlier."""
    wl = _workload(tmp_path, [(1, 0, 96, 100e9, 0), (2, 0, 96, 100e9, GB)])
    io = run("fcfs-bb", wl, PLATFORM, tmp_path / "io", model="io-aware", progress=False, timeout=120)
    tp = run("cerberus", wl, PLATFORM, tmp_path / "tp", model="three-phase", progress=False, timeout=120)
    p_io, p_tp = _phases(tmp_path / "io"), _phases(tmp_path / "tp")
    assert p_tp[1] == pytest.approx(p_io[1], abs=1e-6)               # A is the same job in both
    assert p_tp[2]["compute"] == pytest.approx(p_tp[1]["nodes_free"], abs=1e-3)   # + one decision's delay
    assert p_io[2]["compute"] - p_tp[2]["compute"] == pytest.approx(96 * GB / PFS_BW, rel=1e-3)
    jobs = pd.read_csv(tp.jobs_csv).set_index("job_id")
    assert jobs.loc[2, "starting_time"] == 0.0                         # waiting ends when the stage-in starts
    assert (jobs.final_state == "COMPLETED_SUCCESSFULLY").all()


def test_nodes_freed_before_stage_out_ends_are_taken_by_the_next_job(tmp_path):
    """A (96 nodes, 1 GB per node): stage-in 19.2 s, compute 100 s, output 8 GB per BB node over its
    1250 MB/s link = 6.4 s, then its nodes are free while its stage-out (19.2 s) runs. B (96 nodes, no BB,
    submitted at 50 s) computes from the end of A's output, 19.2 s before A ends."""
    wl = _workload(tmp_path, [(1, 0, 96, 100e9, GB), (2, 50, 96, 10e9, 0)])
    res = run("cerberus", wl, PLATFORM, tmp_path / "tp", model="three-phase", progress=False, timeout=120)
    ph = _phases(tmp_path / "tp")
    jobs = pd.read_csv(res.jobs_csv).set_index("job_id")
    a_compute = 96 * GB / PFS_BW
    assert ph[1]["compute"] == pytest.approx(a_compute, rel=1e-3)
    assert ph[1]["nodes_free"] == pytest.approx(a_compute + 100 + 8 * GB / BB_LINK, rel=1e-3)
    assert ph[2]["compute"] == pytest.approx(ph[1]["nodes_free"], abs=1e-2)   # + decision delays (100 µs each)
    assert jobs.loc[1, "finish_time"] - ph[2]["compute"] == pytest.approx(96 * GB / PFS_BW, rel=1e-3)


def test_policy_needing_three_phase_is_refused_under_io_aware(tmp_path):
    wl = _workload(tmp_path, [(1, 0, 1, 1e9, 0)])
    with pytest.raises(InputError, match="three-phase"):
        run("cerberus", wl, PLATFORM, tmp_path / "x", model="io-aware", progress=False, timeout=60)


# ---------------------------------------------------------------------------- policy-level invariants
@st.composite
def workloads(draw):
    nb = draw(st.integers(2, 8))
    caps = draw(st.lists(st.integers(1, 10), min_size=1, max_size=3))
    plat = Platform.simple(nb, [c * GB for c in caps])
    jobs = []
    for i in range(draw(st.integers(1, 12))):
        res = draw(st.integers(1, nb))
        bb = draw(st.integers(0, max(caps))) * GB // 2
        job = Job(f"w0!{i}", draw(st.integers(0, 50)), draw(st.integers(1, 40)), res, bb)
        if make_scheduler("cerberus", plat).can_ever_fit(job) is None:
            jobs.append(job)
    return plat, jobs


@settings(max_examples=examples(1.5), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.sampled_from(["node-seconds", "nodes", "short-first"]), st.sampled_from(["dp", "milp", "greedy"]))
def test_cerberus_never_overallocates_and_every_job_ends(wl, profit, method):
    plat, jobs = wl
    sched = make_scheduler("cerberus", plat, profit=profit, knapsack_method=method)
    times = simulate(sched, plat, jobs)
    assert set(times) == {j.id for j in jobs}
    assert all(len(t) == 3 and t[0] <= t[1] <= t[2] for t in times.values())
    assert not sched.queue


def test_starving_job_is_served_fcfs_after_the_limit():
    """2 nodes; S (1 node, 10 s: profit 10 node-s) enters Q_R at t = 0 beside a stream of 2-node 100 s jobs
    (profit 200) arriving every 50 s: the knapsack always prefers a stream job, so without a limit S waits
    for the stream's end; with a 150 s limit S is served FCFS at the first decision after t = 150, i.e. when
    the stream job started at 100 releases its nodes at 200."""
    plat = Platform.simple(2, [GB])
    stream = [Job(f"w0!{i}", 50 * i, 100, 2, 0) for i in range(1, 10)]
    jobs = [Job("w0!0", 0, 100, 2, 0), Job("w0!s", 0.5, 10, 1, 0)] + stream
    patient = simulate(make_scheduler("cerberus", plat), plat, jobs)             # the paper's: no rule
    assert patient["w0!s"][1] == 1000                   # after all ten stream jobs (10 × 100 s)
    for policy, options in (("cerberus-fcfs-24h", {}), ("cerberus", {"starvation": "fcfs"}),
                            ("cerberus-fcfs-24h", {"phases": "one"})):
        limited = simulate(make_scheduler(policy, plat, starvation_limit=150, **options), plat, jobs)
        assert limited["w0!s"][1] == 200, (policy, options)
    assert simulate(make_scheduler("cerberus-fcfs-24h", plat), plat, jobs)["w0!s"][1] == 1000   # 24 h: never


def test_two_phase_policy_keeps_the_nodes_until_the_stage_out_ends(tmp_path):
    """sjf-bb on the three-phase model with staging=with-nodes (the two-phase behaviour,
    Scheduler.nodes_released's default): B waits for A's job end, stage-out included, as in io-aware."""
    wl = _workload(tmp_path, [(1, 0, 96, 100e9, GB), (2, 50, 96, 10e9, 0)])
    res = run("sjf-bb", wl, PLATFORM, tmp_path / "tp", model="three-phase", progress=False, timeout=120,
              policy_options={"staging": "with-nodes"})
    ph = _phases(tmp_path / "tp")
    jobs = pd.read_csv(res.jobs_csv).set_index("job_id")
    assert ph[2]["compute"] >= jobs.loc[1, "finish_time"]
    assert jobs.loc[1, "finish_time"] - ph[1]["nodes_free"] == pytest.approx(96 * GB / PFS_BW, rel=1e-3)


def test_cerberus_bad_options():
    plat = Platform.simple(2, [GB])
    for bad in ({"profit": "money"}, {"knapsack_method": "annealing"}, {"starvation_limit": 0}):
        with pytest.raises(ValueError):
            make_scheduler("cerberus", plat, **bad)


def test_cli_options_only_for_cerberus():
    import argparse

    from burstbuffer.policyargs import spec_from_args

    def resolve(policy, profit, limit):
        return spec_from_args(argparse.Namespace(policy=policy, profit=profit, starvation_limit=limit),
                              job_model="three-phase", seed=0).options
    assert resolve("cerberus", "short-first", 60.0) == {"profit": "short-first", "starvation_limit": 60.0}
    with pytest.raises(InputError, match="--profit: nodes: policy sjf-bb takes no option 'profit'"):
        resolve("sjf-bb", "nodes", None)


# ---------------------------------------------------------------------------- slurm-bb
def test_slurm_bb_reserves_no_nodes_for_a_job_not_staged_in():
    """2 nodes, one 10 GB BB node, stagings at 1 GB/s. A (1 node, 10 GB) stages in 0-10, runs 10-110, stages
    out 110-120. B (2 nodes, 5 GB each) cannot stage in before A's BB is free: no reservation, so C (1 node,
    no BB, 1000 s) is backfilled at 2 though it ends long after A. B stages in 120-130 and starts when C ends."""
    plat = Platform.simple(2, [10 * GB])
    jobs = [Job("w0!A", 0, 100, 1, 10 * GB), Job("w0!B", 1, 10, 2, 5 * GB), Job("w0!C", 2, 1000, 1, 0)]
    t = simulate(make_scheduler("slurm-bb", plat), plat, jobs)
    assert t == {"w0!A": (0, 10, 120), "w0!C": (2, 2, 1002), "w0!B": (120, 1002, 1022)}


def test_slurm_bb_reserves_nodes_for_a_staged_job():
    """2 nodes, 20 GB of BB. A (1 node, no BB, 100 s) runs 0-100. B (2 nodes, 5 GB each) stages in 1-11, then
    holds a reservation at 100 (A's expected end): C (1 node, 1000 s, from 12) may not backfill, D (1 node,
    50 s, from 13) may (it ends at 63). B runs 100-110 (stage-out 110-120), C starts at 110."""
    plat = Platform.simple(2, [20 * GB])
    jobs = [Job("w0!A", 0, 100, 1, 0), Job("w0!B", 1, 10, 2, 5 * GB), Job("w0!C", 12, 1000, 1, 0),
            Job("w0!D", 13, 50, 1, 0)]
    t = simulate(make_scheduler("slurm-bb", plat), plat, jobs)
    assert t["w0!B"] == (1, 100, 120)
    assert t["w0!D"][1] == 13 and t["w0!C"][1] == 110


@settings(max_examples=examples(1), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads())
def test_slurm_bb_never_overallocates_and_every_job_ends(wl):
    plat, jobs = wl
    sched = make_scheduler("slurm-bb", plat)
    times = simulate(sched, plat, jobs)
    assert set(times) == {j.id for j in jobs} and not sched.queue


@pytest.fixture(scope="module")
def kth_runs(request, tmp_path_factory):
    """The runs of the selected cases of the next test, two at a time ahead of it (`conftest.ParallelRuns`)."""
    tmp = tmp_path_factory.mktemp("kth100")
    wl = write_subset(tmp / "kth-100.json", 100)
    pool = ParallelRuns()
    for (policy,) in selected_params(request, "test_simulated_bb_and_nodes_never_overallocated_on_kth", "policy"):
        name, options = ("cerberus", {"phases": "one"}) if policy == "cerberus-one" else (policy, None)
        pool.submit(policy, policy=name, workload=wl, platform=PLATFORM, output=tmp / policy, model="three-phase",
                    progress=False, timeout=300, policy_options=options)
    yield pool
    pool.close()


@pytest.mark.parametrize("policy", ["cerberus-one", "slurm-bb", "sjf-bb", "conservative-bb"])
def test_simulated_bb_and_nodes_never_overallocated_on_kth(policy, kth_runs):
    """100 KTH jobs in the embedded simulator (cerberus-one: cerberus with ``phases="one"``, one BB amount per job;
    the as-written shares change by phase and are checked in tests/test_cerberus_as_written.py): each job holds
    its `bb_allocation` from its stage-in start to its end (jobs.csv) and its nodes over its sub-jobs on compute nodes (batsim_jobs.csv); at every instant the
    BB held on each BB node (by pending, running and finishing jobs) is within its 40 GB, and no compute node is
    held by two jobs."""
    from procset import ProcSet
    res = kth_runs.result(policy)
    jobs = pd.read_csv(res.jobs_csv, keep_default_na=False)
    assert len(jobs) == 100 and (jobs.final_state.str.startswith("COMPLETED")).all()
    events = []
    for _, r in jobs.iterrows():
        for item in str(r.bb_allocation).split():
            b, n = item.split(":")
            events += [(float(r.finish_time), -int(n), int(b)), (float(r.starting_time), int(n), int(b))]
    held: dict[int, int] = {}
    for _, n, b in sorted(events):                  # releases before holds at the same instant
        held[b] = held.get(b, 0) + n
        assert held[b] <= 40 * GB
    ph = _phases(res.jobs_csv.parent)
    procs = {int(r.job_id): ProcSet.from_str(r.allocated_resources) for _, r in jobs.iterrows()}
    spans = sorted((p["compute"], p["nodes_free"], j) for j, p in ph.items())
    for k, (s1, e1, j1) in enumerate(spans):
        for s2, e2, j2 in spans[k + 1:]:
            if s2 >= e1:
                break
            assert not (procs[j1] & procs[j2]), (j1, j2)
