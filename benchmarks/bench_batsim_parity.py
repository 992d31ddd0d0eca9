"""The embedded simulator beside the real Batsim 4.2.1 on a client whose own work is small: pybatsim 3.2.1's
`easyBackfill` (jobs hashed by id, `tests/pybatsim_det.py`), the first N KTH jobs, `tests/data/cluster96.xml`
(docs/simulator-core.md, "Measured"; the target: the embedded simulator's wall time at most real Batsim's).

For each repetition, alternated: real Batsim, then `python -m burstbuffer.simulator` under each core
(`--core actors`, `--core bridged`), each against a fresh scheduler on a fresh ZeroMQ endpoint, no proxy.
Prints, per simulator, the medians of the run's wall time (simulator start to its exit), the simulator
process's CPU time (user + system: the figure the machine's load disturbs least) and the scheduler's, the
machine and its load average before and after, and whether each `_jobs.csv` is byte-identical to real
Batsim's.

``--startup``: the simulators' start-up instead — one job (a parallel task on 4 machines), answered by this
script itself (`tests/sim_sched.Fcfs`, its REP socket bound before the simulator starts, so that no
scheduler's own start is timed): the median time from the simulator's start to its first message
(SIMULATION_BEGINS), to its exit (the outputs written), and its CPU time.

``--base DIR``: also time the simulator of another checkout DIR (e.g. ``git archive main | tar -x -C
/tmp/base``), each core's runs alternated with this tree's, for a before/after on one machine state. The
Python runs read and write byte-code as a user's second run does (``PYTHONDONTWRITEBYTECODE`` unset), after
one untimed warm-up run of each simulator.

    .venv/bin/python benchmarks/bench_batsim_parity.py [--jobs 1000] [--repeat 3] [--cores actors,bridged]
        [--startup] [--base DIR]

Needs the real Batsim (``$BATSIM_BIN``, else ``~/.cache/batsim-4.2.1/build/batsim``) and pybatsim 3.2.1
(the test extra).
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
sys.path.insert(0, str(ROOT))
from common import load_average, machine  # noqa: E402
from tests.batsim_diff import CLUSTER, find_batsim, free_endpoint, kth_subset  # noqa: E402


def _cpu(ru) -> float:
    return ru.ru_utime + ru.ru_stime


#: the runs' environment: byte-code read (and written on a first run) as on a user's machine
BASE_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def sim_env(source: Path = ROOT) -> dict:
    """The environment of a run of `source`'s simulator."""
    return dict(BASE_ENV, PYTHONPATH=str(source) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                PYTHONHASHSEED="0")


def one(sim_cmd: list[str], workload: Path, work: Path, scheduler: str, source: Path = ROOT) -> dict:
    """One run: the scheduler, then the simulator; wall time of the simulator process, CPU of each."""
    work.mkdir()
    ep = free_endpoint()
    env = sim_env(source)
    env_sched = sim_env(ROOT)
    sched = subprocess.Popen([sys.executable, str(ROOT / "tests" / "pybatsim_det.py"), scheduler, "-s", ep, "-t",
                              "600000", "-v", "warning"], cwd=work, env=env_sched, stdout=subprocess.DEVNULL,
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


#: the start-up run's workload: one parallel task (a profile both cores run)
ONE_JOB = {"nb_res": 96, "jobs": [{"id": "1", "subtime": 0, "walltime": 100, "res": 4, "profile": "p"}],
           "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6}}}


def one_startup(sim_cmd: list[str], workload: Path, work: Path, source: Path = ROOT) -> dict:
    """One start-up run: this process answers as `sim_sched.Fcfs`; times to the first message and to the
    simulator's exit, its CPU time."""
    import zmq

    from tests.sim_sched import Fcfs

    work.mkdir()
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    port = sock.bind_to_random_port("tcp://127.0.0.1")
    answer = Fcfs([], 0.0)
    prefix = str(work / "out")
    t0 = time.perf_counter()
    sim = subprocess.Popen([*sim_cmd, "-p", str(CLUSTER), "-w", str(workload), "-e", prefix, "-s",
                            f"tcp://127.0.0.1:{port}", "-q"], cwd=work, env=sim_env(source),
                           stdout=subprocess.DEVNULL, stderr=open(work / "sim.err", "w"))
    first, done = None, False
    try:
        while not done:
            if not sock.poll(60_000):
                raise SystemExit(f"{' '.join(sim_cmd)}: no message for 60 s: {(work / 'sim.err').read_text()[-500:]}")
            raw = sock.recv_string()
            if first is None:
                first = time.perf_counter() - t0
            reply, done = answer(json.loads(raw), raw)
            sock.send_string(reply)
    finally:
        sock.close(0)
    _, status, ru = os.wait4(sim.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(sim_cmd)}: exit {status}: {(work / 'sim.err').read_text()[-500:]}")
    return {"first": first, "wall": wall, "sim_cpu": _cpu(ru), "jobs": Path(prefix + "_jobs.csv").read_bytes()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scheduler", default="easyBackfill")
    ap.add_argument("--cores", default="actors,bridged")
    ap.add_argument("--startup", action="store_true", help="time the start-up (one job) instead")
    ap.add_argument("--base", type=Path, default=None, help="also time this checkout's simulator (before/after)")
    a = ap.parse_args()
    batsim = find_batsim()
    if batsim is None:
        print("no real Batsim 4.2.1 ($BATSIM_BIN, ~/.cache/batsim-4.2.1/build/batsim)", file=sys.stderr)
        return 2
    sources = {"": ROOT} | ({" (base)": a.base.resolve()} if a.base else {})
    for src in sources.values():   # the bridge built, the simulator's byte-code written
        subprocess.run([sys.executable, "-c", "import burstbuffer.simulator.cli, burstbuffer.simulator.server\n"
                        "from burstbuffer.simulator import _bridge; _bridge.load()"],
                       cwd=src, env=sim_env(src), check=True)
    sims: dict[str, tuple[list[str], Path]] = {"batsim": ([batsim], ROOT)}
    for core in a.cores.split(","):
        for label, src in sources.items():
            sims[core + label] = ([sys.executable, "-m", "burstbuffer.simulator", "--core", core], src)
    print(f"machine: {machine()}; load average before: {load_average()}")
    if a.startup:
        print(f"start-up: one job (parallel task, 4 machines), {CLUSTER.name}; median of {a.repeat} alternated "
              "runs after one warm-up run each")
    else:
        print(f"{a.scheduler}, first {a.jobs} KTH jobs, {CLUSTER.name}; median of {a.repeat} alternated runs")
    rows: dict[str, list[dict]] = {k: [] for k in sims}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if a.startup:
            wl = tmp / "one.json"
            wl.write_text(json.dumps(ONE_JOB))
            for name, (cmd, src) in sims.items():   # warm-up: byte-code written, caches filled
                one_startup(cmd, wl, tmp / f"{name}-warm", src)
        else:
            wl = kth_subset(tmp / "kth.json", a.jobs)
        for k in range(a.repeat):
            for name, (cmd, src) in sims.items():
                rows[name].append(one_startup(cmd, wl, tmp / f"{name}-{k}", src) if a.startup
                                  else one(cmd, wl, tmp / f"{name}-{k}", a.scheduler, src))
    ref = rows["batsim"][0]["jobs"]
    base = statistics.median(r["wall"] for r in rows["batsim"])
    # (header, key, width, decimals) of the columns between the name and the ratio
    cols = ([("first message [s]", "first", 18, 3), ("exit [s]", "wall", 9, 3), ("sim CPU [s]", "sim_cpu", 12, 3)]
            if a.startup else
            [("wall [s]", "wall", 9, 2), ("sim CPU [s]", "sim_cpu", 12, 2), ("sched CPU [s]", "sched_cpu", 14, 2)])
    ratio = "exit / Batsim" if a.startup else "wall / Batsim"
    print(f"{'simulator':18} " + " ".join(f"{h:>{w}}" for h, _, w, _ in cols) + f" {ratio:>14}  _jobs.csv")
    for name, rs in rows.items():
        wall = statistics.median(r["wall"] for r in rs)
        same = "reference" if name == "batsim" else (
            "identical" if all(r["jobs"] == ref for r in rs) else "DIFFERENT")
        print(f"{name:18} " + " ".join(f"{statistics.median(r[k] for r in rs):{w}.{d}f}" for _, k, w, d in cols)
              + f" {wall / base:13.2f}x  {same}")
    print(f"load average after: {load_average()}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
