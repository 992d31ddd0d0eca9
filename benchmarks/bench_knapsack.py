"""Benchmark of Cerberus' knapsack solvers (burstbuffer.schedulers.knapsack): exact DP, scipy milp (HiGHS), greedy.

Items are drawn like KTH jobs on the paper's platform: Problem 1 (one row: bb_total in bytes, 1-96 nodes ×
0-8 GB, capacity 480 GB, values = weights) and Problem 2 (rows: nodes 1-96 under 96 free, and 0 extra BB;
values = node-seconds with walltimes 60 s-60 h). Prints, per problem and number of items n, the median time of
each method over `--reps` random instances and the greedy's median value / optimum. The DP is skipped where it
grows too slow (its state count can reach 2^n).

Usage: ``python benchmarks/bench_knapsack.py [--sizes 4 8 12 16 24 32 64 128 200 400] [--reps 30] [--seed 0]``
"""
from __future__ import annotations

import argparse
import random
import statistics
import time

from common import machine
from burstbuffer.schedulers.knapsack import knapsack, total

GB = 10**9


def instance(rng: random.Random, problem: int, n: int):
    res = [rng.randint(1, 96) for _ in range(n)]
    if problem == 1:
        w = [r * rng.randint(0, 8) * GB for r in res]
        return w, [w], [480 * GB]
    wall = [rng.randint(60, 216000) for _ in range(n)]
    return [r * t for r, t in zip(res, wall)], [res, [0] * n], [96, 0]


def timed(values, weights, caps, method):
    t0 = time.perf_counter()
    chosen = knapsack(values, weights, caps, method=method)
    return time.perf_counter() - t0, total(values, chosen)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 12, 16, 24, 32, 64, 128, 200, 400])
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dp-max", type=int, default=32, help="largest n the DP is timed at")
    args = ap.parse_args()
    print(f"# {machine()}; medians over {args.reps} instances")
    print(f"{'problem':>7} {'n':>4} {'dp [ms]':>9} {'milp [ms]':>9} {'greedy [ms]':>11} {'greedy/opt':>10}")
    for problem in (1, 2):
        for n in args.sizes:
            rng = random.Random(args.seed * 1000 + n)
            t = {"dp": [], "milp": [], "greedy": []}
            ratio = []
            for _ in range(args.reps):
                v, w, c = instance(rng, problem, n)
                tm, opt = timed(v, w, c, "milp")
                t["milp"].append(tm)
                if n <= args.dp_max:
                    td, vd = timed(v, w, c, "dp")
                    t["dp"].append(td)
                    assert vd == opt, (problem, n, vd, opt)
                tg, vg = timed(v, w, c, "greedy")
                t["greedy"].append(tg)
                ratio.append(vg / opt if opt else 1.0)
            med = {k: f"{statistics.median(x) * 1e3:9.3f}" if x else f"{'-':>9}" for k, x in t.items()}
            print(f"{problem:>7} {n:>4} {med['dp']} {med['milp']} {med['greedy']:>11} {statistics.median(ratio):10.4f}",
                  flush=True)


if __name__ == "__main__":
    main()
