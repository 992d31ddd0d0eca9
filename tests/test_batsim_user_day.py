"""A Batsim user's first day (docs/batsim.md): hints naming the command's own options, notes only where they
apply, the notebook leaving nothing behind."""
from __future__ import annotations

import glob
import os
import tempfile
from pathlib import Path

import pytest

from burstbuffer.cli import main
from burstbuffer.errors import InputError

from .sim_sched import REPO, run_simulation

BATSIM = REPO / "tests" / "data" / "batsim-4.2.1"
NO_STORAGE = BATSIM / "platforms" / "small_platform.xml"      # Batsim's: 4 hosts and a master, no storage role


@pytest.mark.slow
def test_run_hint_names_runs_own_storage_option(tmp_path, capsys):
    """`run` on a platform without storage roles names its own --storage, not simulate's (and Batsim's) -r."""
    assert main(["run", "--platform", str(NO_STORAGE), "--jobs", "3", "--output", str(tmp_path / "o"),
                 "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith("(give storage roles with --storage HOSTS)") and " -r " not in err[0]


@pytest.mark.slow
@pytest.mark.parametrize("platform, noted", [(NO_STORAGE, False), (REPO / "platforms" / "dragonfly96.xml", True)])
def test_bb_capacity_note_only_with_storage_machines(tmp_path, platform, noted):
    """`simulate`'s note that burst-buffer capacity is not checked is printed for a platform with storage
    machines only."""
    res = run_simulation(tmp_path, BATSIM / "workloads" / "test_one_delay_job.json", platform=platform,
                         quiet=False)
    assert res.returncode == 0, res.stderr[-2000:]
    assert ("burst-buffer capacity is not checked" in res.stderr) == noted


def test_dragonfly_message_says_which_simgrid_reads_what(tmp_path, capsys):
    assert main(["platform", "dragonfly", "--groups", "1", "--chassis", "1", "--routers", "2",
                 "--nodes-per-router", "2", "--output", str(tmp_path / "p.xml")]) == 0
    out = capsys.readouterr().out
    assert "loads as is in SimGrid <= 3.27" in out and "--format so" in out and "3.32 through" not in out


@pytest.mark.slow
def test_notebook_without_output_leaves_no_folder(tmp_path):
    """simulate() without output= removes its temporary folder; the tables and the figure stay usable, and
    plot() asks for a folder."""
    from burstbuffer.notebook import simulate
    pattern = os.path.join(tempfile.gettempdir(), "burstbuffer-*")
    before = set(glob.glob(pattern))
    sim = simulate("fcfs-easy", jobs=4)
    assert set(glob.glob(pattern)) == before and sim.output is None
    assert len(sim.jobs) == 4 and sim.summary["submitted"] == 4
    fig, axes = sim.figure()
    assert "gantt" in axes
    with pytest.raises(InputError, match="kept no folder"):
        sim.plot()
    assert all(Path(p).is_file() for p in sim.plot(tmp_path / "fig"))
