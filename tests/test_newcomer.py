"""A newcomer's first hour: run a subset, log levels, errors that say what to do (argparse suggestions, missing
SimGrid), no nan in summaries, progress bars only on a terminal, hints for jobs larger than the platform."""
import json
import re
import shlex
import subprocess
import sys

import pytest

from burstbuffer.cli import main
from burstbuffer.metrics.runplot import natural_key
from burstbuffer.metrics.summary import Summary
from burstbuffer.platforms.generator import larger_platform_hint
from burstbuffer.workloads.cli import platform_params

from .conftest import ROOT

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers): a few small simulations in subprocesses


def _cli(*argv, pre=""):
    code = f"import sys\n{pre}\nfrom burstbuffer.cli import main\nsys.exit(main({list(argv)!r}))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_run_first_jobs_with_debug_logs(tmp_path):
    """`run --jobs 4 -vv` (the option after the command): the first 4 jobs of the bundled workload, each job's
    submission, start and end logged to the console and simulator.log; stderr not a terminal: no progress bar
    (no carriage return)."""
    out = tmp_path / "o"
    r = _cli("run", "--jobs", "4", "--output", str(out), "-vv")
    assert r.returncode == 0, r.stderr
    jobs = [ln.split(",")[0] for ln in (out / "jobs.csv").read_text().splitlines()[1:]]
    first4 = [j["id"] for j in json.loads((ROOT / "workloads" / "kth-1000.json").read_text())["jobs"][:4]]
    assert jobs == [str(i) for i in first4]
    assert len(json.loads((out / "workload-first-4.json").read_text())["jobs"]) == 4
    for i in first4:
        assert re.search(rf"DEBUG: t=\S+ job w0!{i} submitted", r.stderr)
        assert re.search(rf"DEBUG: t=\S+ job w0!{i} ended: COMPLETED", r.stderr)
    assert "submitted" in (out / "simulator.log").read_text()
    assert "\r" not in r.stderr


def test_default_level_logs_nothing_and_progress_stays_off_the_log(tmp_path):
    r = _cli("run", "--jobs", "2", "--output", str(tmp_path / "o"))
    assert r.returncode == 0 and "DEBUG" not in r.stderr and "\r" not in r.stderr, r.stderr


@pytest.mark.parametrize("argv, words", [
    ("run --jobs 0", "argument --jobs"),
    ("run --modle io-aware", "did you mean --model"),
    ("runn", "did you mean run?"),
    ("workload from-swff x", "did you mean from-swf"),
    ("--log-level loud run", "invalid choice: 'loud'"),
    ("simulate -v quiet", "required: -p/--platform"),     # simulate's own -v (Batsim's --verbosity) stays its
])
def test_usage_errors_say_what_to_do(argv, words, capsys):
    assert main(shlex.split(argv)) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines[0].startswith("burstbuffer") and len(lines) <= 2
    if "did you mean" in words:
        assert lines[1].startswith("usage: burstbuffer") and "--help" in lines[1]


def test_missing_simgrid_is_one_line_with_the_fix_and_no_output(tmp_path):
    """A Python that cannot import SimGrid (sys.modules entry None: what `import simgrid` meets on a Python
    without Debian's python3-simgrid): run and reproduce stop before writing anything."""
    for argv in (["run", "--output", str(tmp_path / "r")], ["run", "--jobs", "3", "--output", str(tmp_path / "r")],
                 ["reproduce", "--jobs", "3", "--output", str(tmp_path / "p")]):
        r = _cli(*argv, pre="sys.modules['simgrid'] = None")
        assert r.returncode == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "python3-simgrid" in lines[0] and "--system-site-packages" in lines[0]
        assert not (tmp_path / "r").exists() and not (tmp_path / "p").exists()


def test_summary_without_started_jobs_says_why_not_nan():
    nan = float("nan")
    text = str(Summary(3, 0, 0, 3, 0, nan, nan, nan, 0.0, nan, nan))
    assert "nan" not in text and text.count("n/a (no job started)") == 5
    text = str(Summary(3, 3, 0, 0, 0, 0.5, 1.0, 2.0, 100.0, nan, nan))
    assert "nan" not in text and "--nb-compute" in text and "--total-bb" in text


def test_natural_order_of_node_names():
    assert sorted(["node_0", "node_108", "node_12", "node_9"], key=natural_key) == \
        ["node_0", "node_9", "node_12", "node_108"]


@pytest.mark.parametrize("nodes", [97, 256, 1000])
def test_the_larger_platform_hint_holds_the_jobs(tmp_path, nodes, capsys):
    """The command the hint gives writes a platform with at least `nodes` compute nodes."""
    cmd = larger_platform_hint(nodes).split(": ", 1)[1].split(", then")[0]
    argv = shlex.split(cmd)[1:]
    argv[argv.index("--output") + 1] = str(tmp_path / "big.xml")
    assert main(argv) == 0
    capsys.readouterr()
    assert platform_params(tmp_path / "big.xml")["nb_res"] >= nodes


def test_python_api_gives_a_dataframe_and_a_dict(tmp_path):
    """burstbuffer.notebook.simulate: the first 5 jobs; the table is jobs.csv, the summary agrees with it."""
    import pandas as pd
    from burstbuffer.notebook import simulate
    sim = simulate("fcfs-easy", jobs=5, output=tmp_path / "o")
    assert isinstance(sim.jobs, pd.DataFrame) and len(sim.jobs) == 5
    assert sim.jobs["job_id"].tolist() == ["15", "16", "17", "18", "19"]
    assert sim.summary["submitted"] == 5 and sim.summary["completed"] + sim.summary["killed"] == 5
    assert sim.summary["mean_waiting_h"] == pytest.approx(sim.jobs["waiting_time"].mean() / 3600)
    fig, axes = sim.figure()
    assert set(axes) == {"gantt", "bb", "queue", "utilisation"}
    assert all(p.is_file() for p in sim.plot())
