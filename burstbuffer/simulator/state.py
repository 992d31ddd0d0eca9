"""The state of one simulation, shared by the simulator's parts: the event loop (`loop`), the handlers of
the scheduler's requests (`handlers`) and the SimGrid job execution (`execution`), all of which read and
change one `SimState`; also the run's options (`SimConfig`), its summary (`SimResult`) and its error.

Times are SimGrid's clock [s] (floats); job start times and runtimes are long doubles (`longdouble.LD`: x87's
80-bit arithmetic, exactly), as Batsim keeps them, so that jobs.csv prints as Batsim's does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..platforms.simgrid_xml import Machines, PlatformSpec
from .longdouble import LD  # noqa: F401 (the simulator's parts take it from here)
from .protocol import event
from .workload import SimJob as Job, Workload

#: Exit status of a run stopped by a protocol violation of the scheduler (bad input files give 2).
EXIT_PROTOCOL = 1


class SimulationError(Exception):
    """The scheduler broke the protocol (or the simulation cannot go on); str() is one line."""


@dataclass
class SimConfig:
    """Options of one simulation (Batsim's command line, `cli.py`).

    platform: SimGrid XML path. workloads: Batsim workload JSON paths (named w0, w1, ...).
    export_prefix: outputs go to PREFIX_jobs.csv / PREFIX_schedule.csv. socket: ZeroMQ endpoint of the
    scheduler's REP socket, which this REQ socket connects to. roles: ``HOSTS:ROLE`` strings (-r).
    timeout: seconds to wait for each scheduler reply (None: forever, as Batsim; a scheduler that
    disconnects or freezes ends the simulation anyway, see heartbeat_timeout, disconnect_grace, and
    docs/reliability.md). network_model: how a
    homogeneous parallel task's all-to-all becomes flows (`network.NETWORK_MODELS`; "exact" is Batsim's).
    core: how jobs run (`server.select_core`, docs/simulator-core.md). energy: Batsim's ``-E`` (`energy`;
    docs/batsim.md)."""

    platform: str
    workloads: list[str]
    export_prefix: str = "out"
    socket: str = "tcp://localhost:28000"
    roles: list[str] = field(default_factory=list)
    master: str = "master"
    dynamic_jobs: bool = False
    ack_dynamic_jobs: bool = False
    profile_reuse: bool = False
    forward_profiles: bool = False
    compute_sharing: bool = False
    storage_sharing: bool = True
    sched_config: str = ""
    quiet: bool = False
    timeout: float | None = None
    network_model: str = "exact"
    #: [s] ZeroMQ heartbeat: a scheduler whose connection answers no PING for this long (a frozen process, a
    #: lost host) is disconnected; a busy scheduler still answers them (its ZeroMQ I/O thread does)
    heartbeat_timeout: float = 30.0
    #: [s] a scheduler disconnected this long while an answer is awaited ends the simulation (its REQ
    #: request is lost: the answer can never come)
    disconnect_grace: float = 2.0
    core: str | None = None           # auto, actors, bridged (None: $BURSTBUFFER_SIM_CORE, else the default)
    machine_states: bool = True       # write PREFIX_machine_states.csv (Batsim: --disable-machine-state-tracing)
    energy: bool = False              # SimGrid's host energy plugin, pstates, switches (Batsim's -E; energy.py)
    #: SimGrid options given as Batsim's --sg-cfg NAME:VALUE and --sg-log OPTION, after this simulator's own
    sg_cfg: list[str] = field(default_factory=list)
    sg_log: list[str] = field(default_factory=list)


@dataclass
class SimResult:
    """Summary of a finished run: output paths, counts, simulated end time [s], wall/CPU time [s],
    number of messages sent to the scheduler, time spent waiting for it [s]."""

    jobs_csv: str
    schedule_csv: str
    nb_jobs: int
    nb_success: int
    nb_rejected: int
    nb_killed: int
    end_time: float
    wall_time: float
    cpu_time: float
    nb_messages: int
    scheduling_time: float
    platform_loader: str


class MachineState:
    """One Batsim resource during the run: its `Machine`, SimGrid host, state ("idle"/"computing") since
    `last` [s], the jobs on it and the time spent in each state [s]."""

    __slots__ = ("m", "state", "last", "jobs", "time_in", "host")

    def __init__(self, machine):
        self.m = machine
        self.state = "idle"
        self.last = 0.0
        self.jobs: set = set()
        self.time_in: dict[str, float] = {}
        self.host = None

    def set_state(self, new: str, now: float) -> None:
        self.time_in[self.state] = self.time_in.get(self.state, 0.0) + (now - self.last)
        self.state = new
        self.last = now


@dataclass(slots=True, eq=False)
class SimState:
    """Everything the simulator's parts share. The inputs are set at construction (`server.Simulator`);
    the SimGrid and ZeroMQ handles when the run starts; the rest is the run's state.

    The server receives every message through its mailbox (`loop.next_message`): the job actors' and the
    master host's actors' (`masters`).
    """

    # inputs
    cfg: SimConfig
    spec: PlatformSpec
    machines: Machines
    workloads: dict[str, Workload]
    static_names: list[str]
    gc_profiles: bool
    # SimGrid, outputs and the ZeroMQ socket (set by `server.Simulator.run`)
    sg: Any = None
    engine: Any = None
    loader: str = ""
    mstate: list[MachineState] = field(default_factory=list)
    master_host: Any = None
    listen: Any = None                # SimGrid's C sg_mailbox_listen (server.mailbox_listen; loop.mailbox_empty)
    jobs_csv: str = ""
    schedule_csv: str = ""
    writer: Any = None
    states: Any = None                # outputs.MachineStatesWriter, or None (--disable-machine-state-tracing)
    error: BaseException | None = None
    zmq: Any = None
    ctx: Any = None
    sock: Any = None
    monitor: Any = None               # the REQ socket's EVENT_DISCONNECTED events (loop.await_reply)
    # the protocol's state
    out: list[dict] = field(default_factory=list)
    sched_ready: bool = False
    end_sent: bool = False
    end_ack: bool = False
    nb_submitted: int = 0
    nb_completed: int = 0
    nb_running: int = 0
    nb_waiters: int = 0
    nb_executing: int = 0             # jobs whose actor runs (the others were set RUNNING by hand)
    registration_finished: bool = False
    nb_messages: int = 0
    sched_time: float = 0.0
    end_clock: float = 0.0
    nb_killers: int = 0               # kill reports not yet received (Batsim's killer actors)
    to_submit: dict = field(default_factory=dict)      # workload -> its static jobs in submission order
    submitted_upto: dict = field(default_factory=dict)  # workload -> how many of them were submitted
    to_delete: list[Job] = field(default_factory=list)
    idle_workers: dict = field(default_factory=dict)  # host -> parked job actors on it (moving one costs a simcall)
    nb_workers: int = 0               # job actors created (execution.MAX_WORKERS)
    submitters_left: int = 0
    ring_alone: dict = field(default_factory=dict)   # (allocation, bytes per pair) -> network.ring_alone (uncontended)
    # the bridged core (execution.start_bridged; None: the actor core)
    bridge: Any = None                # the compiled bridge module (simulator._bridge)
    keyed: dict = field(default_factory=dict)        # bridge key -> job whose actor runs
    next_key: int = 0
    host_index: dict = field(default_factory=dict)   # SimGrid host -> its index in the bridge
    # energy (-E): energy.Energy, else None
    energy: Any = None

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
