"""Benchmark: the paper's platform and larger Dragonflies (about 1,000 and 10,000 nodes) in the embedded
simulator — load time, run time and peak memory per size.

The paper stopped at 108 nodes because Batsim failed on larger Dragonflies; this checks that platforms of
about 1,000 and 10,000 nodes load and that a KTH-derived workload runs on them.

Sizes (``burstbuffer platform dragonfly``): the paper's platform and 10 and 100 times larger ones with its
proportions — 8 compute nodes per BB node of 40 GB (the first B nodes of each chassis), one PFS link of
5 GB/s per 96 compute nodes, 1250 MB/s links — within SimGrid's Dragonfly rule groups <= routers:

=======  ==================  ====  ========  ========  ===========
hosts    G × C × R × K       B     compute   BB nodes  PFS link
=======  ==================  ====  ========  ========  ===========
108      3 × 4 × 3 × 3       1     96        12        5 GB/s  (platforms/dragonfly96.xml)
1080     6 × 5 × 6 × 6       4     960       120       50 GB/s (platforms/dragonfly960.xml)
4608     12 × 6 × 16 × 4     3     4,392     216       228.75 GB/s (platforms/theta4392.xml, Theta-sized:
                                                       5,833 GB per BB node, 1.26 PB in all; see THETA)
10800    10 × 12 × 10 × 9    10    9,600     1,200     500 GB/s (platforms/dragonfly9600.xml)
=======  ==================  ====  ========  ========  ===========

Workload: the first ``--jobs`` records of the KTH trace (docs/workload.md), converted with nb_res = the platform's
compute nodes and its BB nodes and capacity, after scaling each record so that the larger machine is used
as the paper's is: with s = compute nodes / 96, every job gets ``w = round(sqrt(s))`` times its requested
processors (same compute per node, and ``com / w`` bytes per pair of hosts so that each node sends as much
as at width 1) and submissions come ``s / w`` times faster (``--width`` / ``--speedup``
override them). Run with ``sjf-bb`` and the io-aware model (the defaults of ``burstbuffer run``) through
``burstbuffer.runner.run``.

Measured, each in a fresh process (one SimGrid engine per process):

* load: the simulator's platform load (XML parse, Batsim's resources, SimGrid build through the API) and
  the scheduler's (``Platform.from_simulation_begins``, the sjf-bb scheduler and its availability profile,
  every compute node's BB preference), with that process's peak RSS;
* run: wall time of ``runner.run``, peak RSS of the scheduler process and of the simulator process.

Medians over ``--reps`` runs (``--reps-large`` for the 10,800-host size, which converts ``--jobs-large`` records:
its simulation costs far more per job, see below). CPU times (user + system) are reported beside wall times:
on a shared machine they are the steadier measure.

Usage::

    python benchmarks/bench_platform_scale.py [--sizes 108 1080 10800] [--jobs 1000] [--reps 3]
        [--reps-large 1] [--jobs-large 200] [--width W] [--speedup X] [--workdir DIR] [--json OUT.json]
        [--cprofile DIR]

``--cprofile DIR`` also writes cProfile statistics of the scheduler process and of the simulator process
of each size's first run (``DIR/<size>-scheduler.pstats``, ``DIR/<size>-simulator.pstats``). The simulator's
actors run in SimGrid's own threads, which cProfile does not see: its profile shows ``simgrid.run`` as one
block; ``perf record -g -p <simulator pid>`` shows what happens inside.

Findings (2-core shared AMD EPYC, load average 4-7 from other jobs; docs/performance.md has the tables):

* Loading is not a problem: SimGrid builds the 10,800-host Dragonfly in 0.2-0.4 s, the scheduler's platform
  view takes 0.3-0.8 s. Two quadratic steps were fixed on the way: ``resolve_machines`` split the
  ``storage_nodes`` list once per host (O(hosts × BB nodes): 2.7 s, up to 12 s on a busy machine, now
  0.05 s), and ``Platform.bb_preference`` sorted the 1,200 BB nodes once per compute node (1.9 s and one
  1,200-tuple per node, ~90 MB; now one per chassis, 0.03 s).
* SIMULATION_BEGINS at 10,800 hosts was 131 MB of JSON (0.5-3.5 s to encode, as long to decode; ~250 MB of
  each process's peak RSS): every resource carried its zone's properties, including the 1,200-name
  ``storage_nodes`` list, as Batsim forwards them. The generator now puts that list on a zone without hosts
  (docs/platform.md §4): 1.9 MB, 174 bytes per resource at every size; the load's peak RSS 456 → 210 MB.
* The run time is the simulator's, and inside it SimGrid's: ``perf`` over a minute of the 10,800-host,
  1000-job run puts 88 % of the simulator's CPU in libsimgrid, 67 % in ``lmm::FairBottleneck::do_solve``
  (ptask_L07's max-min solver) and 3 % in Python. Every I/O step of every running job crosses the one PFS
  link, so each event re-solves one system holding all running I/O; and a compute phase of an N-node job is
  one parallel task with N² host-to-host flows (``com`` per pair, docs/workload.md): the 200-job, width-10 run costs
  277 s of simulator CPU with communication and 31 s without it. The scheduler's CPU stays small (4-12 s).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform as pyplatform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from burstbuffer.platforms.generator import DragonflyParams, write_platform  # noqa: E402
from common import cpu_model  # noqa: E402
from burstbuffer import links  # noqa: E402
from burstbuffer.workloads.bb_model import BBModel  # noqa: E402
from burstbuffer.workloads.batsim_json import write_workload  # noqa: E402
from burstbuffer.workloads.bundled import KTH_SWF  # noqa: E402
from burstbuffer.workloads.convert import convert_records, scale_com, scale_records  # noqa: E402
from burstbuffer.workloads.swf import iter_swf  # noqa: E402
from burstbuffer.simulator.network import NETWORK_MODELS  # noqa: E402

GB = 10**9

#: The Theta-sized platform (platforms/theta4392.xml; docs/performance.md, "Large machines"): 4,392 compute nodes as Theta
#: (Fan et al., "Scheduling Beyond CPUs for HPC", HPDC'19, §4.1 Table 2), in 12 groups x 6 chassis x 16
#: routers x 4 nodes (4,608 hosts), 3 BB nodes per chassis (216); BB 1.26 PB in all (Theta's projected shared
#: burst buffer, 1.38 x its 913.5 TB of memory): 5,833 GB per BB node; PFS link 5 GB/s per 96 compute nodes as
#: the paper's platform (228.75 GB/s).
THETA = (12, 6, 16, 4, 3, "5833GB", "228750MBps")

#: hosts → (groups, chassis, routers, nodes per router, BB nodes per chassis, BB capacity, PFS bandwidth).
SIZES = {
    108: (3, 4, 3, 3, 1, "40GB", "5GBps"),
    1080: (6, 5, 6, 6, 4, "40GB", "50GBps"),
    4608: THETA,
    10800: (10, 12, 10, 9, 10, "40GB", "500GBps"),
}


def params_of(size: int) -> DragonflyParams:
    g, c, r, k, b, cap, pfs = SIZES[size]
    return DragonflyParams.from_options(g, c, r, k, b, cap, pfs)


def scaling(nb_compute: int, width: int | None, speedup: float | None) -> tuple[int, float]:
    """(width factor, submission speed-up) for a machine of `nb_compute` compute nodes (module docstring)."""
    s = nb_compute / 96
    w = width if width is not None else max(1, round(math.sqrt(s)))
    return w, (speedup if speedup is not None else max(1.0, s / w))


def make_workload(p: DragonflyParams, jobs: int, width: int, speedup: float, path: Path, seed: int = 0,
                  days: float | None = None) -> dict:
    """KTH-derived workload for platform `p` (module docstring); returns facts about it. With `days`, only the
    records submitted within that many days of the first one, after the speed-up, are kept (at most `jobs`)."""
    model = BBModel(bb_capacity=p.bb_capacity, bb_nodes=p.nb_bb_nodes)
    records = scale_records(iter_swf(KTH_SWF), width=width, speedup=speedup, days=days)
    conv = convert_records(records, name=f"kth-{jobs}-x{width}", nb_res=p.nb_compute, model=model, seed=seed,
                           max_records=jobs, source=str(KTH_SWF), rule="artifact")
    w = conv.workload
    scale_com(w, width)   # `com` is bytes between each pair of hosts: keep each node's traffic as at width 1
    write_workload(path, w)
    work = sum(j.res * w.profiles[j.profile]["cpu"] for j in w.jobs) / 1e9  # node-seconds of compute
    span = max(j.subtime for j in w.jobs) - min(j.subtime for j in w.jobs)
    return {"jobs": len(w.jobs), "width": width, "speedup": speedup, "oversized": conv.oversized,
            "node_seconds": work, "submission_span_s": span,
            "offered_load": work / (p.nb_compute * span) if span > 0 else None}


# ---------------------------------------------------------------------------------------------- workers

def _maxrss_mb(who) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # Linux: KiB


def _current_rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def worker_load(platform: str) -> dict:
    """Load `platform` as the simulator and as the scheduler do; times in seconds."""
    from burstbuffer.platforms.model import Platform
    from burstbuffer.schedulers import make_scheduler
    from burstbuffer.platforms.simgrid_xml import parse_platform, resolve_machines
    from burstbuffer.simulator.platform_loader import load_into_engine
    from burstbuffer.simulator.server import import_simgrid

    out = {}
    t = time.perf_counter()
    spec = parse_platform(platform)
    machines = resolve_machines(spec)
    out["parse_s"] = time.perf_counter() - t
    sg = import_simgrid(True)
    t = time.perf_counter()
    engine = sg.Engine(["bench", "--cfg=host/model:ptask_L07", "--log=root.thres:critical"])
    out["loader"] = load_into_engine(engine, spec)
    out["simgrid_s"] = time.perf_counter() - t
    out["hosts"] = len(engine.all_hosts)
    t = time.perf_counter()
    data = {"compute_resources": [m.to_json() for m in machines.compute],
            "storage_resources": [m.to_json() for m in machines.storage]}
    text = json.dumps(data)
    out["resources_json_bytes"] = len(text)
    out["resources_json_s"] = time.perf_counter() - t
    t = time.perf_counter()
    plat = Platform.from_simulation_begins(json.loads(text))
    out["scheduler_platform_s"] = time.perf_counter() - t
    t = time.perf_counter()
    make_scheduler("sjf-bb", plat)
    out["scheduler_init_s"] = time.perf_counter() - t
    t = time.perf_counter()
    for c in plat.compute:
        plat.bb_preference(c)
    out["bb_preference_all_s"] = time.perf_counter() - t
    from burstbuffer.schedulers.profile import AvailabilityProfile
    rss0 = _current_rss_mb()
    t = time.perf_counter()
    prof = AvailabilityProfile(plat)
    for c in plat.compute:
        prof.bb_preference_index(c)
    out["profile_preference_s"] = time.perf_counter() - t
    out["profile_preference_mb"] = _current_rss_mb() - rss0
    distinct = {id(x): x for x in (prof.bb_preference_index(c) for c in plat.compute)}
    out["profile_preference_entries"] = sum(len(x) for x in distinct.values())
    out["peak_rss_mb"] = _maxrss_mb(resource.RUSAGE_SELF)
    return out


def worker_run(platform: str, workload: str, output: str, cprofile: str | None, network_model: str = "exact",
               link: str = "in-simulator") -> dict:
    """`runner.run` sjf-bb, io-aware, over `link` (`burstbuffer.links.LINKS`; cProfile needs "pipes"); wall time, peak RSS
    and CPU of this process (over pipes, the scheduler) and of the child (the simulator, with the scheduler in
    it by default)."""
    from burstbuffer import runner

    if cprofile:
        base = runner.simulator_command

        def profiled_command(*a, **k):
            argv = base(*a, **k)
            return [argv[0], "-m", "cProfile", "-o", f"{cprofile}-simulator.pstats"] + argv[1:]
        runner.simulator_command = profiled_command
        import cProfile
        prof = cProfile.Profile()
        prof.enable()
    t = time.perf_counter()
    res = runner.run("sjf-bb", Path(workload), Path(platform), Path(output), model="io-aware", progress=False,
                     timeout=3600, network_model=network_model, link="pipes" if cprofile else link)
    wall = time.perf_counter() - t
    if cprofile:
        prof.disable()
        prof.dump_stats(f"{cprofile}-scheduler.pstats")
    s = res.summary
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    sched_cpu, sim_cpu = me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime
    if res.scheduler_cpu is not None:      # in the simulator's process: its answers' CPU, the rest the simulator's
        sched_cpu, sim_cpu = res.scheduler_cpu, sim_cpu - res.scheduler_cpu
    return {"run_s": wall, "messages": res.messages, "scheduler_peak_rss_mb": me.ru_maxrss / 1024,
            "simulator_peak_rss_mb": kids.ru_maxrss / 1024, "scheduler_cpu_s": sched_cpu,
            "simulator_cpu_s": sim_cpu, "summary": str(s)}


def _in_subprocess(kind: str, *args: str) -> dict:
    cmd = [sys.executable, __file__, "--worker", kind, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} worker failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------------------- main

def _median(rows: list[dict], key: str):
    vals = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def bench_size(size: int, args, work: Path) -> dict:
    p = params_of(size)
    plat = work / f"dragonfly{size}.xml"
    t = time.perf_counter()
    write_platform(p, plat)
    gen_s = time.perf_counter() - t
    width, speedup = scaling(p.nb_compute, args.width, args.speedup)
    jobs = args.jobs_large if size >= 4000 and args.jobs_large else args.jobs
    wl = work / f"kth-{jobs}-{size}{f'-{args.days:g}d' if args.days else ''}.json"
    t = time.perf_counter()
    wfacts = make_workload(p, jobs, width, speedup, wl, args.seed, args.days)
    conv_s = time.perf_counter() - t
    reps = args.reps_large if size >= 4000 else args.reps
    loads, runs = [], []
    for i in range(reps):
        loads.append(_in_subprocess("load", str(plat)))
        prof = str(Path(args.cprofile) / str(size)) if args.cprofile and i == 0 else ""
        runs.append(_in_subprocess("run", str(plat), str(wl), str(work / f"out-{size}-{args.network_model}-{i}"),
                                   prof, args.network_model, args.link))
        print(f"  size {size} rep {i + 1}/{reps}: load {loads[-1]['parse_s'] + loads[-1]['simgrid_s']:.3f} s, "
              f"run {runs[-1]['run_s']:.1f} s", file=sys.stderr, flush=True)
    row = {"size": size, "hosts": p.nb_hosts, "compute": p.nb_compute, "bb_nodes": p.nb_bb_nodes,
           "bb_capacity": p.bb_capacity, "topo": p.topo_parameters, "reps": reps,
           "generate_s": gen_s, "convert_s": conv_s, "workload": wfacts}
    for key in ("parse_s", "simgrid_s", "resources_json_s", "resources_json_bytes", "scheduler_platform_s",
                "scheduler_init_s", "bb_preference_all_s", "profile_preference_s", "profile_preference_mb",
                "profile_preference_entries", "peak_rss_mb"):
        row[f"load_{key}"] = _median(loads, key)
    for key in ("run_s", "messages", "scheduler_peak_rss_mb", "simulator_peak_rss_mb", "scheduler_cpu_s",
                "simulator_cpu_s"):
        row[key] = _median(runs, key)
    row["summary"] = runs[0]["summary"]
    row["all_runs_s"] = [r["run_s"] for r in runs]
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=sorted(SIZES), choices=sorted(SIZES))
    ap.add_argument("--jobs", type=int, default=1000, help="KTH records to convert per size (default: 1000)")
    ap.add_argument("--reps", type=int, default=3, help="runs per size, median reported (default: 3)")
    ap.add_argument("--reps-large", type=int, default=1, help="runs of the 4,608- and 10,800-host sizes (default: 1)")
    ap.add_argument("--jobs-large", type=int, default=200,
                    help="KTH records for the 4,608- and 10,800-host sizes (default: 200; 0: --jobs)")
    ap.add_argument("--width", type=int, help="processor multiplier of every job (default: round(sqrt(s)))")
    ap.add_argument("--speedup", type=float, help="submission speed-up (default: s / width)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--days", type=float, help="keep only the jobs submitted within DAYS of the first, after the "
                                                "speed-up (e.g. 30: a month of the scaled trace)")
    ap.add_argument("--link", default="in-simulator", type=links.link,
                    help="`run`'s --link (in-simulator or pipes; default in-simulator: the scheduler's CPU is then in the simulator's column; "
                         "--cprofile runs over pipes)")
    ap.add_argument("--network-model", default="exact", choices=NETWORK_MODELS,
                    help="the simulator's --network-model (docs/io-model.md §5; default exact)")
    ap.add_argument("--workdir", help="keep platforms, workloads and outputs here (default: a temporary folder)")
    ap.add_argument("--json", help="also write the results to this JSON file")
    ap.add_argument("--cprofile", metavar="DIR", help="write cProfile stats of each size's first run to DIR")
    ap.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        kind, rest = args.worker[0], args.worker[1:]
        res = worker_load(*rest) if kind == "load" else worker_run(rest[0], rest[1], rest[2], rest[3] or None, *rest[4:])
        print(json.dumps(res))
        return 0
    if args.cprofile:
        Path(args.cprofile).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-platform-") as tmp:
        work = Path(args.workdir or tmp)
        work.mkdir(parents=True, exist_ok=True)
        print(f"machine: nproc={os.cpu_count()} cpu={cpu_model()!r} python={pyplatform.python_version()} "
              f"load average at start {os.getloadavg()[0]:.2f}")
        print(f"workload: first {args.jobs} KTH records ({args.jobs_large or args.jobs} for 4,608 and 10,800 hosts)"
              f"{f', submitted within {args.days:g} days after the speed-up' if args.days else ''}, sjf-bb, io-aware "
              f"(runner.run), network model {args.network_model}, link {args.link}")
        rows = []
        for size in args.sizes:
            rows.append(bench_size(size, args, work))
        print(f"\n{'hosts':>6} {'compute':>7} {'BB':>5} {'width':>5} {'speedup':>7} | {'BEGINS':>7} {'sim load':>8} "
              f"{'SimGrid':>8} {'sched load':>10} {'load RSS':>8} | {'run':>7} {'sched CPU':>9} {'sim CPU':>8} "
              f"{'sched RSS':>9} {'sim RSS':>8} {'reps':>4}")
        print(f"{'':>6} {'':>7} {'':>5} {'':>5} {'':>7} | {'[MB]':>7} {'[s]':>8} {'[s]':>8} {'[s]':>10} {'[MB]':>8} | "
              f"{'[s]':>7} {'[s]':>9} {'[s]':>8} {'[MB]':>9} {'[MB]':>8}")
        for r in rows:
            load = r["load_parse_s"] + r["load_simgrid_s"]
            sched = r["load_scheduler_platform_s"] + r["load_scheduler_init_s"] + r["load_bb_preference_all_s"]
            print(f"{r['hosts']:>6} {r['compute']:>7} {r['bb_nodes']:>5} {r['workload']['width']:>5} "
                  f"{r['workload']['speedup']:>7.1f} | {r['load_resources_json_bytes'] / 1e6:>7.2f} {load:>8.3f} "
                  f"{r['load_simgrid_s']:>8.3f} {sched:>10.3f} "
                  f"{r['load_peak_rss_mb']:>8.0f} | {r['run_s']:>7.1f} {r['scheduler_cpu_s']:>9.1f} "
                  f"{r['simulator_cpu_s']:>8.1f} {r['scheduler_peak_rss_mb']:>9.0f} "
                  f"{r['simulator_peak_rss_mb']:>8.0f} {r['reps']:>4}")
        print("BEGINS: the resources of SIMULATION_BEGINS as JSON; sim load: parse + Batsim resources + SimGrid build; sched load: Platform from SIMULATION_BEGINS's "
              "resources + sjf-bb scheduler + every compute node's BB preference; run: runner.run wall time; "
              "CPU = user + system")
        for r in rows:
            print(f"\n--- {r['hosts']} hosts ({r['topo']}); workload {r['workload']}; runs {r['all_runs_s']}")
            print(r["summary"])
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
