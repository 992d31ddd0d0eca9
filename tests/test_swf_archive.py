"""SWF read as the Parallel Workloads Archive defines it (docs/workload.md §2): a real archive trace with missing
fields (an excerpt of NASA-iPSC-1993-3.1-cln, tests/data/README.md) beside the bundled KTH one."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from burstbuffer.cli import main
from burstbuffer.workloads import convert_records, read_swf
from burstbuffer.workloads.swf import parse_swf_line, select_records

ROOT = Path(__file__).resolve().parents[1]
NASA = ROOT / "tests" / "data" / "swf" / "NASA-iPSC-1993-3.1-cln-first60.swf"
KTH = ROOT / "workloads" / "KTH-SP2-1996-2.1-cln.swf.gz"


def _rec(line):
    return parse_swf_line(line, "t.swf", 1)


def test_nasa_without_requested_times_is_one_line_saying_what_to_do(tmp_path):
    """NASA iPSC records no requested time nor requested processors (-1): without a walltime factor every job
    lacks a walltime, and the command says which option supplies one; no output file is written."""
    out = tmp_path / "n.json"
    r = subprocess.run([sys.executable, "-m", "burstbuffer", "workload", "from-swf", str(NASA), "--jobs", "50",
                        "-o", str(out)], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "requested time missing: 50" in lines[0] and "--walltime-factor" in lines[0]
    assert not out.exists()


def test_nasa_with_a_walltime_factor_keeps_every_job_as_the_trace_says(tmp_path, capsys):
    """--walltime-factor 2 (Batsim's default): walltime = 2 x run time, processors = the allocated ones, the
    first job (submitted at t = 0 in the trace) kept at t = 0; the trace's times kept as they are."""
    out = tmp_path / "n.json"
    assert main(["workload", "from-swf", str(NASA), "--jobs", "50", "--walltime-factor", "2", "-o", str(out)]) == 0
    assert "kept 50 of 50 records (none ignored)" in capsys.readouterr().out
    jobs = json.loads(out.read_text())["jobs"]
    # the trace's first lines: 1 0 -1 1451 128 ..., 2 1460 -1 3726 128 ..., 57 25574 -1 10 1 ...
    assert (jobs[0]["id"], jobs[0]["subtime"], jobs[0]["walltime"], jobs[0]["res"]) == (1, 0, 2902, 128)
    assert (jobs[1]["id"], jobs[1]["subtime"], jobs[1]["walltime"], jobs[1]["res"]) == (2, 1460, 7452, 128)
    assert (jobs[5]["id"], jobs[5]["subtime"], jobs[5]["walltime"], jobs[5]["res"]) == (57, 25574, 20, 1)
    recs = {r.job_number: r for r in read_swf(NASA)}
    for j in jobs:
        r = recs[j["id"]]
        assert j["subtime"] == r.submit_time and j["walltime"] == 2 * r.run_time
        assert j["res"] == r.allocated_processors


def test_zero_is_a_time_and_minus_one_is_missing():
    """Archive rule: a job submitted at t = 0 and a job of run time 0 are jobs; -1 fields are missing. The
    artifact rule drops both and shifts the first kept job to t = 1."""
    lines = ["1 0 5 100 4 -1 -1 4 600 -1 1 1 1 -1 -1 -1 -1 -1",       # submitted at 0
             "2 10 5 0 2 -1 -1 2 600 -1 0 1 1 -1 -1 -1 -1 -1",        # ran 0 s
             "3 20 5 50 8 -1 -1 -1 600 -1 1 1 1 -1 -1 -1 -1 -1",      # requested processors missing: allocated 8
             "4 -1 5 50 8 -1 -1 8 600 -1 1 1 1 -1 -1 -1 -1 -1",       # submit time missing
             "5 30 5 -1 8 -1 -1 8 600 -1 1 1 1 -1 -1 -1 -1 -1",       # run time missing
             "6 40 5 50 -1 -1 -1 -1 600 -1 1 1 1 -1 -1 -1 -1 -1",     # no processors at all
             "7 50 5 100 2 -1 -1 2 -1 -1 1 1 1 -1 -1 -1 -1 -1"]       # requested time missing
    recs = [_rec(x) for x in lines]
    a = select_records(recs)
    assert [r.job_number for r in a.kept] == [1, 2, 3]
    assert a.subtimes == [0, 10, 20] and a.procs == [4, 2, 8] and a.walltimes == [600, 600, 600]
    assert dict(a.ignored) == {"submit time missing": 1, "run time missing": 1, "requested time missing": 1,
                               "processors missing (requested and allocated)": 1}
    assert "--walltime-factor" in a.summary()
    f = select_records(recs, walltime_factor=3)
    assert [r.job_number for r in f.kept] == [1, 2, 3, 7] and f.walltimes == [600, 600, 600, 300]
    art = select_records(recs, rule="artifact")
    assert art.kept == []
    art = select_records(recs[:3] + [_rec("8 60 5 40 2 -1 -1 2 600 -1 1 1 1 -1 -1 -1 -1 -1")], rule="artifact")
    assert [r.job_number for r in art.kept] == [8] and art.subtimes == [1]
    assert dict(art.ignored) == {"submit time <= 0": 1, "run time <= 0": 1, "requested processors <= 0": 1}
    with pytest.raises(ValueError):
        select_records(recs, rule="artifact", walltime_factor=2)


def test_kth_archive_and_artifact_rules():
    """The bundled KTH trace's first 5000 records: the artifact's rule (docs/workload.md §2, what the studies
    use) drops the 3 jobs of run time 0 (job numbers 2466, 4360, 4866) and starts at t = 1; the archive's keeps
    them and starts at t = 0, with the same walltimes and sizes. Record 27313 has no processor count at all:
    both rules ignore it."""
    recs = read_swf(KTH)
    art = convert_records(recs, name="k", seed=0, rule="artifact", max_records=5000)
    arc = convert_records(recs, name="k", seed=0, max_records=5000)
    assert len(art.workload.jobs) == 4997 and art.workload.jobs[0].subtime == 1
    assert len(arc.workload.jobs) == 5000 and arc.workload.jobs[0].subtime == 0
    assert {j.id for j in arc.workload.jobs} - {j.id for j in art.workload.jobs} == {2466, 4360, 4866}
    assert not arc.selection.ignored and dict(art.selection.ignored) == {"run time <= 0": 3}
    odd = [r for r in recs if r.job_number == 27313]
    assert dict(select_records(odd).ignored) == {"processors missing (requested and allocated)": 1}
    assert dict(select_records(odd, rule="artifact").ignored) == {"requested processors <= 0": 1}
    a, b = art.workload.jobs, [j for j in arc.workload.jobs if j.id in {x.id for x in art.workload.jobs}]
    assert [(j.id, j.subtime - 1, j.walltime, j.res) for j in a] == [(j.id, j.subtime, j.walltime, j.res) for j in b]


def test_cli_options_conflict_and_bundled_names(tmp_path, capsys):
    """--artifact-selection takes the requested time: with --walltime-factor it is a one-line error; the
    bundled trace is found by its bare file name."""
    assert main(["workload", "from-swf", str(NASA), "--walltime-factor", "2", "--artifact-selection",
                 "-o", str(tmp_path / "x.json")]) == 2
    assert "--walltime-factor" in capsys.readouterr().err and not (tmp_path / "x.json").exists()
    out = tmp_path / "k.json"
    assert main(["workload", "from-swf", "KTH-SP2-1996-2.1-cln.swf.gz", "--jobs", "20", "-o", str(out)]) == 0
    assert len(json.loads(out.read_text())["jobs"]) == 20
    capsys.readouterr()
    assert main(["workload", "from-swf", str(NASA), "--walltime-factor", "2", "--given-walltime-only", "-o",
                 str(tmp_path / "y.json")]) == 2
    assert "not allowed with" in capsys.readouterr().err
