"""Test-only schedulers for the embedded simulator, speaking Batsim's protocol v4 over ZeroMQ (they bind
the REP socket; the simulator connects). Run as a separate process:

    python tests/sim_sched.py fcfs ENDPOINT [--log FILE] [--kill JOB_ID@SECONDS] [--think SECONDS]
    python tests/sim_sched.py replay ENDPOINT CAPTURE.jsonl --log FILE
    python tests/sim_sched.py idle ENDPOINT

``fcfs``: start jobs in submission order on the lowest free compute ids, stop at the first that does not
fit, reject jobs larger than the platform; a machine made unavailable by an external event (NOTIFY
event_machine_unavailable) is given no job until it is available again (NOTIFY event_machine_available);
with ``--call-on-event``, every generic event (another NOTIFY) gets a CALL_ME_LATER one second later;
with ``--finish-registration``, NOTIFY registration_finished answers no_more_static_job_to_submit (dynamic
jobs enabled, none registered). ``--kill J@D`` asks for a CALL_ME_LATER D seconds after job J
starts and then kills it; ``--think S`` answers with ``now`` + S (events at that time); ``--oversize``
gives every job one machine too many (a protocol violation).
``replay``: answers each message with the recorded scheduler reply of a captured Batsim run (same order),
to compare the simulator's messages with real Batsim's.
``idle``: never decides anything (the simulator must report a deadlock).
``--log FILE`` writes every message received, one JSON line each ({"raw": ...}).
"""
from __future__ import annotations

import argparse
import json
import sys

import zmq
from procset import ProcSet


def serve(endpoint: str, answer, log_path: str | None) -> None:
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(endpoint)
    log = open(log_path, "w") if log_path else None
    try:
        while True:
            raw = sock.recv_string()
            if log:
                log.write(json.dumps({"raw": raw}) + "\n")
                log.flush()
            msg = json.loads(raw)
            reply, done = answer(msg, raw)
            sock.send_string(reply)
            if done:
                break
    finally:
        if log:
            log.close()
        sock.close(0)
        ctx.term()


class Fcfs:
    def __init__(self, kill: list[str], think: float, oversize: bool = False, call_on_event: bool = False,
                 finish_registration: bool = False):
        self.finish_registration = finish_registration
        self.oversize = oversize
        self.free = ProcSet()
        self.n = 0
        self.queue: list[dict] = []
        self.running: dict[str, ProcSet] = {}
        self.kill = dict(k.split("@") for k in kill)
        self.to_kill: list[tuple[float, str]] = []
        self.think = think
        self.unavailable = ProcSet()
        self.call_on_event = call_on_event

    def __call__(self, msg, raw):
        now = msg["now"]
        t = now + self.think
        out, done = [], False
        for ev in msg["events"]:
            typ, d = ev["type"], ev["data"]
            if typ == "SIMULATION_BEGINS":
                self.free = ProcSet(*[r["id"] for r in d["compute_resources"]])
                self.n = len(self.free)
            elif typ == "JOB_SUBMITTED":
                job = d["job"]
                if job["res"] > self.n:
                    out.append({"timestamp": t, "type": "REJECT_JOB", "data": {"job_id": d["job_id"]}})
                else:
                    self.queue.append(job)
            elif typ == "JOB_COMPLETED":
                self.free |= self.running.pop(d["job_id"]) - self.unavailable
            elif typ == "NOTIFY" and d["type"] == "event_machine_unavailable":
                gone = ProcSet.from_str(d["resources"])
                self.unavailable |= gone
                self.free -= gone
            elif typ == "NOTIFY" and d["type"] == "event_machine_available":
                back = ProcSet.from_str(d["resources"])
                self.unavailable -= back
                busy = ProcSet(*[i for a in self.running.values() for i in a])
                self.free |= back - busy
            elif typ == "NOTIFY" and d["type"] == "no_more_static_job_to_submit" and self.finish_registration:
                out.append({"timestamp": t, "type": "NOTIFY", "data": {"type": "registration_finished"}})
            elif typ == "NOTIFY" and self.call_on_event and d["type"] not in ("no_more_static_job_to_submit",
                                                                                "no_more_external_event_to_occur"):
                out.append({"timestamp": t, "type": "CALL_ME_LATER", "data": {"timestamp": t + 1}})
            elif typ == "REQUESTED_CALL":
                due = [j for (w, j) in self.to_kill if w <= now + 1e-9]
                self.to_kill = [(w, j) for (w, j) in self.to_kill if w > now + 1e-9]
                due = [j for j in due if j in self.running]
                if due:
                    out.append({"timestamp": t, "type": "KILL_JOB", "data": {"job_ids": due}})
            elif typ == "SIMULATION_ENDS":
                done = True
        while self.queue and self.queue[0]["res"] <= len(self.free):
            job = self.queue.pop(0)
            alloc = ProcSet(*list(self.free)[: job["res"] + (1 if self.oversize else 0)])
            self.free -= alloc
            self.running[job["id"]] = alloc
            out.append({"timestamp": t, "type": "EXECUTE_JOB", "data": {"job_id": job["id"], "alloc": str(alloc)}})
            if job["id"] in self.kill:
                when = t + float(self.kill[job["id"]])
                self.to_kill.append((when, job["id"]))
                out.append({"timestamp": t, "type": "CALL_ME_LATER", "data": {"timestamp": when}})
        return json.dumps({"now": t, "events": out}), done


class Idle:
    """Answers every message with no decision (a scheduler that never starts anything)."""

    def __call__(self, msg, raw):
        done = any(e["type"] == "SIMULATION_ENDS" for e in msg["events"])
        return json.dumps({"now": msg["now"], "events": []}), done


class Replay:
    def __init__(self, capture: str):
        rows = [json.loads(line) for line in open(capture)]
        self.replies = [r["raw"] for r in rows if r["dir"] == "scheduler->batsim"]
        self.i = 0

    def __call__(self, msg, raw):
        reply = self.replies[self.i]
        self.i += 1
        done = any(e["type"] == "SIMULATION_ENDS" for e in msg["events"])
        return reply, done


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("fcfs", "replay", "idle"))
    p.add_argument("endpoint")
    p.add_argument("capture", nargs="?")
    p.add_argument("--log")
    p.add_argument("--kill", action="append", default=[])
    p.add_argument("--think", type=float, default=0.0)
    p.add_argument("--oversize", action="store_true", help="allocate one machine too many (protocol error)")
    p.add_argument("--call-on-event", action="store_true", help="a CALL_ME_LATER 1 s after each generic event")
    p.add_argument("--finish-registration", action="store_true",
                   help="NOTIFY registration_finished when no more static job is to come")
    a = p.parse_args()
    if a.mode == "fcfs":
        answer = Fcfs(a.kill, a.think, a.oversize, a.call_on_event, a.finish_registration)
    elif a.mode == "idle":
        answer = Idle()
    else:
        answer = Replay(a.capture)
    serve(a.endpoint, answer, a.log)
    return 0


if __name__ == "__main__":
    sys.exit(main())


# ------------------------------------------------------------------------------ helpers for the tests
REPO = __import__("pathlib").Path(__file__).resolve().parent.parent
SELF = __import__("pathlib").Path(__file__).resolve()


class RunResult:
    """What one simulator run left: exit status, stderr, messages the scheduler received (parsed), the
    rows of PREFIX_jobs.csv (dicts, file order) and of PREFIX_schedule.csv."""

    def __init__(self, returncode, stderr, messages, prefix):
        import csv
        import os

        self.returncode, self.stderr, self.messages, self.prefix = returncode, stderr, messages, prefix
        self.jobs, self.jobs_header, self.schedule = [], None, None
        if os.path.exists(f"{prefix}_jobs.csv"):
            with open(f"{prefix}_jobs.csv", newline="") as f:
                r = csv.DictReader(f)
                self.jobs, self.jobs_header = list(r), r.fieldnames
        if os.path.exists(f"{prefix}_schedule.csv"):
            with open(f"{prefix}_schedule.csv", newline="") as f:
                self.schedule = list(csv.DictReader(f))

    def events(self, etype=None):
        return [(m["now"], e) for m in self.messages for e in m["events"] if etype is None or e["type"] == etype]

    def job(self, name):
        return next(r for r in self.jobs if r["job_id"] == str(name))


def run_simulation(tmp_path, workload, *, platform=None, scheduler=("fcfs",), sim_args=(), timeout=120,
                   scheduler_cmd=None, quiet=True) -> RunResult:
    """Run a test scheduler (``sim_sched.py SCHEDULER...``, or `scheduler_cmd` with ``{endpoint}``) and the
    simulator (with -q if `quiet`) against each other over loopback TCP; `workload` is a dict or a path."""
    import os
    import subprocess

    from burstbuffer.simulator import free_tcp_endpoint

    platform = str(platform or REPO / "platforms" / "dragonfly96.xml")
    endpoint = free_tcp_endpoint()
    log = tmp_path / "messages.jsonl"
    if isinstance(workload, dict):
        path = tmp_path / "workload.json"
        path.write_text(json.dumps(workload))
        workload = path
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if scheduler_cmd is None:
        cmd = [sys.executable, str(SELF), scheduler[0], endpoint, *scheduler[1:], "--log", str(log)]
    else:
        cmd = [c.format(endpoint=endpoint) for c in scheduler_cmd]
    sched = subprocess.Popen(cmd, cwd=str(REPO), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
    prefix = str(tmp_path / "out")
    try:
        sim = subprocess.run([sys.executable, "-m", "burstbuffer.simulator", "-p", platform, "-w", str(workload),
                              "-e", prefix, "-s", endpoint, *(["-q"] if quiet else []), "--timeout", "60",
                              *sim_args],
                             cwd=str(REPO), env=env, capture_output=True, text=True, timeout=timeout)
        if sim.returncode != 0:  # the scheduler still waits for a message that will never come
            sched.kill()
        try:
            _, sched_err = sched.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            sched.kill()
            _, sched_err = sched.communicate()
    finally:
        if sched.poll() is None:
            sched.kill()
            sched.wait()
    messages = []
    if log.exists():
        messages = [json.loads(json.loads(line)["raw"]) for line in log.read_text().splitlines() if line]
    res = RunResult(sim.returncode, sim.stderr, messages, prefix)
    res.scheduler_returncode, res.scheduler_stderr = sched.returncode, sched_err
    return res


def run_in_process(tmp_path, workload: dict, argv_extra=(), *, platform=None, before: str = "", after: str = "",
                   env=None, timeout=120):
    """Run ``burstbuffer.simulator.cli.main`` in a fresh ``python -c`` process against a ``fcfs`` test
    scheduler (this file's), on `workload` (written to ``tmp_path/w.json``) and `platform` (default
    ``platforms/dragonfly96.xml``), with `argv_extra` options; `before` is Python run before the simulator is imported (to
    inject a fault), `after` after ``main`` returned, with its status as ``status``. `env`: extra
    environment variables. Returns the ``subprocess.CompletedProcess`` (text output)."""
    import os
    import subprocess

    from burstbuffer.simulator import free_tcp_endpoint

    path = tmp_path / "w.json"
    path.write_text(json.dumps(workload))
    ep = free_tcp_endpoint()
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""), **(env or {}))
    sched = subprocess.Popen([sys.executable, str(SELF), "fcfs", ep], cwd=str(REPO), env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    argv = ["-p", str(platform or REPO / "platforms" / "dragonfly96.xml"), "-w", str(path), "-e", str(tmp_path / "out"),
            "-s", ep, "-q", "--timeout", "60", *argv_extra]
    probe = f"import sys\n{before}\nfrom burstbuffer.simulator.cli import main\nstatus = main({argv!r})\n{after}\n"
    try:
        return subprocess.run([sys.executable, "-c", probe], cwd=str(REPO), env=env, capture_output=True,
                              text=True, timeout=timeout)
    finally:
        if sched.poll() is None:
            sched.kill()
        sched.wait()
