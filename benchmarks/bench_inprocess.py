"""An experiment, not a mode of `burstbuffer run`: the scheduler inside the embedded simulator's process.

The simulator's link to the scheduler (`simulator.transport.connect`) is replaced, in this process only, by a
call to the scheduler's `batsim.loop.Exchange` (sjf-bb, io-aware by default): no second process, no pipe, the
same messages. Prints the scheduler's CPU (the main thread's, inside the answers), the process's CPU and the
wall time, with the machine: what a run would cost with no turn-taking between two processes
(docs/performance.md, "In a run and alone"). Run it in a process of its own, pinned to one core, e.g.

    taskset -c 1 .venv/bin/python benchmarks/bench_inprocess.py --jobs 3000
    taskset -c 1 .venv/bin/python benchmarks/bench_inprocess.py --jobs 0      # the whole KTH trace
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
from common import load_average, machine  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=3000, help="the KTH trace's first N jobs (0: the whole trace)")
    ap.add_argument("--policy", default="sjf-bb")
    ap.add_argument("--model", default="io-aware")
    args = ap.parse_args(argv)

    from burstbuffer.batsim.loop import Exchange
    from burstbuffer.defaults import DEFAULT_PLATFORM
    from burstbuffer.runner import SchedulerSession
    from burstbuffer.simulator import cli, command
    import burstbuffer.simulator.transport as transport
    from burstbuffer.workloads.bundled import ensure_kth_workload

    print(f"machine: {machine()}; load average {load_average()}")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        workload = Path(ensure_kth_workload())
        if args.jobs:
            data = json.loads(workload.read_text())
            data["jobs"] = data["jobs"][:args.jobs]
            workload = out / f"kth-{args.jobs}.json"
            workload.write_text(json.dumps(data))
        session = SchedulerSession(args.policy, out, model=args.model, progress=False)
        exchange = Exchange(session.app)
        spent = 0.0

        class InProcess:
            """The simulator's transport contract (`request`, `close`), answered by the scheduler here."""

            def request(self, text: str, n: int) -> str:
                nonlocal spent
                t = time.thread_time()
                answer = exchange.answer(text).decode()
                spent += time.thread_time() - t
                return answer

            def close(self) -> None:
                pass

        transport.connect = lambda cfg: InProcess()
        uses_dynamic = session.executor.uses_dynamic_jobs
        argv = command(str(DEFAULT_PLATFORM), str(workload), export_prefix=str(out / "batsim"),
                       socket_endpoint="in-process", dynamic_jobs=uses_dynamic, profile_reuse=uses_dynamic)
        t0 = time.perf_counter()
        rc = cli.main(argv[3:])                          # past ``python -m burstbuffer.simulator``
        wall = time.perf_counter() - t0
        r = resource.getrusage(resource.RUSAGE_SELF)
        label = f"first {args.jobs} jobs" if args.jobs else "whole trace"
        print(f"{label}, {args.policy}, {args.model}: exit {rc}, {exchange.n} messages; scheduler (answers) "
              f"{spent:.2f} s CPU, process {r.ru_utime + r.ru_stime:.1f} s CPU, wall {wall:.1f} s; load average "
              f"{load_average()}")
        return rc


if __name__ == "__main__":
    sys.exit(main())
