"""burstbuffer serve: the scheduler process alone, for an external Batsim 4.x (docs/protocol.md).

It binds the ZeroMQ REP socket (default tcp://127.0.0.1:28000: this machine only; the protocol has no
authentication, so any peer that reaches the socket can drive the scheduler: pass --socket tcp://*:28000
to listen on every interface on purpose, as the Docker image does inside its compose network), prints the
batsim command line that matches it (platform, workload, -r storage roles, --enable-dynamic-jobs
--enable-profile-reuse for the io-aware model, -e prefix), answers Batsim until SIMULATION_ENDS, writes
OUTPUT/jobs.csv and prints the same summary as 'burstbuffer run'. Batsim can be the real one (binary,
Docker: see docker/) or the embedded simulator ('burstbuffer simulate ... -s tcp://127.0.0.1:28000').

Faults: Batsim silent for --timeout seconds → one line and exit status 124; Batsim gone (its connection closed
and not back within a second), a malformed message (a field missing or of the wrong type, docs/faults.md), or
SIMULATION_ENDS while jobs still run or wait (written RUNNING / PENDING) → one line and exit status 1; an
unknown event type → a warning, then ignored; SIGINT, SIGTERM or SIGHUP → jobs.csv with the jobs so far, the
summary so far, exit status 130 / 143 / 129.
Whatever the end, jobs.csv is written. Bad input (unknown policy, missing file, address in use) → exit status 2.
"""
from __future__ import annotations

import argparse
import logging
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from . import cliargs
from .errors import EXIT_TIMEOUT, InputError, TimedOut

DEFAULT_SOCKET = "tcp://127.0.0.1:28000"
#: Seconds a lost Batsim connection may take to come back before Batsim is taken for dead.
RECONNECT_GRACE = 1.0


def connect_endpoint(bind: str) -> str:
    """The address Batsim connects to for a bind address: ``tcp://*:P`` / ``tcp://0.0.0.0:P`` →
    ``tcp://localhost:P``; others unchanged."""
    for wildcard in ("tcp://*:", "tcp://0.0.0.0:"):
        if bind.startswith(wildcard):
            return "tcp://localhost:" + bind[len(wildcard):]
    return bind


def storage_hosts(platform: str | None, storage: str | None) -> tuple[list[str], str]:
    """The BB hosts for batsim's ``-r HOSTS:storage`` and where they come from.

    `storage` (comma-separated) wins; else the ``storage_nodes`` properties of a platform XML's zones
    (this project's extension, which real Batsim ignores); else — a platform that is not XML, such
    as a compiled C++ platform — the bundled Dragonfly's list. Hosts with the property
    ``role=storage`` (the PFS) need no ``-r``.
    """
    if storage:
        return [h.strip() for h in storage.split(",") if h.strip()], "--storage"
    from .runner import DEFAULT_PLATFORM
    from .platforms.simgrid_xml import parse_platform

    src = platform if platform and str(platform).endswith(".xml") else None
    try:
        spec = parse_platform(str(src or DEFAULT_PLATFORM))
    except InputError:
        if src is not None:
            raise
        return [], "nowhere (not an XML platform and no bundled one: pass --storage)"
    hosts = spec.listed_storage_nodes()
    return hosts, (str(src) if src else f"the bundled {Path(DEFAULT_PLATFORM).name} (use --storage for another platform)")


def batsim_command(platform: str, workload: str, export_prefix: str, socket_endpoint: str,
                   storage: list[str], dynamic_jobs: bool, program: str = "batsim") -> list[str]:
    """The batsim (4.x) argv matching this scheduler (docs/protocol.md; Batsim's page "cli")."""
    argv = [program, "-p", str(platform), "-w", str(workload), "-e", str(export_prefix), "-s", socket_endpoint]
    if storage:
        argv += ["-r", ",".join(storage) + ":storage"]
    if dynamic_jobs:
        argv += ["--enable-dynamic-jobs", "--enable-profile-reuse"]
    return argv


def ended_early(app) -> tuple[int, str]:
    """(1, why) when Batsim sent SIMULATION_ENDS while jobs of `app` (a `SchedulerApp`) were still running or
    pending — jobs.csv marks them RUNNING / PENDING —, else (0, "")."""
    running, pending = app.unfinished()
    if not running and not pending:
        return 0, ""
    return 1, (f"Batsim sent SIMULATION_ENDS with {running} job{'s' * (running != 1)} running and {pending} "
               f"pending: written RUNNING / PENDING in jobs.csv")


def check_socket(endpoint: str) -> str:
    """`endpoint` if it is a ZeroMQ address serve can bind: ``tcp://HOST:PORT`` with PORT in 1-65535 or ``*``,
    ``ipc://PATH``, ``inproc://NAME``; ValueError saying why not (ZeroMQ binds a port beyond 65535 to
    another port, modulo 65536, where Batsim would never find it)."""
    scheme, sep, rest = endpoint.partition("://")
    if not sep or scheme not in ("tcp", "ipc", "inproc") or not rest:
        raise ValueError(f"{endpoint!r} is not a ZeroMQ address (tcp://HOST:PORT, ipc://PATH)")
    if scheme == "tcp":
        host, colon, port = rest.rpartition(":")
        if not colon or not host:
            raise ValueError(f"{endpoint!r} has no port (tcp://HOST:PORT)")
        if port != "*" and not (port.isdigit() and 1 <= int(port) <= 65535):
            raise ValueError(f"port {port!r} of {endpoint!r} is not a TCP port (1-65535, or * for any free one)")
    return endpoint


def _socket_arg(text: str) -> str:
    """argparse type of --socket (`check_socket`)."""
    try:
        return check_socket(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@dataclass
class ServeOutcome:
    """`result`: a runner.RunResult (summary so far); `status`: 0 ended, 1 Batsim died or broke the
    protocol, 128+signal when interrupted; `message`: why, if not 0."""

    result: object
    status: int
    message: str = ""


def serve(policy, output: Path, *, model: str = "io-aware", seed: int = 0, policy_options: dict | None = None,
          **how) -> ServeOutcome:
    """`serve_spec` for the Python API: `policy` is the run's `burstbuffer.spec.SchedulerSpec`, or a policy name
    made into one here (`burstbuffer.spec.make_spec`) with `policy_options` (e.g. a window policy's ``window``),
    `model` and `seed`; `how`: `serve_spec`'s keyword arguments. Raises InputError on bad input."""
    from .spec import SchedulerSpec, make_spec
    spec = policy if isinstance(policy, SchedulerSpec) else make_spec(policy, options=policy_options,
                                                                        job_model=model, seed=seed)
    return serve_spec(spec, output, **how)


def serve_spec(spec, output: Path, *, socket: str = DEFAULT_SOCKET, bb_capacity: str | None = None,
               workload: str | None = None, timeout: float | None = 600.0, progress: bool = False,
               check_protocol: bool | None = None, on_listen=None) -> ServeOutcome:
    """Serve one external Batsim simulation on `socket` (see the module docstring) with the scheduler of `spec`
    (a `burstbuffer.spec.SchedulerSpec`).

    `workload` (optional) only sizes the progress bar; `timeout` [s] of silence (None: wait forever);
    `on_listen(session)` is called once the socket is bound (prints the batsim command line).
    Raises InputError on bad input.
    """
    import zmq

    from .batsim.loop import BatsimDied
    from .batsim.protocol import ProtocolError
    from .batsim.transport import MonitoredReplySocket
    from .runner import RunResult
    from .workloads.batsim_json import load_workload
    from .session import SchedulerSession
    from .signals import Interrupted, interruptible

    from .fileio import OutputLock, check_ipc_endpoint, output_dir
    try:
        check_socket(socket)
    except ValueError as exc:
        raise InputError("--socket", socket, str(exc)) from None
    check_ipc_endpoint(socket, "--socket")
    lock = OutputLock(output_dir(output)).__enter__()   # one writer per output folder, until this returns
    total = None
    if workload is not None:
        cliargs.input_file(workload, "workload")
        total = len(load_workload(Path(workload), require_bb=False).jobs)
    session = SchedulerSession(spec, output, bb_capacity=bb_capacity, total=total, progress=progress)
    try:
        sock = MonitoredReplySocket(socket, timeout=0.5, grace=RECONNECT_GRACE)
    except zmq.ZMQError as exc:
        raise InputError("--socket", socket, f"cannot bind ({exc})") from None
    t0 = time.perf_counter()
    status, message = 0, ""
    from .guards import on_stuck
    on_stuck(lambda line: session.finish())   # a policy stuck in C code: its outputs written, then exit 124
    with interruptible():
        try:
            if on_listen is not None:
                on_listen(session)
            session.loop(sock, alive=sock.peer_alive, timeout=timeout, check_protocol=check_protocol)
            status, message = ended_early(session.app)
        except BatsimDied as exc:
            status, message = (EXIT_TIMEOUT if isinstance(exc, TimedOut) else 1), str(exc)
            if not sock.peer_alive():
                message = "Batsim closed its connection before SIMULATION_ENDS (did it exit?)"
        except ProtocolError as exc:     # a policy's fault included (guards.SchedulerFault, DecisionTimedOut)
            status, message = (EXIT_TIMEOUT if isinstance(exc, TimedOut) else 1), str(exc)
        except Interrupted as exc:
            status, message = exc.status, f"interrupted by {exc}; outputs so far written"
        finally:
            on_stuck(None)
            sock.close()
            lock.__exit__()
    wall = time.perf_counter() - t0
    return ServeOutcome(RunResult(session.summary(), session.jobs_csv, wall, session.messages), status, message)


def platform_for_batsim(platform: str, batsim: str | None, force_plugin: bool = False) -> tuple[str, str]:
    """(the ``-p`` argument, a note on it) for the Batsim that will load `platform` (docs/platform.md §5).

    A Dragonfly XML routed through ``node_cluster_router`` loads only in SimGrid ≤ 3.27. When `batsim` (a
    Batsim binary) reports SimGrid ≥ 3.28, or `force_plugin`, the platform is given as the equivalent C++ plugin,
    compiled on demand against the installed SimGrid (`burstbuffer.platforms.sg_cpp`; InputError if it
    cannot be). Other platforms are passed unchanged."""
    import shutil
    from .platforms.sg_cpp import FIRST_WITHOUT_ROUTER, batsim_simgrid_version, needs_plugin, platform_plugin
    if not str(platform).endswith(".xml") or not needs_plugin(platform):
        return platform, "as given"
    if force_plugin:
        return str(platform_plugin(platform)), "C++ plugin of the XML, for SimGrid >= 3.28 (--simgrid-plugin)"
    exe = batsim or shutil.which("batsim")
    version = batsim_simgrid_version(exe) if exe else None
    if version is None:
        where = f"{exe} did not report its SimGrid version" if exe else "no batsim on PATH"
        return platform, (f"the XML loads in SimGrid <= 3.27 only (e.g. Batsim 4.0.0's image; {where}: pass "
                          "--batsim PATH or --simgrid-plugin for a Batsim on SimGrid >= 3.28)")
    v = ".".join(map(str, version))
    if tuple(version[:2]) >= FIRST_WITHOUT_ROUTER:
        return str(platform_plugin(platform)), f"C++ plugin of the XML compiled for {exe}'s SimGrid {v}"
    return platform, f"the XML, which {exe}'s SimGrid {v} loads"


def _cmd_serve(args: argparse.Namespace) -> int:
    from .policyargs import spec_from_args
    from .metrics.summary import print_summary
    from .runner import DEFAULT_PLATFORM

    log = logging.getLogger("burstbuffer")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("burstbuffer serve: %(message)s"))
        log.addHandler(handler)
        log.propagate = False
    timeout = args.timeout if args.timeout and args.timeout > 0 else None
    spec = spec_from_args(args, job_model=args.model, seed=args.seed, timeout=timeout)
    out = Path(args.output) if args.output else Path("out") / spec.label
    platform = args.platform or str(DEFAULT_PLATFORM)
    if args.platform:
        cliargs.input_file(args.platform, "platform")
    hosts, hosts_from = storage_hosts(platform, args.storage)
    batsim_platform, platform_note = platform_for_batsim(platform, args.batsim, args.simgrid_plugin)

    def listening(session) -> None:
        cmd = batsim_command(batsim_platform, args.workload or "WORKLOAD.json", args.export or str(out / "batsim"),
                             connect_endpoint(args.socket), hosts, session.job_model.uses_dynamic_jobs,
                             program=args.batsim or "batsim")
        print(f"burstbuffer serve: policy {spec.label}, model {args.model}, listening on {args.socket}; "
              "start Batsim 4.x with:")
        print("  " + shlex.join(cmd))
        print(f"  (platform: {platform_note}; storage hosts from {hosts_from}; docs/batsim.md)",
              flush=True)

    res = serve_spec(spec, out, socket=args.socket, bb_capacity=args.bb_capacity,
                workload=args.workload, timeout=timeout, progress=not args.quiet,
                check_protocol=True if args.check_protocol else None, on_listen=listening)
    print_summary(f"policy {spec.label}, model {args.model}, served on {args.socket}", res.result,
                  f"{out}/jobs.csv (per job); Batsim's own at its -e prefix")
    sys.stdout.flush()
    if res.status:
        from .jsonvalues import excerpt
        print(f"burstbuffer serve: {excerpt(res.message, 2000)}", file=sys.stderr)
    return res.status


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``serve`` subcommand to the `burstbuffer` command's subparsers."""
    from .io_model.registry import model_names
    from .policyargs import add_policy_arguments

    p = subparsers.add_parser("serve", help="the scheduler alone, for an external Batsim 4.x",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_policy_arguments(p)
    p.add_argument("--socket", default=DEFAULT_SOCKET, metavar="ENDPOINT", type=_socket_arg,
                   help=f"ZeroMQ endpoint to bind; Batsim connects to it with -s (default: {DEFAULT_SOCKET})")
    p.add_argument("--model", default="io-aware", choices=model_names(),
                   help="job model: io-aware (Batsim needs --enable-dynamic-jobs --enable-profile-reuse) or "
                        "alloc-only (default: io-aware)")
    p.add_argument("--seed", type=cliargs.seed, default=0, help="seed of every random choice (default: 0)")
    p.add_argument("--output", metavar="DIR", help="folder of jobs.csv (default: out/POLICY)")
    p.add_argument("--workload", metavar="FILE",
                   help="Batsim's workload: counted for the progress bar and put in the printed batsim command")
    p.add_argument("--platform", metavar="FILE",
                   help="Batsim's platform, for the printed batsim command (default: the bundled Dragonfly XML)")
    p.add_argument("--storage", metavar="HOSTS",
                   help="comma-separated BB hosts for the printed -r (default: the platform's storage_nodes)")
    p.add_argument("--batsim", metavar="PATH",
                   help="the Batsim binary to print the command for (default: batsim on PATH); its SimGrid version "
                        "decides the platform form: >= 3.28 gets the Dragonfly as a C++ plugin compiled on demand")
    p.add_argument("--simgrid-plugin", action="store_true",
                   help="print the Dragonfly as a C++ plugin (SimGrid >= 3.28) whatever Batsim is found")
    p.add_argument("--export", metavar="PREFIX", help="Batsim's -e prefix in the printed command (default: DIR/batsim)")
    p.add_argument("--bb-capacity", metavar="SIZE",
                   help="BB capacity per storage node when Batsim's resources do not carry it, e.g. 40GB")
    p.add_argument("--timeout", type=cliargs.nonneg_float, default=600.0, metavar="S",
                   help="give up when Batsim stays silent this long, also before its first message "
                        "(0: wait forever; default: 600 s)")
    p.add_argument("--check-protocol", action="store_true",
                   help="check every answer against protocol v4 before sending it (burstbuffer.batsim.conformance)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_serve)
    return p
