"""`burstbuffer run`'s link between its scheduler and its simulator, a pipe each way (`burstbuffer.pipelink`):
frames survive any size and UTF-8, the simulator's side (`simulator.transport.PipeTransport`) keeps the
contract of its ZeroMQ transports (the answer, or the one-line SimulationError of a silent or gone
scheduler), and the scheduler's side (`batsim.transport.PipeReplySocket`) turns silence and a gone simulator
into TransportTimeout, which the decision loop answers by looking at the process."""
from __future__ import annotations

import os
import threading
import time

import pytest

from burstbuffer import pipelink
from burstbuffer.batsim.loop import BatsimDied, run_loop
from burstbuffer.batsim.transport import PipeReplySocket, TransportTimeout
from burstbuffer.errors import InputError
from burstbuffer.simulator import transport
from burstbuffer.simulator.state import SimConfig, SimulationError


@pytest.fixture
def pipes():
    """(simulator's transport config, scheduler's socket): the two ends of a fresh pipe pair."""
    made = []

    def make(timeout=None, reply_timeout=0.2):
        msg_in, msg_out = os.pipe()
        ans_in, ans_out = os.pipe()
        cfg = SimConfig("p.xml", ["w.json"], socket=pipelink.endpoint(msg_out, ans_in), timeout=timeout)
        sim = transport.connect(cfg)
        sched = PipeReplySocket(msg_in, ans_out, timeout=reply_timeout)
        made.extend([sim, sched])
        return sim, sched

    yield make
    for end in made:
        end.close()


def _serve(sched, answers, close_after=None):
    """Answer each message with the next of `answers` (None: the message upper-cased) in a thread; after
    `close_after` messages, read one more and close without answering."""
    seen = []

    def serve():
        for k in range(len(answers) + 1):
            try:
                raw = sched.recv()
            except TransportTimeout:
                return
            seen.append(raw.decode())
            if close_after is not None and k == close_after:
                sched.close()
                return
            if k < len(answers):
                sched.send((answers[k] or raw.decode().upper()).encode())

    th = threading.Thread(target=serve, daemon=True)
    th.start()
    return th, seen


def test_endpoint_names_two_descriptors():
    assert pipelink.parse_endpoint(pipelink.endpoint(7, 9)) == (7, 9)
    assert pipelink.parse_endpoint("ipc:///tmp/x") is None
    with pytest.raises(ValueError, match="fd://OUT,IN"):
        pipelink.parse_endpoint("fd://7")


def test_frames_of_any_size_and_the_end_of_the_pipe():
    r, w = os.pipe()
    pipelink.write_frame(w, b"")
    assert pipelink.read_frame(r) == b""
    big = "é" * 300_000                                 # far beyond a pipe's buffer: written by a thread
    th = threading.Thread(target=pipelink.write_frame, args=(w, big.encode()))
    th.start()
    assert pipelink.read_frame(r).decode() == big
    th.join(10)
    pipelink.write_frame(w, b"ok")
    pipelink.write_frame(w, b"two")                     # twice without an answer: the link's rule broken
    with pytest.raises(ValueError, match="more than one frame"):
        pipelink.read_frame(r)
    os.write(w, b"\x05\x00\x00\x00ab")                  # a frame cut short: 5 bytes announced, 2 written
    os.close(w)
    with pytest.raises(EOFError, match="3 of 5 bytes missing"):
        pipelink.read_frame(r)
    assert pipelink.read_frame(r) is None               # then the end of the pipe
    os.close(r)


def test_requests_get_their_answers_in_order(pipes):
    sim, sched = pipes(timeout=10)
    th, seen = _serve(sched, [None, "é ok", '{"now": 1.5}'])
    assert isinstance(sim, transport.PipeTransport)
    assert sim.request("hello", 1) == "HELLO"
    assert sim.request("two", 2) == "é ok"
    assert sim.request("x" * 200_000, 3) == '{"now": 1.5}'
    th.join(10)
    assert seen[:3] == ["hello", "two", "x" * 200_000]


def test_no_answer_within_the_timeout(pipes):
    sim, sched = pipes(timeout=0.6)
    th, _ = _serve(sched, [None])
    assert sim.request("a", 1) == "A"
    with pytest.raises(SimulationError, match=r"^no answer from the scheduler on fd://\d+,\d+ within 0\.6 s$"):
        sim.request("b", 2)
    th.join(20)


def test_a_scheduler_that_closes_its_pipe_ends_the_wait(pipes):
    sim, sched = pipes()                                 # no timeout: only the closed pipe ends the wait
    th, _ = _serve(sched, [None], close_after=1)
    assert sim.request("a", 1) == "A"
    with pytest.raises(SimulationError, match=r"closed its pipe without answering message 2$"):
        sim.request("b", 2)
    th.join(20)


@pytest.mark.parametrize("endpoint, reason", [("fd://1", "fd://OUT,IN"), ("fd://990,991", "not open")])
def test_bad_pipe_endpoint_is_input_error(endpoint, reason):
    with pytest.raises(InputError, match=reason):
        transport.connect(SimConfig("p.xml", ["w.json"], socket=endpoint))


def test_silence_and_a_gone_simulator_are_timeouts(pipes):
    sim, sched = pipes(reply_timeout=0.2)
    t0 = time.monotonic()
    with pytest.raises(TransportTimeout, match="no message"):
        sched.recv()
    sim.close()                                          # the simulator's ends: its process is gone
    with pytest.raises(TransportTimeout, match="ended"):
        sched.recv()
    with pytest.raises(TransportTimeout, match="ended"):
        sched.recv()                                     # and stays so, a timeout's wait each time: no spin
    assert time.monotonic() - t0 >= 0.55
    sched.send(b"lost")                                  # an answer to nobody is dropped, as ZeroMQ drops it


def test_the_loop_reports_a_gone_simulator(pipes):
    sim, sched = pipes(reply_timeout=0.05)
    sim.close()

    class Never:
        def on_event(self, *a):
            raise AssertionError("no message came")

        after_events = on_event

    with pytest.raises(BatsimDied, match="exited before SIMULATION_ENDS"):
        run_loop(sched, Never(), alive=lambda: False)
