"""`burstbuffer metrics` and `metrics.tidy.load_jobs` on every `_jobs.csv` layout Batsim wrote (1.x-4.2): real
files from evalys' repository (tests/data/batsim-layouts/, origin in tests/data/README.md) and this repository's
Batsim 4.2.1 capture."""
from pathlib import Path

import pandas as pd
import pytest

from burstbuffer.cli import main
from burstbuffer.metrics.tidy import job_metrics, load_jobs

DATA = Path(__file__).resolve().parent / "data"
LAYOUTS = sorted((DATA / "batsim-layouts").glob("*.csv"))


def test_the_old_layouts_are_there():
    assert len(LAYOUTS) == 4


@pytest.mark.parametrize("path", LAYOUTS, ids=lambda p: p.stem)
def test_old_layouts_give_the_waiting_times_batsim_wrote(path):
    """Each file records Batsim's own waiting_time per job: the metrics recomputed from the translated table
    (start − submission) give the same numbers, for every job (all completed in these runs)."""
    raw = pd.read_csv(path)
    jobs = load_jobs(path)
    assert "final_state" not in raw and jobs.attrs["layout_note"].startswith("a Batsim table of a layout before 3.0")
    m = job_metrics(jobs)
    assert len(m) == len(raw) == 100
    assert (m["final_state"] == "COMPLETED_SUCCESSFULLY").all()
    assert m["waiting_time"].to_numpy() == pytest.approx(raw["waiting_time"].to_numpy(), abs=1e-5)


def test_batsim_2x_states_from_success(tmp_path):
    """Batsim 2.x columns (job_id, requested_number_of_processors, allocated_processors, metadata; no
    final_state): success 1 → completed, 0 with no start → rejected (times emptied), 0 having run → killed."""
    p = tmp_path / "out_jobs.csv"
    p.write_text("job_id,workload_name,submission_time,requested_number_of_processors,requested_time,success,"
                 "starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,consumed_energy,"
                 "allocated_processors,metadata\n"
                 "1,w0,0.0,2,100.0,1,5.0,50.0,55.0,5.0,55.0,1.1,-1,0-1,\"\"\n"
                 "2,w0,1.0,4,100.0,0,-1.0,-1.0,-2.0,-2.0,-2.0,1.0,-1,,\"\"\n"
                 "3,w0,2.0,2,100.0,0,55.0,100.0,155.0,53.0,153.0,1.53,-1,0-1,\"\"\n")
    jobs = load_jobs(p)
    assert list(jobs["final_state"]) == ["COMPLETED_SUCCESSFULLY", "REJECTED", "COMPLETED_KILLED"]
    m = job_metrics(jobs)
    assert list(m["waiting_time"].iloc[[0, 2]]) == [5.0, 53.0] and pd.isna(m["waiting_time"].iloc[1])


def test_metrics_command_on_an_old_layout_and_on_batsim_421(capsys):
    assert main(["metrics", str(LAYOUTS[0])]) == 0
    out = capsys.readouterr().out
    assert "layout before 3.0" in out and "jobs submitted         100" in out and "nan" not in out
    assert main(["metrics", str(DATA / "batsim-4.2.1" / "capture10_jobs.csv")]) == 0
    out = capsys.readouterr().out
    assert "layout before 3.0" not in out and "nan" not in out


def test_a_table_without_states_is_one_line(tmp_path, capsys):
    p = tmp_path / "x.csv"
    p.write_text("job_id,submission_time,starting_time,finish_time\n1,0,1,2\n")
    assert main(["metrics", str(p)]) == 2
    assert "final_state" in capsys.readouterr().err
