"""Energy (``-E``) beside a real Batsim 4.2.1: the same energy-using scheduler (tests/energy_sched.py: switches
idle machines OFF and ON, DVFS through SET_RESOURCE_STATE, QUERY consumed_energy after every job end, one
kill, one walltime reached) against both simulators; every message both ways and the outputs cell for cell
(tests/energy_diff.py says the one tolerance, on `_consumed_energy.csv`'s epower column, and why).

Skips when no Batsim binary is found ($BATSIM_BIN, else ~/.cache/batsim-4.2.1/build/batsim) or when the
simulator's energy module cannot be built.
"""
from __future__ import annotations

import copy
import json
import sys

import pytest

from . import batsim_diff as B
from .energy_diff import compare_energy_outputs, energy_platform, six_pstate_platform

BATSIM = B.find_batsim()
pytestmark = [pytest.mark.batsim,
              pytest.mark.skipif(BATSIM is None, reason="no real Batsim 4.2.1 binary (set BATSIM_BIN, or build it "
                                 "with ../shared/batsim-4.2.1/build/build-batsim.sh; .ci/run does)")]

DATA = B.REPO / "tests" / "data"
SCHED = [sys.executable, str(B.REPO / "tests" / "energy_sched.py"), "{endpoint}"]


@pytest.fixture(scope="module", autouse=True)
def _energy_module():
    from burstbuffer.cbuild import NativeUnavailable
    from burstbuffer.simulator import energy
    try:
        energy.load_native()
    except (NativeUnavailable, OSError) as exc:
        pytest.skip(f"the simulator's energy module cannot be built: {exc}")


def _pair(tmp_path, platform, workload, sched=SCHED):
    real = B.run_one(tmp_path, "real", B.real_cmd(BATSIM, platform, workload, ["-E"]), sched)
    emb = B.run_one(tmp_path, "embedded", B.embedded_cmd(platform, workload, ["-E"]), sched)
    assert real.returncode == 0, real.stderr[-2000:]
    assert emb.returncode == 0, emb.stderr[-2000:]
    return real, emb


def _answers_apart(real, emb, tol: float):
    """The runs with every ANSWER consumed_energy taken out (returned aside, for a comparison within `tol`)."""
    out = []
    for run in (real, emb):
        values = []
        msgs = copy.deepcopy(run.messages)
        for _, m in msgs:
            for ev in m.get("events", []):
                if ev.get("type") == "ANSWER":
                    values.append(ev["data"].pop("consumed_energy"))
        r = copy.copy(run)
        r.messages = msgs
        out.append((r, values))
    (ra, va), (rb, vb) = out
    assert len(va) == len(vb)
    far = [(x, y) for x, y in zip(va, vb) if abs(x - y) > tol]
    return ra, rb, far


def test_energy_scheduler_same_exchange_and_outputs(tmp_path):
    """4 hosts, 9 jobs: every message and every output cell identical (epower: energy_diff's rule)."""
    real, emb = _pair(tmp_path, DATA / "energy4.xml", DATA / "energy-jobs.json")
    assert B.compare_exchanges(real, emb) == []
    assert compare_energy_outputs(real.prefix, emb.prefix) == []
    kinds = {e["type"] for d, m in real.messages for e in m["events"]}
    assert {"RESOURCE_STATE_CHANGED", "ANSWER", "JOB_KILLED"} <= kinds
    states = {r["job_id"]: r["final_state"] for r in real.jobs}
    assert states["6"] == "COMPLETED_WALLTIME_REACHED" and states["k1"] == "COMPLETED_KILLED"
    # hand-checked: job 1 runs 2 hosts at pstate 1 (0.5 Gflop/s, 140 W loaded) for 10 s
    job1 = next(r for r in emb.jobs if r["job_id"] == "1")
    assert (job1["execution_time"], job1["consumed_energy"]) == ("10.000000", "2800.000000")


@pytest.mark.slow
def test_energy_scheduler_kth100_on_16_hosts(tmp_path):
    """100 KTH jobs (those of the first 400 that fit 16 hosts, submissions shifted to start at 0) on 16
    energy hosts: the same messages but for ANSWER's consumed_energy, within 1e-5 J of ~5e8 J, and the same
    jobs.csv (consumed_energy included), machine states and pstate changes; `_consumed_energy.csv`'s energy
    within 1e-5 J. The runs' platform-wide energy sums differ by a few 1e-7 J (ulps of their ~1e8 J, from
    updates of the energy plugin at clock values that differ in their last bits), which flips the sixth
    decimal of some printed totals; every job's energy is identical."""
    plat = energy_platform(tmp_path / "energy16.xml", 16)
    w = json.loads((B.REPO / "workloads" / "kth-1000.json").read_text())
    jobs = [j for j in w["jobs"][:400] if j["res"] <= 16][:100]
    t0 = jobs[0]["subtime"]
    jobs = [dict(j, subtime=j["subtime"] - t0) for j in jobs]
    wl = tmp_path / "kth100.json"
    wl.write_text(json.dumps({"nb_res": 16, "jobs": jobs,
                              "profiles": {j["profile"]: w["profiles"][j["profile"]] for j in jobs}}))
    real, emb = _pair(tmp_path, plat, wl)
    ra, rb, far = _answers_apart(real, emb, 1e-5)
    assert B.compare_exchanges(ra, rb) == []
    assert far == []
    assert B.compare_jobs(real, emb) == []
    assert [r["consumed_energy"] for r in real.jobs] == [r["consumed_energy"] for r in emb.jobs]
    assert compare_energy_outputs(real.prefix, emb.prefix, energy_tol=1e-5) == []
    assert len(real.jobs) == 100


def test_pybatsim_fcfs_sched_sleep(tmp_path):
    """pybatsim 3.2.1's own energy scheduler (fcfsSchedSleep: one SET_RESOURCE_STATE per machine, OFF when
    idle, ON when the queue's head needs it) on the 9 jobs: the same messages, jobs.csv identical. Two
    tolerances, both from the embedded simulator's message timing at t=0, not from energy: the events of the
    scheduler's reply to the t=0 submission are handled 1e-10 s earlier than in Batsim (there, two 1-byte
    messages on the master's loopback at once share it), so the first rows of `_machine_states.csv` and
    `_pstate_changes.csv` are 1e-10 s apart (printed 3e-10 vs 4e-10), and the switch-offs started then draw
    their watts 1e-10 s longer, which moves the platform's energy sums by about 1e-8 J and flips the sixth
    decimal of a few printed totals."""
    pytest.importorskip("batsim.batsim", reason="pybatsim 3.2.1 is not installed (test extra)")
    pytest.importorskip("sortedcontainers", reason="sortedcontainers (fcfsSchedSleep's) is not installed")
    sched = [sys.executable, str(B.REPO / "tests" / "pybatsim_energy.py"), "fcfsSchedSleep", "-s", "{endpoint}",
             "-t", "600000", "-v", "warning"]
    real, emb = _pair(tmp_path, six_pstate_platform(tmp_path / "energy4-6p.xml"), DATA / "energy-jobs.json", sched)
    assert B.compare_exchanges(real, emb) == []
    assert B.compare_jobs(real, emb) == []
    assert [r["consumed_energy"] for r in real.jobs] == [r["consumed_energy"] for r in emb.jobs]
    assert compare_energy_outputs(real.prefix, emb.prefix, energy_tol=2e-6, time_tol=1e-9) == []
    assert sum(1 for d, m in real.messages for e in m["events"] if e["type"] == "RESOURCE_STATE_CHANGED") >= 8
