"""`burstbuffer compare`: judge any runs against any runs — e.g. a user's own policy against a baseline — by the
rule `burstbuffer reproduce` judges a study's claims with (`burstbuffer.metrics.claims.measure` and `decide`;
docs/compare.md, docs/verdicts.md).

Each run folder is one replicate (one independent draw of the workload's random inputs and of the policy's
seed). Paired (the default): the i-th treatment run and the i-th control run share their workload — the
``workload_sha256`` their run.json records — and the effect is the mean of the per-pair effects, its interval
Student's t over the pairs. ``--unpaired``: independent draws a side, Welch's t on the per-run statistics.
With fewer than 2 replicates there is no interval: never beyond the noise floor.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from ..errors import InputError
from .claims import LOWER, Band, Condition, Metric, Replicates, beyond_noise, decide, measure

#: the per-job columns `--metric` may name (`burstbuffer.metrics.tidy.job_metrics`) and their better direction
DIRECTIONS = {"waiting_time": LOWER, "turnaround_time": LOWER, "bounded_slowdown": LOWER, "wait_to_stage_in": LOWER,
              "runtime": LOWER}
#: the default `--metric`
DEFAULT_METRIC = "mean:waiting_time"
#: the keys of `--json`, in order
JSON_KEYS = ("metric", "effect", "interval", "replicates", "beyond_noise", "verdict")


def parse_metric(text: str) -> tuple[Metric, str]:
    """(`Metric`, better direction) of ``[STAT:]COLUMN`` (STAT: mean, median, max, min, sum or q<p>; default
    mean; COLUMN: a key of `DIRECTIONS`). InputError (``--metric``) otherwise."""
    stat, _, column = text.rpartition(":")
    stat = stat or "mean"
    if column not in DIRECTIONS:
        raise InputError("--metric", text, f"unknown per-job column {column!r} (known: {', '.join(DIRECTIONS)})")
    try:
        m = Metric(f"{stat} {column}", column=column, stat=stat)
    except ValueError as exc:
        raise InputError("--metric", text, str(exc)) from None
    return m, DIRECTIONS[column]


def parse_band(text: str) -> Band:
    """The band ``LO:HI`` [%] of the effect (LO ≤ HI; ``inf`` allowed). InputError (``--band``) otherwise."""
    lo, sep, hi = text.partition(":")
    try:
        low, high = float(lo), float(hi)
    except ValueError:
        low = high = math.nan
    if not sep or low != low or high != high or low > high:
        raise InputError("--band", text, "expected LO:HI in % with LO <= HI, e.g. 10:30")
    return Band(low, high, "given on the command line")


def load_run(folder: Path):
    """(per-job table of the run in `folder` — `tidy.job_metrics` of its jobs.csv —, its workload's SHA-256 from
    run.json or None). InputError (folder, "run", reason) when jobs.csv is missing or unreadable."""
    from .tidy import job_metrics, load_jobs
    folder = Path(folder)
    jobs = folder / "jobs.csv"
    if not jobs.is_file():
        raise InputError(str(folder), "run", "no jobs.csv (a run folder of `burstbuffer run` or `reproduce`)")
    try:
        table = job_metrics(load_jobs(jobs))
    except ValueError as exc:
        raise InputError(str(jobs), "jobs", str(exc)) from None
    try:
        digest = json.loads((folder / "run.json").read_text()).get("workload_sha256")
    except (OSError, ValueError, AttributeError):
        digest = None
    return table, digest


def compare_runs(treatment: list, control: list, metric: str = DEFAULT_METRIC, band: str | None = None,
                 unpaired: bool = False, level: float = 0.95) -> dict:
    """The judgement of runs `treatment` against runs `control` (run folders; one replicate each) on `metric`
    (``[STAT:]COLUMN``), effect in % (positive: the treatment better in the metric's direction): a dict with
    `JSON_KEYS` — metric (text), effect [%], interval [low, high] [%] (NaN: none), replicates (pairs; unpaired:
    [treatment runs, control runs]), beyond_noise (the interval excludes no effect), verdict (text) — and
    treatment_value, control_value (the statistic, mean over replicates), per_replicate (paired effects),
    noise (text), why. InputError (exit 2) for a bad metric or band, a run folder without jobs.csv, and —
    paired — unequal numbers of runs or a pair whose workloads differ by content (run.json's
    ``workload_sha256``; a run without it cannot be paired)."""
    import pandas as pd
    m, better = parse_metric(metric)
    b = parse_band(band) if band else Band(-math.inf, math.inf, "no band")
    if not treatment or not control:
        raise InputError("--treatment" if not treatment else "--control", "runs", "at least one run folder needed")
    if not unpaired and len(treatment) != len(control):
        raise InputError("--control", f"{len(control)} runs",
                         f"{len(treatment)} treatment runs: runs are paired by position, give as many (or --unpaired)")
    frames = []
    sides = {}
    for name, folders in (("treatment", treatment), ("control", control)):
        sides[name] = []
        for i, f in enumerate(folders):
            table, digest = load_run(Path(f))
            sides[name].append(digest)
            table.insert(0, "policy", name)
            table.insert(0, "scope", "whole")
            table["replicate"] = i
            frames.append(table)
    if not unpaired:
        for i, (t, c) in enumerate(zip(sides["treatment"], sides["control"])):
            if t is None or c is None or t != c:
                what = ("run.json records no workload_sha256" if t is None or c is None else
                        f"workload sha256 {t[:12]} vs {c[:12]}")
                raise InputError(f"{treatment[i]} vs {control[i]}", f"pair {i + 1}",
                                 f"different workloads ({what}): a pair shares its workload; give --unpaired for "
                                 "independent draws")
    jobs = pd.concat(frames, ignore_index=True)
    cond = Condition("treatment", "control", m, b, better, "relative", noise=Replicates(level))
    r = measure(cond, jobs[jobs["policy"] == "treatment"], jobs[jobs["policy"] == "control"], paired=not unpaired)
    lo, hi = r["interval"]
    beyond = beyond_noise(cond, lo, hi)
    value = r["value"]
    if band:
        verdict, why = decide(cond, value, lo, hi, r["why_no_interval"])
    elif r["why_no_interval"] or lo != lo:
        verdict, why = "no noise floor", r["why_no_interval"] or "no interval"
    elif beyond:
        verdict = "treatment better beyond the noise floor" if value > 0 else "treatment worse beyond the noise floor"
        why = "the interval excludes no effect"
    else:
        verdict, why = "inside the noise floor", "the interval contains no effect"
    reps = r["n"] if not unpaired else r.get("n_sides", [len(treatment), len(control)])
    return {"metric": f"{m.name} ({better} is better)", "effect": value, "interval": [lo, hi],
            "replicates": reps, "beyond_noise": beyond, "verdict": verdict,
            "treatment_value": r["treatment_value"], "control_value": r["control_value"],
            "per_replicate": r["per_replicate"], "noise": r["noise"], "why": why}


def _num(x: float) -> str:
    return "n/a" if x != x else f"{x:+.2f}"


def render(res: dict) -> str:
    """The lines `burstbuffer compare` prints for `compare_runs`'s result."""
    lo, hi = res["interval"]
    reps = res["replicates"]
    reps_text = (f"{reps} pair{'s' if reps != 1 else ''}" if isinstance(reps, int) else
                 f"{reps[0]} treatment and {reps[1]} control runs (unpaired)")
    interval = "none" if lo != lo else f"[{_num(lo)}, {_num(hi)}] %"
    return "\n".join([f"metric:      {res['metric']}",
                      f"treatment:   {res['treatment_value']:.6g}   control: {res['control_value']:.6g}"
                      " (mean over replicates)",
                      f"effect:      {_num(res['effect'])} % (positive: the treatment is better)",
                      f"interval:    {interval} ({res['noise']})",
                      f"replicates:  {reps_text}",
                      f"verdict:     {res['verdict']} ({res['why']})"])


def _json_value(x):
    if isinstance(x, float) and x != x:
        return None
    if isinstance(x, list):
        return [_json_value(v) for v in x]
    return x


def compare(args) -> int:
    """The command: prints `render`, writes ``--json``; 0, or InputError (exit 2) for bad input."""
    res = compare_runs(args.treatment, args.control, args.metric, args.band, args.unpaired)
    print(render(res))
    if args.json:
        doc = {k: _json_value(res[k]) for k in JSON_KEYS}
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


def register(subparsers) -> None:
    """Add the `compare` subcommand (cli.py plugin hook)."""
    c = subparsers.add_parser(
        "compare", help="judge treatment runs against control runs: effect, noise floor over replicates, verdict",
        description="Judge runs against runs (e.g. your policy against a baseline), one run folder per replicate "
                    "(an independent draw of the workload's random inputs and the policy's seed), by the rule "
                    "`reproduce` judges claims with (docs/compare.md): the effect in %% (positive: the treatment "
                    "better), the mean of the paired per-replicate effects, its Student's t 95 %% interval over "
                    "the replicates, and whether it lies beyond the noise floor.")
    c.add_argument("--treatment", nargs="+", required=True, metavar="RUN_DIR", help="the treatment's run folders")
    c.add_argument("--control", nargs="+", required=True, metavar="RUN_DIR",
                   help="the control's run folders, paired with the treatment's by position")
    c.add_argument("--metric", default=DEFAULT_METRIC, metavar="NAME",
                   help="[STAT:]COLUMN: STAT mean, median, max, min, sum or q<p>; COLUMN "
                        f"{', '.join(DIRECTIONS)} (default: {DEFAULT_METRIC})")
    c.add_argument("--band", metavar="LO:HI",
                   help="the effects [%%] that reproduce a number (e.g. a paper's): the verdict is then reproduced, "
                        "partly or not reproduced (docs/verdicts.md)")
    c.add_argument("--unpaired", action="store_true",
                   help="the two sides are independent draws (different workloads): Welch's t on the per-run "
                        "statistics; without it a pair whose workloads differ is refused")
    c.add_argument("--json", metavar="FILE",
                   help="write {" + ", ".join(f'"{k}"' for k in JSON_KEYS) + "} to FILE (effect and interval in %%)")
    c.set_defaults(func=compare)
