"""`burstbuffer serve`: the scheduler alone beside an external Batsim — the embedded simulator started from
the batsim command line serve prints, and a hand-written fake Batsim (a ZeroMQ REQ client) for faults."""
import json
import shlex
import signal
import subprocess
import sys
import time

import pandas as pd
from pathlib import Path

import pytest
import zmq

from burstbuffer.runner import run
from burstbuffer.session import CHECK_PROTOCOL_ENV
from burstbuffer.serve import batsim_command, connect_endpoint, storage_hosts
from burstbuffer.simulator import free_tcp_endpoint

from .conftest import CAPTURE_DIR, PLATFORM

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

CAPTURE = CAPTURE_DIR / "protocol-full-run.jsonl"
BB_NODES = "node_0,node_9,node_18,node_27,node_36,node_45,node_54,node_63,node_72,node_81,node_90,node_99"


def _serve(*args, stdout=subprocess.PIPE):
    return subprocess.Popen([sys.executable, "-m", "burstbuffer.cli", "serve", *map(str, args)],
                            stdout=stdout, stderr=subprocess.PIPE, text=True)


def test_serve_beside_the_embedded_simulator_gives_the_same_schedule_as_run(kth_subset, tmp_path):
    wl = kth_subset(40)
    ref = run("sjf-bb", wl, PLATFORM, tmp_path / "run", model="io-aware", progress=False, timeout=60)

    endpoint = free_tcp_endpoint()
    srv = _serve("--policy", "sjf-bb", "--socket", endpoint, "--output", tmp_path / "serve", "--workload", wl,
                 "--platform", PLATFORM, "--export", tmp_path / "serve" / "batsim", "--timeout", 60, "-q")
    printed = []
    for line in srv.stdout:          # serve prints the batsim command line once it listens
        printed.append(line)
        if line.strip().startswith("batsim "):
            break
    argv = shlex.split(printed[-1])
    assert argv[0] == "batsim" and f"{BB_NODES}:storage" in argv and argv[argv.index("-s") + 1] == endpoint
    assert "--enable-dynamic-jobs" in argv and "--enable-profile-reuse" in argv
    # the embedded simulator takes Batsim's options: run the printed command with it in place of batsim
    sim = subprocess.run([sys.executable, "-m", "burstbuffer.simulator", *argv[1:], "-q"], capture_output=True,
                         text=True, timeout=120)
    out, err = srv.communicate(timeout=60)
    assert sim.returncode == 0, sim.stderr
    assert srv.returncode == 0, err
    a = pd.read_csv(ref.jobs_csv, dtype=str)
    b = pd.read_csv(tmp_path / "serve" / "jobs.csv", dtype=str)
    assert list(a.job_id) == list(b.job_id)
    assert list(a.starting_time) == list(b.starting_time) and list(a.finish_time) == list(b.finish_time)
    pd.testing.assert_frame_equal(a, b)
    assert str(ref.summary) in out                     # the same summary as `run`
    assert (tmp_path / "serve" / "batsim_jobs.csv").is_file()


def test_printed_command_follows_model_platform_and_storage(tmp_path):
    hosts, src = storage_hosts(str(PLATFORM), None)
    assert ",".join(hosts) == BB_NODES and src == str(PLATFORM)
    hosts, src = storage_hosts(str(tmp_path / "dragonfly96_sg332.so"), None)   # not XML: the bundled list
    assert ",".join(hosts) == BB_NODES and "bundled" in src
    assert storage_hosts(None, "a,b")[0] == ["a", "b"]
    assert connect_endpoint("tcp://*:28000") == "tcp://localhost:28000"
    assert connect_endpoint("tcp://0.0.0.0:5") == "tcp://localhost:5"
    assert connect_endpoint("ipc:///tmp/x") == "ipc:///tmp/x"
    cmd = batsim_command("p.so", "w.json", "out/x", "tcp://localhost:28000", ["n0", "n9"], False)
    assert cmd == ["batsim", "-p", "p.so", "-w", "w.json", "-e", "out/x", "-s", "tcp://localhost:28000",
                   "-r", "n0,n9:storage"]


# ------------------------------------------------------------------ a fake Batsim for faults
def _captured(kind):
    for line in CAPTURE.read_text().splitlines():
        r = json.loads(line)
        msg = json.loads(r["raw"])
        if r["dir"] == "batsim->scheduler" and msg["events"][0]["type"] == kind:
            return msg


class FakeBatsim:
    """Batsim's side by hand: a REQ socket that sends messages from the real capture (alloc-only:
    no dynamic jobs) and returns the answers."""

    def __init__(self, endpoint):
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.REQ)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.setsockopt(zmq.RCVTIMEO, 120000)   # serve starts slowly on a busy machine
        self.sock.connect(endpoint)

    def send(self, now, *events):
        self.sock.send_string(json.dumps({"now": now, "events": list(events)}))
        return json.loads(self.sock.recv_string())

    def begin_and_submit(self):
        begins = _captured("SIMULATION_BEGINS")["events"][0]
        begins["data"]["config"]["dynamic-jobs-enabled"] = False
        begins["data"]["config"]["profile-reuse-enabled"] = False
        assert self.send(0.0, begins)["events"] == []
        submitted = _captured("JOB_SUBMITTED")      # w0!15: 4 nodes, submitted at t = 1
        answer = self.send(1.0, *submitted["events"])
        assert [e["type"] for e in answer["events"]] == ["EXECUTE_JOB"]
        return answer["events"][0]["data"]

    def close(self):
        self.sock.close(linger=0)
        self.ctx.term()


@pytest.fixture
def fake(tmp_path):
    """(serve process, FakeBatsim, output folder); `start(timeout)` launches them."""
    made = []

    def start(timeout=60):
        endpoint = free_tcp_endpoint()
        proc = _serve("--policy", "sjf-bb", "--model", "alloc-only", "--bb-capacity", "40GB", "--socket", endpoint,
                      "--output", tmp_path / "o", "--timeout", timeout, "-q")
        made.append(proc)
        fb = FakeBatsim(endpoint)
        made.append(fb)
        return proc, fb, tmp_path / "o"

    yield start
    for x in made:
        if isinstance(x, FakeBatsim):
            x.close()
        elif x.poll() is None:
            x.kill()
            x.wait()


def test_unknown_event_is_logged_and_ignored_and_simulation_ends_exits_0(fake):
    proc, fb, out = fake()
    fb.send(0.0, *_captured("SIMULATION_BEGINS")["events"])   # dynamic jobs on (unused by alloc-only)
    assert fb.send(0.5, {"timestamp": 0.5, "type": "SOMETHING_NEW", "data": {"x": 1}}) == {"now": 0.5, "events": []}
    sub = _captured("JOB_SUBMITTED")
    answer = fb.send(1.0, *sub["events"])
    ex = [e for e in answer["events"] if e["type"] == "EXECUTE_JOB"][0]["data"]
    fb.send(100.0, {"timestamp": 100.0, "type": "JOB_COMPLETED",
                    "data": {"job_id": "w0!15", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0,
                             "alloc": ex["alloc"]}},
            {"timestamp": 100.0, "type": "NOTIFY", "data": {"type": "no_more_static_job_to_submit"}})
    assert fb.send(200.0, {"timestamp": 200.0, "type": "SIMULATION_ENDS", "data": {}}) == {"now": 200.0, "events": []}
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert "ignoring unknown Batsim event type 'SOMETHING_NEW'" in stderr
    assert "-w WORKLOAD.json" in stdout and "--enable-dynamic-jobs" not in stdout      # alloc-only
    assert "jobs submitted         1\n  completed            1" in stdout
    jobs = pd.read_csv(out / "jobs.csv")
    assert list(jobs.final_state) == ["COMPLETED_SUCCESSFULLY"]
    assert jobs.starting_time[0] == 1.0 and jobs.finish_time[0] == 100.0


def test_silent_batsim_ends_serve_after_the_timeout(fake):
    proc, fb, out = fake(timeout=2)
    fb.begin_and_submit()
    t0 = time.monotonic()                      # then Batsim says nothing more
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 124                # a time limit ended it, as timeout(1)
    assert 1.5 < time.monotonic() - t0 < 60
    assert stderr.strip().splitlines()[-1] == "burstbuffer serve: no message from Batsim for 2 s"
    assert "Traceback" not in stderr and "jobs submitted         1" in stdout
    jobs = pd.read_csv(out / "jobs.csv")      # the outputs so far: the started job, not ended
    assert list(jobs.job_id) == [15] and list(jobs.final_state) == ["RUNNING"] and "unfinished           1" in stdout


def test_dead_batsim_is_noticed_long_before_the_timeout(fake):
    proc, fb, out = fake(timeout=120)
    fb.begin_and_submit()
    t0 = time.monotonic()
    fb.close()                                 # Batsim's process is gone: its connection closes
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1
    assert time.monotonic() - t0 < 60                # the timeout is 120 s
    assert "closed its connection before SIMULATION_ENDS" in stderr and "Traceback" not in stderr
    assert list(pd.read_csv(out / "jobs.csv").job_id) == [15]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_sigint_flush_the_outputs_so_far(fake, sig):
    proc, fb, out = fake()
    fb.begin_and_submit()
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig
    assert f"interrupted by {sig.name}" in stderr and "Traceback" not in stderr
    assert "jobs submitted         1" in stdout and "unfinished           1" in stdout
    jobs = pd.read_csv(out / "jobs.csv")
    assert list(jobs.job_id) == [15] and list(jobs.final_state) == ["RUNNING"]


def test_bad_policy_and_busy_socket_are_one_line_errors(tmp_path):
    r = _serve("--policy", "nope", "--output", tmp_path, "-q")
    _, err = r.communicate(timeout=120)
    assert r.returncode == 2 and "unknown policy" in err and err.strip().count("\n") == 0
    endpoint = free_tcp_endpoint()
    ctx = zmq.Context()
    busy = ctx.socket(zmq.REP)
    busy.bind(endpoint)
    try:
        r = _serve("--policy", "fcfs", "--socket", endpoint, "--output", tmp_path, "-q")
        _, err = r.communicate(timeout=120)
    finally:
        busy.close(linger=0)
        ctx.term()
    assert r.returncode == 2 and "cannot bind" in err and "Traceback" not in err


def _listening_addresses(port: int) -> set[str]:
    """Local IPv4 addresses with a TCP socket listening on `port` (from /proc/net/tcp)."""
    out = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, _, state = line.split()[1:4]
        addr, p = local.split(":")
        if int(p, 16) == port and state == "0A":     # 0A: LISTEN
            out.add(".".join(str(int(addr[i:i + 2], 16)) for i in (6, 4, 2, 0)))
    return out


def test_serve_binds_to_loopback_by_default(tmp_path):
    from burstbuffer.serve import DEFAULT_SOCKET
    port = int(DEFAULT_SOCKET.rsplit(":", 1)[1])
    if _listening_addresses(port):
        pytest.skip(f"port {port} is in use")
    proc = _serve("--policy", "fcfs", "--output", tmp_path, "-q", "--timeout", "20")
    try:
        line = proc.stdout.readline()
        assert "listening on tcp://127.0.0.1:28000" in line
        assert _listening_addresses(port) == {"127.0.0.1"}
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


def _completed(t, job_id):
    return {"timestamp": t, "type": "JOB_COMPLETED",
            "data": {"job_id": job_id, "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": "0-3"}}


#: Batsim messages that break the protocol, sent after w0!15 was submitted (t = 1) and started.
PEER_FAULTS = {
    "unknown job completed": (5.0, [_completed(5.0, "w0!999")], "w0!999, which is not executing"),
    "now goes backwards": (0.5, [], "now = 0.5 is earlier than the previous message's 1.0"),
    "submitted twice": (2.0, lambda: _captured("JOB_SUBMITTED")["events"], "w0!15, which was already submitted"),
    "event after now": (2.0, [_completed(3.0, "w0!15")], "timestamp 3.0 is after now = 2.0"),
}


@pytest.mark.parametrize("strict", [True, False], ids=["check-protocol", "lenient"])
@pytest.mark.parametrize("fault", list(PEER_FAULTS))
def test_a_batsim_that_breaks_the_protocol(fake, monkeypatch, fault, strict):
    """Under --check-protocol (here: the environment variable) a protocol error of Batsim ends serve with one
    line and status 1; without it, a logged warning, and serving goes on."""
    monkeypatch.setenv(CHECK_PROTOCOL_ENV, "1" if strict else "0")
    proc, fb, out = fake()
    fb.begin_and_submit()
    now, events, said = PEER_FAULTS[fault]
    events = events() if callable(events) else events
    if strict:
        fb.sock.setsockopt(zmq.RCVTIMEO, 5000)
        with pytest.raises(zmq.Again):     # serve stops without answering
            fb.send(now, *events)
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 1
        assert "Traceback" not in stderr
        assert stderr.strip().splitlines()[-1].startswith("burstbuffer serve: protocol error from Batsim: ")
        assert said in stderr
    else:
        fb.send(now, *events)
        if fault != "event after now":        # w0!15 ends, so that SIMULATION_ENDS leaves no job running
            fb.send(max(now, 10.0), _completed(max(now, 10.0), "w0!15"))
        fb.send(max(now, 10.0), {"timestamp": max(now, 10.0), "type": "SIMULATION_ENDS", "data": {}})
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 0, stderr
        assert "Batsim broke the protocol" in stderr and said in stderr
    assert (out / "jobs.csv").exists()
