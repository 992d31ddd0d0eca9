"""The embedded simulator end to end: test schedulers (tests/sim_sched.py) in their own process talk to
`python -m burstbuffer.simulator` over ZeroMQ on loopback TCP (docs/protocol.md)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from .sim_sched import REPO, run_simulation

from burstbuffer.simulator.cli import main as sim_main

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

DATA = REPO / "tests" / "data"
CAPTURE_DIR = DATA / "batsim-4.2.1"
BB_ROLES = ",".join(f"node_{9 * k}" for k in range(12)) + ":storage"

HAND = {
    "nb_res": 96,
    "jobs": [
        {"id": 1, "subtime": 10, "walltime": 100, "res": 1, "profile": "ph1"},
        {"id": 2, "subtime": 20, "res": 2, "profile": "ph2"},
        {"id": 3, "subtime": 30, "walltime": 100, "res": 1, "profile": "d"},
        {"id": 4, "subtime": 40, "walltime": 10, "res": 1, "profile": "dlong"},
        {"id": 5, "subtime": 60, "walltime": 20, "res": 4, "profile": "ptlong"},
        {"id": 6, "subtime": 90, "walltime": -1, "res": 1, "profile": "kill"},
        {"id": 7, "subtime": 100, "walltime": 10, "res": 200, "profile": "d", "extra": "kept"},
    ],
    "profiles": {
        "ph1": {"type": "parallel_homogeneous", "cpu": 5e9, "com": 1e6},
        "ph2": {"type": "parallel_homogeneous", "cpu": 3e9, "com": 0},
        "d": {"type": "delay", "delay": 7.5},
        "dlong": {"type": "delay", "delay": 100},
        "ptlong": {"type": "parallel_homogeneous", "cpu": 1e11, "com": 0},
        "kill": {"type": "delay", "delay": 50},
    },
}


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    return run_simulation(tmp_path_factory.mktemp("hand"), HAND, scheduler=("fcfs", "--kill", "w0!6@5"))


def test_hand_computed_timings(hand):
    assert hand.returncode == 0, hand.stderr
    j = {r["job_id"]: r for r in hand.jobs}
    # 5e9 flop on one 1 Gflop/s host: 5 s; 3e9 flop per host on two hosts, no communication: 3 s
    assert (j["1"]["final_state"], j["1"]["starting_time"], j["1"]["execution_time"]) == \
        ("COMPLETED_SUCCESSFULLY", "10.000000", "5.000000")
    assert (j["2"]["execution_time"], j["2"]["requested_time"]) == ("3.000000", "-1.000000")
    assert (j["3"]["execution_time"], j["3"]["finish_time"]) == ("7.500000", "37.500000")
    # walltime: a delay of 100 s and a 100 s parallel task are stopped at their walltime (10 s, 20 s)
    assert (j["4"]["final_state"], j["4"]["execution_time"], j["4"]["success"]) == \
        ("COMPLETED_WALLTIME_REACHED", "10.000000", "0")
    assert (j["5"]["final_state"], j["5"]["execution_time"]) == ("COMPLETED_WALLTIME_REACHED", "20.000000")
    # killed 5 s after its start by the scheduler (CALL_ME_LATER, then KILL_JOB)
    assert (j["6"]["final_state"], j["6"]["execution_time"]) == ("COMPLETED_KILLED", "5.000000")
    assert j["7"]["final_state"] == "REJECTED" and j["7"]["starting_time"] == "" and j["7"]["success"] == "0"
    assert j["1"]["allocated_resources"] == "0" and j["5"]["allocated_resources"] == "0-3"
    assert j["1"]["consumed_energy"] == "-1.000000" and j["1"]["metadata"] == ""


def test_completion_messages(hand):
    done = {e["data"]["job_id"]: (t, e) for t, e in hand.events("JOB_COMPLETED")}
    # the completion crosses link_master (100 us) from the job's first host to the master
    t, e = done["w0!1"]
    assert e["timestamp"] == pytest.approx(15.0001, abs=1e-9)
    assert e["data"] == {"job_id": "w0!1", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": "0"}
    assert done["w0!4"][1]["data"]["job_state"] == "COMPLETED_WALLTIME_REACHED"
    assert done["w0!4"][1]["data"]["return_code"] == -1
    assert done["w0!6"][1]["data"]["job_state"] == "COMPLETED_KILLED"
    (_, killed), = hand.events("JOB_KILLED")
    assert killed["data"]["job_ids"] == ["w0!6"]
    prog = killed["data"]["job_progress"]["w0!6"]
    assert prog["profile_name"] == "kill" and prog["progress"] == pytest.approx(0.1, abs=1e-6)
    (_, call), = hand.events("REQUESTED_CALL")
    assert call["timestamp"] == pytest.approx(95.0)


def test_protocol_exchange(hand):
    msgs = hand.messages
    begins = msgs[0]["events"][0]
    assert begins["type"] == "SIMULATION_BEGINS" and msgs[0]["now"] == 0
    d = begins["data"]
    assert (d["nb_resources"], d["nb_compute_resources"], d["nb_storage_resources"]) == (109, 96, 13)
    assert d["config"]["dynamic-jobs-enabled"] is False and d["config"]["profile-reuse-enabled"] is False
    assert set(d["config"]) == {"redis-enabled", "redis-hostname", "redis-port", "redis-prefix",
                                "profiles-forwarded-on-submission", "dynamic-jobs-enabled",
                                "dynamic-jobs-acknowledged", "profile-reuse-enabled", "sched-config",
                                "forward-unknown-events"}
    assert [r["id"] for r in d["compute_resources"]] == list(range(96))
    assert d["storage_resources"][-1]["name"] == "pfs"
    assert d["compute_resources"][0]["zone_properties"]["burst_buffer_capacity"] == "40GB"
    assert list(d["workloads"]) == ["w0"] and set(d["profiles"]["w0"]) == set(HAND["profiles"])
    subs = [e for _, e in hand.events("JOB_SUBMITTED")]
    assert [e["data"]["job_id"] for e in subs] == [f"w0!{k}" for k in range(1, 8)]
    assert subs[0]["data"]["job"] == {"id": "w0!1", "subtime": 10, "walltime": 100, "res": 1, "profile": "ph1"}
    assert subs[-1]["data"]["job"]["extra"] == "kept" and subs[0]["timestamp"] == pytest.approx(10.0)
    notify = [i for i, m in enumerate(msgs) if any(e["type"] == "NOTIFY" for e in m["events"])]
    last_sub = max(i for i, m in enumerate(msgs) if any(e["type"] == "JOB_SUBMITTED" for e in m["events"]))
    assert len(notify) == 1 and notify[0] > last_sub
    assert msgs[notify[0]]["events"] == [{"timestamp": msgs[notify[0]]["now"], "type": "NOTIFY",
                                          "data": {"type": "no_more_static_job_to_submit"}}]
    assert msgs[-1]["events"][0]["type"] == "SIMULATION_ENDS" and len(msgs[-1]["events"]) == 1
    for m in msgs:
        assert all(e["timestamp"] <= m["now"] for e in m["events"])


def test_output_formats(hand):
    want = (CAPTURE_DIR / "capture10_jobs.csv").read_text().splitlines()[0].split(",")
    assert hand.jobs_header == want
    excerpt = (CAPTURE_DIR / "outputs-excerpt.txt").read_text().splitlines()
    sched_header = excerpt[excerpt.index("### capture10_schedule.csv (complete: header + 1 row)") + 1]
    assert list(hand.schedule[0]) == sched_header.split(",")
    s = hand.schedule[0]
    assert (s["nb_jobs"], s["nb_jobs_rejected"], s["nb_jobs_success"], s["nb_jobs_killed"]) == ("7", "1", "3", "3")
    assert s["nb_computing_machines"] == "109"


def test_think_time_applies_events_later(tmp_path):
    wl = {"nb_res": 96, "jobs": [{"id": 1, "subtime": 10, "walltime": 100, "res": 1, "profile": "d"}],
          "profiles": {"d": {"type": "delay", "delay": 2}}}
    res = run_simulation(tmp_path, wl, scheduler=("fcfs", "--think", "0.5"),
                         sim_args=("--forward-profiles-on-submission",))
    assert res.returncode == 0, res.stderr
    r = res.job(1)
    assert (r["starting_time"], r["waiting_time"], r["finish_time"]) == ("10.500000", "0.500000", "12.500000")
    (_, sub), = res.events("JOB_SUBMITTED")
    assert sub["data"]["profile"] == {"type": "delay", "delay": 2}
    assert res.messages[0]["events"][0]["data"]["config"]["profiles-forwarded-on-submission"] is True


@pytest.mark.parametrize("dynamic", [False, True])
def test_deadlock_is_reported(tmp_path, dynamic):
    wl = {"nb_res": 96, "jobs": [{"id": 1, "subtime": 3, "walltime": 100, "res": 1, "profile": "d"}],
          "profiles": {"d": {"type": "delay", "delay": 2}}}
    res = run_simulation(tmp_path, wl, scheduler=("idle",),
                         sim_args=("--enable-dynamic-jobs",) if dynamic else ())
    assert res.returncode == 1
    (line,) = res.stderr.strip().splitlines()
    assert "deadlock at t=3.000000" in line and "w0!1" in line
    assert ("registration_finished" in line) == dynamic


def test_protocol_violation_stops_with_one_line(tmp_path):
    wl = {"nb_res": 96, "jobs": [{"id": 1, "subtime": 1, "walltime": 100, "res": 2, "profile": "d"}],
          "profiles": {"d": {"type": "delay", "delay": 2}}}
    res = run_simulation(tmp_path, wl, scheduler=("fcfs", "--oversize"))
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "w0!1" in lines[0] and "allocation is invalid" in lines[0]


def test_same_exchange_as_real_batsim(tmp_path):
    """Replaying the scheduler replies of a real Batsim 4.2.1 run (I/O-aware model, dynamic jobs, data
    staging, PFS/BB transfers, metadata) yields the same 124 messages byte for byte and the same jobs.csv."""
    capture = [json.loads(line) for line in (CAPTURE_DIR / "protocol-full-run.jsonl").read_text().splitlines()]
    res = run_simulation(tmp_path, CAPTURE_DIR / "kth-io-aware-first10.json",
                         platform=DATA / "reference" / "dragonfly96.xml",
                         scheduler=("replay", str(CAPTURE_DIR / "protocol-full-run.jsonl")),
                         sim_args=("-r", BB_ROLES, "--enable-dynamic-jobs", "--enable-profile-reuse"))
    assert res.returncode == 0, res.stderr
    ours = [json.loads(line)["raw"] for line in (tmp_path / "messages.jsonl").read_text().splitlines()]
    theirs = [c["raw"] for c in capture if c["dir"] == "batsim->scheduler"]
    assert len(ours) == len(theirs) == 124
    b_ours, b_theirs = json.loads(ours[0]), json.loads(theirs[0])
    b_ours["events"][0]["data"].pop("workloads")
    b_theirs["events"][0]["data"].pop("workloads")
    assert b_ours == b_theirs
    for k, (a, b) in enumerate(zip(ours[1:], theirs[1:]), start=1):
        assert a == b, f"message {k} differs"
    assert Path(res.prefix + "_jobs.csv").read_text() == (CAPTURE_DIR / "capture10_jobs.csv").read_text()


@pytest.mark.parametrize("case, expect", [
    ("no_platform", "missing.xml: platform: file not found"),
    ("no_workload", "nowhere.json: workload: file not found"),
    ("malformed", "bad.json: line 1 column 2: invalid JSON"),
    ("missing_res", "job 3: missing field 'res'"),
    ("unknown_type", "profile p: unknown profile type 'gpu'"),
    ("unknown_profile", "job 1: profile 'zz' is not defined in 'profiles'"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, case, expect):
    good = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
            "profiles": {"p": {"type": "delay", "delay": 1}}}
    platform = str(REPO / "platforms" / "dragonfly96.xml")
    wl = tmp_path / "w.json"
    if case == "no_platform":
        platform = str(tmp_path / "missing.xml")
    elif case == "no_workload":
        wl = tmp_path / "nowhere.json"
    elif case == "malformed":
        wl = tmp_path / "bad.json"
        wl.write_text("{'nb_res': 4}")
    else:
        if case == "missing_res":
            good["jobs"].append({"id": 3, "subtime": 0, "profile": "p"})
        elif case == "unknown_type":
            good["profiles"]["p"] = {"type": "gpu"}
        elif case == "unknown_profile":
            good["jobs"][0]["profile"] = "zz"
        wl.write_text(json.dumps(good))
    if not wl.exists() and case != "no_workload":
        wl.write_text(json.dumps(good))
    status = sim_main(["-p", platform, "-w", str(wl), "-e", str(tmp_path / "o"), "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert len(err) == 1 and expect in err[0] and "Traceback" not in err[0]


def test_kth1000_fcfs_alloc_only(tmp_path):
    """The 1000 KTH jobs (parallel_homogeneous, alloc-only) under a trivial FCFS all complete (their
    speed is measured by benchmarks/bench_run.py, not here)."""
    res = run_simulation(tmp_path, REPO / "workloads" / "kth-1000.json", scheduler=("fcfs",))
    assert res.returncode == 0, res.stderr
    assert len(res.jobs) == 1000
    assert all(r["final_state"].startswith("COMPLETED") for r in res.jobs)


def test_simgrid_options_reach_the_engine(tmp_path):
    """Batsim's --sg-cfg / --sg-log: given to SimGrid after the simulator's own options, so a user's
    logging threshold wins over -q's, and a configuration change is SimGrid's (it logs it)."""
    wl = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
          "profiles": {"p": {"type": "delay", "delay": 3}}}
    res = run_simulation(tmp_path, wl, sim_args=["--sg-cfg", "network/optim:Full",
                                                 "--sg-log", "xbt_cfg.thres:info",
                                                 "--sg-log", "ker_engine.thres:debug"])
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Configuration change: Set 'network/optim' to 'Full'" in res.stderr
    assert "[ker_engine/DEBUG]" in res.stderr
    assert ",3.000000," in Path(res.prefix + "_jobs.csv").read_text()  # the job still ran its 3 s


@pytest.mark.parametrize("args, expect", [
    (["--sg-cfg", "nonsense:1"], "--sg-cfg: nonsense:1: Bad config key: nonsense"),
    (["--sg-cfg", "bmf/max-iterations:abc"], "--sg-cfg: bmf/max-iterations:abc: invalid integer"),
    (["--sg-cfg", "network/optim"], "--sg-cfg: network/optim: expected NAME:VALUE"),
    (["--sg-log", "bogus"], "--sg-log: bogus: expected CATEGORY.SETTING:VALUE"),
    (["--sg-log", "root.thres:loud"], "--sg-log: root.thres:loud: Unknown priority name: loud"),
])
def test_bad_simgrid_option_is_one_line_exit_2(tmp_path, args, expect):
    import subprocess
    import sys
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({"nb_res": 4, "jobs": [], "profiles": {}}))
    out = subprocess.run([sys.executable, "-m", "burstbuffer.simulator", "-p", str(REPO / "platforms" / "dragonfly96.xml"),
                          "-w", str(wl), "-e", str(tmp_path / "o"), "-s", "tcp://localhost:1", "--timeout", "1",
                          *args], capture_output=True, text=True, timeout=60)
    err = out.stderr.strip().splitlines()
    assert out.returncode == 2, out.stderr[-2000:]
    assert len(err) == 1 and expect in err[0], err


@pytest.mark.parametrize("native", ["1", "0"])   # the compiled transport, and pyzmq's (transport.py)
def test_bad_socket_endpoint_is_one_line_exit_2(tmp_path, native):
    import os
    import subprocess
    import sys
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({"nb_res": 4, "jobs": [], "profiles": {}}))
    out = subprocess.run([sys.executable, "-m", "burstbuffer.simulator", "-p", str(REPO / "platforms" / "dragonfly96.xml"),
                          "-w", str(wl), "-e", str(tmp_path / "o"), "-s", "nonsense://x", "--timeout", "1"],
                         capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, BURSTBUFFER_NATIVE=native))
    err = out.stderr.strip().splitlines()
    assert out.returncode == 2, out.stderr[-2000:]
    assert len(err) == 1 and "-s: nonsense://x: ZeroMQ cannot connect there: Protocol not supported" in err[0], err


def test_a_simulation_that_simgrid_stops_early_is_an_error(tmp_path):
    """A job whose end never reaches the server (its message lost: injected here, in the actor core) leaves
    the server waiting on its mailbox with nothing left to run: SimGrid stops the simulation. That is one
    line naming the deadlock and exit status 1, not a success with a truncated jobs.csv."""
    from .sim_sched import run_in_process

    wl = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
          "profiles": {"p": {"type": "delay", "delay": 3}}}
    out = run_in_process(tmp_path, wl, env={"BURSTBUFFER_SIM_CORE": "actors"},
                         before="from burstbuffer.simulator import execution\n"
                                "execution.post_to_server = lambda st, item: None   # the job's message is lost",
                         after="sys.exit(status)")
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("burstbuffer simulate:")]
    assert out.returncode == 1, out.stderr[-2000:]
    assert len(lines) == 1 and "deadlock at t=" in lines[0], out.stderr[-2000:]


def test_simulate_audits_its_outputs(tmp_path, hand):
    """After the run, one line on stderr, the last: the audit of PREFIX_jobs.csv (docs/audit.md); -q: nothing
    unless it fails."""
    r = run_simulation(tmp_path, HAND, scheduler=("fcfs", "--kill", "w0!6@5"), quiet=False)
    assert r.returncode == 0, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last == ("burstbuffer simulate: audit: feasible (4 checks passed: processors, accounted, submission, "
                    "walltime)")
    assert hand.returncode == 0 and "audit" not in hand.stderr
