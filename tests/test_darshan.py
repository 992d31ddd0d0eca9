"""`burstbuffer workload io-from-darshan` (issue 29, docs/inputs-traces.md §2): Darshan logs → the io-aware
model's volumes, on the logs PyDarshan's wheel ships (darshan/examples)."""
import json
import shutil
from pathlib import Path

import pytest

from burstbuffer.cli import main
from burstbuffer.errors import InputError
from burstbuffer.io_model.io_aware import nb_phases
from burstbuffer.workloads.darshan_io import read_logs

from .test_io_model import Driver

darshan = pytest.importorskip("darshan")
EX = Path(darshan.__file__).parent / "examples"
READ_AB = EX / "darshan-graph" / "pq_app_readAB_writeC_id71326_7-31-5658-2037904274838284930_55623.darshan"
READ1 = EX / "darshan-graph" / "pq_app_read_id71317_7-31-5657-2037904274838284930_55623.darshan"
WRITE1 = EX / "darshan-graph" / "pq_app_write_id71296_7-31-5657-2037904274838284930_55623.darshan"
IOR = EX / "example_logs" / "ior_hdf5_example.darshan"
G = 10 ** 9


def test_logs_read_per_layer():
    a, b, c = read_logs([READ_AB, IOR, EX / "example_logs" / "noposix.darshan"])
    # the log's own counters (darshan-parser of PyDarshan's example files)
    assert (a.jobid, a.nprocs) == ("71326", 4)
    assert a.layers == {"POSIX": (20000, 40), "MPI-IO": (0, 8000), "STDIO": (0, 1064)}
    assert (a.bytes_read, a.bytes_written) == (20000, 8000 + 1064)          # max(POSIX, MPI-IO) + STDIO
    assert b.jobid == "32324925" and b.layers["POSIX"] == b.layers["MPI-IO"] == (4202504, 4195800)
    assert (b.bytes_read, b.bytes_written) == (4202504, 4195800 + 2421)      # MPI-IO over POSIX: not added twice
    assert c.layers == {"STDIO": (1812408359, 29562779)} and c.bytes_read == 1812408359


def _workload(tmp_path, shared=False):
    w = {"nb_res": 96, "jobs": [
        {"id": 71326, "subtime": 1, "walltime": 7200, "res": 4, "profile": "a"},
        {"id": 71317, "subtime": 2, "walltime": 7200, "res": 2, "profile": "b" if not shared else "a"},
        {"id": 5, "subtime": 3, "walltime": 7200, "res": 1, "profile": "c"}],
        "profiles": {"a": {"type": "parallel_homogeneous", "cpu": 3 * 3600 * G, "com": 0, "bb": 10 ** 9},
                     "b": {"type": "parallel_homogeneous", "cpu": 10 * G, "com": 0, "bb": 10 ** 9},
                     "c": {"type": "parallel_homogeneous", "cpu": 10 * G, "com": 0, "bb": 10 ** 9}}}
    p = tmp_path / "w.json"
    p.write_text(json.dumps(w))
    return p


def test_cli_sets_the_volumes_of_matched_jobs(tmp_path, capsys):
    wl = _workload(tmp_path)
    second = tmp_path / "step2.darshan"                 # a second log of job 71317 (another srun step)
    shutil.copy(READ1, second)
    out = tmp_path / "o.json"
    assert main(["workload", "io-from-darshan", str(wl), str(READ_AB), str(READ1), str(second), str(WRITE1),
                 "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2 jobs given Darshan's volumes; 1 jobs without a log" in text and "1 logs match no job" in text
    w = json.loads(out.read_text())
    a, b, c = (w["profiles"][k] for k in "abc")
    p = nb_phases(a["cpu"])
    assert p == 3
    assert a["io_stage_in"] == 20000 / 4 and a["io_checkpoint"] == a["io_stage_out"] == 9064 / (4 * p)
    assert a["io_source"] == "darshan" and a["bb"] == 10 ** 9 and a["cpu"] == 3 * 3600 * G   # bb, compute kept
    assert b["io_stage_in"] == 2 * 10000 / 2 and b["io_stage_out"] == 2 * 348 / 2   # both logs summed, 1 phase
    assert not any(k.startswith("io_") for k in c)
    assert [j["profile"] for j in w["jobs"]] == ["a", "b", "c"]


def test_a_shared_profile_is_copied_for_the_job(tmp_path, capsys):
    out = tmp_path / "o.json"
    assert main(["workload", "io-from-darshan", str(_workload(tmp_path, shared=True)), str(READ1), "-o",
                 str(out)]) == 0
    w = json.loads(out.read_text())
    assert [j["profile"] for j in w["jobs"]] == ["a", "a_io_71317", "c"]
    assert "io_stage_in" not in w["profiles"]["a"] and w["profiles"]["a_io_71317"]["io_stage_in"] == 5000


@pytest.mark.parametrize("make, reason", [
    (lambda p: p.write_bytes(IOR.read_bytes()[:800]), "truncated or corrupt"),
    (lambda p: p.write_text("not a log"), "PyDarshan cannot read it"),
    (None, "file not found"),
])
def test_bad_logs_are_one_line_errors(tmp_path, capsys, make, reason):
    bad = tmp_path / "bad.darshan"
    if make:
        make(bad)
    with pytest.raises(InputError) as exc:
        read_logs([READ1, bad])
    assert exc.value.source == str(bad) and reason in str(exc.value)
    assert main(["workload", "io-from-darshan", str(_workload(tmp_path)), str(READ1), str(bad), "-o",
                 str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and err.startswith(f"burstbuffer: {bad}: log: ") and reason in err
    assert not (tmp_path / "o.json").exists()


def test_bad_io_field_is_a_workload_error(tmp_path):
    from burstbuffer.workloads.batsim_json import load_workload
    w = json.loads(_workload(tmp_path).read_text())
    w["profiles"]["a"]["io_stage_in"] = "lots"
    (tmp_path / "x.json").write_text(json.dumps(w))
    with pytest.raises(InputError, match="profile a: field 'io_stage_in' must be a number >= 0"):
        load_workload(tmp_path / "x.json")


def test_io_aware_model_moves_the_profiles_volumes():
    """The io-aware model's sub-jobs carry the profile's io_* bytes per node instead of bb, 0.5 bb, bb (Driver:
    4 compute nodes, 2 per BB node, test_io_model)."""
    d = Driver(cpu=2 * 3600 * G, bb=2 * G)
    d.ex.profiles["w0"]["p"].update(io_stage_in=1000.0, io_checkpoint=300.0, io_stage_out=50.5)
    d.go()
    assert sorted(j["profile_data"]["nb_bytes"] for j in d.running.values()) == [2000, 2000]   # 2 nodes × 1000
    for s in sorted(d.running):
        d.complete(s, 1.0)
    (c1,) = d.running
    d.complete(c1, 7201.0)
    assert [j["profile_data"]["bytes_to_write"] for j in d.running.values()] == [300, 300]      # checkpoint
    for s in sorted(d.running):
        d.complete(s, 7202.0)
    drains = [s for s, j in d.running.items() if j["profile_data"]["type"] == "data_staging"]
    assert [d.running[s]["profile_data"]["nb_bytes"] for s in drains] == [600, 600]
    (c2,) = [s for s in d.running if s not in drains]
    for s in drains:
        d.complete(s, 7300.0)
    d.complete(c2, 14402.0)
    assert sorted(j["profile_data"]["nb_bytes"] for j in d.running.values()) == [101, 101]     # round(2 × 50.5)
