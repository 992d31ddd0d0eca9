"""The scheduler process + the embedded simulator process over ZeroMQ, on real KTH jobs."""
import subprocess
import sys

import pandas as pd
import pytest

from burstbuffer.metrics.definitions import BATSIM_JOBS_COLUMNS
from burstbuffer.runner import run
from burstbuffer.schedulers.registry import any_model_names

from .conftest import PLATFORM, ParallelRuns, selected_params, write_subset

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)


@pytest.fixture(scope="module")
def first_100(request, tmp_path_factory):
    """The runs of the selected cases of the next test, two at a time ahead of it (`conftest.ParallelRuns`)."""
    tmp = tmp_path_factory.mktemp("first100")
    wl = write_subset(tmp / "kth-100.json", 100)
    pool = ParallelRuns()
    for policy, model in selected_params(request, "test_first_100_kth_jobs_complete_under_every_policy",
                                         "policy", "model"):
        pool.submit((policy, model), policy=policy, workload=wl, platform=PLATFORM, output=tmp / model / policy,
                    model=model, progress=False, timeout=120)
    yield pool
    pool.close()


@pytest.mark.parametrize("model", ["alloc-only", "io-aware"])
@pytest.mark.parametrize("policy", sorted(any_model_names()))
def test_first_100_kth_jobs_complete_under_every_policy(policy, model, first_100):
    res = first_100.result((policy, model))
    jobs = pd.read_csv(res.jobs_csv)
    assert len(jobs) == 100
    # every job ends; KTH job 70 (64 nodes, 60 s walltime, 100 MB between every pair of its nodes)
    # cannot finish its communication in time on this platform and is killed at its walltime
    assert set(jobs.final_state) <= {"COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED"}
    killed = jobs[jobs.final_state == "COMPLETED_WALLTIME_REACHED"]
    assert set(killed.job_id) <= {70}
    assert (killed.execution_time - killed.requested_time).abs().max() < 1e-3 if len(killed) else True
    assert res.summary.completed + res.summary.killed == 100 and res.summary.rejected == 0
    # waiting time = start − submission ≥ 0; runs end after they start
    assert (jobs.starting_time >= jobs.submission_time - 1e-6).all()
    assert (jobs.finish_time > jobs.starting_time).all()
    # the simulator's own Batsim-format outputs agree with the scheduler's accounting
    bat = pd.read_csv(res.jobs_csv.parent / "batsim_jobs.csv")
    if model == "io-aware":   # Batsim lists the static jobs as REJECTED, then each sub-job (docs/protocol.md):
        # that table is batsim_subjobs.csv; batsim_jobs.csv holds the user's jobs, jobs.csv's Batsim columns
        assert list(bat.columns) == list(BATSIM_JOBS_COLUMNS) and len(bat) == 100
        assert bat.job_id.tolist() == jobs.job_id.tolist()
        assert bat.final_state.tolist() == jobs.final_state.tolist()
        assert (bat.starting_time - jobs.starting_time).abs().max() == 0
        bat = pd.read_csv(res.jobs_csv.parent / "batsim_subjobs.csv")
        static = bat[bat.workload_name == "w0"]
        assert len(static) == 100 and (static.final_state == "REJECTED").all()
        sub = bat[bat.workload_name != "w0"].copy()
        sub["job_id"] = sub.workload_name.str.split("%").str[1].astype(int)
        first = sub.groupby("job_id").starting_time.min()
        last = sub.groupby("job_id").finish_time.max()
        j = jobs.set_index("job_id")
        assert (j.starting_time - first).abs().max() < 1e-3
        done = j.final_state == "COMPLETED_SUCCESSFULLY"
        # the scheduler hears of an end 0.1 ms per queued message later (Batsim's message latency)
        assert (j.finish_time[done] - last[done]).abs().max() < 1e-2
        return
    assert len(bat) == 100
    merged = jobs.merge(bat, on="job_id", suffixes=("", "_b"))
    assert (merged.final_state == merged.final_state_b).all()
    assert (merged.starting_time - merged.starting_time_b).abs().max() < 1e-3
    assert (merged.finish_time - merged.finish_time_b).abs().max() < 1e-2


@pytest.mark.parametrize("model", ["alloc-only", "io-aware"])
def test_impossible_jobs_are_rejected_and_counted(model, kth_subset, tmp_path):
    def edit(w):
        w["jobs"][1]["res"] = 200                        # more processors than the 96 of the platform
        w["profiles"][w["jobs"][2]["profile"]]["bb"] = 50 * 10**9   # more BB per node than a 40 GB BB node
    wl = kth_subset(10, edit)
    seen = []
    res = run("sjf-bb", wl, PLATFORM, tmp_path / "o", model=model, progress=False, timeout=120,
              on_progress=lambda done, total: seen.append((done, total)))
    jobs = pd.read_csv(res.jobs_csv)
    assert res.summary.rejected == 2 and res.summary.completed == 8
    # the progress callback counts started and rejected jobs, never backwards, up to all 10
    assert seen and seen[-1] == (10, 10)
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
    assert len(jobs) == 10
    assert set(jobs[jobs.final_state == "REJECTED"].job_id.astype(str)) == {"16", "17"}
    bat = pd.read_csv(tmp_path / "o" / "batsim_jobs.csv")
    if model == "alloc-only":
        assert (bat.final_state == "REJECTED").sum() == 2


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "burstbuffer.cli", *args], capture_output=True, text=True,
                          timeout=120)


def test_unknown_policy_and_missing_file_are_one_line_errors(kth_subset, tmp_path):
    r = _cli("run", "--policy", "nope", "--workload", str(kth_subset(3)), "--output", str(tmp_path))
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "unknown policy" in r.stderr
    r = _cli("run", "--workload", str(tmp_path / "missing.json"), "--output", str(tmp_path))
    assert r.returncode == 2 and "missing.json" in r.stderr and "Traceback" not in r.stderr
    r = _cli("run", "--cpu", "fast", "--workload", str(kth_subset(3)), "--output", str(tmp_path))
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "--cpu: 'fast' is not auto, off or a usable core" in r.stderr


def test_workload_with_a_missing_field_is_a_one_line_error(kth_subset, tmp_path):
    def edit(w):
        del w["jobs"][2]["res"]
    r = _cli("run", "--workload", str(kth_subset(5, edit)), "--output", str(tmp_path), "-q")
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and r.stderr.strip().count("\n") == 0
    assert "job 17: missing field 'res'" in r.stderr


@pytest.mark.parametrize("model", ["alloc-only", "io-aware"])
def test_a_job_without_walltime_runs_unbounded(kth_subset, tmp_path, model):
    """Batsim's walltime is optional (absent or -1: none); such a job runs to its end under both models."""
    def edit(w):
        del w["jobs"][2]["walltime"]
        w["jobs"][3]["walltime"] = -1
    res = run("fcfs-bb", kth_subset(5, edit), PLATFORM, tmp_path / "o", model=model, progress=False, timeout=120)
    assert (res.summary.submitted, res.summary.completed) == (5, 5)
    jobs = pd.read_csv(res.jobs_csv, dtype={"job_id": str}).set_index("job_id")
    assert jobs.loc["17", "requested_time"] == -1 and jobs.loc["17", "final_state"] == "COMPLETED_SUCCESSFULLY"


def test_platform_without_storage_is_a_one_line_error(kth_subset, tmp_path):
    flat = tmp_path / "flat.xml"
    flat.write_text("""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <cluster id="c" prefix="node_" suffix="" radical="0-3" speed="1Gf" bw="125MBps" lat="50us"
             router_id="c_router"/>
    <zone id="m" routing="Full"><host id="master" speed="1Gf"/></zone>
    <link id="lm" bandwidth="125MBps" latency="50us"/>
    <zoneRoute src="m" dst="c" gw_src="master" gw_dst="c_router"><link_ctn id="lm"/></zoneRoute>
  </zone>
</platform>
""")
    r = _cli("run", "--workload", str(kth_subset(3)), "--platform", str(flat), "--output", str(tmp_path), "-q")
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and r.stderr.strip().count("\n") == 0
    assert "storage" in r.stderr


@pytest.mark.parametrize("model", ["alloc-only", "io-aware"])
def test_job_out_of_walltime_is_killed_counted_and_frees_its_resources(model, tmp_path):
    import json
    wl = {"nb_res": 96, "jobs": [
        {"id": 1, "subtime": 1, "walltime": 100, "res": 96, "profile": "long"},
        {"id": 2, "subtime": 2, "walltime": 100, "res": 96, "profile": "short"}],
        "profiles": {"long": {"type": "parallel_homogeneous", "cpu": 1e12, "com": 0, "bb": 10**8},
                     "short": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0, "bb": 10**8}}}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(wl))
    res = run("fcfs-bb", path, PLATFORM, tmp_path / "o", model=model, progress=False, timeout=120)
    jobs = pd.read_csv(res.jobs_csv).set_index("job_id")
    assert jobs.loc[1, "final_state"] == "COMPLETED_WALLTIME_REACHED"
    assert jobs.loc[1, "starting_time"] == pytest.approx(1.0)
    assert jobs.loc[1, "finish_time"] == pytest.approx(101.0, abs=0.01)   # its whole walltime, not more
    assert jobs.loc[2, "final_state"] == "COMPLETED_SUCCESSFULLY"
    assert jobs.loc[2, "starting_time"] == pytest.approx(101.0, abs=0.01)  # the machine is free again
    assert res.summary.killed == 1 and res.summary.completed == 1


def test_alpha_selects_plan_with_any_positive_real(kth_subset, tmp_path):
    import argparse

    from burstbuffer.errors import InputError
    from burstbuffer.policyargs import spec_from_args

    def resolve(policy, alpha):
        s = spec_from_args(argparse.Namespace(policy=policy, alpha=alpha), job_model="io-aware", seed=0)
        return s.text, s.label, s.options
    assert resolve("plan-2", None) == ("plan-2", "plan-2", {})
    assert resolve("plan-2", 1.5) == ("plan", "plan-1.5", {"alpha": 1.5})
    assert resolve("plan", 1.5) == ("plan", "plan-1.5", {"alpha": 1.5})
    with pytest.raises(InputError, match="--alpha: 2.0: policy sjf-bb takes no option 'alpha'"):
        resolve("sjf-bb", 2.0)
    r = _cli("run", "--policy", "plan", "--alpha", "1.5", "--workload", str(kth_subset(20)),
             "--output", str(tmp_path / "p"), "-q")
    assert r.returncode == 0, r.stderr
    assert "policy plan-1.5" in r.stdout
    assert len(pd.read_csv(tmp_path / "p" / "jobs.csv")) == 20
    r = _cli("run", "--policy", "plan", "--alpha", "-1", "--workload", str(kth_subset(3)), "--output", str(tmp_path))
    assert r.returncode == 2 and "--alpha: '-1': must be > 0" in r.stderr
