"""Benchmark of one plan-2 decision (Kopanski & Rzadca 2021, §3.3, Algorithm 2) against the queue length.

Platform: docs/platform.md — 96 compute nodes, 12 BB nodes of 40 GB (built as in bench_profile.py).
State of each sample: a window of consecutive KTH jobs from workloads/kth-1000.json (their `bb`
from the profiles; jobs asking for more than 96 nodes are skipped) is the queue, `now` is just
after the last submission; the jobs submitted before the window are running (each already ran a
random part of its walltime) until the machine is full or nothing else fits. One sample =
one `PlanScheduler.decide(now)` call (plan engine construction, 189-plan search, starts), timed
with perf_counter. Samples differ by the window position and the running jobs (seeded). Engines: ``native`` = the
package's C engine, ``python`` = its oracle, the pure-Python engine of tests/oracles/plan_engine.py.

Usage: ``python benchmarks/bench_plan.py [--sizes 10 100 500] [--samples 30] [--engines native python]
[--python-samples 5] [--alpha 2] [--seed 0]``
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform as pyplatform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))     # the repository: tests.oracles
from bench_profile import cpu_model, paper_platform  # noqa: E402

from burstbuffer.schedulers import make_scheduler  # noqa: E402
from tests.oracles.plan_engine import oracle_plans  # noqa: E402
from burstbuffer.schedulers.base import Job  # noqa: E402
from burstbuffer.schedulers.profile_scheduler import Running  # noqa: E402

KTH = Path(__file__).resolve().parents[1] / "workloads" / "kth-1000.json"


def kth_jobs() -> list[Job]:
    w = json.loads(KTH.read_text())
    out = []
    for j in w["jobs"]:
        if int(j["res"]) > 96:
            continue
        out.append(Job(f"w0!{j['id']}", float(j["subtime"]), float(j["walltime"]), int(j["res"]),
                       int(w["profiles"][j["profile"]]["bb"])))
    return out


def sample_scheduler(plat, jobs: list[Job], n: int, rng: random.Random, *, alpha: float):
    """A plan scheduler at decision time with running jobs and `n` queued ones (see module doc)."""
    k = rng.randrange(60, len(jobs) - n + 1)
    queue = jobs[k:k + n]
    now = queue[-1].subtime + 1.0
    s = make_scheduler("plan", plat, seed=rng.randrange(2**31), alpha=alpha)
    s._ensure_profile(now)
    prof = s.profile
    for j in reversed(jobs[:k]):                     # the most recent earlier jobs run
        if prof.nb_free_at(now) < 2:
            break
        elapsed = rng.uniform(0.0, 0.9) * j.walltime
        rem = j.walltime - elapsed
        fit = prof.fit_at(Job(j.id, j.subtime, rem, j.res, j.bb), now)
        if fit is None:
            continue
        bbs = fit.bb_per_storage(j.bb)
        prof.reserve(now, now + rem, fit.procs, bbs)
        s.running[j.id] = Running(j, now - elapsed, now + rem, fit.procs, bbs)
    for j in queue:
        s.submit(j, now)
    return s, now


def quantile(xs: list[float], q: float) -> float:
    """Nearest-rank quantile."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, math.ceil(q * len(xs)) - 1))]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 500])
    ap.add_argument("--samples", type=int, default=30, help="decisions per size (native engine)")
    ap.add_argument("--python-samples", type=int, default=5, help="decisions per size (Python engine)")
    ap.add_argument("--engines", nargs="+", default=["native", "python"], choices=["native", "python"])
    ap.add_argument("--alpha", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print(f"machine: nproc={os.cpu_count()} cpu={cpu_model()!r} python={pyplatform.python_version()}")
    plat = paper_platform()
    print(f"platform: {plat.nb_compute} compute, {len(plat.bb_capacity)} BB nodes × 40 GB; "
          f"policy plan (alpha={args.alpha:g}), 9 + 30·6 = 189 plans per decision")
    jobs = kth_jobs()
    engines = list(args.engines)
    print(f"{'engine':>7} {'queued':>6} {'samples':>7} {'running':>7} {'median ms':>10} {'p99 ms':>9} "
          f"{'max ms':>9} {'plans':>6} {'started':>7}")
    for eng in engines:
        native = eng == "native"
        engine = contextlib.nullcontext() if native else oracle_plans()
        for n in args.sizes:
            rng = random.Random(args.seed * 1000 + n)
            s, now = sample_scheduler(plat, jobs, n, random.Random(-1), alpha=args.alpha)
            with engine:
                s.decide(now)                            # warm-up (library load, caches)
            ts, plans, started, running = [], [], [], []
            for _ in range(args.samples if native else args.python_samples):
                s, now = sample_scheduler(plat, jobs, n, rng, alpha=args.alpha)
                running.append(len(s.running))
                with engine:
                    t = time.perf_counter()
                    st = s.decide(now)
                    ts.append(time.perf_counter() - t)
                plans.append(s.last_search.plans)
                started.append(len(st))
            print(f"{eng:>7} {n:>6} {len(ts):>7} {statistics.mean(running):>7.0f} "
                  f"{statistics.median(ts) * 1e3:>10.1f} {quantile(ts, 0.99) * 1e3:>9.1f} "
                  f"{max(ts) * 1e3:>9.1f} {statistics.median(plans):>6.0f} {statistics.mean(started):>7.1f}")


if __name__ == "__main__":
    main()
