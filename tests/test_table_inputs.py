"""`metrics` and `plot` on a jobs.csv whose time cells are text or infinite: one line, exit 2 (issue 26,
items 7 and 8), instead of a traceback or a makespan of inf."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from burstbuffer.cli import main

from .conftest import edit_jobs_csv

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tables")
    w = json.loads((ROOT / "workloads" / "kth-1000.json").read_text())
    w["jobs"] = w["jobs"][:5]
    (tmp / "w.json").write_text(json.dumps(w))
    assert main(["run", "--workload", str(tmp / "w.json"), "--model", "alloc-only", "--output", str(tmp / "run"),
                 "--cpu", "off", "-q"]) == 0
    return tmp / "run"


def _corrupt(run_dir: Path, dst: Path, column: str, value: str) -> Path:
    shutil.copytree(run_dir, dst)
    return edit_jobs_csv(dst, 1, column, value)


@pytest.mark.parametrize("column, value", [("finish_time", "inf"), ("starting_time", "bogus"),
                                           ("submission_time", "-inf")])
def test_metrics_refuses_non_numeric_and_infinite_times(run_dir, tmp_path, capsys, column, value):
    d = _corrupt(run_dir, tmp_path / "r", column, value)
    assert main(["metrics", str(d / "jobs.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"row 2, column {column}" in err and value in err, err


def test_plot_refuses_an_infinite_finish_time(run_dir, tmp_path, capsys):
    d = _corrupt(run_dir, tmp_path / "r", "finish_time", "inf")
    assert main(["plot", str(d)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "finish_time" in err, err


def test_metrics_of_a_sound_table_still_works(run_dir, capsys):
    assert main(["metrics", str(run_dir / "jobs.csv")]) == 0
