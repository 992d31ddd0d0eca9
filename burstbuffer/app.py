"""The scheduler process: Batsim events → policy decisions, with per-job accounting.

Glues the protocol layer (`batsim/`), the platform view (`platforms/`), a policy (`schedulers/`)
and a job model (`io_model/`). Knows no socket: `run_loop` drives it.
"""
from __future__ import annotations

import csv
import logging
import math
import os
from dataclasses import dataclass, field
from typing import Callable

from procset import ProcSet

from .batsim.loop import Outbox, peer_error
from .batsim.protocol import (CallMeLater, Event, JobCompleted, ProtocolError, JobKilled, JobSubmitted, Notify,
                              NotifyBatsim, RejectJob, RequestedCall, SimulationBegins, SimulationEnds,
                              UnknownEvent)
from .errors import InputError
from .guards import DecisionGuard, run_hook
from .io_model.base import JobModel
from .jsonvalues import excerpt
from .metrics.definitions import (JOBS_CSV_COLUMNS, THREE_PHASE_COLUMNS, WAIT_COLUMNS, WAIT_REASONS,
                                  bounded_slowdown, runtime, stretch, turnaround_time, wait_reason_category,
                                  waiting_time)
from .platforms.model import Platform
from .io_model.io_aware import phase_bb
from .schedulers.base import Job, Scheduler, StageIn, StageOut
from .workloads.batsim_rules import DefinitionError, check_job, check_phase_bb

@dataclass
class JobRecord:
    """Accounting of one original job: times in seconds, `bb_alloc` {BB node id: bytes}; `row()` is its
    jobs.csv row (columns `JOBS_CSV_COLUMNS`, metrics as defined in `burstbuffer.metrics.definitions`).

    `waits` {reason category: seconds} accumulates the time pending per reason (docs/wait-reasons.md):
    the job waits for `wait_reason` since `wait_since` (its submission time at first, reason "Unknown"
    until the first decision, normally at the same instant)."""

    job: Job
    workload: str
    start: float | None = None
    end: float | None = None
    state: str = ""
    procs: ProcSet = field(default_factory=ProcSet)
    bb_alloc: dict[int, int] = field(default_factory=dict)
    reason: str = ""
    #: (queue, priority at start) when the run uses queues or a priority order (docs/orders-and-queues.md)
    facts: tuple[str, float | None] = ("", None)
    waits: dict[str, float] = field(default_factory=dict)
    wait_reason: str = "Unknown"
    wait_since: float | None = None
    #: three-phase model (docs/io-model.md §3): end of a pending stage-in, the running phase on nodes [s]
    staged_at: float | None = None
    nodes_start: float | None = None
    nodes_end: float | None = None
    #: three-phase model: (time [s], phase, {BB node id: bytes}) at each change of what the job holds, for
    #: bb_holds.csv (docs/audit.md)
    holds: list = field(default_factory=list)

    def phase_row(self) -> dict:
        """The `THREE_PHASE_COLUMNS` of the row ("" when unknown; `stage_in_pending` needs the nodes' start)."""
        f = lambda x: "" if x is None else f"{x:.6f}"  # noqa: E731
        pending = "" if (self.nodes_start is None or self.start is None) else f(self.nodes_start - self.start)
        return {"stage_in_end": f(self.staged_at), "nodes_start": f(self.nodes_start),
                "nodes_end": f(self.nodes_end), "stage_in_pending": pending}

    def wait_for(self, reason: str, now: float) -> None:
        """From `now` on the job waits for `reason` (a policy's reason name); the time since the last
        change is added to the previous reason."""
        reason = wait_reason_category(reason)
        if reason != self.wait_reason:
            self._close_wait(now)
            self.wait_reason = reason

    def _close_wait(self, now: float) -> None:
        since = self.job.subtime if self.wait_since is None else self.wait_since
        if now > since:
            self.waits[self.wait_reason] = self.waits.get(self.wait_reason, 0.0) + (now - since)
        self.wait_since = now

    def row(self) -> dict:
        j = self.job
        local_id = j.id.split("!", 1)[1] if "!" in j.id else j.id
        r = {"job_id": local_id, "workload_name": self.workload, "profile": j.profile,
             "submission_time": f"{j.subtime:.6f}", "requested_number_of_resources": j.res,
             "requested_time": f"{j.walltime if j.walltime != math.inf else -1.0:.6f}",   # -1: none, as Batsim
             "success": int(self.state == "COMPLETED_SUCCESSFULLY"),
             "final_state": self.state, "starting_time": "", "execution_time": "", "finish_time": "",
             "waiting_time": "", "turnaround_time": "", "stretch": "", "allocated_resources": str(self.procs),
             "consumed_energy": "-1.000000", "metadata": self.reason, "bb_per_node": j.bb,
             "bb_allocation": " ".join(f"{k}:{v}" for k, v in sorted(self.bb_alloc.items())),
             "bounded_slowdown": ""}
        r.update(dict.fromkeys(WAIT_COLUMNS, ""))
        if self.start is not None:
            r.update({WAIT_REASONS[k]: f"{v:.6f}" for k, v in self.waits.items()})
            r.update({c: "0.000000" for c in WAIT_COLUMNS if not r[c]})
        if self.start is not None and self.end is not None:
            wait = waiting_time(j.subtime, self.start)
            run = runtime(self.start, self.end)
            turn = turnaround_time(j.subtime, self.end)
            r.update(starting_time=f"{self.start:.6f}", execution_time=f"{run:.6f}", finish_time=f"{self.end:.6f}",
                     waiting_time=f"{wait:.6f}", turnaround_time=f"{turn:.6f}",
                     stretch=f"{stretch(turn, run):.6f}" if run > 0 else "",
                     bounded_slowdown=f"{bounded_slowdown(turn, run):.6f}")
        return r

def _bad_job(job_id: str, reason) -> ProtocolError:
    """The error of a JOB_SUBMITTED whose job description breaks the workload rules: Batsim's message is
    malformed (the workload file is Batsim's input, not this program's: exit status 1, docs/faults.md)."""
    return ProtocolError(f"malformed JOB_SUBMITTED for job {excerpt(job_id)}: bad job description ({reason})")


def check_resource_ids(data: dict) -> None:
    """The resources of SIMULATION_BEGINS `data` have distinct integer ids in [0, n), n their number (Batsim
    numbers its machines so, docs/protocol.md): an id such as 10**20 would otherwise size the policies'
    node sets. Raises ProtocolError naming the first bad id."""
    if not isinstance(data, dict):
        return                                  # Platform.from_simulation_begins says what is wrong
    resources = [r for key in ("compute_resources", "storage_resources")
                 for r in (data.get(key) or []) if isinstance(r, dict) and "id" in r]
    n, seen = len(resources), set()
    for r in resources:
        rid = r["id"]
        if type(rid) is not int or not 0 <= rid < n or rid in seen:
            why = "a second time" if rid in seen and type(rid) is int else f"not an integer in [0, {n})"
            raise ProtocolError(f"malformed SIMULATION_BEGINS (resource id {excerpt(rid, 60)}: {why})")
        seen.add(rid)


#: The scheduler's log (`burstbuffer.logs`: job submissions, starts and ends at debug).
_LOG = logging.getLogger("burstbuffer")


def write_bb_holds(records, path: str) -> None:
    """bb_holds.csv of a run under a job model with phases, from its `records` (`JobRecord`s; docs/audit.md): one
    row per change of what a job holds — ``job_id,time,phase,bb_allocation`` (phase "stage-in", "run", "computed",
    "stage-out" (a policy's StageOut) or "released" (the output written: the stage-out, which the walltime does not
    bound, begins); the allocation as jobs.csv's, held from `time` [s] until the job's next row or its
    finish_time) — for the auditor (`burstbuffer.audit`), which cannot tell a job's phases from jobs.csv's one
    allocation. Written atomically, never through a link (`fileio.open_output`)."""
    from .fileio import open_output, removing_on_error
    tmp = f"{path}.tmp"
    with removing_on_error(tmp):
        with open_output(tmp, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(("job_id", "time", "phase", "bb_allocation"))
            for rec in sorted(records, key=lambda r: (r.job.subtime, r.job.id)):
                local_id = rec.job.id.split("!", 1)[1] if "!" in rec.job.id else rec.job.id
                for t, phase, alloc in rec.holds:
                    w.writerow((local_id, f"{t:.6f}", phase,
                                " ".join(f"{k}:{v}" for k, v in sorted(alloc.items()))))
        os.replace(tmp, path)


class SchedulerApp:
    """Handler of the decision loop (see `burstbuffer.batsim.loop.run_loop`).

    Args:
        make_scheduler: platform → Scheduler (the policy), called at SIMULATION_BEGINS.
        job_model: the job model (`burstbuffer.io_model.base.JobModel`; see that module for the
            calls and their order).
        bb_capacity / dragonfly: platform options (see `Platform.from_simulation_begins`).
        on_progress: called with (jobs ended, jobs known) whenever a job ends or is rejected.
        platform_source: names the platform in error messages (e.g. its file).
    """

    def __init__(self, make_scheduler: Callable[[Platform], Scheduler], job_model: JobModel, *,
                 bb_capacity: str | int | None = None, dragonfly: str | None = None,
                 on_progress: Callable[[int, int], None] | None = None, platform_source: str = "SIMULATION_BEGINS"):
        self.platform_source = platform_source
        self.make_scheduler = make_scheduler
        self.job_model = job_model
        self.bb_capacity = bb_capacity
        self.dragonfly = dragonfly
        self.on_progress = on_progress
        self.platform: Platform | None = None
        self.scheduler: Scheduler | None = None
        self.profiles: dict[str, dict[str, dict]] = {}
        self.records: dict[str, JobRecord] = {}
        self.ended = 0
        self.all_submitted = False
        self.dynamic_jobs = False
        self.registration_finished = False
        self.simulation_ended = False
        self.last_event_time = 0.0
        self.unknown_events: list[str] = []
        self._pending_calls: set[float] = set()
        #: Batsim job ids (original and dynamic sub-jobs) sent in EXECUTE_JOB and not completed or killed yet
        self._executing: set[str] = set()
        #: a Batsim message that breaks the protocol raises ProtocolError (True) or is logged (False)
        self.strict_peer = False
        #: Batsim job ids of the EXECUTE_JOBs of the last answer that had any (named if the simulator aborts)
        self.last_started: list[str] = []
        self.ended_ids: list[str] = []          # the original jobs that ended, in the order they ended
        #: (workload, profile) of the submitted jobs whose profile has no ``bb`` field (treated as 0 B)
        self.profiles_without_bb: set[tuple[str, str]] = set()
        # The policy is consulted only after a message that changed its inputs (a submission, a job
        # end, a requested call): most io-aware messages are sub-job completions that change nothing.
        self._dirty = False
        self._releases_nodes = False
        #: [s] wall-clock limit of one decision (None: none) and the policy's name in errors (`guards`)
        self.decision_timeout: float | None = None
        self.policy_label = ""
        self._guard = None

    # ------------------------------------------------------------------ events
    def on_event(self, ts: float, ev: Event, out: Outbox) -> None:
        """React to one event: the policy's hooks run here, under `guards.run_hook` (the decision timeout, its
        exits turned into faults)."""
        run_hook(self._on_event, (ts, ev, out), self.policy_label or getattr(self.scheduler, "name", "?"), ts,
                 self.decision_timeout)

    def after_events(self, now: float, out: Outbox) -> None:
        """The policy's decisions after a message's events (`_after_events`; `DecisionGuard` bounds them), its
        exits turned into faults (`guards.run_hook`)."""
        run_hook(self._after_events, (now, out), self.policy_label or getattr(self.scheduler, "name", "?"), now,
                 None)

    def _on_event(self, ts: float, ev: Event, out: Outbox) -> None:
        self.last_event_time = ts
        if isinstance(ev, JobCompleted):
            self._completed(ev, ts, out)
        elif isinstance(ev, JobSubmitted):
            self._submitted(ev, ts, out)
        elif isinstance(ev, RequestedCall):
            self._pending_calls = {t for t in self._pending_calls if t > ts}
            self._dirty = True
        elif isinstance(ev, Notify):
            if ev.type == "no_more_static_job_to_submit":
                self.all_submitted = True
        elif isinstance(ev, SimulationBegins):
            self._begins(ev.data)
        elif isinstance(ev, SimulationEnds):
            self.simulation_ended = True
        elif isinstance(ev, JobKilled):
            self._executing.difference_update(ev.job_ids)   # the JOB_COMPLETED, if any, carries the final state
        elif isinstance(ev, UnknownEvent):
            kind = excerpt(ev.type, 80)             # a peer's text: quoted bounded, kept bounded
            if kind not in self.unknown_events:   # logged once per type, then ignored
                logging.getLogger("burstbuffer").warning("ignoring unknown Batsim event type '%s' (t=%g)", kind, ts)
            self.unknown_events.append(kind)

    def _begins(self, data: dict) -> None:
        if self.platform is not None:
            peer_error("a second SIMULATION_BEGINS", True)
        check_resource_ids(data)
        try:
            self.platform = Platform.from_simulation_begins(data, bb_capacity=self.bb_capacity,
                                                            dragonfly=self.dragonfly, source=self.platform_source)
        except (TypeError, AttributeError, KeyError, ValueError) as exc:
            raise ProtocolError(f"malformed SIMULATION_BEGINS ({exc.__class__.__name__}: {excerpt(str(exc), 200)})") \
                from None
        self.scheduler = self.make_scheduler(self.platform)
        self.scheduler.bind_job_model(self.job_model)             # the shape of a job's holds (holds.HoldShape)
        #: the policy frees a job's nodes at its "nodes-released" (three-phase), not at its end
        self._releases_nodes = self.scheduler.frees_nodes_before_stage_out
        profiles, cfg = data.get("profiles") or {}, data.get("config") or {}
        if not isinstance(profiles, dict) or not all(isinstance(p, dict) for p in profiles.values()) \
                or not isinstance(cfg, dict):
            raise ProtocolError("malformed SIMULATION_BEGINS (profiles or config is not an object)")
        self.profiles = profiles
        self.job_model.begin(self.platform, self.profiles)
        if getattr(self.scheduler, "decides_stage_out", False):  # the model waits for the policy's StageOut
            if not self.job_model.stages_separately:
                raise InputError("--model", self.job_model.name,
                                 f"policy {self.scheduler.name} decides the stage-outs: it needs the three-phase "
                                 "job model")
            self.job_model.stage_out_decided = True
        self.dynamic_jobs = bool(cfg.get("dynamic-jobs-enabled", False))

    def _job(self, ev: JobSubmitted) -> tuple[Job, str, dict]:
        """The job request of a JOB_SUBMITTED, its workload name and its profile object. The job object is checked by the
        workload rules (`burstbuffer.workloads.batsim_rules.check_job`, docs/workload.md); a walltime of
        −1 (none) becomes +inf, the profile's ``bb`` (bytes per node) the request's `bb`, the job's ``bb_in``,
        ``bb_run``, ``bb_out`` its phase amounts (derived from the profile where absent, `phase_bb`).
        Raises ProtocolError (a malformed Batsim message: exit status 1, docs/faults.md)."""
        j = ev.job
        workload, _, _ = ev.job_id.partition("!")
        try:
            _, subtime, walltime, res, pname = check_job(j, f"job {excerpt(ev.job_id)}")
        except DefinitionError as exc:
            raise _bad_job(ev.job_id, exc.reason) from None
        profile = ev.profile or (self.profiles.get(workload) or {}).get(pname) or {}
        try:
            bb = int(profile.get("bb", 0) or 0)
            job = Job(ev.job_id, float(subtime), float(walltime) if walltime > 0 else math.inf, res,
                      bb, pname,
                      float(j.get("project_weight", profile.get("project_weight", 1.0))),
                      str(j.get("queue", profile.get("queue", "")) or ""))
            given = check_phase_bb(j, f"job {excerpt(ev.job_id)}")
            derived = phase_bb(profile, bb)
            job.bb_in, job.bb_run, job.bb_out = (given.get(k, d) for k, d in
                                                 zip(("bb_in", "bb_run", "bb_out"), derived))
            if "bb" not in profile:
                self.profiles_without_bb.add((workload, pname))
        except (TypeError, ValueError) as exc:
            raise _bad_job(ev.job_id, exc) from None
        return job, workload, profile

    def _submitted(self, ev: JobSubmitted, ts: float, out: Outbox) -> None:
        if self.scheduler is None:
            peer_error(f"JOB_SUBMITTED at t={ts:g} for job {excerpt(ev.job_id)} before SIMULATION_BEGINS", True)
        if ev.job_id in self.records:
            peer_error(f"JOB_SUBMITTED at t={ts:g} for job {excerpt(ev.job_id)}, which was already submitted",
                       self.strict_peer)
            return
        job, workload, profile = self._job(ev)
        rec = JobRecord(job, workload)
        self.records[job.id] = rec
        reason = self.job_model.cannot_carry(profile) or self.scheduler.can_ever_fit(job)
        if reason is not None:
            rec.state, rec.reason = "REJECTED", reason
            out.add(RejectJob(job.id), ts)
            if _LOG.isEnabledFor(logging.DEBUG):
                _LOG.debug("t=%g job %s rejected: %s", ts, job.id, reason)
            self._ended()
            return
        self.scheduler.submit(job, ts)
        if _LOG.isEnabledFor(logging.DEBUG):
            _LOG.debug("t=%g job %s submitted: %d nodes, walltime %s s, bb %s B per node", ts, job.id, job.res,
                       job.walltime, getattr(job, "bb", "?"))
        self._dirty = True

    def _completed(self, ev: JobCompleted, ts: float, out: Outbox) -> None:
        try:
            self._executing.remove(ev.job_id)
        except KeyError:
            peer_error(f"JOB_COMPLETED at t={ts:g} for job {excerpt(ev.job_id)}, which is not executing (unknown, never "
                       "started or already ended)", self.strict_peer)
            return
        done = self.job_model.on_completed(ev, ts, out)
        if self.job_model.stages_separately:
            self._phase_events(ts)
        if done is not None:                  # most completions are a sub-job's: its job goes on
            self._job_done(done, ts)

    def _phase_events(self, ts: float) -> None:
        """Tell the policy the job model's phase changes (`take_phase_events`) at `ts` [s]."""
        for kind, job_id in self.job_model.take_phase_events():
            if kind == "staged":
                self.records[job_id].staged_at = ts
                self.scheduler.stage_in_done(job_id, ts)
            elif kind == "computed":                     # its BB is the policy's again until its StageOut
                self.records[job_id].holds.append((ts, "computed", {}))
                if self._guard is not None:
                    self._guard.ledger.take(job_id, self.records[job_id], {})
                self.scheduler.job_computed(job_id, ts)
            else:
                rec = self.records[job_id]             # output written: the stage-out, past the walltime, begins
                rec.holds.append((ts, "released", rec.holds[-1][2] if rec.holds else rec.bb_alloc))
                if self._releases_nodes:               # else the policy holds them until the job ends
                    self.records[job_id].nodes_end = ts
                self.scheduler.nodes_released(job_id, ts)
            self._dirty = True

    def _job_done(self, done: tuple[str, str] | None, ts: float) -> None:
        """Record the end of an original job (`done`: its id and final state; None: nothing ended)."""
        if done is None:
            return
        job_id, state = done
        rec = self.records[job_id]
        rec.end, rec.state = ts, state
        if _LOG.isEnabledFor(logging.DEBUG):
            _LOG.debug("t=%g job %s ended: %s", ts, job_id, state)
        if rec.nodes_start is not None and rec.nodes_end is None:   # ended on its nodes (killed, failed)
            rec.nodes_end = ts
        self.ended_ids.append(job_id)      # the run's parent is told of ended jobs at once (`colocated.JobsMirror`)
        self.scheduler.job_ended(job_id, ts)
        self._dirty = True
        self._ended()

    def unfinished(self) -> tuple[int, int]:
        """(running, pending): the jobs without a final state, started or not (jobs.csv's RUNNING / PENDING)."""
        running = pending = 0
        for rec in self.records.values():
            if not rec.state:
                if rec.start is None:
                    pending += 1
                else:
                    running += 1
        return running, pending

    def _ended(self) -> None:
        self.ended += 1
        if self.on_progress is not None:
            self.on_progress(self.ended, len(self.records))

    # ------------------------------------------------------------------ decisions
    def _after_events(self, now: float, out: Outbox) -> None:
        sched = self.scheduler
        if sched is None:
            return
        self.job_model.flush(now, out)
        again = True
        while self._dirty and again:
            # a policy that decides the stage-outs is asked again while its decisions changed a phase at once
            # (a step with nothing to move); the others once, as always
            again = getattr(self.job_model, "stage_out_decided", False)
            self._dirty = False
            if self._guard is None:   # the policy's decisions, checked (docs/reliability.md)
                self._guard = DecisionGuard(self.platform, self.policy_label or sched.name, self.decision_timeout)
            for start in self._guard.decide(sched, now, self.records):
                rec = self.records[start.job.id]
                if isinstance(start, StageIn):    # docs/io-model.md §3: BB only, the job stays pending
                    if not self.job_model.stages_separately:
                        raise InputError("--model", self.job_model.name,
                                         f"policy {sched.name} needs the three-phase job model")
                    rec.start, rec.bb_alloc = now, start.bb_per_storage
                    rec.holds.append((now, "stage-in", rec.bb_alloc))
                    rec._close_wait(now)
                    self.job_model.stage_in(start, now, out)
                    continue
                if isinstance(start, StageOut):   # a decides_stage_out policy: the output of a computed job
                    rec.holds.append((now, "stage-out", start.bb_per_storage))
                    self._job_done(self.job_model.stage_out(start, now, out), now)
                    continue
                if rec.start is None:              # waiting time ends at the first held resource
                    rec.start = now
                    rec._close_wait(now)
                rec.procs, rec.bb_alloc = start.procs, start.bb_per_storage
                rec.nodes_start = now
                rec.holds.append((now, "run", rec.bb_alloc))
                if _LOG.isEnabledFor(logging.DEBUG):
                    _LOG.debug("t=%g job %s started on nodes %s, BB %s", now, start.job.id, start.procs,
                               start.bb_per_storage)
                facts = sched.job_facts
                if facts:
                    rec.facts = facts.pop(start.job.id, rec.facts)
                self.job_model.start(start, now, out)
            if again:
                self._phase_events(now)
            # why the others wait, until the next decision (docs/wait-reasons.md)
            records = self.records
            reasons = sched.wait_reasons_changed   # only the jobs whose reason changed
            if reasons is None:
                reasons = sched.wait_reasons
            for job_id, reason in reasons.items():
                rec = records[job_id]
                if reason != rec.wait_reason:
                    rec.wait_for(reason, now)
            wake = sched.wakeup(now)
            if wake is not None and wake > now and wake not in self._pending_calls:
                self._pending_calls.add(wake)
                out.add(CallMeLater(wake), now)
        if (self.dynamic_jobs and not self.registration_finished and self.all_submitted
                and not sched.queue and not self.job_model.busy):
            self.registration_finished = True
            out.add(NotifyBatsim("registration_finished"), now)
        started = out.started
        if started:
            self._executing.update(started)
            self.last_started = started

    # ------------------------------------------------------------------ outputs
    def write_jobs_csv(self, path: str, *, mark_unfinished: bool = False) -> None:
        """One row per original job (`JOBS_CSV_COLUMNS`: Batsim's `_jobs.csv` columns + bb_per_node,
        bb_allocation, bounded_slowdown), in submission order; written atomically. `mark_unfinished` (a run
        that stopped before SIMULATION_ENDS): a job without a final state gets final_state RUNNING (started)
        or PENDING (not started), Slurm's names for them. With queues or a priority order (wfp) two more
        columns, `queue` and `priority` (at start, "" if none), and only then: other runs' files are
        unchanged (docs/orders-and-queues.md). Under a job model with phases (three-phase) the
        `THREE_PHASE_COLUMNS` come last (docs/io-model.md §3)."""
        from .fileio import open_output, removing_on_error
        tmp = f"{path}.tmp"
        with removing_on_error(tmp):           # a full disk leaves neither a half table nor the temporary file
            with open_output(tmp, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=self.jobs_csv_columns())
                w.writeheader()
                for rec in sorted(self.records.values(), key=lambda r: (r.job.subtime, r.job.id)):
                    w.writerow(self.job_row(rec, mark_unfinished))
            os.replace(tmp, path)
        if self.job_model.stages_separately:
            from .metrics.runinfo import BB_HOLDS_CSV
            write_bb_holds(self.records.values(), os.path.join(os.path.dirname(path), BB_HOLDS_CSV))

    def jobs_csv_columns(self) -> list[str]:
        """The columns of jobs.csv (`write_jobs_csv`)."""
        extra = list(self.scheduler.extra_job_columns or []) if self.scheduler is not None else []
        return (list(JOBS_CSV_COLUMNS) + extra
                + (list(THREE_PHASE_COLUMNS) if self.job_model.stages_separately else []))

    def job_row(self, rec: JobRecord, mark_unfinished: bool) -> dict:
        """The jobs.csv row of `rec` (`write_jobs_csv`)."""
        row = rec.row()
        if mark_unfinished and not row["final_state"]:
            row["final_state"] = "PENDING" if rec.start is None else "RUNNING"
        if self.scheduler is not None and self.scheduler.extra_job_columns:
            q, prio = rec.facts
            row["queue"] = q
            row["priority"] = "" if prio is None else f"{prio:.9g}"
        if self.job_model.stages_separately:
            row.update(rec.phase_row())
        return row
