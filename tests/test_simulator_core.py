"""The simulator's two cores give the same simulation (issue 30, docs/simulator-core.md): the actor core
(one SimGrid actor per running job, the default) and the bridged core (no job actor: the server drives
the jobs' activities through the compiled bridge, `burstbuffer.simulator._bridge`), selected by
``BURSTBUFFER_SIM_CORE``. Same messages to the scheduler (timestamps included), byte-identical jobs.csv.
The bridged tests skip when the bridge cannot be built here (no C++ compiler, SimGrid or pybind11 headers)."""
from __future__ import annotations

import pytest

from .sim_sched import REPO, run_simulation

from burstbuffer.cbuild import NativeUnavailable
from burstbuffer.simulator import _bridge
from burstbuffer.simulator.server import CORE_ENV

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

BB_ROLES = ",".join(f"node_{9 * k}" for k in range(12)) + ":storage"

#: one-activity profiles: parallel tasks, a walltime reached, a kill,
#: a rejection, simultaneous ends, a data staging and a PFS phase between compute and storage nodes
WORKLOAD = {
    "nb_res": 96,
    "jobs": [
        {"id": 1, "subtime": 10, "walltime": 100, "res": 1, "profile": "ph1"},
        {"id": 2, "subtime": 20, "res": 2, "profile": "ph2"},
        {"id": 3, "subtime": 20, "res": 2, "profile": "ph2"},
        {"id": 4, "subtime": 30, "walltime": 100, "res": 4, "profile": "ph1"},
        {"id": 5, "subtime": 60, "walltime": 20, "res": 4, "profile": "ptlong"},
        {"id": 6, "subtime": 90, "walltime": -1, "res": 3, "profile": "ptlong"},
        {"id": 7, "subtime": 100, "walltime": 10, "res": 200, "profile": "ph2"},
        {"id": 8, "subtime": 110, "walltime": 50, "res": 16, "profile": "ph1"},
        {"id": 9, "subtime": 110, "walltime": 50, "res": 8, "profile": "ph3"},
    ],
    "profiles": {
        "ph1": {"type": "parallel_homogeneous", "cpu": 5e9, "com": 1e6},
        "ph2": {"type": "parallel_homogeneous", "cpu": 3e9, "com": 0},
        "ph3": {"type": "parallel_homogeneous_total", "cpu": 4e10, "com": 8e7},
        "ptlong": {"type": "parallel_homogeneous", "cpu": 1e11, "com": 0},
    },
}


def _bridge_or_skip():
    try:
        _bridge.load()
    except NativeUnavailable as exc:
        pytest.skip(f"bridged core unavailable: {exc}")


def _run(tmp_path, monkeypatch, core, workload=WORKLOAD, **kw):
    monkeypatch.setenv(CORE_ENV, core)
    (tmp_path / core).mkdir(exist_ok=True)
    res = run_simulation(tmp_path / core, workload, **kw)
    assert res.returncode == 0, res.stderr
    return res


def _messages(res) -> list[dict]:
    """The messages to the scheduler, the workload file's path (each run has its own folder) left out."""
    msgs = [dict(m) for m in res.messages]
    begins = msgs[0]["events"][0]["data"]
    assert begins["workloads"]
    msgs[0] = {**msgs[0], "events": [{**msgs[0]["events"][0], "data": {**begins, "workloads": None}}]}
    return msgs


def _csv(res) -> str:
    return open(res.prefix + "_jobs.csv").read()


@pytest.fixture(scope="module")
def bridge_available():
    _bridge_or_skip()


def test_cores_same_exchange_and_jobs_csv(tmp_path, monkeypatch, bridge_available):
    sched = ("fcfs", "--kill", "w0!6@5")
    a = _run(tmp_path, monkeypatch, "actors", scheduler=sched)
    b = _run(tmp_path, monkeypatch, "bridged", scheduler=sched)
    assert _messages(b) == _messages(a)
    assert _csv(b) == _csv(a)
    states = {r["job_id"]: r["final_state"] for r in b.jobs}
    assert states["5"] == "COMPLETED_WALLTIME_REACHED" and states["6"] == "COMPLETED_KILLED"
    assert states["7"] == "REJECTED" and states["1"] == "COMPLETED_SUCCESSFULLY"
    (_, killed), = b.events("JOB_KILLED")
    assert killed["data"]["job_progress"]["w0!6"]["progress"] == pytest.approx(0.05, abs=1e-6)


def test_cores_same_on_kth_io_aware(tmp_path, monkeypatch, bridge_available):
    """Dynamic jobs with data stagings, compute phases and PFS checkpoints (the io-aware model) beside the
    paper's scheduler: identical jobs.csv."""
    from burstbuffer.runner import run

    import json
    wl = json.loads((REPO / "workloads" / "kth-1000.json").read_text())
    wl["jobs"] = wl["jobs"][:40]
    path = tmp_path / "w40.json"
    path.write_text(json.dumps(wl))
    out = {}
    for core in ("actors", "bridged"):
        monkeypatch.setenv(CORE_ENV, core)
        run("sjf-bb", path, REPO / "platforms" / "dragonfly96.xml", tmp_path / core, model="io-aware",
            progress=False, timeout=300)
        out[core] = (tmp_path / core / "batsim_subjobs.csv").read_text()
    assert out["bridged"] == out["actors"]
    assert out["bridged"].count("\n") > 41   # the dynamic sub-jobs are there


#: delay and composed profiles (what the bridged core runs as a program of steps): a walltime reached in a
#: composed profile's parallel task and in its delay, a delay equal to the walltime, a repeat, a failing step
#: that stops the sequence, a kill in a parallel task of a nested composed profile and one in a delay
PROGRAMS = {
    "nb_res": 96,
    "jobs": [
        {"id": 1, "subtime": 0, "walltime": 100, "res": 2, "profile": "d"},
        {"id": 2, "subtime": 1, "walltime": 100, "res": 4, "profile": "c"},
        {"id": 3, "subtime": 2, "walltime": 12, "res": 2, "profile": "c"},
        {"id": 4, "subtime": 2, "walltime": 6, "res": 1, "profile": "c2"},
        {"id": 5, "subtime": 3, "res": 3, "profile": "crep"},
        {"id": 6, "subtime": 4, "res": 2, "profile": "cfail"},
        {"id": 7, "subtime": 5, "walltime": 5, "res": 1, "profile": "d"},
        {"id": 8, "subtime": 6, "res": 2, "profile": "c"},
    ],
    "profiles": {
        "d": {"type": "delay", "delay": 5},
        "p": {"type": "parallel_homogeneous", "cpu": 5e9, "com": 1e6},
        "c": {"type": "composed", "seq": ["d", "p", "d"]},
        "c2": {"type": "composed", "seq": ["p", "d", "p"]},
        "crep": {"type": "composed", "repeat": 4, "seq": ["c", "p"]},
        "dfail": {"type": "delay", "delay": 2, "ret": 3},
        "cfail": {"type": "composed", "seq": ["d", "dfail", "p"]},
    },
}


def test_cores_same_on_delay_and_composed_profiles(tmp_path, monkeypatch, bridge_available):
    sched = ("fcfs", "--kill", "w0!5@30", "--kill", "w0!8@2")
    a = _run(tmp_path, monkeypatch, "actors", workload=PROGRAMS, scheduler=sched)
    b = _run(tmp_path, monkeypatch, "bridged", workload=PROGRAMS, scheduler=sched)
    assert _messages(b) == _messages(a)
    assert _csv(b) == _csv(a)
    rows = {r["job_id"]: r for r in b.jobs}
    assert {k: r["final_state"] for k, r in rows.items()} == {
        "1": "COMPLETED_SUCCESSFULLY", "2": "COMPLETED_SUCCESSFULLY", "3": "COMPLETED_WALLTIME_REACHED",
        "4": "COMPLETED_WALLTIME_REACHED", "5": "COMPLETED_KILLED", "6": "COMPLETED_FAILED",
        "7": "COMPLETED_WALLTIME_REACHED", "8": "COMPLETED_KILLED"}
    assert float(rows["1"]["execution_time"]) == 5.0              # one delay
    assert float(rows["3"]["execution_time"]) == 12.0             # stopped at its walltime
    assert float(rows["6"]["execution_time"]) == 7.0              # 5 s, then the failing 2 s step: no "p"
    progress = {}
    for _, ev in b.events("JOB_KILLED"):
        progress.update(ev["data"]["job_progress"])
    # job 8, killed 2 s after its start: 2 s into its first step, the 5 s delay
    assert progress["w0!8"] == {"profile_name": "c", "current_task_index": 0,
                                "current_task": {"profile_name": "d", "progress": pytest.approx(0.4)}}
    p5 = progress["w0!5"]
    assert p5["profile_name"] == "crep" and p5["current_task"]["profile_name"] in ("c", "p")


def test_bridged_core_raises_a_steps_error_when_the_job_reaches_it(tmp_path, monkeypatch, bridge_available):
    """A composed profile's data staging with no storage mapping: the error of that step, in one line, on
    both cores, once the job's actor reaches it (after its delay)."""
    wl = {"nb_res": 96, "jobs": [{"id": 1, "subtime": 0, "walltime": 100, "res": 2, "profile": "cd"}],
          "profiles": {"d": {"type": "delay", "delay": 5},
                       "ds": {"type": "data_staging", "nb_bytes": 1e6, "from": "pfs", "to": "bb"},
                       "cd": {"type": "composed", "seq": ["d", "ds"]}}}
    errors = {}
    for core in ("actors", "bridged"):
        monkeypatch.setenv(CORE_ENV, core)
        (tmp_path / core).mkdir()
        res = run_simulation(tmp_path / core, wl)
        assert res.returncode == 1
        errors[core] = [ln for ln in res.stderr.splitlines() if ln.startswith("burstbuffer simulate:")]
    assert errors["bridged"] == errors["actors"]
    assert len(errors["bridged"]) == 1 and "Unknown storage label='pfs'" in errors["bridged"][0]


def test_bridged_core_falls_back_to_actors_without_the_bridge(tmp_path, monkeypatch):
    """BURSTBUFFER_NATIVE=0 (as on a machine without a compiler): the actor core runs, same outputs."""
    a = _run(tmp_path, monkeypatch, "actors")
    monkeypatch.setenv("BURSTBUFFER_NATIVE", "0")
    b = _run(tmp_path, monkeypatch, "bridged")
    assert _csv(b) == _csv(a) and _messages(b) == _messages(a)


def test_unknown_core_is_bad_input(tmp_path, monkeypatch):
    monkeypatch.setenv(CORE_ENV, "fast")
    res = run_simulation(tmp_path, WORKLOAD)
    assert res.returncode == 2
    assert CORE_ENV in res.stderr and "fast" in res.stderr


def test_auto_core_same_outputs(tmp_path, monkeypatch, bridge_available):
    a = _run(tmp_path, monkeypatch, "actors")
    b = _run(tmp_path, monkeypatch, "auto")
    assert _csv(b) == _csv(a) and _messages(b) == _messages(a)


def test_core_option_beats_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(CORE_ENV, "actors")
    res = run_simulation(tmp_path, WORKLOAD, sim_args=("--core", "nonsense"))
    assert res.returncode == 2 and "--core" in res.stderr


def _core_of(monkeypatch, env=None, dynamic=False, types=("parallel_homogeneous",)):
    """What `server.select_core` picks for a run: "bridged" or "actors"."""
    from types import SimpleNamespace

    from burstbuffer.simulator.server import select_core

    if env is None:
        monkeypatch.delenv(CORE_ENV, raising=False)
    else:
        monkeypatch.setenv(CORE_ENV, env)
    profiles = {t: SimpleNamespace(type=t) for t in types}
    st = SimpleNamespace(cfg=SimpleNamespace(core=None, dynamic_jobs=dynamic, quiet=True),
                         workloads={"w0": SimpleNamespace(profiles=profiles)})
    return "actors" if select_core(st) is None else "bridged"


def test_default_core_is_the_bridged_one_where_it_runs(monkeypatch, bridge_available):
    assert _core_of(monkeypatch) == "bridged"
    assert _core_of(monkeypatch, types=("parallel_homogeneous", "delay", "composed")) == "bridged"
    assert _core_of(monkeypatch, dynamic=True) == "bridged"
    assert _core_of(monkeypatch, env="actors") == "actors"
    monkeypatch.setenv("BURSTBUFFER_NATIVE", "0")       # no bridge (no compiler, no headers): the actor core
    assert _core_of(monkeypatch) == "actors"


def test_default_core_same_outputs_with_and_without_the_bridge(tmp_path, monkeypatch, bridge_available):
    """The default (no --core, no $BURSTBUFFER_SIM_CORE) runs the bridged core here and the actor core
    without the bridge: the same messages and jobs.csv."""
    monkeypatch.delenv(CORE_ENV, raising=False)
    (tmp_path / "b").mkdir()
    b = run_simulation(tmp_path / "b", WORKLOAD, scheduler=("fcfs", "--kill", "w0!6@5"))
    monkeypatch.setenv("BURSTBUFFER_NATIVE", "0")
    (tmp_path / "a").mkdir()
    a = run_simulation(tmp_path / "a", WORKLOAD, scheduler=("fcfs", "--kill", "w0!6@5"))
    assert a.returncode == b.returncode == 0, a.stderr + b.stderr
    assert _csv(b) == _csv(a) and _messages(b) == _messages(a)


def test_bridged_core_runs_its_actors_on_raw_contexts(tmp_path, monkeypatch, bridge_available):
    """The bridged core's C++ actors run in the server's thread (SimGrid's raw contexts, asked for when the
    engine is built: a later set_config is ignored, and each actor then got a thread of its own). Seen from
    outside as the processes' voluntary context switches: the default (raw) takes a fraction of those of the
    same run on thread contexts, with the same outputs."""
    import json
    import resource

    from burstbuffer.simulator.server import CONTEXTS_ENV

    wl = json.loads((REPO / "workloads" / "kth-1000.json").read_text())
    wl["jobs"] = wl["jobs"][:300]
    wl["profiles"] = {j["profile"]: wl["profiles"][j["profile"]] for j in wl["jobs"]}
    switches, outs = {}, {}
    for ctx in ("default", "thread"):
        if ctx == "default":
            monkeypatch.delenv(CONTEXTS_ENV, raising=False)
        else:
            monkeypatch.setenv(CONTEXTS_ENV, ctx)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_nvcsw
        (tmp_path / ctx).mkdir()
        res = _run(tmp_path / ctx, monkeypatch, "bridged", workload=wl)
        switches[ctx] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_nvcsw - before
        outs[ctx] = (_messages(res), _csv(res))
    assert outs["default"] == outs["thread"]
    assert switches["default"] * 3 < switches["thread"], switches
