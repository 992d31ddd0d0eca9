"""burstbuffer simulate (or python -m burstbuffer.simulator): the embedded simulator's command line.

Every option of "batsim --help" (Batsim 4.2.1) is accepted with Batsim's meaning, so that a "batsim"
command line runs as it is (docs/batsim.md has the table): -p PLATFORM [-w WORKLOAD ...] [--events FILE ...]
[-e PREFIX] [-s ENDPOINT] [-m NAME] [-r HOSTS:ROLE ...] [-E] [--mmax N] [--mmax-workload]
[--enable-dynamic-jobs] [--acknowledge-dynamic-jobs] [--enable-profile-reuse]
[--forward-profiles-on-submission] [--forward-unknown-events] [--enable-compute-sharing]
[--disable-storage-sharing] [--sched-cfg STR | --sched-cfg-file FILE] [--sg-cfg NAME:VALUE ...]
[--sg-log OPTION ...] [--disable-schedule-tracing] [--disable-machine-state-tracing] [-v LEVEL] [-q]
[--redis-hostname H] [--redis-port P] [--redis-prefix X] [--workflow-jobs-limit N]
[--ignore-beyond-last-workflow] [--dump-execution-context] [--no-sched]. Refused with one line (exit 2): Redis
(--enable-redis) and workflows (-W, --WS). This simulator's own: --network-model, --core,
--timeout, --dump-platform, --route, --no-audit. --version and --simgrid-version print a version and exit. As with Batsim, start the scheduler first (it binds its REP socket),
then this process connects to it.

Exit status: 0 done; 2 bad input (missing or malformed platform/workload/events file, bad option, an option
this simulator does not support), with one line 'burstbuffer simulate: error: FILE: ITEM: REASON'; 1 the
scheduler broke the protocol (one line saying how, as Batsim aborts) or the simulation deadlocked, or the
audit of PREFIX_jobs.csv found a violation (a compute host held by two jobs at once, a job unaccounted for,
started before its submission or past its walltime; one line 'audit: INFEASIBLE ...', outputs kept;
--no-audit skips it, docs/audit.md); 128 + N
after SIGTERM (143) or SIGHUP (129), the outputs so far written (PREFIX_jobs.csv, PREFIX_schedule.csv; Batsim
writes none), with one line saying so.
"""
from __future__ import annotations

import argparse
import json
import re
import signal
import sys

from .. import cliargs
from ..errors import InputError
from ..platforms.simgrid_xml import DEFAULT_MASTER_HOST
from .network import NETWORK_MODELS

PROG = "burstbuffer simulate"
#: Batsim's --verbosity levels
VERBOSITY = ("quiet", "network-only", "information", "debug")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the simulator's options to `p` (shared by the subcommand and ``python -m``)."""
    p.add_argument("-p", "--platform", required=True, help="SimGrid platform XML (e.g. platforms/dragonfly96.xml)")
    p.add_argument("-w", "--workload", action="append", default=[], metavar="WORKLOAD",
                   help="Batsim workload JSON; repeatable (workloads w0, w1, ...)")
    p.add_argument("--events", action="append", default=[], metavar="EVENTS_FILE",
                   help="external events, one JSON object a line (machine_unavailable, machine_available; "
                        "others with --forward-unknown-events); repeatable (docs/batsim.md)")
    p.add_argument("--forward-unknown-events", action="store_true",
                   help="forward events of unknown types to the scheduler (NOTIFY); ignored without --events")
    p.add_argument("-W", "--workflow", action="append", default=[], metavar="WORKFLOW_FILE",
                   help="Batsim's workflows: not supported (refused)")
    p.add_argument("--WS", "--workflow-start", action="append", nargs=2, default=[],
                   metavar=("CUT_WORKFLOW_FILE", "START_TIME"), dest="workflow_start",
                   help="Batsim's cut workflows: not supported (refused)")
    p.add_argument("--workflow-jobs-limit", type=cliargs.nonneg_int, default=0, metavar="N",
                   help="Batsim's limit of concurrent workflow jobs: no effect without workflows [default: 0]")
    p.add_argument("--ignore-beyond-last-workflow", action="store_true",
                   help="Batsim's: no effect without workflows")
    p.add_argument("--mmax", type=cliargs.nonneg_int, default=0, metavar="N",
                   help="keep only the first N compute machines (0: all) [default: 0]")
    p.add_argument("--mmax-workload", action="store_true",
                   help="keep only as many compute machines as the largest 'nb_res' of the workloads (with "
                        "--mmax: the smaller of both)")
    p.add_argument("-e", "--export", default="out", metavar="PREFIX",
                   help="output prefix: PREFIX_jobs.csv, PREFIX_schedule.csv, PREFIX_machine_states.csv, "
                        "PREFIX_schedule.trace [default: out]")
    p.add_argument("-s", "--socket-endpoint", default="tcp://localhost:28000", metavar="ENDPOINT",
                   help="the scheduler's ZeroMQ REP endpoint to connect to, or fd://OUT,IN: a pipe pair inherited "
                        "from the parent, messages written to OUT, answers read from IN (`burstbuffer run`'s "
                        "link) [default: tcp://localhost:28000]")
    p.add_argument("-r", "--add-role-to-hosts", action="append", default=[], metavar="HOSTS:ROLE",
                   help="give ROLE (storage, compute_node, master) to the comma-separated HOSTS; repeatable. "
                        "Without it, the cluster's 'storage_nodes' zone property names the storage nodes")
    p.add_argument("-m", "--master-host", default=DEFAULT_MASTER_HOST, metavar="NAME",
                   help="host given the master role, else a host with role=master [default: %(default)s]")
    p.add_argument("--enable-dynamic-jobs", action="store_true",
                   help="let the scheduler register jobs and profiles (REGISTER_JOB/REGISTER_PROFILE)")
    p.add_argument("--acknowledge-dynamic-jobs", action="store_true",
                   help="send JOB_SUBMITTED for registered jobs too")
    p.add_argument("--enable-profile-reuse", action="store_true",
                   help="keep profiles of finished dynamic jobs for reuse (with --enable-dynamic-jobs)")
    p.add_argument("--forward-profiles-on-submission", action="store_true",
                   help="attach the profile to JOB_SUBMITTED")
    p.add_argument("--enable-compute-sharing", action="store_true",
                   help="allow several jobs on one compute node at a time")
    p.add_argument("--disable-storage-sharing", action="store_true",
                   help="forbid several jobs on one storage node at a time")
    cfg = p.add_mutually_exclusive_group()
    cfg.add_argument("--sched-cfg", default="", metavar="STRING", help="string forwarded as config.sched-config")
    cfg.add_argument("--sched-cfg-file", default=None, metavar="FILE",
                     help="as --sched-cfg, the string being the whole content of FILE")
    p.add_argument("--no-sched", action="store_true",
                   help="no scheduler: every job starts at t=0 on machines 0 to res-1, as Batsim's option does "
                        "(PREFIX_jobs.csv gets no row; docs/batsim.md)")
    p.add_argument("--enable-redis", action="store_true", help="Batsim's Redis: not supported (refused)")
    p.add_argument("--redis-hostname", default="127.0.0.1", metavar="HOST",
                   help="only passed on in SIMULATION_BEGINS' config (no Redis) [default: 127.0.0.1]")
    p.add_argument("--redis-port", type=int, default=6379, metavar="PORT",
                   help="only passed on in SIMULATION_BEGINS' config (no Redis) [default: 6379]")
    p.add_argument("--redis-prefix", default="default", metavar="PREFIX",
                   help="only passed on in SIMULATION_BEGINS' config (no Redis) [default: default]")
    p.add_argument("--sg-cfg", action="append", default=[], metavar="NAME:VALUE",
                   help="a SimGrid configuration option (as SimGrid's --cfg=NAME:VALUE, e.g. "
                        "network/optim:Full; several in one, separated by spaces or commas); repeatable. As in "
                        "Batsim, host/model stays ptask_L07 (set after the user's options); the context factory "
                        "given here is used, where Batsim sets it too late for it to apply")
    p.add_argument("--sg-log", action="append", default=[], metavar="OPTION",
                   help="a SimGrid logging option (as SimGrid's --log=OPTION, e.g. ker_lmm.thres:debug); "
                        "repeatable")
    p.add_argument("--timeout", type=cliargs.positive_float, default=None, metavar="SECONDS",
                   help="give up if the scheduler does not answer within SECONDS (default: wait forever)")
    p.add_argument("--network-model", default="exact", choices=NETWORK_MODELS,
                   help="a parallel_homogeneous job's communication: exact (Batsim's all-to-all, n(n-1) flows), "
                        "ring or random-ring (each host sends its all-to-all volume to the next host of the "
                        "allocation, or of a fixed shuffled order: n flows) or uncontended (its random-ring flows "
                        "priced alone on the network and added to the computation: no flows); approximations "
                        "for large machines, docs/io-model.md §5 [default: exact]")
    p.add_argument("--core", choices=("auto", "actors", "bridged"), default=None,
                   help="how jobs run (docs/simulator-core.md): actors (one SimGrid actor per running job), "
                        "bridged (a C++ actor per job: the compiled bridge; falls back to actors when it cannot "
                        "be built) or auto (bridged when the bridge is available; actors under -E); the same "
                        "outputs "
                        "[default: $BURSTBUFFER_SIM_CORE, else auto]")
    p.add_argument("-E", "--energy", action="store_true",
                   help="simulate energy as Batsim's -E: SimGrid's host energy plugin with the platform's "
                        "wattage_per_state / wattage_off / sleep_pstates host properties, SET_RESOURCE_STATE, "
                        "QUERY consumed_energy, jobs' consumed_energy, PREFIX_consumed_energy.csv and "
                        "PREFIX_pstate_changes.csv (docs/batsim.md)")
    p.add_argument("--disable-machine-state-tracing", action="store_true",
                   help="do not write PREFIX_machine_states.csv (as Batsim's option)")
    p.add_argument("--disable-schedule-tracing", action="store_true",
                   help="do not write the Pajé trace PREFIX_schedule.trace (as Batsim's option)")
    p.add_argument("-v", "--verbosity", choices=VERBOSITY, default="information",
                   help="quiet (errors only), network-only (and every message exchanged with the scheduler), "
                        "information (and a summary), debug (both) [default: information]")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors (--verbosity quiet)")
    p.add_argument("--dump-execution-context", action="store_true",
                   help="print the execution context as Batsim does (one JSON object: socket endpoint, Redis, "
                        "export prefix, external scheduler) and exit")
    p.add_argument("--version", action=_Print, text=_version, help="print the simulator's version and exit")
    p.add_argument("--simgrid-version", action=_Print, text=_simgrid_version,
                   help="print the version of SimGrid it runs on and exit")
    p.add_argument("--no-audit", action="store_true",
                   help="do not audit PREFIX_jobs.csv after the run (by default: no compute host held by two jobs "
                        "at once, every job accounted for, none started before its submission or run past its "
                        "walltime unless killed; one line 'audit: ...', exit 1 on a violation; docs/audit.md)")
    p.add_argument("--dump-platform", action="store_true",
                   help="print the resources (JSON, as SIMULATION_BEGINS lists them) and exit; no workload needed")
    p.add_argument("--route", action="append", default=[], metavar="SRC,DST",
                   help="with --dump-platform: also print the route (links, latency) from host SRC to DST")


class _Print(argparse.Action):
    """An option that prints `text()` and exits 0 (Batsim's --version, --simgrid-version)."""

    def __init__(self, option_strings, dest, text, help=None):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)
        self.text = text

    def __call__(self, parser, namespace, values, option_string=None):
        print(self.text())
        parser.exit(0)


def _version() -> str:
    from ..version import __version__
    return f"burstbuffer {__version__} (Batsim 4.2.1's command line and protocol)"


def _simgrid_version() -> str:
    from .server import import_simgrid
    return import_simgrid(True).simgrid_version


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``simulate`` subcommand to an argparse `subparsers`; it calls `run_args(namespace)`."""
    p = subparsers.add_parser("simulate", help="run the embedded Batsim-compatible simulator",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(func=run_args)
    return p


#: SimGrid's log settings (src/xbt/log.cpp, ``_xbt_log_parse_setting``): a setting is any abbreviation of
#: one of these (``thres``, ``thresh``, ``app``, ``add``...); anything else makes SimGrid abort the process
SG_LOG_SETTINGS = ("threshold", "additivity", "appender", "fmt")


def _which(item: str, items: list[str]) -> str:
    """The prefix of an error about `item`, one of an option's `items`: its name when there are several."""
    return f"{item!r}: " if len(items) > 1 else ""


def sg_log_settings(option: str) -> list[str]:
    """The settings of one ``--sg-log`` OPTION as SimGrid's ``xbt_log_control_set`` (which Batsim 4.2.1
    calls with it, batsim.cpp) reads it: space-separated (quotes and ``\\`` escaping as Boost's
    ``escaped_list_separator``), each ``CATEGORY.SETTING:VALUE`` or ``CATEGORY.SETTING=VALUE``, the
    category before the first dot, SETTING an abbreviation of `SG_LOG_SETTINGS`; ``no_loc`` alone is
    SimGrid's too. Raises InputError for what would make SimGrid abort; a bad value (an unknown priority or
    appender) is SimGrid's to reject (`server.Simulator.run`)."""
    if option == "no_loc":
        return [option]
    import shlex  # noqa: PLC0415

    try:
        items = shlex.split(option)
    except ValueError:
        raise InputError("--sg-log", option, "unbalanced quotes") from None
    if not items:
        raise InputError("--sg-log", option, "empty logging option (e.g. surf_energy.thresh:critical)")
    for item in items:
        m = re.match(r"^([^.:= ]*)\.([^:= ]*)[:=]", item)
        if not m:
            raise InputError("--sg-log", option, f"{_which(item, items)}expected CATEGORY.SETTING:VALUE (e.g. "
                                                 f"surf_energy.thresh:critical or ker_lmm.thres:debug)")
        if not any(s.startswith(m.group(2)) for s in SG_LOG_SETTINGS):
            raise InputError("--sg-log", option, f"{_which(item, items)}unknown setting {m.group(2)!r} (an "
                                                 f"abbreviation of {', '.join(SG_LOG_SETTINGS)})")
    return items


def sg_cfg_settings(option: str) -> list[str]:
    """The settings of one ``--sg-cfg`` OPTION as SimGrid's ``config::set_parse`` (``Engine::set_config``,
    which Batsim 4.2.1 calls with it) reads it: separated by spaces, tabs, newlines or commas, each
    ``NAME:VALUE``. Raises InputError for one without ``:`` (SimGrid aborts on it); an unknown name or a
    bad value is SimGrid's to reject (`server.Simulator.run`)."""
    items = [t for t in re.split(r"[ \t\n,]+", option) if t]
    if not items:
        raise InputError("--sg-cfg", option, "expected NAME:VALUE (a SimGrid configuration option, e.g. "
                                             "network/optim:Full)")
    for item in items:
        if ":" not in item or item.startswith(":"):
            raise InputError("--sg-cfg", option, f"{_which(item, items)}expected NAME:VALUE (a SimGrid configuration "
                                                 f"option, e.g. network/optim:Full)")
    return items


#: Batsim options this simulator refuses (argparse dest → the reason given)
UNSUPPORTED = {
    "enable_redis": ("--enable-redis", "Redis is not supported: the scheduler gets everything through the "
                                       "protocol's messages (run without --enable-redis)"),
    "workflow": ("-W/--workflow", "Batsim's workflows are not supported"),
    "workflow_start": ("--WS/--workflow-start", "Batsim's workflows are not supported"),
}


def refuse_unsupported(ns: argparse.Namespace) -> None:
    """InputError naming the first option of `UNSUPPORTED` that `ns` sets."""
    for dest, (opt, reason) in UNSUPPORTED.items():
        if getattr(ns, dest, None):
            raise InputError(opt, "option", f"not supported by this simulator: {reason}")


def execution_context(ns: argparse.Namespace) -> str:
    """Batsim's ``--dump-execution-context`` output (batsim.cpp, main): one compact JSON object."""
    return json.dumps({"socket_endpoint": ns.socket_endpoint, "redis_enabled": bool(ns.enable_redis),
                       "redis_hostname": ns.redis_hostname, "redis_port": ns.redis_port,
                       "redis_prefix": ns.redis_prefix, "export_prefix": ns.export,
                       "external_scheduler": not ns.no_sched}, separators=(",", ":"), ensure_ascii=False)


def sched_config(ns: argparse.Namespace) -> str:
    """The string SIMULATION_BEGINS' ``config.sched-config`` carries: --sched-cfg, else the content of
    --sched-cfg-file (InputError if it cannot be read), else ""."""
    path = getattr(ns, "sched_cfg_file", None)
    if ns.sched_cfg or path is None:
        return ns.sched_cfg
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, "--sched-cfg-file", f"cannot be read ({exc.__class__.__name__})") from None


def verbosity(ns: argparse.Namespace) -> str:
    """The verbosity level: --verbosity, quiet if -q."""
    return "quiet" if getattr(ns, "quiet", False) else getattr(ns, "verbosity", "information")


def config_from_args(ns: argparse.Namespace):
    """argparse namespace → SimConfig. Raises InputError for a --sg-cfg that is not NAME:VALUE or an
    --sg-log that SimGrid cannot parse (`sg_cfg_settings`, `sg_log_settings`: SimGrid aborts on those; an
    unknown option name or a bad value is SimGrid's to reject: `server.Simulator.run`), an
    unreadable --sched-cfg-file, --enable-profile-reuse without --enable-dynamic-jobs, or an option this
    simulator refuses (`UNSUPPORTED`)."""
    from .server import SimConfig

    refuse_unsupported(ns)
    if ns.enable_profile_reuse and not ns.enable_dynamic_jobs:   # Batsim refuses it too (batsim.cpp)
        raise InputError("--enable-profile-reuse", "option", "profile reuse is enabled but dynamic registration "
                                                             "is not (add --enable-dynamic-jobs)")

    sg_cfg, sg_log = list(getattr(ns, "sg_cfg", [])), list(getattr(ns, "sg_log", []))
    for c in sg_cfg:    # given to SimGrid unchanged (it splits them again)
        sg_cfg_settings(c)
    for g in sg_log:
        sg_log_settings(g)

    return SimConfig(platform=ns.platform, workloads=list(ns.workload), export_prefix=ns.export,
                     socket=ns.socket_endpoint, roles=list(ns.add_role_to_hosts), master=ns.master_host,
                     dynamic_jobs=ns.enable_dynamic_jobs, ack_dynamic_jobs=ns.acknowledge_dynamic_jobs,
                     profile_reuse=ns.enable_profile_reuse, forward_profiles=ns.forward_profiles_on_submission,
                     compute_sharing=ns.enable_compute_sharing, storage_sharing=not ns.disable_storage_sharing,
                     sched_config=sched_config(ns), quiet=verbosity(ns) in ("quiet", "network-only"),
                     log_messages=verbosity(ns) in ("network-only", "debug"), timeout=ns.timeout,
                     network_model=ns.network_model, core=getattr(ns, "core", None),
                     machine_states=not getattr(ns, "disable_machine_state_tracing", False),
                     energy=getattr(ns, "energy", False), sg_cfg=sg_cfg,
                     sg_log=sg_log, events=list(getattr(ns, "events", [])),
                     forward_unknown_events=getattr(ns, "forward_unknown_events", False),
                     max_machines=getattr(ns, "mmax", 0), max_machines_by_workload=getattr(ns, "mmax_workload", False),
                     redis_hostname=getattr(ns, "redis_hostname", "127.0.0.1"),
                     redis_port=getattr(ns, "redis_port", 6379), redis_prefix=getattr(ns, "redis_prefix", "default"),
                     no_sched=getattr(ns, "no_sched", False),
                     schedule_trace=not getattr(ns, "disable_schedule_tracing", False))


def dump_platform(ns: argparse.Namespace) -> dict:
    """The platform as the simulator sees it: loader used, resources, master, requested routes."""
    from ..platforms.simgrid_xml import parse_platform, parse_roles_option, resolve_machines
    from .platform_loader import load_into_engine, route
    from .server import import_simgrid

    platform = parse_platform(ns.platform)
    machines = resolve_machines(platform, parse_roles_option(ns.add_role_to_hosts), ns.master_host)
    sg = import_simgrid(True)
    engine = sg.Engine(["burstbuffer-simulate", "--cfg=host/model:ptask_L07", "--log=root.thres:critical"])
    loader = load_into_engine(engine, platform)
    out = {"loader": loader, "hosts": [h.name for h in engine.all_hosts], "master": machines.master.name,
           "compute_resources": [m.to_json() for m in machines.compute],
           "storage_resources": [m.to_json() for m in machines.storage], "routes": []}
    for pair in ns.route:
        src, _, dst = pair.partition(",")
        if src not in platform.hosts or dst not in platform.hosts:
            raise InputError("--route", pair, "expected SRC,DST with two host names of the platform")
        links, lat = route(engine, src, dst)
        out["routes"].append({"src": src, "dst": dst, "links": links, "latency": lat})
    return out


def run_args(ns: argparse.Namespace, transport=None) -> int:
    """Run what `ns` asks; print one-line errors; return the exit status (module docstring). `transport`: the
    link to the scheduler, if not the one ``-s`` names (`server.Simulator.run`)."""
    from .server import EXIT_PROTOCOL, SimulationError, Simulator
    from .state import Stopped

    quiet = verbosity(ns) in ("quiet", "network-only")
    try:
        if getattr(ns, "dump_execution_context", False):
            print(execution_context(ns))
            return 0
        if ns.dump_platform:
            print(json.dumps(dump_platform(ns), indent=1))
            return 0
        sim = Simulator(config_from_args(ns))
        # SimGrid keeps the main thread in C++ while actors run: let Ctrl-C end the process at once.
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
        except ValueError:  # not the main thread
            pass
        from .loop import stop_on_signals  # noqa: PLC0415
        stop_on_signals()      # SIGTERM, SIGHUP: the outputs so far written, exit 128 + N
        res = sim.run(transport)
    except InputError as exc:
        from ..jsonvalues import excerpt
        print(f"{PROG}: error: {excerpt(str(exc), 2000)}", file=sys.stderr)
        return 2
    except Stopped as exc:
        st = sim.state
        print(f"{PROG}: {exc} at t={float(st.now):f} s: outputs so far written ({st.jobs_csv}, {st.schedule_csv})",
              file=sys.stderr)
        return 128 + exc.signum
    except SimulationError as exc:
        from ..jsonvalues import excerpt
        print(f"{PROG}: simulation stopped: {excerpt(str(exc), 2000)}", file=sys.stderr)
        tb = getattr(exc, "traceback_text", None)
        if tb and not quiet:
            sys.stderr.write(tb)
        return EXIT_PROTOCOL
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    if not quiet and getattr(ns, "no_sched", False):
        print(f"{PROG}: --no-sched: every job run at t=0 without a scheduler (no job rows, as Batsim), simulated "
              f"until t={res.end_time:f} s; outputs {res.jobs_csv}, {res.schedule_csv}", file=sys.stderr)
    elif not quiet:
        print(f"{PROG}: {res.nb_jobs} jobs ({res.nb_success} succeeded, {res.nb_killed} killed or failed, "
              f"{res.nb_rejected} rejected), simulated until t={res.end_time:f} s, {res.nb_messages} messages, "
              f"wall {res.wall_time:.2f} s (scheduler {res.scheduling_time:.2f} s), CPU {res.cpu_time:.2f} s; "
              f"outputs {res.jobs_csv}, {res.schedule_csv}", file=sys.stderr)
    if not quiet and not getattr(ns, "no_sched", False) and sim.state.machines.storage:
        # as Batsim: BB data are transfers, not held space (docs/reliability.md §3); a raw client is not checked.
        # Only said of a platform with storage machines: without, there is no burst buffer to check.
        print(f"{PROG}: note: burst-buffer capacity is not checked by the simulator (as in Batsim): the "
              "scheduler's decisions must respect it", file=sys.stderr)
    return 0 if getattr(ns, "no_sched", False) or getattr(ns, "no_audit", False) else audit(ns, sim, quiet)


def declared_bb_capacity(machines) -> dict[int, int]:
    """BB node id → capacity [bytes] of the storage machines whose platform declares ``burst_buffer_capacity``
    (host or zone property, docs/platform.md; the PFS excluded); unparsable ones are left out."""
    from ..platforms.model import bb_capacity_text, is_pfs
    from ..platforms.units import parse_bytes
    out = {}
    for m in machines.storage:
        cap = bb_capacity_text(m.properties, m.zone_properties)
        if cap is not None and not is_pfs(m.name, m.properties):
            try:
                out[int(m.id)] = parse_bytes(cap)
            except ValueError:
                pass
    return out


def audit(ns: argparse.Namespace, sim, quiet: bool) -> int:
    """Audit the run's PREFIX_jobs.csv (`burstbuffer.audit.audit_simulation`, docs/audit.md): print one line
    'audit: VERDICT' (a failure, with its first violation, even when quiet); 1 on a violation, else 0."""
    from ..audit import AuditError, audit_simulation
    st = sim.state
    try:
        report = audit_simulation(st.cfg.export_prefix, [(name, st.cfg.workloads[i]) for i, name in
                                                          enumerate(st.static_names)],
                                  [m.id for m in st.machines.compute],
                                  bb_capacity=declared_bb_capacity(st.machines),
                                  compute_sharing=st.cfg.compute_sharing)
    except AuditError as exc:
        print(f"{PROG}: audit: cannot read the outputs: {exc}", file=sys.stderr)
        return 1
    if verbosity(ns) == "debug":
        print(report.table(), file=sys.stderr)
    if report.ok:
        if not quiet:
            print(f"{PROG}: audit: {report.verdict()}", file=sys.stderr)
        return 0
    first = report.violations[0].line() if report.violations else ""
    print(f"{PROG}: audit: {report.verdict()}; first: {first} (outputs kept; docs/audit.md)", file=sys.stderr)
    return 1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The options of ``python -m burstbuffer.simulator`` (argparse's usage error and exit 2 on bad ones)."""
    p = cliargs.Parser(prog="python -m burstbuffer.simulator", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """``python -m burstbuffer.simulator [options]`` (same options as ``burstbuffer simulate``)."""
    from ..affinity import one_blas_thread
    one_blas_thread()
    return run_args(parse_args(argv))
