"""Batsim 4.2.1's order for job messages posted at the same clock value (docs/batsim-fidelity.md §2),
without a real Batsim: the rule itself, and the case of issue 19 on the embedded simulator alone."""
from __future__ import annotations

import pytest

from burstbuffer.simulator.fidelity import CompletionOrder

from . import batsim_diff as B

pytestmark = [pytest.mark.slow, pytest.mark.batsim]   # test tier (setup.cfg markers; docs/testing.md)


def test_same_clock_messages_in_activity_start_order():
    order = CompletionOrder()
    a, b, c, d = object(), object(), object(), object()
    for job in (a, b, c, d):   # activities started in this order
        order.started(job)
    posts = [(5.0, c), (5.0, a), (5.0, b), (6.0, d)]
    i = order.pick(posts)
    assert posts[i][1] is a        # same clock: the earliest started first
    del posts[i]
    assert posts[order.pick(posts)][1] is b


def test_earlier_clock_wins_over_start_order():
    order = CompletionOrder()
    a, b = object(), object()
    order.started(a)
    order.started(b)
    posts = [(4.0, b), (4.0 + 1e-12, a)]   # b posted first at an earlier clock value: FIFO holds
    assert order.pick(posts) == 0


def test_restarted_activity_counts_from_its_new_start():
    order = CompletionOrder()
    a, b = object(), object()
    order.started(a)
    order.started(b)
    order.started(a)   # a's next activity (a composed profile) starts after b's
    assert order.pick([(1.0, a), (1.0, b)]) == 1


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
