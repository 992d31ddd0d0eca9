"""Where the time goes at scale: py-spy samples of the scheduler and the simulator process of one
`burstbuffer run` (sjf-bb, io-aware), classified as SimGrid solver / other SimGrid / Python simulator code /
ZeroMQ + JSON / scheduler (issue 17, docs/performance.md, "Large machines").

The platforms and KTH-derived workloads are those of ``bench_platform_scale.py`` (same sizes, width and
speed-up rules). The run is the benchmark's own worker (``runner.run`` in-process: that process is the
scheduler, the simulator its child), recorded by ``py-spy record --subprocesses --native`` (native frames, so
SimGrid's C++ is seen inside the simulator's actors; idle threads not sampled). Each sample is given to the
innermost frame that names a category:

* ``SimGrid solver``: ``simgrid::kernel::lmm`` (the max-min bandwidth sharing: ``FairBottleneck::do_solve``
  under ptask_L07) — also inside ``ptask_L07``'s action creation and bound updates (``L07Action``);
* ``SimGrid hand-over``: SimGrid's thread contexts waking each other (``ThreadContext``,
  ``pthread_cond_signal``): SimGrid 3.32 runs Python actors as threads, two hand-overs per simulation call;
* ``SimGrid other``: any other frame of libsimgrid (routing, activities, the engine's loop);
* ``ZeroMQ + JSON``: pyzmq, the ``json`` module, the protocol's encoders/decoders (``simulator/protocol.py``,
  ``batsim/messages.py``, ``batsim/transport.py``);
* ``scheduler``: the policies, the availability profile, the job models, the app (``burstbuffer/schedulers``,
  ``io_model``, ``app.py``, ``batsim/loop.py``);
* ``Python simulator``: the rest of ``burstbuffer/simulator``;
* ``other``: interpreter start-up, imports, outputs.

Samples of threads blocked in a wait (``pthread_cond_wait``: SimGrid's parked actor threads; ``poll``: a
process waiting for the other) are idle and left out. The kernel's share of a thread hand-over (SimGrid 3.32
runs Python actors as threads that wake each other at every simulation call) is not sampled: compare the
busy seconds with the process's CPU time.

Usage::

    python benchmarks/profile_scale.py --size 1080 --jobs 300 [--network-model ring] [--rate 50] [--out DIR]
        [--width W --speedup X]     # e.g. --size 10800 --jobs 1000 --width 1 --speedup 100 (issue 17's target)

Needs ``py-spy`` (the test extra) and ptrace permission (root, or ``kernel.yama.ptrace_scope=0``).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import platform as pyplatform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import bench_platform_scale as bps  # noqa: E402
from common import cpu_model  # noqa: E402

CATEGORIES = ("SimGrid solver", "SimGrid hand-over", "SimGrid other", "ZeroMQ + JSON", "scheduler",
              "Python simulator", "other")

_PROTO = ("simulator/protocol.py", "batsim/messages.py", "batsim/transport.py", "/zmq/", "json/", "_json")
_SCHED = ("burstbuffer/schedulers/", "burstbuffer/io_model/", "burstbuffer/app.py", "burstbuffer/batsim/loop.py",
          "burstbuffer/metrics/")


_UNNAMED_LIBC = re.compile(r"^0x[0-9a-f]+ \(libc\.so")   # a stack of unnamed libc frames only: a waiting thread
_IDLE = ("pthread_cond_wait", "pthread_cond_timedwait", "epoll_wait", "poll (", "select (", "sem_wait",
         "nanosleep", "futex_wait")


def classify(frames: list[str]) -> str:
    """Category (`CATEGORIES`, or "idle") of one sample, frames root → leaf (py-spy's raw format). A thread
    blocked in a wait (SimGrid's parked actor threads, a process waiting for the other on its socket) is
    idle: py-spy's --native sampling reports such threads too."""
    if any(k in f for f in frames[-3:] for k in _IDLE) or all(_UNNAMED_LIBC.match(f) for f in frames):
        return "idle"
    for f in reversed(frames):
        if "lmm::" in f or "L07Action" in f or "do_solve" in f:
            return "SimGrid solver"
        if "ThreadContext" in f or "pthread_cond_signal" in f:
            return "SimGrid hand-over"
        if "simgrid::" in f or "libsimgrid" in f:
            return "SimGrid other"
        if any(k in f for k in _PROTO):
            return "ZeroMQ + JSON"
        if any(k in f for k in _SCHED):
            return "scheduler"
        if "burstbuffer/simulator/" in f:
            return "Python simulator"
    return "other"


def read_raw(path: Path) -> dict[str, collections.Counter]:
    """py-spy raw (collapsed) samples → {process label: Counter(category → samples)}."""
    out: dict[str, collections.Counter] = {}
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        procs = [k for k, f in enumerate(frames) if f.startswith("process ")]
        sim = any("burstbuffer.simulator" in frames[k] for k in procs)
        frames = frames[procs[-1] + 1:] if procs else frames   # the child (simulator) nests in its parent
        out.setdefault("simulator" if sim else "scheduler", collections.Counter())[classify(frames)] += int(count)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1080, choices=sorted(bps.SIZES))
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--network-model", default="exact", choices=bps.NETWORK_MODELS)
    ap.add_argument("--width", type=int, help="processor multiplier of every job (default: bench_platform_scale's)")
    ap.add_argument("--speedup", type=float, help="submission speed-up (default: bench_platform_scale's)")
    ap.add_argument("--rate", type=int, default=50, help="samples per second (default 50)")
    ap.add_argument("--out", help="keep the raw profile and the run here (default: a temporary folder)")
    args = ap.parse_args(argv)
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    with tempfile.TemporaryDirectory(prefix="profile-scale-") as tmp:
        work = Path(args.out or tmp)
        work.mkdir(parents=True, exist_ok=True)
        p = bps.params_of(args.size)
        plat = work / f"dragonfly{args.size}.xml"
        bps.write_platform(p, plat)
        width, speedup = bps.scaling(p.nb_compute, args.width, args.speedup)
        wl = work / f"kth-{args.jobs}-{args.size}-x{width}.json"
        facts = bps.make_workload(p, args.jobs, width, speedup, wl)
        raw = work / f"profile-{args.size}-{args.network_model}.txt"
        cmd = [spy, "record", "--subprocesses", "--native", "--rate", str(args.rate), "--format", "raw",
               "--output", str(raw), "--", sys.executable, str(HERE / "bench_platform_scale.py"), "--worker", "run",
               str(plat), str(wl), str(work / "out"), "", args.network_model]
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parent)
        wall = time.perf_counter() - t
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            return 1
        run = json.loads([ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1])
        counts = read_raw(raw)
        print(f"machine: nproc={os.cpu_count()} cpu={cpu_model()!r} python={pyplatform.python_version()} "
              f"load average {os.getloadavg()[0]:.2f}")
        print(f"{args.size} hosts, {facts['jobs']} jobs (width {width}, speed-up {speedup:.1f}), sjf-bb io-aware, "
              f"network {args.network_model}; run {run['run_s']:.1f} s under py-spy ({wall:.1f} s with it), "
              f"CPU scheduler {run['scheduler_cpu_s']:.1f} s / simulator {run['simulator_cpu_s']:.1f} s")
        rows = {}
        for proc_name in ("simulator", "scheduler"):
            c = counts.get(proc_name, collections.Counter())
            total = sum(v for k, v in c.items() if k != "idle") or 1
            rows[proc_name] = {k: c[k] for k in CATEGORIES}
            print(f"  {proc_name:<9} {total / args.rate:7.1f} s sampled busy: " + ", ".join(
                f"{k} {100 * c[k] / total:.1f} %" for k in CATEGORIES if c[k]))
        print(json.dumps({"size": args.size, "jobs": facts["jobs"], "network_model": args.network_model,
                          "rate": args.rate, "run": run, "samples": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
