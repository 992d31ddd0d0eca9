"""How long each time limit and stop path of `run` and `serve` really takes (docs/reliability.md §2).

For a limit S (`--timeout S`) and each way a run can get stuck or be stopped, prints the seconds from the
moment the fault starts (a child stopped, a peer silent, a signal sent) to the command's exit, its exit status,
and the last line of its stderr. Faults: the scheduler in the simulator's process (`run`'s default link) or
the simulator (`--link pipes`) stopped by SIGSTOP; Batsim silent after serve's answer (`serve`); a policy
whose decision loops in Python, or sleeps in C (libc ``sleep``); SIGTERM to `run`; SIGKILL to `run`'s child.
For the policy faults, the policy writes the time it gets stuck to a file, and the figure runs from then.

    python benchmarks/limit_latency.py [--timeout 2] [--repeat 1]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KTH = ROOT / "workloads" / "kth-1000.json"

POLICIES = textwrap.dedent('''
    import ctypes
    import os
    import time
    from burstbuffer.schedulers import FcfsBB


    def stuck_from_now():
        with open(os.environ["BB_STUCK_AT"], "w") as f:
            f.write(repr(time.time()))


    class LoopsInPython(FcfsBB):
        def decide(self, now):
            if now > 0:
                stuck_from_now()
                while True:
                    time.sleep(0.01)
            return super().decide(now)


    class SleepsInC(FcfsBB):
        def decide(self, now):
            if now > 0:
                stuck_from_now()
                ctypes.CDLL(None).sleep(1000)
            return super().decide(now)
''')


def _children(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            for t in Path(f"/proc/{p}/task").iterdir():
                kids = [int(k) for k in (t / "children").read_text().split()]
                out += kids
                todo += kids
        except OSError:
            pass
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _last_line(text: str) -> str:
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return lines[-1][:160] if lines else ""


def _run_cmd(tmp: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "burstbuffer", "run", "--workload", str(tmp / "w.json"), "--output",
            str(tmp / f"o{time.monotonic_ns()}"), "--cpu", "off", "-q", *args]


def _env(tmp: Path) -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp)]), BB_STUCK_AT=str(tmp / "stuck-at"))


def timed(cmd: list[str], env: dict) -> tuple[float, int, str]:
    """Run `cmd`: seconds from the time its policy wrote to BB_STUCK_AT (if it did; else from the start) to
    its exit."""
    stamp = Path(env["BB_STUCK_AT"])
    stamp.unlink(missing_ok=True)
    t0 = time.time()
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    end = time.time()
    start = float(stamp.read_text()) if stamp.exists() else t0
    return end - start, r.returncode, _last_line(r.stderr)


def child_fault(cmd: list[str], env: dict, child: str, action) -> tuple[float, int, str]:
    """Start `cmd`, wait for a descendant whose command line holds `child`, 1 s more, apply `action(proc,
    child pid)`; seconds from then to the exit."""
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    pid = None
    while pid is None and time.monotonic() < deadline and proc.poll() is None:
        pid = next((k for k in _children(proc.pid) if child in _cmdline(k)), None)
        time.sleep(0.05)
    if pid is None:
        proc.kill()
        return float("nan"), proc.wait(), f"no {child} process seen"
    time.sleep(1.0)
    t0 = time.monotonic()
    action(proc, pid)
    _, err = proc.communicate(timeout=900)
    wall = time.monotonic() - t0
    try:
        os.kill(pid, signal.SIGKILL)      # a stopped child that outlived the command
    except OSError:
        pass
    return wall, proc.returncode, _last_line(err)


def silent_batsim(timeout: float) -> tuple[float, int, str]:
    """serve, a peer that sends SIMULATION_BEGINS and then nothing: seconds from serve's answer to its exit."""
    import zmq
    sys.path.insert(0, str(ROOT))
    from burstbuffer.simulator import free_tcp_endpoint
    capture = ROOT / "tests" / "data" / "batsim-4.2.1" / "protocol-full-run.jsonl"
    begins = next(json.loads(json.loads(x)["raw"]) for x in capture.read_text().splitlines()
                  if json.loads(x)["dir"] == "batsim->scheduler" and "SIMULATION_BEGINS" in x)
    endpoint = free_tcp_endpoint()
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.Popen([sys.executable, "-m", "burstbuffer", "serve", "--policy", "fcfs-bb",
                                 "--model", "alloc-only",
                                 "--bb-capacity", "40GB", "--socket", endpoint, "--output", out,
                                 "--timeout", str(timeout),
                                 "-q"],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ctx = zmq.Context()
        sock = ctx.socket(zmq.REQ)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.RCVTIMEO, 300_000)   # serve starts slowly on a loaded machine
        sock.connect(endpoint)
        sock.send_string(json.dumps(begins))
        try:
            sock.recv()
        except zmq.Again:
            proc.kill()
        t0 = time.monotonic()
        _, err = proc.communicate(timeout=900)
        wall = time.monotonic() - t0
        sock.close(linger=0)
        ctx.term()
    return wall, proc.returncode, _last_line(err)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeout", type=float, default=2.0, help="the limit S given as --timeout (default 2)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", metavar="WORD", help="only the cases whose name holds WORD")
    a = ap.parse_args()
    s = f"{a.timeout:g}"
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        (tmp / "limitpolicies.py").write_text(POLICIES)
        w = json.loads(KTH.read_text())
        (tmp / "w.json").write_text(json.dumps(w))
        env = _env(tmp)
        stop = lambda proc, pid: os.kill(pid, signal.SIGSTOP)  # noqa: E731
        cases = {
            "decision loops in Python":
                lambda: timed(_run_cmd(tmp, "--policy", "limitpolicies:LoopsInPython", "--timeout", s), env),
            "decision sleeps in C":
                lambda: timed(_run_cmd(tmp, "--policy", "limitpolicies:SleepsInC", "--timeout", s), env),
            "run: its child (scheduler + simulator) SIGSTOPped":
                lambda: child_fault(_run_cmd(tmp, "--policy", "fcfs-bb", "--timeout", s), env,
                                    "burstbuffer.colocated", stop),
            "run --link pipes: the simulator SIGSTOPped":
                lambda: child_fault(_run_cmd(tmp, "--policy", "fcfs-bb", "--timeout", s, "--link", "pipes"), env,
                                    "burstbuffer.simulator", stop),
            "run: SIGTERM to run":
                lambda: child_fault(_run_cmd(tmp, "--policy", "fcfs-bb", "--timeout", s), env,
                                    "burstbuffer.colocated", lambda proc, pid: proc.send_signal(signal.SIGTERM)),
            "run: its child SIGKILLed":
                lambda: child_fault(_run_cmd(tmp, "--policy", "fcfs-bb", "--timeout", s), env,
                                    "burstbuffer.colocated", lambda proc, pid: os.kill(pid, signal.SIGKILL)),
            "serve: Batsim silent after SIMULATION_BEGINS":
                lambda: silent_batsim(a.timeout),
        }
        print(f"--timeout {s}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
        for name, case in cases.items():
            if a.only and a.only not in name:
                continue
            for _ in range(a.repeat):
                wall, status, line = case()
                print(f"{name:52s} {wall:7.1f} s  exit {status:3d}  {line}", flush=True)


if __name__ == "__main__":
    threading.current_thread().name = "limit_latency"
    main()
