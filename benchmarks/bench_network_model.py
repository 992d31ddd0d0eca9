"""The approximate network models (ring, random-ring) against the exact one (docs/io-model.md §5): the same workload and platform run
with ``--network-model exact``, ``ring`` and ``random-ring`` (sjf-bb, io-aware, ``runner.run``), one after the other; prints
each run's wall and CPU time and the deviation of each approximation's results: mean waiting time, and per job the
finish time (absolute difference [s], and relative to the exact run's turnaround).

Platforms and workloads as ``bench_platform_scale.py`` (KTH records made √s times wider and submitted s/√s
times faster on a machine s times the paper's).

Usage::

    python benchmarks/bench_network_model.py --size 1080 --jobs 300 [--workdir DIR] [--json OUT.json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform as pyplatform
import sys
import tempfile
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import bench_platform_scale as bps  # noqa: E402
from common import cpu_model  # noqa: E402


def compare(exact_csv: Path, ring_csv: Path) -> dict:
    """Deviation of the ring run's jobs.csv from the exact run's (same jobs): mean waiting time [h] of each,
    and over the jobs that ran in both, the finish-time difference [s] (median, p90, max) and relative to the
    exact turnaround (median, p90, max)."""
    a, b = pd.read_csv(exact_csv), pd.read_csv(ring_csv)
    m = a.merge(b, on="job_id", suffixes=("_e", "_r"))
    ran = m[(m.starting_time_e >= 0) & (m.starting_time_r >= 0)]
    d = (ran.finish_time_r - ran.finish_time_e).abs()
    rel = d / ran.turnaround_time_e.clip(lower=1.0)
    q = lambda s, x: float(s.quantile(x)) if len(s) else float("nan")  # noqa: E731
    we, wr = a.waiting_time.mean() / 3600, b.waiting_time.mean() / 3600
    return {"jobs": len(m), "jobs_compared": len(ran), "mean_wait_exact_h": we, "mean_wait_ring_h": wr,
            "mean_wait_rel_diff": (wr - we) / we if we else float("nan"),
            "finish_abs_median_s": q(d, .5), "finish_abs_p90_s": q(d, .9), "finish_abs_max_s": float(d.max()),
            "finish_rel_median": q(rel, .5), "finish_rel_p90": q(rel, .9), "finish_rel_max": float(rel.max()),
            "identical_finish": int((d == 0).sum()),
            "makespan_exact_s": float(a.finish_time.max()), "makespan_ring_s": float(b.finish_time.max())}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1080, choices=sorted(bps.SIZES))
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--models", nargs="+", default=["exact", "ring", "random-ring"])
    ap.add_argument("--workdir")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-net-") as tmp:
        work = Path(args.workdir or tmp)
        work.mkdir(parents=True, exist_ok=True)
        p = bps.params_of(args.size)
        plat = work / f"dragonfly{args.size}.xml"
        bps.write_platform(p, plat)
        width, speedup = bps.scaling(p.nb_compute, None, None)
        wl = work / f"kth-{args.jobs}-{args.size}.json"
        facts = bps.make_workload(p, args.jobs, width, speedup, wl)
        print(f"machine: nproc={os.cpu_count()} cpu={cpu_model()!r} python={pyplatform.python_version()} "
              f"load average at start {os.getloadavg()[0]:.2f}")
        print(f"{args.size} hosts, {facts['jobs']} KTH jobs (width {width}, speed-up {speedup:.1f}), sjf-bb io-aware")
        runs = {}
        for model in args.models:
            out = work / f"out-{model}"
            runs[model] = bps._in_subprocess("run", str(plat), str(wl), str(out), "", model)
            r = runs[model]
            print(f"  {model:<6} run {r['run_s']:7.1f} s, CPU scheduler {r['scheduler_cpu_s']:.1f} s / simulator "
                  f"{r['simulator_cpu_s']:.1f} s, RSS {r['scheduler_peak_rss_mb']:.0f} / "
                  f"{r['simulator_peak_rss_mb']:.0f} MB", flush=True)
        res = {"size": args.size, "workload": facts, "runs": runs}
        for model in [m for m in runs if m != "exact" and "exact" in runs]:
            c = compare(work / "out-exact" / "jobs.csv", work / f"out-{model}" / "jobs.csv")
            res.setdefault("deviation", {})[model] = c
            print(f"  {model} against exact: mean waiting time {c['mean_wait_exact_h']:.3f} h -> "
                  f"{c['mean_wait_ring_h']:.3f} h ({100 * c['mean_wait_rel_diff']:+.1f} %); finish time |diff| over "
                  f"{c['jobs_compared']} jobs: median {c['finish_abs_median_s']:.1f} s, p90 {c['finish_abs_p90_s']:.1f} s, "
                  f"max {c['finish_abs_max_s']:.1f} s; relative to the exact turnaround: median "
                  f"{100 * c['finish_rel_median']:.2f} %, p90 {100 * c['finish_rel_p90']:.2f} %, max "
                  f"{100 * c['finish_rel_max']:.1f} %; identical {c['identical_finish']}; makespan "
                  f"{c['makespan_exact_s']:.0f} -> {c['makespan_ring_s']:.0f} s")
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
