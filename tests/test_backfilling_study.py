"""`burstbuffer reproduce --study backfilling` (Casanova, ICS 632 slides 24, 31-32, 34) end to end on a few
crowded KTH jobs: every column runs under alloc-only, the report has the per-class table and the regime
table, and the five claims are judged (their rules both ways: tests/test_claim_rules.py)."""
from __future__ import annotations

import argparse
import json

import pandas as pd
import pytest

from burstbuffer.reproduce import RunSettings, analyse, execute, get_study, plan_runs
from burstbuffer.reproduce.local import LocalPoolExecutor
from burstbuffer.reproduce.studies import backfilling as BF
from burstbuffer.runner import DEFAULT_PLATFORM
from burstbuffer.schedulers import POLICIES

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md): seven small simulations


def _crowd(w):
    """The first 16 KTH jobs submitted one second apart, every other one asking for at least 40 of the 96 nodes:
    the queue fills and jobs wait."""
    for k, j in enumerate(w["jobs"]):
        j["subtime"] = float(k)
        if k % 2:
            j["res"] = max(j["res"], 40)


def test_backfilling_study_end_to_end(tmp_path, kth_subset):
    wl = kth_subset(16, edit=_crowd)
    st = get_study("backfilling")
    args = argparse.Namespace(jobs="1000", workload=str(wl), parts=False, parts_from=None, split=None,
                              policies=None, model="io-aware", gantt_jobs=0, seed=0)
    out = tmp_path / "rep"
    plan = plan_runs(st, args, out, POLICIES, log=lambda m: None)
    # every column on the selected jobs; slide 31's two columns also on its scope (the trace's actual run times)
    assert [(s.scope, s.column or s.policy) for s in plan.specs] == \
        [("whole", v.label) for v in BF.VARIANTS if not v.scopes or "whole" in v.scopes] + \
        [(BF.ACTUAL, BF.EASY), (BF.ACTUAL, BF.X3)]
    assert {s.model for s in plan.specs} == {"alloc-only"}                   # whatever --model says
    assert json.loads(next(s for s in plan.specs if s.column == "easy/x3").options) == {"walltime_factor": 3}
    results = execute(plan.specs, LocalPoolExecutor(2, pin=False, progress=False),
                      RunSettings(str(DEFAULT_PLATFORM)), log=lambda m: None)
    assert all("error" not in r for r in results.values()), results
    analyse(out, st, plan.specs, results, {"model": "io-aware", "platform": str(DEFAULT_PLATFORM), "seed": 0,
                                            "workers": 2}, log=lambda m: None)
    jm = pd.read_csv(out / "job_metrics.csv")
    assert (jm.waiting_time > 0).any()                                      # the crowded jobs do wait
    verdicts = {v["id"]: v for v in json.loads((out / "verdicts.json").read_text())}
    assert set(verdicts) == {c.id for c in BF.CLAIMS}
    # the claims over every job are judged; a class with no job among these 16 is not measured, and says so
    assert verdicts["estimates-x2"]["verdict"] != "not measured" and verdicts["lookahead"]["verdict"] != "not measured"
    assert all(v["verdict"] != "not measured" or "no jobs paired" in v["measured"] for v in verdicts.values())
    # no A/A run in this plan: the placebo column says so (tests/test_placebo.py judges one)
    assert all(v["asserts"] == "difference" and v["verdict_placebo"] == "not run" for v in verdicts.values())
    report = (out / "report.md").read_text()
    assert "per job class" in report and "idle while jobs wait" in report and "alloc-only job model" in report
