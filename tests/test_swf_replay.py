"""`workload from-swf` for a trace user (docs/inputs.md): the machine size from the SWF header, a trace not in
submit order sorted stably, and Batsim's delay profiles replaying the recorded run times."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from burstbuffer.cli import main
from burstbuffer.workloads.convert import convert_records, delay_of
from burstbuffer.workloads.swf import SWFRecord, iter_swf, select_records

DATA = Path(__file__).parent / "data" / "swf"
NASA = DATA / "NASA-iPSC-1993-3.1-cln-first60.swf"          # header MaxNodes: 128, MaxProcs: 128
UNSORTED = DATA / "evalys-easy_mediumWL_smallPF-first40.swf"  # no header, records not in submit order


def convert(tmp_path, capsys, trace, *extra) -> tuple[dict, str]:
    out = tmp_path / "w.json"
    assert main(["workload", "from-swf", str(trace), "-o", str(out), *extra]) == 0
    return json.loads(out.read_text()), capsys.readouterr().out


def test_machine_size_from_the_header(tmp_path, capsys):
    """NASA iPSC's header says MaxProcs: 128: the workload gets nb_res 128 and the summary says why; --nb-res
    wins over the header; a trace without a size header keeps the default and says so."""
    wl, out = convert(tmp_path, capsys, NASA, "--walltime-factor", "2")
    assert wl["nb_res"] == 128 and "nb_res 128 (from the trace's header MaxProcs" in out
    wl, out = convert(tmp_path, capsys, NASA, "--walltime-factor", "2", "--nb-res", "64")
    assert wl["nb_res"] == 64 and "header" not in out.split("platform:")[1].splitlines()[0]
    wl, out = convert(tmp_path, capsys, UNSORTED)
    assert wl["nb_res"] == 96 and "the trace's header gives no MaxProcs nor MaxNodes" in out


def test_unsorted_trace_is_sorted_and_said(tmp_path, capsys):
    """evalys' easy_mediumWL_smallPF.swf (first 40 lines) lists jobs 0, 2050, 4100, 6150, 10, … : converted
    (not refused), every record kept once, submission times non-decreasing from 0, and the summary counts the
    records found before the one above them (9: jobs 10, 20, … each submitted before 6150's predecessor row)."""
    wl, out = convert(tmp_path, capsys, UNSORTED)
    recs = list(iter_swf(UNSORTED))
    assert sorted(j["id"] for j in wl["jobs"]) == sorted(r.job_number for r in recs)
    subs = [j["subtime"] for j in wl["jobs"]]
    assert subs == sorted(subs) and subs[0] == 0
    first = min(r.submit_time for r in recs)
    assert {j["id"]: j["subtime"] for j in wl["jobs"]} == {r.job_number: r.submit_time - first for r in recs}
    n = sum(b.submit_time < a.submit_time for a, b in zip(recs, recs[1:]))
    assert n == 9 and f"not in submit order ({n} records submitted before the one above them)" in out


def rec(job: int, submit: float, run: float = 10.0) -> SWFRecord:
    return SWFRecord(job, submit, -1, run, 1, -1, -1, 1, 100, -1, 1, -1, -1, -1, -1, -1, -1, -1)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=30))
def test_sorting_is_stable_by_submit_time(submits):
    """Any order of submit times (ties included): the kept records come out sorted by submit time, records
    submitted at the same time in their file order, shifted so the first is at 0."""
    recs = [rec(i + 1, s) for i, s in enumerate(submits)]
    sel = select_records(recs)
    want = sorted(recs, key=lambda r: r.submit_time)          # Python's sort is stable
    assert [r.job_number for r in sel.kept] == [r.job_number for r in want]
    assert sel.subtimes == [r.submit_time - want[0].submit_time for r in want]
    assert sel.out_of_order == sum(b < a for a, b in zip(submits, submits[1:]))


def test_delay_profiles_are_the_recorded_run_times(tmp_path, capsys):
    """--profiles delay: one Batsim delay profile per job, its delay the record's run time exactly (field 4)
    and the model's BB request kept; --delay-grain 1 gives Batsim's converter's floor(run time) + 1."""
    recs = {r.job_number: r for r in iter_swf(NASA)}
    wl, _ = convert(tmp_path, capsys, NASA, "--walltime-factor", "2", "--profiles", "delay")
    for j in wl["jobs"]:
        p = wl["profiles"][j["profile"]]
        assert p["type"] == "delay" and p["delay"] == recs[j["id"]].run_time and p["bb"] >= 0
    wl, _ = convert(tmp_path, capsys, NASA, "--walltime-factor", "2", "--profiles", "delay", "--delay-grain", "1")
    assert all(wl["profiles"][j["profile"]]["delay"] == int(recs[j["id"]].run_time) + 1 for j in wl["jobs"])
    assert main(["workload", "from-swf", str(NASA), "-o", str(tmp_path / "x.json"), "--delay-grain", "1"]) == 2
    assert "--delay-grain: 1.0: rounds delay profiles: add --profiles delay" in capsys.readouterr().err


def test_zero_run_time_is_counted_not_written_as_a_delay():
    """A delay must be > 0 (Batsim): a record of run time 0 is ignored and counted; the next one is at 0."""
    conv = convert_records([rec(1, 5, run=0), rec(2, 7, run=3.5)], name="t", profile_type="delay")
    assert [j.id for j in conv.workload.jobs] == [2] and conv.workload.jobs[0].subtime == 0
    assert conv.selection.ignored["run time 0 (a delay profile needs > 0)"] == 1
    assert conv.workload.profiles["2"]["delay"] == 3.5 and delay_of(3.5, 2.0) == 4


@pytest.mark.slow
def test_replay_under_alloc_only_runs_the_recorded_times(tmp_path, capsys):
    """Delay profiles run under --model alloc-only: every job that ran lasted its recorded run time exactly in
    the simulator's Batsim table (the jobs asking more than the default 96 nodes are rejected, counted)."""
    wl, _ = convert(tmp_path, capsys, NASA, "--walltime-factor", "2", "--profiles", "delay")
    assert main(["run", "--workload", str(tmp_path / "w.json"), "--jobs", "12", "--model", "alloc-only",
                 "--policy", "fcfs-easy", "--output", str(tmp_path / "out"), "-q"]) == 0
    rows = list(csv.DictReader(open(tmp_path / "out" / "batsim_jobs.csv")))
    ran = [r for r in rows if r["final_state"] == "COMPLETED_SUCCESSFULLY"]
    assert len(rows) == 12 and ran
    recs = {r.job_number: r for r in iter_swf(NASA)}
    for r in ran:
        assert float(r["execution_time"]) == pytest.approx(recs[int(r["job_id"])].run_time, abs=1e-6)
