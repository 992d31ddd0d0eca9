"""Orders and queues beside a real Batsim 4.2.1 and the embedded simulator (docs/protocol.md).

`burstbuffer serve --order wfp` (and `--queues` with the bundled Mira-like file; and the window policy
`weighted` with the wfp base order) beside the real Batsim
binary on the first KTH jobs must give the same per-job starts as `burstbuffer run` with the embedded
simulator; the queue limits must hold in both jobs.csv. Skips when the binary or its compiled
platform is absent (a plain clone has neither)."""
from __future__ import annotations

import csv
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from burstbuffer.schedulers.queues import load_queues
from burstbuffer.serve import batsim_command, storage_hosts

from .test_orders import max_held

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("BATSIM_421_DIR", Path.home() / ".cache" / "batsim-4.2.1"))
BATSIM = CACHE / "build" / "batsim"
SO = CACHE / "platforms" / "dragonfly96_sg332.so"
QUEUES = ROOT / "workloads" / "mira-like-queues.toml"
N_JOBS = 200

pytestmark = [pytest.mark.batsim,   # test tier (setup.cfg markers; docs/testing.md)
              pytest.mark.skipif(not (BATSIM.is_file() and SO.is_file()),
                                reason=f"no real Batsim 4.2.1 at {BATSIM} (set BATSIM_421_DIR to the folder holding build/batsim and platforms/dragonfly96_sg332.so)")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rows(path: Path) -> dict[str, dict]:
    with open(path, newline="") as f:
        return {r["job_id"]: r for r in csv.DictReader(f)}


def _cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "burstbuffer.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=600, **kw)


@pytest.mark.parametrize("policy, extra", [
    ("fcfs-bb", ["--order", "wfp"]),
    ("sjf-bb", ["--queues", QUEUES]),
    ("weighted", ["--order", "wfp"]),       # a window policy under the wfp base order (Fan et al. 2019 §3)
])
def test_real_batsim_and_embedded_simulator_agree(policy, extra, kth_subset, tmp_path):
    wl = kth_subset(N_JOBS)
    emb = tmp_path / "embedded"
    r = _cli("run", "--policy", policy, *extra, "--model", "alloc-only", "--workload", wl, "--output", emb, "-q")
    assert r.returncode == 0, r.stderr

    port = _free_port()
    real = tmp_path / "real"
    srv = subprocess.Popen([sys.executable, "-m", "burstbuffer.cli", "serve", "--policy", policy, *map(str, extra),
                            "--model", "alloc-only", "--socket", f"tcp://127.0.0.1:{port}", "--bb-capacity", "40GB",
                            "--output", str(real), "--timeout", "300", "-q"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        hosts, _ = storage_hosts(str(SO), None)
        cmd = batsim_command(str(SO), str(wl), str(tmp_path / "batsim" / "out"), f"tcp://127.0.0.1:{port}",
                             hosts, False)
        (tmp_path / "batsim").mkdir()
        bat = subprocess.run([str(BATSIM), *cmd[1:]], capture_output=True, text=True, timeout=600)
        out, err = srv.communicate(timeout=120)
    finally:
        if srv.poll() is None:
            srv.kill()
    assert bat.returncode == 0, bat.stderr[-2000:]
    assert srv.returncode == 0, err

    a, b = _rows(emb / "jobs.csv"), _rows(real / "jobs.csv")
    assert a.keys() == b.keys() and len(a) == N_JOBS
    for jid in a:
        for col in ("final_state", "starting_time", "allocated_resources", "queue", "priority"):
            assert a[jid][col] == b[jid][col], (jid, col, a[jid][col], b[jid][col])
    if "--queues" in extra:
        cfg = load_queues(QUEUES)
        for rows in (a, b):
            for q in cfg.queues:
                ev = []
                for r in rows.values():
                    if r["queue"] == q.name and r["starting_time"]:
                        n = int(r["requested_number_of_resources"])
                        ev += [(float(r["starting_time"]), n), (float(r["finish_time"]), -n)]
                assert max_held(ev) <= q.cap(96), q.name
