"""Cerberus as written (Yan et al., Cerberus, §3; `burstbuffer.schedulers.cerberus`, ``phases="as-written"``):
the three queues' decisions on hand-checked cases, the BB and node invariants with bb_in, bb_run and bb_out,
the phase amounts of the workload (fields, derivation, bad values) and one run through the CLI."""
from __future__ import annotations

import json

import pytest
from procset import ProcSet
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from burstbuffer.cli import main
from burstbuffer.io_model.io_aware import FLOPS_PER_PHASE, phase_bb
from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers import Job, make_scheduler
from burstbuffer.schedulers.base import StageIn, StageOut, Start

from .conftest import PLATFORM, examples
from .staged_sim import Events

pytestmark = pytest.mark.slow   # one CLI simulation (docs/testing.md); the policy cases are fast

GB = 10**9
AS_WRITTEN = {"phases": "as-written", "starvation": "none", "knapsack_method": "exact"}


def job(name, res, walltime=100.0, *, sub=0.0, b_in=0, b_run=0, b_out=0):
    return Job(f"w0!{name}", sub, walltime, res, b_in, bb_in=b_in, bb_run=b_run, bb_out=b_out)


def cerberus(plat, **opts):
    return make_scheduler("cerberus", plat, **{**AS_WRITTEN, **opts})


def names(decisions, kind):
    return sorted(d.job.id.split("!")[1] for d in decisions if isinstance(d, kind))


# ---------------------------------------------------------------------------- hand-checked decisions
def test_problem1_on_q_i_fills_the_free_bb():
    """10 GB of BB, nothing running: bb_in 6, 5, 5 GB (1 node each). Problem 1 stages 5 + 5 = 10 GB in, not
    the oldest job's 6 GB (an FCFS stage-in would stage A, then neither B nor C fits)."""
    plat = Platform.simple(4, [10 * GB])
    s = cerberus(plat)
    for j in (job("A", 1, b_in=6 * GB), job("B", 1, b_in=5 * GB), job("C", 1, b_in=5 * GB)):
        s.submit(j, 0)
    assert names(s.decide(0), StageIn) == ["B", "C"]


def test_problem2_bb_run_binds():
    """4 nodes, 10 GB of BB, jobs straight to Q_R (no stage-in): A 2 nodes × 4 GB bb_run, walltime 100 (profit
    200 node-s), B 2 × 3 GB, 90 s (180), C 1 × 1 GB, 10 s (10). Nodes alone admit A + B (380), but they need
    14 GB; under both constraints the optimum is A + C (3 nodes, 9 GB, 210). The one-amount policy, whose
    Problem 2 is nodes only, starts A and B."""
    plat = Platform.simple(4, [10 * GB])
    jobs = [job("A", 2, 100, b_run=4 * GB), job("B", 2, 90, b_run=3 * GB), job("C", 1, 10, b_run=GB)]
    s = cerberus(plat)
    for j in jobs:
        s.submit(j, 0)
    got = s.decide(0)
    assert names(got, Start) == ["A", "C"]
    assert sum(sum(d.bb_per_storage.values()) for d in got) == 9 * GB      # each holds bb_in + bb_run per node
    one = make_scheduler("cerberus", plat, phases="one")
    for j in jobs:
        one.submit(j, 0)
    assert names(one.decide(0), Start) == ["A", "B"]


def test_problem2_leaves_out_a_chosen_job_that_does_not_fit_on_its_bb_nodes():
    """1 node, two BB nodes of 5 and 2 GB. S (bb_in 3 GB, walltime 1) is staged in on the 5-GB node and waits
    in Q_R for the node, which job L (no BB) holds until t=10. At t=10 Q_R holds S and R (bb_run 2.5 GB,
    walltime 5): Problem 2 under 1 free node and 4 GB of free BB in all chooses R (profit 5 node-s against 1),
    but 2.5 GB fits on neither BB node (2 GB free on each) while S holds its 3 GB, and S is waiting for that
    very node. R is left out and the problem solved again: S starts (then R, once S is done)."""
    plat = Platform(compute=ProcSet(0), names={0: "node_0", 1: "bb_0", 2: "bb_1", 3: "pfs"},
                    bb_capacity={1: 5 * GB, 2: 2 * GB}, pfs=3)
    s = cerberus(plat)
    long_job, staged, big = job("L", 1, 10), job("S", 1, 1, b_in=3 * GB), job("R", 1, 5, b_run=5 * GB // 2)
    s.submit(long_job, 0)
    s.submit(staged, 0)
    first = s.decide(0)
    assert names(first, Start) == ["L"] and names(first, StageIn) == ["S"]
    s.stage_in_done("w0!S", 1)
    s.submit(big, 2)
    assert s.decide(2) == []
    s.job_computed("w0!L", 10)
    assert names(s.decide(10), StageOut) == ["L"]              # no output: its node is released at once
    s.nodes_released("w0!L", 10)
    s.job_ended("w0!L", 10)
    assert names(s.decide(10), Start) == ["S"]


def test_problem1_on_q_o_chooses_the_stage_outs():
    """3 nodes, 10 GB of BB; X, Y, Z (1 node each, no input, no checkpoint) end their computation together with
    outputs of 6, 5 and 5 GB. Problem 1 on Q_O writes Y's and Z's (10 GB): their nodes are released, X keeps
    its node, and gets its StageOut once its 6 GB are free: not when Y's output has drained (5 GB free), when
    Z's has too."""
    plat = Platform.simple(3, [10 * GB])
    s = cerberus(plat)
    assert s.decides_stage_out
    for j in (job("X", 1, b_out=6 * GB), job("Y", 1, b_out=5 * GB), job("Z", 1, b_out=5 * GB)):
        s.submit(j, 0)
    assert names(s.decide(0), Start) == ["X", "Y", "Z"]
    for n in "XYZ":
        s.job_computed(f"w0!{n}", 10)
    got = s.decide(10)
    assert names(got, StageOut) == ["Y", "Z"]
    assert {d.job.id: d.share for d in got} == {"w0!Y": 5 * GB, "w0!Z": 5 * GB}
    for n in "YZ":
        s.nodes_released(f"w0!{n}", 11)
    assert s.decide(11) == [] and len(s.free_nodes) == 2
    s.job_ended("w0!Y", 20)
    assert s.decide(20) == []
    s.job_ended("w0!Z", 21)
    assert names(s.decide(21), StageOut) == ["X"]


def test_stage_out_waits_for_its_own_released_space_first():
    """A job's input and checkpoint space is given back when its computation ends, and Q_O is decided before the
    other queues: a waiting stage-in (Q_I) does not take it from the output."""
    plat = Platform.simple(2, [10 * GB])
    s = cerberus(plat)
    s.submit(job("A", 1, b_in=6 * GB, b_run=2 * GB, b_out=7 * GB), 0)
    assert names(s.decide(0), StageIn) == ["A"]
    s.stage_in_done("w0!A", 5)
    s.submit(job("B", 1, b_in=9 * GB), 5)
    assert names(s.decide(5), Start) == ["A"]                   # A holds 8 GB: B (9 GB) waits
    s.job_computed("w0!A", 50)
    got = s.decide(50)
    assert names(got, StageOut) == ["A"] and names(got, StageIn) == []   # 7 GB out, B still does not fit
    s.nodes_released("w0!A", 51)
    s.job_ended("w0!A", 60)
    assert names(s.decide(60), StageIn) == ["B"]


def test_run_space_of_staged_jobs_is_promised_against_stage_ins():
    """1 node, 10 GB: A (bb_in 4, bb_run 4 GB) and B (bb_in 3 GB) submitted together. Problem 1 chooses both
    (7 ≤ 10 GB), but once A is staged with 4 GB promised to its checkpoints only 2 GB are left for B: B waits.
    Without the promise B's stage-in would leave A 3 GB for its 4 GB of checkpoints, and nothing would ever run."""
    plat = Platform.simple(1, [10 * GB])
    s = cerberus(plat)
    s.submit(job("A", 1, b_in=4 * GB, b_run=4 * GB), 0)
    s.submit(job("B", 1, b_in=3 * GB), 0)
    assert names(s.decide(0), StageIn) == ["A"]
    s.stage_in_done("w0!A", 4)
    got = s.decide(4)
    assert names(got, Start) == ["A"] and got[0].share == 8 * GB


def test_starvation_rule_serves_q_r_fcfs_under_as_written():
    """The project's rule stays an option beside the paper's (none): 1 node; S (10 s, profit 10) waits in Q_R
    beside 100 s jobs (profit 100) arriving every 50 s. Without a rule S waits for the stream's end; with a
    150 s limit (fcfs) it goes first once it starves."""
    plat = Platform.simple(1, [GB])
    stream = [job(f"s{i}", 1, 100, sub=50 * i) for i in range(1, 6)]
    jobs = [job("h", 1, 100), job("S", 1, 10, sub=0.5)] + stream
    none = run_phases(cerberus(plat), plat, jobs)
    assert none["w0!S"][1] == 600
    fcfs = run_phases(cerberus(plat, starvation="fcfs", starvation_limit=150), plat, jobs)
    assert fcfs["w0!S"][1] == 200


def test_bad_options_and_deadlock_is_one_line():
    plat = Platform.simple(1, [10 * GB])
    with pytest.raises(ValueError, match="reserve"):
        make_scheduler("cerberus", plat, phases="as-written", starvation="reserve")
    with pytest.raises(ValueError, match="phases"):
        make_scheduler("cerberus", plat, phases="three")
    # one node; A holds it and computes; B staged (8 GB); A's output (5 GB) exceeds its own 0 B of space
    s = cerberus(plat)
    s.submit(job("A", 1, b_out=5 * GB), 0)
    assert names(s.decide(0), Start) == ["A"]
    s.submit(job("B", 1, b_in=8 * GB), 1)
    assert names(s.decide(1), StageIn) == ["B"]
    s.stage_in_done("w0!B", 2)
    s.decide(2)
    s.job_computed("w0!A", 10)
    with pytest.raises(ValueError, match="deadlock"):
        s.decide(10)


def test_can_ever_fit_checks_the_largest_phase_share():
    plat = Platform.simple(2, [10 * GB])
    s = cerberus(plat)
    assert s.can_ever_fit(job("A", 1, b_in=6 * GB, b_run=4 * GB)) is None
    assert "largest phase share" in s.can_ever_fit(job("B", 1, b_in=6 * GB, b_run=5 * GB))
    assert make_scheduler("cerberus", plat, phases="one").can_ever_fit(job("B", 1, b_in=6 * GB, b_run=5 * GB)) is None


def test_the_default_is_the_paper_s_algorithm():
    """`--policy cerberus` is Cerberus as written (three amounts, no starvation rule, exact knapsacks): the same
    decisions as the explicit options on test_problem2_bb_run_binds' case; cerberus-fcfs-24h adds only the rule."""
    plat = Platform.simple(4, [10 * GB])
    built = {"default": make_scheduler("cerberus", plat), "explicit": cerberus(plat),
             "24h": make_scheduler("cerberus-fcfs-24h", plat)}
    for s in built.values():
        for j in (job("A", 2, 100, b_run=4 * GB), job("B", 2, 90, b_run=3 * GB), job("C", 1, 10, b_run=GB)):
            s.submit(j, 0)
    assert {k: names(s.decide(0), Start) for k, s in built.items()} == dict.fromkeys(built, ["A", "C"])
    assert (built["default"].phases, built["default"].starvation, built["default"].method) == \
        ("as-written", "none", "exact")
    assert (built["24h"].phases, built["24h"].starvation, built["24h"].starvation_limit) == ("as-written", "fcfs", 86400)


# ---------------------------------------------------------------------------- invariants
def run_phases(sched, plat, jobs, *, rate=GB):
    """Drive an as-written Cerberus through the three phases (stage-in and the output's drain last their bytes /
    `rate` s, the computation the walltime; a StageOut's writing is instant). At every decision checks that the
    BB held — bb_in per share from the StageIn, bb_in + bb_run from the Start, none once computed, bb_out from
    the StageOut, until the end — never exceeds a BB node's capacity, that no node is given twice, that a Start
    follows the stage-in and a StageOut the computation. Returns {job id: (first decision, nodes start, end)}."""
    events = Events(jobs)
    push = events.push
    used = dict.fromkeys(plat.bb_capacity, 0)
    held: dict[str, dict[int, int]] = {}
    nodes_used: set[int] = set()
    procs, times, state = {}, {}, {}

    def hold(jid, alloc):
        for b, n in held.pop(jid, {}).items():
            used[b] -= n
        held[jid] = dict(alloc)
        for b, n in alloc.items():
            used[b] += n

    while events:
        now = events.now()
        for kind, j in events.at(now):
            if kind == "submit":
                sched.submit(j, now)
            elif kind == "staged":
                state[j.id] = "staged"
                sched.stage_in_done(j.id, now)
            elif kind == "computed":
                state[j.id] = "computed"
                hold(j.id, {})
                sched.job_computed(j.id, now)
            elif kind == "ended":
                hold(j.id, {})
                sched.job_ended(j.id, now)
                times[j.id] += (now,)
        for d in sched.decide(now):
            j = d.job
            hold(j.id, d.bb_per_storage)
            assert all(used[b] <= plat.bb_capacity[b] for b in used), (now, j.id, used)
            if isinstance(d, StageIn):
                assert j.id not in state and len(d.bb_slots) == j.res
                state[j.id], times[j.id] = "staging", (now,)
                push(now + j.res * j.phase_bb[0] / rate, "staged", j)
            elif isinstance(d, Start):
                assert state.get(j.id) in (None, "staged") and not (set(d.procs) & nodes_used), (now, j.id)
                assert len(d.procs) == j.res
                nodes_used.update(d.procs)
                procs[j.id], state[j.id] = set(d.procs), "running"
                times[j.id] = times.get(j.id, (now,)) + (now,)
                push(now + j.walltime, "computed", j)
            else:
                assert isinstance(d, StageOut) and state[j.id] == "computed"
                state[j.id] = "out"
                nodes_used.difference_update(procs.pop(j.id))
                sched.nodes_released(j.id, now)
                push(now + j.res * d.share / rate, "ended", j)
    return times


@st.composite
def workloads(draw):
    nb = draw(st.integers(1, 6))
    caps = draw(st.lists(st.integers(2, 10), min_size=1, max_size=3))
    plat = Platform.simple(nb, [c * GB for c in caps])
    probe = cerberus(plat)
    jobs = []
    for i in range(draw(st.integers(1, 10))):
        amounts = [draw(st.integers(0, max(caps))) * GB // 2 for _ in range(3)]
        b_in, b_run, b_out = amounts
        b_out = min(b_out, b_in + b_run)           # no output beyond the job's own space: never deadlocks
        j = job(str(i), draw(st.integers(1, nb)), draw(st.integers(1, 40)), sub=draw(st.integers(0, 50)),
                b_in=b_in, b_run=b_run, b_out=b_out)
        if probe.can_ever_fit(j) is None:
            jobs.append(j)
    return plat, jobs


@settings(max_examples=examples(1.5), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.sampled_from(["none", "fcfs"]), st.sampled_from(["exact", "greedy"]))
def test_as_written_never_overallocates_bb_and_every_job_ends(wl, starvation, method):
    plat, jobs = wl
    sched = cerberus(plat, starvation=starvation, knapsack_method=method, starvation_limit=30)
    times = run_phases(sched, plat, jobs)
    assert set(times) == {j.id for j in jobs}
    assert all(len(t) == 3 and t[0] <= t[1] <= t[2] for t in times.values())
    assert not sched.queue and not sched.q_o and all(v == 0 for v in sched.bb.promised.values())
    assert sched.bb.free == plat.bb_capacity


# ---------------------------------------------------------------------------- the workload's phase amounts
def test_phase_amounts_derived_from_the_io_model():
    """bb_in = stage-in bytes, bb_run = one checkpoint's (0.5 bb; none for one compute phase), bb_out = the
    output's; a profile's io_* volumes replace them. Only a parallel_homogeneous profile is split into phases
    (io_model.io_aware.PHASED_TYPE): another profile writes no checkpoint."""
    ph = {"type": "parallel_homogeneous", "com": 0}
    assert phase_bb({**ph, "cpu": 0}, 100) == (100, 0, 100)
    assert phase_bb({**ph, "cpu": 2 * FLOPS_PER_PHASE}, 100) == (100, 50, 100)
    assert phase_bb({**ph, "cpu": 2 * FLOPS_PER_PHASE, "io_stage_in": 7, "io_checkpoint": 3, "io_stage_out": 9},
                    100) == (7, 3, 9)
    assert phase_bb({"type": "delay", "delay": 10}, 100) == (100, 0, 100)
    assert phase_bb({"cpu": 2 * FLOPS_PER_PHASE}, 100) == (100, 0, 100)       # no type: not split
    assert Job("w0!1", 0, 1, 1, 100).phase_bb == (100, 0, 100)


def _workload(tmp_path, jobs, name="w.json"):
    """Jobs (id, subtime, walltime, res, bb per node, extra job fields) with 1 Gflop per node each."""
    doc = {"nb_res": 96, "jobs": [], "profiles": {}}
    for jid, sub, wall, res, bb, extra in jobs:
        doc["jobs"].append({"id": jid, "subtime": sub, "walltime": wall, "res": res, "profile": str(jid), **extra})
        doc["profiles"][str(jid)] = {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0, "bb": bb}
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


@pytest.mark.parametrize("value,reason", [(-1, "-1"), (1.5, "1.5"), ("1GB", "'1GB'"), (True, "True")])
def test_bad_phase_amount_is_one_line_exit_2(tmp_path, capsys, value, reason):
    wl = _workload(tmp_path, [(1, 0, 100, 1, GB, {}), (7, 0, 100, 1, GB, {"bb_run": value})])
    assert main(["run", "--policy", "cerberus", "--model", "three-phase", "--workload", str(wl), "--output",
                 str(tmp_path / "o"), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(wl) in err[0] and "job 7" in err[0] and "bb_run" in err[0] and reason in err[0]


def test_cli_run_as_written_waits_for_bb_before_the_stage_out(tmp_path):
    """Two 12-node jobs (one share on each of the bundled platform's 12 BB nodes of 40 GB, ``--bb-capacity``)
    ending their computation together, each with 30 GB of output per node: Problem 1 on Q_O writes one output
    (360 of the 480 GB), so the other job keeps its nodes until that output has drained; every job completes."""
    extra = {"bb_in": GB, "bb_run": 0, "bb_out": 30 * GB}
    wl = _workload(tmp_path, [(1, 0, 3600, 12, GB, extra), (2, 0, 3600, 12, GB, extra)])
    out = tmp_path / "o"
    opts = [x for k, v in AS_WRITTEN.items() for x in ("--policy-option", f"{k}={v}")]
    assert main(["run", "--policy", "cerberus", "--model", "three-phase", "--workload", str(wl), "--platform",
                 str(PLATFORM), "--bb-capacity", "40GB", "--output", str(out), "-q", *opts]) == 0
    import pandas as pd
    jobs = pd.read_csv(out / "jobs.csv")
    assert (jobs["final_state"] == "COMPLETED_SUCCESSFULLY").all()
    ends = sorted(jobs["nodes_end"])
    first_end = jobs["finish_time"].min()
    assert ends[1] >= first_end - 1e-6          # the second job kept its node until the first one's output drained
