"""`burstbuffer run` ends cleanly on SIGTERM, SIGINT and SIGHUP, and never leaves its simulator behind."""
from __future__ import annotations

import csv
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import start_run

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

ROOT = Path(__file__).resolve().parents[1]


def _alive(pid: int) -> bool:
    """True if `pid` exists and is not a zombie."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    state = next(line for line in status.splitlines() if line.startswith("State:"))
    return "Z" not in state.split()[1]


def _start_run(out: Path, link: str = "in-simulator", **popen) -> tuple[subprocess.Popen, int, bytes]:
    """`conftest.start_run` over `link`, its stdout on a pipe."""
    return start_run(out, "--link", link, stdout=subprocess.PIPE, **popen)


@pytest.mark.parametrize("sig, link, to", [(signal.SIGTERM, "in-simulator", "run"), (signal.SIGINT, "in-simulator", "run"),
                                          (signal.SIGHUP, "in-simulator", "run"), (signal.SIGTERM, "pipes", "run"),
                                          (signal.SIGINT, "in-simulator", "group"),
                                          (signal.SIGTERM, "in-simulator", "child")])
def test_signal_ends_run_with_outputs(tmp_path, sig, link, to):
    """`to`: the signal is sent to the run, to its process group (Ctrl-C in a terminal: the run and its child
    both get it) or to the child alone."""
    out = tmp_path / "out"
    proc, child, seen = _start_run(out, link, start_new_session=True)
    if to == "run":
        proc.send_signal(sig)
    elif to == "group":
        os.killpg(proc.pid, sig)
    else:
        os.kill(child, sig)
    stdout, stderr = proc.communicate(timeout=120)
    stdout, stderr = stdout.decode(), (seen + stderr).decode(errors="replace")
    assert proc.returncode == 128 + sig, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert "jobs submitted" in stdout                       # the summary was printed
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the simulator outlived the run"
    rows = list(csv.DictReader((out / "jobs.csv").open()))
    states = {r["final_state"] for r in rows}
    assert rows and len({r["job_id"] for r in rows}) == len(rows)
    assert "COMPLETED_SUCCESSFULLY" in states
    assert states & {"RUNNING", "PENDING"}, "unfinished jobs are not marked"
    assert "" not in states


@pytest.mark.parametrize("link", ["in-simulator", "pipes"])
def test_killed_parent_takes_its_simulator_along(tmp_path, link):
    proc, child, _ = _start_run(tmp_path / "out", link)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the simulator is orphaned"


def test_a_simulation_killed_outright_is_one_line_naming_the_jobs_being_started(tmp_path):
    """The child (scheduler and simulator in one process) dies as a SimGrid abort would: the run reports it in
    one line, with the jobs of the scheduler's last EXECUTE_JOBs, read from the page the child kept."""
    proc, child, seen = _start_run(tmp_path / "out")
    os.kill(child, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=120)
    err = [ln for ln in (seen + stderr).decode(errors="replace").replace("\r", "\n").splitlines()
           if ln.startswith("burstbuffer")]
    assert proc.returncode == 1, err
    assert len(err) == 1 and "process (the simulator and the policy) was killed by SIGKILL" in err[0], err
    assert re.search(r"while executing w0\S*!\d+", err[0]), err
