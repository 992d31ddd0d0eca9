"""The simulator's link to the scheduler (`burstbuffer.simulator.transport`): its two implementations —
on libzmq's C API (compiled) and on pyzmq — keep one contract: the answer to a request, and the same
one-line SimulationError when no answer comes within the timeout or the scheduler disconnects; a bad
endpoint is InputError. The compiled cases skip where its module cannot be built."""
from __future__ import annotations

import threading

import pytest
import zmq

from burstbuffer.errors import InputError
from burstbuffer.simulator import _bridge, transport
from burstbuffer.simulator.state import SimConfig, SimulationError


def _compiled(cfg):
    try:
        module = transport.load_native()
    except _bridge.NativeUnavailable as exc:
        pytest.skip(f"compiled transport unavailable: {exc}")
    return transport.CompiledTransport(cfg, module)


MAKERS = {"compiled": _compiled, "pyzmq": transport.PyZmqTransport}


@pytest.fixture(params=sorted(MAKERS))
def make(request):
    return MAKERS[request.param]


def _cfg(endpoint, **kw):
    return SimConfig("p.xml", ["w.json"], socket=endpoint, **kw)


def _scheduler(endpoint, answers, close_after=None):
    """A REP socket in a thread: answers each request with the next of `answers` (upper-cased request when
    None); after `close_after` requests, receives one more and closes without answering."""
    ctx = zmq.Context()
    rep = ctx.socket(zmq.REP)
    rep.setsockopt(zmq.LINGER, 0)
    rep.bind(endpoint)
    seen = []

    def serve():
        try:
            for k in range(len(answers) + 1):
                if not rep.poll(10_000):
                    return
                msg = rep.recv_string()
                seen.append(msg)
                if close_after is not None and k == close_after:
                    return
                if k < len(answers):
                    rep.send_string(answers[k] if answers[k] is not None else msg.upper())
        finally:
            rep.close(0)
            ctx.term()

    th = threading.Thread(target=serve, daemon=True)
    th.start()
    return th, seen


def test_requests_get_their_answers_in_order(tmp_path, make):
    endpoint = f"ipc://{tmp_path}/s.sock"
    th, seen = _scheduler(endpoint, [None, "é ok", '{"now": 1.5}'])
    t = make(_cfg(endpoint, timeout=10))
    try:
        assert t.request("hello", 1) == "HELLO"
        assert t.request("two", 2) == "é ok"                  # UTF-8 both ways
        assert t.request("x" * 200_000, 3) == '{"now": 1.5}'  # a long message
    finally:
        t.close()
    th.join(10)
    assert seen[:3] == ["hello", "two", "x" * 200_000]


def test_no_answer_within_the_timeout(tmp_path, make):
    endpoint = f"ipc://{tmp_path}/s.sock"
    th, _ = _scheduler(endpoint, [None])
    t = make(_cfg(endpoint, timeout=0.6))
    try:
        assert t.request("a", 1) == "A"
        with pytest.raises(SimulationError, match=r"^no answer from the scheduler on ipc://.* within 0\.6 s$"):
            t.request("b", 2)                                  # the scheduler keeps it, never answers
    finally:
        t.close()
    th.join(20)


def test_a_scheduler_that_disconnects_ends_the_wait(tmp_path, make):
    endpoint = f"ipc://{tmp_path}/s.sock"
    th, _ = _scheduler(endpoint, [None], close_after=1)
    t = make(_cfg(endpoint, disconnect_grace=0.3))           # no timeout: only the disconnection ends it
    try:
        assert t.request("a", 1) == "A"
        with pytest.raises(SimulationError, match=r"disconnected .* without answering message 2$"):
            t.request("b", 2)
    finally:
        t.close()
    th.join(20)


def test_bad_endpoint_is_input_error(make):
    with pytest.raises(InputError, match="nonsense://x"):
        make(_cfg("nonsense://x"))
