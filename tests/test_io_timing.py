"""Hand-computed I/O times in the embedded simulator (docs/protocol.md, docs/platform.md, docs/io-model.md):
data staging over the shared PFS link, checkpoints bound by the BB node's link. Static jobs with I/O profiles
are started by a scripted scheduler (this test process) with chosen allocations and storage mappings, over real
ZeroMQ."""
from __future__ import annotations

import csv
import json
import subprocess
import threading

import pytest
from procset import ProcSet

from burstbuffer.batsim.protocol import ExecuteJob, JobSubmitted, SimulationBegins
from burstbuffer.batsim.loop import run_loop
from burstbuffer.batsim.conformance import CheckedTransport
from burstbuffer.batsim.transport import ReplySocket
from burstbuffer.simulator import command

from .conftest import PLATFORM

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

PFS_BW, LINK_BW = 5000e6, 1250e6        # docs/platform.md: PFS link 5 GB/s (100 µs), links 1250 MB/s (50 µs)
PFS_LAT = 100e-6


class Scripted:
    """Starts each job at submission on `plan[job] = (host names, storage mapping label → host name)`."""

    def __init__(self, plan):
        self.plan, self.ids = plan, {}

    def on_event(self, ts, ev, out):
        if isinstance(ev, SimulationBegins):
            self.ids = {r["name"]: r["id"] for r in ev.data["compute_resources"] + ev.data["storage_resources"]}
        elif isinstance(ev, JobSubmitted):
            hosts, mapping = self.plan[ev.job_id]
            out.add(ExecuteJob(ev.job_id, ProcSet(*[self.ids[h] for h in hosts]),
                               storage_mapping={k: self.ids[v] for k, v in mapping.items()} or None), ts)

    def after_events(self, now, out):
        pass


def simulate(tmp_path, profiles, jobs):
    """jobs: [(id, profile, hosts, storage mapping)], all submitted at t = 10 s. Returns {id: execution time}."""
    wl = {"nb_res": 96, "profiles": profiles,
          "jobs": [{"id": i, "subtime": 10, "walltime": 1000, "res": len(h), "profile": p} for i, p, h, _ in jobs]}
    (tmp_path / "w.json").write_text(json.dumps(wl))
    endpoint = f"ipc://{tmp_path}/s"
    sock = ReplySocket(endpoint, timeout=0.5)
    proc = subprocess.Popen(command(str(PLATFORM), str(tmp_path / "w.json"), export_prefix=str(tmp_path / "o"),
                                    socket_endpoint=endpoint), stderr=subprocess.PIPE)
    try:
        run_loop(CheckedTransport(sock), Scripted({f"w0!{i}": (h, m) for i, _, h, m in jobs}), alive=lambda: proc.poll() is None,
                 timeout=60)
        assert proc.wait(60) == 0, proc.stderr.read()
    finally:
        sock.close()
        if proc.poll() is None:
            proc.kill()
    with open(tmp_path / "o_jobs.csv") as f:
        return {int(r["job_id"]): float(r["execution_time"]) for r in csv.DictReader(f)}


STAGE = lambda n: {"type": "data_staging", "nb_bytes": n, "from": "source", "to": "destination"}  # noqa: E731


def test_one_stage_in_alone_takes_bytes_over_pfs_bandwidth_plus_latency(tmp_path):
    t = simulate(tmp_path, {"s": STAGE(5 * 10**9)},
                 [(1, "s", ["node_0", "pfs"], {"source": "pfs", "destination": "node_0"})])
    assert t[1] == pytest.approx(5e9 / PFS_BW + PFS_LAT, rel=1e-6)


def test_two_concurrent_stage_ins_share_the_pfs_link(tmp_path):
    t = simulate(tmp_path, {"s": STAGE(5 * 10**9)},
                 [(1, "s", ["node_0", "pfs"], {"source": "pfs", "destination": "node_0"}),
                  (2, "s", ["node_99", "pfs"], {"source": "pfs", "destination": "node_99"})])
    # both flows cross only the 5 GB/s PFS link (docs/platform.md): each gets half of it
    assert t[1] == pytest.approx(2 * 5e9 / PFS_BW + PFS_LAT, rel=1e-6)
    assert t[2] == pytest.approx(t[1], rel=1e-9)


def test_drain_and_stage_out_direction_cost_the_same(tmp_path):
    t = simulate(tmp_path, {"s": STAGE(2 * 10**9)},
                 [(1, "s", ["node_9", "pfs"], {"source": "node_9", "destination": "pfs"})])
    assert t[1] == pytest.approx(2e9 / PFS_BW + PFS_LAT, rel=1e-6)


def test_checkpoint_of_several_nodes_into_one_bb_node_is_bound_by_its_link(tmp_path):
    ck = {"type": "parallel_homogeneous_pfs", "bytes_to_read": 0, "bytes_to_write": 1250 * 10**6,
          "storage": "burstbuffer"}
    # node_1 and node_2 share node_0's router: each flow crosses its own up-link and node_0's down-link
    one = simulate(tmp_path / "a" if (tmp_path / "a").mkdir() is None else None, {"c": ck},
                   [(1, "c", ["node_1"], {"burstbuffer": "node_0"})])
    two = simulate(tmp_path / "b" if (tmp_path / "b").mkdir() is None else None, {"c": ck},
                   [(1, "c", ["node_1", "node_2"], {"burstbuffer": "node_0"})])
    assert one[1] == pytest.approx(1250e6 / LINK_BW, rel=1e-3)          # 1 s (+ 100 µs of latency)
    assert two[1] == pytest.approx(2 * 1250e6 / LINK_BW, rel=1e-3)      # the BB node's link is shared
