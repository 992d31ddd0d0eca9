"""The scheduler process's CPU on a KTH prefix and on the whole trace (sjf-bb, io-aware by default).

Two ways, the second for a busy machine. *Runs*: each run is `burstbuffer.runner.run` in a fresh Python
process, pinned to one core as `run` does, over `run`'s ``--link``. Over ``pipes`` the scheduler is that
process (its own rusage; the simulator is its child: the children's rusage). ``in-simulator`` (the default, as
`run`'s) puts the scheduler in the simulator's process: its CPU is then the CPU time of its answers
(`RunResult.scheduler_cpu`, the thread's clock around each answer) and the simulator's is the rest of that
process; the parent's own CPU (it only shows the progress) is printed beside. Printed per run and as the
median of `--repeat` runs: the scheduler's CPU (over pipes, user + system over the whole process and its part
inside the decision loop, from SIMULATION_BEGINS being answered to the end: without Python start-up, imports
and jobs.csv), the simulator's CPU, wall time, and the machine with its load average before and after, since
the machine may be shared (CPU seconds are the figures to compare; wall times only with the load).

    .venv/bin/python benchmarks/bench_sched_cpu.py                      # 5000 jobs, 3 runs; whole trace, 1 run
    .venv/bin/python benchmarks/bench_sched_cpu.py --jobs 5000 --repeat 3 --whole 0
    .venv/bin/python benchmarks/bench_sched_cpu.py --jobs 0 --whole 3   # whole trace only, median of 3
    .venv/bin/python benchmarks/bench_sched_cpu.py --profile out.prof --jobs 5000 --whole 0   # + cProfile

*Replays* (the simulator's part of a whole-trace run is 3-4 times the scheduler's): ``--record FILE`` runs the
whole trace once (or ``--jobs N``) and records every message both ways (a frame: ``<`` received or ``>``
answered, 4-byte little-endian length, the bytes); ``--replay FILE`` then serves the recorded simulator
messages to a fresh scheduler process over the same link as a run (a pipe pair, `burstbuffer.pipelink`) (REP side, pinned with the
replaying process to one core) and checks every answer against the recorded one, byte for byte: with no
schedule moved, the scheduler sees exactly the messages of the real run, and its CPU is measured without the
simulator's. A recording cut short (the run stopped) replays up to its last complete exchange, then ends the
simulation.

    .venv/bin/python benchmarks/bench_sched_cpu.py --record /tmp/whole.rec --jobs 0 --whole 1
    .venv/bin/python benchmarks/bench_sched_cpu.py --replay /tmp/whole.rec --repeat 3

``--in-process`` serves the recording to the scheduler in this process instead (no pipe, no child; the first
``--messages N`` exchanges, then SIMULATION_ENDS) and prints the main thread's CPU and the answers that differ:
for instruction counts, e.g. ``valgrind --tool=callgrind .venv/bin/python benchmarks/bench_sched_cpu.py --replay
FILE --in-process --messages 12000``. ``--gap sleep:1`` or ``--gap touch:4`` puts a pause (1 ms) or a 4 MiB cache
sweep between two messages, where a run's simulator computes, and shows what that alone costs the scheduler's
next message (docs/performance.md, "In a run and alone").
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import load_average, machine  # noqa: E402
from burstbuffer import links  # noqa: E402

# the CPU clock of the child and the mark of its decision loop's start (SIMULATION_BEGINS), in both children
MARK_LOOP = r"""
import resource
import burstbuffer.app as app
cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
marks = {}
_begins = app.SchedulerApp._begins
def _mark(self, data):
    marks["loop0"] = cpu()
    return _begins(self, data)
app.SchedulerApp._begins = _mark
"""

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from burstbuffer.runner import run, DEFAULT_PLATFORM
import burstbuffer.app as app

policy, model, workload, out, prof, pin, link = sys.argv[1:8]
""" + MARK_LOOP + r"""
profiler = None
if prof:
    import cProfile
    profiler = cProfile.Profile(time.thread_time)   # CPU of the main thread, not wall
    profiler.enable()
t0 = time.perf_counter()
res = run(policy, Path(workload), DEFAULT_PLATFORM, Path(out), model=model, progress=False, timeout=3600, cpu=pin,
          link=link)
wall = time.perf_counter() - t0
if profiler is not None:
    profiler.disable()
    profiler.dump_stats(prof)
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
row = {"wall": wall, "sched_cpu": me.ru_utime + me.ru_stime, "sched_user": me.ru_utime,
       "sched_sys": me.ru_stime, "sched_loop_cpu": me.ru_utime + me.ru_stime - marks.get("loop0", 0.0),
       "sched_vcsw": me.ru_nvcsw, "sim_cpu": kids.ru_utime + kids.ru_stime,
       "messages": res.messages, "mean_wait_h": res.summary.mean_waiting_h, "parent_cpu": None}
if res.scheduler_cpu is not None:   # in-simulator: the scheduler is the child's answers, this process supervises
    row.update(parent_cpu=row["sched_cpu"], sched_cpu=res.scheduler_cpu, sched_loop_cpu=res.scheduler_cpu,
               sched_user=float("nan"), sched_sys=float("nan"), sim_cpu=row["sim_cpu"] - res.scheduler_cpu)
print(json.dumps(row))
"""


def prefix_workload(jobs: int | None, folder: Path) -> Path:
    """The whole KTH trace (`workloads/kth-all.json`, made on demand) or its first `jobs` jobs."""
    from burstbuffer.workloads.bundled import ensure_kth_workload
    whole = Path(ensure_kth_workload())
    if not jobs:
        return whole
    data = json.loads(whole.read_text())
    data["jobs"] = data["jobs"][:jobs]
    path = folder / f"kth-{jobs}.json"
    path.write_text(json.dumps(data))
    return path


def measure(label: str, workload: Path, runs: int, args, folder: Path) -> None:
    rows = []
    for i in range(runs):
        out = folder / f"out-{label}-{i}"
        before = load_average()
        prof = args.profile if (args.profile and i == 0) else ""
        link = "pipes" if args.record else args.link    # a recording is made on the pipes
        argv = [sys.executable, "-c", RECORD if args.record else CHILD, args.policy, args.model, str(workload),
                str(out), prof, args.cpu, link] + ([args.record] if args.record else [])
        text = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True).stdout
        row = json.loads(text.strip().splitlines()[-1])
        rows.append(row)
        if row["parent_cpu"] is None:
            who = (f"scheduler {row['sched_cpu']:.1f} s CPU (user {row['sched_user']:.1f} + sys {row['sched_sys']:.1f}; "
                   f"in the loop {row['sched_loop_cpu']:.1f}; {row['sched_vcsw']} voluntary context switches)")
        else:
            who = (f"scheduler {row['sched_cpu']:.1f} s CPU (its answers, in the simulator's process; the parent "
                   f"{row['parent_cpu']:.1f} s)")
        print(f"  {label} run {i + 1}: {who}, simulator {row['sim_cpu']:.1f} s, wall {row['wall']:.1f} s, "
              f"{row['messages']} messages, mean wait {row['mean_wait_h']:.4f} h; load before {before}, "
              f"after {load_average()}", flush=True)
    med = {k: statistics.median(r[k] for r in rows) for k in ("sched_cpu", "sched_loop_cpu", "sim_cpu", "wall")}
    print(f"{label}: median of {runs}: scheduler CPU {med['sched_cpu']:.1f} s (decision loop "
          f"{med['sched_loop_cpu']:.1f} s), simulator CPU {med['sim_cpu']:.1f} s, wall {med['wall']:.1f} s",
          flush=True)


RECORD = r"""
import struct, sys
from burstbuffer.batsim import transport
rec = open(sys.argv.pop(), "wb", buffering=1 << 20)
_recv, _send = transport.PipeReplySocket.recv, transport.PipeReplySocket.send
def recv(self):
    raw = _recv(self)
    rec.write(b"<" + struct.pack("<I", len(raw)) + raw)
    return raw
def send(self, raw):
    rec.write(b">" + struct.pack("<I", len(raw)) + raw)
    rec.flush()
    return _send(self, raw)
transport.PipeReplySocket.recv, transport.PipeReplySocket.send = recv, send
""" + CHILD

SERVE = r"""
import json, resource, sys, time
from pathlib import Path
from burstbuffer.session import SchedulerSession
from burstbuffer.spec import make_spec
from burstbuffer.batsim.transport import PipeReplySocket
import burstbuffer.app as app

policy, model, fds, out, prof = sys.argv[1:6]
""" + MARK_LOOP + r"""
session = SchedulerSession(make_spec(policy, job_model=model), Path(out), progress=False)
sock = PipeReplySocket(*map(int, fds.split(",")), timeout=0.5)
print("listening", flush=True)
profiler = None
if prof:
    import cProfile
    profiler = cProfile.Profile(time.thread_time)   # CPU of the main thread, not wall
    profiler.enable()
session.loop(sock, timeout=3600)
if profiler is not None:
    profiler.disable()
    profiler.dump_stats(prof)
sock.close()
me = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"sched_cpu": me.ru_utime + me.ru_stime, "sched_user": me.ru_utime, "sched_sys": me.ru_stime,
                  "sched_loop_cpu": me.ru_utime + me.ru_stime - marks["loop0"], "sched_vcsw": me.ru_nvcsw,
                  "messages": session.messages}))
"""


def frames(path: Path):
    """(direction, bytes) of a recording, up to its last complete frame."""
    import struct
    with open(path, "rb") as f:
        while True:
            head = f.read(5)
            if len(head) < 5:
                return
            (n,) = struct.unpack("<I", head[1:])
            raw = f.read(n)
            if len(raw) < n:
                return
            yield head[:1], raw


def replay_once(path: Path, args, folder: Path, i: int) -> dict:
    """One replay of recording `path` (module docstring); the scheduler's rusage and the answers that differ."""
    import os
    from burstbuffer import pipelink
    from burstbuffer.affinity import pinned, resolve_cpu
    prof = args.profile if (args.profile and i == 0) else ""
    core = resolve_cpu("auto")
    msg_in, msg_out = os.pipe()
    ans_in, ans_out = os.pipe()
    with pinned(core):
        proc = subprocess.Popen([sys.executable, "-c", SERVE, args.policy, args.model, f"{msg_in},{ans_out}",
                                 str(folder / f"replay-out-{i}"), prof], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                                pass_fds=(msg_in, ans_out))
        os.close(msg_in)
        os.close(ans_out)
        assert proc.stdout.readline().strip() == "listening"

        class Link:
            """The simulator's side of a run's pipe pair, as a REQ socket."""
            def send(self, raw):
                pipelink.write_frame(msg_out, raw)

            def recv(self):
                return pipelink.read_frame(ans_in)

            def close(self, linger=0):
                os.close(msg_out)
                os.close(ans_in)
        sock = Link()
        sent = differ = 0
        pending = sent_raw = None
        for direction, raw in frames(path):
            if direction == b"<":
                if pending is not None:          # its answer was not recorded: the recording ends here
                    break
                sock.send(raw)
                pending, sent_raw = sock.recv(), raw
                sent += 1
            elif pending is not None:
                differ += pending != raw
                pending = None
        if sent_raw is not None and b'"SIMULATION_ENDS"' not in sent_raw:
            # a recording cut short: end the simulation at its last time
            now = max(json.loads(sent_raw)["now"], json.loads(pending if pending is not None else raw)["now"])
            sock.send(json.dumps({"now": now, "events": [{"timestamp": now, "type": "SIMULATION_ENDS",
                                                           "data": {}}]}).encode())
            sock.recv()
        sock.close(linger=0)
        if sent_raw is None:                     # not even SIMULATION_BEGINS was recorded
            proc.kill()
            raise SystemExit(f"{path}: no complete message")
        text, _ = proc.communicate(timeout=600)
    row = json.loads(text.strip().splitlines()[-1])
    row.update(replayed=sent, differ=differ)
    return row


def replay_in_process(path: Path, args, folder: Path) -> None:
    """Serve the first `args.messages` exchanges of recording `path` (all: 0) to a `SchedulerSession` in this process
    through a transport that hands over the recorded messages and compares each answer with the recorded one."""
    import time
    from burstbuffer.session import SchedulerSession
    from burstbuffer.spec import make_spec
    pairs, received = [], None
    for direction, raw in frames(path):
        if direction == b"<":
            received = raw
        elif received is not None:
            pairs.append((received, raw))
            received = None
    if args.messages:
        pairs = pairs[:args.messages]
    if pairs and b'"SIMULATION_ENDS"' not in pairs[-1][0]:     # cut short: end the simulation at its last time
        now = max(json.loads(pairs[-1][0])["now"], json.loads(pairs[-1][1])["now"])
        pairs.append((json.dumps({"now": now, "events": [{"timestamp": now, "type": "SIMULATION_ENDS",
                                                           "data": {}}]}).encode(), None))

    gap, _, amount = args.gap.partition(":")
    if gap not in ("", "sleep", "touch"):
        raise SystemExit(f"--gap {args.gap}: expected sleep:MS or touch:MB")
    lines = bytearray(int(float(amount) * (1 << 20))) if gap == "touch" else None
    spent = 0.0                                   # the gaps' own CPU, not the scheduler's

    def between() -> None:
        nonlocal spent
        t = time.thread_time()
        if gap == "sleep":
            time.sleep(float(amount) / 1000)
        else:
            lines[::64] = bytes(len(range(0, len(lines), 64)))     # one write per 64-byte cache line
        spent += time.thread_time() - t

    class Recorded:
        """The recording as a transport: `recv` gives the next message, `send` checks the answer."""
        i = differ = 0

        def recv(self) -> bytes:
            if gap:
                between()
            return pairs[self.i][0]

        def send(self, raw: bytes) -> None:
            want = pairs[self.i][1]
            self.differ += want is not None and raw != want
            self.i += 1

    session = SchedulerSession(make_spec(args.policy, job_model=args.model), folder / "in-process", progress=False)
    t = Recorded()
    t0 = time.thread_time()
    session.loop(t, timeout=3600)
    print(f"in-process replay of {path.name}{f' (gap {args.gap})' if gap else ''}: {t.i} messages, main thread "
          f"{time.thread_time() - t0 - spent:.2f} s CPU{f' besides the gaps {spent:.2f} s' if gap else ''}, "
          f"{t.differ} answers differ from the recording; load average {load_average()}", flush=True)


def replay(path: Path, args, folder: Path) -> None:
    rows = []
    for i in range(args.repeat):
        before = load_average()
        row = replay_once(path, args, folder, i)
        rows.append(row)
        print(f"  replay {i + 1}: scheduler {row['sched_cpu']:.1f} s CPU (user {row['sched_user']:.1f} + sys "
              f"{row['sched_sys']:.1f}; in the loop {row['sched_loop_cpu']:.1f}; {row['sched_vcsw']} voluntary "
              f"context switches), {row['replayed']} messages replayed, {row['differ']} answers differ from the "
              f"recording; load before {before}, after {load_average()}", flush=True)
    med = {k: statistics.median(r[k] for r in rows) for k in ("sched_cpu", "sched_loop_cpu")}
    print(f"replay of {path.name} ({rows[0]['replayed']} messages): median of {len(rows)}: scheduler CPU "
          f"{med['sched_cpu']:.1f} s (decision loop {med['sched_loop_cpu']:.1f} s)", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policy", default="sjf-bb")
    ap.add_argument("--model", default="io-aware")
    ap.add_argument("--jobs", type=int, default=5000, help="the prefix's jobs (0: no prefix runs; default 5000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of the prefix (default 3)")
    ap.add_argument("--whole", type=int, default=1, help="runs of the whole trace (default 1; 0: none)")
    ap.add_argument("--cpu", default="auto", help="`run`'s --cpu: auto (both processes on one core, the default), "
                                                  "off (no pinning), or a core number")
    ap.add_argument("--link", default="in-simulator", type=links.link,
                    help="`run`'s --link (in-simulator or pipes; default in-simulator: the scheduler's CPU is then the CPU time of its "
                         "answers in the simulator's process, and the simulator's the rest of that process's)")
    ap.add_argument("--profile", metavar="FILE", help="cProfile the scheduler process of the first run into FILE "
                                                      "(with --link pipes)")
    ap.add_argument("--record", metavar="FILE", help="record the messages of the (last) run into FILE")
    ap.add_argument("--replay", metavar="FILE", help="replay a recording --repeat times instead of running")
    ap.add_argument("--in-process", action="store_true",
                    help="with --replay: serve the recording in this process once (no pipe; for callgrind)")
    ap.add_argument("--gap", default="", metavar="sleep:MS|touch:MB",
                    help="with --in-process: between two messages, sleep MS milliseconds or write to every cache "
                         "line of MB mebibytes, as a run's simulator does between them (its CPU not counted)")
    ap.add_argument("--messages", type=int, default=0, help="with --in-process: the first N exchanges (0: all)")
    args = ap.parse_args()
    print(f"machine: {machine()}; load average {load_average()}")
    if args.replay:
        with tempfile.TemporaryDirectory() as tmp:
            (replay_in_process if args.in_process else replay)(Path(args.replay), args, Path(tmp))
        return 0
    print(f"policy {args.policy}, model {args.model}, platform platforms/dragonfly96.xml, KTH trace (28,467 jobs)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.jobs and args.repeat:
            measure(f"first {args.jobs} jobs", prefix_workload(args.jobs, folder), args.repeat, args, folder)
        if args.whole:
            measure("whole trace", prefix_workload(None, folder), args.whole, args, folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
