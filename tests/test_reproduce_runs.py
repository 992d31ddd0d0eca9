"""Run planning, the study registry and resumability of `burstbuffer reproduce`, without simulating:
the planner's run list for ``--jobs 1000`` and ``--parts``, and `execute` handing an executor only the
runs without a finished marker."""
import argparse
import json
from pathlib import Path

import pytest

from burstbuffer.cli import main
from burstbuffer.errors import InputError
from burstbuffer.reproduce import (DEFAULT_STUDY, MARKER, RunSettings, all_studies, execute, get_study, plan_runs,
                                   read_marker)
from burstbuffer.reproduce.runs import KTH_1000
from burstbuffer.schedulers import POLICIES

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

PAPER = ["fcfs", "fcfs-easy", "filler", "fcfs-bb", "sjf-bb", "plan-1", "plan-2", "plan-3"]


def _args(**kw):
    base = dict(jobs="1000", workload=None, parts=False, parts_from=None, split=None, policies=None,
                model="io-aware", gantt_jobs=3500)
    base.update(kw)
    return argparse.Namespace(**base)


def test_registry_has_the_default_study():
    assert DEFAULT_STUDY == "kopanski2021" and set(all_studies()) >= {"kopanski2021"}
    st = get_study("kopanski2021")
    assert list(st.policies) == PAPER and st.reference == "sjf-bb" and len(st.claims) == 11
    with pytest.raises(InputError, match="unknown study"):
        get_study("no-such-study")


def test_unknown_study_is_an_input_error(tmp_path, capsys):
    assert main(["reproduce", "--study", "nope", "--jobs", "1000", "--output", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    # one line naming the bad study and every study there is (the registry's, sorted)
    assert err.count("\n") == 1 and "nope: unknown study (known: " in err
    assert f"(known: {', '.join(sorted(all_studies()))})" in err
    assert {"backfilling", "bbsched", "kopanski2021", "orders", "three-phase"} <= set(all_studies())


def test_plan_for_jobs_1000(tmp_path):
    plan = plan_runs(get_study("kopanski2021"), _args(), tmp_path, POLICIES, log=lambda m: None)
    assert [s.key for s in plan.specs] == [f"whole/{p}" for p in PAPER] + ["gantt/fcfs-easy"]
    whole = plan.specs[:8]
    assert {(s.workload, s.model, s.jobs) for s in whole} == {(str(KTH_1000.resolve()), "io-aware", 1000)}
    assert all(Path(s.out) == tmp_path / "runs" / "whole" / s.policy for s in whole)
    g = plan.specs[-1]
    assert (g.model, g.jobs, Path(g.out)) == ("alloc-only", 1000, tmp_path / "runs" / "gantt" / "fcfs-easy")
    assert Path(g.workload) == tmp_path / "workloads" / "gantt-1000.json"
    assert plan.whole_label == "the first 1000 KTH jobs (workloads/kth-1000.json)" and plan.parts_label == "none"


def test_plan_with_parts(tmp_path, kth_subset):
    wl = kth_subset(40)
    args = _args(workload=str(wl), parts=True, split=3, policies="sjf-bb,nope,plan-2", gantt_jobs=10)
    said = []
    plan = plan_runs(get_study("kopanski2021"), args, tmp_path, POLICIES, log=said.append)
    scopes = [s.scope for s in plan.specs if s.scope.startswith("part-")]
    nparts = len(plan.parts)
    assert nparts == 3 and scopes == [f"part-{k:02d}" for k in range(3) for _ in range(2)]
    assert [s.key for s in plan.specs] == (["whole/sjf-bb", "whole/plan-2"]
                                           + [f"part-{k:02d}/{p}" for k in range(3) for p in ("sjf-bb", "plan-2")]
                                           + ["gantt/fcfs-easy"])
    # the parts hold every job once; the Gantt run takes the first 10 jobs
    assert sum(s.jobs for s in plan.specs if s.scope.startswith("part-") and s.policy == "sjf-bb") == 40
    assert plan.specs[-1].jobs == 10
    assert plan.skipped == ["nope (not in the policy registry)"] and "skipped: policy nope" in said[0]
    assert plan.notes == [f"parts: {wl} cut into 3 parts of equal duration"]


def _finish(spec, **override):
    """Write what run_one leaves behind a finished run."""
    out = Path(spec.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "jobs.csv").write_text("job_id\n")
    from burstbuffer.reproduce.execute import input_key
    info = {"key": spec.key, "policy": spec.policy, "model": spec.model, "workload": spec.workload, "jobs": spec.jobs,
            "inputs": input_key(spec, RunSettings("p.xml"))}     # what run_one records: the run's content key
    info.update(override)
    (out / MARKER).write_text(json.dumps(info))


class _Recorder:
    """An executor that records what it is asked to run and reports each run as failed."""

    def __init__(self):
        self.asked = []

    def run(self, todo, settings, on_done, *, total, kept):
        self.asked.append(([s.key for s in todo], total, kept))
        for s in todo:
            on_done(s, {"key": s.key, "error": "not run"})


def test_a_finished_run_is_not_redone(tmp_path):
    plan = plan_runs(get_study("kopanski2021"), _args(policies="fcfs,sjf-bb,plan-2", gantt_jobs=0), tmp_path,
                     POLICIES, log=lambda m: None)
    fcfs, sjf, plan2 = plan.specs
    _finish(fcfs)
    _finish(sjf, model="alloc-only")          # a marker of another run: redone
    Path(plan2.out).mkdir(parents=True)
    (Path(plan2.out) / MARKER).write_text("{broken")
    rec, said = _Recorder(), []
    res = execute(plan.specs, rec, RunSettings("p.xml"), log=said.append)
    # the longest runs first: plan-2 (plan factor 3) before sjf-bb
    assert rec.asked == [(["whole/plan-2", "whole/sjf-bb"], 3, 1)]
    assert said == ["resuming: 1 finished run(s) kept, 2 to do"]
    assert res["whole/fcfs"]["policy"] == "fcfs" and res["whole/sjf-bb"]["error"] == "not run"
    assert read_marker(fcfs) is not None and read_marker(sjf) is None
    (Path(fcfs.out) / "jobs.csv").unlink()    # no jobs.csv: not finished
    assert read_marker(fcfs) is None
    for s in (fcfs, sjf, plan2):
        _finish(s)
    rec = _Recorder()
    assert set(execute(plan.specs, rec, RunSettings("p.xml"), log=lambda m: None)) == {s.key for s in plan.specs}
    assert rec.asked == []


def test_failed_runs_are_reported_in_one_line(capsys):
    from burstbuffer.reproduce.execute import report_failed
    assert report_failed([]) == 0 and capsys.readouterr().err == ""
    assert report_failed(["whole/fcfs", "part-03/plan-2"]) == 1
    assert capsys.readouterr().err == ("2 run(s) failed: whole/fcfs, part-03/plan-2; "
                                       "rerun the same command to retry them\n")
