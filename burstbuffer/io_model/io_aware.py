"""The I/O-aware job model (docs/io-model.md; Kopanski & Rzadca 2021, §4.1, Fig. 4) as Batsim dynamic sub-jobs.

A started job is replaced by sub-jobs registered in its own workload ``<workload>%<job>``
(docs/protocol.md), carried out in this order:

1. stage-in: PFS → BB node, ``data_staging``; one sub-job per BB node the job uses, carrying the
   bytes of all its compute nodes placed there (fewer activities than one per compute node; the PFS
   link is shared max-min, so the aggregate rate is the same while the PFS link is the bottleneck);
2. n compute phases, n = min(max(round(cpu / 3600 Gflop), 1), 10), ``parallel_homogeneous`` with
   cpu/n flops per node and the job's `com`, on all its compute nodes;
3. after each phase but the last, a checkpoint: ``parallel_homogeneous_pfs`` writing 0.5 × bb per
   compute node to its BB node (one sub-job per BB node, on the compute nodes placed there); then a
   drain BB → PFS of the same bytes (``data_staging``) runs beside the next compute phase;
4. stage-out: bb per compute node BB → PFS (``data_staging``, one per BB node).

A profile may set the volumes itself, bytes per compute node (`burstbuffer workload io-from-darshan`,
docs/inputs-traces.md): ``io_stage_in``, ``io_checkpoint`` (one checkpoint, and its drain) and ``io_stage_out``
(in three-phase also the output step) replace bb, 0.5 × bb and bb; a missing one keeps its default. The BB
space the policies reserve stays ``bb``.

The job ends when its stage-out and every drain have finished. The walltime bounds the whole job:
each sub-job gets what is left of it (none, −1, for a job without walltime); a sub-job ending in any state but COMPLETED_SUCCESSFULLY ends
the job in that state (its other running sub-jobs are killed).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from procset import ProcSet

from ..batsim.loop import Outbox
from ..batsim.protocol import (JobCompleted, KillJob, RegisterProfile, RejectJob, alloc_text, execute_job_text,
                               mapping_text, register_job_text)
from ..schedulers.base import Start
from ..schedulers.placement import procset_of
from ..workloads.phases import FLOPS_PER_PHASE, MAX_PHASES, nb_phases  # noqa: F401  (the phases of a job)
from .base import JobModelBase

#: docs/io-model.md: a checkpoint writes this fraction of the BB request per node.
CHECKPOINT_FRACTION = 0.5
#: Profile fields that set a step's bytes per compute node (module docstring): step → field.
IO_FIELDS = {"stage_in": "io_stage_in", "checkpoint": "io_checkpoint", "stage_out": "io_stage_out"}
#: The one profile type the model splits into phases (module docstring): ``cpu`` flops per node and ``com``
#: bytes per pair of nodes, two numbers (Batsim 4.2.1's ``parallel_homogeneous``). A job of another type is
#: rejected (`IOAwareModel.cannot_carry`).
PHASED_TYPE = "parallel_homogeneous"
#: Storage label of checkpoint profiles, and of data-staging endpoints (as the paper's artifact).
BB_LABEL, SRC_LABEL, DST_LABEL = "burstbuffer", "source", "destination"


def step_volume(io: dict[str, float] | None, bb: float, step: str) -> float:
    """Bytes per compute node of `step` ("stage_in", "checkpoint", "stage_out"): the profile's own (`io`: step →
    bytes, from `IO_FIELDS`), else bb (CHECKPOINT_FRACTION × bb for a checkpoint)."""
    if io is not None and step in io:
        return io[step]
    return CHECKPOINT_FRACTION * bb if step == "checkpoint" else bb


def phased_work(profile: dict) -> tuple[float, float] | None:
    """(cpu [flop per node], com [bytes per pair of nodes]) of a `PHASED_TYPE` profile whose two are numbers;
    None for any other profile (another type: a ``parallel`` profile's lists, a delay, a composed profile)."""
    if profile.get("type") != PHASED_TYPE:
        return None
    cpu, com = profile.get("cpu", 0.0), profile.get("com", 0.0)
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (cpu, com)):
        return None
    return float(cpu), float(com)


def phase_bb(profile: dict, bb: int) -> tuple[int, int, int]:
    """The BB space per compute node [bytes] of a job's three phases (Yan et al., Cerberus, §2: stage-in,
    running, stage-out; §3.1: the three uses of the BB — staged input, checkpoints, output) when its workload
    gives none (docs/workload.md "Phase amounts"): what this model moves in each phase, rounded to bytes —
    bb_in = the stage-in's bytes, bb_run = one checkpoint's bytes (0 for a job of one compute phase, which
    writes none, nor does a profile the model does not split into phases, `phased_work`), bb_out = the
    output's bytes. `profile`: the job's profile (its ``cpu`` and `IO_FIELDS`); `bb`: its BB request per node."""
    io = {step: float(profile[key]) for step, key in IO_FIELDS.items() if key in profile}
    work = phased_work(profile)
    ckpt = step_volume(io, bb, "checkpoint") if work is not None and nb_phases(work[0]) > 1 else 0.0
    return (int(round(step_volume(io, bb, "stage_in"))), int(round(ckpt)), int(round(step_volume(io, bb, "stage_out"))))


@dataclass
class _Run:
    """A started original job, while its sub-jobs run."""

    start: Start
    workload: str
    deadline: float
    cpu: float
    com: float
    phases: int
    phase: int = 0                                   # compute phases done
    step: str = "stage-in"                           # stage-in | compute | checkpoint | stage-out
    waiting: set[str] = field(default_factory=set)   # sub-jobs the current step waits for
    drains: set[str] = field(default_factory=set)    # drains in flight
    profiles: dict[str, str] = field(default_factory=dict)  # profile key → registered name
    next_sub: int = 0
    groups: dict[int, ProcSet] = field(default_factory=dict)  # BB node → compute nodes placed there
    #: BB node → compute-node shares: the compute nodes placed there (`groups`' sizes), or, while a three-phase job
    #: holds no nodes, its BB slots there
    counts: dict[int, int] = field(default_factory=dict)
    io: dict[str, float] | None = None    # volumes the profile sets (IO_FIELDS), bytes per compute node
    #: the machines of its compute phases and of its groups (BB node → compute nodes), as EXECUTE_JOB writes them
    #: (`alloc_text`), written at their first sub-job
    alloc: str | None = None
    group_allocs: dict[int, str] | None = None

    def volume(self, step: str) -> float:
        """Bytes per compute node of `step` ("stage_in", "checkpoint", "stage_out"): the profile's own
        (IO_FIELDS), else bb (0.5 × bb for a checkpoint, CHECKPOINT_FRACTION)."""
        return step_volume(self.io, self.start.job.bb, step)


class IOAwareModel(JobModelBase):
    """Job model "io-aware" (implements `JobModel`, docs/io-model.md): see the module docstring.

    Needs Batsim's dynamic jobs and profile reuse (``--enable-dynamic-jobs --enable-profile-reuse``)
    and the storage roles of the BB nodes and the PFS. `begin(platform, profiles)` is called at
    SIMULATION_BEGINS with the workloads' profiles ({workload: {name: profile}}).
    """

    name = "io-aware"
    uses_dynamic_jobs = True

    def __init__(self) -> None:
        self.pfs: int | None = None
        self.profiles: dict[str, dict[str, dict]] = {}
        self._runs: dict[str, _Run] = {}            # original job id → run
        self._owner: dict[str, str] = {}            # sub-job id → original job id
        self._dead: set[str] = set()                # killed sub-jobs whose completion is ignored
        self._to_kill: set[str] = set()             # kills to send once this message is processed
        self.subjobs = 0
        #: BB node → the machines of its data stagings with the PFS and their storage mappings, as text (`_pair`)
        self._pairs: dict[int, tuple[str, str, str]] = {}
        self._bb_maps: dict[int, str] = {}          # BB node → a checkpoint's storage mapping, as text

    def begin(self, platform, profiles: dict[str, dict[str, dict]]) -> None:
        if platform.pfs is None:
            from ..errors import InputError
            raise InputError("platform", "pfs", "the io-aware model needs a storage host named pfs")
        self.pfs = platform.pfs
        self._pairs, self._bb_maps = {}, {}
        self.profiles = profiles

    @property
    def busy(self) -> bool:
        return bool(self._runs)

    def cannot_carry(self, profile: dict) -> str | None:
        """Why the model cannot run a job of `profile`: it is not a `PHASED_TYPE` profile of two numbers
        (`phased_work`); None when it is."""
        if phased_work(profile) is not None:
            return None
        ptype = profile.get("type")
        what = f"a {ptype} profile" if ptype != PHASED_TYPE else "one whose cpu or com is not a number"
        return (f"the {self.name} job model splits {PHASED_TYPE} profiles into phases, not {what} "
                "(--model alloc-only runs any profile)")

    # ------------------------------------------------------------------ starting
    def _new_run(self, start: Start, deadline: float) -> _Run:
        """A run of `start.job` (its profile's cpu/com, its sub-job workload) whose sub-jobs end by `deadline` [s]."""
        job = start.job
        workload, _, local = job.id.partition("!")
        prof = (self.profiles.get(workload) or {}).get(job.profile) or {}
        cpu, com = phased_work(prof) or (0.0, 0.0)
        run = _Run(start, f"{workload}%{local}", deadline, cpu, com, nb_phases(cpu))
        io = {step: float(prof[key]) for step, key in IO_FIELDS.items() if key in prof}
        if io:
            run.io = io
        self._runs[job.id] = run
        return run

    @staticmethod
    def _place(run: _Run, start: Start) -> None:
        """`run.groups`: BB node → the compute nodes of `start` placed there, by BB node id; `run.counts`: their
        numbers."""
        masks: dict[int, int] = {}          # BB node → bitmask of its compute nodes (one ProcSet built per group)
        for node in start.procs:
            bbn = start.bb_of_node.get(node)
            if bbn is not None:
                masks[bbn] = masks.get(bbn, 0) | (1 << node)
        masks = dict(sorted(masks.items()))
        run.groups = {b: procset_of(m) for b, m in masks.items()}
        run.counts = {b: m.bit_count() for b, m in masks.items()}
        run.alloc = run.group_allocs = None

    def start(self, start: Start, now: float, out: Outbox) -> None:
        job = start.job
        run = self._new_run(start, now + job.walltime)
        self._place(run, start)
        # The static job is replaced by its sub-jobs (as the paper's artifact does, docs/protocol.md).
        out.add(RejectJob(job.id), now)
        self._stage(run, now, out, "stage-in", run.volume("stage_in"))

    # ------------------------------------------------------------------ steps
    def _profile(self, run: _Run, key: str, profile: dict, out: Outbox, now: float) -> str:
        """The name of `run`'s profile `key`, registered as `profile` the first time (callers look `key` up in
        `run.profiles` first: most sub-jobs reuse a profile)."""
        name = run.profiles.get(key)
        if name is None:
            name = f"{profile['type']}_{len(run.profiles)}"
            run.profiles[key] = name
            out.add(RegisterProfile(run.workload, name, profile), now)
        return name

    def _submit(self, run: _Run, profile: str, res: int, alloc: str, more: str, out: Outbox, now: float,
                wait: bool) -> str:
        """Register and execute the next sub-job of `run` at `now` [s]: `res` machines `alloc` (as `alloc_text`
        writes them), `more` its EXECUTE_JOB's storage mapping as text (`mapping_text`, or ""); both decisions
        are written as text at once (`protocol.register_job_text`, `execute_job_text`)."""
        sub = f"{run.workload}!{run.next_sub}"
        run.next_sub += 1
        self.subjobs += 1
        walltime = run.deadline - now if run.deadline != math.inf else -1   # -1: no walltime (Batsim)
        out.add_text(register_job_text(sub, now, walltime, res, profile), now)
        out.add_text(execute_job_text(sub, alloc, more), now, sub)
        self._owner[sub] = run.start.job.id
        (run.waiting if wait else run.drains).add(sub)
        return sub

    def _stage(self, run: _Run, now: float, out: Outbox, step: str, bytes_per_node: float) -> None:
        """Data staging between the PFS and each BB node the job uses (stage-in, drain, stage-out)."""
        run.step = step if step != "drain" else run.step
        inbound = step == "stage-in"
        for bbn, n in run.counts.items():
            nb = int(round(bytes_per_node * n))
            if nb <= 0:
                continue
            key = f"ds{nb}"
            name = run.profiles.get(key) or self._profile(run, key, {"type": "data_staging", "nb_bytes": nb,
                                                                     "from": SRC_LABEL, "to": DST_LABEL}, out, now)
            alloc, from_pfs, to_pfs = self._pair(bbn)
            self._submit(run, name, 2, alloc, from_pfs if inbound else to_pfs, out, now, wait=step != "drain")
        if step != "drain" and not run.waiting:
            self._advance(run, now, out)

    def _pair(self, bbn: int) -> tuple[str, str, str]:
        """The machines of a data staging between BB node `bbn` and the PFS, and its storage mappings from the PFS
        and to it, as text; made once per BB node."""
        pair = self._pairs.get(bbn)
        if pair is None:
            pair = self._pairs[bbn] = (
                alloc_text(ProcSet(bbn, self.pfs)),
                mapping_text("storage_mapping", {SRC_LABEL: self.pfs, DST_LABEL: bbn}),
                mapping_text("storage_mapping", {SRC_LABEL: bbn, DST_LABEL: self.pfs}))
        return pair

    def _on_groups(self, run: _Run, name: str, out: Outbox, now: float) -> None:
        """One sub-job of profile `name` per BB node of `run` on the compute nodes placed there, its storage
        ``burstbuffer`` that BB node (checkpoints; three-phase's output)."""
        allocs = run.group_allocs
        if allocs is None:
            allocs = run.group_allocs = {b: alloc_text(nodes) for b, nodes in run.groups.items()}
        maps = self._bb_maps
        for bbn, alloc in allocs.items():
            more = maps.get(bbn)
            if more is None:
                more = maps[bbn] = mapping_text("storage_mapping", {BB_LABEL: bbn})
            self._submit(run, name, run.counts[bbn], alloc, more, out, now, wait=True)

    def _compute(self, run: _Run, now: float, out: Outbox) -> None:
        run.step = "compute"
        job = run.start.job
        name = run.profiles.get("compute") or self._profile(run, "compute", {
            "type": "parallel_homogeneous", "cpu": run.cpu / run.phases, "com": run.com}, out, now)
        if run.alloc is None:
            run.alloc = alloc_text(run.start.procs)
        self._submit(run, name, job.res, run.alloc, "", out, now, wait=True)

    def _checkpoint(self, run: _Run, now: float, out: Outbox) -> None:
        run.step = "checkpoint"
        nb = int(round(run.volume("checkpoint")))
        if nb > 0:
            name = self._profile(run, "ckpt", {"type": "parallel_homogeneous_pfs", "bytes_to_read": 0,
                                               "bytes_to_write": nb, "storage": BB_LABEL}, out, now)
            self._on_groups(run, name, out, now)
        if not run.waiting:
            self._advance(run, now, out)

    def _advance(self, run: _Run, now: float, out: Outbox) -> None:
        """The current step finished: start the next one."""
        if run.step == "stage-in":
            self._compute(run, now, out)
        elif run.step == "compute":
            run.phase += 1
            if run.phase < run.phases:
                self._checkpoint(run, now, out)
            else:
                self._stage(run, now, out, "stage-out", run.volume("stage_out"))
        elif run.step == "checkpoint":
            self._stage(run, now, out, "drain", run.volume("checkpoint"))
            self._compute(run, now, out)
        elif run.step == "stage-out":
            run.step = "done"

    # ------------------------------------------------------------------ completions
    def _kill(self, subs: set[str]) -> None:
        self._dead.update(subs)
        self._to_kill.update(subs)

    def flush(self, now: float, out: Outbox) -> None:
        """Send the KILL_JOBs decided while handling a message, once all its events are seen: a
        sub-job whose completion arrived in the same message is not killed (Batsim refuses to kill
        a job it already reported)."""
        if self._to_kill:
            out.add(KillJob(sorted(self._to_kill)), now)
            self._to_kill.clear()

    def on_completed(self, ev: JobCompleted, now: float, out: Outbox) -> tuple[str, str] | None:
        owner = self._owner.pop(ev.job_id, None)
        if owner is None:
            return None
        if ev.job_id in self._dead:
            self._dead.discard(ev.job_id)
            self._to_kill.discard(ev.job_id)          # ended on its own: no KILL_JOB for it
            return None
        run = self._runs[owner]
        run.waiting.discard(ev.job_id)
        run.drains.discard(ev.job_id)
        if ev.job_state != "COMPLETED_SUCCESSFULLY":
            self._kill(run.waiting | run.drains)
            del self._runs[owner]
            return owner, ev.job_state
        if not run.waiting and run.step != "done":
            if now >= run.deadline:           # nothing left of the walltime for the next step
                self._kill(run.drains)
                del self._runs[owner]
                return owner, "COMPLETED_WALLTIME_REACHED"
            self._advance(run, now, out)
        if run.step == "done" and not run.waiting and not run.drains:
            del self._runs[owner]
            return owner, "COMPLETED_SUCCESSFULLY"
        return None
