"""Jobs without a walltime (Batsim's ``walltime: -1``) run under both job models, with no limit; a simulator
that aborts is reported in one line naming SimGrid's reason and the jobs being started."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from burstbuffer.batsim.loop import BatsimDied
from burstbuffer.colocated import simulator_failed
from burstbuffer.runner import run

from .conftest import PLATFORM

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)


def _no_walltime(w):
    for j in w["jobs"][:6]:
        j["walltime"] = -1


@pytest.mark.parametrize("model", ["io-aware", "alloc-only"])
def test_walltime_minus_one_runs_without_limit(kth_subset, tmp_path, model):
    wl = kth_subset(10, edit=_no_walltime)
    res = run("sjf-bb", wl, PLATFORM, tmp_path / "o", model=model, progress=False, timeout=120, cpu=None)
    jobs = pd.read_csv(res.jobs_csv)
    assert len(jobs) == 10 and (jobs.final_state == "COMPLETED_SUCCESSFULLY").all()
    no_limit = jobs.job_id.isin([int(j["id"]) for j in json.loads(wl.read_text())["jobs"][:6]])
    assert (jobs.requested_time[no_limit] == -1).all() and (jobs.requested_time[~no_limit] > 0).all()
    # job 17 runs 215,337 s in the trace: far beyond any walltime its neighbours ask for
    assert jobs.execution_time[no_limit].max() > 100_000


def test_a_simgrid_abort_is_one_line_naming_the_jobs(tmp_path):
    log = tmp_path / "simulator.log"
    log.write_text("[1.000000] ./src/kernel/activity/ActivityImpl.cpp:100: [root/CRITICAL] timeout is not finite!\n"
                   "Backtrace (displayed in actor maestro):\n   ->  21# _start in /usr/bin/python\n")
    with pytest.raises(BatsimDied) as err:
        simulator_failed(-6, log, ["w0%15!0", "w0%15!1"])
    assert str(err.value) == ("simulator aborted (SIGABRT) at t=1.000000 while executing w0%15!0, w0%15!1: "
                              "SimGrid: timeout is not finite!")


def test_profiles_without_bb_are_counted_once(kth_subset, tmp_path):
    import subprocess
    import sys

    def drop_bb(w):
        for name in sorted(w["profiles"])[:3]:
            del w["profiles"][name]["bb"]
    wl = kth_subset(10, edit=drop_bb)
    r = subprocess.run([sys.executable, "-m", "burstbuffer", "run", "-q", "--cpu", "off", "--workload", str(wl),
                        "--output", str(tmp_path / "o")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("3 profiles have no bb: treated as 0 B") == 1
    jobs = pd.read_csv(tmp_path / "o" / "jobs.csv")
    assert (jobs.bb_per_node == 0).sum() == 3 and (jobs.final_state == "COMPLETED_SUCCESSFULLY").sum() >= 9
    # a 0-B job is given no BB node
    assert jobs.bb_allocation[jobs.bb_per_node == 0].isna().all()
    assert jobs.bb_allocation[jobs.bb_per_node > 0].notna().all()
