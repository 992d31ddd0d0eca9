"""burstbuffer simulate (or python -m burstbuffer.simulator): the embedded simulator's command line.

Options follow Batsim 4's (batsim --help; docs/protocol.md): -p PLATFORM -w WORKLOAD [-w ...] [-e PREFIX]
[-s ENDPOINT] [-r HOSTS:ROLE ...] [--enable-dynamic-jobs] [--acknowledge-dynamic-jobs]
[--enable-profile-reuse] [--forward-profiles-on-submission] [-E] [-q], and this simulator's own
[--network-model exact|ring|random-ring|uncontended] (docs/io-model.md §5; exact is Batsim's). As with Batsim, start the
scheduler first (it binds its REP socket), then this process connects to it.

Exit status: 0 done; 2 bad input (missing or malformed platform/workload file, bad option), with one line
'burstbuffer simulate: error: FILE: ITEM: REASON'; 1 the scheduler broke the protocol (one line saying
how, as Batsim aborts) or the simulation deadlocked.
"""
from __future__ import annotations

import argparse
import json
import re
import signal
import sys

from .. import cliargs
from ..errors import InputError
from .network import NETWORK_MODELS

PROG = "burstbuffer simulate"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the simulator's options to `p` (shared by the subcommand and ``python -m``)."""
    p.add_argument("-p", "--platform", required=True, help="SimGrid platform XML (e.g. platforms/dragonfly96.xml)")
    p.add_argument("-w", "--workload", action="append", default=[], metavar="WORKLOAD",
                   help="Batsim workload JSON; repeatable (workloads w0, w1, ...)")
    p.add_argument("-e", "--export", default="out", metavar="PREFIX",
                   help="output prefix: PREFIX_jobs.csv, PREFIX_schedule.csv, PREFIX_machine_states.csv "
                        "[default: out]")
    p.add_argument("-s", "--socket-endpoint", default="tcp://localhost:28000", metavar="ENDPOINT",
                   help="the scheduler's ZeroMQ REP endpoint to connect to, or fd://OUT,IN: a pipe pair inherited "
                        "from the parent, messages written to OUT, answers read from IN (`burstbuffer run`'s "
                        "link) [default: tcp://localhost:28000]")
    p.add_argument("-r", "--add-role-to-hosts", action="append", default=[], metavar="HOSTS:ROLE",
                   help="give ROLE (storage, compute_node, master) to the comma-separated HOSTS; repeatable. "
                        "Without it, the cluster's 'storage_nodes' zone property names the storage nodes")
    p.add_argument("-m", "--master-host", default="master", metavar="NAME",
                   help="master host if no host has role=master [default: master]")
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
    p.add_argument("--sched-cfg", default="", metavar="STRING", help="string forwarded as config.sched-config")
    p.add_argument("--sg-cfg", action="append", default=[], metavar="NAME:VALUE",
                   help="a SimGrid configuration option (as SimGrid's --cfg=NAME:VALUE, e.g. "
                        "network/optim:Full); repeatable. It comes after this simulator's own (host/model:ptask_L07, "
                        "the context factory): changing those gives results the real Batsim would not")
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
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--dump-platform", action="store_true",
                   help="print the resources (JSON, as SIMULATION_BEGINS lists them) and exit; no workload needed")
    p.add_argument("--route", action="append", default=[], metavar="SRC,DST",
                   help="with --dump-platform: also print the route (links, latency) from host SRC to DST")


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``simulate`` subcommand to an argparse `subparsers`; it calls `run_args(namespace)`."""
    p = subparsers.add_parser("simulate", help="run the embedded Batsim-compatible simulator",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(func=run_args)
    return p


#: SimGrid's logging option: CATEGORY.SETTING:VALUE (anything else makes SimGrid abort the process); compiled
#: when an --sg-log is given
_SG_LOG = r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*\.(thres|threshold|fmt|layout|app|appender|add|additivity):.+$"


def config_from_args(ns: argparse.Namespace):
    """argparse namespace → SimConfig. Raises InputError for a --sg-cfg that is not NAME:VALUE or an
    --sg-log that is not CATEGORY.SETTING:VALUE (SimGrid's own syntax, checked here because SimGrid aborts
    on it; an unknown option name or a bad value is SimGrid's to reject: `server.Simulator.run`)."""
    from .server import SimConfig

    for c in getattr(ns, "sg_cfg", []):
        if not re.match(r"^[A-Za-z0-9_/-]+:.*$", c):
            raise InputError("--sg-cfg", c, "expected NAME:VALUE (a SimGrid configuration option, e.g. "
                                            "network/optim:Full)")
    for g in getattr(ns, "sg_log", []):
        if not re.match(_SG_LOG, g):
            raise InputError("--sg-log", g, "expected CATEGORY.SETTING:VALUE (SETTING thres, fmt, app or add; "
                                            "e.g. ker_lmm.thres:debug)")

    return SimConfig(platform=ns.platform, workloads=list(ns.workload), export_prefix=ns.export,
                     socket=ns.socket_endpoint, roles=list(ns.add_role_to_hosts), master=ns.master_host,
                     dynamic_jobs=ns.enable_dynamic_jobs, ack_dynamic_jobs=ns.acknowledge_dynamic_jobs,
                     profile_reuse=ns.enable_profile_reuse, forward_profiles=ns.forward_profiles_on_submission,
                     compute_sharing=ns.enable_compute_sharing, storage_sharing=not ns.disable_storage_sharing,
                     sched_config=ns.sched_cfg, quiet=ns.quiet, timeout=ns.timeout,
                     network_model=ns.network_model, core=getattr(ns, "core", None),
                     machine_states=not getattr(ns, "disable_machine_state_tracing", False),
                     energy=getattr(ns, "energy", False), sg_cfg=list(getattr(ns, "sg_cfg", [])),
                     sg_log=list(getattr(ns, "sg_log", [])))


def dump_platform(ns: argparse.Namespace) -> dict:
    """The platform as the simulator sees it: loader used, resources, master, requested routes."""
    from ..platforms.simgrid_xml import parse_platform, parse_roles_option, resolve_machines
    from .platform_loader import load_into_engine, route
    from .server import import_simgrid

    spec = parse_platform(ns.platform)
    machines = resolve_machines(spec, parse_roles_option(ns.add_role_to_hosts), ns.master_host)
    sg = import_simgrid(True)
    engine = sg.Engine(["burstbuffer-simulate", "--cfg=host/model:ptask_L07", "--log=root.thres:critical"])
    loader = load_into_engine(engine, spec)
    out = {"loader": loader, "hosts": [h.name for h in engine.all_hosts], "master": machines.master.name,
           "compute_resources": [m.to_json() for m in machines.compute],
           "storage_resources": [m.to_json() for m in machines.storage], "routes": []}
    for pair in ns.route:
        src, _, dst = pair.partition(",")
        if src not in spec.hosts or dst not in spec.hosts:
            raise InputError("--route", pair, "expected SRC,DST with two host names of the platform")
        links, lat = route(engine, src, dst)
        out["routes"].append({"src": src, "dst": dst, "links": links, "latency": lat})
    return out


def run_args(ns: argparse.Namespace, transport=None) -> int:
    """Run what `ns` asks; print one-line errors; return the exit status (module docstring). `transport`: the
    link to the scheduler, if not the one ``-s`` names (`server.Simulator.run`)."""
    from .server import EXIT_PROTOCOL, SimulationError, Simulator

    try:
        if ns.dump_platform:
            print(json.dumps(dump_platform(ns), indent=1))
            return 0
        if not ns.workload:
            raise InputError("-w", "workload", "at least one workload file is needed")
        sim = Simulator(config_from_args(ns))
        # SimGrid keeps the main thread in C++ while actors run: let Ctrl-C end the process at once.
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
        except ValueError:  # not the main thread
            pass
        res = sim.run(transport)
    except InputError as exc:
        from ..jsonvalues import excerpt
        print(f"{PROG}: error: {excerpt(str(exc), 2000)}", file=sys.stderr)
        return 2
    except SimulationError as exc:
        from ..jsonvalues import excerpt
        print(f"{PROG}: simulation stopped: {excerpt(str(exc), 2000)}", file=sys.stderr)
        tb = getattr(exc, "traceback_text", None)
        if tb and not ns.quiet:
            sys.stderr.write(tb)
        return EXIT_PROTOCOL
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    if not ns.quiet:
        print(f"{PROG}: {res.nb_jobs} jobs ({res.nb_success} succeeded, {res.nb_killed} killed or failed, "
              f"{res.nb_rejected} rejected), simulated until t={res.end_time:f} s, {res.nb_messages} messages, "
              f"wall {res.wall_time:.2f} s (scheduler {res.scheduling_time:.2f} s), CPU {res.cpu_time:.2f} s; "
              f"outputs {res.jobs_csv}, {res.schedule_csv}", file=sys.stderr)
        # as Batsim: BB data are transfers, not held space (docs/reliability.md §3); a raw client is not checked
        print(f"{PROG}: note: burst-buffer capacity is not checked by the simulator (as in Batsim): the "
              "scheduler's decisions must respect it", file=sys.stderr)
    return 0


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
