"""The `burstbuffer` command: run, simulate, workload, metrics.

Bad input ends with a one-line message ``burstbuffer: FILE: ITEM: REASON`` and exit status 2.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from . import cliargs, links
from .version import __version__
from .errors import EXIT_TIMEOUT, InputError, TimedOut

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
    "sweep": ("burstbuffer.sweep.command",
              "run a campaign (policies × workloads × models × seeds) on Dask or a local pool"),
    "compare": ("burstbuffer.metrics.compare",
                "judge treatment runs against control runs: effect, noise floor over replicates, verdict"),
    "check": ("burstbuffer.audit.cli",
              "audit a run's schedule from its outputs (processors, burst buffers, jobs accounted, walltimes)"),
}


def _cmd_run(args: argparse.Namespace) -> int:
    from .policyargs import spec_from_args
    from .metrics.summary import print_summary
    from .runner import run_spec
    from .signals import Interrupted, interruptible
    from .platforms.model import NoStorageError
    spec = spec_from_args(args, job_model=args.model, seed=args.seed, timeout=args.timeout)
    out = Path(args.output) if args.output else Path("out") / spec.label
    workload = Path(args.workload)
    shown = args.workload
    if args.jobs is not None:
        from .errors import require_simgrid
        from .workloads.split import first_jobs
        require_simgrid()                  # before the subset is written
        from .data import input_path
        src = input_path(args.workload, "workload")
        out.mkdir(parents=True, exist_ok=True)
        workload = first_jobs(src, args.jobs, out / f"workload-first-{args.jobs}.json")
        shown = f"{args.workload} (first {args.jobs} jobs: {workload})"
    header = f"policy {spec.label}, model {args.model}, workload {shown}, platform {args.platform}"
    outputs = (f"{out}/jobs.csv (per job), {out}/batsim_jobs.csv, {out}/batsim_schedule.csv, "
               f"{out}/batsim_machine_states.csv, {out}/bb_occupancy.csv")
    try:
        with interruptible():
            res = run_spec(spec, workload, Path(args.platform), out,
                      bb_capacity=args.bb_capacity, storage=args.storage, progress=not args.quiet,
                      timeout=args.timeout, cpu=args.cpu,
                      network_model=args.network_model, energy=args.energy, link=args.link)
    except NoStorageError as exc:     # name run's own option (simulate and Batsim say -r HOSTS:storage)
        raise exc.for_option("--storage HOSTS") from None
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
    """`burstbuffer policies [SPEC]`: name, origin, description and options of each policy (a built-in: the
    class of its algorithm and the options the preset sets, from the registry's one table). Listing them all,
    an option several policies declare alike (same type, default and meaning) is described once, first, and
    each policy names the shared options it takes before its own."""
    from .schedulers.resolve import all_policies, policy_info
    if args.spec:
        infos, errors = [policy_info(args.spec)], []
    else:
        infos, errors = all_policies()
    from .schedulers.options import describe
    rows = [describe(i.policy) for i in infos]
    counts: dict[tuple, int] = {}
    for r in rows:
        for row in r:
            counts[row] = counts.get(row, 0) + 1
    shared = [] if args.spec else [row for row in counts if counts[row] > 1]

    def show(row):
        name, kind, default, meaning = row
        print(f"    {name}: {kind}" + (f", default {default}" if default else ""))
        print(f"        {meaning or '(its docstring does not say)'}")

    if shared:
        print("options several policies share (--policy-option NAME=VALUE; each policy below names those it takes):")
        for row in shared:
            show(row)
        print()
    for n, (i, r) in enumerate(zip(infos, rows)):
        origin = "" if i.origin == "built-in" else f" [{i.origin}]"
        if n:
            print()
        print(f"{i.spec}  {i.description or '(no description)'}{origin}")
        where = getattr(i.policy, "where", None)          # a preset: its algorithm's class, the options it sets
        if where is not None:
            from .schedulers.options import value_text
            sets = ", ".join(f"{k}={value_text(v)}" for k, v in i.policy.options.items())
            print(f"    = {where[1]}" + (f" with {sets}" if sets else "") + f" ({where[0]})")
        if not r:
            print("    options: none")
            continue
        common = [row[0] for row in r if row in shared]
        own = [row for row in r if row not in shared]
        if common:
            print(f"    shared options: {', '.join(common)}")
        if own:
            print("    options (--policy-option NAME=VALUE):" if not common else "    its own options:")
            for row in own:
                show(row)
    for e in errors:
        print(f"burstbuffer: --policy: {e}", file=sys.stderr)
    return 0


def _cmd_metrics(args: argparse.Namespace) -> int:
    """Summary of one run's per-job table: ours, or a Batsim `_jobs.csv` (with sub-jobs
    ``w0%<id>`` of an I/O-aware run rebuilt per original job, docs/protocol.md)."""
    from .metrics.runinfo import platform_size
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
    seen = platform_size(path.parent) if args.nb_compute is None or total_bb is None else None
    machines = None
    if args.platform:
        from .platforms.simgrid_xml import parse_platform, resolve_machines
        cliargs.input_file(Path(args.platform), "--platform")
        ms = resolve_machines(parse_platform(args.platform))
        machines, seen = len(ms.all), seen or (len(ms.compute), None)
    nb_compute = args.nb_compute or (seen[0] if seen else None)
    total_bb = total_bb or (seen[1] if seen else None)
    from .metrics.batsim_csv import read_schedule_csv, schedule_fields, schedule_lines
    from .metrics.tidy import read_table
    try:
        jobs = load_jobs(path, bb)
        s = summarize(jobs, nb_compute, total_bb)
        lines = describe_lines(job_metrics(jobs))
        batsim = schedule_fields(read_table(path), machines)
    except (KeyError, ValueError) as exc:
        raise InputError(str(path), "columns", f"not a Batsim jobs.csv ({exc})") from None
    if jobs.attrs.get("layout_note"):
        print(jobs.attrs["layout_note"])
    if "nb_subjobs" in jobs:
        print(f"Batsim sub-job table: {len(jobs)} original jobs rebuilt from "
              f"{int(jobs['nb_subjobs'].sum())} sub-jobs")
    print(s)
    print("\n".join(lines))
    from .metrics.batsim_csv import SUBJOBS_CSV
    beside = path.with_name(path.name[:-len("jobs.csv")] + "schedule.csv") if path.name.endswith("jobs.csv") else None
    if path.name == SUBJOBS_CSV:      # a run's own Batsim table of sub-jobs (docs/run-outputs.md)
        beside = path.with_name("batsim_schedule.csv")
    split = path.name == "batsim_jobs.csv" and (path.parent / SUBJOBS_CSV).is_file()
    theirs = read_schedule_csv(beside) if beside is not None and not split else None
    print("Batsim's _schedule.csv fields, by Batsim 4.2.1's definitions over the table's "
          f"{batsim['nb_jobs']:.0f} rows (docs/run-outputs.md)"
          + (f"; checked against {beside.name}" if theirs is not None else "")
          + (f"; {beside.name} counts the sub-jobs: `metrics {path.parent / SUBJOBS_CSV}` to compare" if split
             else ""))
    print("\n".join(schedule_lines(batsim, theirs)))
    return 0


def _add_run(sub) -> None:
    from .defaults import DEFAULT_PLATFORM, DEFAULT_WORKLOAD
    from .io_model.registry import model_names
    r = sub.add_parser("run", help="schedule a workload with the embedded simulator (the main job)",
                       description="Start the embedded Batsim-compatible simulator with the scheduler (by default "
                                   "in one child process), simulate the workload, print a summary. "
                                   "With no option: the 1000-job KTH workload on the paper's 108-node Dragonfly "
                                   "under sjf-bb.")
    from .policyargs import add_policy_arguments
    add_policy_arguments(r, default="sjf-bb")
    r.add_argument("--workload", default=str(DEFAULT_WORKLOAD), metavar="FILE",
                   help="Batsim workload JSON (default: bundled workloads/kth-1000.json)")
    r.add_argument("--jobs", type=cliargs.positive_int, metavar="N",
                   help="run only the first N jobs of the workload (file order), written to "
                        "OUTPUT/workload-first-N.json (default: all)")
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
    r.add_argument("--link", default="in-simulator", type=links.link, metavar="in-simulator|pipes",
                   help="how the scheduler and the simulator talk: in-simulator (the scheduler inside the simulator's "
                        "process, a function call per message: the fastest) or pipes (the scheduler in a process of "
                        "its own, the protocol's messages over a pipe each way); the same messages and outputs "
                        "(default: in-simulator; in-process, its former name, is accepted; docs/performance.md)")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    r.add_argument("--plot", action="store_true",
                   help="also write the run's figures (as `burstbuffer plot`) to OUTPUT/figures/run.png and .svg")
    r.set_defaults(func=_cmd_run)


def _add_plot(sub) -> None:
    pl = sub.add_parser("plot", help="figures of a run: Gantt chart, BB per storage node, queue, utilisation",
                        description="Draw one figure of a run folder (jobs.csv and run.json, as `run` and `serve` "
                                    "write them), or of Batsim's outputs (an export prefix, PREFIX_jobs.csv, or a "
                                    "folder holding one; any layout 1.x-4.2), with four panels over time: the "
                                    "Gantt chart of the processors (killed jobs hatched; a busy-fraction heat map above --max-jobs jobs), the "
                                    "burst-buffer occupancy of every storage node, the queue length, and the "
                                    "processor and BB utilisation (no BB panel for a table without burst "
                                    "buffers). Writes run.png and run.svg (PREFIX.png and .svg for Batsim's).")
    pl.add_argument("run_dir", metavar="RUN_DIR", help="a run's output folder (holds jobs.csv), a Batsim export "
                                                       "prefix or output folder")
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
    m.add_argument("--nb-compute", type=cliargs.positive_int,
                   help="number of processors, for the utilisation (default: from run.json beside JOBS.csv, "
                        "as `run` writes it)")
    m.add_argument("--total-bb", metavar="SIZE", help="total burst-buffer capacity (e.g. 480GB), for the "
                                                      "BB utilisation (default: from run.json beside JOBS.csv)")
    m.add_argument("--workload", metavar="FILE",
                   help="the run's workload JSON: per-node BB requests for a Batsim table that lacks them")
    m.add_argument("--platform", metavar="FILE",
                   help="the run's SimGrid platform XML: its compute machines for the processor utilisation and "
                        "Batsim's nb_computing_machines (default: run.json beside JOBS.csv, if any)")
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
    from .logs import LEVELS
    p.add_argument("--log-level", choices=LEVELS, default=None,
                   help="log level of every command and the processes it starts (default: warning; at debug "
                        "the scheduler's and the simulator's logs go to the console and simulator.log)")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="-v: --log-level info, -vv: --log-level debug")
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
    skip = False
    for a in argv:
        if skip:
            skip = False
        elif a == "--log-level":
            skip = True
        elif not a.startswith("-"):
            return a
    return None


def _own_options(parser: argparse.ArgumentParser, command: str | None) -> set[str]:
    """The option strings the subcommand `command` of `parser` defines (empty for none or an unknown one)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            return {o for a in action.choices[command]._actions for o in a.option_strings}
    return set()


def _log_options_first(argv: list[str], own: set[str] = frozenset()) -> list[str]:
    """`argv` with the options of every command (``--log-level LEVEL``, ``-v``, ``-vv``, ``--verbose``) moved
    before the command, wherever they were given (``burstbuffer run -v`` as ``burstbuffer -v run``); nothing moved
    after ``--``, nor an option the command defines itself (`own`: ``simulate -v`` is Batsim's ``--verbosity``)."""
    front, rest, i = [], [], 0
    while i < len(argv):
        a = argv[i]
        name = "-v" if a in ("-vv", "-vvv") else a.split("=", 1)[0]
        if a == "--":
            rest += argv[i:]
            break
        if name in own:
            rest.append(a)
        elif a in ("-v", "-vv", "-vvv", "--verbose") or a.startswith("--log-level="):
            front.append(a)
        elif a == "--log-level" and i + 1 < len(argv):
            front += argv[i:i + 2]
            i += 1
        else:
            rest.append(a)
        i += 1
    return front + rest


def main(argv: list[str] | None = None) -> int:
    from .affinity import one_blas_thread
    from .jsonvalues import excerpt
    one_blas_thread()
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    argv = _log_options_first(argv, _own_options(parser, _wanted_command(argv)))
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
    from .logs import setup
    setup(args.log_level or {0: None, 1: "info"}.get(args.verbose, "debug"))
    try:
        return int(args.func(args) or 0)
    except SystemExit as exc:           # the user's code (a policy file or module, as it is imported) exited
        from .guards import user_frame
        culprit = user_frame(exc)
        if culprit is None:
            raise
        print(f"burstbuffer: {culprit[2]}, line {culprit[1]}: called sys.exit({excerpt(repr(exc.code), 60)}) while burstbuffer "
              f"loaded it: the command cannot go on", file=sys.stderr)
        return 2
    except TimedOut as exc:             # a time limit ended the run (its outputs written): 124, as timeout(1)
        print(f"burstbuffer: {excerpt(str(exc), 2000)}", file=sys.stderr)
        return EXIT_TIMEOUT
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
    except OSError as exc:
        from .errors import EXIT_DISK_FULL, is_disk_full
        if not is_disk_full(exc):
            raise
        where = f"{excerpt(exc.filename, 200)}: " if exc.filename else ""
        print(f"burstbuffer: {where}cannot write the outputs: {exc.strerror} (the file system is full or over "
              "quota): outputs incomplete", file=sys.stderr)
        return EXIT_DISK_FULL
    except Exception as exc:  # BatsimDied, a protocol error and the like: one line, no traceback
        from .batsim.loop import BatsimDied
        from .batsim.protocol import ProtocolError
        from .errors import InfeasibleSchedule
        if isinstance(exc, (BatsimDied, ProtocolError, InfeasibleSchedule)):
            print(f"burstbuffer: {excerpt(str(exc), 2000)}", file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
