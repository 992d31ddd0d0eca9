"""Hostile inputs and broken runs end in one line with the right exit status, nothing lost, nothing touched
outside the output folder (docs/reliability.md §5-§7).

Exit statuses: 2 bad input, 1 the run failed (jobs.csv and run.json of the jobs seen written), 128 + N a
signal. Each test is a case that once ended in a traceback, a hang, an unbounded read, a silent success or a
file replaced outside the output folder.
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from burstbuffer.cli import main
from burstbuffer.colocated import MIRROR_PERIOD
from burstbuffer.errors import InputError

from .conftest import DATA, PLATFORM, edit_jobs_csv, start_run, write_subset

ROOT = Path(__file__).resolve().parents[1]
SWF = ROOT / "workloads" / "KTH-SP2-1996-2.1-cln.swf.gz"
ENERGY = DATA / "energy4.xml"
ENERGY_JOBS = DATA / "energy-jobs.json"


def cli(argv: list[str]) -> tuple[int, list[str]]:
    """(exit status, the non-empty lines of stderr) of `burstbuffer ARGV` in this process."""
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            rc = main([str(a) for a in argv])
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 2
    return rc, [ln for ln in err.getvalue().replace("\r", "\n").splitlines() if ln.strip()]


def refused(argv, *needles) -> str:
    """Assert `argv` is refused in one line with exit 2 containing every needle; return the line."""
    rc, lines = cli(argv)
    errors = [ln for ln in lines if "error" in ln or ln.startswith("burstbuffer")]
    assert rc == 2, lines
    assert len(errors) == 1 and "Traceback" not in "\n".join(lines), lines
    for n in needles:
        assert n in errors[0], errors
    return errors[0]


def files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


@pytest.fixture
def w8(tmp_path) -> Path:
    return write_subset(tmp_path / "w8.json", 8)


@pytest.fixture
def campaign(tmp_path, w8):
    def make(extra: str = "", policy_extra: str = "") -> Path:
        p = tmp_path / "c.toml"
        p.write_text(f'[campaign]\nmodels = ["alloc-only"]\nseeds = [0]\n\n[[policy]]\nname = "fcfs"\n{policy_extra}\n'
                     f'[[workload]]\nfile = "{w8}"\nlabel = "w8"\n{extra}')
        return p
    return make


# --------------------------------------------------------------------------------------------- bounded reads
@pytest.mark.parametrize("argv", [
    ["run", "--queues", "/dev/zero"],
    ["run", "--workload", "/dev/zero"],
    ["run", "--platform", "/dev/zero"],
    ["workload", "from-sacct", "/dev/zero", "-o", "{tmp}/x.json"],
    ["workload", "from-swf", "/dev/zero", "-o", "{tmp}/x.json"],
    ["workload", "from-swf", str(SWF), "--platform", "/dev/zero", "-o", "{tmp}/x.json"],
    ["sweep", "/dev/zero", "--output", "{tmp}/sw"],
    ["reproduce", "--queues", "/dev/zero", "--output", "{tmp}/rp"],
    ["metrics", "/dev/zero"],
])
def test_a_device_is_refused_before_a_byte_is_read(tmp_path, argv):
    """/dev/zero once grew a process to 24 GB: every reader checks the open file is a regular one."""
    refused([a.format(tmp=tmp_path) for a in argv], "/dev/zero", "not a regular file")


def test_a_fifo_does_not_block_the_reader(tmp_path):
    fifo = tmp_path / "queues.toml"
    os.mkfifo(fifo)
    refused(["run", "--queues", fifo, "--output", tmp_path / "o"], "not a regular file")


def test_cluster_config_and_scheduler_file_are_read_bounded(tmp_path, campaign):
    c = campaign()
    refused(["sweep", c, "--output", tmp_path / "s", "--cluster", "slurm", "--cluster-config", "/dev/zero"],
            "not a regular file")
    (tmp_path / "sf.json").write_text("not json")
    refused(["sweep", c, "--output", tmp_path / "s", "--scheduler-file", tmp_path / "sf.json"],
            "not a Dask scheduler file")


def test_read_input_bounds_the_size(tmp_path):
    from burstbuffer.fileio import read_input
    p = tmp_path / "big.toml"
    p.write_bytes(b"#" * 101)
    assert read_input(p, "x", limit=101) == "#" * 101
    with pytest.raises(InputError, match="larger than 100 bytes"):
        read_input(p, "x", limit=100)


# --------------------------------------------------------------------------------------- outside the folder
def test_serve_and_simulate_never_replace_a_file_with_their_socket(tmp_path, w8):
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    refused(["serve", "--policy", "fcfs", "--socket", f"ipc://{victim}", "--output", tmp_path / "sv"],
            "exists and is not a socket")
    refused(["simulate", "-p", PLATFORM, "-w", w8, "-s", f"ipc://{victim}", "-e", tmp_path / "sim" / "out"],
            "exists and is not a socket")
    assert victim.read_text() == "keep me"
    assert not (tmp_path / "sv").exists()


def test_an_output_path_that_is_a_file_is_refused(tmp_path, w8):
    f = tmp_path / "afile"
    f.write_text("x")
    run = tmp_path / "run"
    assert cli(["run", "--workload", w8, "--output", run, "-q", "--cpu", "off"])[0] == 0
    refused(["plot", run, "--output", f], "exists and is not a folder")
    refused(["simulate", "-p", PLATFORM, "-w", w8, "-e", f / "x", "-s", "tcp://127.0.0.1:1"], "not a folder")
    refused(["run", "--workload", w8, "--output", f, "-q"], "exists and is not a folder")
    assert f.read_text() == "x"


def test_an_unwritable_output_folder_is_refused_before_the_run(tmp_path, w8, campaign, monkeypatch):
    """A read-only --output (as root, a permission cannot be taken away: the write probe is made to fail)."""
    import tempfile

    def denied(*a, **k):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(tempfile, "mkstemp", denied)
    for argv in (["run", "--workload", w8, "--output", tmp_path / "o", "-q"],
                 ["sweep", campaign(), "--output", tmp_path / "s"],
                 ["reproduce", "--output", tmp_path / "r"]):
        refused(argv, "cannot write in the folder", "Permission denied")


def test_one_writer_per_output_folder(tmp_path, w8):
    from burstbuffer.fileio import OutputLock
    out = tmp_path / "o"
    out.mkdir()
    with OutputLock(out):          # another run holds it
        refused(["run", "--workload", w8, "--output", out, "-q"], "in use by another run")
    assert files(out) == set()
    assert cli(["run", "--workload", w8, "--output", out, "-q", "--cpu", "off"])[0] == 0


def test_one_campaign_or_study_per_output_folder(tmp_path):
    """sweep and reproduce write many runs into one folder: a second one there is refused before it writes."""
    from burstbuffer.fileio import OutputLock
    out = tmp_path / "o"
    out.mkdir()
    with OutputLock(out):
        refused(["sweep", ROOT / "examples" / "campaign-small.toml", "--output", out, "-q"], "in use by another run")
        refused(["reproduce", "--study", "orders", "--jobs", "5", "--output", out, "-q"], "in use by another run")
    assert files(out) == set()


# ---------------------------------------------------------------------------------------- numbers and depth
def test_a_platform_nested_fifty_thousand_zones_deep(tmp_path, w8):
    n = 50_000
    p = tmp_path / "deep.xml"
    p.write_text('<?xml version="1.0"?>\n<platform version="4.1">' + '<zone id="z" routing="Full">' * n
                 + '<host id="h" speed="1Gf"/>' + "</zone>" * n + "</platform>\n")
    refused(["run", "--workload", w8, "--platform", p, "--output", tmp_path / "o", "-q"], "nested too deeply")
    refused(["workload", "from-swf", SWF, "--platform", p, "-o", tmp_path / "x.json"], "nested too deeply")


@pytest.mark.parametrize("size", ["1e400B", "1e400", "99999999999PB", "9.3e18"])
def test_sizes_out_of_range(tmp_path, w8, size):
    refused(["run", "--workload", w8, "--output", tmp_path / "o", "-q", "--bb-capacity", size], "out of range")
    refused(["workload", "from-swf", SWF, "--bb-capacity", size, "-o", tmp_path / "x.json"], "out of range")


def test_units_are_finite():
    from burstbuffer.platforms.units import MAX_BYTES, parse_bandwidth, parse_bytes, parse_latency, parse_speed
    assert parse_bytes("40GB") == 40 * 10 ** 9
    assert parse_bytes(MAX_BYTES - 1) == MAX_BYTES - 1
    for f, text in ((parse_bytes, "1e400B"), (parse_speed, "1e400f"), (parse_bandwidth, "1e300YBps"),
                    (parse_latency, "1e400s"), (parse_bytes, MAX_BYTES)):
        with pytest.raises(ValueError, match="out of range"):
            f(text)


SACCT = ("JobIDRaw|Submit|Start|End|TimelimitRaw|NNodes|NCPUS|State|ReqTRES|AllocTRES\n"
         "1|2026-01-01T00:00:00|2026-01-01T00:01:00|2026-01-01T01:00:00|{limit}|1|4|COMPLETED|cpu=4,{bb}|cpu=4\n")


@pytest.mark.parametrize("limit, bb, why", [("60", "bb/datawarp=99999999999999999999P", "out of range"),
                                            ("99999999999999999999-00", "bb/datawarp=1G", "time limit")])
def test_sacct_numbers_out_of_range(tmp_path, limit, bb, why):
    p = tmp_path / "s.txt"
    p.write_text(SACCT.format(limit=limit, bb=bb))
    refused(["workload", "from-sacct", p, "-o", tmp_path / "x.json"], "line 2", why)


def test_policy_options_of_a_wrong_shape(tmp_path, w8, campaign):
    refused(["run", "--workload", w8, "--output", tmp_path / "o", "-q", "--policy-option",
             'queues={"queue":[{"name":5}]}'], "queues")
    refused(["run", "--workload", w8, "--output", tmp_path / "o", "-q",
             "--policy-option=order_params=" + "[" * 5000 + "]" * 5000], "nested too deeply")
    refused(["sweep", campaign(policy_extra="options = { queues = {queue=[{name=5}]} }"), "--output",
             tmp_path / "s"], "policy[0].options", "queues")


@pytest.mark.parametrize("table, item", [("memory = {a=[1]}", "memory"), ('cores = true\nmemory = "1GB"', "cores"),
                                         ('processes = "2"', "processes")])
def test_cluster_config_values_are_typed(tmp_path, campaign, table, item):
    cfg = tmp_path / "cc.toml"
    lines = ["[cluster]", table]
    lines += [] if "cores" in table else ["cores = 1"]
    lines += [] if "memory" in table else ['memory = "1GB"']
    cfg.write_text("\n".join(lines) + "\n")
    refused(["sweep", campaign(), "--output", tmp_path / "s", "--cluster", "slurm", "--cluster-config", cfg], item)


def test_a_cluster_without_its_submit_command_is_refused(tmp_path, campaign, monkeypatch):
    """Without sbatch, dask-jobqueue printed a traceback and waited for workers for ever."""
    cfg = tmp_path / "cc.toml"
    cfg.write_text('[cluster]\ncores = 1\nmemory = "1GB"\n')
    monkeypatch.setenv("PATH", str(tmp_path))
    refused(["sweep", campaign(), "--output", tmp_path / "s", "--cluster", "slurm", "--cluster-config", cfg],
            "sbatch is not on this host's PATH")


@pytest.mark.parametrize("exclude", ["policy = 5", 'policy = "nope"', 'model = ["alloc-only"]', "seed = 7"])
def test_an_exclusion_that_excludes_nothing_is_refused(tmp_path, campaign, exclude):
    refused(["sweep", campaign(f"\n[[exclude]]\n{exclude}\n"), "--output", tmp_path / "s"], "exclude[0]")


# ------------------------------------------------------------------------------------------- run tables
def _edited_run(tmp_path, w8, column, value) -> Path:
    run = tmp_path / "run"
    assert cli(["run", "--workload", w8, "--output", run, "-q", "--cpu", "off"])[0] == 0
    return edit_jobs_csv(run, 2, column, value)


def test_a_start_time_written_nan_is_refused_not_dropped(tmp_path, w8):
    run = _edited_run(tmp_path, w8, "starting_time", "nan")
    refused(["metrics", run / "jobs.csv"], "row 3, column starting_time")
    refused(["plot", run], "row 3, column starting_time")


def test_allocated_resources_that_are_no_set_are_refused(tmp_path, w8):
    run = _edited_run(tmp_path, w8, "allocated_resources", "5-3 x")
    refused(["plot", run], "row 3, column allocated_resources")


# -------------------------------------------------------------------------------------------- energy
@pytest.mark.parametrize("old, new, why", [('pstate="0"', 'pstate="7"', "pstate='7'"),
                                           ("95:100:200", "nan:100:200", "not a power"),
                                           ("95:100:200", "1e308:100:200", "not a power"),
                                           ("95:100:200", "-5:100:200", "not a power"),
                                           ('"wattage_off" value="9"', '"wattage_off" value="-9"', "wattage_off")])
def test_energy_platforms_are_checked_before_the_run(tmp_path, old, new, why):
    """pstate 7 of 5 aborted SimGrid (exit 134); watts nan or 1e308 failed after the run started."""
    p = tmp_path / "e.xml"
    p.write_text(ENERGY.read_text().replace(old, new, 1))
    refused(["simulate", "-E", "-p", p, "-w", ENERGY_JOBS, "-e", tmp_path / "o" / "x", "-s", "tcp://127.0.0.1:1"],
            "host 'host0'", why)


# -------------------------------------------------------------------------------------- peers and policies
def test_an_unknown_event_type_is_quoted_bounded(caplog):
    from burstbuffer.app import SchedulerApp
    from burstbuffer.batsim.loop import Outbox
    from burstbuffer.batsim.protocol import UnknownEvent
    from burstbuffer.io_model.registry import JOB_MODELS
    app = SchedulerApp(lambda plat: None, JOB_MODELS["io-aware"]())
    huge = "X" * 10_000_000
    with caplog.at_level("WARNING", logger="burstbuffer"):
        app.on_event(0.0, UnknownEvent(huge, {}), Outbox(0.0))
    (rec,) = caplog.records
    assert len(rec.getMessage()) < 300 and "10000000 characters" in rec.getMessage()


POLICIES = '''
import ctypes, os, sys, time
from burstbuffer.schedulers import Policy, Scheduler

def _easy(self, queue):
    return [self.start(j, f) for j in list(queue) if (f := self.fit_now(j))]

class Exit(Policy):
    def schedule(self, now, queue, profile, rng):
        if now > 1000: sys.exit(0)
        return _easy(self, queue)

class OsExit(Policy):
    def schedule(self, now, queue, profile, rng):
        if now > 1000: os._exit(0)
        return _easy(self, queue)

class CSleep(Policy):
    def schedule(self, now, queue, profile, rng):
        if now > 1000: ctypes.CDLL(None).sleep(3600)
        return _easy(self, queue)

class Hello(Scheduler):
    def __init__(self, platform, seed=0):
        self._q = []
    @property
    def queue(self): return self._q
    def submit(self, job, now): self._q.append(job)
    def job_ended(self, job_id, now): pass
    def can_ever_fit(self, job): return None
    def decide(self, now): return ["hello", 42]

class SlowInit(Policy):
    def __init__(self, platform, seed=0, x=1, **kw):
        super().__init__(platform, seed=seed, **kw)
        while True: time.sleep(0.01)
    def schedule(self, now, queue, profile, rng): return []
'''


def _run_cli(argv: list, timeout: float = 180) -> tuple[int, list[str]]:
    p = subprocess.run([sys.executable, "-m", "burstbuffer", *map(str, argv)], capture_output=True, text=True,
                       cwd=ROOT, timeout=timeout)
    return p.returncode, [ln for ln in p.stderr.replace("\r", "\n").splitlines() if ln.startswith("burstbuffer")]


@pytest.mark.slow
@pytest.mark.parametrize("link", ["in-simulator", "pipes"])
@pytest.mark.parametrize("cls, why", [("Exit", "called sys.exit(0)"), ("OsExit", "called os._exit(0)"),
                                      ("Hello", "decide returned hello (str)"),
                                      ("CSleep", "stuck in code that does not return to Python")])
def test_a_policy_that_exits_or_hangs_fails_the_run_with_its_outputs(tmp_path, link, cls, why):
    """sys.exit(0) in a policy once made `run` exit 0 with 1 of 8 jobs; a C-level sleep hung it for ever."""
    pol = tmp_path / "pol.py"
    pol.write_text(POLICIES)
    out = tmp_path / "o"
    rc, err = _run_cli(["run", "--workload", write_subset(tmp_path / "w.json", 8), "--output", out, "-q",
                        "--cpu", "off", "--link", link, "--timeout", "2", "--policy", f"{pol}:{cls}"])
    assert rc == (124 if cls == "CSleep" else 1) and len(err) == 1 and why in err[0], err   # 124: a time limit
    assert {"jobs.csv", "run.json", "bb_occupancy.csv"} <= files(out)
    states = [r["final_state"] for r in csv.DictReader((out / "jobs.csv").open())]
    assert states and set(states) <= {"COMPLETED_SUCCESSFULLY", "PENDING", "RUNNING"}
    assert ("COMPLETED_SUCCESSFULLY" in states) == (cls != "Hello")    # Hello fails at its first decision


@pytest.mark.slow
def test_a_hang_while_the_policy_is_built_is_bounded(tmp_path, w8):
    pol = tmp_path / "pol.py"
    pol.write_text(POLICIES)
    rc, err = _run_cli(["run", "--workload", w8, "--output", tmp_path / "o", "-q", "--timeout", "2",
                        "--policy", f"{pol}:SlowInit", "--policy-option", "x=2"])
    assert rc == 124 and len(err) == 1 and "took longer than 2 s" in err[0], err
    rc, err = _run_cli(["serve", "--output", tmp_path / "sv", "--timeout", "2", "--policy", f"{pol}:SlowInit",
                        "--policy-option", "x=2"])
    assert rc == 124 and len(err) == 1 and "took longer than 2 s" in err[0], err
    blocking = tmp_path / "blocking.py"
    blocking.write_text("import ctypes\nctypes.CDLL(None).sleep(3600)\n")
    rc, err = _run_cli(["run", "--workload", w8, "--output", tmp_path / "o", "-q", "--timeout", "2",
                        "--policy", f"{blocking}:P"])
    assert rc == 124 and len(err) == 1 and "took longer than 2 s" in err[0], err


def _start(out: Path, *extra) -> tuple[subprocess.Popen, int]:
    """`conftest.start_run` once the bar shows 20 jobs done and the child has reported its rows since
    (`colocated.MIRROR_PERIOD`), long before the run ends: it and its child's PID."""
    proc, child, _ = start_run(out, *extra, min_done=20)
    time.sleep(2 * MIRROR_PERIOD)
    return proc, child


@pytest.mark.slow
@pytest.mark.parametrize("how", ["kill", "stop"])
def test_the_parent_writes_the_jobs_seen_when_the_child_cannot(tmp_path, how):
    """SIGKILL or a SIGSTOP outliving the silence limit once left only batsim_*.csv and simulator.log."""
    out = tmp_path / "o"
    proc, child = _start(out, "--timeout", "2")
    os.kill(child, signal.SIGKILL if how == "kill" else signal.SIGSTOP)
    _, stderr = proc.communicate(timeout=120)
    lines = [ln for ln in stderr.decode(errors="replace").replace("\r", "\n").splitlines()
             if ln.startswith("burstbuffer")]
    assert proc.returncode == (124 if how == "stop" else 1) and len(lines) == 1, lines   # 124: the silence limit
    assert {"jobs.csv", "run.json", "bb_occupancy.csv"} <= files(out)
    rows = list(csv.DictReader((out / "jobs.csv").open()))
    assert rows and len({r["job_id"] for r in rows}) == len(rows)
    assert any(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in rows)
    assert json.loads((out / "run.json").read_text())["compute"]


@pytest.mark.slow
def test_pipes_report_a_child_stopped_by_sigterm_as_143(tmp_path):
    out = tmp_path / "o"
    proc, child = _start(out, "--link", "pipes")
    os.kill(child, signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr
    assert "jobs.csv" in files(out)
