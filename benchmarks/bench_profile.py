"""Benchmark of the availability profile (burstbuffer.schedulers.profile) on the paper's platform.

Platform: docs/platform.md — 108-host Dragonfly (3 groups × 4 chassis × 3 routers × 3 nodes), 96 compute
nodes, 12 BB nodes of 40 GB, Batsim ids in host-name order. A profile of ~N breakpoints is built the
way a plan is (each random job reserved at its earliest processors + BB fit), then the median
time of `earliest_fit` (BB-aware and processor-only), `fit_at(now)` and `reserve` + `release` of a
fit is measured on random jobs.

Usage: ``python benchmarks/bench_profile.py [--sizes 100 1000] [--reps 300] [--seed 0]``
"""
from __future__ import annotations

import argparse
import os
import platform as pyplatform
import random
import statistics
import time

from burstbuffer.platforms.model import Platform
from common import cpu_model
from burstbuffer.schedulers.base import Job
from burstbuffer.schedulers.profile import AvailabilityProfile

GB = 10**9


def paper_platform() -> Platform:
    """The paper's platform as Batsim announces it (ids follow host names sorted as strings)."""
    bb_hosts = {f"node_{k}" for k in range(0, 108, 9)}
    names = sorted((f"node_{k}" for k in range(108)))
    compute = [n for n in names if n not in bb_hosts]
    storage = [n for n in names if n in bb_hosts] + ["pfs"]
    data = {
        "compute_resources": [{"id": i, "name": n, "state": "idle", "properties": {}}
                              for i, n in enumerate(compute)],
        "storage_resources": [{"id": len(compute) + i, "name": n, "state": "idle",
                               "properties": {"role": "storage"}} for i, n in enumerate(storage)],
    }
    return Platform.from_simulation_begins(data, bb_capacity=40 * GB)


def random_job(rng: random.Random, i: int) -> Job:
    res = min(96, rng.choice([1, 1, 1, 2, 2, 4, 4, 8, 8, 16, 32, 64]) + rng.randrange(0, 2))
    walltime = float(rng.choice([300, 900, 3600, 3600, 7200, 14400, 36000]) * rng.uniform(0.5, 1.0))
    bb = int(rng.uniform(0.1, 4.0) * GB)
    return Job(f"b!{i}", 0.0, walltime, res, bb)


def build(plat: Platform, target: int, rng: random.Random) -> AvailabilityProfile:
    p = AvailabilityProfile(plat, origin=0.0)
    i = 0
    while len(p) < target:
        j = random_job(rng, i)
        i += 1
        fit = p.earliest_fit(j, rng.uniform(0, 0.01 * len(p) * 3600))
        if fit is not None:
            p.reserve(fit.start, fit.start + j.walltime, fit.procs, fit.bb_per_storage(j.bb))
    return p


def median_us(fn, reps: int) -> float:
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e6


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print(f"machine: nproc={os.cpu_count()} cpu={cpu_model()!r} python={pyplatform.python_version()}")
    plat = paper_platform()
    print(f"platform: {plat.nb_compute} compute, {len(plat.bb_capacity)} BB nodes × 40 GB")
    print(f"{'breakpoints':>11} {'earliest_fit':>13} {'earliest_fit':>13} {'fit_at(now)':>12} "
          f"{'reserve+':>10}")
    print(f"{'':>11} {'(procs+BB)':>13} {'(procs only)':>13} {'':>12} {'release':>10}   [µs, median]")
    for size in args.sizes:
        rng = random.Random(args.seed)
        p = build(plat, size, rng)
        jobs = [random_job(rng, 10**6 + k) for k in range(args.reps)]
        it = iter(jobs * 4)
        ef = median_us(lambda: p.earliest_fit(next(it), 0.0), args.reps)
        efp = median_us(lambda: p.earliest_fit(next(it), 0.0, bb_aware=False), args.reps)
        fa = median_us(lambda: p.fit_at(next(it), 0.0), args.reps)
        fits = [(j, p.earliest_fit(j, 0.0)) for j in jobs]
        fits = [(j, f) for j, f in fits if f is not None]
        it2 = iter(fits * (args.reps // max(len(fits), 1) + 1))

        def rr():
            j, f = next(it2)
            bbs = f.bb_per_storage(j.bb)
            p.reserve(f.start, f.start + j.walltime, f.procs, bbs)
            p.release(f.start, f.start + j.walltime, f.procs, bbs)

        r = median_us(rr, args.reps)
        print(f"{len(p):>11} {ef:>13.0f} {efp:>13.0f} {fa:>12.0f} {r:>10.0f}")


if __name__ == "__main__":
    main()
