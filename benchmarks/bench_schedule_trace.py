"""What Batsim's Pajé trace (`PREFIX_schedule.trace`, docs/outputs.md §3) costs `burstbuffer simulate`: the
first N KTH jobs on `tests/data/cluster96.xml` under pybatsim 3.2.1's `easyBackfill` (`tests/pybatsim_det.py`),
once with the trace (the default, as Batsim) and once with ``--disable-schedule-tracing``, alternated, each
against a fresh scheduler. Prints the median wall time of each (simulator start to exit), the trace's size,
the machine and its load average.

    .venv/bin/python benchmarks/bench_schedule_trace.py [--jobs 1000] [--repeat 5]

Needs pybatsim 3.2.1 (the test extra).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import load_average, machine  # noqa: E402
from tests import batsim_diff as B  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    print(f"machine: {machine()}; load average before: {load_average()}")
    walls: dict[str, list[float]] = {"with the trace": [], "--disable-schedule-tracing": []}
    size = lines = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        wl = B.kth_subset(tmp / "w.json", a.jobs)
        for rep in range(a.repeat):
            for k, (name, extra) in enumerate((("with the trace", []),
                                               ("--disable-schedule-tracing", ["--disable-schedule-tracing"]))):
                d = tmp / f"{rep}-{k}"
                d.mkdir()
                t = time.perf_counter()
                run = B.run_one(d, "sim", B.embedded_cmd(B.CLUSTER, wl, extra), B.pybatsim_cmd("easyBackfill"))
                walls[name].append(time.perf_counter() - t)
                if run.returncode != 0:
                    print(run.stderr[-500:], file=sys.stderr)
                    return 1
                trace = Path(run.prefix + "_schedule.trace")
                if not extra:
                    size, lines = trace.stat().st_size, sum(1 for _ in trace.open())
                elif trace.exists():
                    print("--disable-schedule-tracing wrote a trace", file=sys.stderr)
                    return 1
    for name, v in walls.items():
        print(f"{name:28s} median {statistics.median(v):6.2f} s over {len(v)} runs (min {min(v):.2f}, max {max(v):.2f})")
    print(f"trace: {lines} lines, {size / 1e6:.2f} MB, {a.jobs} jobs; load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
