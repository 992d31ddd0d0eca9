"""Calibration of the noise floor (docs/verdicts.md, "Calibration"): A/A comparisons, where the truth is zero,
judged by the rule `burstbuffer compare` and `reproduce` use (`burstbuffer.metrics.compare.compare_runs`), and
the false-positive rate — the share judged beyond the noise floor — printed with its 95 % binomial
(Clopper-Pearson) interval. The rule is calibrated when that rate is at or below the nominal 5 % within
sampling error (the interval's lower end at or below 5 %).

    nice -n 10 .venv/bin/python benchmarks/calibration.py --output /tmp/calibration [--jobs 200]
        [--comparisons 25] [--replicates 3] [--workers 2]

Two kinds of A/A comparison, `--comparisons` of each (`--unpaired-comparisons` of the second), each on
`--replicates` replicates a side:

- paired: plan-2 against plan-2 under independent seeds on the same workload draws (replicate r of
  comparison i: one draw of the first `--jobs` KTH records, `workload from-swf --seed`, both sides on it);
- unpaired: sjf-bb against sjf-bb on independent draws (``compare --unpaired``).

Every comparison uses runs of its own (the comparisons are independent). Beside them, the diagnostic the
replicates replace: the paired bootstrap over the jobs of one pair of runs (replicate 0 of each
comparison; `burstbuffer.metrics.stats.job_bootstrap_interval`), whose false-positive rate is far above 5 %;
and the check of docs/verdicts.md: the 8 plan-2 seeds on one draw split into halves (4 against 4, paired
by position) 5 times, judged beyond noise at most once. Runs are kept in OUTPUT (and reused when the
benchmark is run again: `burstbuffer.reproduce.execute` keys them by their inputs); the figures are also
written to OUTPUT/calibration.json.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from burstbuffer.data import bundled  # noqa: E402
from burstbuffer.metrics.compare import compare_runs  # noqa: E402
from burstbuffer.metrics.stats import binomial_interval, calibrated, job_bootstrap_interval  # noqa: E402
from burstbuffer.reproduce.execute import RunSettings, execute  # noqa: E402
from burstbuffer.reproduce.local import LocalPoolExecutor  # noqa: E402
from burstbuffer.reproduce.runs import PlannedRun  # noqa: E402

KTH_SWF = bundled("workloads", "KTH-SP2-1996-2.1-cln.swf.gz")
NOMINAL = 0.05
#: the first workload draw of the unpaired comparisons, and the draw of the 8 plan-2 seeds
UNPAIRED_DRAWS, EIGHT_DRAW = 10_000, 20_000


def draw(folder: Path, n: int, seed: int) -> Path:
    """The first `n` KTH records (the artifact's selection) with burst-buffer and communication requests drawn
    under `seed` (`workload from-swf --artifact-selection --jobs n --seed seed`), kept if already there."""
    from burstbuffer.workloads import convert_swf, write_workload
    path = folder / f"kth-{n}-draw-{seed}.json"
    if not path.is_file():
        write_workload(path, convert_swf(KTH_SWF, name=f"kth-{n}-draw-{seed}", max_records=n, seed=seed,
                                         rule="artifact").workload)
    return path


def spec(out: Path, policy: str, workload: Path, seed: int, jobs: int) -> PlannedRun:
    name = f"{policy}-{workload.stem}-seed{seed}"
    return PlannedRun("whole", policy, str(workload.resolve()), "io-aware", str(out / "runs" / name), jobs, seed=seed,
                   label=name)


def per_job_waits(run: str):
    """Per-job waiting times [s] of a run folder, indexed by job id."""
    from burstbuffer.metrics.tidy import job_metrics, load_jobs
    m = job_metrics(load_jobs(Path(run) / "jobs.csv"))
    return m.set_index(m["job_id"].astype(str))["waiting_time"].astype(float).dropna()


def relative(t, c, axis=None):
    """100 × (mean C − mean T) / mean C along `axis` (the effect `compare` reports for the mean wait)."""
    import numpy as np
    T, C = np.mean(t, axis=axis), np.mean(c, axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 100.0 * (C - T) / C


def bootstrap_beyond(t_run: str, c_run: str, paired: bool) -> bool:
    """Whether the job bootstrap of one pair of runs calls their difference beyond the noise floor."""
    t, c = per_job_waits(t_run), per_job_waits(c_run)
    if paired:
        common = t.index.intersection(c.index)
        t, c = t.loc[common], c.loc[common]
    lo, hi = job_bootstrap_interval(t.to_numpy(), c.to_numpy(), relative, paired=paired)
    return bool(lo == lo and (lo > 0 or hi < 0))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", required=True, type=Path)
    ap.add_argument("--jobs", type=int, default=200, help="KTH records per workload draw (default 200)")
    ap.add_argument("--comparisons", type=int, default=25, help="A/A comparisons of each kind (default 25)")
    ap.add_argument("--unpaired-comparisons", type=int, default=None, metavar="N",
                    help="sjf-bb comparisons (default: --comparisons)")
    ap.add_argument("--replicates", type=int, default=3, help="replicates a side per comparison (default 3)")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    out, n, K, R = a.output, a.jobs, a.comparisons, a.replicates
    KU = K if a.unpaired_comparisons is None else a.unpaired_comparisons
    wl = out / "workloads"
    wl.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    paired, unpaired, specs = [], [], []
    d = 0
    for i in range(K):               # plan-2 vs plan-2, independent seeds, the same draws
        t_side, c_side = [], []
        for r in range(R):
            w = draw(wl, n, d)
            t_side.append(spec(out, "plan-2", w, 1000 + d, n))
            c_side.append(spec(out, "plan-2", w, 2000 + d, n))
            d += 1
        paired.append((t_side, c_side))
    d = UNPAIRED_DRAWS               # fixed offsets: a run with another --comparisons reuses the runs made
    for i in range(KU):              # sjf-bb vs sjf-bb on independent draws
        t_side = [spec(out, "sjf-bb", draw(wl, n, d + r), 0, n) for r in range(R)]
        c_side = [spec(out, "sjf-bb", draw(wl, n, d + R + r), 0, n) for r in range(R)]
        d += 2 * R
        unpaired.append((t_side, c_side))
    one = draw(wl, n, EIGHT_DRAW)    # 8 plan-2 seeds on one draw
    eight = [spec(out, "plan-2", one, 3000 + s, n) for s in range(8)]
    for t_side, c_side in paired + unpaired:
        specs += t_side + c_side
    specs += eight
    from burstbuffer.runner import DEFAULT_PLATFORM
    settings = RunSettings(str(DEFAULT_PLATFORM))
    ex = LocalPoolExecutor(a.workers, pin=True, progress=False, log=lambda m: None)
    results = execute(specs, ex, settings, log=lambda m: print(m, flush=True))
    failed = [k for k, v in results.items() if "error" in v]
    if failed:
        print(f"{len(failed)} run(s) failed: {', '.join(failed[:5])}", file=sys.stderr)
        return 1
    wall = time.perf_counter() - t0

    def judge(pairs, unpaired_):
        hits, boot, known = 0, 0, 0
        for t_side, c_side in pairs:
            res = compare_runs([s.out for s in t_side], [s.out for s in c_side], unpaired=unpaired_)
            hits += res["beyond_noise"]
            known += res["interval"][0] == res["interval"][0]     # the replicates varied: an interval exists
            boot += bootstrap_beyond(t_side[0].out, c_side[0].out, paired=not unpaired_)
        return hits, boot, known

    kp, bp, np_ = judge(paired, False)
    ku, bu, nu = judge(unpaired, True)
    import numpy as np
    rng = np.random.default_rng(51)
    halves = []
    for _ in range(5):
        perm = rng.permutation(8)
        res = compare_runs([eight[j].out for j in perm[:4]], [eight[j].out for j in perm[4:]])
        halves.append(bool(res["beyond_noise"]))
    same = [(i, j) for i in range(8) for j in range(8) if i != j]
    boot8 = sum(bootstrap_beyond(eight[i].out, eight[j].out, paired=True) for i, j in same)

    def rate(k, m):
        lo, hi = binomial_interval(k, m)
        return {"k": int(k), "n": m, "rate": k / m, "low": lo, "high": hi}

    fig = {"jobs": n, "replicates": R, "comparisons": [K, KU], "runs": len(specs), "wall_s": round(wall, 1),
           "paired_plan2": rate(kp, K), "unpaired_sjfbb": rate(ku, KU), "replicates_all": rate(kp + ku, K + KU),
           "job_bootstrap": rate(bp + bu, K + KU), "job_bootstrap_8_seeds": rate(boot8, len(same)),
           "halves_of_8_seeds_beyond": sum(halves), "with_an_interval": [np_, nu],
           "job_bootstrap_calibrated": calibrated(bp + bu, K + KU, NOMINAL)}
    (out / "calibration.json").write_text(json.dumps(fig, indent=1))
    line = lambda name, r: (f"{name}: {r['k']} of {r['n']} beyond noise = {100 * r['rate']:.1f} % "  # noqa: E731
                            f"(95 % binomial interval {100 * r['low']:.1f}-{100 * r['high']:.1f} %)")
    print(f"A/A calibration: {n} KTH records per draw, {R} replicates a side, {len(specs)} runs, {wall:.0f} s")
    print(line("replicates, plan-2 vs plan-2, paired (seeds)", fig["paired_plan2"]))
    print(line("replicates, sjf-bb vs sjf-bb, unpaired (draws)", fig["unpaired_sjfbb"]))
    print(line("replicates, all A/A comparisons", fig["replicates_all"]))
    print(f"comparisons whose replicates varied (an interval exists): {np_} of {K} paired, {nu} of {KU} unpaired "
          "(the others: identical schedules, no noise floor, never beyond noise)")
    print(line("job bootstrap of replicate 0 (diagnostic)", fig["job_bootstrap"]))
    print(line("job bootstrap, 8 plan-2 seeds on one draw, ordered pairs", fig["job_bootstrap_8_seeds"]))
    ok_boot = "yes" if fig["job_bootstrap_calibrated"] else "no"
    print(f"the job bootstrap of replicate 0 passes the A/A rule: {ok_boot}")
    print(f"halves of 8 plan-2 seeds on one draw: beyond noise in {sum(halves)} of 5 splits (at most 1 expected)")
    ok = calibrated(kp + ku, K + KU, NOMINAL) and sum(halves) <= 1
    print(f"calibrated (the lower end of the interval at or below {100 * NOMINAL:g} %, at most 1 split): "
          + ("yes" if ok else "NO"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
