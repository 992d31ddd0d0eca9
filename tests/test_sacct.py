"""`burstbuffer workload from-sacct` (issue 29, docs/inputs-traces.md): Slurm accounting → Batsim workload."""
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from burstbuffer.cli import main
from burstbuffer.errors import InputError
from burstbuffer.workloads.sacct import parse_bb_tres, parse_duration, read_sacct

from .conftest import PLATFORM

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

ROOT = Path(__file__).resolve().parents[1]
KTH = ROOT / "workloads" / "KTH-SP2-1996-2.1-cln.swf.gz"
GiB, MiB = 1024 ** 3, 1024 ** 2

HEADER = "JobIDRaw|Submit|Start|End|TimelimitRaw|NNodes|NCPUS|State|ReqTRES|AllocTRES"
DUMP = """JobIDRaw|Submit|Start|End|TimelimitRaw|NNodes|NCPUS|State|ReqTRES|AllocTRES
101|2026-01-05T10:00:00|2026-01-05T10:05:00|2026-01-05T11:05:00|120|4|128|COMPLETED|billing=128,bb/datawarp=400G,cpu=128,mem=200G,node=4|cpu=128,node=4
101.batch|2026-01-05T10:05:00|2026-01-05T10:05:00|2026-01-05T11:05:00||1|32|COMPLETED||cpu=32,node=1
102|2026-01-05T09:59:00|2026-01-05T10:01:00|2026-01-05T10:31:00|60|2|64|TIMEOUT|cpu=64,node=2|cpu=64,node=2,bb/cray=1T
103|2026-01-05T10:10:00|Unknown|Unknown|30|1|32|CANCELLED by 1000|cpu=32,node=1|
104|2026-01-05T10:12:00|2026-01-05T10:20:00|2026-01-05T10:20:00|30|1|32|CANCELLED by 1000|cpu=32,node=1|
105|2026-01-05T10:13:00|2026-01-05T10:30:00|Unknown|1-00:00:00|8|256|RUNNING|cpu=256,node=8|cpu=256,node=8
106|2026-01-05T10:14:00|2026-01-05T10:15:00|2026-01-05T12:00:00|180|3|96|FAILED|cpu=96,node=3|cpu=96,node=3
107|2026-01-05T10:15:00|2026-01-05T10:16:00|2026-01-05T10:17:00|UNLIMITED|1|32|COMPLETED|cpu=32,node=1|cpu=32,node=1
"""


def _write(tmp_path, text, name="jobs.sacct"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _cli(argv):
    return subprocess.run([sys.executable, "-m", "burstbuffer.cli", *argv], capture_output=True, text=True,
                          timeout=120)


def test_hand_written_dump_fields_drops_and_bb_sources(tmp_path):
    tr = read_sacct(_write(tmp_path, DUMP))
    assert [r.job_number for r in tr.records] == [102, 101, 106]        # sorted by submit time
    r102, r101, r106 = tr.records
    assert (r102.submit_time, r101.submit_time, r106.submit_time) == (1, 61, 901)   # first submit at t = 1
    assert (r101.wait_time, r101.run_time, r101.requested_time, r101.requested_processors) == (300, 3600, 7200, 4)
    assert (r102.run_time, r102.requested_time, r102.requested_processors) == (1800, 3600, 2)
    assert r101.status == 1 and r102.status == 0
    assert tr.dropped == {"job step rows (use sacct -X)": 1, "cancelled before start": 2,
                          "not ended (RUNNING)": 1, "no time limit (UNLIMITED)": 1}
    # 400 GiB over 4 nodes from ReqTRES; 1 TiB over 2 nodes from AllocTRES (no bb in ReqTRES); 106 has none
    assert tr.bb == {101: 100 * GiB, 102: 512 * GiB}
    assert tr.bb_source == {101: "ReqTRES", 102: "AllocTRES"}


def test_slurm_durations_and_bb_tres_units():
    assert parse_duration("1-02:03:04") == 86400 + 7384 and parse_duration("90") == 5400
    assert parse_duration("05:30") == 330 and parse_duration("2-12") == 2.5 * 86400
    assert parse_duration("UNLIMITED") is None and parse_duration("Partition_Limit") is None
    assert parse_bb_tres("cpu=4,mem=8G") is None
    assert parse_bb_tres("bb/datawarp=2048") == 2048 * MiB           # a bare count is MB (Slurm's unit)
    assert parse_bb_tres("bb/a=1.5G,bb/b=512M,cpu=2") == int(1.5 * GiB) + 512 * MiB
    with pytest.raises(ValueError):
        parse_bb_tres("bb/datawarp=lots")


def test_cores_per_node_rounds_up(tmp_path):
    tr = read_sacct(_write(tmp_path, DUMP), cores_per_node=48)
    assert {r.job_number: r.requested_processors for r in tr.records} == {102: 2, 101: 3, 106: 2}
    assert tr.bb[101] == -(-400 * GiB // 3)                           # per node of the nodes it gets


def test_workload_records_the_bb_source_and_uses_the_model_otherwise(tmp_path, capsys):
    out = tmp_path / "w.json"
    assert main(["workload", "from-sacct", str(_write(tmp_path, DUMP)), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "ignored 5" in text and "cancelled before start: 2" in text and "2 jobs of the trace ask for more BB" in text
    w = json.loads(out.read_text())
    assert [j["id"] for j in w["jobs"]] == [102, 101, 106]
    assert [j["walltime"] for j in w["jobs"]] == [3600, 7200, 10800]
    p = w["profiles"]
    assert p["101"]["bb"] == 100 * GiB and p["101"]["bb_source"] == "ReqTRES"
    assert p["102"]["bb_source"] == "AllocTRES" and p["106"]["bb_source"] == "model"
    assert 100 * 10 ** 6 <= p["106"]["bb"] <= 40 * 10 ** 9              # the model's clip
    # compute from the given request by the model's formula: 1 Gflop/s × max(run − 40 bb / 1250 MB/s, 5 % run)
    assert p["101"]["cpu"] == round(1e9 * max(3600 - 40 * 100 * GiB / 1.25e9, 0.05 * 3600))


def test_csv_export_with_a_column_map(tmp_path):
    csv_text = ("id,submitted,started,ended,limit,n,state,tres\n"
                "7,1000,1010,1610,15,2,COMPLETED,\"cpu=2,bb/lua=3G\"\n"
                "8,1005,1700,2300,00:20:00,1,FAILED,cpu=1\n")
    p = _write(tmp_path, csv_text, "export.csv")
    cols = "job_id=id,submit=submitted,start=started,end=ended,timelimit=limit,nodes=n,state=state,req_tres=tres"
    tr = read_sacct(p, columns=dict(kv.split("=") for kv in cols.split(",")))
    assert [(r.job_number, r.submit_time, r.run_time, r.requested_time) for r in tr.records] == \
        [(7, 1, 600, 900), (8, 6, 600, 1200)]
    assert tr.bb == {7: 3 * GiB // 2}
    out = tmp_path / "w.json"
    r = _cli(["workload", "from-sacct", str(p), "-o", str(out), "--columns", cols])
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["profiles"]["7"]["bb_source"] == "ReqTRES"


@pytest.mark.parametrize("edit, item, reason", [
    (lambda t: t.replace("|COMPLETED|billing", "|COMPLETED|extra|billing", 1), "line 2", "expected 10 '|'-separated"),
    (lambda t: t.replace("2026-01-05T09:59:00", "yesterday"), "line 4", "submit is not a time"),
    (lambda t: t.replace("|120|4|", "|2 hours|4|"), "line 2", "time limit is not a Slurm duration"),
    (lambda t: t.replace("\n106|", "\n106_3|"), "line 8", "is not an integer"),
    (lambda t: t.replace("\n106|", "\n101|"), "line 8", "appears twice"),
    (lambda t: t.replace("|3|96|FAILED", "|three|96|FAILED"), "line 8", "nodes is not an integer"),
    (lambda t: t.replace("bb/datawarp=400G", "bb/datawarp=400GB"), "line 2", "burst-buffer TRES is not a size"),
    (lambda t: t.replace("2026-01-05T10:15:00|2026-01-05T12:00:00", "2026-01-05T10:15:00|2026-01-05T10:00:00"),
     "line 8", "times out of order"),
    (lambda t: t.replace("|2026-01-05T12:00:00|", "|99999999999999999999|"), "line 8", "end is not a time"),
    (lambda t: t.replace("|2026-01-05T12:00:00|", "|99999999999|"), "line 8", "field run_time is out of range"),
    (lambda t: t.replace("JobIDRaw|", "Id|", 1), "header", "no column for job_id"),
    (lambda t: "", "file", "empty"),
])
def test_malformed_dumps_are_one_line_errors(tmp_path, capsys, edit, item, reason):
    p = _write(tmp_path, edit(DUMP))
    with pytest.raises(InputError) as exc:
        read_sacct(p)
    assert exc.value.item == item and reason in exc.value.reason, str(exc.value)
    assert main(["workload", "from-sacct", str(p), "-o", str(tmp_path / "w.json")]) == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and err.startswith(f"burstbuffer: {p}: {item}: ") and reason in err
    assert not (tmp_path / "w.json").exists()


def test_missing_file_and_bad_column_map_are_one_line_errors(tmp_path):
    r = _cli(["workload", "from-sacct", str(tmp_path / "none.txt"), "-o", str(tmp_path / "w.json")])
    assert r.returncode == 2 and "none.txt" in r.stderr and r.stderr.strip().count("\n") == 0
    r = _cli(["workload", "from-sacct", str(_write(tmp_path, DUMP)), "-o", str(tmp_path / "w.json"),
              "--columns", "walltime=Timelimit"])
    assert r.returncode == 2 and "--columns: walltime: unknown key" in r.stderr


def _kth_dump(tmp_path, jobs, **kw):
    sys.path.insert(0, str(ROOT / "tests" / "data"))
    try:
        from swf_to_sacct import sacct_lines
    finally:
        sys.path.pop(0)
    p = tmp_path / "kth.sacct"
    p.write_text("\n".join(sacct_lines(KTH, jobs=jobs, **kw)) + "\n")
    return p


def test_kth_dump_matches_the_swf_path(tmp_path, capsys):
    """The same 400 KTH jobs read from SWF and from the generated sacct dump (tests/data/swf_to_sacct.py, with
    its .batch step rows): the same jobs, and every job without a bb TRES gets the SWF path's model values."""
    dump = _kth_dump(tmp_path, 400, steps=True)
    assert main(["workload", "from-sacct", str(dump), "-o", str(tmp_path / "s.json")]) == 0
    assert "job step rows (use sacct -X): 400" in capsys.readouterr().out
    assert main(["workload", "from-swf", str(KTH), "--jobs", "400", "-o", str(tmp_path / "w.json")]) == 0
    s, w = (json.loads((tmp_path / n).read_text()) for n in ("s.json", "w.json"))
    assert [(j["id"], j["subtime"], j["res"]) for j in s["jobs"]] == [(j["id"], j["subtime"], j["res"]) for j in w["jobs"]]
    # Slurm limits are whole minutes: the dump rounds each requested time up
    assert all(a["walltime"] == -(-b["walltime"] // 60) * 60 for a, b in zip(s["jobs"], w["jobs"]))
    given = same = 0
    for a, b in zip(s["jobs"], w["jobs"]):
        pa, pb = s["profiles"][a["profile"]], w["profiles"][b["profile"]]
        if a["id"] % 5 == 0:
            given += 1
            assert pa["bb_source"] == "ReqTRES" and pa["bb"] == (a["id"] % 7 + 1) * GiB
        else:
            assert pa["bb_source"] == "model"
            if (a["walltime"] <= 120) == (b["walltime"] <= 120):
                same += 1
                assert (pa["bb"], pa["cpu"], pa["com"]) == (pb["bb"], pb["cpu"], pb["com"])
        assert pa["com"] == pb["com"]
    assert given == 80 and same > 300


def test_kth_dump_rescaled_as_swf(tmp_path):
    """--width/--speedup/--days apply to the sacct records as to SWF's (one shared conversion)."""
    dump = _kth_dump(tmp_path, 300, bb_every=0)
    opts = ["--width", "2", "--speedup", "4", "--days", "0.25"]
    assert main(["workload", "from-sacct", str(dump), "-o", str(tmp_path / "s.json"), *opts]) == 0
    assert main(["workload", "from-swf", str(KTH), "--jobs", "300", "-o", str(tmp_path / "w.json"), *opts]) == 0
    s, w = (json.loads((tmp_path / n).read_text()) for n in ("s.json", "w.json"))
    assert 0 < len(s["jobs"]) == len(w["jobs"]) < 300
    assert [(j["id"], j["subtime"], j["res"]) for j in s["jobs"]] == [(j["id"], j["subtime"], j["res"]) for j in w["jobs"]]
    assert max(j["subtime"] for j in s["jobs"]) <= 0.25 * 86400 + 1


def test_run_on_a_sacct_derived_workload(tmp_path):
    """End to end: `burstbuffer run --workload` on a workload converted from a sacct dump (30 KTH jobs, a fifth
    with the request of their bb TRES), io-aware model, sjf-bb."""
    dump = _kth_dump(tmp_path, 30)
    wl = tmp_path / "w.json"
    r = _cli(["workload", "from-sacct", str(dump), "-o", str(wl), "--platform", str(PLATFORM)])
    assert r.returncode == 0, r.stderr
    r = _cli(["run", "--policy", "sjf-bb", "--workload", str(wl), "--platform", str(PLATFORM),
              "--output", str(tmp_path / "out"), "-q"])
    assert r.returncode == 0, r.stderr
    jobs = pd.read_csv(tmp_path / "out" / "jobs.csv")
    assert len(jobs) == 30 and (jobs.final_state == "COMPLETED_SUCCESSFULLY").all()
    prof = json.loads(wl.read_text())["profiles"]
    assert {int(j): int(b) for j, b in zip(jobs.job_id, jobs.bb_per_node)} == \
        {int(k): v["bb"] for k, v in prof.items()}
