"""`burstbuffer sweep` and `reproduce` on the local engine end cleanly on SIGTERM, SIGINT and SIGHUP (issue 26,
items 1 and 3): the workers stop within seconds, no queued run starts, campaign.csv / manifest.json say what
finished, no process, socket folder or semaphore is left behind, and the exit status is 128 + the signal."""
from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

ROOT = Path(__file__).resolve().parents[1]
KTH = ROOT / "workloads" / "kth-1000.json"

CAMPAIGN = """
[campaign]
timeout = 120
[[policy]]
name = "sjf-bb"
[[policy]]
name = "fcfs-bb"
[[workload]]
file = "{kth}"
"""


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = list(Path(f"/proc/{p}/task").iterdir())
        except OSError:
            continue
        for t in tasks:
            try:
                kids = [int(k) for k in (t / "children").read_text().split()]
            except OSError:
                kids = []
            out += kids
            todo += kids
    return out


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    state = next(line for line in status.splitlines() if line.startswith("State:"))
    return "Z" not in state.split()[1]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _is_simulation(cmdline: str) -> bool:
    """A run's simulating process: the scheduler in the simulator's process, or the simulator alone."""
    return "burstbuffer.colocated" in cmdline or "burstbuffer.simulator" in cmdline


def _start(argv: list[str], tmp: Path) -> tuple[subprocess.Popen, list[int]]:
    """Start the command with TMPDIR = tmp/t; return it once a simulator runs under it, with every
    descendant process then (workers, resource tracker, simulator)."""
    (tmp / "t").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp / "t")}
    proc = subprocess.Popen([sys.executable, "-m", "burstbuffer", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, env=env)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        kids = _descendants(proc.pid)
        sims = [k for k in kids if _is_simulation(_cmdline(k))]
        if sims:
            time.sleep(1.0)         # the simulator is under way
            return proc, _descendants(proc.pid)
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    out, err = proc.communicate()
    pytest.fail("the campaign never got going: " + err.decode(errors="replace")[-500:])


def _check_clean_stop(proc, kids, tmp, sig):
    proc.send_signal(sig)
    try:
        stdout, stderr = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the command did not stop within 90 s of the signal")
    stderr = stderr.decode(errors="replace")
    assert proc.returncode == 128 + sig, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr, stderr
    deadline = time.monotonic() + 15
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [(k, _cmdline(k)) for k in kids if _alive(k)]
    assert not left, f"processes outlived the command: {left}"
    assert not list((tmp / "t").iterdir()), f"temporary files left: {list((tmp / 't').iterdir())}"
    return stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_sweep_local_stops_on_signal_and_writes_campaign_csv(tmp_path, sig):
    f = tmp_path / "c.toml"
    f.write_text(CAMPAIGN.format(kth=KTH))
    out = tmp_path / "out"
    proc, kids = _start(["sweep", str(f), "--output", str(out), "--engine", "local", "--workers", "1",
                         "--cpu", "off", "-q"], tmp_path)
    _check_clean_stop(proc, kids, tmp_path, sig)
    rows = list(csv.DictReader((out / "campaign.csv").open()))
    assert len(rows) == 2
    assert {r["status"] for r in rows} == {"interrupted"}, rows
    # the next queued run never started: one run directory only
    assert len([p for p in (out / "runs").iterdir() if not p.name.startswith(".")]) == 1


def test_reproduce_local_stops_on_sigterm(tmp_path):
    out = tmp_path / "out"
    proc, kids = _start(["reproduce", "--jobs", "1000", "--policies", "sjf-bb,fcfs-bb", "--engine", "local",
                         "--workers", "1", "--cpu", "off", "--gantt-jobs", "1", "-q", "--output", str(out)],
                        tmp_path)
    _check_clean_stop(proc, kids, tmp_path, signal.SIGTERM)
    m = json.loads((out / "manifest.json").read_text())
    assert m["interrupted"] == "SIGTERM" and not m["done"]
    started = [p for p in (out / "runs").rglob("simulator.log")]
    assert len(started) == 1, started


def test_sweep_dask_stops_on_sigterm_and_leaves_no_scratch(tmp_path):
    pytest.importorskip("distributed")
    f = tmp_path / "c.toml"
    f.write_text(CAMPAIGN.format(kth=KTH))
    out = tmp_path / "out"
    proc, kids = _start(["sweep", str(f), "--output", str(out), "--engine", "dask", "--workers", "1",
                         "--cpu", "off", "-q"], tmp_path)
    _check_clean_stop(proc, kids, tmp_path, signal.SIGTERM)     # no batsim.sock, no dask-scratch-space
    rows = list(csv.DictReader((out / "campaign.csv").open()))
    assert len(rows) == 2 and {r["status"] for r in rows} == {"interrupted"}, rows
    assert not [p for p in (out / "runs").glob(".*")], "temporary run directories left"
    assert not (ROOT / "dask-scratch-space").exists()


def test_sweep_local_stops_on_sigterm_to_the_whole_group(tmp_path):
    """A batch system or a closed terminal signals every process of the group: the runs still stop
    cleanly (no socket folder left), campaign.csv is written."""
    f = tmp_path / "c.toml"
    f.write_text(CAMPAIGN.format(kth=KTH))
    out = tmp_path / "out"
    (tmp_path / "t").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "t")}
    proc = subprocess.Popen([sys.executable, "-m", "burstbuffer", "sweep", str(f), "--output", str(out),
                             "--engine", "local", "--workers", "1", "--cpu", "off", "-q"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, env=env, start_new_session=True)
    deadline = time.monotonic() + 180
    while not any(_is_simulation(_cmdline(k)) for k in _descendants(proc.pid)):
        assert time.monotonic() < deadline and proc.poll() is None, "the campaign never got going"
        time.sleep(0.1)
    time.sleep(1.0)
    kids = _descendants(proc.pid)
    os.killpg(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=90)
    assert proc.returncode == 143, err.decode(errors="replace")
    deadline = time.monotonic() + 15
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [k for k in kids if _alive(k)]
    assert not list((tmp_path / "t").iterdir())
    rows = list(csv.DictReader((out / "campaign.csv").open()))
    assert {r["status"] for r in rows} == {"interrupted"}


@pytest.mark.parametrize("sig,delay", [(signal.SIGTERM, 0.0), (signal.SIGHUP, 0.0), (signal.SIGTERM, 0.5)])
def test_sweep_dask_signalled_while_its_cluster_starts_leaves_nothing(tmp_path, sig, delay):
    """A signal while the LocalCluster starts (its scratch folder made, its workers not yet up): the
    folder and every process started so far go with the command, which exits 128 + the signal."""
    pytest.importorskip("distributed")
    f = tmp_path / "c.toml"
    f.write_text(CAMPAIGN.format(kth=KTH))
    (tmp_path / "t").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "t")}
    proc = subprocess.Popen([sys.executable, "-m", "burstbuffer", "sweep", str(f), "--output", str(tmp_path / "out"),
                             "--engine", "dask", "--workers", "1", "--cpu", "off", "-q"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, env=env)
    deadline = time.monotonic() + 180
    while not list((tmp_path / "t").glob("burstbuffer-dask-*")):
        assert time.monotonic() < deadline and proc.poll() is None, "the cluster never started"
        time.sleep(0.01)
    time.sleep(delay)
    kids = set(_descendants(proc.pid))
    proc.send_signal(sig)
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        kids.update(_descendants(proc.pid))
        time.sleep(0.05)
    try:
        _, stderr = proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the command did not stop within 120 s of the signal")
    stderr = stderr.decode(errors="replace")
    assert proc.returncode == 128 + sig, stderr
    assert f"sweep interrupted by {sig.name}" in stderr and "Traceback" not in stderr, stderr
    deadline = time.monotonic() + 15
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [(k, _cmdline(k)) for k in kids if _alive(k)]
    assert not list((tmp_path / "t").iterdir()), list((tmp_path / "t").iterdir())


@pytest.mark.parametrize("command", ["sweep", "reproduce"])
def test_local_engine_killed_outright_leaves_no_process(tmp_path, command):
    """SIGKILL to the command (no handler runs): its pool workers, the simulators they run and
    multiprocessing's resource tracker end with it."""
    f = tmp_path / "c.toml"
    f.write_text(CAMPAIGN.format(kth=KTH))
    out = tmp_path / "out"
    argv = (["sweep", str(f)] if command == "sweep" else
            ["reproduce", "--jobs", "1000", "--policies", "sjf-bb,fcfs-bb", "--gantt-jobs", "1"])
    proc, kids = _start([*argv, "--output", str(out), "--engine", "local", "--workers", "2", "--cpu", "off", "-q"],
                        tmp_path)
    kids = set(kids) | set(_descendants(proc.pid))
    assert any("resource_tracker" in _cmdline(k) for k in kids), [_cmdline(k) for k in kids]
    proc.kill()
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 120         # a run interrupted by the parent's death gets 20 s to write
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [(k, _cmdline(k)) for k in kids if _alive(k)]
    for k, _ in left:
        os.kill(k, signal.SIGKILL)
    assert not left, f"processes outlived the command: {left}"
