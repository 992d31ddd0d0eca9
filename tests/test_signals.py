"""`burstbuffer run` ends cleanly on SIGTERM, SIGINT and SIGHUP, and never leaves its simulator behind."""
from __future__ import annotations

import csv
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import KTH1000

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

ROOT = Path(__file__).resolve().parents[1]


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            kids += [int(k) for k in (task / "children").read_text().split()]
        except OSError:
            pass
    return kids


def _alive(pid: int) -> bool:
    """True if `pid` exists and is not a zombie."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    state = next(line for line in status.splitlines() if line.startswith("State:"))
    return "Z" not in state.split()[1]


def _start_run(out: Path, link: str = "in-process", **popen) -> tuple[subprocess.Popen, int, bytes]:
    """A `burstbuffer run` of the bundled 1000 jobs over `link`; returns it once its simulator child runs and
    its progress bar shows jobs started, with the child's PID and the stderr read so far."""
    env = dict(os.environ, BURSTBUFFER_PROGRESS="always")      # the bar on a pipe too (logs.progress_bar)
    proc = subprocess.Popen([sys.executable, "-m", "burstbuffer", "run", "--cpu", "off", "--workload",
                             str(KTH1000), "--output", str(out), "--link", link], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, env=env, **popen)
    seen = b""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 0.5)
        if ready:
            chunk = os.read(proc.stderr.fileno(), 65536)
            if not chunk:
                break
            seen += chunk
            kids = _children(proc.pid)
            if kids and re.search(rb"\s[1-9]\d*/1000", seen):     # tqdm: "sjf-bb: 12%| | 120/1000"
                return proc, kids[0], seen
    proc.kill()
    pytest.fail("the run never got going: " + seen[-300:].decode(errors="replace"))


@pytest.mark.parametrize("sig, link, to", [(signal.SIGTERM, "in-process", "run"), (signal.SIGINT, "in-process", "run"),
                                          (signal.SIGHUP, "in-process", "run"), (signal.SIGTERM, "pipes", "run"),
                                          (signal.SIGINT, "in-process", "group"),
                                          (signal.SIGTERM, "in-process", "child")])
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


@pytest.mark.parametrize("link", ["in-process", "pipes"])
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
    assert len(err) == 1 and "simulator aborted (SIGKILL)" in err[0], err
    assert re.search(r"while executing w0\S*!\d+", err[0]), err
