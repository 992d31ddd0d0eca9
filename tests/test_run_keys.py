"""Runs keyed by the content of their inputs (`burstbuffer.reproduce.execute.input_key`, docs/verdicts.md): the
key follows the workload's and the platform's content (not their paths), the policy, its options, the seed,
the job model and the code that shapes a schedule; a run made from other inputs is not taken as done."""
import importlib
import json
import shutil

from burstbuffer.reproduce.runs import PlannedRun

E = importlib.import_module("burstbuffer.reproduce.execute")     # the module (the package exports its function)


def _spec(wl, out, **kw):
    return PlannedRun("whole", kw.pop("policy", "sjf-bb"), str(wl), kw.pop("model", "io-aware"), str(out), 2, **kw)


def test_the_key_follows_content_not_paths(tmp_path):
    wl = tmp_path / "a.json"
    wl.write_text('{"nb_res": 4, "jobs": [], "profiles": {}}')
    copy = tmp_path / "b.json"
    shutil.copy(wl, copy)
    plat = tmp_path / "p.xml"
    plat.write_text("<platform/>")
    s = E.RunSettings(str(plat), seed=3)
    k = E.input_key(_spec(wl, tmp_path / "o"), s)
    assert E.input_key(_spec(copy, tmp_path / "elsewhere"), s) == k          # same content, other paths
    for other in (_spec(wl, "o", seed=4), _spec(wl, "o", policy="fcfs-easy"), _spec(wl, "o", model="alloc-only"),
                  _spec(wl, "o", options='{"order":"wfp"}')):
        assert E.input_key(other, s) != k
    assert E.input_key(_spec(wl, "o", seed=3), s) == k                       # the plan's seed, given or not
    assert E.input_key(_spec(wl, "o"), E.RunSettings(str(plat), seed=3, network_model="flat")) != k
    copy.write_text('{"nb_res": 4, "jobs": [], "profiles": {"x": {}}}')
    assert E.input_key(_spec(copy, "o"), s) != k                              # other content
    plat.write_text("<platform version='4.1'/>")
    assert E.input_key(_spec(wl, "o"), s) != k
    E.code_version.cache_clear()
    assert len(E.code_version()) == 16


def test_a_marker_from_other_inputs_is_not_done(tmp_path):
    wl = tmp_path / "a.json"
    wl.write_text("{}")
    plat = tmp_path / "p.xml"
    plat.write_text("<platform/>")
    s = E.RunSettings(str(plat))
    spec = _spec(wl, tmp_path / "run")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "jobs.csv").write_text("job_id\n")
    marker = {"policy": "sjf-bb", "model": "io-aware", "workload": str(wl), "jobs": 2, "options": "",
              "inputs": E.input_key(spec, s)}
    (tmp_path / "run" / E.MARKER).write_text(json.dumps(marker))
    assert E.read_marker(spec, s) is not None
    wl.write_text('{"changed": 1}')                      # the workload file rewritten in place: run again
    assert E.read_marker(spec, s) is None and E.read_marker(spec) is not None
