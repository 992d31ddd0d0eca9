"""The embedded Batsim-compatible simulator: the Batsim side of protocol v4 on SimGrid 3.32 (SPEC §1, §1b).

What runs: one *server* actor on the ``master`` host, and one actor per running job on the job's first
allocated host (kept between jobs and moved to the next job's host, as creating threads is costly). The server does what Batsim's server, job submitters, waiters, killers and REQ-REP actor
do together; a job actor does what Batsim's ``execute_job_process`` does: it executes the job's profile
as SimGrid activities (a parallel task on the allocated hosts, or a sleep), under the job's walltime, then
sends a 1-byte message to the server's mailbox on ``master``. That message crosses the platform, so a
completion reaches the server one route latency after the job ended (0.0001 s on the paper's platform),
and messages are received one at a time, in the order they were posted, as Batsim's are: that is why
Batsim's completions come at +0.0001 s steps (shared/batsim-4.2.1/protocol-full-run.jsonl).

Batsim's rules kept (its ``server.cpp``, ``jobs_execution.cpp``, ``protocol.cpp``):
- a message goes to the scheduler only when the scheduler is ready, nothing else waits in the server's
  mailbox, and there is something to say; SIMULATION_ENDS when all static jobs were submitted, every
  submitted job ended, no CALL_ME_LATER is pending and (dynamic jobs) ``registration_finished`` came;
- the reply's events apply at their timestamps (later than the message's `now` if the scheduler says so),
  the scheduler is ready again at the reply's ``now``;
- static jobs are submitted at their ``subtime`` (same-time jobs in one go, ordered by subtime then id
  string); NOTIFY ``no_more_static_job_to_submit`` follows the last submission in a message of its own;
- walltime: a job still running ``walltime`` seconds after its start is stopped → COMPLETED_WALLTIME_REACHED
  (return code -1); a ``delay`` equal to the walltime also reaches it;
- the scheduler's messages are checked as Batsim checks them; a violation stops the simulation with one
  line (`SimulationError`).

Not reproduced: Redis, energy, SMPI/trace-replay profiles, external events, workflows, ``additional_io_job``,
resource state changes; same-time ties between a submission or CALL_ME_LATER and a job's message may be
ordered differently than in Batsim (there the actors' scheduling order decides).
"""
from __future__ import annotations

import heapq
import itertools
import json
import math
import os
import sys
import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from .. import __version__
from ..errors import InputError
from .fidelity import CompletionOrder
from .outputs import JobsWriter
from .platform import Machines, load_into_engine, parse_platform, parse_roles_option, resolve_machines
from .protocol import dumps, event, parse_interval_set
from .workload import DefinitionError, Job, Workload, load_workload, parse_job, parse_profile, split_job_id

LD = np.longdouble

#: A server actor hands its loop over to a new one after this many withdrawn receives (see `_serve_loop`);
#: the environment variable BURSTBUFFER_SERVER_HANDOFF overrides it (tests force hand-overs with 1).
_HANDOFF_AFTER = 1000

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
    timeout: seconds to wait for each scheduler reply (None: forever, as Batsim)."""

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


class _Worker:
    """A job-executing actor and the semaphore it waits on between jobs."""

    __slots__ = ("sem", "actor", "job", "host")

    def __init__(self, sem):
        self.sem, self.actor, self.job, self.host = sem, None, None, None


class _MachineState:
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


def _import_simgrid(quiet: bool):
    """Import SimGrid's Python bindings, hiding the one INFO line its import prints on stderr."""
    if "simgrid" in sys.modules:
        return sys.modules["simgrid"]
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            import simgrid  # noqa: PLC0415
        except BaseException:
            os.dup2(saved, 2)
            tmp.seek(0)
            sys.stderr.write(tmp.read().decode(errors="replace"))
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    return simgrid


class Simulator:
    """One simulation. Construction reads and checks the inputs (raises InputError); `run()` simulates
    against the scheduler listening on `config.socket` and writes the outputs; it returns a `SimResult`
    or raises SimulationError. One Simulator per process: SimGrid has a single engine per process."""

    def __init__(self, config: SimConfig):
        self.cfg = config
        self.spec = parse_platform(config.platform)
        self.machines: Machines = resolve_machines(self.spec, parse_roles_option(config.roles), config.master)
        if not config.workloads:
            raise InputError("-w", "workload", "at least one workload file is needed")
        self.workloads: dict[str, Workload] = {}
        for i, path in enumerate(config.workloads):
            self.workloads[f"w{i}"] = load_workload(path, f"w{i}")
        self.static_names = list(self.workloads)
        self.gc_profiles = not (config.dynamic_jobs and config.profile_reuse)
        value = os.environ.get("BURSTBUFFER_SERVER_HANDOFF", str(_HANDOFF_AFTER))
        try:
            self.handoff_after = int(value)
        except ValueError:
            raise InputError("BURSTBUFFER_SERVER_HANDOFF", value, "not an integer") from None
        self._seq = itertools.count()

    # ------------------------------------------------------------------------------------ running
    def run(self) -> SimResult:
        t_wall, t_cpu = time.time(), time.process_time()
        sg = _import_simgrid(self.cfg.quiet)
        self.sg = sg
        args = ["burstbuffer-simulate", "--cfg=host/model:ptask_L07",
                "--log=root.thres:" + ("critical" if self.cfg.quiet else "warning")]
        engine = sg.Engine(args)
        self.engine = engine
        self.loader = load_into_engine(engine, self.spec)
        hosts = {h.name: h for h in engine.all_hosts}
        self.mstate = []
        for m in self.machines.all:
            ms = _MachineState(m)
            ms.host = hosts[m.name]
            self.mstate.append(ms)
        self.master_host = hosts[self.machines.master.name]
        prefix = self.cfg.export_prefix
        d = os.path.dirname(prefix)
        if d:
            os.makedirs(d, exist_ok=True)
        self.jobs_csv, self.schedule_csv = f"{prefix}_jobs.csv", f"{prefix}_schedule.csv"
        self.writer = JobsWriter(self.jobs_csv)
        self.error: BaseException | None = None
        self._init_state()
        import zmq  # noqa: PLC0415

        self.zmq = zmq
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.REQ)
        self.sock.setsockopt(zmq.LINGER, 0)
        if self.cfg.timeout is not None:
            self.sock.setsockopt(zmq.RCVTIMEO, int(self.cfg.timeout * 1000))
        self.sock.connect(self.cfg.socket)
        self.mailbox = sg.Mailbox.by_name("server")
        self._msg_cost = None
        sg.Actor.create("server", self.master_host, self._server_actor)
        try:
            engine.run()
        finally:
            self.sock.close(0)
            self.ctx.term()
            self.writer.close()
        if self.error is not None:
            raise self.error
        totals: dict[str, float] = {}
        for ms in self.mstate:
            for k, v in ms.time_in.items():
                totals[k] = totals.get(k, 0.0) + v
        row = self.writer.schedule_row(version=f"burstbuffer-{__version__}", nb_machines=len(self.mstate),
                                       scheduling_time=self.sched_time, simulation_time=time.time() - t_wall,
                                       time_in_state=totals)
        JobsWriter.write_schedule(self.schedule_csv, row)
        w = self.writer
        return SimResult(self.jobs_csv, self.schedule_csv, w.nb_jobs, w.nb_success, w.nb_rejected, w.nb_killed,
                         self.end_clock, time.time() - t_wall, time.process_time() - t_cpu, self.nb_messages,
                         self.sched_time, self.loader)

    def _init_state(self) -> None:
        self.out: list[dict] = []
        self.sched_ready = False
        self.end_sent = False
        self.end_ack = False
        self.nb_submitted = self.nb_completed = self.nb_running = self.nb_waiters = 0
        self.nb_executing = 0             # jobs whose actor runs (the others were set RUNNING by hand)
        self.registration_finished = False
        self.nb_messages = 0
        self.sched_time = 0.0
        self.end_clock = 0.0
        self.internal: list = []          # heap of (due, seq, kind, payload)
        self.deferred: list = []          # items handled after the send check (submitter goodbye)
        self.posts: deque = deque()       # (post time, job) of job messages not yet received, FIFO
        self.completion_order = CompletionOrder()  # same-clock job messages: Batsim's order (fidelity.py)
        self.get_comm = None
        self.get_data = None
        self.withdrawn = 0                # receives cancelled by the current server actor
        self.reached = 0.0                # latest timer target reached (see _next_message)
        self.to_delete: list[Job] = []
        self.idle_workers: dict = {}      # host -> parked job actors on it (moving an actor costs a simcall)
        self.submitters_left = 0
        for name in self.static_names:
            wl = self.workloads[name]
            jobs = sorted(wl.jobs.values(), key=lambda j: (j.subtime, j.id))
            groups: list[list[Job]] = []
            for j in jobs:
                if groups and groups[-1][0].subtime == j.subtime:
                    groups[-1].append(j)
                else:
                    groups.append([j])
            self.submitters_left += 1
            if not groups:
                self._push(0.0, "BYE", name)
            for i, g in enumerate(groups):
                self._push(g[0].subtime, "SUBMIT", (name, g, i == len(groups) - 1))

    def _push(self, due: float, kind: str, payload) -> None:
        heapq.heappush(self.internal, (due, next(self._seq), kind, payload))

    @property
    def now(self) -> float:
        return self.sg.Engine.clock

    def _server_actor(self) -> None:
        self._guarded(self._serve)

    def _guarded(self, fn, *args) -> None:
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

    def _serve(self) -> None:
        self._append(0.0, "SIMULATION_BEGINS", self._simulation_begins())
        self._send()
        self._serve_loop()

    def _serve_loop(self) -> None:
        while not self.end_ack:
            if self.withdrawn >= self.handoff_after:
                # SimGrid 3.32 keeps every cancelled receive in its actor's activity list, which each later
                # completion scans: hand the loop over to a fresh server actor at the same instant (the
                # old one ends, and its list with it) so that the cost per message stays flat.
                self.withdrawn = 0
                self.sg.Actor.create("server", self.master_host, self._guarded, self._serve_loop)
                return
            kind, payload = self._next_message()
            self._handle(kind, payload)
            if self.sched_ready and not self.end_ack and self._mailbox_empty():
                if self.out:
                    self._send()
                elif not self.end_sent and self._finished():
                    self._append(self.now, "SIMULATION_ENDS", {})
                    self.end_sent = True
                    self._send()
            self._flush_deferred()
        self.end_clock = self.now

    def _flush_deferred(self) -> None:
        """Queue the messages posted just after the one handled (a submitter's goodbye follows its last
        submission): after the decision to send, before the scheduler's reply (Batsim's order)."""
        for due, kind, payload in self.deferred:
            self._push(due, kind, payload)
        self.deferred.clear()

    # ---------------------------------------------------------------------------- message plumbing
    def _mailbox_empty(self) -> bool:
        if self.posts:
            return False
        return not (self.internal and self.internal[0][0] <= max(self.now, self.reached))

    def _finished(self) -> bool:
        return (self.submitters_left == 0
                and (not self.cfg.dynamic_jobs or self.registration_finished)
                and self.nb_completed == self.nb_submitted and self.nb_running == 0 and self.nb_waiters == 0)

    def _next_message(self):
        """Block (in simulated time) until the server's next message, Batsim-style: one at a time, in the
        order they were posted; a job's message travels from its host to ``master`` (SimGrid comm)."""
        Comm = self.sg.Comm
        while True:
            if self.get_comm is not None and self.posts:
                # The posted receive has been matched by a job's message: the server is busy receiving it.
                Comm.wait_any([self.get_comm])
                return self._take_job_message()
            now = max(self.now, self.reached)
            if self.internal and self.internal[0][0] <= now and (
                    not self.posts or self.posts[0][0] >= self.internal[0][0]):
                if self.get_comm is not None:  # unmatched (no job message posted): withdraw it
                    self.get_comm.cancel()
                    self.withdrawn += 1
                    self.get_comm = self.get_data = None
                _, _, kind, payload = heapq.heappop(self.internal)
                return kind, payload
            if self.get_comm is None:
                self.get_comm, self.get_data = self.mailbox.get_async()
            if self.posts:
                Comm.wait_any([self.get_comm])
            elif self.internal:
                target = self.internal[0][0]
                if Comm.wait_any_for([self.get_comm], target - self.now) < 0:
                    # the clock may stop one ulp short of `target`: the timer has fired all the same
                    self.reached = max(self.reached, target)
                    continue
            elif self.nb_executing > 0:
                Comm.wait_any([self.get_comm])
            else:
                raise SimulationError(self._deadlock_reason())
            return self._take_job_message()

    def _take_job_message(self):
        self.get_data.get()  # one job's message; which job it stands for: Batsim's order (fidelity.py)
        self.get_comm = self.get_data = None
        i = self.completion_order.pick(self.posts)
        job = self.posts[i][1]
        del self.posts[i]
        return "JOB_DONE", job

    def _deadlock_reason(self) -> str:
        waiting = [j.id for wl in self.workloads.values() for j in wl.jobs.values() if j.state == "SUBMITTED"]
        parts = [f"deadlock at t={self.now:f}: nothing left to simulate but the simulation is not over"]
        if waiting:
            parts.append(f"{len(waiting)} submitted job(s) never started nor rejected (first: {waiting[0]})")
        if self.cfg.dynamic_jobs and not self.registration_finished:
            parts.append("dynamic jobs are enabled and NOTIFY registration_finished was never sent")
        return "; ".join(parts)

    def _append(self, ts: float, etype: str, data: dict) -> None:
        self.out.append(event(ts, etype, data))

    def _send(self) -> None:
        now = self.now
        text = dumps({"now": float(now), "events": self.out})
        self.out = []
        self.sched_ready = False
        self.nb_messages += 1
        t0 = time.perf_counter()
        try:
            self.sock.send_string(text)
            reply = self.sock.recv_string()
        except self.zmq.Again:
            raise SimulationError(f"no answer from the scheduler on {self.cfg.socket} within "
                                  f"{self.cfg.timeout:g} s") from None
        except self.zmq.ZMQError as exc:
            raise SimulationError(f"ZeroMQ error talking to {self.cfg.socket}: {exc}") from None
        self.sched_time += time.perf_counter() - t0
        self._flush_deferred()
        # Jobs that ended in the message just sent are forgotten now (Batsim's jobs_to_be_deleted).
        if self.to_delete:
            for job in self.to_delete:
                self._forget(job)
            self.to_delete.clear()
        self._queue_reply(reply, now)

    def _queue_reply(self, reply: str, sent_at: float) -> None:
        try:
            doc = json.loads(reply)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise SimulationError("Invalid JSON message: could not be parsed") from None
        if not isinstance(doc, dict):
            raise SimulationError("Invalid JSON message: not a JSON object")
        if "now" not in doc or not _is_num(doc["now"]):
            raise SimulationError("Invalid JSON message: no numeric 'now' key")
        rnow = float(doc["now"])
        events = doc.get("events")
        if not isinstance(events, list):
            raise SimulationError("Invalid JSON message: 'events' should be an array")
        due = sent_at
        for i, ev in enumerate(events):
            if not isinstance(ev, dict):
                raise SimulationError(f"Invalid JSON message: event {i} should be an object")
            ts = ev.get("timestamp")
            if not _is_num(ts):
                raise SimulationError(f"Invalid JSON message: event {i} should have a numeric 'timestamp'")
            if ts > rnow:
                raise SimulationError(f"Invalid JSON message: timestamp {ts:g} of event {i} should be lower "
                                      f"than or equal to now={rnow:g}")
            if not isinstance(ev.get("type"), str):
                raise SimulationError(f"Invalid JSON message: event {i} should have a string 'type'")
            if ev["type"] not in _REPLY_TYPES:
                raise SimulationError(f"Invalid JSON message: event {i} has an unknown 'type' value "
                                      f"'{ev['type']}'")
            if "data" not in ev:
                raise SimulationError(f"Invalid JSON message: event {i} should have a 'data' key")
            due = max(due, float(ts))
            self._push(due, "EVENT", (i, ev))
        self._push(max(due, rnow), "READY", None)

    # ----------------------------------------------------------------------------------- handlers
    def _handle(self, kind: str, payload) -> None:
        if kind == "JOB_DONE":
            self._on_job_done(payload)
            return
        # Every other message comes, in Batsim, from an actor on the master host (submitter, waiter, killer,
        # REQ-REP): a 1-byte transfer master -> master, 1e-10 s on SimGrid's loopback. Spend the same time.
        # Measured once as a real comm, then spent as a sleep of the same duration (much cheaper).
        if self._msg_cost is None:
            t0 = self.sg.Engine.clock
            self.sg.Comm.sendto(self.master_host, self.master_host, 1)
            self._msg_cost = self.sg.Engine.clock - t0
        else:
            self.sg.this_actor.sleep_for(self._msg_cost)
        if kind == "SUBMIT":
            name, group, last = payload
            for job in group:
                self._submit(job)
            if last:
                self.deferred.append((self.now, "BYE", name))
        elif kind == "BYE":
            self.submitters_left -= 1
            if self.submitters_left == 0:
                self._append(self.now, "NOTIFY", {"type": "no_more_static_job_to_submit"})
        elif kind == "WAKE":
            self.nb_waiters -= 1
            self._append(self.now, "REQUESTED_CALL", {})
        elif kind == "READY":
            self.sched_ready = True
            if self.end_sent:
                self.end_ack = True
        elif kind == "KILLED":
            self._killing_done(*payload)
        elif kind == "EVENT":
            i, ev = payload
            handler = getattr(self, "_ev_" + ev["type"].lower())
            handler(i, ev["data"])
        else:  # pragma: no cover
            raise AssertionError(kind)

    def _submit(self, job: Job) -> None:
        job.state = "SUBMITTED"
        self.nb_submitted += 1
        self._announce(job)

    def _announce(self, job: Job) -> None:
        """JOB_SUBMITTED {job_id, job (its JSON, full id), profile (if forwarded)}."""
        data = {"job_id": job.id, "job": job.description}
        if self.cfg.forward_profiles:
            data["profile"] = job.profile.data
        self._append(self.now, "JOB_SUBMITTED", data)

    def _job_ended(self, job: Job) -> None:
        self.writer.write_job(job)
        self.to_delete.append(job)

    def _forget(self, job: Job) -> None:
        """Batsim deletes a job once its end was sent, and (without profile reuse) its profile too."""
        job.workload.jobs.pop(job.name, None)
        self.completion_order.forget(job)
        if self.gc_profiles:
            job.profile.collected = True

    def _on_job_done(self, job: Job) -> None:
        self.nb_executing -= 1
        job.actor = None
        self.nb_running -= 1
        self.nb_completed += 1
        self._append(self.now, "JOB_COMPLETED", {"job_id": job.id, "job_state": job.state,
                                                  "return_code": job.return_code, "alloc": str(job.allocation)})
        self._job_ended(job)

    # --- scheduler events (Batsim's JsonProtocolReader + server handlers)
    def _job(self, i: int, etype: str, job_id) -> Job:
        if not isinstance(job_id, str):
            raise SimulationError(f"Invalid JSON message: in event {i} ({etype}): 'job_id' should be a string")
        try:
            wl, name = split_job_id(job_id)
        except DefinitionError:
            raise SimulationError(f"Invalid JSON message: in event {i} ({etype}): invalid job id '{job_id}' "
                                  "(expected WORKLOAD!NAME)") from None
        w = self.workloads.get(wl)
        job = w.jobs.get(name) if w else None
        if job is None:
            if w is not None and name in w.met:
                raise SimulationError(f"{etype}: job '{job_id}' does not exist anymore (it ended and was "
                                      "reported in an earlier message)")
            raise SimulationError(f"{etype}: job '{job_id}' does not exist")
        return job

    @staticmethod
    def _data(i: int, etype: str, data) -> dict:
        if not isinstance(data, dict):
            raise SimulationError(f"Invalid JSON message: the 'data' value of event {i} ({etype}) should be "
                                  "an object")
        return data

    def _ev_execute_job(self, i: int, data) -> None:
        data = self._data(i, "EXECUTE_JOB", data)
        for k in data:
            if k not in ("job_id", "alloc", "mapping", "storage_mapping"):
                raise SimulationError(f"EXECUTE_JOB (event {i}): field '{k}' is not supported by the embedded "
                                      "simulator")
        job = self._job(i, "EXECUTE_JOB", data.get("job_id"))
        if "alloc" not in data:
            raise SimulationError(f"Invalid JSON message: the 'data' value of event {i} (EXECUTE_JOB) should "
                                  "contain a 'alloc' key.")
        try:
            alloc = parse_interval_set(data["alloc"])
        except ValueError as exc:
            raise SimulationError(f"Invalid JSON message: EXECUTE_JOB (event {i}): {exc}") from None
        if len(alloc) == 0:
            raise SimulationError(f"Invalid JSON message: in event {i} (EXECUTE_JOB): the number of allocated "
                                  "resources should be strictly positive (got 0).")
        n_machines = len(self.mstate)
        if alloc.max >= n_machines:
            raise SimulationError(f"Job '{job.id}': invalid allocation {data['alloc']!r}: machine {alloc.max} "
                                  f"does not exist (there are {n_machines} resources)")
        mapping = None
        if "mapping" in data:
            mp = data["mapping"]
            if not isinstance(mp, dict) or not mp:
                raise SimulationError(f"Invalid JSON message: the 'mapping' of event {i} (EXECUTE_JOB) must be "
                                      "a non-empty object")
            try:
                pairs = sorted((int(k), int(v)) for k, v in mp.items())
            except (TypeError, ValueError):
                raise SimulationError(f"Invalid JSON message: Invalid 'mapping' object of event {i} "
                                      "(EXECUTE_JOB): all keys and values must be integers") from None
            for rank, (ex, res) in enumerate(pairs):
                if ex != rank:
                    raise SimulationError(f"Invalid JSON message: Invalid 'mapping' object of event {i} "
                                          f"(EXECUTE_JOB): no resource associated to executor {rank}.")
                if not 0 <= res < len(alloc):
                    raise SimulationError(f"Invalid JSON message: Invalid 'mapping' object of event {i} "
                                          f"(EXECUTE_JOB): executor {ex} should use the {res}-th resource within "
                                          f"the allocation, but there are only {len(alloc)} allocated resources.")
            mapping = [res for _, res in pairs]
        storage_mapping = {}
        if "storage_mapping" in data:
            sm = data["storage_mapping"]
            if not isinstance(sm, dict) or not sm:
                raise SimulationError(f"Invalid JSON message: the 'storage_mapping' of event {i} (EXECUTE_JOB) "
                                      "must be a non-empty object")
            for k, v in sm.items():
                if not isinstance(v, int) or isinstance(v, bool):
                    raise SimulationError(f"Invalid JSON message: Invalid 'storage_mapping' of event {i} "
                                          "(EXECUTE_JOB): a value is not an integer")
                if not 0 <= v < n_machines:
                    raise SimulationError(f"Job '{job.id}': storage_mapping '{k}' -> {v}: machine {v} does not "
                                          "exist")
            storage_mapping = dict(sm)
        if job.state != "SUBMITTED":
            raise SimulationError(f"Cannot execute job '{job.id}': its state ({job.state}) is not "
                                  "JOB_STATE_SUBMITTED.")
        if job.profile.type != "parallel_homogeneous_total":
            n = len(mapping) if mapping is not None else len(alloc)
            if n != job.res:
                what = "custom mapping size" if mapping is not None else "allocation size"
                raise SimulationError(f"Job '{job.id}' allocation is invalid. The job requires {job.res} machines "
                                      f"but the {what} is {n} ({data['alloc']}).")
        if not self.cfg.compute_sharing or not self.cfg.storage_sharing:
            for mid in alloc:
                ms = self.mstate[mid]
                if ms.jobs and ((ms.m.kind == "compute" and not self.cfg.compute_sharing)
                                or (ms.m.kind == "storage" and not self.cfg.storage_sharing)):
                    others = ", ".join(sorted(j.id for j in ms.jobs))
                    raise SimulationError(
                        f"Job '{job.id}': Invalid allocation: machine {mid} ('{ms.m.name}') is currently "
                        f"computing jobs (these ones: {{{others}}}) whereas time-sharing on "
                        f"{ms.m.kind} machines is disabled")
        job.state = "RUNNING"
        job.allocation = alloc
        job.storage_mapping = storage_mapping
        job.mapping = mapping
        job.starting_time = LD(self.now)
        self.nb_running += 1
        for mid in alloc:
            ms = self.mstate[mid]
            ms.set_state("computing", self.now)
            ms.jobs.add(job)
        self._dispatch(job, self.mstate[alloc.min].host)

    def _ev_reject_job(self, i: int, data) -> None:
        data = self._data(i, "REJECT_JOB", data)
        job = self._job(i, "REJECT_JOB", data.get("job_id"))
        if job.state != "SUBMITTED":
            raise SimulationError(f"Invalid rejection received: job '{job.id}' cannot be rejected at the present "
                                  "time. To be rejected, a job must be submitted and not allocated yet.")
        job.state = "REJECTED"
        self.nb_completed += 1
        self._job_ended(job)

    def _ev_kill_job(self, i: int, data) -> None:
        data = self._data(i, "KILL_JOB", data)
        ids = data.get("job_ids")
        if not isinstance(ids, list) or not ids:
            raise SimulationError(f"Invalid JSON message: the 'job_ids' array in the 'data' value of event {i} "
                                  "(KILL_JOB) should be a non-empty array.")
        to_kill = []
        for jid in ids:
            job = self._job(i, "KILL_JOB", jid)
            if job.kill_requested:
                continue
            if not (job.state == "RUNNING" or job.is_complete):
                raise SimulationError(f"Invalid KILL_JOB: job_id '{job.id}' refers to a job not being executed "
                                      "nor completed.")
            job.kill_requested = True
            to_kill.append(job)
        if not to_kill:
            return
        # Batsim's killer actor kills now and reports (KILLING_DONE) by a message of its own.
        progress, killed = {}, []
        for job in to_kill:
            if job.state != "RUNNING":
                continue
            progress[job.id] = self._progress(job)
            job.actor.kill()
            self.nb_executing -= 1
            job.actor = job.activity = None
            job.state = "COMPLETED_KILLED"
            self._machines_release(job)
            killed.append(job)
        self._push(self.now, "KILLED", (to_kill, killed, progress))

    def _killing_done(self, to_kill: list[Job], killed: list[Job], progress: dict) -> None:
        for job in killed:
            self.nb_running -= 1
            self.nb_completed += 1
            self._append(self.now, "JOB_COMPLETED", {"job_id": job.id, "job_state": job.state,
                                                      "return_code": job.return_code,
                                                      "alloc": str(job.allocation)})
            self._job_ended(job)
        self._append(self.now, "JOB_KILLED", {"job_ids": [j.id for j in to_kill], "job_progress": progress})

    def _progress(self, job: Job) -> dict:
        node = {"profile_name": (job.current_profile or job.profile).name}
        act = job.activity
        frac = 0.0
        if job.activity_kind == "exec" and act is not None:
            try:
                frac = 1.0 - float(act.remaining_ratio)
            except Exception:  # noqa: BLE001 (an activity already gone)
                frac = 0.0
        elif job.activity_kind == "comm" and act is not None:
            try:
                frac = 1.0 - float(act.remaining) / job.activity_amount
            except Exception:  # noqa: BLE001 (an activity already gone)
                frac = 0.0
        elif job.activity_kind == "sleep" and job.activity_amount > 0:
            frac = (self.now - job.activity_start) / job.activity_amount
        node["progress"] = min(max(frac, 0.0), 1.0)
        for prof, index in reversed(job.composed_stack):
            node = {"profile_name": prof.name, "current_task_index": index, "current_task": node}
        return node

    def _ev_call_me_later(self, i: int, data) -> None:
        data = self._data(i, "CALL_ME_LATER", data)
        target = data.get("timestamp")
        if not _is_num(target):
            raise SimulationError(f"Invalid JSON message: the 'timestamp' value in the 'data' value of event {i} "
                                  "(CALL_ME_LATER) should be a number.")
        now = self.now
        if not target > now:
            raise SimulationError(f"You asked to be awaken in the past! (you ask: {target:f}, it is: {now:f})")
        self.nb_waiters += 1
        # Batsim's waiter sleeps target - now, at least 1e-5 s (jobs_execution.cpp, waiter_process)
        self._push(now + max(float(target) - now, 1e-5), "WAKE", None)

    def _dyn_check(self, what: str) -> None:
        if not self.cfg.dynamic_jobs:
            raise SimulationError(f"Invalid JSON message: dynamic {what} registration received but the option "
                                  "seems disabled... It can be activated with the '--enable-dynamic-jobs' "
                                  "command line option.")
        if self.registration_finished:
            raise SimulationError(f"Invalid JSON message: dynamic {what} registration received but a "
                                  "registration_finished message has already been received")

    def _ev_register_profile(self, i: int, data) -> None:
        self._dyn_check("profile")
        data = self._data(i, "REGISTER_PROFILE", data)
        wname, pname, prof = data.get("workload_name"), data.get("profile_name"), data.get("profile")
        if not isinstance(wname, str) or not isinstance(pname, str) or not isinstance(prof, dict):
            raise SimulationError(f"Invalid JSON message: REGISTER_PROFILE (event {i}) needs a string "
                                  "'workload_name', a string 'profile_name' and an object 'profile'")
        wl = self.workloads.get(wname)
        if wl is None:
            wl = self.workloads[wname] = Workload(wname, "")
        if pname in wl.profiles:
            raise SimulationError(f"Invalid profile registration: the profile '{pname}' of workload '{wname}' "
                                  "that was registered has already been registered (old profile: "
                                  f"{dumps(wl.profiles[pname].data)})")
        try:
            wl.profiles[pname] = parse_profile(pname, prof, wl.profiles)
        except DefinitionError as exc:
            raise SimulationError(f"Invalid JSON profile received from the scheduler: workload '{wname}': "
                                  f"{exc}") from None

    def _ev_register_job(self, i: int, data) -> None:
        self._dyn_check("job")
        data = self._data(i, "REGISTER_JOB", data)
        jid = data.get("job_id")
        if not isinstance(jid, str):
            raise SimulationError(f"Invalid JSON message: in event {i} (REGISTER_JOB): ['data']['job_id'] "
                                  "should be a string")
        try:
            wname, name = split_job_id(jid)
        except DefinitionError as exc:
            raise SimulationError(f"REGISTER_JOB (event {i}): {exc}") from None
        wl = self.workloads.get(wname)
        if wl is None:
            raise SimulationError(f"REGISTER_JOB (event {i}): workload '{wname}' of job '{jid}' does not exist "
                                  "(register a profile in it first)")
        if name in wl.met:
            raise SimulationError(f"Cannot register new job '{jid}', it already exists in the workload.")
        desc = data.get("job")
        if not isinstance(desc, dict):
            raise SimulationError(f"Invalid JSON message: in event {i} (REGISTER_JOB): ['data']['job'] should "
                                  "be an object")
        try:
            job = parse_job(desc, wl, expected_id=jid)
        except DefinitionError as exc:
            raise SimulationError(f"Invalid JSON job submitted by the scheduler: {exc}") from None
        wl.jobs[name] = job
        wl.met.add(name)
        job.state = "SUBMITTED"
        self.nb_submitted += 1
        if self.cfg.ack_dynamic_jobs:
            self._announce(job)

    def _ev_set_job_metadata(self, i: int, data) -> None:
        data = self._data(i, "SET_JOB_METADATA", data)
        job = self._job(i, "SET_JOB_METADATA", data.get("job_id"))
        md = data.get("metadata")
        if not isinstance(md, str):
            raise SimulationError(f"Invalid JSON message: the 'metadata' value in the 'data' value of event {i} "
                                  "(SET_JOB_METADATA) should be a string.")
        if '"' in md:
            raise SimulationError(f"Invalid JSON message: the 'metadata' value in the 'data' value of event {i} "
                                  f"(SET_JOB_METADATA) should not contain double quotes (got ###{md}###)")
        job.metadata = md

    def _ev_notify(self, i: int, data) -> None:
        data = self._data(i, "NOTIFY", data)
        t = data.get("type")
        if t == "registration_finished":
            self.registration_finished = True
        elif t == "continue_registration":
            self.registration_finished = False
        else:
            raise SimulationError(f"Unknown NOTIFY type received ('{t}').")

    def _ev_change_job_state(self, i: int, data) -> None:
        data = self._data(i, "CHANGE_JOB_STATE", data)
        job = self._job(i, "CHANGE_JOB_STATE", data.get("job_id"))
        new = data.get("job_state")
        allowed = ("RUNNING", "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED",
                   "COMPLETED_KILLED", "REJECTED")
        if new not in allowed:
            raise SimulationError(f"Invalid JSON message: in event {i} (CHANGE_JOB_STATE): "
                                  f"['data']['job_state'] must be one of: {{{', '.join(allowed)}}}")
        if job.state == "SUBMITTED" and new == "RUNNING":
            job.starting_time = LD(self.now)
            self.nb_running += 1
        elif job.state == "SUBMITTED" and new == "REJECTED":
            job.state = new
            self.nb_completed += 1
            self._job_ended(job)
        elif job.state == "RUNNING" and new.startswith("COMPLETED"):
            if job.actor is not None:
                raise SimulationError(f"CHANGE_JOB_STATE: job '{job.id}' is being executed by the simulator; "
                                      "kill it instead")
            job.runtime = LD(self.now) - job.starting_time
            job.state = new
            self.nb_running -= 1
            self.nb_completed += 1
            self._job_ended(job)
        else:
            raise SimulationError(f"CHANGE_JOB_STATE: cannot change job '{job.id}' from {job.state} to {new}")
        job.state = new

    def _ev_to_job_msg(self, i: int, data) -> None:
        data = self._data(i, "TO_JOB_MSG", data)
        self._job(i, "TO_JOB_MSG", data.get("job_id"))

    def _ev_set_resource_state(self, i: int, data) -> None:
        raise SimulationError("Receiving a pstate modification request, which is forbidden as the simulator has "
                              "no energy support")

    def _ev_query(self, i: int, data) -> None:
        raise SimulationError("Received a request about the energy consumption of the machines but energy "
                              "simulation is not enabled.")

    # --------------------------------------------------------------------------------- job actors
    def _machines_release(self, job: Job) -> None:
        now = self.now
        for mid in job.allocation:
            ms = self.mstate[mid]
            ms.jobs.discard(job)
            if not ms.jobs:
                ms.set_state("idle", now)
        job.runtime = LD(now) - job.starting_time
        if job.runtime == 0:
            job.runtime = LD("1e-5")

    def _dispatch(self, job: Job, host) -> None:
        """Run `job` in an actor on `host` (its first allocated machine), as Batsim does. Finished job
        actors are kept, parked on a semaphore, and reused (one parked on `host` first, else one moved
        there): creating a SimGrid actor (a thread) per job costs more than the job's own activities."""
        idle = self.idle_workers.get(host) or next(iter(self.idle_workers.values()), None)
        if idle:
            w = idle.pop()
            if not idle:
                del self.idle_workers[w.host]
        else:
            w = _Worker(self.sg.Semaphore(0))
            w.actor = self.sg.Actor.create("job_executor", host, self._worker_loop, w)
            w.actor.daemonize()  # parked executors end with the server
        w.job, w.host = job, host
        job.actor = w.actor
        self.nb_executing += 1
        w.sem.release()

    def _worker_loop(self, w: "_Worker") -> None:
        this_actor = self.sg.this_actor
        while True:
            w.sem.acquire()
            if this_actor.get_host() != w.host:
                this_actor.set_host(w.host)
            job, w.job = w.job, None
            self._guarded(self._job_body, job)
            self.idle_workers.setdefault(w.host, []).append(w)

    def _job_body(self, job: Job) -> None:
        job.composed_stack = []
        remaining = [float(job.walltime)]
        ret = self._run_profile(job, job.profile, remaining)
        if ret == 0:
            job.state = "COMPLETED_SUCCESSFULLY"
        elif ret > 0:
            job.state = "COMPLETED_FAILED"
        else:
            job.state = "COMPLETED_WALLTIME_REACHED"
        job.return_code = ret
        job.activity = None
        self._machines_release(job)
        self.posts.append((self.now, job))
        self.mailbox.put(job, 1)

    def _run_profile(self, job: Job, prof, remaining: list[float]) -> int:
        """Execute `prof` for `job`; `remaining[0]` is the time left before the walltime (< 0: none).
        Returns the return code: the profile's `ret`, or -1 when the walltime is reached."""
        sg = self.sg
        job.current_profile = prof
        t = prof.type
        d = prof.data
        if t == "delay":
            self.completion_order.started(job)
            delay = float(d["delay"])
            job.activity_kind, job.activity_start, job.activity_amount = "sleep", self.now, delay
            rem = remaining[0]
            if rem < 0 or delay < rem:
                sg.this_actor.sleep_for(delay)
                if rem > 0:
                    remaining[0] = rem - delay
                return prof.ret
            sg.this_actor.sleep_for(rem)
            remaining[0] = 0.0
            return -1
        if t == "composed":
            for _ in range(d.get("repeat", 1)):
                for index, name in enumerate(d["seq"]):
                    sub = job.workload.profiles.get(name)
                    if sub is None:
                        raise SimulationError(f"job '{job.id}': composed profile '{prof.name}' uses profile "
                                              f"'{name}', which does not exist")
                    job.composed_stack.append((prof, index))
                    ret = self._run_profile(job, sub, remaining)
                    job.composed_stack.pop()
                    if ret != 0:
                        return ret
            return prof.ret
        ends = self._staging_ends(job, d) if t == "data_staging" else None
        self.completion_order.started(job)
        if ends is not None:
            # A 2-host transfer: the same L07 action as Batsim's 2-host parallel task (ptask_L07 builds
            # every host-to-host communication as one), started by one simcall instead of four.
            ex = sg.Comm.sendto_async(ends[0], ends[1], int(d["nb_bytes"]))
            job.activity, job.activity_kind, job.activity_amount = ex, "comm", float(d["nb_bytes"])
        else:
            hosts, flops, nbytes = self._ptask(job, prof)
            ex = sg.this_actor.exec_init(hosts, flops, nbytes)
            job.activity, job.activity_kind = ex, "exec"  # wait/wait_for start it (one simcall less)
        rem = remaining[0]
        if rem < 0:
            ex.wait()
            return prof.ret
        t0 = self.now
        try:
            ex.wait_for(rem)
        except sg.TimeoutException:
            ex.cancel()
            remaining[0] = 0.0
            return -1
        remaining[0] = rem - (self.now - t0)
        return prof.ret

    def _staging_ends(self, job: Job, d: dict):
        """(source host, destination host) of a data_staging profile that can run as a plain host-to-host
        comm — a positive whole number of bytes (SimGrid's sendto takes an integer) between two different
        machines —, else None (it runs as a parallel task, `_ptask`)."""
        nb = float(d["nb_bytes"])
        if not (nb > 0 and nb.is_integer()):
            return None
        src, dst = self._staging_machines(job, d)
        return (self.mstate[src].host, self.mstate[dst].host) if src != dst else None

    def _staging_machines(self, job: Job, d: dict) -> tuple[int, int]:
        """(source, destination) machine ids of a data_staging profile, from the job's storage_mapping."""
        return (self._storage_machine(job, d["from"], "a data staging task"),
                self._storage_machine(job, d["to"], "a data staging task"))

    def _storage_machine(self, job: Job, label: str, what: str) -> int:
        sm = job.storage_mapping
        if label not in sm:
            raise SimulationError(f"Cannot generate {what} for job '{job.id}': Unknown storage label='{label}' "
                                  "(give it in the EXECUTE_JOB's storage_mapping)")
        mid = sm[label]
        if self.mstate[mid].m.kind != "storage":
            raise SimulationError(f"Cannot generate {what} for job '{job.id}': The host(id={mid}, "
                                  f"name='{self.mstate[mid].m.name}') pointed to by label='{label}' is not a "
                                  "storage host")
        return mid

    def _ptask(self, job: Job, prof):
        """(hosts, flops per host, bytes matrix row-major sender×receiver) of a parallel profile, as Batsim's
        task_execution.cpp builds them."""
        t, d = prof.type, prof.data
        alloc = list(job.allocation)
        if job.mapping is not None:
            alloc = [alloc[k] for k in job.mapping]
        hosts = [self.mstate[mid].host for mid in alloc]
        n = len(hosts)
        if t in ("parallel_homogeneous", "parallel_homogeneous_total"):
            cpu, com = float(d["cpu"]), float(d["com"])
            if t == "parallel_homogeneous_total":
                cpu, com = cpu / n, com / n
            flops = [cpu] * n
            nbytes = [0.0 if x == y else com for y in range(n) for x in range(n)] if com > 0 else []
        elif t == "parallel":
            if len(d["cpu"]) != n:
                raise SimulationError(f"job '{job.id}': the number of resources given by the allocation ({n}) is "
                                      f"different from the number of resources given by the profile data "
                                      f"({len(d['cpu'])})")
            flops = [float(x) for x in d["cpu"]]
            nbytes = [float(x) for x in d["com"]]
        elif t == "parallel_homogeneous_pfs":
            label = d.get("storage", "pfs")
            if not job.storage_mapping:
                storages = [ms for ms in self.mstate if ms.m.kind == "storage"]
                if len(storages) != 1:
                    raise SimulationError(f"Cannot generate a homogeneous parallel task with pfs for job "
                                          f"'{job.id}': No storage/host mapping given and there is no (or more "
                                          "than one) storage node available")
                mid = storages[0].m.id
            else:
                mid = self._storage_machine(job, label, "a homogeneous parallel task with pfs")
            hosts = hosts + [self.mstate[mid].host]
            read, write = float(d.get("bytes_to_read", 0)), float(d.get("bytes_to_write", 0))
            m = n + 1
            flops = [0.0] * m
            if read > 0 or write > 0:
                nbytes = []
                for row in range(m):
                    for col in range(m):
                        if col == row or (col != n and row != n):
                            nbytes.append(0.0)
                        elif col == n:
                            nbytes.append(write)
                        else:
                            nbytes.append(read)
            else:
                nbytes = []
            return hosts, flops, nbytes
        elif t == "data_staging":
            src, dst = self._staging_machines(job, d)
            hosts = [self.mstate[src].host, self.mstate[dst].host]
            nb = float(d["nb_bytes"])
            return hosts, [0.0, 0.0], ([0.0, nb, 0.0, 0.0] if nb > 0 else [])
        else:  # pragma: no cover (parse_profile rejects the others)
            raise SimulationError(f"job '{job.id}': profile type {t!r} cannot be executed")
        for k, mid in enumerate(alloc):
            if abs(flops[k]) > 1e-10 and self.mstate[mid].m.kind != "compute":
                ms = self.mstate[mid]
                raise SimulationError(f"Some computation ({flops[k]:g}) is assigned to storage node (id={mid}, "
                                      f"name='{ms.m.name}') (job '{job.id}')")
        return hosts, flops, nbytes

    # --------------------------------------------------------------------------- SIMULATION_BEGINS
    def _simulation_begins(self) -> dict:
        c = self.cfg
        m = self.machines
        return {
            "nb_resources": len(m.compute) + len(m.storage),
            "nb_compute_resources": len(m.compute),
            "nb_storage_resources": len(m.storage),
            "allow_compute_sharing": bool(c.compute_sharing),
            "allow_storage_sharing": bool(c.storage_sharing),
            "config": {
                "redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379,
                "redis-prefix": "default", "profiles-forwarded-on-submission": bool(c.forward_profiles),
                "dynamic-jobs-enabled": bool(c.dynamic_jobs), "dynamic-jobs-acknowledged": bool(c.ack_dynamic_jobs),
                "profile-reuse-enabled": bool(c.profile_reuse), "sched-config": c.sched_config,
                "forward-unknown-events": False,
            },
            "compute_resources": [x.to_json() for x in m.compute],
            "storage_resources": [x.to_json() for x in m.storage],
            "workloads": {name: self.workloads[name].file for name in self.static_names},
            "profiles": {name: {p.name: p.data for p in self.workloads[name].profiles.values()}
                         for name in self.static_names},
        }


_REPLY_TYPES = frozenset(("EXECUTE_JOB", "REJECT_JOB", "KILL_JOB", "CALL_ME_LATER", "REGISTER_JOB",
                          "REGISTER_PROFILE", "SET_JOB_METADATA", "NOTIFY", "CHANGE_JOB_STATE", "TO_JOB_MSG",
                          "SET_RESOURCE_STATE", "QUERY"))


def _is_num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
