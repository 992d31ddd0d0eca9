"""PREFIX_machine_states.csv as Batsim 4.2.1 writes it, read by evalys; bb_occupancy.csv (issue 29,
docs/outputs.md)."""
import json
from pathlib import Path

import pandas as pd
import pytest

from burstbuffer.runner import run

from . import batsim_diff as B
from .conftest import PLATFORM

pytestmark = [pytest.mark.slow, pytest.mark.batsim]   # test tier (setup.cfg markers; docs/testing.md)

DATA = Path(__file__).resolve().parent / "data" / "batsim-4.2.1"
CAPTURE = DATA / "kth20-sjf-bb-io-aware_machine_states.csv"
BATSIM = B.find_batsim()


def test_embedded_simulator_writes_batsims_file_of_a_captured_run(tmp_path):
    """A real Batsim 4.2.1 run (sjf-bb, io-aware, the first 20 KTH jobs, the Dragonfly C++ platform; stored in
    tests/data) and the embedded simulator on the same inputs write the same bytes, storage machines included
    (data staging counts them as computing, and Batsim's idle count starts at the 96 compute machines)."""
    wl = B.kth_subset(tmp_path / "w.json", 20)
    extra = ["-r", B.STORAGE + ":storage", "--enable-dynamic-jobs", "--enable-profile-reuse"]
    emb = B.run_one(tmp_path, "embedded", B.embedded_cmd(B.DRAGONFLY_XML, wl, extra),
                    B.serve_cmd("sjf-bb", "io-aware", wl))
    assert emb.returncode == 0, emb.stderr
    got = Path(emb.prefix + "_machine_states.csv").read_bytes()
    assert got == CAPTURE.read_bytes()


@pytest.mark.skipif(BATSIM is None, reason="no real Batsim 4.2.1 (BATSIM_BIN or ~/.cache/batsim-4.2.1)")
def test_same_file_as_a_real_batsim(tmp_path):
    wl = B.kth_subset(tmp_path / "w.json", 40)
    real, emb = B.run_pair(tmp_path, B.CLUSTER, wl, B.pybatsim_cmd("fillerSched"), batsim=BATSIM)
    assert real.returncode == 0 and emb.returncode == 0, (real.stderr[-300:], emb.stderr[-300:])
    a = Path(real.prefix + "_machine_states.csv").read_bytes()
    assert a.count(b"\n") == 1 + 2 * 40 and Path(emb.prefix + "_machine_states.csv").read_bytes() == a


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """`burstbuffer run` (sjf-bb, io-aware) on 15 KTH jobs."""
    tmp = tmp_path_factory.mktemp("ms")
    wl = B.kth_subset(tmp / "w.json", 15)
    run("sjf-bb", wl, PLATFORM, tmp / "out", model="io-aware", progress=False, timeout=120)
    return tmp / "out"


def test_io_aware_run_writes_the_users_jobs_for_evalys(small_run):
    """An io-aware run's batsim_jobs.csv is the user's 15 jobs (what evalys loads first), as they ran; the
    simulator's sub-job table, where Batsim shows each user job REJECTED, is batsim_subjobs.csv."""
    from evalys.jobset import JobSet
    js = JobSet.from_csv(str(small_run / "batsim_jobs.csv"))
    jobs = pd.read_csv(small_run / "jobs.csv")
    assert len(js.df) == len(jobs) == 15 and (js.df["final_state"] == "COMPLETED_SUCCESSFULLY").all()
    assert sorted(js.df["starting_time"]) == sorted(jobs["starting_time"])
    sub = pd.read_csv(small_run / "batsim_subjobs.csv")
    assert (sub[sub.workload_name == "w0"].final_state == "REJECTED").sum() == 15
    assert (sub.workload_name.str.contains("%")).sum() > 15


def test_run_writes_machine_states_that_evalys_reads(small_run):
    from evalys.mstates import MachineStatesChanges
    path = small_run / "batsim_machine_states.csv"
    ms = MachineStatesChanges(str(path))      # evalys' own checks: the columns, one constant total
    assert set(ms.df["total"]) == {96}
    raw = pd.read_csv(path)
    assert list(raw.columns) == ["time", "nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle",
                                 "nb_computing"]
    sub = small_run / "batsim_subjobs.csv"     # an io-aware run: what Batsim ran are the sub-jobs
    bat = pd.read_csv(sub if sub.is_file() else small_run / "batsim_jobs.csv")
    ran = bat[bat.final_state != "REJECTED"]
    assert len(raw) == 2 * len(ran)            # a row at each start and each end
    assert raw.time.is_monotonic_increasing and (raw.nb_computing >= 0).all()
    assert raw.nb_computing.iloc[-1] == 0
    import matplotlib
    matplotlib.use("Agg")
    from evalys.visu.legacy import plot_mstates
    plot_mstates(ms.df)


def test_disable_machine_state_tracing(tmp_path):
    from burstbuffer.simulator.cli import add_arguments, config_from_args
    import argparse
    p = argparse.ArgumentParser()
    add_arguments(p)
    assert config_from_args(p.parse_args(["-p", "x", "-w", "y"])).machine_states is True
    assert config_from_args(p.parse_args(["-p", "x", "-w", "y", "--disable-machine-state-tracing"])).machine_states \
        is False


def test_bb_occupancy_follows_jobs_csv(small_run):
    occ = pd.read_csv(small_run / "bb_occupancy.csv")
    meta = json.loads((small_run / "run.json").read_text())
    names = [meta["names"][k] for k in sorted(meta["bb_capacity"], key=int)]
    assert list(occ.columns) == ["time", "total", *names]
    caps = [meta["bb_capacity"][k] for k in sorted(meta["bb_capacity"], key=int)]
    assert (occ[names].to_numpy() <= caps).all() and (occ[names].to_numpy() >= 0).all()
    assert (occ[names].sum(axis=1) == occ.total).all()
    assert occ.total.iloc[-1] == 0 and occ.time.is_monotonic_increasing and occ.time.is_unique
    jobs = pd.read_csv(small_run / "jobs.csv", dtype={"bb_allocation": str})
    jobs = jobs[jobs.starting_time.notna()]
    for t, total in zip(occ.time, occ.total):     # bytes held at t: the jobs running over [start, end)
        held = sum(sum(int(x.split(":")[1]) for x in a.split())
                   for a, s, e in zip(jobs.bb_allocation, jobs.starting_time, jobs.finish_time)
                   if round(s, 6) <= t < round(e, 6))
        assert held == total, t
    assert occ.total.max() > 0
