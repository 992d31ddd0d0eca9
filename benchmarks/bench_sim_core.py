"""The simulator's two cores side by side (docs/simulator-core.md): the actor core (one Python SimGrid
actor per running job, thread contexts) and the bridged core (one C++ actor per running job, raw contexts,
the compiled bridge; the default where it runs), on the same runs, alternated, REPEAT times each. Prints the medians of the wall
time, the simulator process's CPU time (user + sys) and the scheduler's, the machine, and whether the two
cores wrote byte-identical jobs.csv.

    .venv/bin/python benchmarks/bench_sim_core.py [--repeat 3] [--runs fcfs-easy:alloc-only:1000,...] [--cpu C]

`--runs`: comma-separated POLICY:MODEL:JOBS (first JOBS jobs of workloads/kth-1000.json, platform
platforms/dragonfly96.xml). `--cpu C` pins each run (scheduler and simulator) to core C. Time it on an
otherwise idle machine.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import load_average, machine  # noqa: E402

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from burstbuffer.runner import run, DEFAULT_PLATFORM
policy, model, workload, out, cpu = sys.argv[1:6]
t0 = time.perf_counter()
run(policy, Path(workload), DEFAULT_PLATFORM, Path(out), model=model, progress=False, timeout=3600,
    cpu=cpu if cpu in ("auto", "off") else int(cpu))
wall = time.perf_counter() - t0
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "sched_cpu": me.ru_utime + me.ru_stime, "sim_cpu": kids.ru_utime + kids.ru_stime}))
"""


def cut(n: int, d: Path) -> Path:
    w = json.loads((ROOT / "workloads" / "kth-1000.json").read_text())
    w["jobs"] = w["jobs"][:n]
    keep = {j["profile"] for j in w["jobs"]}
    w["profiles"] = {k: v for k, v in w["profiles"].items() if k in keep}
    p = d / f"kth-{n}.json"
    p.write_text(json.dumps(w))
    return p


def one(core: str, policy: str, model: str, workload: Path, cpu: str, out: Path) -> dict:
    env = dict(os.environ, BURSTBUFFER_SIM_CORE=core)
    r = subprocess.run([sys.executable, "-c", CHILD, policy, model, str(workload), str(out), cpu], cwd=ROOT,
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{core} {policy} {model}: {r.stderr.strip()[-500:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runs", default="fcfs-easy:alloc-only:1000,sjf-bb:alloc-only:1000,sjf-bb:io-aware:300")
    ap.add_argument("--cpu", default="off", help="core to pin each run to, or off (default)")
    a = ap.parse_args()
    # build the bridge before timing anything
    subprocess.run([sys.executable, "-c", "from burstbuffer.simulator import _bridge; _bridge.load()"],
                   cwd=ROOT, check=True)
    print(f"machine: {machine()}; load average {load_average()}")
    print(f"median of {a.repeat} runs per core, alternated; pinned: {a.cpu}")
    print(f"{'run':32} {'core':8} {'wall [s]':>9} {'sim CPU [s]':>12} {'sched CPU [s]':>14}  jobs.csv")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for spec in a.runs.split(","):
            policy, model, n = spec.split(":")
            wl = cut(int(n), tmp)
            rows: dict[str, list[dict]] = {"actors": [], "bridged": []}
            csv = {}
            for k in range(a.repeat):
                for core in ("actors", "bridged"):
                    out = tmp / f"{core}-{k}"
                    rows[core].append(one(core, policy, model, wl, a.cpu, out))
                    csv[core] = (out / "batsim_jobs.csv").read_text()
                    shutil.rmtree(out)
            same = "identical" if csv["actors"] == csv["bridged"] else "DIFFERENT"
            med = {c: {k: statistics.median(r[k] for r in rows[c]) for k in rows[c][0]} for c in rows}
            for core in ("actors", "bridged"):
                m = med[core]
                print(f"{spec:32} {core:8} {m['wall']:9.2f} {m['sim_cpu']:12.2f} {m['sched_cpu']:14.2f}  "
                      f"{same if core == 'bridged' else ''}", flush=True)
            print(f"{'':32} {'ratio':8} {med['actors']['wall'] / med['bridged']['wall']:8.2f}x "
                  f"{med['actors']['sim_cpu'] / med['bridged']['sim_cpu']:11.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
