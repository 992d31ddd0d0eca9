"""Energy (``simulate -E``) in the embedded simulator alone, on hand-checked values of tests/data/energy4.xml
(pstate 0: 1 Gflop/s, 95 W idle, 200 W loaded; pstate 1: 0.5 Gflop/s, 140 W loaded; switching OFF: 1 flop at
0.5 flop/s = 2 s; ON: 1 flop at 0.2 flop/s = 5 s; each host 110 us from the master) under
tests/energy_sched.py, and the errors: no energy module (exit 2), energy requests without -E (exit 1).
"""
from __future__ import annotations

import csv
import os
import subprocess
import sys

import pytest

from . import batsim_diff as B

pytestmark = pytest.mark.slow

DATA = B.REPO / "tests" / "data"
SCHED = [sys.executable, str(B.REPO / "tests" / "energy_sched.py"), "{endpoint}"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from burstbuffer.cbuild import NativeUnavailable
    from burstbuffer.simulator import energy
    try:
        energy.load_native()
    except (NativeUnavailable, OSError) as exc:
        pytest.skip(f"the simulator's energy module cannot be built: {exc}")
    tmp = tmp_path_factory.mktemp("energy")
    r = B.run_one(tmp, "embedded", B.embedded_cmd(DATA / "energy4.xml", DATA / "energy-jobs.json", ["-E"]), SCHED)
    assert r.returncode == 0, r.stderr[-2000:]
    return r


def _csv(prefix, suffix):
    with open(prefix + suffix, newline="") as f:
        return list(csv.DictReader(f))


def _events(run, etype):
    return [(e["timestamp"], e["data"]) for d, m in run.messages if d == "B2S" for e in m["events"]
            if e["type"] == etype]


def test_switch_times(run):
    changed = _events(run, "RESOURCE_STATE_CHANGED")
    # all 4 hosts OFF at t=0: 2 s of switching, then the 4 hosts' messages reach the master one after the other
    assert changed[0] == (2.00044, {"resources": "0-3", "state": "2"})
    # 2 hosts ON for job 1: 5 s, then 2 messages
    assert changed[1] == (7.00066, {"resources": "0-1", "state": "0"})
    # DVFS (computation to computation) is immediate
    assert changed[2] == (7.00066, {"resources": "0-1", "state": "1"})


def test_jobs_consumed_energy(run):
    rows = {r["job_id"]: r for r in run.jobs}
    # job 1: 2 hosts at pstate 1 (5e9 flop at 0.5 Gflop/s = 10 s, 140 W loaded)
    assert (rows["1"]["execution_time"], rows["1"]["consumed_energy"]) == ("10.000000", "2800.000000")
    # job 2: a 3-s delay (no load) on a pstate-0 host: 95 W idle
    assert rows["2"]["consumed_energy"] == "285.000000"
    # job 4: 5e9 flop on 1 host at pstate 0 (200 W loaded, 5 s)
    assert rows["4"]["consumed_energy"] == "1000.000000"
    assert rows["k1"]["final_state"] == "COMPLETED_KILLED"
    assert rows["6"]["final_state"] == "COMPLETED_WALLTIME_REACHED"


def test_machine_states_and_energy_files(run):
    states = _csv(run.prefix, "_machine_states.csv")
    cols = ("nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle", "nb_computing")
    assert all(sum(int(r[c]) for c in cols) == 4 for r in states)
    assert {c for r in states for c in cols if int(r[c])} == set(cols)
    pstates = _csv(run.prefix, "_pstate_changes.csv")
    assert pstates[0] == {"time": "0", "machine_id": "0-3", "new_pstate": "0"}
    assert pstates[1] == {"time": "2e-10", "machine_id": "0-3", "new_pstate": "-2"}
    energy = _csv(run.prefix, "_consumed_energy.csv")
    assert [r["event_type"] for r in energy].count("s") == 9       # one start per job
    assert [r["event_type"] for r in energy].count("e") == 9
    totals = [float(r["energy"]) for r in energy]
    assert totals == sorted(totals)
    answers = [d["consumed_energy"] for _, d in _events(run, "ANSWER")]
    assert len(answers) == 9 and answers == sorted(answers)
    (keys, values) = list(csv.reader(open(run.prefix + "_schedule.csv")))
    sched = dict(zip(keys, values))
    # from the first submission (t=0: 0 J) to the last job end
    last_end = [r for r in energy if r["event_type"] == "e"][-1]
    assert sched["consumed_joules"] == last_end["energy"]
    assert sched["nb_grouped_switches"] == str(sum(1 for _, m in run.messages for e in m["events"]
                                                   if e["type"] == "SET_RESOURCE_STATE"))


def _simulate(tmp_path, extra):
    return B.run_one(tmp_path, "x", B.embedded_cmd(DATA / "energy4.xml", DATA / "energy-jobs.json", extra), SCHED)


def test_energy_requests_without_E_stop_the_simulation(tmp_path):
    r = _simulate(tmp_path, [])
    assert r.returncode == 1
    assert "pstate modification request" in r.stderr and "-E" in r.stderr


def test_E_without_the_energy_module_is_an_input_error():
    env = dict(os.environ, BURSTBUFFER_NATIVE="0")
    p = subprocess.run([sys.executable, "-m", "burstbuffer.simulator", "-p", str(DATA / "energy4.xml"),
                        "-w", str(DATA / "energy-jobs.json"), "-E", "-q", "-s", B.free_endpoint()],
                       capture_output=True, text=True, env=env, timeout=120)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1
    assert "energy module" in lines[0] and "BURSTBUFFER_NATIVE" in lines[0]


def test_run_energy_passes_E_to_the_simulator(tmp_path):
    """`burstbuffer run --energy`: the project's scheduler (it never switches machines) beside the simulator
    with -E; the simulator's batsim_jobs.csv carries each job's energy, its energy files are written."""
    out = tmp_path / "run"
    p = subprocess.run([sys.executable, "-m", "burstbuffer", "run", "--policy", "fcfs", "--model", "alloc-only",
                        "--workload", str(DATA / "energy-jobs.json"), "--platform", str(DATA / "energy4.xml"),
                        "--storage", "host3", "--bb-capacity", "1GB", "--energy", "--output", str(out), "-q"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = {r["job_id"]: r for r in _csv(str(out / "batsim"), "_jobs.csv")}
    assert rows["2"]["consumed_energy"] == "285.000000"      # a 3-s delay on an idle pstate-0 host (95 W)
    assert rows["3"]["final_state"] == "REJECTED" and rows["3"]["consumed_energy"] == ""  # 4 hosts, 3 compute
    assert (out / "batsim_consumed_energy.csv").exists() and (out / "batsim_pstate_changes.csv").exists()
