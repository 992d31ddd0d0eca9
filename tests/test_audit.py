"""The auditor (`burstbuffer.audit`, docs/audit.md) on small hand-checked run folders: each check passes on a
feasible schedule and fails, naming the job, the time, the resource and the holders, on one breach of it;
`burstbuffer check` prints the table and exits 1 (0 when feasible, 2 on a folder it cannot read)."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from burstbuffer import cli
from burstbuffer.audit import AuditError, audit_run

GB = 10 ** 9
COLUMNS = ["job_id", "submission_time", "requested_number_of_resources", "requested_time", "final_state",
           "starting_time", "finish_time", "allocated_resources", "metadata", "bb_allocation"]


def job(jid, sub, start, end, procs, bb="", state="COMPLETED_SUCCESSFULLY", wall=100.0, reason="", **more):
    row = {"job_id": str(jid), "submission_time": f"{sub:.6f}", "requested_number_of_resources": 1,
           "requested_time": f"{wall:.6f}", "final_state": state,
           "starting_time": "" if start is None else f"{start:.6f}", "finish_time": "" if end is None else f"{end:.6f}",
           "allocated_resources": procs, "metadata": reason, "bb_allocation": bb}
    row.update(more)
    return row


def write_run(tmp_path: Path, rows, *, capacity=None, workload_ids=None, holds=None, three_phase=False) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    cols = COLUMNS + (["nodes_start", "nodes_end"] if three_phase else [])
    with (run / "jobs.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, restval="")
        w.writeheader()
        w.writerows(rows)
    info = {"policy": "test", "model": "three-phase" if three_phase else "io-aware", "compute": "0-3",
            "bb_capacity": {str(k): v for k, v in (capacity or {4: 10 * GB, 5: 10 * GB}).items()},
            "names": {"4": "bb_a", "5": "bb_b"}}
    if workload_ids is not None:
        wl = run / "w.json"
        wl.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": i, "subtime": 0, "res": 1, "profile": "p"}
                                                          for i in workload_ids], "profiles": {"p": {}}}))
        info["workload"] = "w.json"
    (run / "run.json").write_text(json.dumps(info))
    if holds is not None:
        with (run / "bb_holds.csv").open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["job_id", "time", "phase", "bb_allocation"])
            w.writerows(holds)
    return run


def status(report) -> dict:
    return dict(zip(report.checks["check"], report.checks["status"]))


FEASIBLE = [job(1, 0, 0, 10, "0-1", "4:6000000000"), job(2, 0, 10, 20, "0-1", "4:6000000000"),
            job(3, 5, 5, 30, "2-3", "4:4000000000 5:10000000000"),
            job(4, 0, None, None, "", state="REJECTED", reason="asks for 9 processors, the platform has 4")]


def test_a_feasible_schedule_passes_every_check(tmp_path):
    r = audit_run(write_run(tmp_path, FEASIBLE, workload_ids=[1, 2, 3, 4]))
    assert r.ok and r.violations == []
    assert status(r) == {"processors": "ok", "burst-buffer": "ok", "accounted": "ok", "submission": "ok",
                         "walltime": "ok", "easy-reservation": "skipped"}


def test_two_jobs_on_one_processor_at_once(tmp_path):
    rows = FEASIBLE[:1] + [job(2, 0, 9.5, 20, "1-2")] + FEASIBLE[2:]
    r = audit_run(write_run(tmp_path, rows))
    assert not r.ok and status(r)["processors"] == "FAIL"
    first = r.violations[0]
    # job 2 takes processor 1 at 9.5 while job 1 holds it until 10; processor 2 is job 3's from 5
    assert (first.check, first.job, first.time, first.resource, first.holders) == \
        ("processors", "2", 9.5, "processor 1", ("1", "2"))
    assert [v.resource for v in r.violations] == ["processor 1", "processor 2"]
    assert r.checks.set_index("check").loc["processors", "violations"] == 2


def test_a_burst_buffer_node_over_its_capacity(tmp_path):
    rows = FEASIBLE[:2] + [job(3, 5, 5, 30, "2-3", "4:4000000001 5:10000000000")] + FEASIBLE[3:]
    r = audit_run(write_run(tmp_path, rows))
    assert status(r)["burst-buffer"] == "FAIL"
    v = r.violations[0]
    # job 1 holds 6 GB on node 4 from 0 to 10; job 3 comes at 5 with 4 GB + 1 B: 1 B too many, until 10
    assert (v.job, v.time, v.resource, v.holders) == ("3", 5.0, "bb 4 (bb_a)", ("1", "3"))
    assert v.amount.startswith("10.00 GB > 10.00 GB")
    # at 10 job 1 leaves and job 2 takes the same 6 GB: still over (releases first, then takes)
    assert [x.time for x in r.violations] == [5.0, 10.0]


def test_bytes_on_a_resource_that_is_not_a_burst_buffer(tmp_path):
    r = audit_run(write_run(tmp_path, [job(1, 0, 0, 10, "0", "2:5")]))
    assert status(r)["burst-buffer"] == "FAIL"
    assert "not a burst-buffer node" in r.violations[0].detail


def test_phase_holds_replace_the_one_allocation(tmp_path):
    """A three-phase job holding less in its stage-out than while it ran (cerberus as written): jobs.csv's one
    allocation, held from start to finish, would over-fill node 4 at 20; its phases (bb_holds.csv) do not."""
    rows = [job(1, 0, 0, 40, "0", "4:8000000000", nodes_start="2.000000", nodes_end="20.000000"),
            job(2, 0, 20, 50, "1", "4:5000000000", nodes_start="25.000000", nodes_end="30.000000")]
    holds = [(1, "0.000000", "stage-in", "4:3000000000"), (1, "2.000000", "run", "4:8000000000"),
             (1, "20.000000", "computed", ""), (1, "20.000000", "stage-out", "4:4000000000"),
             (2, "20.000000", "stage-in", "4:5000000000"), (2, "25.000000", "run", "4:5000000000")]
    run = write_run(tmp_path, rows, three_phase=True)
    assert status(audit_run(run))["burst-buffer"] == "FAIL"          # 8 + 5 GB > 10 GB at 20
    (run / "bb_holds.csv").unlink(missing_ok=True)
    with (run / "bb_holds.csv").open("w", newline="") as f:
        csv.writer(f).writerows([["job_id", "time", "phase", "bb_allocation"], *holds])
    assert audit_run(run).ok                                        # 4 + 5 GB
    # and its stage-out may not take more than is free
    holds[3] = (1, "20.000000", "stage-out", "4:5000000001")
    with (run / "bb_holds.csv").open("w", newline="") as f:
        csv.writer(f).writerows([["job_id", "time", "phase", "bb_allocation"], *holds])
    r = audit_run(run)
    assert status(r)["burst-buffer"] == "FAIL" and r.violations[0].time == 20.0


def test_three_phase_processors_are_held_from_the_nodes_start_to_their_end(tmp_path):
    """Two jobs on processor 0 whose stagings overlap but whose node holds do not: feasible; overlapping
    node holds: not."""
    rows = [job(1, 0, 0, 40, "0", "", nodes_start="1.000000", nodes_end="10.000000"),
            job(2, 0, 5, 40, "0", "", nodes_start="10.000000", nodes_end="30.000000")]
    assert audit_run(write_run(tmp_path, rows, three_phase=True)).ok
    rows[1]["nodes_start"] = "9.000000"
    (tmp_path / "run" / "jobs.csv").unlink()
    import shutil
    shutil.rmtree(tmp_path / "run")
    r = audit_run(write_run(tmp_path, rows, three_phase=True))
    assert (r.violations[0].job, r.violations[0].time) == ("2", 9.0)


def test_every_submitted_job_is_accounted_for(tmp_path):
    rows = [job(1, 0, 0, 10, "0"), job(2, 0, None, None, "", state="REJECTED"),      # no reason
            job(3, 0, 0, None, "1", state="RUNNING"), job(1, 0, 10, 20, "0"), job(9, 0, 20, 30, "0")]
    r = audit_run(write_run(tmp_path, rows, workload_ids=[1, 2, 3, 4]))
    assert status(r)["accounted"] == "FAIL"
    got = {(v.job, v.detail) for v in r.violations if v.check == "accounted"}
    assert got == {("2", "rejected without a reason"),
                   ("3", "final state RUNNING: neither completed, killed nor rejected"),
                   ("1", "2 rows in jobs.csv"), ("4", "submitted, missing from jobs.csv"),
                   ("9", "in jobs.csv, not in the workload")}


def test_no_start_before_submission_and_no_overrun_unless_killed(tmp_path):
    rows = [job(1, 5, 4, 10, "0"), job(2, 0, 0, 100.5, "1", wall=100),
            job(3, 0, 0, 150, "2", wall=100, state="COMPLETED_WALLTIME_REACHED"),
            job(4, 0, 0, 100.0005, "3", wall=100)]                          # within the grace
    r = audit_run(write_run(tmp_path, rows))
    assert [(v.check, v.job) for v in r.violations] == [("submission", "1"), ("walltime", "2")]
    assert r.violations[1].amount == "0.500000 s over"


def test_easy_reservations_are_kept(tmp_path):
    run = write_run(tmp_path, [job(1, 0, 0, 50, "0-3"), job(2, 1, 50, 60, "0-3"), job(3, 2, 70, 80, "0-3")])
    with (run / "reservations.csv").open("w", newline="") as f:
        csv.writer(f).writerows([["job_id", "time", "reserved_start"], [2, "1.000000", "100.000000"],
                                 [3, "50.000000", "60.000000"], [3, "55.000000", "90.000000"]])
    r = audit_run(run)
    # job 3 became head at 50 with a reservation at 60 and started at 70; the later one at 55 does not count
    assert [(v.check, v.job, v.time) for v in r.violations] == [("easy-reservation", "3", 70.0)]


def test_check_command(tmp_path, capsys):
    good = write_run(tmp_path, FEASIBLE, workload_ids=[1, 2, 3, 4])
    assert cli.main(["check", str(good)]) == 0
    out = capsys.readouterr().out
    assert "verdict: feasible" in out and "processors" in out
    rows = FEASIBLE[:1] + [job(2, 0, 9.5, 20, "1-2")] + FEASIBLE[2:]
    bad = write_run(tmp_path / "b", rows) if (tmp_path / "b").mkdir() is None else None
    assert cli.main(["check", str(bad)]) == 1
    cap = capsys.readouterr()
    assert "processors        FAIL" in cap.out
    assert "processors: job 2 at t=9.500000 on processor 1: 2 jobs; held by jobs 1, 2" in cap.err


def test_check_refuses_a_folder_without_jobs_csv_in_one_line(tmp_path, capsys):
    assert cli.main(["check", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "jobs.csv" in err
    with pytest.raises(AuditError):
        audit_run(tmp_path)


def _phased_run(tmp_path):
    """A three-phase run with bb_holds.csv on BB node 4: job 1 holds 3 GB in its stage-in, 8 GB running, 4 GB in
    its stage-out; job 2 5 GB from t = 20 (jobs.csv: one amount each, 8 and 5 GB)."""
    rows = [job(1, 0, 0, 40, "0", "4:8000000000", nodes_start="2.000000", nodes_end="20.000000"),
            job(2, 0, 20, 50, "1", "4:5000000000", nodes_start="25.000000", nodes_end="30.000000")]
    holds = [(1, "0.000000", "stage-in", "4:3000000000"), (1, "2.000000", "run", "4:8000000000"),
             (1, "20.000000", "computed", ""), (1, "20.000000", "stage-out", "4:4000000000"),
             (2, "20.000000", "stage-in", "4:5000000000"), (2, "25.000000", "run", "4:5000000000")]
    return write_run(tmp_path, rows, three_phase=True, holds=holds)


def test_bb_occupancy_follows_the_phase_holds(tmp_path):
    """bb_occupancy.csv of a three-phase run with bb_holds.csv: what each job holds phase by phase (job 1: 3 GB,
    8 GB, then 4 GB in its stage-out beside job 2's 5 GB), not jobs.csv's one allocation from start to end."""
    from burstbuffer.metrics.bb_occupancy import write_bb_occupancy
    run = _phased_run(tmp_path)
    got = list(csv.reader(write_bb_occupancy(run).open()))
    assert got == [["time", "total", "bb_a", "bb_b"], ["0.000000", "3000000000", "3000000000", "0"],
                   ["2.000000", "8000000000", "8000000000", "0"], ["20.000000", "9000000000", "9000000000", "0"],
                   ["40.000000", "5000000000", "5000000000", "0"], ["50.000000", "0", "0", "0"]]


def test_the_run_figure_draws_the_phase_holds(tmp_path):
    """`burstbuffer plot`'s BB panel on the run above: node 4 peaks at 9 GB (job 1's 4 GB stage-out beside job
    2's 5 GB), the phases of bb_holds.csv; jobs.csv's one amount per job from start to end would draw 13 GB."""
    from burstbuffer.metrics.runplot import load_run, run_figure
    run = _phased_run(tmp_path)

    def peak(data):
        fig, ax = run_figure(data)
        line = next(a for a in ax["bb"].get_children() if getattr(a, "get_gid", lambda: None)() == "bb 4")
        return max(line.get_ydata())

    data = load_run(run)
    assert peak(data) == pytest.approx(9.0)
    data.holds = None                                    # jobs.csv alone: one amount from start to end
    assert peak(data) == pytest.approx(13.0)


def test_a_malformed_cell_is_one_line(tmp_path, capsys):
    run = write_run(tmp_path, [job(1, 0, 0, 10, "0-x")])
    with pytest.raises(AuditError, match="malformed"):
        audit_run(run)
    assert cli.main(["check", str(run)]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0


# ---------------------------------------------------------------------------------------------- simulate's audit
BATSIM = Path(__file__).parent / "data" / "batsim-4.2.1"
BATSIM_HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,"
                 "final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
                 "allocated_resources,consumed_energy,metadata")


def batsim_row(jid, start, end, procs, *, sub=0.0, state="COMPLETED_SUCCESSFULLY", wall=100.0, wl="w0"):
    t = (lambda x: "" if x is None else f"{x:.6f}")
    return (f'{jid},{wl},p,{sub:.6f},1,{wall:.6f},1,{state},{t(start)},{t(None if start is None else end - start)},'
            f'{t(end)},,,,{procs},-1.000000,""')


def write_prefix(tmp_path: Path, rows, ids) -> tuple[Path, list]:
    (tmp_path / "out_jobs.csv").write_text("\n".join([BATSIM_HEADER, *rows]) + "\n")
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": i, "subtime": 0, "res": 1, "profile": "p"} for i in ids],
                              "profiles": {"p": {"type": "delay", "delay": 1}}}))
    return tmp_path / "out", [("w0", wl)]


def test_simulate_audit_of_a_real_batsim_run_is_feasible():
    """Batsim 4.2.1's own PREFIX_jobs.csv (`run` io-aware on 10 KTH jobs, dragonfly96: compute 0-95, storage
    96-107 shared by the I/O sub-jobs of several jobs at once): every static job accounted for (rejected, their
    dynamic sub-jobs ran), no compute host double-booked."""
    from burstbuffer.audit import audit_simulation
    wls = [("w0", BATSIM / "kth-io-aware-first10.json")]
    r = audit_simulation(BATSIM / "capture10", wls, range(96))
    assert r.ok, r.violations
    assert r.verdict() == "feasible (4 checks passed: processors, accounted, submission, walltime)"
    st = dict(zip(r.checks["check"], r.checks["status"]))
    assert st["burst-buffer"] == st["easy-reservation"] == "skipped"
    assert r.checks.set_index("check").loc["accounted", "note"] == "10 jobs of 1 workload(s), 560 dynamic"
    # the storage hosts swept as processors too: the same rows fail there, and only there
    bad = audit_simulation(BATSIM / "capture10", wls, range(108))
    assert not bad.ok and all(int(v.resource.split()[1]) >= 96 for v in bad.violations)


def test_simulate_audit_two_jobs_on_one_compute_host_at_once(tmp_path):
    from burstbuffer.audit import audit_simulation
    rows = [batsim_row(1, 10, 15, "0"), batsim_row(2, 20, 23, "0-1"), batsim_row(3, 12, 19.5, "0 3")]
    prefix, wls = write_prefix(tmp_path, rows, [1, 2, 3])
    r = audit_simulation(prefix, wls, range(4))
    assert not r.ok and r.verdict() == "INFEASIBLE: processors 1"
    v = r.violations[0]
    assert (v.check, v.job, v.time, v.resource, v.holders) == ("processors", "w0!3", 12.0, "processor 0",
                                                              ("w0!1", "w0!3"))
    assert v.line() == ("processors: job w0!3 at t=12.000000 on processor 0: 2 jobs; held by jobs w0!1, w0!3")
    # host 0 a storage host (not a compute one): shared legitimately, not checked
    assert audit_simulation(prefix, wls, [1, 2, 3]).ok
    # --enable-compute-sharing: not checked, said so
    s = audit_simulation(prefix, wls, range(4), compute_sharing=True)
    assert s.ok and s.checks.set_index("check").loc["processors", "note"].startswith("not checked")


def test_simulate_audit_accounts_for_every_workload_job(tmp_path):
    from burstbuffer.audit import audit_simulation
    rows = [batsim_row(1, 10, 15, "0"), batsim_row(2, None, None, "", state="REJECTED"),
            batsim_row(4, 0, 5, "1", wl="w0%1"), batsim_row(5, 3, 4, "2", sub=3.5)]
    prefix, wls = write_prefix(tmp_path, rows, [1, 2, 3, 5])
    r = audit_simulation(prefix, wls, range(4))
    # job 3 never came back; a rejected job needs no reason (Batsim's REJECT_JOB has none); a dynamic job is
    # accepted; job 5 started 0.5 s before its submission
    assert r.verdict() == "INFEASIBLE: accounted 1, submission 1"
    assert [x.line() for x in r.violations] == [
        "accounted: job w0!3 (submitted, missing from jobs.csv)",
        "submission: job w0!5 at t=3.000000: 0.500000 s early (submitted at 3.500000)"]
    bb = r.checks.set_index("check").loc["burst-buffer", "note"]
    assert bb == "not checked: the platform declares no BB capacity"
    note = audit_simulation(prefix, wls, range(4), bb_capacity={3: GB}).checks.set_index("check").loc[
        "burst-buffer", "note"]
    assert note.startswith("not checked: the platform declares 1 BB capacities, but out_jobs.csv carries no")


@pytest.mark.parametrize("start,ok", [("481.087000", True), ("481.086990", False)])
def test_simulate_audit_ties_at_the_last_decimals(tmp_path, start, ok):
    """Batsim 4.2.1's own output (energy128notopo, mixed workload, batsched's sleeper): a job written to start
    10 µs before the 10 µs job on its hosts ends — equal times at jobs.csv's precision (docs/audit.md); 20 µs
    is an overlap."""
    from burstbuffer.audit import audit_simulation
    rows = [f'homo_no_cpu,w0,p,0.000000,4,-1.000000,1,COMPLETED_SUCCESSFULLY,481.087000,0.000010,481.087010,,,,'
            f'0-1 4-5,-1.000000,""',
            f'reach_walltime,w0,p,0.000000,4,-1.000000,1,COMPLETED_SUCCESSFULLY,{start},0.050000,481.137000,,,,'
            f'0-1 4-5,-1.000000,""']
    prefix, wls = write_prefix(tmp_path, rows, ["homo_no_cpu", "reach_walltime"])
    r = audit_simulation(prefix, wls, range(128))
    assert r.ok is ok, r.violations
    if not ok:
        assert r.violations[0].line() == ("processors: job w0!homo_no_cpu at t=481.087000 on processor 0: 2 jobs; "
                                          "held by jobs w0!homo_no_cpu, w0!reach_walltime")


def test_simulate_prints_one_verdict_line_and_fails_on_a_violation(tmp_path, capsys):
    """`simulate`'s end (`simulator.cli.audit`) on outputs edited to put two jobs on compute host 0 at once:
    exit 1, one line naming the job, the time, the host and the holders, even under -q."""
    from types import SimpleNamespace as NS
    from burstbuffer.simulator.cli import audit
    rows = [batsim_row(1, 10, 15, "0"), batsim_row(2, 12, 19.5, "0 3")]
    prefix, wls = write_prefix(tmp_path, rows, [1, 2])
    machines = NS(compute=[NS(id=i) for i in range(4)], storage=[])
    sim = NS(state=NS(cfg=NS(export_prefix=str(prefix), workloads=[str(wls[0][1])], compute_sharing=False),
                      static_names=["w0"], machines=machines))
    ns = NS(verbosity="quiet", quiet=True)
    assert audit(ns, sim, quiet=True) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["burstbuffer simulate: audit: INFEASIBLE: processors 1; first: processors: job w0!2 at "
                   "t=12.000000 on processor 0: 2 jobs; held by jobs w0!1, w0!2 (outputs kept; docs/audit.md)"]
    (tmp_path / "out_jobs.csv").write_text("\n".join([BATSIM_HEADER, rows[0], batsim_row(2, 15, 19.5, "0 3")]) + "\n")
    assert audit(NS(verbosity="information", quiet=False), sim, quiet=False) == 0
    assert capsys.readouterr().err == ("burstbuffer simulate: audit: feasible (4 checks passed: processors, "
                                       "accounted, submission, walltime)\n")
