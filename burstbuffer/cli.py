"""The `burstbuffer` command: run, simulate, workload, metrics.

Bad input ends with a one-line message ``burstbuffer: FILE: ITEM: REASON`` and exit status 2.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from . import __version__, cliargs
from .errors import InputError

#: Subsystems that add their own subcommands through `register(subparsers)`: subcommand → (module, the
#: one-line help its `register` gives, repeated here so that `burstbuffer --help` lists every subcommand
#: without importing any of them; tests/test_cli_startup.py checks that both agree).
_PLUGINS = {
    "simulate": ("burstbuffer.simulator.cli", "run the embedded Batsim-compatible simulator"),
    "workload": ("burstbuffer.workloads.cli",
                 "convert an SWF trace to a Batsim workload; split or transform a workload"),
    "platform": ("burstbuffer.platforms.cli", "generate SimGrid platforms (Dragonfly with burst buffers)"),
    "serve": ("burstbuffer.serve", "the scheduler alone, for an external Batsim 4.x"),
    "reproduce": ("burstbuffer.reproduce",
                  "run a study (default: the paper's experiments, §4.2) and write its figures and a report"),
    "sweep": ("burstbuffer.reproduce.sweep",
              "run a campaign (policies × workloads × models × seeds) on Dask or a local pool"),
}


#: help text of every --policy option
POLICY_HELP = ("scheduling policy: a name (`burstbuffer policies` lists them), MODULE:CLASS or FILE.py:CLASS "
               "(a burstbuffer.schedulers.Scheduler subclass, docs/writing-a-policy.md)")


def _policy_names() -> list[str]:
    try:
        from .schedulers.registry import POLICIES, THREE_PHASE_POLICIES
        return list(POLICIES) + list(THREE_PHASE_POLICIES)
    except ImportError:  # pragma: no cover - during development
        return []


def options_from_args(args: argparse.Namespace, info) -> tuple[str, str, dict]:
    """(policy to run, its label, its options) from ``--policy`` (`info`, its `PolicyInfo`), the alias
    flags (`burstbuffer.schedulers.options.FLAGS`: ``--alpha``, ``--window``, ``--order``, …, those the
    subcommand has) and ``--policy-option NAME=VALUE`` (repeatable; VALUE read as JSON, else a string):
    the one place where command-line options become a policy's options. ``--alpha A`` runs ``plan`` with
    α = A (label ``plan-A``) for ``plan`` / ``plan-N``; ``--wfp-unit S`` is ``order_params = {unit: S}``.

    Every option is checked by `options.check_options` (the policy's declared options, type, range, and
    its constructor on a probe platform). InputError (one line, exit 2): ``--policy-option: NAME=VALUE:
    REASON`` or ``--FLAG: VALUE: REASON``, for a pair without ``=``, an option given twice, a name the
    policy does not take or a bad value."""
    import json

    from .schedulers.options import FLAGS, OptionError, check_options, value_text
    from .schedulers.registry import POLICIES
    policy, label, factory = info.spec, info.label, info.factory
    options: dict = {}
    source: dict[str, tuple[str, str]] = {}     # option → (flag or --policy-option, the text to quote)

    def put(name, value, where, text):
        if name in options:
            raise InputError(where, text, f"option {name} given twice ({source[name][0]} and {where})")
        options[name] = value
        source[name] = (where, text)

    for flag, name in FLAGS.items():
        value = getattr(args, flag[2:].replace("-", "_"), None)
        if value is None or value is False:
            continue
        text = value_text(value)
        if flag == "--wfp-unit":
            value = {"unit": value}
        elif flag == "--alpha" and policy.startswith("plan") and policy in POLICIES:
            policy, label, factory = "plan", f"plan-{value:g}", POLICIES["plan"]
        put(name, value, flag, text)
    for pair in getattr(args, "policy_option", None) or []:
        name, sep, text = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InputError("--policy-option", pair, "expected NAME=VALUE")
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        except RecursionError:
            raise InputError("--policy-option", name, "the value is nested too deeply") from None
        put(name, value, "--policy-option", f"{name}={text}")
    try:
        check_options(policy, options, factory=factory)
    except OptionError as exc:
        where, text = source.get(exc.name, ("--policy-option", f"{exc.name}={exc.text}"))
        raise InputError(where, text, exc.reason) from None
    return policy, label, options


def add_order_options(p: argparse.ArgumentParser) -> None:
    """`--order`, `--reservation-depth`, `--easy-extra-nodes`, `--queues`, `--wfp-unit` (run, serve)."""
    from .schedulers.options import flag_type
    p.add_argument("--order", metavar="NAME", type=flag_type("order"),
                   help="queue order of a queue-based policy (fcfs, fcfs-easy, filler, fcfs-bb, sjf-bb, "
                        "conservative-bb) or the base order of a window policy (bbsched, ...): fcfs, sjf, ljf, "
                        "small, large, bb-small, bb-large, wfp "
                        "(default: fcfs, the policy's own meaning; docs/orders-and-queues.md)")
    p.add_argument("--reservation-depth", metavar="K", type=flag_type("reservation_depth"),
                   help="EASY family (fcfs-easy, fcfs-bb, sjf-bb): reservations for the first K queued jobs "
                        "(1 = EASY, 'all' = conservative backfilling)")
    p.add_argument("--easy-extra-nodes", action="store_true",
                   help="EASY family: also backfill a job needing no more than the extra nodes left idle at "
                        "the shadow time (ICS 632 slides, EASY; docs/orders-and-queues.md)")
    p.add_argument("--queues", metavar="FILE",
                   help="TOML queue configuration: named queues, routing, limits, per-queue order (e.g. the "
                        "bundled workloads/mira-like-queues.toml); adds queue and priority to jobs.csv")
    p.add_argument("--wfp-unit", type=cliargs.positive_float, metavar="S",
                   help="time unit of the wfp utility in seconds (default: 60, minutes, per Allcock et al., Argonne, §4.3.3)")


def load_policy(args: argparse.Namespace, timeout: float | None):
    """(`PolicyInfo` of ``--policy``, `options_from_args`'s triple): the user's policy file imported and built
    on its probe platform under the watchdog (`guards.bounded`, `timeout` s, None: no limit;
    docs/reliability.md §2). InputError ``--policy: SPEC: loading and building the policy took longer than
    S s (--timeout)`` when it hangs (the process ends with that line if it is stuck in C code)."""
    from .guards import DecisionTimeout, bounded
    from .schedulers.resolve import policy_info
    slow = InputError("--policy", args.policy, f"loading and building the policy took longer than {timeout:g} s "
                                               "(--timeout)") if timeout is not None else None
    try:
        with bounded(timeout, str(slow), status=2):
            info = policy_info(args.policy)
            return info, options_from_args(args, info)
    except DecisionTimeout:
        raise slow from None


def _cmd_run(args: argparse.Namespace) -> int:
    from .runner import run
    from .signals import Interrupted, interruptible
    info, (policy, label, options) = load_policy(args, args.timeout)
    out = Path(args.output) if args.output else Path("out") / label
    header = f"policy {label}, model {args.model}, workload {args.workload}, platform {args.platform}"
    outputs = (f"{out}/jobs.csv (per job), {out}/batsim_jobs.csv, {out}/batsim_schedule.csv, "
               f"{out}/batsim_machine_states.csv, {out}/bb_occupancy.csv")
    try:
        with interruptible():
            res = run(policy, Path(args.workload), Path(args.platform), out, model=args.model, seed=args.seed,
                      bb_capacity=args.bb_capacity, storage=args.storage, progress=not args.quiet,
                      timeout=args.timeout, policy_options=options, cpu=args.cpu,
                      network_model=args.network_model, energy=args.energy, link=args.link)
    except Interrupted as exc:
        if exc.result is not None:
            print_summary(header + " (interrupted)", exc.result, f"{out}/jobs.csv (per job; unfinished jobs "
                          "marked RUNNING or PENDING)")
        sys.stdout.flush()
        print(f"burstbuffer: interrupted by {exc}; outputs so far written", file=sys.stderr)
        return exc.status
    if args.plot:
        from .metrics.runplot import plot_run
        paths = plot_run(out)
        outputs += f", {paths[0]} and .svg (figures)"
    print_summary(header, res, outputs)
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    """Figures of a run folder (`burstbuffer.metrics.runplot`)."""
    from .metrics.runplot import plot_run
    from .metrics.runplot import GANTT_MAX_JOBS
    paths = plot_run(Path(args.run_dir), Path(args.output) if args.output else None,
                     max_jobs=args.max_jobs or GANTT_MAX_JOBS)
    print(f"wrote {paths[0]} and {paths[1]}")
    return 0


def _cmd_policies(args: argparse.Namespace) -> int:
    """`burstbuffer policies [SPEC]`: name, origin, description and options of each policy."""
    from .schedulers.resolve import all_policies, policy_info
    if args.spec:
        infos, errors = [policy_info(args.spec)], []
    else:
        infos, errors = all_policies()
    from .schedulers.options import describe
    for n, i in enumerate(infos):
        origin = "" if i.origin == "built-in" else f" [{i.origin}]"
        if n:
            print()
        print(f"{i.spec}  {i.description or '(no description)'}{origin}")
        rows = describe(i.spec if i.origin == "built-in" else "", i.factory)
        if not rows:
            print("    options: none")
            continue
        print("    options (--policy-option NAME=VALUE):")
        for name, kind, default, meaning in rows:
            print(f"    {name}: {kind}" + (f", default {default}" if default else ""))
            print(f"        {meaning or '(its docstring does not say)'}")
    for e in errors:
        print(f"burstbuffer: --policy: {e}", file=sys.stderr)
    return 0


def print_summary(header: str, res, outputs: str) -> None:
    """The end-of-run report shared by `run` and `serve`: a header line, the summary (docs/metrics.md), the
    wall time and message count of `res` (a `runner.RunResult`), and where the outputs are."""
    print(header)
    print(res.summary)
    _print_wait_reasons(res.jobs_csv)
    spent = f"; the scheduler's answers {res.scheduler_cpu:.1f} s of CPU" if res.scheduler_cpu is not None else ""
    print(f"wall time              {res.wall_time:.1f} s ({res.messages} protocol messages{spent})")
    print(f"outputs                {outputs}")


def _print_wait_reasons(jobs_csv) -> None:
    """The per-reason waiting lines of a jobs.csv (docs/wait-reasons.md); nothing for a table without them."""
    import pandas as pd
    from .metrics.waits import has_wait_columns, wait_lines
    try:
        jobs = pd.read_csv(jobs_csv)
    except (OSError, ValueError):
        return
    if has_wait_columns(jobs):
        print("why jobs waited (docs/wait-reasons.md)")
        print("\n".join(wait_lines(jobs)))


def _cmd_metrics(args: argparse.Namespace) -> int:
    """Summary of one run's per-job table: ours, or a Batsim `_jobs.csv` (with sub-jobs
    ``w0%<id>`` of an I/O-aware run rebuilt per original job, docs/protocol.md)."""
    from .metrics.summary import summarize
    from .metrics.tidy import describe_lines, job_metrics, load_jobs
    from .platforms.units import parse_bytes
    path = Path(args.jobs_csv)
    cliargs.input_file(path, "jobs.csv")
    bb = None
    if args.workload:
        from .workloads.batsim_json import load_workload
        wl = load_workload(args.workload, require_bb=False)
        bb = {str(j.id): wl.bb_of(j) for j in wl.jobs}
    try:
        total_bb = parse_bytes(args.total_bb) if args.total_bb else None
    except ValueError as exc:
        raise InputError("--total-bb", str(args.total_bb), str(exc)) from None
    try:
        jobs = load_jobs(path, bb)
        s = summarize(jobs, args.nb_compute, total_bb)
        lines = describe_lines(job_metrics(jobs))
    except (KeyError, ValueError) as exc:
        raise InputError(str(path), "columns", f"not a Batsim jobs.csv ({exc})") from None
    if "nb_subjobs" in jobs:
        print(f"Batsim sub-job table: {len(jobs)} original jobs rebuilt from "
              f"{int(jobs['nb_subjobs'].sum())} sub-jobs")
    print(s)
    print("\n".join(lines))
    return 0


def _add_run(sub) -> None:
    from .defaults import DEFAULT_PLATFORM, DEFAULT_WORKLOAD
    from .io_model.registry import model_names
    r = sub.add_parser("run", help="schedule a workload with the embedded simulator (the main job)",
                       description="Start the embedded Batsim-compatible simulator with the scheduler (by default "
                                   "in one child process), simulate the workload, print a summary. "
                                   "With no option: the 1000-job KTH workload on the paper's 108-node Dragonfly "
                                   "under sjf-bb.")
    r.add_argument("--policy", default="sjf-bb", metavar="NAME",
                   help=POLICY_HELP + " (default: sjf-bb)")
    r.add_argument("--policy-option", action="append", metavar="NAME=VALUE",
                   help="an option of the policy (repeatable; VALUE read as JSON, else a string): the one way to "
                        "give any option, the flags below are aliases; `burstbuffer policies NAME` lists each "
                        "policy's options with type, default and meaning")
    r.add_argument("--workload", default=str(DEFAULT_WORKLOAD), metavar="FILE",
                   help="Batsim workload JSON (default: bundled workloads/kth-1000.json)")
    r.add_argument("--platform", default=str(DEFAULT_PLATFORM), metavar="FILE",
                   help="SimGrid platform XML (default: bundled platforms/dragonfly96.xml)")
    r.add_argument("--output", metavar="DIR", help="output folder (default: out/POLICY)")
    r.add_argument("--model", default="io-aware", choices=model_names(),
                   help="job model: io-aware (stage-in, compute phases, checkpoints with drains, stage-out as "
                        "Batsim dynamic jobs; docs/io-model.md), alloc-only (compute only) or three-phase (stage-in "
                        "holding BB only, stage-out after the nodes are released; docs/io-model.md §3) "
                        "(default: io-aware)")
    from .simulator.network import NETWORK_MODELS
    r.add_argument("--network-model", default="exact", choices=NETWORK_MODELS,
                   help="the simulator's model of a job's compute-phase communication: exact (Batsim's "
                        "all-to-all), ring or random-ring (n flows instead of n(n-1)) or uncontended (priced "
                        "alone on the network, no flows: the fastest), approximations for large machines, "
                        "docs/io-model.md §5 (default: exact)")
    r.add_argument("-E", "--energy", action="store_true",
                   help="run the simulator with Batsim's energy (simulate -E, docs/batsim.md): a platform with "
                        "wattage_per_state on every compute and storage host; batsim_jobs.csv gets each job's "
                        "consumed_energy, and batsim_consumed_energy.csv, batsim_pstate_changes.csv are written")
    from .schedulers.options import OPTIONS, flag_type
    r.add_argument("--alpha", type=flag_type("alpha"), metavar="A",
                   help="plan-α with any positive real α (exponent of the waiting times in the plan score, "
                        "Kopanski & Rzadca 2021, Eq. 1); with --policy plan")
    r.add_argument("--profit", choices=OPTIONS["profit"].kind.values,
                   help="cerberus: profit of a job in its running-queue knapsack (docs/policies.md; default "
                        "node-seconds)")
    r.add_argument("--starvation-limit", type=flag_type("starvation_limit"), metavar="S",
                   help="cerberus: seconds after which a queued job is served first come first served "
                        "(default 86400)")
    r.add_argument("--seed", type=cliargs.seed, default=0, help="seed of every random choice (default: 0)")
    r.add_argument("--bb-capacity", metavar="SIZE",
                   help="BB capacity per storage node when the platform does not give it, e.g. 40GB")
    r.add_argument("--storage", metavar="HOSTS",
                   help="comma-separated BB storage hosts (default: the platform's storage_nodes property)")
    r.add_argument("--timeout", type=cliargs.positive_float, default=600.0, metavar="S",
                   help="give up if the simulator stays silent, or one decision of the policy lasts, this long "
                        "(default: 600 s; docs/reliability.md)")
    r.add_argument("--cpu", default="auto", type=cliargs.cpu, metavar="auto|off|N",
                   help="CPU core shared by the scheduler and the simulator, which take turns: auto (the "
                        "current one), off (no pinning) or a number (default: auto; twice as fast as "
                        "unpinned on a 2-core machine)")
    r.add_argument("--link", default="in-process", choices=("in-process", "pipes"),
                   help="how the scheduler and the simulator talk: in-process (the scheduler inside the simulator's "
                        "process, a function call per message: the fastest) or pipes (two processes, the protocol's "
                        "messages over a pipe each way); the same messages and outputs (default: in-process; "
                        "docs/performance.md)")
    add_order_options(r)
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    from .schedulers.window_cli import add_window_options
    add_window_options(r)
    r.add_argument("--plot", action="store_true",
                   help="also write the run's figures (as `burstbuffer plot`) to OUTPUT/figures/run.png and .svg")
    r.set_defaults(func=_cmd_run)


def _add_plot(sub) -> None:
    pl = sub.add_parser("plot", help="figures of a run: Gantt chart, BB per storage node, queue, utilisation",
                        description="Draw one figure of a run folder (jobs.csv and run.json, as `run` and `serve` "
                                    "write them) with four panels over time: the Gantt chart of the processors "
                                    "(killed jobs hatched; a busy-fraction heat map above --max-jobs jobs), the "
                                    "burst-buffer occupancy of every storage node, the queue length, and the "
                                    "processor and BB utilisation. Writes run.png and run.svg.")
    pl.add_argument("run_dir", metavar="RUN_DIR", help="a run's output folder (holds jobs.csv)")
    pl.add_argument("--output", metavar="DIR", help="where to write the figures (default: RUN_DIR/figures)")
    pl.add_argument("--max-jobs", type=cliargs.positive_int, metavar="N",
                    help="draw one rectangle per job up to N started jobs, a heat map above (default: "
                         "runplot.GANTT_MAX_JOBS, 3000)")
    pl.set_defaults(func=_cmd_plot)


def _add_policies(sub) -> None:
    pl = sub.add_parser("policies", help="list every policy (built-in and installed) with its options",
                        description="Every policy `--policy` accepts by name: the built-in ones and those that "
                                    "installed packages offer under the entry-point group burstbuffer.policies, "
                                    "each with its one-line description and its options (--policy-option "
                                    "NAME=VALUE). Any other policy: --policy MODULE:CLASS or FILE.py:CLASS "
                                    "(docs/writing-a-policy.md). With SPEC: that policy only, resolved as "
                                    "--policy would.")
    pl.add_argument("spec", nargs="?", metavar="SPEC", help="one policy: a name, MODULE:CLASS or FILE.py:CLASS")
    pl.set_defaults(func=_cmd_policies)


def _add_metrics(sub) -> None:
    m = sub.add_parser("metrics", help="summarise a jobs.csv (ours or Batsim's _jobs.csv)")
    m.add_argument("jobs_csv", metavar="JOBS.csv")
    m.add_argument("--nb-compute", type=cliargs.positive_int, help="number of processors, for the utilisation")
    m.add_argument("--total-bb", metavar="SIZE", help="total burst-buffer capacity (e.g. 480GB), for the "
                                                      "BB utilisation")
    m.add_argument("--workload", metavar="FILE",
                   help="the run's workload JSON: per-node BB requests for a Batsim table that lacks them")
    m.set_defaults(func=_cmd_metrics)


#: The subcommands defined here: name → (builder, one-line help, as the builder gives it).
_BUILTIN = {
    "run": (_add_run, "schedule a workload with the embedded simulator (the main job)"),
    "plot": (_add_plot, "figures of a run: Gantt chart, BB per storage node, queue, utilisation"),
    "policies": (_add_policies, "list every policy (built-in and installed) with its options"),
    "metrics": (_add_metrics, "summarise a jobs.csv (ours or Batsim's _jobs.csv)"),
}


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The `burstbuffer` parser. With `argv` (the command line about to be parsed), only the subcommand it
    names is built in full — the others are listed by name and help alone — so that start-up imports no
    more than that subcommand needs (`burstbuffer --help` imports no subcommand's module). Without `argv`,
    every subcommand is built in full."""
    p = cliargs.Parser(
        prog="burstbuffer",
        description="Burst-buffer-aware batch scheduling (Kopanski & Rzadca, Euro-Par 2021) beside Batsim "
                    "or the embedded SimGrid simulator.")
    p.add_argument("--version", action="version", version=f"burstbuffer {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    wanted = _wanted_command(argv)
    full = argv is None
    for name, (builder, help_) in _BUILTIN.items():
        if full or wanted == name:
            builder(sub)
        else:
            sub.add_parser(name, help=help_)
    for name, (mod, help_) in _PLUGINS.items():
        if full or wanted == name:
            try:
                plugin = importlib.import_module(mod)
            except ModuleNotFoundError as exc:
                if exc.name != mod:
                    raise
                continue
            plugin.register(sub)
        else:
            sub.add_parser(name, help=help_)
    return p


def _wanted_command(argv: list[str] | None) -> str | None:
    """The subcommand `argv` names (its first argument not starting with ``-``), or None."""
    if argv is None:
        return None
    for a in argv:
        if not a.startswith("-"):
            return a
    return None


def main(argv: list[str] | None = None) -> int:
    from .affinity import one_blas_thread
    from .jsonvalues import excerpt
    one_blas_thread()
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    if not argv:
        parser.print_help()
        return 0
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:           # --help, --version, or a one-line usage error (status 2)
        return exc.code if isinstance(exc.code, int) else 2
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except InputError as exc:
        print(f"burstbuffer: {excerpt(str(exc), 2000)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("burstbuffer: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:             # the reader of stdout went away (`burstbuffer policies | head`)
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
        return 128 + 13                 # as a process killed by SIGPIPE
    except Exception as exc:  # BatsimDied, a protocol error and the like: one line, no traceback
        from .batsim.loop import BatsimDied
        from .batsim.protocol import ProtocolError
        if isinstance(exc, (BatsimDied, ProtocolError)):
            print(f"burstbuffer: {excerpt(str(exc), 2000)}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
