"""Differential suite: the same scheduler, the same inputs, a real Batsim 4.2.1 and the embedded simulator;
the whole message exchange (every message both ways, every event in order with its timestamp) and the
`_jobs.csv` files must be the same (docs/batsim-fidelity.md, docs/fidelity.md).

Skips when no Batsim binary is found ($BATSIM_BIN, else ~/.cache/batsim-4.2.1/build/batsim, which
`.ci/run` builds from ../shared/batsim-4.2.1/build/ when that folder is there); the project's own policies
also need the Dragonfly platform plugin built beside it (~/.cache/batsim-4.2.1/platforms/dragonfly96_sg332.so).
"""
from __future__ import annotations

import pytest

from burstbuffer.schedulers import registry

from . import batsim_diff as B

BATSIM = B.find_batsim()
pytestmark = [pytest.mark.batsim,   # test tier (setup.cfg markers; docs/testing.md)
              pytest.mark.skipif(BATSIM is None, reason="no real Batsim 4.2.1 binary (set BATSIM_BIN, or build it "
                                "with ../shared/batsim-4.2.1/build/build-batsim.sh; .ci/run does)")]

pytest.importorskip("batsim.batsim", reason="pybatsim 3.2.1 is not installed (test extra)")
pytest.importorskip("docopt", reason="docopt (a pybatsim requirement) is not installed")

# pybatsim 3.2.1's bundled schedulers that run on Python 3.11 and Batsim 4 without energy, and a job count
# (first N KTH jobs, tests/data/cluster96.xml). fillerSched on 300 jobs is the case of issue 19.
PYBATSIM = [("easyBackfill", 200), ("fillerSched", 300), ("fillerSchedWithEvents", 200), ("schedFcfs", 200),
            ("schedFiller", 200), ("schedEasySjfBackfill", 200)]


def _assert_same(real, emb, *, platform_free=False):
    assert real.returncode == 0, real.stderr[-2000:]
    assert emb.returncode == 0, emb.stderr[-2000:]
    diffs = B.compare_exchanges(real, emb, platform_free=platform_free)
    assert diffs == [], "\n".join(diffs)
    assert B.compare_jobs(real, emb) == []


@pytest.mark.parametrize("scheduler,n", PYBATSIM)
def test_pybatsim_scheduler_same_exchange(tmp_path, scheduler, n):
    wl = B.kth_subset(tmp_path / "kth.json", n)
    real, emb = B.run_pair(tmp_path, B.CLUSTER, wl, B.pybatsim_cmd(scheduler), batsim=BATSIM)
    _assert_same(real, emb)
    assert len(real.jobs) == n
    # every job ran (a comparison of two empty runs would prove nothing)
    assert sum(r["final_state"].startswith("COMPLETED") for r in real.jobs) == n


def test_fillersched_simultaneous_completions_in_batsim_order(tmp_path):
    """Issue 19's first difference: w0!20 (started 5547.005 on machine 0) and w0!22 (5549.005, machine 2)
    both end at 5563.005; Batsim reports w0!20 first (it started first) at 5563.00515, w0!22 at 5563.0053."""
    wl = B.kth_subset(tmp_path / "kth.json", 30)
    real, emb = B.run_pair(tmp_path, B.CLUSTER, wl, B.pybatsim_cmd("fillerSched"), batsim=BATSIM)
    for run in (real, emb):
        msg = next(m for d, m in run.messages
                   if d == "B2S" and any(e["data"].get("job_id") == "w0!22" and e["type"] == "JOB_COMPLETED"
                                         for e in m["events"]))
        assert [(e["data"]["job_id"], e["timestamp"]) for e in msg["events"]] == [("w0!20", 5563.00515),
                                                                                   ("w0!22", 5563.0053)]
        assert msg["now"] == 5563.0053


def test_randomsched_fails_the_same_way(tmp_path):
    """randomSched (seeded) allocates busy machines: both simulators stop at the same message with an
    error (Batsim aborts; the embedded simulator exits 1 with the reason)."""
    wl = B.kth_subset(tmp_path / "kth.json", 50)
    real, emb = B.run_pair(tmp_path, B.CLUSTER, wl, B.pybatsim_cmd("randomSched"), batsim=BATSIM)
    assert real.returncode != 0 and emb.returncode != 0
    assert "time-sharing on compute machines is disabled" in emb.stderr
    assert B.compare_exchanges(real, emb) == []
    assert len(real.messages) >= 4


PLUGIN = B.find_dragonfly_plugin()
#: every built-in policy of the two-phase job models (the registry's, so that a new policy is covered too)
POLICIES = registry.any_model_names()


@pytest.mark.skipif(PLUGIN is None, reason="no Dragonfly platform plugin for real Batsim (dragonfly96_sg332.so, "
                    "built by ../shared/batsim-4.2.1/build/build-batsim.sh)")
@pytest.mark.parametrize("model,n", [("alloc-only", 100), ("io-aware", 30)])
@pytest.mark.parametrize("policy", POLICIES)
def test_own_policy_same_exchange(tmp_path, policy, model, n):
    wl = B.kth_subset(tmp_path / "kth.json", n)
    real, emb = B.run_pair_own(tmp_path, policy, model, wl, batsim=BATSIM, plugin=PLUGIN)
    _assert_same(real, emb, platform_free=True)
    assert B.sched_jobs(real) == B.sched_jobs(emb)
    assert B.sched_jobs(real).count(b"\n") == n + 1
    skip = B.shared_machines(real)      # storage nodes staging for several jobs at once (io-aware)
    assert B.paje_lines(real, skip) == B.paje_lines(emb, skip), "_schedule.trace differs"


# All 1000 bundled jobs: the cases that told the embedded simulator's actor structure from Batsim's
# (docs/batsim-fidelity.md §3): same-second submissions that Batsim's submitter splits over two messages
# (fcfs: subtimes 256040 and 256112 s, 3880 messages), and end dates 1 µs apart after a chain of solve steps
# (sjf-bb; bbsched and weighted under io-aware). fcfs alloc-only also under the actor core.
@pytest.mark.slow
@pytest.mark.skipif(PLUGIN is None, reason="no Dragonfly platform plugin for real Batsim (dragonfly96_sg332.so, "
                    "built by ../shared/batsim-4.2.1/build/build-batsim.sh)")
@pytest.mark.parametrize("policy,model,core,nb_messages", [
    ("fcfs", "alloc-only", "auto", 3880), ("fcfs", "alloc-only", "actors", 3880),
    ("sjf-bb", "alloc-only", "auto", 3862), ("bbsched", "io-aware", "auto", 18098),
    ("weighted", "io-aware", "auto", 18490)])
def test_own_policy_same_exchange_all_jobs(tmp_path, monkeypatch, policy, model, core, nb_messages):
    monkeypatch.setenv("BURSTBUFFER_SIM_CORE", core)
    wl = B.kth_subset(tmp_path / "kth.json", 1000)
    real, emb = B.run_pair_own(tmp_path, policy, model, wl, batsim=BATSIM, plugin=PLUGIN)
    _assert_same(real, emb, platform_free=True)
    assert len(real.messages) == nb_messages
    assert B.sched_jobs(real) == B.sched_jobs(emb)


def test_pybatsim_scheduler_on_a_platform_asking_small_stacks(tmp_path):
    """Batsim's energy_platform_homogeneous_no_net_128.xml asks SimGrid for 16 KiB actor stacks without a guard
    page (its <config>), which the embedded simulator raises to SimGrid's defaults (its Python actors need them):
    the same exchange and _jobs.csv as the real Batsim, which keeps them."""
    wl = B.kth_subset(tmp_path / "kth.json", 50)
    plat = B.REPO / "tests" / "data" / "batsim-4.2.1" / "platforms" / "energy_platform_homogeneous_no_net_128.xml"
    real, emb = B.run_pair(tmp_path, plat, wl, B.pybatsim_cmd("easyBackfill"), batsim=BATSIM)
    _assert_same(real, emb)
    assert len(real.jobs) == 50 and any(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in real.jobs)
