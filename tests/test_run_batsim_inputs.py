"""Batsim 4.2.1's own test inputs (tests/data/batsim-4.2.1: its platforms and workloads) through ``burstbuffer run``,
not only through ``simulate`` (tests/test_batsim_testmatrix.py): every workload on every platform with the
alloc-only job model, which runs each job's own profile as Batsim does, and every workload on the paper's platform
under the two job models that split a job into phases (io-aware, three-phase), which reject a job of a profile type
they cannot carry, with the reason. Each run ends with exit 0 and every job of the workload counted in jobs.csv:
completed, killed or rejected with its reason.

By default a selection (every workload, every platform and each job model at least once); ``BATSIM_TESTMATRIX=full``
runs the whole cross product (84 + 24 runs). Also the regression of a memory corruption: Batsim's
``energy_platform_homogeneous_no_net_128.xml`` asks SimGrid for 16 KiB actor stacks without a guard page, on which
the simulator's server actor, running the scheduler in the in-simulator link, overflowed into the heap (``malloc():
invalid next size``, SIGSEGV); the simulator now raises the stacks to SimGrid's default
(`burstbuffer.simulator.server.stack_config`).
"""
from __future__ import annotations

import csv
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from burstbuffer.errors import InputError
from burstbuffer.io_model.io_aware import IOAwareModel, phase_bb, phased_work
from burstbuffer.platforms.simgrid_xml import parse_platform
from burstbuffer.simulator.server import MIN_STACK_KIB, stack_config

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "batsim-4.2.1"
FULL = os.environ.get("BATSIM_TESTMATRIX") == "full"

#: Batsim's platforms (test/conftest.py names) and the host each run makes its burst-buffer node
PLATFORMS = {"small": ("small_platform.xml", "Bourassa"), "smallusage": ("small_platform_usage_replay.xml", "d"),
             "cluster512": ("cluster512.xml", "a511"), "cluster512_pfs": ("cluster512_pfs.xml", "pfs0"),
             "energy128notopo": ("energy_platform_homogeneous_no_net_128.xml", "host127"),
             "energy128cluster": ("cluster_energy_128.xml", "host127"),
             "properties_platform": ("properties_example.xml", "host2")}
WORKLOADS = sorted(p.name for p in (DATA / "workloads").glob("*.json"))
#: the paper's platform (the bundled Dragonfly, `run`'s default) for the phase models: it has a PFS
PAPER = None
PHASE_MODELS = ("io-aware", "three-phase")
#: the policies the cases take in turn
POLICIES = ("fcfs", "fcfs-easy", "sjf-bb", "conservative-bb", "filler", "plan-2")
FINAL = {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED", "COMPLETED_FAILED", "REJECTED"}


def run_cli(out: Path, workload: Path, platform: str | None, model: str, policy: str = "fcfs",
            more: tuple[str, ...] = ()) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """``burstbuffer run`` (a child process, the default in-simulator link) on Batsim's `platform` (a PLATFORMS
    name, its host made the BB node, 40 GB; None: the paper's platform); returns the process and jobs.csv's rows."""
    args = [sys.executable, "-m", "burstbuffer", "run", "--policy", policy, "--model", model,
            "--workload", str(workload), "--output", str(out), "-q", *more]
    if platform is not None:
        name, storage = PLATFORMS[platform]
        args += ["--platform", str(DATA / "platforms" / name), "--storage", storage, "--bb-capacity", "40GB"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=600)
    rows = list(csv.DictReader(open(out / "jobs.csv"))) if (out / "jobs.csv").exists() else []
    return p, rows


def assert_all_counted(p: subprocess.CompletedProcess, rows: list[dict], workload: Path) -> None:
    """Exit 0, and one jobs.csv row per job of `workload`, each ended in a final state; a rejected one with its
    reason."""
    assert p.returncode == 0, p.stderr[-2000:]
    ids = [str(j["id"]) for j in json.loads(workload.read_text())["jobs"]]
    assert sorted(r["job_id"] for r in rows) == sorted(ids)
    for r in rows:
        assert r["final_state"] in FINAL, r
        if r["final_state"] == "REJECTED":
            assert r["metadata"].strip(), r


# ------------------------------------------------------------------------------------------ the matrix

ALLOC_FULL = list(itertools.product(PLATFORMS, WORKLOADS))
# every workload once, the platforms in turn (each at least once)
ALLOC_DEFAULT = [(list(PLATFORMS)[i % len(PLATFORMS)], w) for i, w in enumerate(WORKLOADS)]
PHASED_FULL = list(itertools.product(PHASE_MODELS, WORKLOADS))
PHASED_DEFAULT = [("io-aware", "test_various_profile_types.json"), ("three-phase", "test_tuto_stencil.json"),
                  ("three-phase", "test_walltime.json")]


@pytest.mark.parametrize("platform,workload", ALLOC_FULL if FULL else ALLOC_DEFAULT)
def test_alloc_only_on_batsims_platforms(tmp_path, platform, workload):
    """alloc-only on Batsim's platform: exit 0, every job counted."""
    k = ALLOC_FULL.index((platform, workload))
    wl = DATA / "workloads" / workload
    p, rows = run_cli(tmp_path / "run", wl, platform, "alloc-only", POLICIES[k % len(POLICIES)])
    assert_all_counted(p, rows, wl)


@pytest.mark.parametrize("model,workload", PHASED_FULL if FULL else PHASED_DEFAULT)
def test_phase_models_on_the_papers_platform(tmp_path, model, workload):
    """io-aware and three-phase on the paper's platform: exit 0, every job counted, a job rejected by the job
    model exactly when its profile is not a parallel_homogeneous one of two numbers."""
    wl = DATA / "workloads" / workload
    p, rows = run_cli(tmp_path / "run", wl, PAPER, model, "fcfs-bb" if model == "io-aware" else "cerberus")
    assert_all_counted(p, rows, wl)
    desc = json.loads(wl.read_text())
    for r in rows:
        carried = phased_work(desc["profiles"][r["profile"]]) is not None
        by_model = r["final_state"] == "REJECTED" and f"the {model} job model" in r["metadata"]
        assert by_model == (not carried), r


# ------------------------------------------------------------------------ the two commands of the issue

def test_various_profile_types_on_the_small_platform(tmp_path):
    """Batsim's test_various_profile_types.json (a parallel profile, homogeneous ones, a composed one, a delay)
    on its small platform, Bourassa the BB node (3 compute hosts left): the 1-host delay and the 2-host job run,
    the seven 4-host jobs are rejected as too large; no job description error."""
    wl = DATA / "workloads" / "test_various_profile_types.json"
    p, rows = run_cli(tmp_path / "run", wl, "small", "alloc-only")
    assert_all_counted(p, rows, wl)
    state = {r["job_id"]: r["final_state"] for r in rows}
    assert state.pop("delay") == state.pop("2_resources") == "COMPLETED_SUCCESSFULLY"
    assert set(state.values()) == {"REJECTED"} and len(state) == 7
    assert {r["metadata"] for r in rows if r["final_state"] == "REJECTED"} == {
        "requests 4 compute nodes, the platform has 3"}


def test_various_profile_types_all_run_on_cluster512(tmp_path):
    """The same workload with room for every job (cluster512's 1 Gflop/s hosts): each runs its own profile as
    Batsim runs it and completes, the parallel one (5 Mflop on its first host, 5 MB from each host to each lower-numbered one)
    within the 1-s walltime of `reach_walltime` too, in the same time as `simple`; the delay takes its 20.2 s."""
    wl = DATA / "workloads" / "test_various_profile_types.json"
    p, rows = run_cli(tmp_path / "run", wl, "cluster512", "alloc-only")
    assert_all_counted(p, rows, wl)
    by = {r["job_id"]: r for r in rows}
    assert {r["final_state"] for r in by.values()} == {"COMPLETED_SUCCESSFULLY"}
    assert by["reach_walltime"]["execution_time"] == by["simple"]["execution_time"]
    assert 0 < float(by["simple"]["execution_time"]) < 1
    assert float(by["delay"]["execution_time"]) == pytest.approx(20.2, abs=0.01)


def test_energy_platform_in_process_does_not_overflow_its_stacks(tmp_path):
    """The first 50 KTH jobs on Batsim's energy_platform_homogeneous_no_net_128.xml (16 KiB stacks, no guard page
    in its <config>), host127 the BB node, the in-simulator link: the run aborted with malloc(): invalid next size;
    now exit 0 and the 50 jobs counted."""
    out = tmp_path / "run"
    p, rows = run_cli(out, ROOT / "workloads" / "kth-1000.json", "energy128notopo", "alloc-only",
                      more=("--jobs", "50"))
    assert_all_counted(p, rows, out / "workload-first-50.json")
    assert sum(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in rows) > 0


# ------------------------------------------------------------------------------------------- units

def test_the_platforms_config_is_read():
    spec = parse_platform(DATA / "platforms" / "energy_platform_homogeneous_no_net_128.xml")
    assert spec.config == {"contexts/stack-size": "16", "contexts/guard-size": "0"}
    assert parse_platform(DATA / "platforms" / "small_platform.xml").config == {}


def test_stack_config_raises_small_stacks_only():
    assert stack_config({"contexts/stack-size": "16", "contexts/guard-size": "0"}, [], "p.xml") == [
        f"--cfg=contexts/stack-size:{MIN_STACK_KIB}", "--cfg=contexts/guard-size:1"]
    assert stack_config({"contexts/stack-size": "65536", "contexts/guard-size": "2"}, [], "p.xml") == []
    assert stack_config({}, [], "p.xml") == []
    # a --sg-cfg is the user's: taken over the platform's when large enough, refused when not
    assert stack_config({"contexts/stack-size": "16"}, ["contexts/stack-size:10000"], "p.xml") == []
    with pytest.raises(InputError, match="at least 8192"):
        stack_config({}, ["contexts/stack-size:64"], "p.xml")
    with pytest.raises(InputError, match="not an integer"):
        stack_config({"contexts/stack-size": "big"}, [], "p.xml")


def test_phased_work_and_the_models_reasons():
    model = IOAwareModel()
    assert phased_work({"type": "parallel_homogeneous", "cpu": 10, "com": 2}) == (10.0, 2.0)
    assert model.cannot_carry({"type": "parallel_homogeneous", "cpu": 10, "com": 2}) is None
    for prof in ({"type": "parallel", "cpu": [1, 2], "com": [0, 0, 0, 0]}, {"type": "delay", "delay": 3},
                 {"type": "composed", "seq": ["a"]}, {"type": "parallel_homogeneous_total", "cpu": 1, "com": 1},
                 {"type": "parallel_homogeneous", "cpu": [1], "com": 0}):
        assert phased_work(prof) is None
        assert model.cannot_carry(prof).startswith("the io-aware job model splits parallel_homogeneous")
    # the phase amounts of a profile not split into phases: no checkpoint, whatever its cpu
    huge = 100 * 3600e9
    assert phase_bb({"type": "parallel_homogeneous", "cpu": huge, "com": 0}, 10) == (10, 5, 10)
    assert phase_bb({"type": "parallel_homogeneous_total", "cpu": huge, "com": 0}, 10) == (10, 0, 10)
    assert phase_bb({"type": "parallel", "cpu": [huge], "com": [0]}, 10) == (10, 0, 10)
