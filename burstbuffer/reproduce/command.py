"""`burstbuffer reproduce`: plan a study's runs (`runs`), execute them (`execute`, the local pool of
`local`), analyse them (`analysis`). Output folder::

    runs/<scope>/<policy>/   one run each (runner.run outputs; summary.json written last = done)
    workloads/               workloads made for the reproduction (trace subsets, parts, Gantt subset)
    job_metrics.csv          tidy: one row per (scope, policy, original job), per-job metrics
    summary.csv              one row per (scope, policy): means ± 95 % CI, quantiles, max, utilisations
    part_means.csv           per part and policy: means and means normalised by the study's reference
    verdicts.json            the study's claims, one verdict each (--placebo, --reverse: the controls'
                             verdicts; docs/verdicts.md)
    regime.json              the study's regime checks (one failed: every claim out of regime)
    figures/                 the study's figures (kopanski2021: fig03 … fig12), PNG and SVG
    report.md, report.html   claims vs measurements
    manifest.json            what was asked, run, skipped, failed, and the wall times
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from .. import cliargs
from ..errors import InputError, require_simgrid
from ..fileio import atomic_write_text, holding_output_lock, output_dir
from ..signals import Interrupted, interruptible
from .execute import RunSettings, execute, interrupted, read_marker, report_failed
from .engines import add_engine_arguments, check_engine_arguments, make_executor
from .study import DEFAULT_STUDY, get_study, all_studies


#: the engine of `reproduce` when --engine is not given (see docs/campaigns.md)
DEFAULT_ENGINE = "dask"


def _history(out: Path) -> list[dict]:
    """The invocations recorded in `out`/manifest.json so far (empty if none)."""
    try:
        return json.loads((out / "manifest.json").read_text()).get("history", [])
    except (OSError, ValueError, AttributeError):
        return []


def with_queue_file(study, asked: str | None, path: str):
    """(`study` whose columns for ``--policies`` `asked` take the queue file `path`, a note for the report)
    for ``reproduce --queues FILE``: a study with columns that already have a queue file (``queues``
    option, e.g. ``orders``) gets FILE instead in those (their order override kept), the others unchanged
    (the columns without queues stay the baseline); any other study gets FILE in every column whose
    policy takes queues (`registry.names_taking`). InputError (one line) for a bad file, or when no
    column takes it."""
    from dataclasses import replace

    from ..schedulers.queues import load_queues
    from ..schedulers.registry import names_taking
    cfg = load_queues(path)
    full = str(Path(path).resolve())
    cols = study.columns(asked)
    has = [v for v in cols if "queues" in v.options]
    queue_policies = names_taking("queues")
    takes = has or [v for v in cols if v.policy in queue_policies]
    if not takes:
        raise InputError("--queues", path, f"no policy of study {study.name} takes a queue file "
                                           f"(queue-based policies: {', '.join(queue_policies)})")
    new = []
    for v in cols:
        if v in takes:
            old = v.options.get("queues")
            q = {**old, "path": full} if isinstance(old, dict) else full
            order = old.get("order", cfg.order) if isinstance(old, dict) else cfg.order
            cfg_order = replace(cfg, order=order)
            cfg_order.check_orders(v.options.get("order") or "fcfs")
            v = replace(v, options={**v.options, "queues": q})
        new.append(v)
    note = f"--queues {path}: applied to {', '.join(v.label for v in takes)}"
    return replace(study, variants=tuple(new)), note


def check_study_options(study, specs, resolved: dict | None = None) -> None:
    """The policy options of every column of the plan, checked once before any run as ``--policy-option``
    checks them (`burstbuffer.schedulers.options.check_options`), each policy resolved once: `resolved` (policy
    text → PolicyInfo, `RunPlan.resolved`) is used and completed; InputError ``--study NAME: COLUMN:
    NAME=VALUE: REASON``."""
    from ..schedulers.options import OptionError, check_options
    from ..schedulers.resolve import policy_info
    infos = resolved if resolved is not None else {}
    seen = set()
    for s in specs:
        if not s.options or (s.policy, s.options) in seen:
            continue
        seen.add((s.policy, s.options))
        try:
            if s.policy not in infos:
                infos[s.policy] = policy_info(s.policy)
            check_options(infos[s.policy].policy, json.loads(s.options), label=s.policy)
        except OptionError as exc:
            raise InputError(f"--study {study.name}", s.column or s.policy, str(exc)) from None


def verdict_mode(args) -> str:
    """How the claims are judged (`burstbuffer.metrics.verdicts.MODES`): ``placebo`` (--placebo),
    ``reverse`` (--reverse), else ``real``."""
    return "placebo" if getattr(args, "placebo", False) else "reverse" if getattr(args, "reverse", False) else "real"


def reproduce(args) -> int:
    """The command: 0 when every run finished, 1 when some failed (rerun to retry them); InputError
    (exit 2) for bad input (unknown study, missing platform or workload, nothing to run)."""
    from ..runner import DEFAULT_PLATFORM
    from .analysis import analyse
    from .runs import finished_placebo, plan_runs, with_schedulers
    from ..schedulers import POLICIES

    check_engine_arguments(args)
    study = get_study(getattr(args, "study", None) or DEFAULT_STUDY)
    out = output_dir(args.output)
    platform = Path(args.platform or DEFAULT_PLATFORM)
    if not platform.is_file():
        raise InputError(str(platform), "platform", "file not found")
    queues_note = None
    if getattr(args, "queues", None):
        study, queues_note = with_queue_file(study, args.policies, args.queues)
    if args.replicates is None:
        args.replicates = study.replicates
    plan = plan_runs(study, args, out, POLICIES)
    check_study_options(study, plan.specs, plan.resolved)
    if queues_note:
        plan.notes.append(queues_note)
    settings = RunSettings(str(platform), seed=args.seed, timeout=args.timeout, run_timeout=args.run_timeout)
    specs = with_schedulers(plan.specs, plan.resolved)
    markers = {s.key: read_marker(s, settings) for s in specs}    # the runs finished before (None: not done)
    specs = plan.specs = finished_placebo(specs, bool(getattr(args, "placebo", False)),
                                          lambda s: markers[s.key] is not None)
    workers = args.workers or os.cpu_count() or 1
    manifest = {"command": " ".join(sys.argv), "study": study.name, "jobs": None if args.workload else args.jobs,
                "workload": str(plan.whole) if plan.whole else None, "whole_label": plan.whole_label,
                "parts": [str(p) for p in plan.parts], "parts_label": plan.parts_label,
                "policies": plan.policies, "skipped": plan.skipped, "model": args.model, "platform": str(platform),
                "seed": args.seed, "replicates": args.replicates, "workers": workers, "engine": args.engine,
                "notes": plan.notes,
                "mode": verdict_mode(args)}
    print(f"reproduce: {len(specs)} runs ({len(plan.policies)} {'columns' if study.variants else 'policies'}, "
          f"{len({s.scope for s in specs if s.scope != 'gantt'})} workload(s)"
          f"{' + Fig. 3' if any(s.scope == 'gantt' for s in specs) else ''})"
          f", {workers} worker(s), output {out}")
    t0 = time.perf_counter()
    kept = sum(m is not None for m in markers.values())
    if args.report_only:
        results = {k: m for k, m in markers.items() if m is not None}
        print(f"report only: {kept} of {len(specs)} runs finished; the others are left out")
        specs_done = [s for s in specs if s.key in results]
        manifest.update(runs_done_now=0, runs_kept=kept, run_wall_s=0.0,
                        history=_history(out), missing=[s.key for s in specs if s.key not in results])
        atomic_write_text(out / "manifest.json", json.dumps(manifest, indent=1))   # what the report was made from
        analyse(out, study, specs_done, results, manifest)
        return 0
    try:
        with interruptible():
            executor, close = make_executor(args, workers, pin=args.cpu == "auto", progress=not args.quiet,
                                            desc="reproduce")
            try:
                results = execute(specs, executor, settings,
                                  cache=Path(args.cache) if getattr(args, "cache", None) else None)
            finally:
                close()
    except Interrupted as exc:
        # what finished is kept (each run's summary.json): manifest.json says what was interrupted
        results = exc.result or {}
        manifest.update(runs_kept=kept, interrupted=str(exc), history=_history(out),
                        done=sorted(k for k, v in results.items() if "error" not in v),
                        failed={k: v["error"] for k, v in results.items() if "error" in v and not v.get("interrupted")},
                        not_done=sorted(s.key for s in specs if "error" in results.get(s.key, {"error": ""})))
        atomic_write_text(out / "manifest.json", json.dumps(manifest, indent=1))
        return interrupted(exc, "reproduce", out / "manifest.json", len(specs))
    wall = time.perf_counter() - t0
    history = _history(out)
    history.append({"started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() - wall)),
                    "command": manifest["command"], "runs_done": len(specs) - kept, "runs_kept": kept,
                    "wall_s": round(wall, 1)})
    manifest.update(run_wall_s=wall, runs_done_now=len(specs) - kept, runs_kept=kept, history=history,
                    failed={k: v["error"] for k, v in results.items() if "error" in v},
                    wall_times={k: v.get("wall_time") for k, v in results.items() if "error" not in v})
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    ta = time.perf_counter()
    analyse(out, study, specs, results, manifest)
    print(f"simulations {wall:.0f} s, analysis {time.perf_counter() - ta:.0f} s")
    return report_failed(list(manifest["failed"]))


def register(subparsers) -> None:
    """Add the `reproduce` subcommand (cli.py plugin hook)."""
    from ..io_model.registry import model_names
    MODELS = model_names()
    default = all_studies()[DEFAULT_STUDY]
    r = subparsers.add_parser(
        "reproduce", help="run a study (default: the paper's experiments, §4.2) and write its figures and a report",
        description="Simulate a study's policies over the KTH trace and/or its 16 three-week parts in "
                    "parallel worker processes, resumably (finished runs, marked by summary.json, are kept), "
                    "then write job_metrics.csv, summary.csv, the study's figures (PNG, SVG) and "
                    "report.md / report.html with its claims beside the measurements. Default study: "
                    + default.description + ".")
    r.add_argument("--study", default=DEFAULT_STUDY, metavar="NAME",
                   help=f"the study to run: {', '.join(sorted(all_studies()))} (default: {DEFAULT_STUDY})")
    r.add_argument("--jobs", default="all", metavar="1000|all|N|none",
                   help="whole-workload runs: the bundled first 1000 KTH jobs, the whole trace (default), the "
                        "first N jobs of the trace, or none")
    r.add_argument("--parts", action="store_true", help="also run the 16 three-week parts (Fig. 11-12)")
    r.add_argument("--policies", metavar="LIST",
                   help="comma-separated policies: names, MODULE:CLASS or FILE.py:CLASS (default: the study's; "
                        + DEFAULT_STUDY + ": "
                        + ",".join(default.labels()) + "; a study with variants selects them by label)")
    r.add_argument("--workers", type=cliargs.nonneg_int, default=0, metavar="N",
                   help="parallel worker processes (default: one per core)")
    add_engine_arguments(r, default_engine=DEFAULT_ENGINE)
    r.add_argument("--output", required=True, metavar="DIR", help="output folder (reused: finished runs kept)")
    r.add_argument("--workload", metavar="FILE", help="a Batsim workload instead of the KTH selection of --jobs")
    r.add_argument("--parts-from", metavar="DIR", help="with --parts: the part-N.json files of this folder")
    r.add_argument("--split", type=cliargs.positive_int, metavar="N",
                   help="with --parts: cut the workload into N parts of equal duration instead of the paper's "
                        "16 KTH parts (with --workload: default the three-week rule)")
    r.add_argument("--queues", metavar="FILE",
                   help="TOML queue file (docs/orders-and-queues.md) for every queue-based policy of the study; "
                        "a study with queue columns (orders) uses it instead of its own file")
    r.add_argument("--platform", metavar="FILE", help="SimGrid platform (default: the bundled Dragonfly)")
    r.add_argument("--model", default="io-aware", choices=MODELS, help="job model (default: io-aware)")
    r.add_argument("--seed", type=cliargs.seed, default=0, help="seed of every policy (default: 0)")
    r.add_argument("--replicates", "--seeds", dest="replicates", type=cliargs.positive_int, default=None,
                   metavar="R",
                   help="run every column in R replicates, each an independent draw of the workload's burst-buffer "
                        "and communication requests (seed k) and of the policies' seed (--seed + k), shared by "
                        "treatment and control; every claim is judged on the R paired effects, Student's t 95 %% "
                        "(docs/verdicts.md); tables and figures show replicate 0 (default: the study's; --seeds is "
                        "the same option)")
    r.add_argument("--gantt-jobs", type=cliargs.nonneg_int, default=3500, metavar="N",
                   help="Fig. 3: fcfs-easy, alloc-only, on the first N jobs of the workload (default 3500; 0: no)")
    r.add_argument("--timeout", type=cliargs.positive_float, default=600.0, metavar="S",
                   help="a run fails if its simulator stays silent, or one decision of its policy lasts, this "
                        "long (default: 600 s)")
    r.add_argument("--run-timeout", type=cliargs.positive_float, default=86400.0, metavar="S",
                   help="a run fails if it lasts this long, wall clock (default: 86400 s; docs/reliability.md)")
    r.add_argument("--cpu", choices=("auto", "off"), default="auto",
                   help="auto: each worker's scheduler and simulator share one CPU core of their own (they take "
                        "turns; twice as fast as unpinned on 2 cores); off: no pinning (default: auto)")
    r.add_argument("--cache", metavar="DIR",
                   help="a folder of finished runs keyed by the content of their inputs (policy, options, workload, "
                        "platform, job model, seed, and the version of the code that shapes the schedule): a run "
                        "found there is copied instead of simulated, every new run is stored there; share it "
                        "between studies and output folders (default: none; docs/verdicts.md)")
    r.add_argument("--report-only", action="store_true",
                   help="simulate nothing: tables, figures, report and manifest.json from the runs finished so far")
    ctl = r.add_mutually_exclusive_group()
    ctl.add_argument("--placebo", action="store_true",
                     help="an A/A test: run each control again in R more replicates (independent seeds and workload "
                          "draws) and judge every claim with those runs in place of its treatment's, unpaired: a "
                          "claim asserting a difference must come out not reproduced; the report prints the "
                          "false-positive rate (docs/verdicts.md)")
    ctl.add_argument("--reverse", action="store_true",
                     help="a sign check: judge every claim with its treatment and control swapped")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    locked = holding_output_lock(reproduce)                # one writer per folder

    def checked(args) -> int:
        if not args.report_only:
            require_simgrid()                              # before the folder and its lock are made
        return locked(args)
    r.set_defaults(func=checked)
