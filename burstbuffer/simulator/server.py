"""The embedded Batsim-compatible simulator: the Batsim side of protocol v4 on SimGrid 3.32 (docs/protocol.md).

What runs: Batsim's actors — the *server* on the ``master`` host, which receives every message through its
mailbox and talks to the scheduler; beside it the job submitters, the request-reply actor's sends, the
CALL_ME_LATER waiters and the killers' reports (`masters`); and one actor per running job on the job's
first allocated host, which does what Batsim's ``execute_job_process`` does. The parts, around one
`SimState` (`state`): the event loop and the exchange with the scheduler (`loop`), the master host's actors
(`masters`), the handlers of the scheduler's requests (`handlers`), the SimGrid job execution
(`execution`). This module reads the inputs, starts
SimGrid and the ZeroMQ socket, runs the server actor and writes the outputs (`Simulator`).

Energy (``-E``): `energy`; external events (``--events``): `events`; ``--no-sched``: `batexec`. Not
reproduced: Redis, SMPI/trace-replay profiles, workflows, ``additional_io_job`` (docs/batsim.md,
docs/batsim-fidelity.md).
"""
from __future__ import annotations

import os
import sys
import time

from ..version import __version__
from ..errors import InputError, simgrid_missing
from ..logs import simgrid_threshold
from ..platforms.simgrid_xml import Machines, parse_platform, parse_roles_option, resolve_machines
from .events import check_machines, load_events
from .loop import deadlock_reason, plan_submissions, serve
from .outputs import JobsWriter, MachineStatesWriter, PajeWriter
from .platform_loader import load_into_engine
from .state import (EXIT_PROTOCOL, MachineState, SimConfig, SimResult, SimState, SimulationError, Stopped,
                    machine_counts)
from .workload import Workload, load_workload

__all__ = ["EXIT_PROTOCOL", "SimConfig", "SimResult", "SimulationError", "Simulator", "import_simgrid"]


def import_simgrid(quiet: bool):
    """Import SimGrid's Python bindings, hiding the one INFO line its import prints on stderr; its libraries
    bound lazily (`_bridge.lazily_bound`). InputError (`errors.simgrid_missing`, the fix) when they are not
    installed for this Python."""
    if "simgrid" in sys.modules:
        return sys.modules["simgrid"]
    import tempfile

    from ._bridge import lazily_bound

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            simgrid = lazily_bound(lambda: __import__("simgrid"))
        except ModuleNotFoundError as exc:
            if exc.name != "simgrid":
                raise
            missing = True
        except BaseException:
            os.dup2(saved, 2)
            tmp.seek(0)
            sys.stderr.write(tmp.read().decode(errors="replace"))
            raise
        else:
            missing = False
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    if missing:
        raise simgrid_missing() from None
    return simgrid


def mailbox_listen():
    """SimGrid's C function ``int sg_mailbox_listen(const char* name)`` (``simgrid/mailbox.h``) of the
    SimGrid library the `simgrid` module runs on, through ctypes: the mailbox looked up by name (a
    simulation call, as Batsim's ``mailbox_empty`` makes it) and whether a message is queued there (for a
    mailbox without a permanent receiver, as the server's). SimGrid's Python API has no ``empty``."""
    import ctypes  # noqa: PLC0415

    path = None
    try:
        with open("/proc/self/maps") as f:   # the library already loaded by the simgrid module
            path = next((line.split()[-1] for line in f if "/libsimgrid" in line), None)
    except OSError:
        pass
    if path is None:
        import ctypes.util  # noqa: PLC0415  (only then: it imports subprocess)
        path = ctypes.util.find_library("simgrid") or "libsimgrid.so"
    lib = ctypes.CDLL(path)
    fn = lib.sg_mailbox_listen
    fn.argtypes, fn.restype = [ctypes.c_char_p], ctypes.c_int
    return fn


#: Environment variable choosing the simulator core when `SimConfig.core` (``--core``) is not given:
#: "actors" (one SimGrid actor per running job), "bridged" (no job actor: the server drives the jobs'
#: activities through the compiled bridge, `_bridge`; the actor core, with a warning, when the bridge
#: cannot be built) or "auto" (bridged when it can run the whole simulation, see `select_core`).
CORE_ENV = "BURSTBUFFER_SIM_CORE"
#: SimGrid context factory of the bridged core (default raw; thread, ucontext, boost where built)
CONTEXTS_ENV = "BURSTBUFFER_SIM_CONTEXTS"
CORES = ("auto", "actors", "bridged")
#: the core when neither --core nor $BURSTBUFFER_SIM_CORE says: the bridged core where the bridge is built,
#: else the actor core (the same outputs)
DEFAULT_CORE = "auto"


#: the least stack of an actor [KiB] (SimGrid's ``contexts/stack-size``; its default, a Python thread's usual
#: one): the server actor runs Python code, the scheduler's too under ``run``'s in-simulator link
#: (`burstbuffer.colocated`), and the actor core's job actors run Python, all on their actor's stack
MIN_STACK_KIB = 8192
#: the least guard of an actor's stack [pages] (``contexts/guard-size``; SimGrid's default): an overflow is a
#: segmentation fault, never a write into the memory below the stack
MIN_GUARD_PAGES = 1
#: the configuration options of an actor's stack, with their floors
STACK_OPTIONS = {"contexts/stack-size": MIN_STACK_KIB, "contexts/guard-size": MIN_GUARD_PAGES}


def stack_config(platform_config: dict[str, str], sg_cfg: list[str], path: str) -> list[str]:
    """The ``--cfg`` arguments raising the stack options (`STACK_OPTIONS`) a platform's ``<config>`` sets
    (`platform_config`, `PlatformFile.config`) below their floors to the floors: SimGrid takes an option given
    on the command line over the platform's. Batsim's ``energy_platform_homogeneous_no_net_128.xml`` asks
    16 KiB stacks without a guard page, enough for Batsim's C++ actors, not for Python code (it overflowed
    into the heap below the stack). The simulation is the same: a stack holds no simulated state. Raises
    InputError for a value that is not an integer, or a --sg-cfg (`sg_cfg`) below a floor."""
    out = []
    for name, floor in STACK_OPTIONS.items():
        given = [c.partition(":")[2] for c in sg_cfg if c.partition(":")[0] == name]
        where = ("--sg-cfg", f"{name}:{given[-1]}") if given else (path, f"<config> {name}")
        value = given[-1] if given else platform_config.get(name)
        if value is None:
            continue
        try:
            n = int(value)
        except ValueError:
            raise InputError(*where, f"{value!r} is not an integer") from None
        if n < floor:
            if given:
                raise InputError(*where, f"at least {floor}: the simulator's actors run Python code")
            out.append(f"--cfg={name}:{floor}")
    return out


def select_core(st: SimState):
    """The compiled bridge if the bridged core runs, else None (the actor core). "auto" and "bridged" run it
    when the bridge is available (built, or buildable: "bridged" says so on stderr when it is not); it runs
    every profile the actor core runs, a dynamic job's too. InputError on an unknown core name."""
    core = (st.cfg.core or os.environ.get(CORE_ENV, "") or DEFAULT_CORE).strip().lower()
    if core not in CORES:
        raise InputError(CORE_ENV if not st.cfg.core else "--core", core,
                         f"unknown simulator core (choose from {', '.join(CORES)})")
    if core == "actors":
        return None
    from . import _bridge  # noqa: PLC0415
    try:
        return _bridge.load()
    except (_bridge.NativeUnavailable, OSError) as exc:
        if core == "bridged" and not st.cfg.quiet:
            print(f"burstbuffer simulate: bridged core unavailable ({exc}); using the actor core",
                  file=sys.stderr)
        return None


def machine_limit(cfg: SimConfig, workloads: list[Workload]) -> int | None:
    """The number of compute machines to keep (Batsim's ``load_workloads_and_workflows``), None for all:
    ``--mmax N`` (N > 0), ``--mmax-workload`` (the largest ``nb_res`` of the workloads), both (the smaller)."""
    if cfg.max_machines_by_workload:
        most = max((w.nb_res for w in workloads if w.nb_res is not None), default=-1)
        return min(cfg.max_machines, most) if cfg.max_machines > 0 else most
    return cfg.max_machines if cfg.max_machines > 0 else None


def limited(machines: Machines, n: int, source: str) -> Machines:
    """`machines` with only the first `n` compute machines (ids 0..n-1), the storage machines numbered after
    them (Batsim's ``Machines::create_machines``). InputError if the platform has fewer than `n`."""
    if n <= 0 or n > len(machines.compute):
        raise InputError(source, "--mmax", f"impossible to compute on M={n} machines: only "
                                           f"{len(machines.compute)} compute machines are described in the platform")
    kept = Machines(machines.compute[:n], list(machines.storage), machines.master)
    for i, m in enumerate(kept.all):
        m.id = i
    return kept


class Simulator:
    """One simulation. Construction reads and checks the inputs (raises InputError); `run()` simulates
    against the scheduler listening on `config.socket` and writes the outputs; it returns a `SimResult`
    or raises SimulationError. One Simulator per process: SimGrid has a single engine per process.
    `state` is the `SimState` the simulator's parts share."""

    def __init__(self, config: SimConfig):
        self.cfg = config
        platform = parse_platform(config.platform)
        machines = resolve_machines(platform, parse_roles_option(config.roles), config.master)
        workloads: dict[str, Workload] = {}
        for i, path in enumerate(config.workloads):
            workloads[f"w{i}"] = load_workload(path, f"w{i}")
        limit = machine_limit(config, list(workloads.values()))
        if limit is not None:
            machines = limited(machines, limit, platform.path)
        event_lists = {}
        for i, path in enumerate(config.events):
            evs = load_events(path, config.forward_unknown_events)
            check_machines(path, evs, len(machines.all))
            event_lists[f"we{i}"] = evs
        self.stack_args = stack_config(platform.config, config.sg_cfg, platform.path)
        self.state = SimState(cfg=config, platform=platform, machines=machines, workloads=workloads,
                              static_names=list(workloads),
                              gc_profiles=not (config.dynamic_jobs and config.profile_reuse))
        self.state.event_lists = event_lists
        if config.no_sched:
            from . import batexec  # noqa: PLC0415
            batexec.check(self.state)
        self.power = None
        if config.energy:
            from . import energy  # noqa: PLC0415
            reason = platform.api_build_reason()
            if reason is not None:
                raise InputError(platform.path, "-E", f"energy needs a platform SimGrid's XML loader reads ({reason})")
            self.power = energy.check_platform(platform, machines)

    def run(self, transport=None) -> SimResult:
        """Simulate; `transport`: the link to the scheduler (`request(text, n)`, `close()`, the contract of
        `transport.connect`), by default the one ``config.socket`` names (e.g. `burstbuffer.colocated`'s
        scheduler in this process)."""
        st = self.state
        t_wall, t_cpu = time.time(), time.process_time()
        sg = import_simgrid(st.cfg.quiet)
        st.sg = sg
        args = ["burstbuffer-simulate", "--cfg=host/model:ptask_L07",
                "--log=root.thres:" + simgrid_threshold(st.cfg.quiet), *self.stack_args]
        nat = None
        if self.power is not None:
            from . import energy  # noqa: PLC0415
            from ..cbuild import NativeUnavailable  # noqa: PLC0415
            try:
                nat = energy.load_native()
            except (NativeUnavailable, OSError) as exc:
                raise InputError("-E", "energy", f"SimGrid's energy plugin needs the compiled energy module, "
                                                 f"which cannot be built: {exc}") from None
            # the plugin warns of every host without wattage (the master): noise here
            args.append("--log=host_energy.thres:critical")
        # energy and --no-sched run on the actor core (a switch is an actor, as in Batsim; no server)
        st.bridge = select_core(st) if nat is None and not st.cfg.no_sched else None
        if st.bridge is not None:
            # one Python actor only: the cheapest context factory runs (thread: SimGrid's Python default).
            # Given to the engine's constructor: the factory is made then (a later set_config is ignored).
            args.append("--cfg=contexts/factory:" + os.environ.get(CONTEXTS_ENV, "raw"))
        args += [f"--cfg={c}" for c in st.cfg.sg_cfg] + [f"--log={g}" for g in st.cfg.sg_log]
        if st.cfg.sg_cfg:   # as Batsim 4.2.1, which sets host/model:ptask_L07 after the user's options (batsim.cpp)
            args.append("--cfg=host/model:ptask_L07")
        try:
            engine = sg.Engine(args)
        except (IndexError, ValueError) as exc:  # SimGrid: "Bad config key: K" (and the list), a bad value
            opt = "--sg-log" if "priority" in str(exc) or "appender" in str(exc) else "--sg-cfg"
            given = " ".join(st.cfg.sg_log if opt == "--sg-log" else st.cfg.sg_cfg)
            raise InputError(opt, given, str(exc).splitlines()[0]) from None
        st.engine = engine
        if nat is not None:
            nat.plugin_init()  # before the platform is loaded: its hosts get the plugin's extension
        st.loader = load_into_engine(engine, st.platform)
        hosts = {h.name: h for h in engine.all_hosts}
        st.mstate = []
        counts = machine_counts(len(st.machines.compute))
        for m in st.machines.all:
            ms = MachineState(m, counts)
            ms.host = hosts[m.name]
            st.mstate.append(ms)
        st.master_host = hosts[st.machines.master.name]
        if st.bridge is not None:
            st.bridge.init([ms.m.name for ms in st.mstate], st.machines.master.name, "server")
            st.host_index = {ms.host: i for i, ms in enumerate(st.mstate)}
        prefix = st.cfg.export_prefix
        d = os.path.dirname(prefix)
        if d:
            from ..fileio import output_dir  # noqa: PLC0415
            output_dir(d, "-e")
        st.jobs_csv, st.schedule_csv = f"{prefix}_jobs.csv", f"{prefix}_schedule.csv"
        st.writer = JobsWriter(st.jobs_csv)
        if st.cfg.machine_states:
            st.states = MachineStatesWriter(f"{prefix}_machine_states.csv", counts)
        if st.cfg.schedule_trace:
            st.paje = PajeWriter(f"{prefix}_schedule.trace", [(ms.m.id, ms.m.name) for ms in st.mstate], st.now,
                                 [j for w in st.workloads.values() for j in w.jobs.values()])
        if nat is not None:
            from .energy import Energy  # noqa: PLC0415
            st.energy = Energy(st, nat, self.power, prefix)
        st.error = None
        from .transport import connect  # noqa: PLC0415

        if st.cfg.no_sched:
            from . import batexec  # noqa: PLC0415
            batexec.launch(st)      # no scheduler, no server
        else:
            st.transport = connect(st.cfg) if transport is None else transport
            st.listen = st.bridge.listen if st.bridge is not None else mailbox_listen()
            plan_submissions(st)  # the submitters first, then the server (Batsim's order)
            sg.Actor.create("server", st.master_host, st.guarded, serve, st)
        try:
            engine.run()
        finally:
            if st.transport is not None:
                st.transport.close()
            st.writer.close()
            if st.states is not None:
                st.states.close()
            if st.paje is not None:
                st.paje.close(st.now)
            if st.energy is not None:
                st.energy.close()
        if st.error is not None:
            if isinstance(st.error, Stopped):       # a signal: the schedule so far written too
                self._write_schedule(t_wall)
            raise st.error
        if not st.end_ack:   # SimGrid stopped: no actor can run and no activity is left (its deadlock)
            raise SimulationError(deadlock_reason(st))
        self._write_schedule(t_wall)
        w = st.writer
        return SimResult(st.jobs_csv, st.schedule_csv, w.nb_jobs, w.nb_success, w.nb_rejected, w.nb_killed,
                         st.end_clock, time.time() - t_wall, time.process_time() - t_cpu, st.nb_messages,
                         st.sched_time, st.loader)

    def _write_schedule(self, t_wall: float) -> None:
        """PREFIX_schedule.csv: the run's totals (Batsim's), `t_wall` the wall-clock time it started."""
        st = self.state
        totals: dict[str, float] = {}
        for ms in st.mstate:
            for k, v in ms.time_in.items():
                totals[k] = totals.get(k, 0.0) + v
        row = st.writer.schedule_row(version=f"burstbuffer-{__version__}", nb_machines=len(st.mstate),
                                     scheduling_time=st.sched_time, simulation_time=time.time() - t_wall,
                                     time_in_state=totals)
        if st.energy is not None:
            st.energy.finish(row)
        JobsWriter.write_schedule(st.schedule_csv, row)
