"""Campaign files, `sweep`/`reproduce` options: every bad value is a one-line error (exit 2), every path
derived from the file stays inside --output, identical runs are simulated once (issue 26, items 2, 7, 8)."""
from __future__ import annotations

from pathlib import Path

import pytest

from burstbuffer.cli import main
from burstbuffer.sweep.campaign import load_campaign
from burstbuffer.sweep.plan import plan_campaign

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

ROOT = Path(__file__).resolve().parents[1]
KTH = ROOT / "workloads" / "kth-1000.json"


def _campaign(tmp_path: Path, body: str) -> Path:
    f = tmp_path / "c.toml"
    f.write_text(body.format(kth=KTH))
    return f


BASE_POLICY = '[[policy]]\nname = "fcfs"\n'
BASE_WORKLOAD = '[[workload]]\nfile = "{kth}"\njobs = 5\n'


@pytest.mark.parametrize("body, item", [
    ('[[policy]]\nname = ["sjf-bb"]\n' + BASE_WORKLOAD, "policy[0].name"),
    (BASE_POLICY + '[[workload]]\nfile = "{kth}"\nbb-scenario = ["S1"]\n', "workload[0].bb-scenario"),
    (BASE_POLICY + '[[workload]]\nfile = 5\n', "workload[0].file"),
    ('[campaign]\nmodels = []\n' + BASE_POLICY + BASE_WORKLOAD, "campaign.models"),
    ('[campaign]\nseeds = [true]\n' + BASE_POLICY + BASE_WORKLOAD, "campaign.seeds"),
    ('[campaign]\ntimeout = true\n' + BASE_POLICY + BASE_WORKLOAD, "campaign.timeout"),
    ('[campaign]\ntimeout = nan\n' + BASE_POLICY + BASE_WORKLOAD, "campaign.timeout"),
    (BASE_POLICY + '[[workload]]\nfile = "{kth}"\njobs = true\n', "workload[0].jobs"),
    (BASE_POLICY + '[[workload]]\nfile = "{kth}"\nbb-scenario = "S1"\nbb-seed = false\n', "workload[0].bb-seed"),
    (BASE_POLICY + '[[workload]]\nfile = "{kth}"\njobs = 5\nlabel = "../../../escape"\n', "workload[0].label"),
    (BASE_POLICY + '[[workload]]\nfile = "{kth}"\njobs = 5\nlabel = "/tmp/escape"\n', "workload[0].label"),
    (BASE_POLICY + '[[workload]]\nfile = "{kth}"\nparts = 2\nlabel = ".."\n', "workload[0].label"),
    ('[[policy]]\nname = "fcfs"\nlabel = "a/b"\n' + BASE_WORKLOAD, "policy[0].label"),
    ('campaign = 3\n' + BASE_POLICY + BASE_WORKLOAD, "campaign"),
    ('policy = 3\n' + BASE_WORKLOAD, "policy"),
])
def test_bad_campaign_is_one_line(tmp_path, capsys, body, item):
    f = _campaign(tmp_path, body)
    out = tmp_path / "o"
    assert main(["sweep", str(f), "--output", str(out), "--engine", "local", "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{item}:" in err and str(f) in err, err
    assert not (tmp_path / "escape").exists() and not Path("/tmp/escape").exists()


def test_label_never_writes_outside_output(tmp_path):
    """A transformed workload is written under OUTPUT/workloads, named after its (plain) label."""
    f = _campaign(tmp_path, BASE_POLICY + '[[workload]]\nfile = "{kth}"\njobs = 5\nlabel = "kth-5"\n')
    specs = plan_campaign(load_campaign(f), tmp_path / "o")
    assert all(Path(s.workload).resolve().is_relative_to((tmp_path / "o").resolve()) for s in specs)


def test_default_label_from_an_odd_file_name_is_made_plain(tmp_path):
    odd = tmp_path / "my trace (v2).json"
    odd.write_bytes(KTH.read_bytes())
    f = tmp_path / "c.toml"
    f.write_text(BASE_POLICY + f'[[workload]]\nfile = "{odd.name}"\njobs = 5\n')
    assert load_campaign(f).workloads[0][0] == "my_trace__v2_"


def test_identical_runs_are_simulated_once(tmp_path, capsys):
    """The same policy under two labels and a repeated seed: one run each, campaign.csv lists every label."""
    f = _campaign(tmp_path, '[campaign]\nseeds = [0, 0]\nmodels = ["alloc-only", "alloc-only"]\n'
                            '[[policy]]\nname = "fcfs"\n[[policy]]\nname = "fcfs"\nlabel = "fcfs-again"\n'
                  + BASE_WORKLOAD)
    c = load_campaign(f)
    assert c.seeds == [0] and c.models == ["alloc-only"]
    out = tmp_path / "o"
    assert main(["sweep", str(f), "--output", str(out), "--engine", "local", "--workers", "2", "--cpu", "off",
                 "-q"]) == 0
    stdout = capsys.readouterr().out
    assert "2 runs (1 identical to another, run once)" in stdout
    assert stdout.count("done kth-1000/") == 1
    rows = (out / "campaign.csv").read_text().splitlines()[1:]
    assert len(rows) == 2 and all(",done," in r for r in rows)
    assert len([p for p in (out / "runs").iterdir()]) == 1


@pytest.mark.parametrize("cmd", ["sweep", "reproduce"])
def test_output_that_is_a_file_is_one_line(tmp_path, capsys, cmd):
    f = _campaign(tmp_path, BASE_POLICY + BASE_WORKLOAD)
    existing = tmp_path / "file"
    existing.write_text("x")
    argv = [cmd, str(f)] if cmd == "sweep" else [cmd, "--jobs", "5"]
    assert main([*argv, "--output", str(existing), "--engine", "local"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "exists and is not a folder" in err, err


def test_bad_scheduler_address_is_one_line(tmp_path, capsys):
    f = _campaign(tmp_path, BASE_POLICY + BASE_WORKLOAD)
    assert main(["sweep", str(f), "--output", str(tmp_path / "o"), "--scheduler-address", "not an address"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--scheduler-address" in err, err


def test_gantt_jobs_zero_means_no_gantt(tmp_path):
    from burstbuffer.cli import build_parser
    args = build_parser().parse_args(["reproduce", "--output", str(tmp_path), "--gantt-jobs", "0"])
    assert args.gantt_jobs == 0


def test_sweep_progress_bar_says_sweep(tmp_path, capfd, monkeypatch):
    monkeypatch.setenv("BURSTBUFFER_PROGRESS", "always")        # stderr is not a terminal here
    f = _campaign(tmp_path, '[campaign]\nmodels = ["alloc-only"]\n' + BASE_POLICY + BASE_WORKLOAD)
    assert main(["sweep", str(f), "--output", str(tmp_path / "o"), "--engine", "local", "--workers", "1",
                 "--cpu", "off"]) == 0
    err = capfd.readouterr().err
    assert "sweep:" in err and "reproduce" not in err, err[-500:]
