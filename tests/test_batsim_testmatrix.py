"""Batsim 4.2.1's own test matrix (its ``test/`` folder at tag v4.2.1), run twice with batsched 1.4.0 as the
scheduler: once by the real Batsim and once by ``burstbuffer simulate`` given exactly the same command line
(``-p PLATFORM -w WORKLOAD -e PREFIX -s SOCKET`` plus the test's own options, as Batsim's ``helper.py``
writes it). The inputs are Batsim's own (tests/data/batsim-4.2.1/platforms, workloads: see the README there).

Compared byte for byte: ``_jobs.csv`` and ``_machine_states.csv``; with ``--energy`` also
``_pstate_changes.csv`` and ``_consumed_energy.csv``; and every cell of ``_schedule.csv`` but the simulator's
version and its two wall-clock times (`WALL_CLOCK`); the Pajé trace ``_schedule.trace`` line for line but the
job colours Batsim draws at random (`batsim_diff.paje_lines`). Every protocol
message is compared too (tests/batsim_diff.py's proxy). Then each family's own check, as Batsim's test does it:

- ``test_simple``: the basic algorithms (fcfs_fast, easy_bf_fast, filler) on the small platform with the small
  workloads (``test_basic1``), and on every platform of Batsim's matrix with its one-job workloads
  (``test_basic2``);
- ``test_energy``: sleeper and energy_watcher on the two energy platforms with ``--energy`` and Batsim's energy
  model as batsched's options; ``test_energy_minimal``: energy_bf_idle_sleeper on the minimal-load workloads;
- ``test_walltime``: fcfs_fast on cluster512, no job runs past its walltime (Batsim's ``check_ok``);
- ``test_kill`` (``test_kill_progress``): batsched's killer, 5 s after each start, with
  ``--forward-profiles-on-submission``; every JOB_KILLED carries the job's progress;
- ``test_submitorder``: JOB_SUBMITTED events come in (submission time, job id) order;
- ``test_tuto_stencil``: composed profiles with ``parallel_homogeneous_pfs`` parts on cluster512_pfs;

and, beyond Batsim's matrix, a TORUS cluster's properties (its hosts', not its zone's) and -r given twice.

By default a selection of the cases (37) that covers every platform, workload, algorithm and option of the
matrix at least once, every (platform, one-job workload) pair included; ``BATSIM_TESTMATRIX=full`` runs their
whole cross product (102 cases: test_simple's 72, test_energy's 12, ...).
Skips when the real Batsim or batsched is absent (tests/test_batsched_batsim.py), and the energy cases when the
simulator's energy module cannot be built.
"""
from __future__ import annotations

import csv
import itertools
import json
import os
import sys
from pathlib import Path

import pytest

from . import batsim_diff as B
from .test_batsched_batsim import BATSCHED, BATSIM, batsched_cmd, energy_module  # noqa: F401 (fixture)

pytestmark = [pytest.mark.batsim,
              pytest.mark.skipif(BATSIM is None, reason="no real Batsim 4.2.1 binary (set BATSIM_BIN)"),
              pytest.mark.skipif(BATSCHED is None, reason="no batsched 1.4.0 binary (set BATSCHED_BIN, or build it "
                                 "with tests/batsched/build-batsched.sh)")]

DATA = B.REPO / "tests" / "data" / "batsim-4.2.1"
FULL = os.environ.get("BATSIM_TESTMATRIX") == "full"

# Batsim 4.2.1's test/conftest.py: its platforms and workloads, by its names
PLATFORMS = {"small": "small_platform.xml", "smallusage": "small_platform_usage_replay.xml",
             "cluster512": "cluster512.xml", "cluster512_pfs": "cluster512_pfs.xml",
             "energy128notopo": "energy_platform_homogeneous_no_net_128.xml",
             "energy128cluster": "cluster_energy_128.xml", "properties_platform": "properties_example.xml"}
WORKLOADS = {"delay1": "test_one_delay_job.json", "delays": "test_delays.json",
             "delaysequences": "test_sequence_delay.json", "mixed": "test_various_profile_types.json",
             "compute1": "test_one_computation_job.json", "computetot1": "test_one_computation_job_tot.json",
             "energymini0": "test_energy_minimal_load0.json", "energymini50": "test_energy_minimal_load50.json",
             "energymini100": "test_energy_minimal_load100.json", "samesubmittime": "test_same_submit_time.json",
             "walltime": "test_walltime.json", "tutostencil": "test_tuto_stencil.json"}
SMALL = ("delays", "delaysequences", "mixed")
ONE_JOB = ("delay1", "compute1", "computetot1")
BASIC = ("fcfs_fast", "easy_bf_fast", "filler")
ENERGY_PLATFORMS = ("energy128notopo", "energy128cluster")
# test_energy.py's energy_model_instance() and test_energy_minimal's additional options
ENERGY_MODEL = {"power_sleep": 9.75, "power_idle": 95, "energy_switch_on": 19030, "power_compute": 190.738,
                "energy_switch_off": 620, "time_switch_off": 6.1, "pstate_sleep": 13, "pstate_compute": 0,
                "time_switch_on": 152}
MINIMAL = {"monitoring_period": 30, "idle_time_to_sedate": 0, "sedate_idle_on_classical_events": False,
           "ensured_sleep_time_lower_bound": 0, "ensured_sleep_time_upper_bound": 0}
ENERGY_FILES = ("_pstate_changes.csv", "_consumed_energy.csv")
#: `_schedule.csv`'s cells that are not the simulation's: the simulator's name and version, wall-clock times
WALL_CLOCK = ("batsim_version", "scheduling_time", "simulation_time")


def _cases(full: list[tuple], default: list[tuple]) -> list[tuple]:
    """The whole cross product with BATSIM_TESTMATRIX=full, else the default selection (a subset of it)."""
    assert set(default) <= set(full)
    return full if FULL else default


def run_case(tmp: Path, platform: str | Path, workload: str, algo: str, options: dict | None = None,
             extra: tuple[str, ...] = ()) -> tuple[B.Run, B.Run]:
    """Real Batsim, then `burstbuffer simulate`, with one command line (module docstring) and batsched's
    `algo` (its options written to a file, as Batsim's tests do); both must complete, with every protocol
    message and every compared output file identical. `platform`: a name of PLATFORMS, or a file.
    Returns (real run, embedded run)."""
    plat = platform if isinstance(platform, Path) else DATA / "platforms" / PLATFORMS[platform]
    args = ["-p", str(plat), "-w", str(DATA / "workloads" / WORKLOADS[workload]),
            "-e", "{prefix}", "-s", "{socket}", *extra]
    sched = batsched_cmd(tmp, algo, options)
    real = B.run_one(tmp, "real", [BATSIM, *args], sched, timeout=120)
    emb = B.run_one(tmp, "embedded", [sys.executable, "-m", "burstbuffer", "simulate", *args], sched, timeout=120)
    assert real.returncode == 0, real.stderr[-2000:]
    assert emb.returncode == 0, emb.stderr[-2000:]
    assert B.compare_exchanges(real, emb) == []
    files = ("_jobs.csv", "_machine_states.csv") + (ENERGY_FILES if "--energy" in extra else ())
    for suffix in files:
        a, b = Path(real.prefix + suffix).read_bytes(), Path(emb.prefix + suffix).read_bytes()
        assert a == b, f"{suffix} differs:\n{a.decode()[:1500]}\n!=\n{b.decode()[:1500]}"
    skip = B.shared_machines(real)
    assert B.paje_lines(real, skip) == B.paje_lines(emb, skip), "_schedule.trace differs"
    sa, sb = (dict(zip(*csv.reader(open(run.prefix + "_schedule.csv")))) for run in (real, emb))
    assert {k: v for k, v in sa.items() if k not in WALL_CLOCK} == {k: v for k, v in sb.items() if k not in WALL_CLOCK}
    assert real.jobs, "no job ran"
    return real, emb


def _events(run: B.Run, kind: str) -> list[dict]:
    return [e for d, m in run.messages if d == "B2S" for e in m["events"] if e["type"] == kind]


# ------------------------------------------------------------------------------------------ test_simple.py

@pytest.mark.parametrize("workload,algo", _cases(list(itertools.product(SMALL, BASIC)),
                                                 list(zip(SMALL, BASIC))))
def test_basic1(tmp_path, workload, algo):
    """test_basic1: the small platform, the small workloads, the basic algorithms."""
    real, _ = run_case(tmp_path, "small", workload, algo)
    assert len(real.jobs) == len(json.loads((DATA / "workloads" / WORKLOADS[workload]).read_text())["jobs"])


# every (platform, one-job workload), the algorithm turning
BASIC2_DEFAULT = [(p, w, BASIC[i % 3]) for i, (p, w) in enumerate(itertools.product(PLATFORMS, ONE_JOB))]


@pytest.mark.parametrize("platform,workload,algo",
                         _cases(list(itertools.product(PLATFORMS, ONE_JOB, BASIC)), BASIC2_DEFAULT))
def test_basic2(tmp_path, platform, workload, algo):
    """test_basic2: every platform of Batsim's matrix (a master made by a one-host <cluster> holding
    role=master, blank lines before <?xml?>, zone properties...) with the one-job workloads."""
    real, _ = run_case(tmp_path, platform, workload, algo)
    assert len(real.jobs) == 1  # (compute1 reaches its walltime on the usage-replay platform's slow hosts)


# ------------------------------------------------------------------------------------------ test_energy.py

@pytest.mark.parametrize("platform,workload,algo",
                         _cases(list(itertools.product(ENERGY_PLATFORMS, SMALL, ("sleeper", "energy_watcher"))),
                                [("energy128notopo", "mixed", "sleeper"),
                                 ("energy128cluster", "delays", "energy_watcher"),
                                 ("energy128cluster", "delaysequences", "sleeper")]))
def test_energy(tmp_path, energy_module, platform, workload, algo):
    """test_energy: energy algorithms with --energy; the cluster platform's hosts take their wattages and
    sleep pstates from the <cluster>'s properties."""
    real, _ = run_case(tmp_path, platform, workload, algo, ENERGY_MODEL, ("--energy",))
    assert all(r["consumed_energy"] not in ("", "-1") for r in real.jobs)


@pytest.mark.parametrize("platform,workload",
                         _cases(list(itertools.product(ENERGY_PLATFORMS, ("energymini0", "energymini50",
                                                                           "energymini100"))),
                                [("energy128notopo", "energymini50"), ("energy128cluster", "energymini100"),
                                 ("energy128cluster", "energymini0")]))
def test_energy_minimal(tmp_path, energy_module, platform, workload):
    """test_energy_minimal: energy_bf_idle_sleeper, which sends idle machines to sleep, on few jobs."""
    real, _ = run_case(tmp_path, platform, workload, "energy_bf_idle_sleeper", dict(ENERGY_MODEL, **MINIMAL),
                       ("--energy",))
    assert _events(real, "RESOURCE_STATE_CHANGED")


# ---------------------------------------------------------------------------------------- test_walltime.py

def _walltime_ok(row: dict) -> bool:
    """Batsim's check_ok_bool: no job runs past its walltime; a failed job reached it."""
    req, ex = float(row["requested_time"]), float(row["execution_time"])
    if req != -1 and ex > req:
        return False
    if row["success"] == "1":
        return ex <= req or req == -1
    return ex >= req


@pytest.mark.parametrize("workload", _cases(list(SMALL) + ["walltime"], ["mixed", "walltime"]))
def test_walltime(tmp_path, workload):
    """test_walltime1/2: fcfs_fast on cluster512; jobs that reach their walltime are killed there."""
    real, _ = run_case(tmp_path, "cluster512", workload, "fcfs_fast")
    assert all(_walltime_ok(r) for r in real.jobs)
    if workload == "walltime":  # holds jobs that reach their walltime
        assert any(r["success"] == "0" for r in real.jobs)


# ------------------------------------------------------------------------------------------- test_kill.py

@pytest.mark.parametrize("workload", _cases(list(ONE_JOB), ["delay1", "compute1"]))
def test_kill_progress(tmp_path, workload):
    """test_kill_progress: batsched's killer kills each job 5 s after its start; every JOB_KILLED event
    carries the job's progress, and no job runs longer than 5.1 s."""
    real, _ = run_case(tmp_path, "small", workload, "killer", {"delay_before_kill": 5, "nb_kills_per_job": 1},
                       ("--forward-profiles-on-submission",))
    killed = _events(real, "JOB_KILLED")
    assert killed and all("job_progress" in e["data"] for e in killed)
    assert all(float(r["execution_time"]) <= 5.1 for r in real.jobs)


# ------------------------------------------------------------------------------------- test_submitorder.py

@pytest.mark.parametrize("workload", _cases(list(SMALL) + ["samesubmittime"], ["delays", "samesubmittime"]))
def test_submitorder(tmp_path, workload):
    """test_submitorder1/2: jobs are submitted in (submission time, job id) order (job ids compared as
    Batsim's test does, after pandas read them: numbers)."""
    real, _ = run_case(tmp_path, "small", workload, "fcfs_fast")
    observed = [e["data"]["job_id"].split("!")[1] for e in _events(real, "JOB_SUBMITTED")]
    numeric = all(r["job_id"].lstrip("-").isdigit() for r in real.jobs)  # else pandas keeps strings
    expected = [r["job_id"] for r in sorted(real.jobs, key=lambda r: (float(r["submission_time"]),
                                                                        int(r["job_id"]) if numeric else r["job_id"]))]
    assert observed == expected


# ------------------------------------------------------------------------------------- test_tuto_stencil.py

def test_tuto_stencil(tmp_path):
    """test_tuto_stencil: fcfs_fast on cluster512_pfs, jobs of composed profiles whose parallel_homogeneous_pfs
    parts read from and write to the platform's one storage host (pfs0: no storage mapping, Batsim takes the
    only storage machine); the job started alone is the fastest, as Batsim's test checks (jobs 0, 10, ...
    sorted by id, its rows 0..8)."""
    real, _ = run_case(tmp_path, "cluster512_pfs", "tutostencil", "fcfs_fast")
    ex = {int(r["job_id"]): float(r["execution_time"]) for r in real.jobs}
    e = [ex[k] for k in sorted(ex)]
    assert len(e) == 9
    assert all(e[0] < e[k] for k in (1, 2, 3, 4)) and e[3] < e[2] and e[4] < e[2]
    assert all(e[4] < e[k] for k in (5, 6, 7, 8))


# ------------------------------------------------------------------------------ beyond Batsim's own matrix

def test_torus_cluster_properties(tmp_path):
    """A TORUS <cluster> with a <prop>, which SimGrid's XML loader gives to the cluster's hosts but not to its
    zone: the same resources' properties and zone_properties in SIMULATION_BEGINS (the master is one of the
    cluster's hosts, -m c0)."""
    plat = tmp_path / "torus.xml"
    plat.write_text('<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                    '<platform version="4.1"><zone id="z" routing="Full"><prop id="top" value="1"/>'
                    '<cluster id="t" topology="TORUS" topo_parameters="2,2" prefix="c" suffix="" radical="0-3" '
                    'speed="1Gf" bw="125MBps" lat="50us"><prop id="foo" value="bar"/></cluster></zone></platform>')
    real, _ = run_case(tmp_path, plat, "delays", "easy_bf_fast", extra=("-m", "c0"))
    res = real.messages[0][1]["events"][0]["data"]["compute_resources"]
    assert [(r["name"], r["properties"], r["zone_properties"]) for r in res] == [
        (f"c{k}", {"role": "", "foo": "bar"}, {"top": "1"}) for k in (1, 2, 3)]


def test_roles_from_the_command_line(tmp_path):
    """-r given twice for one host (Batsim's role map keeps the last role) and -m: the same resources."""
    real, _ = run_case(tmp_path, "small", "delays", "filler",
                       extra=("-r", "Jupiter,Fafard:storage", "-r", "Jupiter:compute_node", "-m", "master_host"))
    data = real.messages[0][1]["events"][0]["data"]
    assert [r["name"] for r in data["storage_resources"]] == ["Fafard"]
    assert "Jupiter" in [r["name"] for r in data["compute_resources"]]


# ----------------------------------------------------------------------------------- test_externalevents.py
# External events (``--events FILE``, Batsim's test_externalevents.py with its events/test_events_4hosts.txt
# and test_generic_event.txt): added here with the simulator's --events option, through run_case (its
# `extra` options are given to both simulators).
