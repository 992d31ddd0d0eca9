"""The declared job-model interface and its registry; the one definition of each per-job metric, of the
jobs.csv columns and of the workload rules (issue 11, deliverables 5 and 6)."""
from __future__ import annotations

import inspect
import json
import math

import numpy as np
import pandas as pd
import pytest

from burstbuffer.app import SchedulerApp
from burstbuffer.batsim.loop import Outbox
from burstbuffer.batsim.protocol import ExecuteJob, JobCompleted, JobSubmitted, ProtocolError, SimulationBegins
from burstbuffer.errors import InputError
from burstbuffer.io_model.alloc_only import AllocOnlyModel
from burstbuffer.io_model.base import JobModel
from burstbuffer.io_model.io_aware import IOAwareModel
from burstbuffer.io_model.registry import JOB_MODELS, make_model, model_names
from burstbuffer.jsonvalues import is_num
from burstbuffer.metrics.definitions import (BATSIM_JOBS_COLUMNS, JOBS_CSV_COLUMNS, JOBS_CSV_EXTRA_COLUMNS, TAU,
                                             bounded_slowdown, runtime, turnaround_time, waiting_time)
from burstbuffer.metrics.tidy import job_metrics
from burstbuffer.platforms.model import Platform
from burstbuffer.spec import make_spec
from burstbuffer.schedulers.easy import FcfsPolicy
from burstbuffer.simulator.outputs import JobsWriter
from burstbuffer.simulator.workload import load_workload as simulator_load
from burstbuffer.workloads.batsim_json import load_workload as reader_load


# --- the job-model Protocol ----------------------------------------------------------------------
def _members(proto) -> dict[str, object]:
    """The members a Protocol declares: methods, properties and annotated attributes."""
    out = {k: v for k, v in vars(proto).items()
           if not k.startswith("_") and (inspect.isfunction(v) or isinstance(v, property))}
    out.update({k: None for k in proto.__annotations__})
    return out


def mismatches(cls, proto=JobModel) -> list[str]:
    """What `cls` lacks or declares differently from `proto` (empty: it implements it)."""
    bad = []
    for name, decl in _members(proto).items():
        if not hasattr(cls, name) and name not in getattr(cls, "__annotations__", {}):
            bad.append(f"missing {name}")
        elif inspect.isfunction(decl):
            impl = getattr(cls, name)
            if not callable(impl) or \
                    list(inspect.signature(impl).parameters) != list(inspect.signature(decl).parameters):
                bad.append(f"signature of {name}")
        elif isinstance(decl, property) and not isinstance(inspect.getattr_static(cls, name), property):
            bad.append(f"{name} is not a property")
    return bad


@pytest.mark.parametrize("cls", [AllocOnlyModel, IOAwareModel])
def test_both_models_implement_the_protocol(cls):
    assert mismatches(cls) == []
    assert isinstance(cls(), JobModel)


def test_the_protocol_check_fails_on_a_missing_or_different_method():
    class NoFlush(AllocOnlyModel):
        flush = None                                    # type: ignore[assignment]

    class OddStart(AllocOnlyModel):
        def start(self, start, out):                    # type: ignore[override]
            pass

    assert "signature of flush" in mismatches(NoFlush) or "missing flush" in mismatches(NoFlush)
    assert mismatches(OddStart) == ["signature of start"]
    assert set(_members(JobModel)) == {"name", "uses_dynamic_jobs", "begin", "start", "on_completed", "flush",
                                       "busy", "stages_separately", "hold_shape", "stage_in", "take_phase_events",
                                       "stage_out", "stage_out_decided", "cannot_carry"}


def test_registry_names_and_factories():
    assert model_names() == ["alloc-only", "io-aware", "three-phase"]
    assert type(make_model("io-aware")) is IOAwareModel and type(make_model("alloc-only")) is AllocOnlyModel
    assert make_model("io-aware") is not make_model("io-aware")           # a new model per run
    for name in model_names():
        assert make_model(name).name == name


def test_registry_rejects_an_unknown_model_naming_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown job model 'io'; valid job models: alloc-only, io-aware, three-phase$"):
        make_model("io")
    with pytest.raises(InputError) as e:
        make_spec("sjf-bb", job_model="io")
    assert str(e.value) == "--model: io: unknown job model (choose from alloc-only, io-aware, three-phase)"


def test_cli_choices_come_from_the_registry(monkeypatch, capsys):
    from burstbuffer.cli import main
    monkeypatch.setitem(JOB_MODELS, "zz-test", AllocOnlyModel)
    assert main(["run", "--model", "nope"]) == 2
    assert "'alloc-only', 'io-aware', 'three-phase', 'zz-test'" in capsys.readouterr().err


#: Platform.from_simulation_begins replaced: 4 compute nodes, one BB node of 1 TB, a PFS.
SMALL = classmethod(lambda cls, data, **kw: Platform.simple(4, [10**12]))


class Recorder(AllocOnlyModel):
    """alloc-only, recording the calls SchedulerApp makes."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def begin(self, platform, profiles):
        self.calls.append(("begin", sorted(profiles)))

    def flush(self, now, out):
        self.calls.append(("flush", now))

    def start(self, start, now, out):
        self.calls.append(("start", start.job.id, now))
        super().start(start, now, out)


def test_app_calls_the_declared_methods_in_order(monkeypatch, tmp_path):
    monkeypatch.setattr(Platform, "from_simulation_begins", SMALL)
    model = Recorder()
    app = SchedulerApp(FcfsPolicy, model)
    out = Outbox(0.0)
    app.on_event(0.0, SimulationBegins({"profiles": {"w0": {"p": {"type": "delay", "delay": 5, "bb": 10}}}}), out)
    app.on_event(1.0, JobSubmitted("w0!1", {"id": "w0!1", "subtime": 1.0, "walltime": 10.0, "res": 2,
                                            "profile": "p"}), out)
    app.after_events(1.0, out)
    assert any(isinstance(d, ExecuteJob) and d.job_id == "w0!1" for _, d in out.items)
    assert out.started == ["w0!1"]
    app.on_event(6.0, JobCompleted("w0!1", "COMPLETED_SUCCESSFULLY"), out)
    app.after_events(6.0, out)
    assert model.calls == [("begin", ["w0"]), ("flush", 1.0), ("start", "w0!1", 1.0), ("flush", 6.0)]
    app.write_jobs_csv(str(tmp_path / "jobs.csv"))
    row = pd.read_csv(tmp_path / "jobs.csv").iloc[0]
    assert (row["waiting_time"], row["turnaround_time"], row["bounded_slowdown"], row["bb_per_node"]) == (0, 5, 1, 10)


def test_a_bad_job_submitted_is_a_one_line_error(monkeypatch):
    monkeypatch.setattr(Platform, "from_simulation_begins", SMALL)
    app = SchedulerApp(FcfsPolicy, AllocOnlyModel())
    out = Outbox(0.0)
    app.on_event(0.0, SimulationBegins({"profiles": {}}), out)
    with pytest.raises(ProtocolError) as e:     # Batsim's message is malformed: exit 1 (docs/faults.md)
        app.on_event(1.0, JobSubmitted("w0!1", {"id": "w0!1", "subtime": 1, "res": 0, "profile": "p"}), out)
    assert str(e.value) == ("malformed JOB_SUBMITTED for job w0!1: bad job description (field 'res' must be a "
                            "positive integer, not 0)")


# --- per-job metrics, tau, columns ---------------------------------------------------------------
def test_metric_definitions_on_hand_computed_values():
    assert TAU == 600.0
    assert waiting_time(100.0, 160.0) == 60.0
    assert turnaround_time(100.0, 1960.0) == 1860.0
    assert runtime(160.0, 1960.0) == 1800.0
    assert bounded_slowdown(1860.0, 1800.0) == pytest.approx(1860 / 1800)
    assert bounded_slowdown(1200.0, 60.0) == 2.0                # runtime below tau: 1200 / 600
    assert bounded_slowdown(30.0, 20.0) == 1.0                  # never below 1
    assert bounded_slowdown(1200.0, 60.0, tau=10.0) == 20.0
    b = bounded_slowdown(np.array([1200.0, np.nan]), np.array([60.0, 5.0]))
    assert b[0] == 2.0 and math.isnan(b[1])
    ld = np.longdouble
    assert waiting_time(ld("0.1"), ld("0.3")) == ld("0.3") - ld("0.1")   # long doubles stay long doubles


def test_tidy_table_uses_the_definitions():
    jobs = pd.DataFrame({"job_id": ["1", "2"], "submission_time": [0.0, 10.0], "starting_time": [100.0, None],
                         "finish_time": [1300.0, None], "final_state": ["COMPLETED_SUCCESSFULLY", "REJECTED"]})
    m = job_metrics(jobs)
    assert list(m.iloc[0][["waiting_time", "turnaround_time", "runtime", "bounded_slowdown"]]) == [100, 1300, 1200,
                                                                                                 1300 / 1200]
    assert m.iloc[1][["waiting_time", "turnaround_time", "runtime", "bounded_slowdown"]].isna().all()


def test_one_column_list(tmp_path, monkeypatch):
    assert JOBS_CSV_COLUMNS[:len(BATSIM_JOBS_COLUMNS)] == BATSIM_JOBS_COLUMNS
    assert JOBS_CSV_COLUMNS[len(BATSIM_JOBS_COLUMNS):] == JOBS_CSV_EXTRA_COLUMNS
    w = JobsWriter(str(tmp_path / "b_jobs.csv"))
    w.close()
    assert (tmp_path / "b_jobs.csv").read_text().strip().split(",") == list(BATSIM_JOBS_COLUMNS)
    app = SchedulerApp(FcfsPolicy, AllocOnlyModel())
    app.write_jobs_csv(str(tmp_path / "jobs.csv"))
    assert (tmp_path / "jobs.csv").read_text().strip().split(",") == list(JOBS_CSV_COLUMNS)


def test_is_num_is_finite_numbers_only():
    assert is_num(1) and is_num(2.5) and is_num(-3)
    assert not any(is_num(v) for v in (True, "1", None, math.nan, math.inf, -math.inf, [1]))


# --- one workload reader -------------------------------------------------------------------------
def _doc():
    return {"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "walltime": 60, "res": 2, "profile": "p"},
                                  {"id": "x", "subtime": 3, "res": 1, "profile": "c"}],
            "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0, "bb": 10},
                         "c": {"type": "composed", "seq": ["p"], "repeat": 2}}}


@pytest.mark.parametrize("edit", [
    lambda d: d["jobs"][1].pop("res"),
    lambda d: d["jobs"][0].update(subtime=-1),
    lambda d: d["jobs"][0].update(walltime=0),
    lambda d: d["jobs"][0].update(res=1.5),
    lambda d: d["jobs"][1].update(id=1),
    lambda d: d["jobs"][1].update(profile="q"),
    lambda d: d["jobs"].append(7),
    lambda d: d["profiles"]["p"].update(cpu=float("nan")),
    lambda d: d["profiles"]["p"].update(bb=-1),
    lambda d: d["profiles"]["c"].update(seq=["nope"]),
    lambda d: d["profiles"].update(g={"type": "gpu"}),
    lambda d: d.pop("profiles"),
    lambda d: d.update(nb_res=0),
])
def test_simulator_and_scheduler_side_read_workloads_with_the_same_rules(tmp_path, edit):
    d = _doc()
    edit(d)
    f = tmp_path / "w.json"
    f.write_text(json.dumps(d))
    with pytest.raises(InputError) as a:
        reader_load(f, require_bb=False)
    with pytest.raises(InputError) as b:
        simulator_load(str(f), "w0")
    assert str(a.value) == str(b.value)
    assert str(a.value).startswith(f"{f}: ") and "\n" not in str(a.value)


def test_the_simulator_refuses_only_the_types_it_cannot_run(tmp_path):
    d = _doc()
    f = tmp_path / "w.json"
    f.write_text(json.dumps(d))
    wl = simulator_load(str(f), "w0")
    assert wl.jobs["x"].walltime == -1 and wl.jobs["1"].description["id"] == "w0!1"
    d["profiles"]["s"] = {"type": "smpi", "trace": "t"}
    f.write_text(json.dumps(d))
    assert "s" in reader_load(f).profiles                        # valid Batsim input
    with pytest.raises(InputError, match=r"profile s: profile type 'smpi' is not supported"):
        simulator_load(str(f), "w0")


def test_job_objects_keep_the_file_order_and_fields(tmp_path):
    d = _doc()
    d["jobs"][0]["user"] = "a"
    f = tmp_path / "w.json"
    f.write_text(json.dumps(d))
    w = reader_load(f)
    assert [j.id for j in w.jobs] == [1, "x"] and w.job_objects[0]["user"] == "a"
