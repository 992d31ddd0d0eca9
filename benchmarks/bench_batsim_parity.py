"""The embedded simulator beside the real Batsim 4.2.1 on a client whose own work is small: pybatsim 3.2.1's
`easyBackfill` (jobs hashed by id, `tests/pybatsim_det.py`), the first N KTH jobs, `tests/data/cluster96.xml`
(docs/simulator-core.md, "Measured"; the target: the embedded simulator's wall time at most real Batsim's).

For each repetition, alternated: real Batsim, then `python -m burstbuffer.simulator` under each core
(`--core actors`, `--core bridged`), each against a fresh scheduler on a fresh ZeroMQ endpoint, no proxy.
Prints, per simulator, the medians of the run's wall time (simulator start to its exit), the simulator
process's CPU time (user + system: the figure the machine's load disturbs least) and the scheduler's, the
machine and its load average before and after, and whether each `_jobs.csv` is byte-identical to real
Batsim's.

    .venv/bin/python benchmarks/bench_batsim_parity.py [--jobs 1000] [--repeat 3] [--cores actors,bridged]

Needs the real Batsim (``$BATSIM_BIN``, else ``~/.cache/batsim-4.2.1/build/batsim``) and pybatsim 3.2.1
(the test extra).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
from common import load_average, machine  # noqa: E402
from tests.batsim_diff import CLUSTER, find_batsim, free_endpoint, kth_subset  # noqa: E402


def _cpu(ru) -> float:
    return ru.ru_utime + ru.ru_stime


def one(sim_cmd: list[str], workload: Path, work: Path, scheduler: str) -> dict:
    """One run: the scheduler, then the simulator; wall time of the simulator process, CPU of each."""
    work.mkdir()
    ep = free_endpoint()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), PYTHONHASHSEED="0")
    sched = subprocess.Popen([sys.executable, str(ROOT / "tests" / "pybatsim_det.py"), scheduler, "-s", ep, "-t",
                              "600000", "-v", "warning"], cwd=work, env=env, stdout=subprocess.DEVNULL,
                             stderr=open(work / "scheduler.err", "w"))
    prefix = str(work / "out")
    t0 = time.perf_counter()
    sim = subprocess.Popen([*sim_cmd, "-p", str(CLUSTER), "-w", str(workload), "-e", prefix, "-s", ep, "-q"],
                           cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=open(work / "sim.err", "w"))
    _, status, ru_sim = os.wait4(sim.pid, 0)
    wall = time.perf_counter() - t0
    sim.returncode = os.waitstatus_to_exitcode(status)
    try:
        _, _, ru_sched = os.wait4(sched.pid, 0)
    except ChildProcessError:
        ru_sched = None
    if sim.returncode != 0:
        raise SystemExit(f"{' '.join(sim_cmd)}: exit {sim.returncode}: {(work / 'sim.err').read_text()[-500:]}")
    return {"wall": wall, "sim_cpu": _cpu(ru_sim), "sched_cpu": _cpu(ru_sched) if ru_sched else float("nan"),
            "jobs": Path(prefix + "_jobs.csv").read_bytes()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scheduler", default="easyBackfill")
    ap.add_argument("--cores", default="actors,bridged")
    a = ap.parse_args()
    batsim = find_batsim()
    if batsim is None:
        print("no real Batsim 4.2.1 ($BATSIM_BIN, ~/.cache/batsim-4.2.1/build/batsim)", file=sys.stderr)
        return 2
    subprocess.run([sys.executable, "-c", "from burstbuffer.simulator import _bridge; _bridge.load()"], cwd=ROOT,
                   check=True)
    sims = {"batsim": [batsim]}
    for core in a.cores.split(","):
        sims[core] = [sys.executable, "-m", "burstbuffer.simulator", "--core", core]
    print(f"machine: {machine()}; load average before: {load_average()}")
    print(f"{a.scheduler}, first {a.jobs} KTH jobs, {CLUSTER.name}; median of {a.repeat} alternated runs")
    rows: dict[str, list[dict]] = {k: [] for k in sims}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        wl = kth_subset(tmp / "kth.json", a.jobs)
        for k in range(a.repeat):
            for name, cmd in sims.items():
                rows[name].append(one(cmd, wl, tmp / f"{name}-{k}", a.scheduler))
    ref = rows["batsim"][0]["jobs"]
    base = statistics.median(r["wall"] for r in rows["batsim"])
    print(f"{'simulator':10} {'wall [s]':>9} {'sim CPU [s]':>12} {'sched CPU [s]':>14} {'wall / Batsim':>14}  _jobs.csv")
    for name, rs in rows.items():
        wall = statistics.median(r["wall"] for r in rs)
        same = "reference" if name == "batsim" else (
            "identical" if all(r["jobs"] == ref for r in rs) else "DIFFERENT")
        print(f"{name:10} {wall:9.2f} {statistics.median(r['sim_cpu'] for r in rs):12.2f} "
              f"{statistics.median(r['sched_cpu'] for r in rs):14.2f} {wall / base:13.2f}x  {same}")
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
