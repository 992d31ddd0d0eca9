"""Batsim's own Python client against the embedded simulator: pybatsim 3.2.1's `easyBackfill` and
`fillerSched` schedulers (unchanged) drive `python -m burstbuffer.simulator` on the first 20 KTH jobs,
and every job completes.

pybatsim is a test dependency: ``pip install --no-deps pybatsim==3.2.1 docopt`` (its other requirements,
pyzmq, procset and sortedcontainers, are the project's own; its pin pyzmq<23 is not needed).
"""
from __future__ import annotations

import sys

import pytest

from .conftest import write_subset
from .sim_sched import REPO, run_simulation

pytestmark = pytest.mark.batsim   # test tier (setup.cfg markers; docs/testing.md)

pytest.importorskip("batsim.batsim", reason="pybatsim 3.2.1 is not installed (test extra)")
pytest.importorskip("docopt", reason="docopt (a pybatsim requirement) is not installed")

CLUSTER = REPO / "tests" / "data" / "cluster96.xml"


@pytest.mark.parametrize("scheduler", ["easyBackfill", "fillerSched"])
def test_pybatsim_scheduler_completes_every_job(tmp_path, scheduler):
    wl = write_subset(tmp_path / "kth20.json", 20)
    cmd = [sys.executable, "-m", "batsim.cmds.launcher", scheduler, "-s", "{endpoint}", "-t", "60000",
           "-v", "warning"]
    res = run_simulation(tmp_path, wl, platform=CLUSTER, scheduler_cmd=cmd)
    assert res.returncode == 0, res.stderr
    assert res.scheduler_returncode == 0, res.scheduler_stderr[-2000:]
    assert len(res.jobs) == 20
    assert all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in res.jobs), [r["final_state"] for r in res.jobs]
    if scheduler == "fillerSched":  # it answers 5 ms after `now` (consume_time): jobs start then
        assert all(float(r["waiting_time"]) >= 0.005 - 1e-9 for r in res.jobs)
