"""What a policy works with: jobs, start decisions, and the Scheduler interface the decision loop drives.

A policy is pure decision logic (docs/README.md): no I/O, no JSON, no sockets, no clock reads, no global
random state. The decision loop (`burstbuffer.batsim.loop`) calls `submit`, `job_ended` and `decide`.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from procset import ProcSet


@dataclass
class Job:
    """A rigid job as the scheduler sees it: the one typed job request of the scheduler side.

    `burstbuffer.app.SchedulerApp` builds it from Batsim's JOB_SUBMITTED (the job object and its
    profile's ``bb`` field; a walltime of −1, none, becomes +inf). Distinct concepts with their own
    names: `burstbuffer.workloads.WorkloadJob` (an entry of a workload file, as written) and
    `burstbuffer.simulator.workload.SimJob` (the embedded simulator's state of a job).
    The BB request model: ``docs/workload.md``.

    Attributes:
        id: Batsim job id, e.g. ``"w0!15"``.
        subtime: submission time [s].
        walltime: user's upper bound on the run time [s] (> 0).
        res: number of compute nodes (processors) requested.
        bb: burst-buffer request per compute node [bytes] (docs/workload.md; 0 if none).
        profile: Batsim profile name (opaque to policies).
        weight: project weight of the WFP order (Allcock et al. 2017 §4 eq. 1; 1 unless the job carries one).
        queue: the queue the job asks for by name ("" = routed by its processors and walltime;
            docs/orders-and-queues.md).
        bb_in, bb_run, bb_out: burst-buffer space per compute node [bytes] of the three phases (Yan et al.,
            Cerberus, §2 and §3: stage-in, running — checkpoints, beside the staged input — and output), read by
            the ``phases="as-written"`` Cerberus only (docs/workload.md "Phase amounts"). The app sets them from
            the job's fields or derives them from its profile (`burstbuffer.io_model.io_aware.phase_bb`); None
            (a job built without them) reads as (bb, 0, bb), the one-amount model (`phase_bb`'s result for a
            profile without I/O fields and one compute phase).
    """

    id: str
    subtime: float
    walltime: float
    res: int
    bb: int = 0
    profile: str = ""
    weight: float = 1.0
    queue: str = ""
    bb_in: int | None = None
    bb_run: int | None = None
    bb_out: int | None = None

    @property
    def bb_total(self) -> int:
        """Total BB request [bytes] = res × bb."""
        return self.res * self.bb

    @property
    def phase_bb(self) -> tuple[int, int, int]:
        """(bb_in, bb_run, bb_out) [bytes per compute node]; an absent one as the one-amount model: bb, 0, bb."""
        return (self.bb if self.bb_in is None else self.bb_in, 0 if self.bb_run is None else self.bb_run,
                self.bb if self.bb_out is None else self.bb_out)


@dataclass
class Start:
    """Decision: start `job` now on compute nodes `procs`.

    `bb_of_node` maps each compute node id of `procs` to the BB node (storage resource id) that
    holds its `job.bb` bytes (docs/platform.md chassis → group → any preference). `bb_per_storage` is the
    derived total bytes per BB node. `share`: the bytes each compute node holds on its BB node from now on, if
    not `job.bb` (the as-written Cerberus: bb_in + bb_run while running).
    """

    job: Job
    procs: ProcSet
    bb_of_node: dict[int, int] = field(default_factory=dict)
    share: int | None = None

    @property
    def bb_per_storage(self) -> dict[int, int]:
        out: dict[int, int] = {}
        b = self.job.bb if self.share is None else self.share
        for bbn in self.bb_of_node.values():
            out[bbn] = out.get(bbn, 0) + b
        return out


@dataclass
class StageIn:
    """Decision of a three-phase policy (docs/io-model.md §3): start `job`'s stage-in now, holding BB only.

    `bb_slots[k]` is the BB node (storage resource id) that holds the `job.bb` bytes of the job's k-th
    compute node (len = job.res). The job stays pending (no compute nodes) until a later `Start` of the
    same job; its compute nodes are then mapped to the slots in increasing id order. `share`: the bytes held
    per slot, if not `job.bb` (the as-written Cerberus: bb_in).
    """

    job: Job
    bb_slots: tuple[int, ...]
    share: int | None = None

    @property
    def bb_per_storage(self) -> dict[int, int]:
        out: dict[int, int] = {}
        b = self.job.bb if self.share is None else self.share
        for bbn in self.bb_slots:
            out[bbn] = out.get(bbn, 0) + b
        return out


@dataclass
class StageOut:
    """Decision of a policy that decides the stage-outs (`Scheduler.decides_stage_out`; Yan et al., Cerberus,
    §3.2, Problem 1 on Q_O): `job` has ended its computation and holds its nodes; it now writes its output to
    the BB (`share` bytes per compute node on the BB node of each of its `bb_slots`, as in `StageIn`), releases
    its nodes and drains the output to the PFS (docs/io-model.md §3)."""

    job: Job
    bb_slots: tuple[int, ...]
    share: int = 0

    @property
    def bb_per_storage(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for bbn in self.bb_slots:
            out[bbn] = out.get(bbn, 0) + self.share
        return out


class Scheduler(ABC):
    """State of one scheduling run: the queue, the running jobs, the availability profile.

    Lifecycle, driven by the decision loop (times in seconds, non-decreasing):
    - `submit(job, now)`: a job enters the queue. The loop rejects beforehand any job that can
      never fit the platform (`can_ever_fit`).
    - `job_ended(job_id, now)`: a started job released its processors and BB.
    - `decide(now) -> list[Start]`: the jobs to start now; they leave the queue and their
      resources are held until `job_ended`. A three-phase policy may also return `StageIn`
      decisions (job model ``three-phase`` only), and is then told `stage_in_done` and
      `nodes_released` (docs/io-model.md §3).
    - `wakeup(now) -> float | None`: optional time (> now) at which `decide` must be called
      again even if nothing happens (e.g. periodic scheduling); None = only on events.

    Every other hook the app calls is declared below with its default: `bind_job_model`,
    `frees_nodes_before_stage_out`, `stage_in_done`, `nodes_released`, `decides_stage_out`, `job_computed`,
    `job_facts`, `wait_reasons_changed`,
    `wait_reasons`, `extra_job_columns`, `write_outputs`. The user-facing subclass is `api.Policy`
    (docs/writing-a-policy.md); the built-in policies are `profile_scheduler.ProfileScheduler` subclasses.
    """

    name: str = "?"

    #: the options the policy takes (`burstbuffer.schedulers.options.Option`: type, range, meaning, command-line
    #: alias), each a keyword of `build` / the constructor, whose default is the constructor's. The one
    #: declaration `burstbuffer policies`, the options check, the docs' options page and every command's flags
    #: read (docs/policy-options.md). A user class adds its own keyword parameters to it.
    declared_options: tuple = ()

    #: capability: the policy decides stage-ins apart from the nodes (`StageIn`, `StageOut`), so it needs a job
    #: model that stages separately (``three-phase``, `burstbuffer.io_model.base.JobModel.stages_separately`);
    #: checked once, when the run's `SchedulerSpec` is made.
    needs_staged_model: bool = False

    @classmethod
    def build(cls, platform, *, seed: int = 0, **options) -> "Scheduler":
        """The policy for `platform` with `options` (its `declared_options`; TypeError / ValueError on bad
        ones): ``cls(platform, seed=seed, **options)``, as a built-in policy's `registry.Preset.build`."""
        return cls(platform, seed=seed, **options)

    @classmethod
    def options_conflict(cls, options: dict) -> str | None:
        """Why `options` (option name → value: the given ones over the defaults) cannot go together for this
        policy — a rule no single option's declared range states (e.g. a window too wide for an exact
        solver) — in one line, or None. The constructor applies the same rule, so that
        checking a run's options builds no policy (`burstbuffer.schedulers.options.check_options`).
        Default: no such rule."""
        return None

    @abstractmethod
    def can_ever_fit(self, job: Job) -> str | None:
        """None if `job` fits the empty platform, else the reason (one line) it never can."""

    @abstractmethod
    def submit(self, job: Job, now: float) -> None: ...

    @abstractmethod
    def job_ended(self, job_id: str, now: float) -> None: ...

    @abstractmethod
    def decide(self, now: float) -> list[Start]: ...

    def wakeup(self, now: float) -> float | None:
        return None

    def bind_job_model(self, model) -> None:
        """Called once by the app at SIMULATION_BEGINS, before any job, with the job model the run uses (a
        `burstbuffer.io_model.base.JobModel`: its ``stages_separately`` and ``hold_shape(job, bandwidth)``
        give the shape of a job's holds, `burstbuffer.schedulers.holds`). Default: ignored (the policy plans
        two-phase holds). `profile_scheduler.ProfileScheduler` plans with the model's shapes."""

    @property
    def frees_nodes_before_stage_out(self) -> bool:
        """True if this policy frees a job's nodes when its running phase ends (three-phase "nodes-released",
        `nodes_released`) rather than at its end: the app then records the node release in jobs.csv.
        Default: whether the class overrides `nodes_released`."""
        return type(self).nodes_released is not Scheduler.nodes_released

    #: job id → (queue name, priority at start) of the started jobs, taken by the app for jobs.csv's ``queue``
    #: and ``priority`` columns (`extra_job_columns`); None: none (docs/orders-and-queues.md)
    job_facts: dict[str, tuple[str, float | None]] | None = None
    #: job id → wait reason (`burstbuffer.metrics.definitions.WAIT_REASONS`) of the jobs whose reason changed at
    #: the last `decide`; None: the app reads `wait_reasons` whole (docs/wait-reasons.md)
    wait_reasons_changed: dict[str, str] | None = None

    @property
    def wait_reasons(self) -> dict[str, str]:
        """Job id → wait reason of every queued job after the last `decide` (docs/wait-reasons.md); {} by default
        (the app then records none)."""
        return {}

    @property
    def extra_job_columns(self) -> list[str]:
        """Columns this policy adds to jobs.csv (values from `job_facts`): [] by default."""
        return []

    def write_outputs(self, folder: str) -> None:
        """Write the policy's own output files into the run's output `folder` at the end of a run (e.g. a
        window policy's decisions.csv). Default: nothing."""

    # Three-phase notifications (docs/io-model.md §3). The defaults keep the two-phase contract:
    # a policy that never returns `StageIn` holds a started job's nodes and BB until `job_ended`.
    def stage_in_done(self, job_id: str, now: float) -> None:
        """The stage-in of `job_id` (a `StageIn` decision) finished at `now` [s]: it may now be started (`Start`)."""

    def nodes_released(self, job_id: str, now: float) -> None:
        """The running phase of `job_id` ended at `now` [s] (its output is on the BB): its compute nodes
        are free; its BB stays held until `job_ended` (end of its stage-out). Default: ignored, the
        nodes stay held until `job_ended` as in the two-phase models."""

    #: True if this policy decides when a job that ended its computation writes its output and stages it out
    #: (a `StageOut` decision after `job_computed`); False (default): the job model does it at once
    decides_stage_out: bool = False

    def job_computed(self, job_id: str, now: float) -> None:
        """(`decides_stage_out` policies only) `job_id` ended its computation at `now` [s]: it holds its nodes
        and waits for the policy's `StageOut`. Default: ignored."""

    @property
    @abstractmethod
    def queue(self) -> list[Job]:
        """Jobs submitted and not started, in submission order."""
