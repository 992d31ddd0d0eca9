"""Benchmark of one BBSched decision: the GA (Fan et al. 2019 §3.2.2, `moo.ga_front`) + the §3.2.4 rule.

Samples: windows of w consecutive KTH jobs from workloads/kth-1000.json (nodes, total BB = res × bb per
node; jobs larger than the machine skipped), starting at a random position; capacities: a random free
share (30-70 %) of the paper's 96 nodes and 480 GB, such that the window does not fit whole (else no
solver would run). One sample = `ga_front` + `choose`, timed with perf_counter (wall) and thread_time (CPU of
the thread: less sensitive to other load), one process; `--pin CPU` pins it to one core (default: the
core it starts on; `--pin off` leaves placement to the kernel).
`--engine E[,E...]`: `native` = the GA's generations in C (`_ga_native`, the package's, the default), `numpy` = the
same GA in numpy (its oracle, tests/oracles/ga_numpy.py), `both` = native,numpy (each sample runs both on the same
draws and the fronts are checked equal), `nsga2` = pymoo's NSGA-II (`moo.nsga2_front`, bbsched-nsga2). Also the exact front (w ≤ 20) and the GA's generational distance to it (mean over the samples).

Usage: ``python benchmarks/bench_bbsched.py [--samples 50] [--seed 0] [--cases 20:20:500 50:20:2000]
[--mutation-rate 0.0005] [--engine native|numpy|both|nsga2[,...]] [--pin auto|off|CPU]``
(case = w:P:G). Prints the machine, then per case and engine the median and p99 time [ms] and the mean GD.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))     # the repository: tests.oracles
from common import machine  # noqa: E402

from burstbuffer.affinity import current_cpu  # noqa: E402
from burstbuffer.schedulers import moo  # noqa: E402
from tests.oracles.ga_numpy import ga_front_numpy  # noqa: E402

KTH = Path(__file__).resolve().parents[1] / "workloads" / "kth-1000.json"
N, B = 96, 480 * 10**9


def kth_requests() -> tuple[np.ndarray, np.ndarray]:
    w = json.loads(KTH.read_text())
    n, b = [], []
    for j in w["jobs"]:
        if j["res"] <= N:
            n.append(j["res"])
            b.append(j["res"] * int(w["profiles"][j["profile"]].get("bb", 0)))
    return np.array(n, np.int64), np.array(b, np.int64)


def samples(w: int, count: int, rng: np.random.Generator):
    n, b = kth_requests()
    out = []
    while len(out) < count:
        i = int(rng.integers(0, len(n) - w))
        wn, wb = n[i:i + w], b[i:i + w]
        cn, cb = int(N * rng.uniform(0.3, 0.7)), int(B * rng.uniform(0.3, 0.7))
        keep = (wn <= cn) & (wb <= cb)
        wn, wb = wn[keep], wb[keep]
        if len(wn) >= 2 and (wn.sum() > cn or wb.sum() > cb):
            out.append((wn, wb, cn, cb))
    return out


def pin(arg: str) -> str:
    """Pin this process to one core: "auto" = the one it runs on, "off" = no pinning. Returns a label."""
    if arg == "off" or not hasattr(os, "sched_setaffinity"):
        return f"not pinned (allowed CPUs {sorted(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else '?'})"
    cpu = current_cpu() if arg == "auto" else int(arg)
    cpu = 0 if cpu is None else cpu
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", nargs="+", default=["20:20:500", "50:20:2000"])
    ap.add_argument("--mutation-rate", type=float, default=moo.DEFAULT_MUTATION_RATE, help="p_m per gene")
    ap.add_argument("--engine", default="native", help="native, numpy, both (= native,numpy), nsga2; comma-separated")
    ap.add_argument("--pin", default="auto", help="auto (the current core), off, or a CPU number")
    args = ap.parse_args()
    engines = list(dict.fromkeys(e for x in args.engine.split(",") for e in
                                 (["native", "numpy"] if x == "both" else [x])))
    if not engines or set(engines) - {"native", "numpy", "nsga2"}:
        sys.exit(f"bench_bbsched: --engine: unknown engine in {args.engine!r}")
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.2f}; {pin(args.pin)}")
    rng = np.random.default_rng(args.seed)
    for case in args.cases:
        w, P, G = (int(x) for x in case.split(":"))
        times = {e: [] for e in engines}
        cpu = {e: [] for e in engines}
        gds, ks = {e: [] for e in engines}, []
        for wn, wb, cn, cb in samples(w, args.samples, rng):
            seed = int(rng.integers(2**31))
            fronts = {}
            for e in engines:
                g = np.random.default_rng(seed)
                c0 = time.thread_time()
                t0 = time.perf_counter()
                if e == "nsga2":
                    front = moo.nsga2_front(wn, wb, cn, cb, g, population=P, generations=G,
                                            mutation_rate=args.mutation_rate)
                else:
                    ga = moo.ga_front if e == "native" else ga_front_numpy
                    front = ga(wn, wb, cn, cb, g, population=P, generations=G, mutation_rate=args.mutation_rate)
                moo.choose(front, N, B)
                times[e].append(time.perf_counter() - t0)
                cpu[e].append(time.thread_time() - c0)
                fronts[e] = front
            if "native" in fronts and "numpy" in fronts and not (
                    np.array_equal(fronts["native"].points, fronts["numpy"].points)
                    and np.array_equal(fronts["native"].sets, fronts["numpy"].sets)):
                sys.exit(f"bench_bbsched: the native and numpy fronts differ on a sample of case {case}")
            ks.append(len(wn))
            if len(wn) <= moo.EXACT_LIMIT:
                true = moo.exact_front(wn, wb, cn, cb).points
                for e in engines:
                    gds[e].append(moo.generational_distance(fronts[e].points, true, N, B))
        for e in engines:
            d = gds[e]
            gd = f"{statistics.mean(d):.4f} (max {max(d):.4f}, {sum(x == 0 for x in d)}/{len(d)} exact)" \
                if d else "n/a (window > 20)"
            t, c = sorted(times[e]), sorted(cpu[e])
            p99 = t[min(len(t) - 1, int(round(0.99 * (len(t) - 1))))]
            c99 = c[min(len(c) - 1, int(round(0.99 * (len(c) - 1))))]
            print(f"w={w} P={P} G={G} p_m={args.mutation_rate:g} [{e}]: {len(t)} decisions, candidates "
                  f"{statistics.median(ks):.0f} median; wall median {1e3 * statistics.median(t):.2f} ms, "
                  f"p99 {1e3 * p99:.2f} ms; CPU time of the thread median {1e3 * statistics.median(c):.2f} ms, "
                  f"p99 {1e3 * c99:.2f} ms; GD mean {gd}")
        if "native" in engines and "numpy" in engines:
            print(f"  native and numpy fronts identical on all {len(ks)} samples")


if __name__ == "__main__":
    main()
