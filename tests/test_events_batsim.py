"""Batsim's external events and command-line options beside the real Batsim 4.2.1: the same command line
given to ``batsim`` and to ``python -m burstbuffer.simulator``, a test scheduler that reacts to machine
availability (tests/sim_sched.py fcfs: it never gives a job an unavailable machine; ``--call-on-event``: a
CALL_ME_LATER after each generic event). Every message must be the same byte for byte (SIMULATION_BEGINS:
the same object), and so must
``_jobs.csv`` and ``_machine_states.csv``, and the machine times of ``_schedule.csv`` (docs/batsim.md).
``--no-sched`` (no scheduler): the same outputs.

Skips when no Batsim binary is found ($BATSIM_BIN, else ~/.cache/batsim-4.2.1/build/batsim).
"""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

from . import batsim_diff as B
from .test_simulate_batsim_options import EVENTS, EVENTS_CASE, write_events

BATSIM = B.find_batsim()
pytestmark = [pytest.mark.batsim,   # test tier (setup.cfg markers; docs/testing.md)
              pytest.mark.skipif(BATSIM is None, reason="no real Batsim 4.2.1 binary (set BATSIM_BIN, or build it "
                                "with ../shared/batsim-4.2.1/build/build-batsim.sh)")]

FCFS = [sys.executable, str(B.REPO / "tests" / "sim_sched.py"), "fcfs", "{endpoint}", "--call-on-event"]
MACHINE_TIMES = ("time_computing", "time_idle", "time_sleeping", "time_switching_off", "time_switching_on",
                 "time_unavailable", "nb_jobs", "nb_jobs_success", "makespan", "mean_waiting_time",
                 "nb_computing_machines")


def twelve_jobs(tmp: Path) -> Path:
    """12 jobs of 5 to 90 machines on the 96-node cluster, delays and parallel tasks (with communication)."""
    jobs, profiles = [], {}
    for i, res in enumerate([20, 40, 60, 10, 30, 50, 8, 70, 16, 24, 90, 5]):
        jobs.append({"id": str(i), "subtime": i * 3, "walltime": 200, "res": res, "profile": f"p{i}"})
        profiles[f"p{i}"] = ({"type": "delay", "delay": 5 + (i * 7) % 23} if i % 2 else
                             {"type": "parallel_homogeneous", "cpu": 2e9 * (1 + i % 3), "com": 1e6})
    path = tmp / "w.json"
    path.write_text(json.dumps({"nb_res": 96, "jobs": jobs, "profiles": profiles}))
    return path


def assert_same_run(real, emb, *, files=("_jobs.csv", "_machine_states.csv")):
    assert real.returncode == 0, real.stderr[-2000:]
    assert emb.returncode == 0, emb.stderr[-2000:]
    diffs = B.compare_exchanges(real, emb)
    assert diffs == [], "\n".join(diffs)
    # byte for byte (both runs use the same paths), but for SIMULATION_BEGINS' profiles, which Batsim lists in
    # the order of a hash table (compared as objects above)
    assert real.raw[1:] == emb.raw[1:]
    for suffix in files:
        assert Path(real.prefix + suffix).read_bytes() == Path(emb.prefix + suffix).read_bytes(), suffix
    rows = []
    for run in (real, emb):
        with open(run.prefix + "_schedule.csv", newline="") as f:
            row = next(csv.DictReader(f))
        rows.append({k: row[k] for k in MACHINE_TIMES})
    assert rows[0] == rows[1]


@pytest.mark.parametrize("core", ["bridged", "actors"])
def test_machine_availability_and_generic_events(tmp_path, monkeypatch, core):
    monkeypatch.setenv("BURSTBUFFER_SIM_CORE", core)    # the embedded simulator's two cores (simulator-core.md)
    wl = twelve_jobs(tmp_path)
    ev = write_events(tmp_path / "events.txt", [
        {"timestamp": 5, "type": "machine_unavailable", "resources": "0-39"},     # job 1 runs on 0-39
        {"timestamp": 20, "type": "machine_available", "resources": "0-19"},
        {"timestamp": 30.5, "type": "my_event", "x": 1.5, "extra": {"a": [1, 2]}},
        {"timestamp": 20, "type": "machine_unavailable", "resources": "90-95"},
        {"timestamp": 50, "type": "machine_available", "resources": "20-39 90-95"}])
    real, emb = B.same_command_pair(tmp_path, ["-p", B.CLUSTER, "-w", wl, "--events", ev, "--forward-unknown-events",
                                               "-e", "{prefix}", "-s", "{socket}", "-q"], FCFS, batsim=BATSIM)
    assert_same_run(real, emb)
    assert len(real.jobs) == 12 and all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in real.jobs)
    types = [e["data"].get("type") for d, m in real.messages if d == "B2S" for e in m["events"]
             if e["type"] == "NOTIFY"]
    assert types.count("event_machine_unavailable") == 2 and "my_event" in types
    with open(real.prefix + "_schedule.csv", newline="") as f:
        assert float(next(csv.DictReader(f))["time_unavailable"]) > 0


def test_hand_checked_case_with_mmax_and_two_event_files(tmp_path):
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps(EVENTS_CASE))
    ev1 = write_events(tmp_path / "e1.txt", EVENTS[:2])
    ev2 = write_events(tmp_path / "e2.txt", EVENTS[2:])
    real, emb = B.same_command_pair(tmp_path, ["-p", B.CLUSTER, "-w", wl, "--mmax", "6", "--events", ev1,
                                               "--events", ev2, "--forward-unknown-events", "-e", "{prefix}",
                                               "-s", "{socket}", "-q"], FCFS, batsim=BATSIM)
    assert_same_run(real, emb)
    assert {r["job_id"]: r["starting_time"] for r in real.jobs} == {"1": "0.000000", "2": "10.000150",
                                                                   "3": "12.000000"}


def test_events_without_workload(tmp_path):
    ev = write_events(tmp_path / "events.txt", EVENTS)
    real, emb = B.same_command_pair(tmp_path, ["-p", B.CLUSTER, "--events", ev, "--forward-unknown-events",
                                               "-e", "{prefix}", "-s", "{socket}", "-q"], FCFS, batsim=BATSIM)
    assert_same_run(real, emb)
    assert real.jobs == [] and len(real.messages) >= 10


def test_options_in_simulation_begins(tmp_path):
    """--mmax-workload, --sched-cfg-file, the Redis options, sharing and dynamic jobs: SIMULATION_BEGINS
    (resources and config) the same byte for byte."""
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps(dict(EVENTS_CASE, nb_res=7)))
    cfg = tmp_path / "sched.cfg"
    cfg.write_text('{"a": [1, 2],\n "b": "x"}\n')
    real, emb = B.same_command_pair(tmp_path, ["-p", B.CLUSTER, "-w", wl, "--mmax-workload", "--sched-cfg-file", cfg,
                                               "--redis-hostname", "db", "--redis-port", "7000", "--redis-prefix",
                                               "p", "--enable-compute-sharing", "--enable-dynamic-jobs",
                                               "--enable-profile-reuse", "--disable-schedule-tracing",
                                               "-e", "{prefix}", "-s", "{socket}", "-v", "quiet"],
                                    [sys.executable, str(B.REPO / "tests" / "sim_sched.py"), "fcfs", "{endpoint}",
                                     "--finish-registration"], batsim=BATSIM)
    assert_same_run(real, emb)
    begins = real.messages[0][1]["events"][0]["data"]
    assert begins["nb_compute_resources"] == 7 and begins["config"]["sched-config"] == cfg.read_text()


def test_inconsistent_event_stops_both(tmp_path):
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps(EVENTS_CASE))
    ev = write_events(tmp_path / "events.txt", [{"timestamp": 1, "type": "machine_unavailable", "resources": "2"},
                                                {"timestamp": 2, "type": "machine_available", "resources": "1-2"}])
    real, emb = B.same_command_pair(tmp_path, ["-p", B.CLUSTER, "-w", wl, "--events", ev, "-e", "{prefix}",
                                               "-s", "{socket}", "-q"], FCFS, batsim=BATSIM)
    # machine 1 runs job 1 (machines 0-3) at t=2
    why = "The making of machine 1 ('node_1') available was requested but this machine was not in UNAVAILABLE " \
          "state (current state: computing)."
    assert real.returncode != 0 and why in real.stderr
    assert emb.returncode == 1 and why in emb.stderr
    # the messages up to the failure are the same
    assert [m for d, m in emb.messages] == [m for d, m in real.messages][:len(emb.messages)]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_no_sched_same_outputs(tmp_path, seed):
    """--no-sched: every job at t=0 on machines 0..res-1 in Batsim's job-table order (the machine states at
    t=0 follow it), delays and parallel tasks sharing machines, some stopped at their walltime; ids as
    strings or integers, several workloads."""
    import random
    import subprocess

    rng = random.Random(seed)
    profiles = {"d": {"type": "delay", "delay": 10}, "p": {"type": "parallel_homogeneous", "cpu": 3e9, "com": 2e6},
                "long": {"type": "delay", "delay": 50}}
    workloads = []
    for w in range(1 + seed % 2):
        n = rng.randint(2, 120)
        jobs = [{"id": i if rng.random() < 0.5 else str(i), "subtime": rng.randint(0, 100),
                 "walltime": rng.choice([30, 1000, -1]), "res": rng.randint(1, 96), "profile": rng.choice(list(profiles))}
                for i in rng.sample(range(100000), n)]
        path = tmp_path / f"w{w}.json"
        path.write_text(json.dumps({"nb_res": 96, "jobs": jobs, "profiles": profiles}))
        workloads += ["-w", str(path)]
    outs = {}
    for name, cmd in (("real", [BATSIM]), ("embedded", [sys.executable, "-m", "burstbuffer.simulator"])):
        (tmp_path / name).mkdir()
        r = subprocess.run([*cmd, "-p", str(B.CLUSTER), *workloads, "--no-sched", "-e", str(tmp_path / name / "out"),
                            "-q"], capture_output=True, text=True, timeout=300, cwd=str(B.REPO))
        assert r.returncode == 0, r.stderr[-2000:]
        with open(tmp_path / name / "out_schedule.csv", newline="") as f:
            row = next(csv.DictReader(f))
        outs[name] = ((tmp_path / name / "out_jobs.csv").read_bytes(),
                      (tmp_path / name / "out_machine_states.csv").read_bytes(), {k: row[k] for k in MACHINE_TIMES})
    assert outs["real"] == outs["embedded"]
    assert float(outs["real"][2]["time_computing"]) > 0


#: the events files of Batsim 4.2.1's own tests (its repository's events/): test_events_4hosts.txt,
#: test_generic_event.txt, test_generic_events2.txt
BATSIM_EVENTS = {
    "4hosts": [{"type": "machine_unavailable", "resources": "0", "timestamp": 0},
               {"type": "machine_available", "resources": "0", "timestamp": 10},
               {"type": "machine_unavailable", "resources": "0-1 3", "timestamp": 20},
               {"type": "machine_available", "resources": "0 1", "timestamp": 250},
               {"type": "machine_available", "resources": "3", "timestamp": 300}],
    "generic": [{"type": "generic", "timestamp": 5.3, "data": "some data"}],
    "generic2": [{"type": "generic", "timestamp": float(t), "data": f"some data {t}.0"} for t in range(5, 60, 10)],
}


@pytest.mark.parametrize("events", sorted(BATSIM_EVENTS))
def test_batsims_own_event_files(tmp_path, events):
    """Batsim's own events files on a 4-machine platform (tests/data/energy4.xml, without -E), 12 jobs of 1
    to 4 machines submitted over 100 s; machine 0 is unavailable at t = 0, before the first message."""
    jobs = [{"id": str(i), "subtime": 9 * i, "walltime": 500, "res": 1 + i % 4, "profile": "p" if i % 3 else "d"}
            for i in range(12)]
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": {
        "d": {"type": "delay", "delay": 17}, "p": {"type": "parallel_homogeneous", "cpu": 2e10, "com": 1e5}}}))
    lines = "".join(json.dumps(e).replace('"timestamp": ', '"timestamp" : ') + "\n" for e in BATSIM_EVENTS[events])
    (tmp_path / "events.txt").write_text(lines)
    real, emb = B.same_command_pair(tmp_path, ["-p", B.REPO / "tests" / "data" / "energy4.xml", "-w", wl, "--events",
                                               tmp_path / "events.txt", "--forward-unknown-events", "-e", "{prefix}",
                                               "-s", "{socket}", "-q"], FCFS, batsim=BATSIM)
    assert_same_run(real, emb)
    assert len(real.jobs) == 12
