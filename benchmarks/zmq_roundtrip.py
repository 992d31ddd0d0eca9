"""What one Batsim protocol message costs in its link alone: a REQ-REP ping-pong between two processes.

The simulator (REQ, as Batsim) and the scheduler (REP) exchange one request and one reply per event; this
measures that exchange with a fixed payload and nothing else: wall time per round trip and CPU time (user +
system, all threads including ZeroMQ's I/O thread) per round trip in each process, median of REPS runs,
for each link: ZeroMQ over ipc and over tcp (Batsim's), and the pipe pair of `burstbuffer run`
(`burstbuffer.pipelink`, the scheduler's side its `PipeReplySocket`). It bounds the link's share of a
whole-trace run (docs/performance.md).

    .venv/bin/python benchmarks/zmq_roundtrip.py [--trips 20000] [--size 300] [--reps 3] [--cpu N]

With --cpu both processes are pinned to core N (as `burstbuffer run --cpu auto` pins its two processes).
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import zmq

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import machine  # noqa: E402


def _rep(where: str | tuple[int, int], trips: int, cpu: int | None, q) -> None:
    """The scheduler's side: a ZeroMQ REP socket bound at endpoint `where`, or a `PipeReplySocket` on the
    file descriptors `where` (messages in, answers out); its CPU for `trips` round trips goes to `q`."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    if isinstance(where, str):
        ctx = zmq.Context()
        sock = ctx.socket(zmq.REP)
        sock.bind(where)
    else:
        from burstbuffer.batsim.transport import PipeReplySocket
        sock = PipeReplySocket(*where, timeout=0.5)
    q.put("ready")
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(trips):
        sock.send(sock.recv())
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    q.put((r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime))
    if isinstance(where, str):
        sock.close(linger=0)
        ctx.term()


def one_pipe(trips: int, size: int, cpu: int | None) -> tuple[float, float, float]:
    """`one` over `burstbuffer run`'s link, a pipe each way (`burstbuffer.pipelink`)."""
    from burstbuffer import pipelink
    msg_in, msg_out = os.pipe()
    ans_in, ans_out = os.pipe()
    q = mp.Queue()
    p = mp.Process(target=_rep, args=((msg_in, ans_out), trips, cpu, q))
    p.start()
    q.get()
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    msg = b"x" * size
    answered = pipelink.readable(ans_in)
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for _ in range(trips):
        pipelink.write_frame(msg_out, msg)
        answered(None)
        pipelink.read_frame(ans_in)
    wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF)
    rep_cpu = q.get()
    p.join()
    pipelink.close(msg_in, msg_out, ans_in, ans_out)
    req_cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    return 1e6 * wall / trips, 1e6 * req_cpu / trips, 1e6 * rep_cpu / trips


def one(endpoint: str, trips: int, size: int, cpu: int | None) -> tuple[float, float, float]:
    """(wall µs, REQ CPU µs, REP CPU µs) per round trip of one run."""
    q = mp.Queue()
    p = mp.Process(target=_rep, args=(endpoint, trips, cpu, q))
    p.start()
    q.get()
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REQ)
    sock.connect(endpoint)
    msg = b"x" * size
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for _ in range(trips):
        sock.send(msg)
        sock.recv()
    wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF)
    rep_cpu = q.get()
    p.join()
    sock.close(linger=0)
    ctx.term()
    req_cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    return 1e6 * wall / trips, 1e6 * req_cpu / trips, 1e6 * rep_cpu / trips


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trips", type=int, default=20000)
    ap.add_argument("--size", type=int, default=300, help="payload bytes (default 300)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cpu", type=int, help="pin both processes to this core")
    args = ap.parse_args(argv)
    print(machine())
    print(f"{args.trips} round trips of {args.size} B per run, median of {args.reps} runs"
          + (f", both processes on core {args.cpu}" if args.cpu is not None else ", not pinned"))
    print(f"{'endpoint':<8} {'wall us/trip':>12} {'REQ CPU us':>11} {'REP CPU us':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("ipc", "tcp", "pipe"):
            runs = []
            for k in range(args.reps):
                if kind == "pipe":
                    runs.append(one_pipe(args.trips, args.size, args.cpu))
                    continue
                if kind == "ipc":
                    ep = f"ipc://{tmp}/rt{k}"
                else:
                    import socket
                    with socket.socket() as s:
                        s.bind(("127.0.0.1", 0))
                        ep = f"tcp://127.0.0.1:{s.getsockname()[1]}"
                runs.append(one(ep, args.trips, args.size, args.cpu))
            wall, req, rep = (statistics.median(x) for x in zip(*runs))
            print(f"{kind:<8} {wall:>12.1f} {req:>11.1f} {rep:>11.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
