"""The state of one simulation, shared by the simulator's parts: the event loop (`loop`), the handlers of
the scheduler's requests (`handlers`) and the SimGrid job execution (`execution`), all of which read and
change one `SimState`; also the run's options (`SimConfig`), its summary (`SimResult`) and its error.

Times are SimGrid's clock [s] (floats); job start times and runtimes are long doubles (`longdouble.LD`: x87's
80-bit arithmetic, exactly), as Batsim keeps them, so that jobs.csv prints as Batsim's does.
"""
from __future__ import annotations

from typing import Any

from ..platforms.simgrid_xml import DEFAULT_MASTER_HOST, Machines, PlatformFile
from ..records import Record
from .longdouble import LD  # noqa: F401 (the simulator's parts take it from here)
from .protocol import event
from .workload import SimJob as Job, Workload

#: Exit status of a run stopped by a protocol violation of the scheduler (bad input files give 2).
EXIT_PROTOCOL = 1


class SimulationError(Exception):
    """The scheduler broke the protocol (or the simulation cannot go on); str() is one line."""


class Stopped(SimulationError):
    """A signal (SIGTERM, SIGHUP: `loop.stop_on_signals`) ended the simulation: `signum`; the outputs so far
    are written (`server.Simulator.run`) and the command exits with 128 + `signum`."""

    def __init__(self, signum: int):
        import signal  # noqa: PLC0415
        self.signum = signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")


# Record classes (`records.Record`: repr, ==), not data classes: this module is on the simulator's start-up
# path (docs/startup.md).

class SimConfig(Record):
    """Options of one simulation (Batsim's command line, `cli.py`).

    platform: SimGrid XML path. workloads: Batsim workload JSON paths (named w0, w1, ...).
    export_prefix: outputs go to PREFIX_jobs.csv / PREFIX_schedule.csv. socket: ZeroMQ endpoint of the
    scheduler's REP socket, which this REQ socket connects to. roles: ``HOSTS:ROLE`` strings (-r).
    timeout: seconds to wait for each scheduler reply (None: forever, as Batsim; a scheduler that
    disconnects or freezes ends the simulation anyway, see heartbeat_timeout, disconnect_grace, and
    docs/reliability.md). network_model: how a
    homogeneous parallel task's all-to-all becomes flows (`network.NETWORK_MODELS`; "exact" is Batsim's).
    core: how jobs run (`server.select_core`, docs/simulator-core.md). energy: Batsim's ``-E`` (`energy`;
    docs/batsim.md). The other fields: the Batsim options named beside them."""

    _fields = ("platform", "workloads", "export_prefix", "socket", "roles", "master", "dynamic_jobs",
               "ack_dynamic_jobs", "profile_reuse", "forward_profiles", "compute_sharing", "storage_sharing",
               "sched_config", "quiet", "timeout", "network_model", "heartbeat_timeout", "disconnect_grace",
               "core", "machine_states", "energy", "sg_cfg", "sg_log", "events", "forward_unknown_events",
               "max_machines", "max_machines_by_workload", "redis_hostname", "redis_port", "redis_prefix",
               "log_messages", "no_sched", "schedule_trace")

    def __init__(self, platform: str, workloads: list[str], export_prefix: str = "out",
                 socket: str = "tcp://localhost:28000", roles: list[str] | None = None,
                 master: str = DEFAULT_MASTER_HOST,
                 dynamic_jobs: bool = False, ack_dynamic_jobs: bool = False, profile_reuse: bool = False,
                 forward_profiles: bool = False, compute_sharing: bool = False, storage_sharing: bool = True,
                 sched_config: str = "", quiet: bool = False, timeout: float | None = None,
                 network_model: str = "exact", heartbeat_timeout: float = 30.0, disconnect_grace: float = 2.0,
                 core: str | None = None, machine_states: bool = True, energy: bool = False,
                 sg_cfg: list[str] | None = None, sg_log: list[str] | None = None, events: list[str] | None = None,
                 forward_unknown_events: bool = False, max_machines: int = 0, max_machines_by_workload: bool = False,
                 redis_hostname: str = "127.0.0.1", redis_port: int = 6379, redis_prefix: str = "default",
                 log_messages: bool = False, no_sched: bool = False, schedule_trace: bool = False):
        self.platform = platform
        self.workloads = workloads
        self.export_prefix = export_prefix
        self.socket = socket
        self.roles = [] if roles is None else roles
        self.master = master
        self.dynamic_jobs = dynamic_jobs
        self.ack_dynamic_jobs = ack_dynamic_jobs
        self.profile_reuse = profile_reuse
        self.forward_profiles = forward_profiles
        self.compute_sharing = compute_sharing
        self.storage_sharing = storage_sharing
        self.sched_config = sched_config
        self.quiet = quiet
        self.timeout = timeout
        self.network_model = network_model
        #: [s] ZeroMQ heartbeat: a scheduler whose connection answers no PING for this long (a frozen process,
        #: a lost host) is disconnected; a busy scheduler still answers them (its ZeroMQ I/O thread does)
        self.heartbeat_timeout = heartbeat_timeout
        #: [s] a scheduler disconnected this long while an answer is awaited ends the simulation (its REQ
        #: request is lost: the answer can never come)
        self.disconnect_grace = disconnect_grace
        self.core = core                        # auto, actors, bridged (None: $BURSTBUFFER_SIM_CORE, else the default)
        self.machine_states = machine_states    # PREFIX_machine_states.csv (Batsim: --disable-machine-state-tracing)
        self.energy = energy                    # SimGrid's host energy plugin, pstates, switches (Batsim's -E)
        #: SimGrid options given as Batsim's --sg-cfg NAME:VALUE and --sg-log OPTION, after this simulator's own
        self.sg_cfg = [] if sg_cfg is None else sg_cfg
        self.sg_log = [] if sg_log is None else sg_log
        #: external events files (Batsim's --events; `events`), and whether events of unknown types are
        #: forwarded to the scheduler (--forward-unknown-events)
        self.events = [] if events is None else events
        self.forward_unknown_events = forward_unknown_events
        #: Batsim's --mmax (0: no limit) and --mmax-workload: the compute machines kept (`server.machine_limit`)
        self.max_machines = max_machines
        self.max_machines_by_workload = max_machines_by_workload
        #: Batsim's --redis-hostname/-port/-prefix: only passed on in SIMULATION_BEGINS' config (no Redis here)
        self.redis_hostname = redis_hostname
        self.redis_port = redis_port
        self.redis_prefix = redis_prefix
        #: print every message exchanged with the scheduler on stderr (Batsim's network-only and debug verbosity)
        self.log_messages = log_messages
        #: Batsim's --no-sched: every job at t=0 on machines 0..res-1, no scheduler (`batexec`)
        self.no_sched = no_sched
        #: PREFIX_schedule.trace, Batsim's Pajé trace (`outputs.PajeWriter`; `simulate` unless
        #: --disable-schedule-tracing, as Batsim)
        self.schedule_trace = schedule_trace


class SimResult(Record):
    """Summary of a finished run: output paths, counts, simulated end time [s], wall/CPU time [s],
    number of messages sent to the scheduler, time spent waiting for it [s]."""

    _fields = ("jobs_csv", "schedule_csv", "nb_jobs", "nb_success", "nb_rejected", "nb_killed", "end_time",
               "wall_time", "cpu_time", "nb_messages", "scheduling_time", "platform_loader")

    def __init__(self, jobs_csv: str, schedule_csv: str, nb_jobs: int, nb_success: int, nb_rejected: int,
                 nb_killed: int, end_time: float, wall_time: float, cpu_time: float, nb_messages: int,
                 scheduling_time: float, platform_loader: str):
        self.jobs_csv = jobs_csv
        self.schedule_csv = schedule_csv
        self.nb_jobs = nb_jobs
        self.nb_success = nb_success
        self.nb_rejected = nb_rejected
        self.nb_killed = nb_killed
        self.end_time = end_time
        self.wall_time = wall_time
        self.cpu_time = cpu_time
        self.nb_messages = nb_messages
        self.scheduling_time = scheduling_time
        self.platform_loader = platform_loader


#: Batsim's machine states (machines.hpp), as its outputs name them
MACHINE_STATES = ("sleeping", "switching_on", "switching_off", "idle", "computing", "unavailable")


def machine_counts(nb_compute: int) -> dict[str, int]:
    """The number of machines in each state at the start, as Batsim counts them (machines.cpp): every
    compute machine idle, the storage machines in no count (one that computes moves from idle to
    computing all the same)."""
    counts = dict.fromkeys(MACHINE_STATES, 0)
    counts["idle"] = nb_compute
    return counts


class MachineState:
    """One Batsim resource during the run: its `Machine`, SimGrid host, state (one of `MACHINE_STATES`)
    since `last` [s], the jobs on it and the time spent in each state [s]. `counts`: the number of
    machines in each state (`machine_counts`), shared by all machines and kept by `set_state`."""

    __slots__ = ("m", "state", "last", "jobs", "time_in", "host", "counts")

    def __init__(self, machine, counts: dict[str, int] | None = None):
        self.m = machine
        self.state = "idle"
        self.last = 0.0
        self.jobs: set = set()
        self.time_in: dict[str, float] = {}
        self.host = None
        self.counts = {} if counts is None else counts

    def set_state(self, new: str, now: float) -> None:
        old = self.state
        self.time_in[old] = self.time_in.get(old, 0.0) + (now - self.last)
        if old != new:
            counts = self.counts
            counts[old] = counts.get(old, 0) - 1
            counts[new] = counts.get(new, 0) + 1
        self.state = new
        self.last = now


class SimState(Record):
    """Everything the simulator's parts share. The inputs are set at construction (`server.Simulator`);
    the SimGrid and ZeroMQ handles when the run starts; the rest is the run's state. Equal only to itself.

    The server receives every message through its mailbox (`loop.next_message`): the job actors' and the
    master host's actors' (`masters`).
    """

    __slots__ = ("cfg", "platform", "machines", "workloads", "static_names", "gc_profiles",
                 "sg", "engine", "loader", "mstate", "master_host", "listen", "jobs_csv", "schedule_csv", "writer",
                 "states", "paje", "error", "transport",
                 "out", "sched_ready", "end_sent", "end_ack", "nb_submitted", "nb_completed", "nb_running",
                 "nb_waiters", "nb_executing", "registration_finished", "nb_messages", "sched_time", "end_clock",
                 "nb_killers", "to_submit", "submitted_upto", "to_delete", "idle_workers", "nb_workers",
                 "submitters_left", "batexec_left", "event_lists", "events_upto", "event_submitters_left", "ring_alone", "bridge", "keyed", "next_key", "host_index", "energy")
    _fields = __slots__
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __init__(self, cfg: SimConfig, platform: PlatformFile, machines: Machines, workloads: dict[str, Workload],
                 static_names: list[str], gc_profiles: bool):
        # inputs
        self.cfg = cfg
        self.platform = platform
        self.machines = machines
        self.workloads = workloads
        self.static_names = static_names
        self.gc_profiles = gc_profiles
        # SimGrid, outputs and the link to the scheduler (set by `server.Simulator.run`)
        self.sg: Any = None
        self.engine: Any = None
        self.loader = ""
        self.mstate: list[MachineState] = []
        self.master_host: Any = None
        self.listen: Any = None         # SimGrid's C sg_mailbox_listen (server.mailbox_listen; loop.mailbox_empty)
        self.jobs_csv = ""
        self.schedule_csv = ""
        self.writer: Any = None
        self.states: Any = None         # outputs.MachineStatesWriter, or None (--disable-machine-state-tracing)
        self.paje: Any = None           # outputs.PajeWriter, or None (SimConfig.schedule_trace)
        self.error: BaseException | None = None
        self.transport: Any = None      # the link to the scheduler (`transport.connect`)
        # the protocol's state
        self.out: list[dict] = []
        self.sched_ready = False
        self.end_sent = False
        self.end_ack = False
        self.nb_submitted = 0
        self.nb_completed = 0
        self.nb_running = 0
        self.nb_waiters = 0
        self.nb_executing = 0           # jobs whose actor runs (the others were set RUNNING by hand)
        self.registration_finished = False
        self.nb_messages = 0
        self.sched_time = 0.0
        self.end_clock = 0.0
        self.nb_killers = 0             # kill reports not yet received (Batsim's killer actors)
        self.to_submit: dict = {}       # workload -> its static jobs in submission order
        self.submitted_upto: dict = {}  # workload -> how many of them were submitted
        self.to_delete: list[Job] = []
        self.idle_workers: dict = {}    # host -> parked job actors on it (moving one costs a simcall)
        self.nb_workers = 0             # job actors created (execution.MAX_WORKERS)
        self.submitters_left = 0
        self.batexec_left = 0           # --no-sched: jobs not ended yet (`batexec`)
        self.event_lists: dict = {}     # events file name (we0, ...) -> its events (`events.load_events`)
        self.events_upto: dict = {}     # events file name -> how many of its events occurred
        self.event_submitters_left = 0
        self.ring_alone: dict = {}      # (allocation, bytes per pair) -> network.ring_alone (uncontended)
        # the bridged core (execution.start_bridged; None: the actor core)
        self.bridge: Any = None         # the compiled bridge module (simulator._bridge)
        self.keyed: dict = {}           # bridge key -> job whose actor runs
        self.next_key = 0
        self.host_index: dict = {}      # SimGrid host -> its index in the bridge
        # energy (-E): energy.Energy, else None
        self.energy: Any = None

    @property
    def now(self) -> float:
        return self.sg.Engine.clock

    def append(self, ts: float, etype: str, data: dict) -> None:
        """Add an event to the next message to the scheduler."""
        self.out.append(event(ts, etype, data))

    def announce(self, job: Job) -> None:
        """JOB_SUBMITTED {job_id, job (its JSON, full id), profile (if forwarded)}."""
        data = {"job_id": job.id, "job": job.description}
        if self.cfg.forward_profiles:
            data["profile"] = job.profile.data
        self.append(self.now, "JOB_SUBMITTED", data)

    def job_ended(self, job: Job) -> None:
        """Write `job`'s jobs.csv row; it is forgotten once the message reporting its end is sent."""
        self.writer.write_job(job)
        self.to_delete.append(job)

    def guarded(self, fn, *args) -> None:
        """Run an actor body; on a SimulationError or an internal failure, keep the first error and stop
        every other actor (engine.run() then returns and `run()` raises it)."""
        try:
            fn(*args)
        except self.sg.ActorKilled:
            raise
        except SimulationError as exc:
            if self.error is None:
                self.error = exc
            self.sg.Actor.kill_all()
        except Exception as exc:  # noqa: BLE001 (a bug: report it in one line, keep the traceback)
            import traceback

            if self.error is None:
                self.error = SimulationError(f"internal error: {type(exc).__name__}: {exc}")
                self.error.traceback_text = traceback.format_exc()
            self.sg.Actor.kill_all()
