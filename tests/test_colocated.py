"""`burstbuffer run` with the scheduler in the simulator's process (`burstbuffer.colocated`, the default link)
gives the same schedules and outputs as over pipes, and reports to its parent what a run over pipes reports."""
from __future__ import annotations

import os
import pickle
import signal
import threading

import pytest

from burstbuffer import colocated, pipelink
from burstbuffer.batsim.conformance import ProtocolViolation
from burstbuffer.batsim.loop import BatsimDied
from burstbuffer.errors import InputError
from burstbuffer.runner import run
from burstbuffer.signals import Interrupted

from .conftest import PLATFORM


def test_started_page_keeps_the_last_ids_and_cuts_at_an_id():
    page = colocated.StartedPage.create()
    try:
        assert page.read() == []
        page.write(["w0!1", "w0!2"])
        page.write(["w0!3"])
        assert page.read() == ["w0!3"]
        many = [f"w0!{i}" for i in range(2000)]                # about 16 KB of ids: more than the page
        page.write(many)
        kept = page.read()
        assert 100 < len(kept) < 2000 and kept == many[:len(kept)]
    finally:
        page.close()


@pytest.mark.parametrize("exc", [InputError("w.json", "job 3", "no walltime"),
                                 ProtocolViolation("now", "answer in the past", 7), Interrupted(signal.SIGTERM),
                                 BatsimDied("gone")])
def test_the_errors_a_child_reports_survive_pickling(exc):
    back = pickle.loads(pickle.dumps(colocated.portable(exc)))
    assert type(back) is type(exc) and str(back) == str(exc)
    if isinstance(exc, Interrupted):
        assert back.status == 143


def test_an_error_that_cannot_be_pickled_becomes_one_line():
    class Local(Exception):
        pass
    back = colocated.portable(Local("lost"))
    assert isinstance(back, BatsimDied) and str(back) == "Local: lost"


def _frames(*frames) -> int:
    r, w = os.pipe()
    for f in frames:
        pipelink.write_frame(w, pickle.dumps(f))
    os.close(w)
    return r


def test_supervisor_relays_progress_and_logs_and_returns_the_outcome(caplog):
    seen = []
    end = colocated.Outcome(messages=12, scheduler_cpu=0.5)
    r = _frames(("progress", 3, 10), ("log", 30, "3 profiles have no bb"), ("alive",), ("progress", 10, 10),
                ("end", end))
    with caplog.at_level("WARNING", logger="burstbuffer"):
        got = colocated.Supervisor(r, lambda d, t: seen.append((d, t))).wait(5.0)
    os.close(r)
    assert seen == [(3, 10), (10, 10)]
    assert got.messages == 12 and got.scheduler_cpu == 0.5
    assert [rec.getMessage() for rec in caplog.records] == ["3 profiles have no bb"]


def test_supervisor_without_an_end_frame_returns_none_and_silence_is_batsim_died():
    r = _frames(("progress", 1, 2))
    assert colocated.Supervisor(r, lambda d, t: None).wait(5.0) is None
    os.close(r)
    r, w = os.pipe()
    try:
        with pytest.raises(BatsimDied, match="no message from the simulator for 0.2 s"):
            colocated.Supervisor(r, lambda d, t: None).wait(0.2)
        assert colocated.Supervisor(r, lambda d, t: None).wait(0.2, draining=True) is None
    finally:
        os.close(r)
        os.close(w)


@pytest.mark.slow
@pytest.mark.parametrize("policy, model", [("sjf-bb", "io-aware"), ("fcfs-bb", "alloc-only"),
                                           ("cerberus", "three-phase")])
def test_both_links_give_the_same_outputs(kth_subset, tmp_path, policy, model):
    wl = kth_subset(40)
    results, progress = {}, {}
    for link in ("in-simulator", "pipes"):
        calls = []
        results[link] = run(policy, wl, PLATFORM, tmp_path / link, model=model, progress=False, cpu=None,
                            link=link, on_progress=lambda d, t: calls.append((d, t)))
        progress[link] = calls
    for name in ("jobs.csv", "batsim_jobs.csv", "batsim_machine_states.csv", "bb_occupancy.csv", "run.json"):
        assert (tmp_path / "in-simulator" / name).read_bytes() == (tmp_path / "pipes" / name).read_bytes(), name
    a, b = results["in-simulator"], results["pipes"]
    assert a.messages == b.messages > 40
    assert a.summary == b.summary and a.summary.submitted == 40
    assert progress["in-simulator"][-1] == progress["pipes"][-1] == (40, 40)
    assert a.scheduler_cpu > 0 and b.scheduler_cpu is None


@pytest.mark.slow
def test_an_unknown_link_is_one_line(kth_subset, tmp_path):
    with pytest.raises(InputError, match="--link: sockets: unknown link"):
        run("sjf-bb", kth_subset(5), PLATFORM, tmp_path, link="sockets", progress=False, cpu=None)


def test_supervisor_joins_a_frame_written_in_two_parts():
    import time

    data = b"".join(len(b).to_bytes(4, "little") + b for b in (pickle.dumps(("progress", 1, 2)),
                                                                  pickle.dumps(("end", colocated.Outcome(5)))))
    r, w = os.pipe()

    def write():
        os.write(w, data[:7])                      # the first frame's header and 3 of its bytes
        time.sleep(0.2)
        os.write(w, data[7:])
        os.close(w)
    t = threading.Thread(target=write)
    t.start()
    seen = []
    try:
        got = colocated.Supervisor(r, lambda d, n: seen.append((d, n))).wait(5.0)
    finally:
        t.join()
        os.close(r)
    assert seen == [(1, 2)] and got.messages == 5


class _Quiet:
    """An Exchange handler that decides nothing; `fail` makes it raise."""

    def __init__(self, fail: BaseException | None = None):
        self.last_started: list[str] = []
        self.fail = fail

    def on_event(self, ts, ev, out):
        pass

    def after_events(self, now, out):
        if self.fail is not None:
            raise self.fail


def _transport(handler, deadline=None):
    from types import SimpleNamespace
    r, w = os.pipe()
    os.close(r)                                    # nobody reads the reports: they are dropped
    return colocated.CallTransport(SimpleNamespace(app=handler), check_protocol=True, deadline=deadline,
                                   run_timeout=5.0, reporter=colocated.Reporter(w), page=None), w


def test_call_transport_answers_and_counts():
    t, w = _transport(_Quiet())
    try:
        assert t.request('{"now":1.000000,"events":[]}', 1) == '{"now":1.0,"events":[]}'
        assert t.exchange.n == 1 and t.failure is None and t.cpu >= 0
    finally:
        os.close(w)


def test_call_transport_stops_the_simulation_on_what_ends_a_run():
    from burstbuffer.simulator.state import SimulationError
    import time

    boom = ValueError("policy broke")
    t, w = _transport(_Quiet(boom))
    with pytest.raises(SimulationError, match="the scheduler failed: ValueError: policy broke"):
        t.request('{"now":1.000000,"events":[]}', 1)
    assert t.failure is boom
    with pytest.raises(SimulationError, match="has stopped"):      # nothing is answered after that
        t.request('{"now":2.000000,"events":[]}', 2)
    os.close(w)

    t, w = _transport(_Quiet(), deadline=time.monotonic() - 1)
    with pytest.raises(SimulationError, match="run timeout"):
        t.request('{"now":1.000000,"events":[]}', 1)
    assert isinstance(t.failure, BatsimDied) and "wall-clock limit of 5 s" in str(t.failure)
    os.close(w)

    t, w = _transport(_Quiet())
    previous = signal.signal(signal.SIGHUP, signal.SIG_DFL)
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP})
    try:
        signal.pthread_kill(threading.get_ident(), signal.SIGHUP)
        with pytest.raises(SimulationError, match="interrupted by SIGHUP"):
            t.request('{"now":1.000000,"events":[]}', 1)
        assert isinstance(t.failure, Interrupted) and t.failure.status == 129
    finally:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)           # the pending signal is discarded
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        signal.signal(signal.SIGHUP, previous)
        os.close(w)
