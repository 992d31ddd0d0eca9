"""Batsim 4.2.1's order for job messages posted at the same clock value (docs/batsim-fidelity.md §2),
without a real Batsim: the case of issue 19 on the embedded simulator alone (SimGrid's own wake-up order,
now that the simulator's actors are Batsim's)."""
from __future__ import annotations

import pytest

from . import batsim_diff as B

pytestmark = [pytest.mark.slow, pytest.mark.batsim]   # test tier (setup.cfg markers; docs/testing.md)


def test_fillersched_tie_on_embedded_simulator(tmp_path):
    """fillerSched, first 30 KTH jobs, cluster96: w0!20 (started 5547.005) and w0!22 (started 5549.005) end
    at 5563.005; as in real Batsim 4.2.1, w0!20 is reported first, at 5563.00515, then w0!22 at 5563.0053."""
    pytest.importorskip("batsim.batsim", reason="pybatsim 3.2.1 is not installed (test extra)")
    pytest.importorskip("docopt", reason="docopt (a pybatsim requirement) is not installed")
    wl = B.kth_subset(tmp_path / "kth.json", 30)
    run = B.run_one(tmp_path, "embedded", B.embedded_cmd(B.CLUSTER, wl), B.pybatsim_cmd("fillerSched"))
    assert run.returncode == 0, run.stderr
    msg = next(m for d, m in run.messages if d == "B2S" and any(
        e["type"] == "JOB_COMPLETED" and e["data"]["job_id"] == "w0!22" for e in m["events"]))
    assert msg["now"] == 5563.0053
    assert [(e["data"]["job_id"], e["timestamp"]) for e in msg["events"]] == [("w0!20", 5563.00515),
                                                                               ("w0!22", 5563.0053)]
