"""`simulate` facing a scheduler that disconnects mid-run ends with one line (issue 26, item 5) instead of
waiting forever (no --timeout given)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import zmq
import pytest

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

ROOT = Path(__file__).resolve().parents[1]


def test_simulate_ends_when_the_scheduler_disconnects(tmp_path):
    endpoint = f"ipc://{tmp_path}/s.sock"
    ctx = zmq.Context()
    rep = ctx.socket(zmq.REP)
    rep.setsockopt(zmq.LINGER, 0)
    rep.bind(endpoint)
    proc = subprocess.Popen([sys.executable, "-m", "burstbuffer", "simulate", "-p", "platforms/dragonfly96.xml",
                             "-w", "workloads/kth-1000.json", "-e", str(tmp_path / "out"), "-s", endpoint, "-q"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert rep.poll(120_000), "the simulator never sent SIMULATION_BEGINS"
        rep.recv()
        rep.close(0)                       # the scheduler goes away without answering
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        ctx.term()
    assert proc.returncode != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "disconnected" in lines[0] and "message 1" in lines[0], err
