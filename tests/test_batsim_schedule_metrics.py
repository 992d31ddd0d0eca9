"""Batsim's ``_schedule.csv`` fields computed from its ``_jobs.csv`` with Batsim 4.2.1's definitions
(`burstbuffer.metrics.batsim_csv.schedule_fields`, docs/run-outputs.md): on real Batsim 4.2.1 runs (with rejected
and killed jobs), on evalys' Batsim outputs (a 1.x layout), on a hand-checked table, and through `metrics`."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from burstbuffer.cli import main
from burstbuffer.metrics.batsim_csv import SCHEDULE_FIELDS_FROM_JOBS, read_schedule_csv, schedule_fields
from burstbuffer.metrics.tidy import read_table

DATA = Path(__file__).parent / "data"
#: real Batsim 4.2.1 runs (tests/data/README.md) and evalys' example (Batsim 1.x), each PREFIX_jobs.csv beside
#: the PREFIX_schedule.csv Batsim wrote
PREFIXES = [DATA / "batsim-4.2.1" / "outputs" / n for n in ("walltime", "seqdelay", "mixed")] + \
           [DATA / "evalys-medium_late-easy" / "out"]


@pytest.mark.parametrize("prefix", PREFIXES, ids=lambda p: p.name if p.name != "out" else "evalys")
def test_schedule_fields_equal_batsims_own(prefix):
    """Every field a _jobs.csv gives equals Batsim's _schedule.csv up to the %f rounding of the table's times
    (relative 1e-6, absolute 1e-5); nb_computing_machines needs the platform (not given here: NaN)."""
    mine = schedule_fields(read_table(f"{prefix}_jobs.csv"))
    theirs = read_schedule_csv(f"{prefix}_schedule.csv")
    compared = 0
    for k in SCHEDULE_FIELDS_FROM_JOBS:
        if k == "nb_computing_machines":
            assert math.isnan(mine[k])
            continue
        if k not in theirs:        # evalys' Batsim 1.x file has no nb_jobs_rejected
            continue
        assert mine[k] == pytest.approx(float(theirs[k]), rel=1e-6, abs=1e-5), k
        compared += 1
    assert compared >= 12


def test_rejected_jobs_count_in_the_means_and_makespan_is_from_zero():
    """Hand-checked: submissions at 100, 100, 200; job a waits 10 and runs 20; b is rejected; c waits 0 and
    runs 50, reaching its walltime. Batsim: makespan = 250 (not 250 − 100), mean waiting time = 10 / 3 (the
    rejected job counts as 0), mean slowdown = (30/20 + 50/50) / 3, success rate 1/3, one killed."""
    t = pd.DataFrame({"job_id": ["a", "b", "c"], "submission_time": [100.0, 100.0, 200.0],
                      "starting_time": [110.0, None, 200.0], "execution_time": [20.0, None, 50.0],
                      "finish_time": [130.0, None, 250.0],
                      "final_state": ["COMPLETED_SUCCESSFULLY", "REJECTED", "COMPLETED_WALLTIME_REACHED"]})
    f = schedule_fields(t, nb_machines=4)
    assert f["makespan"] == 250.0 and f["nb_computing_machines"] == 4
    assert f["mean_waiting_time"] == pytest.approx(10 / 3)
    assert f["mean_turnaround_time"] == pytest.approx((30 + 50) / 3)
    assert f["mean_slowdown"] == pytest.approx((1.5 + 1.0) / 3)
    assert (f["max_waiting_time"], f["max_turnaround_time"], f["max_slowdown"]) == (10.0, 50.0, 1.5)
    assert (f["nb_jobs"], f["nb_jobs_finished"], f["nb_jobs_success"], f["nb_jobs_killed"],
            f["nb_jobs_rejected"]) == (3, 2, 1, 1, 1)
    assert f["success_rate"] == pytest.approx(1 / 3)


def test_metrics_command_prints_batsims_fields_and_checks_them(capsys):
    """`metrics PREFIX_jobs.csv --platform FILE`: Batsim's fields under Batsim's names, checked against the
    PREFIX_schedule.csv beside it (no difference reported), the project's span under its own name, and the
    processor utilisation from the platform (4 compute hosts)."""
    prefix = DATA / "batsim-4.2.1" / "outputs" / "walltime"
    assert main(["metrics", f"{prefix}_jobs.csv", "--platform",
                 str(DATA / "batsim-4.2.1" / "platforms" / "small_platform.xml")]) == 0
    out = capsys.readouterr().out
    assert "checked against walltime_schedule.csv" in out
    assert "Batsim's _schedule.csv:" not in out                 # no field differs
    assert "  makespan               237.086299" in out
    assert "  mean_waiting_time      47.441840" in out
    assert "span                   237 s" in out                # first submission at 0: the same here
    util = [ln for ln in out.splitlines() if ln.startswith("processor utilisation")][0]
    assert "n/a" not in util and util.endswith("%")
    assert main(["metrics", f"{prefix}_jobs.csv"]) == 0              # without the platform: says what to give
    assert "n/a (number of processors unknown: --platform FILE or --nb-compute N)" in capsys.readouterr().out


def test_metrics_command_reports_a_field_that_differs(tmp_path, capsys):
    """A _schedule.csv that does not match the table (its makespan edited) is named, with Batsim's value."""
    prefix = DATA / "batsim-4.2.1" / "outputs" / "seqdelay"
    (tmp_path / "x_jobs.csv").write_text(Path(f"{prefix}_jobs.csv").read_text())
    sched = Path(f"{prefix}_schedule.csv").read_text().replace("1120.000045", "1000.000000")
    (tmp_path / "x_schedule.csv").write_text(sched)
    assert main(["metrics", str(tmp_path / "x_jobs.csv")]) == 0
    out = capsys.readouterr().out
    assert "  makespan               1120.000045   (Batsim's _schedule.csv: 1000.000000)" in out
    assert "mean_waiting_time      0.000021\n" in out


@pytest.mark.slow
def test_metrics_on_a_runs_own_batsim_tables(tmp_path, capsys):
    """An io-aware run: the simulator's batsim_schedule.csv is over the sub-jobs, so `metrics` of
    batsim_subjobs.csv matches it field by field, and `metrics` of batsim_jobs.csv (one row per user job) says
    where to compare instead of reporting differences."""
    out = tmp_path / "run"
    assert main(["run", "--jobs", "6", "--policy", "fcfs-easy", "--output", str(out), "-q"]) == 0
    capsys.readouterr()
    assert main(["metrics", str(out / "batsim_subjobs.csv")]) == 0
    sub = capsys.readouterr().out
    assert "checked against batsim_schedule.csv" in sub and "Batsim's _schedule.csv:" not in sub
    assert main(["metrics", str(out / "batsim_jobs.csv")]) == 0
    own = capsys.readouterr().out
    assert "batsim_schedule.csv counts the sub-jobs" in own and "Batsim's _schedule.csv:" not in own
