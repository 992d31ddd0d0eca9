"""Whole-run benchmark: the 1000-job KTH workload on the paper's platform, per policy.

For each policy, runs `burstbuffer run` (scheduler process + embedded simulator process) REPEAT times
and prints medians of: wall time, CPU time (user + sys) of the scheduler process and of the simulator
process separately, and the peak resident memory of each. Each run happens in a fresh Python process
whose own rusage is the scheduler's and whose children's rusage is the simulator's.

    .venv/bin/python benchmarks/bench_run.py [--model io-aware] [--repeat 3] [--policies sjf-bb,fcfs-easy,...]
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
from common import machine  # noqa: E402

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from burstbuffer.runner import run, DEFAULT_WORKLOAD, DEFAULT_PLATFORM
policy, model, out = sys.argv[1:4]
t0 = time.perf_counter()
res = run(policy, DEFAULT_WORKLOAD, DEFAULT_PLATFORM, Path(out), model=model, progress=False, timeout=3600)
wall = time.perf_counter() - t0
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "sched_cpu": me.ru_utime + me.ru_stime, "sched_rss_mb": me.ru_maxrss / 1024,
                  "sim_cpu": kids.ru_utime + kids.ru_stime, "sim_rss_mb": kids.ru_maxrss / 1024,
                  "mean_wait_h": res.summary.mean_waiting_h, "mean_bsld": res.summary.mean_bounded_slowdown}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="io-aware")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--policies", default="fcfs,fcfs-easy,filler,fcfs-bb,sjf-bb")
    args = ap.parse_args()
    print(f"machine: {machine()}")
    print(f"workload: workloads/kth-1000.json, platform: platforms/dragonfly96.xml, model {args.model}, "
          f"median of {args.repeat} runs")
    cols = ["wall", "sched_cpu", "sim_cpu", "sched_rss_mb", "sim_rss_mb"]
    print(f"{'policy':16} {'wall [s]':>9} {'sched CPU [s]':>14} {'sim CPU [s]':>12} {'sched RSS [MB]':>15} "
          f"{'sim RSS [MB]':>13} {'mean wait [h]':>14} {'mean bsld':>10}")
    for policy in args.policies.split(","):
        rows = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as tmp:
                out = subprocess.run([sys.executable, "-c", CHILD, policy, args.model, tmp], cwd=ROOT,
                                     capture_output=True, text=True, check=True).stdout
            rows.append(json.loads(out.strip().splitlines()[-1]))
        med = {c: statistics.median(r[c] for r in rows) for c in cols}
        print(f"{policy:16} {med['wall']:9.1f} {med['sched_cpu']:14.2f} {med['sim_cpu']:12.2f} "
              f"{med['sched_rss_mb']:15.0f} {med['sim_rss_mb']:13.0f} {rows[0]['mean_wait_h']:14.3f} "
              f"{rows[0]['mean_bsld']:10.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
