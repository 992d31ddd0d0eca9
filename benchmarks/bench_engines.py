"""Engine benchmark (issue 16): the local process pool against the Dask LocalCluster, and the scaling of a
campaign with the number of Dask workers.

``reproduce`` mode runs ``burstbuffer reproduce --jobs JOBS`` (every policy of the study plus its Gantt run)
with ``--engine local`` and ``--engine dask``, alternately, REPEAT times each, each into a fresh folder, and
prints per engine the medians of the simulation wall time (manifest.json ``run_wall_s``: from planning to the
last run, engine start and stop included) and of the summed CPU time of the runs (scheduler + simulator,
from their summary.json: the work done, which the machine's load does not change), and the ratio
dask / local of the wall-time medians. ``sweep`` mode runs ``burstbuffer sweep CAMPAIGN`` with 1, 2, ...
Dask workers (``--workers LIST``) and prints the wall time of each. Both print the machine and its load
average before and after: on a shared machine the wall times carry that load.

    .venv/bin/python benchmarks/bench_engines.py reproduce [--jobs 1000] [--repeat 1] [--workers 2]
    .venv/bin/python benchmarks/bench_engines.py sweep [--campaign examples/campaign-small.toml] [--workers 1,2]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import machine  # noqa: E402


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _cli(*args: str) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    subprocess.run([sys.executable, "-m", "burstbuffer", *args], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def bench_reproduce(a) -> None:
    walls: dict[str, list[float]] = {"local": [], "dask": []}
    cpus: dict[str, list[float]] = {"local": [], "dask": []}
    for r in range(a.repeat):
        for engine in (("local", "dask") if r % 2 == 0 else ("dask", "local")):
            with tempfile.TemporaryDirectory(prefix="bench-engines-") as tmp:
                _cli("reproduce", "--jobs", a.jobs, "--workers", str(a.workers), "--engine", engine,
                     "--output", tmp, "-q", *(["--policies", a.policies] if a.policies else []))
                m = json.loads((Path(tmp) / "manifest.json").read_text())
                cpu = sum(sum(json.loads(p.read_text())["cpu_time"].values())
                          for p in Path(tmp, "runs").glob("*/*/summary.json"))
            walls[engine].append(m["run_wall_s"])
            cpus[engine].append(cpu)
            print(f"  {engine}: wall {m['run_wall_s']:.1f} s, runs' CPU {cpu:.1f} s, load {_load()}", flush=True)
    for e in walls:
        print(f"{e:5s}: median wall {statistics.median(walls[e]):.1f} s, median runs' CPU "
              f"{statistics.median(cpus[e]):.1f} s over {a.repeat}")
    print(f"dask / local (wall medians): {statistics.median(walls['dask']) / statistics.median(walls['local']):.3f}")


def bench_sweep(a) -> None:
    for n in [int(x) for x in a.workers.split(",")]:
        with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
            t0 = time.perf_counter()
            _cli("sweep", a.campaign, "--output", tmp, "--workers", str(n), "-q")
            print(f"{n} worker(s): wall {time.perf_counter() - t0:.1f} s (load {_load()})", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("reproduce")
    r.add_argument("--jobs", default="1000")
    r.add_argument("--policies", help="default: the study's")
    r.add_argument("--repeat", type=int, default=1)
    r.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    s = sub.add_parser("sweep")
    s.add_argument("--campaign", default=str(ROOT / "examples" / "campaign-small.toml"))
    s.add_argument("--workers", default="1,2")
    a = p.parse_args()
    print(f"machine: {machine()}; load average before: {_load()}", flush=True)
    (bench_reproduce if a.mode == "reproduce" else bench_sweep)(a)
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    main()
