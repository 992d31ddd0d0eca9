"""The `sweep` command (`burstbuffer.sweep`): its runs executed on the Dask engine or the local pool, the
index ``DIR/campaign.csv`` written, and its arguments (the `register` hook of `burstbuffer.cli`)."""
from __future__ import annotations

import csv
import os
import time
from pathlib import Path

from .. import cliargs
from ..fileio import holding_output_lock, output_dir
from ..signals import Interrupted, interruptible
from ..reproduce.execute import RunSettings, execute, interrupted, report_failed
from ..reproduce.runs import PlannedRun, with_schedulers
from .campaign import load_campaign
from .plan import plan_campaign


def _result(run: PlannedRun, runs: list[PlannedRun], results: dict[str, dict]) -> dict:
    """The result of `run`: its own, or that of the run of the same directory (an identical run under
    other labels, run once), or ``{"error": "not run", "interrupted": True}``."""
    if run.key in results:
        return results[run.key]
    for s in runs:
        if s.out == run.out and s.key in results:
            return results[s.key]
    return {"error": "not run", "interrupted": True}


def write_index(out: Path, runs: list[PlannedRun], results: dict[str, dict]) -> Path:
    """``out``/campaign.csv: one row per run (key, workload, policy, options, model, seed, jobs, dir,
    status: done / failed / interrupted (stopped by a signal, or not run), error, mean waiting time [h],
    mean bounded slowdown, wall time [s]); written atomically."""
    path = out / "campaign.csv"
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["key", "workload", "policy", "options", "model", "seed", "jobs", "dir", "status", "error",
                    "mean_waiting_h", "mean_bounded_slowdown", "wall_time_s"])
        for s in runs:
            r = _result(s, runs, results)
            sm = r.get("summary", {})
            status = "done" if "error" not in r else "interrupted" if r.get("interrupted") else "failed"
            w.writerow([s.key, s.scope, s.policy, s.options, s.model, s.seed, s.jobs, s.out,
                        status, r.get("error", ""), sm.get("mean_waiting_h", ""),
                        sm.get("mean_bounded_slowdown", ""), r.get("wall_time", "")])
    os.replace(tmp, path)
    return path


def sweep(args) -> int:
    """The command: 0 when every run finished, 1 when some failed (rerun to retry them); InputError
    (exit 2) for a bad campaign file or engine options."""
    from ..reproduce.engines import check_engine_arguments, make_executor
    check_engine_arguments(args)
    c = load_campaign(args.campaign)
    out = output_dir(args.output)
    runs = with_schedulers(plan_campaign(c, out), dict(c.resolved))   # each policy resolved once, at load
    unique, seen = [], set()         # one run per directory (run id): identical runs under other labels
    for s in runs:
        if s.out not in seen:
            seen.add(s.out)
            unique.append(s)
    workers = args.workers or os.cpu_count() or 1
    same = f" ({len(runs) - len(unique)} identical to another, run once)" if len(unique) < len(runs) else ""
    print(f"sweep: {len(runs)} runs{same} ({len(c.policies)} policies, {len({s.scope for s in runs})} workload(s), "
          f"{len(c.models)} model(s), {len(c.seeds)} seed(s)), engine {args.engine}, output {out}")
    t0 = time.perf_counter()
    try:
        with interruptible():
            executor, close = make_executor(args, workers, pin=args.cpu == "auto", progress=not args.quiet,
                                            desc="sweep")
            try:
                results = execute(unique, executor, RunSettings(str(c.platform.resolve()), timeout=c.timeout,
                                                               network_model=c.network_model,
                                                               run_timeout=c.run_timeout))
            finally:
                close()
    except Interrupted as exc:
        return interrupted(exc, "sweep", write_index(out, runs, exc.result or {}), len(runs))
    index = write_index(out, runs, results)
    failed = [s.key for s in runs if "error" in _result(s, runs, results)]
    print(f"sweep: {len(runs) - len(failed)} of {len(runs)} runs done in {time.perf_counter() - t0:.0f} s; "
          f"table {index}")
    return report_failed(failed)


def register(subparsers) -> None:
    """Add the `sweep` subcommand (cli.py plugin hook)."""
    from ..reproduce.engines import add_engine_arguments
    s = subparsers.add_parser(
        "sweep", help="run a campaign (policies × workloads × models × seeds) on Dask or a local pool",
        description="Run every simulation of a campaign file (TOML: policies with options, workloads with "
                    "transforms and parts, job models, seeds, exclusions) resumably: each run's directory is "
                    "named by a hash of what determines its result and reused once finished.")
    s.add_argument("campaign", metavar="CAMPAIGN.toml")
    s.add_argument("--output", required=True, metavar="DIR", help="output folder (reused: finished runs kept)")
    s.add_argument("--workers", type=cliargs.nonneg_int, default=0, metavar="N",
                   help="local worker processes, one single-threaded each (default: one per core)")
    add_engine_arguments(s, default_engine="dask")
    s.add_argument("--cpu", choices=("auto", "off"), default="auto",
                   help="auto: each local worker pins its runs to a CPU core of its own; off: no pinning")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=holding_output_lock(sweep))   # one writer per folder
