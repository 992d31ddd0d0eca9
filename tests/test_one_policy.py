"""One policy, every job model: the job model states the shape of a job's holds (`holds.HoldShape`), the
profile answers placement queries for that shape, and any policy on the public API — the tutorial's included —
gets the three-phase lifecycle the built-ins get (docs/architecture.md, docs/writing-a-policy.md)."""
from __future__ import annotations

import csv
import sys

import pytest

from burstbuffer.io_model.alloc_only import AllocOnlyModel
from burstbuffer.io_model.io_aware import IOAwareModel
from burstbuffer.io_model.registry import JOB_MODELS, make_model
from burstbuffer.io_model.three_phase import ThreePhaseModel
from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers import Job, make_scheduler
from burstbuffer.schedulers.base import StageIn, Start
from burstbuffer.schedulers.holds import NO_STAGING, HoldShape
from burstbuffer.schedulers.profile import AvailabilityProfile

from .staged_sim import simulate

GB = 10**9
ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from bb_capped_backfill import BBCappedBackfill  # noqa: E402  (the tutorial's file, as users have it)

EXAMPLE = "examples/bb_capped_backfill.py:BBCappedBackfill"


# ---------------------------------------------------------------------------- hold shapes
def test_two_phase_models_have_empty_stagings_and_three_phase_the_estimates():
    job = Job("w0!1", 0, 100, 4, 2 * GB)
    for model in (IOAwareModel(), AllocOnlyModel()):
        assert not model.stages_separately
        assert model.hold_shape(job, 5e9) == NO_STAGING and model.hold_shape(job, 5e9).empty
    tp = ThreePhaseModel()
    assert tp.stages_separately
    assert tp.hold_shape(job, 5e9) == HoldShape(8 * GB / 5e9, 8 * GB / 5e9) == HoldShape(1.6, 1.6)
    assert tp.hold_shape(job, 1e9) == HoldShape(8.0, 8.0)
    assert tp.hold_shape(Job("w0!2", 0, 100, 4, 0), 5e9) == NO_STAGING      # no BB: nothing to stage
    assert {n for n, f in JOB_MODELS.items() if f().stages_separately} == {"three-phase"}
    for bad in (-1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError):
            HoldShape(bad, 0.0)


def test_the_profile_answers_for_a_hold_shape():
    """2 nodes, one 10 GB BB node; node 0 held over [0, 50), 6 GB of BB over [0, 40). A job of 1 node × 5 GB, 20 s:
    two-phase it fits at once on node 1 only if its BB fits over [0, 20) — it does not (6 + 5 > 10): earliest 40.
    With stagings of 5 s its nodes start at t ≥ 5 and its BB is held over [t − 5, t + 25): earliest t = 45."""
    plat = Platform.simple(2, [10 * GB])
    p = AvailabilityProfile(plat, origin=0.0)
    b = next(iter(plat.bb_capacity))
    p.reserve(0.0, 50.0, __import__("procset").ProcSet(0), {})
    p.reserve(0.0, 40.0, __import__("procset").ProcSet(), {b: 6 * GB})
    job = Job("j", 0, 20, 1, 5 * GB)
    assert p.fit_at(job, 0.0) is None
    assert p.earliest_fit(job, 0.0).start == 40.0
    shape = HoldShape(5.0, 5.0)
    assert p.fit_at(job, 5.0, shape=shape, now=0.0) is None
    f = p.earliest_fit(job, 0.0, shape=shape)
    assert f.start == 45.0 and list(f.procs) == [1] and f.bb_of_node == {1: b}
    assert p.fit_at(job, 45.0, shape=shape, now=0.0) == f
    # nodes only (fcfs-easy's reservation): from now + stage-in, BB ignored
    assert p.earliest_fit(job, 0.0, bb_aware=False, shape=shape).start == 5.0


# ---------------------------------------------------------------------------- a hand-checked three-phase case
def _three_jobs():
    return [Job("w0!A", 0, 20, 1, 5 * GB), Job("w0!B", 1, 10, 2, 4 * GB), Job("w0!C", 2, 5, 1, 2 * GB)]


def _bound(sched, model):
    sched.bind_job_model(model)
    return sched


@pytest.mark.parametrize("make", [
    lambda plat: make_scheduler("sjf-bb", plat, staging_bandwidth=GB),
    lambda plat: BBCappedBackfill(plat, bb_share=1.0, staging_bandwidth=GB),
], ids=["sjf-bb", "tutorial"])
def test_three_jobs_on_three_phase_by_hand(make):
    """2 nodes, one 10 GB BB node, stagings at 1 GB/s (the estimate too). A (1 node, 5 GB, 20 s) at 0 stages in
    0-5 and runs 5-25 on node 0, stages out to 30. B (2 nodes, 4 GB each, 10 s) at 1 is the head: both nodes are
    free from 25, but its 8 GB fit beside A's 5 GB only once A's stage-out ends, 30: its reservation holds the BB
    over [30, 56) and the nodes over [38, 48). C (1 node, 2 GB, 5 s) at 2 stages in 2-4 beside A (7 GB), runs
    4-9 on node 1, stages out to 11, before B's reservation: backfilled. B stages in at 30, runs 38-48, out at 56.
    The same starts for the built-in sjf-bb and the tutorial policy (uncapped): both are EASY on the hold shapes."""
    plat = Platform.simple(2, [10 * GB])
    sched = _bound(make(plat), ThreePhaseModel())
    assert sched.staged
    t = simulate(sched, plat, _three_jobs())
    assert t == {"w0!A": (0, 5, 30), "w0!C": (2, 4, 11), "w0!B": (30, 38, 56)}


def test_the_tutorial_stages_in_before_its_nodes_only_on_three_phase():
    plat = Platform.simple(2, [10 * GB])
    a = Job("w0!A", 0, 20, 1, 5 * GB)
    for model, kind in ((IOAwareModel(), Start), (AllocOnlyModel(), Start), (ThreePhaseModel(), StageIn)):
        s = _bound(BBCappedBackfill(plat, bb_share=1.0), model)
        s.submit(a, 0.0)
        [d] = s.decide(0.0)
        assert type(d) is kind and d.job is a
    kept = _bound(BBCappedBackfill(plat, bb_share=1.0, staging="with-nodes"), ThreePhaseModel())
    kept.submit(a, 0.0)
    assert type(kept.decide(0.0)[0]) is Start                     # with-nodes: the two-phase behaviour


# ---------------------------------------------------------------------------- the tutorial under every model
def _rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("model", sorted(JOB_MODELS))
def test_tutorial_runs_under_every_job_model(tmp_path, kth_subset, model):
    """The tutorial policy on the first 60 KTH jobs under each job model: every job completes or is rejected by
    its cap, never over-allocated; on three-phase its jobs with BB stage in before their nodes start and free
    their nodes before their stage-out ends (it held them through both stagings before the policies shared one
    lifecycle: 0 of 200 such jobs)."""
    from burstbuffer.runner import run
    from .conftest import PLATFORM
    out = tmp_path / model
    run(EXAMPLE, kth_subset(60), PLATFORM, out, model=model, progress=False, timeout=300,
        policy_options={"bb_share": 0.5})
    rows = _rows(out / "jobs.csv")
    assert len(rows) == 60
    assert all(r["final_state"] in ("COMPLETED_SUCCESSFULLY", "REJECTED", "COMPLETED_WALLTIME_REACHED")
               for r in rows)
    assert sum(r["final_state"] != "REJECTED" for r in rows) > 40
    if model != "three-phase":
        assert "nodes_start" not in rows[0]
        return
    bb = [r for r in rows if int(r["bb_per_node"]) > 0 and r["final_state"] != "REJECTED"]
    assert len(bb) > 20
    staged = [r for r in bb if float(r["nodes_start"]) > float(r["starting_time"])]
    freed = [r for r in bb if float(r["nodes_end"]) < float(r["finish_time"])]
    assert len(staged) == len(bb) and len(freed) == len(bb)
    nobb = [r for r in rows if int(r["bb_per_node"]) == 0 and r["final_state"] != "REJECTED"]
    assert all(float(r["nodes_start"]) == float(r["starting_time"]) for r in nobb)


def test_make_model_gives_a_new_model_per_run():
    assert make_model("three-phase") is not make_model("three-phase")
