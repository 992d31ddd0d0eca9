"""`burstbuffer serve` against a hostile Batsim: raw pyzmq messages that are well-formed JSON but break the
protocol (docs/faults.md, docs/reliability.md). Each ends in one bounded line and exit status 1, or in a
consistent jobs.csv; never a traceback, never a hang. The peer runs in a thread of this process, `serve_spec`
in the main thread (its signal handlers need it); the CLI's own line and status are checked in a subprocess."""
from __future__ import annotations

import copy
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pandas as pd
import pytest
import zmq
from hypothesis import HealthCheck, given, settings, strategies as st

from burstbuffer.batsim.protocol import JOB_STATES
from burstbuffer.cli import main
from burstbuffer.errors import InputError
from burstbuffer.serve import ServeOutcome, serve_spec
from burstbuffer.simulator import free_tcp_endpoint
from burstbuffer.spec import make_spec

from .conftest import CAPTURE_DIR

ROOT = Path(__file__).resolve().parents[1]
CAPTURE = CAPTURE_DIR / "protocol-full-run.jsonl"


def _begins() -> dict:
    """The SIMULATION_BEGINS event of a real Batsim 4.2.1 run (96 compute, 13 storage machines), without
    dynamic jobs (the alloc-only model)."""
    for line in CAPTURE.read_text().splitlines():
        r = json.loads(line)
        msg = json.loads(r["raw"])
        if r["dir"] == "batsim->scheduler" and msg["events"][0]["type"] == "SIMULATION_BEGINS":
            ev = msg["events"][0]
            ev["data"]["config"]["dynamic-jobs-enabled"] = False
            return ev
    raise AssertionError("no SIMULATION_BEGINS in the capture")


BEGINS = _begins()


def ev(t, kind, **data) -> dict:
    return {"timestamp": t, "type": kind, "data": data}


def submit(t, job_id, res=4, **job) -> dict:
    return ev(t, "JOB_SUBMITTED", job_id=job_id,
              job={"id": job_id, "subtime": t, "walltime": 1000, "res": res, "profile": "p", **job},
              profile={"type": "delay", "delay": 10, "bb": 0})


def msg(now, *events) -> dict:
    return {"now": now, "events": list(events)}


def ends(now) -> dict:
    return msg(now, ev(now, "SIMULATION_ENDS"))


def drive(out: Path, messages: list, *, strict: bool = False, timeout: float = 60.0):
    """Serve `messages` (dicts, or bytes sent as they are) from a raw ZeroMQ REQ peer, in order, until serve
    stops answering; return (serve_spec's outcome, or the InputError it raised; the answers). A serve that has
    not returned 300 s after the peer's last message is sent SIGTERM (then its status is 143: a hang)."""
    endpoint = free_tcp_endpoint()
    answers: list[dict] = []
    done = threading.Event()

    def peer() -> None:
        ctx = zmq.Context()
        sock = ctx.socket(zmq.REQ)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(endpoint)
        try:
            for m in messages:
                sock.send(m if isinstance(m, bytes) else json.dumps(m).encode())
                while not sock.poll(100):
                    if done.is_set():                  # serve stopped without answering
                        return
                answers.append(json.loads(sock.recv()))
        finally:
            sock.close(linger=0)
            ctx.term()
            if not done.wait(300):
                os.kill(os.getpid(), signal.SIGTERM)

    spec = make_spec("sjf-bb", job_model="alloc-only")
    thread = threading.Thread(target=peer, daemon=True)
    thread.start()
    try:
        res = serve_spec(spec, out, socket=endpoint, bb_capacity="40GB", timeout=timeout, check_protocol=strict)
    except InputError as exc:
        res = exc
    finally:
        done.set()
        thread.join(60)
    return res, answers


def one_line(outcome: ServeOutcome) -> str:
    assert isinstance(outcome, ServeOutcome), outcome
    line = outcome.message
    assert "\n" not in line and 0 < len(line) < 2100, line[:500]
    return line


def started(answers) -> list[str]:
    return [e["data"]["job_id"] for a in answers for e in a["events"] if e["type"] == "EXECUTE_JOB"]


# ---------------------------------------------------------------- SIMULATION_ENDS with jobs unfinished
def test_simulation_ends_while_jobs_run_or_wait_is_status_1_and_both_are_in_jobs_csv(tmp_path):
    out = tmp_path / "o"
    res, answers = drive(out, [msg(0.0, BEGINS), msg(1.0, submit(1.0, "w0!1", res=4)),
                               msg(2.0, submit(2.0, "w0!2", res=96)),   # 92 nodes free: waits
                               ends(3.0)])
    assert started(answers) == ["w0!1"]
    assert res.status == 1
    assert one_line(res) == ("Batsim sent SIMULATION_ENDS with 1 job running and 1 pending: written RUNNING / "
                             "PENDING in jobs.csv")
    jobs = pd.read_csv(out / "jobs.csv", dtype=str)
    assert dict(zip(jobs.job_id, jobs.final_state)) == {"1": "RUNNING", "2": "PENDING"}


def test_simulation_ends_after_every_job_ended_is_status_0(tmp_path):
    out = tmp_path / "o"
    res, answers = drive(out, [msg(0.0, BEGINS), msg(1.0, submit(1.0, "w0!1", res=4)),
                               msg(11.0, ev(11.0, "JOB_COMPLETED", job_id="w0!1", job_state="COMPLETED_SUCCESSFULLY",
                                            alloc="0-3")), ends(20.0)])
    assert res.status == 0, res.message
    assert list(pd.read_csv(out / "jobs.csv").final_state) == ["COMPLETED_SUCCESSFULLY"]


# ---------------------------------------------------------------- huge resource ids
@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "check-protocol"])
@pytest.mark.parametrize("rid", [10**20, 10**9, -1, "3", 2.0, "x", None])
def test_a_resource_id_out_of_range_is_one_line_and_builds_nothing(tmp_path, rid, strict):
    begins = copy.deepcopy(BEGINS)
    begins["data"]["compute_resources"][5]["id"] = rid
    res, answers = drive(tmp_path / "o", [msg(0.0, begins)], strict=strict)
    assert answers == [] and res.status == 1
    line = one_line(res)
    assert line.startswith("malformed SIMULATION_BEGINS (resource id ") and str(rid)[:10] in line, line


def test_a_resource_id_given_twice_is_one_line(tmp_path):
    begins = copy.deepcopy(BEGINS)
    begins["data"]["compute_resources"][5]["id"] = begins["data"]["compute_resources"][4]["id"]
    res, _ = drive(tmp_path / "o", [msg(0.0, begins)])
    assert res.status == 1 and "a second time" in one_line(res)


# ---------------------------------------------------------------- huge job ids: bounded excerpts
HUGE = "\x1b" + "j" * 5_000_000
#: the longest job id a workload may hold (longer ones are refused at submission, below): a duplicate of it is
#: still quoted bounded
LONG = "\x1b" + "j" * 990


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "check-protocol"])
@pytest.mark.parametrize("fault", ["submitted twice", "unknown job completed"])
def test_a_huge_job_id_is_quoted_bounded(tmp_path, caplog, fault, strict):
    first = [msg(0.0, BEGINS), msg(1.0, submit(1.0, "w0!" + LONG))] if fault == "submitted twice" else \
        [msg(0.0, BEGINS)]
    bad = msg(2.0, submit(2.0, "w0!" + LONG)) if fault == "submitted twice" else \
        msg(2.0, ev(2.0, "JOB_COMPLETED", job_id="w0!" + HUGE, job_state="COMPLETED_SUCCESSFULLY", alloc="0-3"))
    with caplog.at_level(logging.WARNING, logger="burstbuffer"):
        res, answers = drive(tmp_path / "o", [*first, bad, ends(3.0)], strict=strict)
    if strict:
        assert res.status == 1 and len(answers) == len(first)
        line = one_line(res)
    else:
        assert len(answers) == len(first) + 2      # answered, then SIMULATION_ENDS
        line = next(r.getMessage() for r in caplog.records if "broke the protocol" in r.getMessage())
    assert len(line) < 1000 and "\x1b" not in line and "jjjj" in line, line[:300]
    assert all(len(r.getMessage()) < 2000 for r in caplog.records)


def test_a_huge_submitted_job_id_is_refused_in_one_bounded_line(tmp_path):
    res, answers = drive(tmp_path / "o", [msg(0.0, BEGINS), msg(1.0, submit(1.0, "w0!" + HUGE)), ends(2.0)])
    line = one_line(res)
    assert res.status == 1 and len(answers) == 1, line[:300]
    assert "longer than" in line and len(line) < 1000 and "\x1b" not in line, line[:300]


# ---------------------------------------------------------------- wrong values and types
BAD_MESSAGES = {
    "string now": ({"now": "3", "events": []}, "now '3' is not a number"),
    "string timestamp": (msg(3.0, ev("3", "REQUESTED_CALL")), "timestamp '3' is not a number"),
    "boolean now": ({"now": True, "events": []}, "now True is not a number"),
    "job_state BOGUS": (msg(3.0, ev(3.0, "JOB_COMPLETED", job_id="w0!1", job_state="BOGUS", alloc="0-3")),
                        "job_state 'BOGUS' is not one of"),
    "malformed alloc": (msg(3.0, ev(3.0, "JOB_COMPLETED", job_id="w0!1", job_state="COMPLETED_SUCCESSFULLY",
                                    alloc="zz-" + "z" * 10000)), "alloc 'zz-zzz"),
    "string return_code": (msg(3.0, ev(3.0, "JOB_COMPLETED", job_id="w0!1", job_state="COMPLETED_FAILED",
                                       alloc="0-3", return_code="1")), "return_code '1' is not an integer"),
    "job_id is not job.id": (msg(3.0, {**submit(3.0, "w0!2"), "data": {**submit(3.0, "w0!2")["data"],
                                                                       "job_id": "w0!3"}}),
                             "job.id 'w0!2' differs from job_id 'w0!3'"),
    "string res": (msg(3.0, submit(3.0, "w0!2", res="4")), "malformed JOB_SUBMITTED for job w0!2: bad job "
                                                            "description (field 'res'"),
}


@pytest.mark.parametrize("fault", list(BAD_MESSAGES))
def test_a_malformed_message_is_one_line_and_status_1(tmp_path, fault):
    bad, said = BAD_MESSAGES[fault]
    out = tmp_path / "o"
    res, answers = drive(out, [msg(0.0, BEGINS), msg(1.0, submit(1.0, "w0!1")), bad, ends(20.0)])
    assert len(answers) == 2, answers           # the malformed message is not answered
    assert res.status == 1
    line = one_line(res)
    assert said in line and "\x1b" not in line, line
    assert list(pd.read_csv(out / "jobs.csv", dtype=str).final_state) == ["RUNNING"]   # the outputs so far


def _serve_cli(tmp_path, *args):
    return subprocess.Popen([sys.executable, "-m", "burstbuffer", "serve", "--policy", "sjf-bb", "--model",
                             "alloc-only", "--bb-capacity", "40GB", "--output", str(tmp_path / "o"), "-q", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["string res", "ends early"])
def test_the_cli_says_one_line_and_exits_1(tmp_path, fault):
    """docs/faults.md: a malformed Batsim message (wrong-typed JOB_SUBMITTED fields included) and a
    SIMULATION_ENDS with jobs unfinished exit with status 1, one line on stderr."""
    endpoint = free_tcp_endpoint()
    proc = _serve_cli(tmp_path, "--socket", endpoint, "--timeout", "120")
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 120_000)
    sock.connect(endpoint)
    try:
        for m in [msg(0.0, BEGINS), msg(1.0, submit(1.0, "w0!1"))]:
            sock.send_string(json.dumps(m))
            sock.recv()
        sock.send_string(json.dumps(BAD_MESSAGES["string res"][0] if fault == "string res" else ends(5.0)))
        _, stderr = proc.communicate(timeout=120)
    finally:
        sock.close(linger=0)
        ctx.term()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr and stderr.count("\n") == 1, stderr
    assert stderr.startswith("burstbuffer serve: ")
    assert ("bad job description" if fault == "string res" else "1 job running and 0 pending") in stderr


# ---------------------------------------------------------------- the socket's address
@pytest.mark.parametrize("endpoint", ["tcp://127.0.0.1:99999", "tcp://127.0.0.1:0x10", "tcp://127.0.0.1",
                                      "udp://127.0.0.1:5"])
def test_a_socket_address_that_cannot_be_bound_as_given_is_refused(tmp_path, capsys, endpoint):
    assert main(["serve", "--socket", endpoint, "--output", str(tmp_path / "o"), "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "argument --socket" in err, err
    assert not (tmp_path / "o").exists()
    with pytest.raises(InputError, match="--socket"):
        serve_spec(make_spec("sjf-bb"), tmp_path / "o", socket=endpoint)


# ---------------------------------------------------------------- any hostile sequence (Hypothesis)
def _begins_with(rid) -> dict:
    begins = copy.deepcopy(BEGINS)
    begins["data"]["compute_resources"][0]["id"] = rid
    return begins


#: SIMULATION_BEGINS as sent, and with a resource id out of range or of the wrong type
BEGINS_VARIANTS = [BEGINS, BEGINS, BEGINS, _begins_with(10**20), _begins_with("x"), _begins_with(None)]
IDS = ["w0!1", "w0!2", "w0!3", "w0!" + "x" * 3000, "w1!1", "!", "w0!\x1b"]
STATES = sorted(JOB_STATES) + ["BOGUS"]


@st.composite
def hostile_event(draw, t: float) -> dict:
    kind = draw(st.sampled_from(["submit", "submit", "complete", "complete", "killed", "call", "notify",
                                 "unknown", "state", "begins", "ends"]))
    ts = draw(st.sampled_from([t, t, max(t - 5.0, 0.0), t + 3.0]))     # sometimes in the past or after now
    job_id = draw(st.sampled_from(IDS))
    if kind == "submit":
        e = submit(ts, job_id, res=draw(st.sampled_from([1, 4, 96, 97, 0, "4", 2.5])),
                   walltime=draw(st.sampled_from([1000, -1, 0, 5, "x"])))
        if draw(st.booleans()):
            e["data"]["job"]["id"] = draw(st.sampled_from(IDS))
        return e
    if kind == "complete":
        return ev(ts, "JOB_COMPLETED", job_id=job_id, job_state=draw(st.sampled_from(STATES)),
                  alloc=draw(st.sampled_from(["0-3", "0-95", "", "zz", "5 7-9"])),
                  return_code=draw(st.sampled_from([0, 1, -9, "0"])))
    if kind == "killed":
        return ev(ts, "JOB_KILLED", job_ids=draw(st.lists(st.sampled_from(IDS), max_size=3)))
    if kind == "call":
        return ev(ts, "REQUESTED_CALL")
    if kind == "notify":
        return ev(ts, "NOTIFY", type=draw(st.sampled_from(["no_more_static_job_to_submit", "x", "",
                                                           "no_more_external_event_to_occur"])))
    if kind == "unknown":
        return ev(ts, draw(st.sampled_from(["SOMETHING", "\x07" * 500])), x=1)
    if kind == "state":
        return ev(ts, "RESOURCE_STATE_CHANGED", resources=draw(st.sampled_from(["0-3", "zz"])), state="1")
    if kind == "begins":
        return draw(st.sampled_from(BEGINS_VARIANTS))
    return ev(ts, "SIMULATION_ENDS")


@st.composite
def hostile_run(draw) -> list[dict]:
    """SIMULATION_BEGINS, then messages of hostile events (now sometimes going backwards or a string), then
    SIMULATION_ENDS."""
    messages = [msg(0.0, draw(st.sampled_from(BEGINS_VARIANTS)))]
    t = 0.0
    for _ in range(draw(st.integers(1, 8))):
        t = draw(st.sampled_from([t, t + 1.0, t + 50.0, max(t - 2.0, 0.0)]))
        events = [draw(hostile_event(t)) for _ in range(draw(st.integers(0, 3)))]
        now = draw(st.sampled_from([t, t, t, str(t), -1.0]))
        messages.append(msg(now, *events))
    messages.append(ends(t + 1e4))
    return messages


def _submitted_ids(messages) -> set[str]:
    return {e["data"]["job_id"] for m in messages for e in m["events"]
            if e["type"] == "JOB_SUBMITTED" and isinstance(e["data"]["job_id"], str)}


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("BB_HOSTILE_EXAMPLES", "60")), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(messages=hostile_run(), strict=st.booleans())
def test_any_hostile_sequence_gives_one_line_or_a_consistent_jobs_csv(messages, strict):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "o"
        logging.getLogger("burstbuffer").setLevel(logging.ERROR)    # the lenient warnings: not this test's
        res, answers = drive(out, messages, strict=strict)
        assert isinstance(res, ServeOutcome), res                   # no InputError: the options are fine
        assert res.status in (0, 1), (res.status, res.message)      # 124: no message for 60 s; 143: a hang
        if res.status:
            one_line(res)
        else:
            assert len(answers) == len(messages) or any(
                e["type"] == "SIMULATION_ENDS" for m in messages[:len(answers)] for e in m["events"])
        jobs = pd.read_csv(out / "jobs.csv", dtype={"job_id": str, "workload_name": str, "final_state": str})
        ids = [f"{w}!{j}" for w, j in zip(jobs.workload_name.fillna(""), jobs.job_id.fillna(""))]
        assert len(set(ids)) == len(ids)
        assert set(ids) <= _submitted_ids(messages)
        assert set(jobs.final_state) <= JOB_STATES | {"RUNNING", "PENDING"}
        if res.status == 0:                 # ended cleanly: every job has its final state
            assert set(jobs.final_state) <= JOB_STATES, res
        ran = jobs.starting_time.notna()
        assert (jobs.starting_time[ran] >= jobs.submission_time[ran]).all()
        ended = jobs.finish_time.notna()
        assert (jobs.finish_time[ended] >= jobs.starting_time[ended]).all()
