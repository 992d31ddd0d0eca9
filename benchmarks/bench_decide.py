"""Scheduler-side CPU of one policy on the 1000-job KTH workload, without the simulator.

First runs `burstbuffer run --model alloc-only` once (or reads `--runtimes JOBS.csv`) for each job's
runtime; then replays the run REPEAT times in this process: the decision loop (`SchedulerApp`, the
policy, the alloc-only job model) fed with the submissions at their submission times and each job's
completion at start + runtime, as the simulator would send them. Prints the median CPU time
(`time.process_time`) of a replay and the number of decisions: the cost of the scheduler's side
alone, which a loaded machine perturbs far less than a whole run's.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_decide.py --policy sjf-bb --repeat 5
    PYTHONPATH=. .venv/bin/python benchmarks/bench_decide.py --policy fcfs --workload workloads/kth-all.json \
        --jobs 6000 --repeat 1 --cprofile fcfs.prof      # the first 6000 jobs of the whole trace, profiled
"""
from __future__ import annotations

import argparse
import json
import heapq
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import machine  # noqa: E402


def replay(policy: str, workload, platform, runtime: dict[str, float]) -> tuple[float, int]:
    """One replay: (CPU seconds, number of decisions)."""
    from burstbuffer.app import SchedulerApp
    from burstbuffer.batsim.loop import Outbox
    from burstbuffer.batsim.protocol import JobCompleted, JobSubmitted, SimulationBegins
    from burstbuffer.io_model.alloc_only import AllocOnlyModel
    from burstbuffer.platforms.model import Platform
    from burstbuffer.schedulers import make_scheduler

    orig = Platform.from_simulation_begins
    Platform.from_simulation_begins = classmethod(lambda cls, data, **kw: platform)
    try:
        t0 = time.process_time()
        app = SchedulerApp(lambda p: make_scheduler(policy, p, seed=0), AllocOnlyModel())
        app.on_event(0.0, SimulationBegins({"profiles": {"w0": workload.profiles}}), Outbox(0.0))
        subs = sorted(workload.jobs, key=lambda j: j.subtime)
        ends: list[tuple[float, str]] = []
        i = decisions = 0
        started: set[str] = set()
        while i < len(subs) or ends:
            t = min(([float(subs[i].subtime)] if i < len(subs) else []) + ([ends[0][0]] if ends else []))
            out = Outbox(t)
            while ends and ends[0][0] == t:
                app.on_event(t, JobCompleted(heapq.heappop(ends)[1], "COMPLETED_SUCCESSFULLY"), out)
            while i < len(subs) and float(subs[i].subtime) == t:
                j = subs[i]
                i += 1
                jid = f"w0!{j.id}"
                app.on_event(t, JobSubmitted(jid, {"id": jid, "subtime": j.subtime, "walltime": j.walltime,
                                                   "res": j.res, "profile": j.profile}), out)
            app.after_events(t, out)
            decisions += 1
            for job_id in out.started:  # the starts of this answer (scanning every record was O(jobs) each)
                if job_id not in started:
                    started.add(job_id)
                    heapq.heappush(ends, (t + runtime[job_id], job_id))
        return time.process_time() - t0, decisions
    finally:
        Platform.from_simulation_begins = orig


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policy", default="sjf-bb")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--runtimes", type=Path, help="jobs.csv of an alloc-only run of the workload (default: run it)")
    ap.add_argument("--workload", type=Path, help="Batsim workload (default: the bundled 1000 KTH jobs)")
    ap.add_argument("--jobs", type=int, help="only its first N jobs")
    ap.add_argument("--cprofile", type=Path, help="write cProfile stats of the first replay here")
    args = ap.parse_args()
    from burstbuffer.runner import DEFAULT_PLATFORM, DEFAULT_WORKLOAD, run
    from burstbuffer.workloads.batsim_json import load_workload

    with tempfile.TemporaryDirectory() as tmp:
        wl_path = args.workload or DEFAULT_WORKLOAD
        if args.jobs is not None:
            data = json.loads(Path(wl_path).read_text())
            data["jobs"] = data["jobs"][:args.jobs]
            wl_path = Path(tmp) / "w.json"
            wl_path.write_text(json.dumps(data))
        workload = load_workload(wl_path, require_bb=False)
        csv = args.runtimes
        if csv is None:
            run(args.policy, wl_path, DEFAULT_PLATFORM, Path(tmp) / "alloc", model="alloc-only", progress=False,
                timeout=3600)
            csv = Path(tmp) / "alloc" / "jobs.csv"
        jobs = pd.read_csv(csv, dtype={"job_id": str})
        runtime = {f"w0!{k}": float(v) for k, v in zip(jobs["job_id"], jobs["execution_time"]) if v == v}
        platform = _platform(DEFAULT_PLATFORM)
    cpu, n = [], 0
    for k in range(args.repeat):
        if k == 0 and args.cprofile:
            import cProfile
            prof = cProfile.Profile()
            c, n = prof.runcall(replay, args.policy, workload, platform, runtime)
            prof.dump_stats(str(args.cprofile))
        else:
            c, n = replay(args.policy, workload, platform, runtime)
        cpu.append(c)
    print(f"machine: {machine()}")
    print(f"{args.policy}: {len(workload.jobs)} jobs, {n} decisions; scheduler CPU per replay: median "
          f"{statistics.median(cpu):.3f} s (min {min(cpu):.3f}, max {max(cpu):.3f}, {args.repeat} replays)")
    return 0


def _platform(xml: Path):
    """The platform as the scheduler sees it in a run: the SIMULATION_BEGINS resources of `xml`."""
    from burstbuffer.platforms.model import Platform
    from burstbuffer.platforms.simgrid_xml import parse_platform, resolve_machines
    m = resolve_machines(parse_platform(str(xml)))
    return Platform.from_simulation_begins({"compute_resources": [x.to_json() for x in m.compute],
                                            "storage_resources": [x.to_json() for x in m.storage]})


if __name__ == "__main__":
    sys.exit(main())
