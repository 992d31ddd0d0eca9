"""The simulator's two cores side by side (docs/simulator-core.md): the actor core (one Python SimGrid
actor per running job, thread contexts) and the bridged core (one C++ actor per running job, raw contexts,
the compiled bridge; the default where it runs), on the same runs, alternated, REPEAT times each. Prints the medians of the wall
time, the simulator process's CPU time (user + sys) and the scheduler's, the machine, and whether the two
cores wrote byte-identical jobs.csv.

    .venv/bin/python benchmarks/bench_sim_core.py [--repeat 3] [--runs fcfs-easy:alloc-only:1000,...] [--cpu C]

`--runs`: comma-separated POLICY:MODEL:JOBS (first JOBS jobs of workloads/kth-1000.json, platform
platforms/dragonfly96.xml). `--cpu C` pins each run (scheduler and simulator) to core C. Time it on an
otherwise idle machine.

*The simulator alone* (``--replay``): the messages of one `burstbuffer run` (sjf-bb, io-aware, the first JOBS
jobs of the whole KTH trace, or all with ``--jobs 0``), recorded by ``bench_sched_cpu.py --record`` (made here
when FILE is missing), are replayed to a fresh simulator: this script answers each of its messages with the
recorded answer, so that the simulator runs exactly the recorded simulation without the scheduler's CPU, and
counts the messages that differ from the recorded ones (none: no output moved). Printed per run and as the
median of `--repeat`: the simulator process's CPU (user + system, rusage) and its CPU per message;
``--batsim`` replays the same answers to the real Batsim 4.2.1 too (the C++ Dragonfly plugin,
tests/batsim_diff.py), alternated with the embedded simulator. Both sides pinned to one core, as `run` does.

    .venv/bin/python benchmarks/bench_sim_core.py --replay /tmp/kth3000.rec --jobs 3000 --repeat 3 [--batsim]
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


STORAGE = "node_0,node_9,node_18,node_27,node_36,node_45,node_54,node_63,node_72,node_81,node_90,node_99"


def replay_one(kind: str, rec: Path, workload: Path, out: Path, cpu: int | None, cwd=None, wrap=()) -> dict:
    """One replay of recording `rec` (module docstring) to the embedded simulator or (`kind` "batsim") the real
    Batsim; its CPU (user, system), messages received and how many differ from the recording. `cwd`: where
    the simulator runs (another checkout's package), `wrap`: a command prefix (e.g. valgrind)."""
    import resource
    import time
    import zmq
    from bench_sched_cpu import frames
    from burstbuffer.affinity import pinned
    from burstbuffer.runner import DEFAULT_PLATFORM
    from burstbuffer.simulator import command
    endpoint = f"ipc://{out}.sock"
    sock = zmq.Context.instance().socket(zmq.REP)
    sock.bind(endpoint)
    if kind == "batsim":
        home = Path.home() / ".cache" / "batsim-4.2.1"
        cmd = [str(home / "build" / "batsim"), "-p", str(home / "platforms" / "dragonfly96_sg332.so"), "-w",
               str(workload), "-e", str(out), "-s", endpoint, "-q", "-r", STORAGE + ":storage",
               "--enable-dynamic-jobs", "--enable-profile-reuse"]
    else:
        cmd = command(str(DEFAULT_PLATFORM), str(workload), export_prefix=str(out), socket_endpoint=endpoint,
                      dynamic_jobs=True, profile_reuse=True, core="bridged")
    n = differ = 0
    with pinned(cpu):
        t0 = time.perf_counter()
        quiet = subprocess.DEVNULL if kind == "batsim" else None     # its INFO lines despite -q
        proc = subprocess.Popen([*wrap, *cmd], cwd=cwd, stdout=quiet, stderr=quiet)
        for direction, raw in frames(rec):
            if direction == b"<":
                got = sock.recv()
                n += 1
                differ += n > 1 and got != raw     # SIMULATION_BEGINS names the files
            else:
                sock.send(raw)
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
    sock.close(0)
    if proc.returncode != 0:
        raise SystemExit(f"{kind}: exit status {proc.returncode}")
    return {"cpu": ru.ru_utime + ru.ru_stime, "user": ru.ru_utime, "sys": ru.ru_stime,
            "messages": n, "differ": differ, "wall": wall}


def replay(a) -> int:
    from bench_sched_cpu import prefix_workload
    from burstbuffer.affinity import resolve_cpu
    rec = Path(a.replay)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        workload = prefix_workload(a.jobs, tmp)
        if not rec.exists():
            subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_sched_cpu.py"), "--record", str(rec),
                            "--jobs", str(a.jobs), "--repeat", "1", "--whole", "0" if a.jobs else "1"],
                           cwd=ROOT, check=True)
        subprocess.run([sys.executable, "-c", "from burstbuffer.simulator import _bridge; _bridge.load()"],
                       cwd=ROOT, check=True)
        cpu = resolve_cpu("auto" if a.cpu == "off" else a.cpu)
        kinds = ("embedded", "batsim") if a.batsim else ("embedded",)
        print(f"machine: {machine()}; load average {load_average()}")
        print(f"replay of {rec.name} ({'the whole KTH trace' if not a.jobs else f'first {a.jobs} KTH jobs'}, "
              f"sjf-bb, io-aware), pinned to core {cpu}")
        rows: dict[str, list[dict]] = {k: [] for k in kinds}
        for i in range(a.repeat):
            for kind in kinds:
                r = replay_one(kind, rec, workload, tmp / f"{kind}-{i}", cpu)
                rows[kind].append(r)
                print(f"  {kind:8} run {i + 1}: CPU {r['cpu']:.2f} s (user {r['user']:.2f} + sys {r['sys']:.2f}), "
                      f"{r['messages']} messages ({r['differ']} differ from the "
                      f"recording), wall {r['wall']:.1f} s; load {load_average()}", flush=True)
        for kind in kinds:
            med = {k: statistics.median(r[k] for r in rows[kind]) for k in ("cpu", "user", "sys")}
            n = rows[kind][0]["messages"]
            print(f"{kind:8} median of {a.repeat}: CPU {med['cpu']:.2f} s (user {med['user']:.2f} + sys "
                  f"{med['sys']:.2f}), {1e6 * med['cpu'] / n:.0f} us per message",
                  flush=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runs", default="fcfs-easy:alloc-only:1000,sjf-bb:alloc-only:1000,sjf-bb:io-aware:300")
    ap.add_argument("--cpu", default="off", help="core to pin each run to, or off (default)")
    ap.add_argument("--replay", metavar="FILE", help="replay a recorded run to the simulator alone (docstring)")
    ap.add_argument("--jobs", type=int, default=3000, help="--replay: the KTH prefix recorded (0: whole trace)")
    ap.add_argument("--batsim", action="store_true", help="--replay: the real Batsim 4.2.1 too")
    a = ap.parse_args()
    if a.replay:
        return replay(a)
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
