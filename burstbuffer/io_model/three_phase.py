"""The three-phase job model (docs/io-model.md §3; Yan et al., *Cerberus: A 3-Phase Burst Buffer Aware
Batch Scheduler for HPC Systems*, §2; Slurm's burst-buffer stage-in/stage-out as Kopanski & Rzadca 2021, §3.2
describe it) as Batsim dynamic sub-jobs, built on the io-aware model's steps (`IOAwareModel`).

1. stage-in PFS → BB (``data_staging``, one per BB node, on storage hosts only). Either the policy
   decided a `StageIn` (the job is pending and holds BB only; no walltime) — the model then reports
   ``("staged", job id)`` and waits for the policy's `Start` — or the policy decided a plain `Start`
   (a two-phase policy): the stage-in then runs while the job holds its nodes, as in io-aware.
2. running: compute phases and checkpoints with drains, exactly as io-aware, bounded by the walltime
   counted from the `Start`;
3. output: each compute node writes `bb` bytes to its BB node (``parallel_homogeneous_pfs``), still
   bounded by the walltime; then the model reports ``("nodes-released", job id)``;
4. stage-out BB → PFS (``data_staging``, one per BB node), holding BB only; no walltime.

When the policy decides the stage-outs (`Scheduler.decides_stage_out`: the app sets `stage_out_decided`), a job
whose last compute phase ended reports ``("computed", job id)`` and waits, on its nodes, for the policy's
`StageOut` (`stage_out`) before step 3; the walltime does not run while it waits (what was left of it bounds
step 3). Otherwise step 3 follows at once, as it always did.

The phase reports are taken by the app with `take_phase_events()` after each JOB_COMPLETED (and after its
decisions: a step with nothing to move ends at once).
"""
from __future__ import annotations

import math

from procset import ProcSet

from ..batsim.loop import Outbox
from ..schedulers.base import Start, StageIn
from .io_aware import BB_LABEL, IOAwareModel, _Run

#: Step names added to io-aware's (stage-in, compute, checkpoint, stage-out, done).
STAGED, OUTPUT, COMPUTED = "staged", "output", "computed"


class ThreePhaseModel(IOAwareModel):
    """Job model "three-phase" (implements `JobModel`, docs/io-model.md §3): see the module docstring.

    Extra calls beside the `JobModel` Protocol: `stage_in(decision, now, out)` for a policy's `StageIn`,
    `stage_out(decision, now, out)` for its `StageOut` (with `stage_out_decided`), and
    `take_phase_events() -> list[(event, job id)]` with event "staged", "computed" or "nodes-released".
    """

    name = "three-phase"
    uses_dynamic_jobs = True
    stages_separately = True

    def __init__(self) -> None:
        super().__init__()
        self._events: list[tuple[str, str]] = []
        self._left: dict[str, float] = {}        # job waiting for its StageOut → walltime left [s]

    def take_phase_events(self) -> list[tuple[str, str]]:
        """The phase changes since the last call, in order: ("staged" | "computed" | "nodes-released", original
        job id)."""
        ev, self._events = self._events, []
        return ev

    def stage_out(self, decision, now: float, out: Outbox) -> tuple[str, str] | None:
        """Carry out a policy's `StageOut` at `now` [s]: the job, waiting since its "computed" report, writes its
        output (step 3, bounded by the walltime it had left) and stages it out. Returns (job id, final state)
        if the job ended at once (nothing to write, stage out or drain), else None. Raises ValueError for a job
        that is not waiting for it."""
        job_id = decision.job.id
        run = self._runs.get(job_id)
        if run is None or run.step != COMPUTED:
            raise ValueError(f"job {job_id} is not waiting for its stage-out")
        left = self._left.pop(job_id)
        run.deadline = now + left if math.isfinite(left) else math.inf
        self._output(run, now, out)
        if run.step == "done" and not run.waiting and not run.drains:
            del self._runs[job_id]
            return job_id, "COMPLETED_SUCCESSFULLY"
        return None

    def stage_in(self, decision: StageIn, now: float, out: Outbox) -> None:
        """Start the stage-in of a pending job: BB only, no walltime (docs/io-model.md §3). Raises ValueError
        for a job without BB (a policy starts it directly)."""
        from ..batsim.protocol import RejectJob
        job = decision.job
        if job.bb <= 0 and not decision.bb_slots:
            raise ValueError(f"job {job.id} has no burst buffer to stage in: start it directly")
        run = self._new_run(Start(job, ProcSet(), {}), math.inf)
        counts: dict[int, int] = {}
        for b in decision.bb_slots:
            counts[b] = counts.get(b, 0) + 1
        run.counts = dict(sorted(counts.items()))
        out.add(RejectJob(job.id), now)          # replaced by its sub-jobs, as in io-aware
        self._stage(run, now, out, "stage-in", run.volume("stage_in"))

    def start(self, start: Start, now: float, out: Outbox) -> None:
        run = self._runs.get(start.job.id)
        if run is None:                          # a two-phase policy: stage-in while holding the nodes
            super().start(start, now, out)
            return
        if run.step != STAGED:
            raise ValueError(f"job {start.job.id} started before its stage-in completed")
        run.start = start
        self._place(run, start)
        run.deadline = now + start.job.walltime
        self._compute(run, now, out)

    def _output(self, run: _Run, now: float, out: Outbox) -> None:
        """Compute nodes → BB: `bb` bytes per node (the profile's ``io_stage_out`` if set), on the compute nodes
        placed on each BB node."""
        run.step = OUTPUT
        nb = int(round(run.volume("stage_out")))
        if nb > 0:
            name = self._profile(run, "output", {"type": "parallel_homogeneous_pfs", "bytes_to_read": 0,
                                                 "bytes_to_write": nb, "storage": BB_LABEL}, out, now)
            self._on_groups(run, name, out, now)
        if not run.waiting:
            self._advance(run, now, out)

    def _advance(self, run: _Run, now: float, out: Outbox) -> None:
        job_id = run.start.job.id
        if run.step in (STAGED, COMPUTED):
            return
        if run.step == "stage-in" and not run.start.procs:      # a StageIn: wait for the policy's Start
            run.step = STAGED
            self._events.append(("staged", job_id))
        elif run.step == "compute" and run.phase + 1 >= run.phases:
            run.phase += 1
            if self.stage_out_decided:                           # wait for the policy's StageOut
                run.step = COMPUTED
                self._left[job_id], run.deadline = run.deadline - now, math.inf
                self._events.append(("computed", job_id))
                return
            self._output(run, now, out)
        elif run.step == OUTPUT:
            self._events.append(("nodes-released", job_id))
            run.deadline = math.inf                              # stage-out is not bounded by the walltime
            self._stage(run, now, out, "stage-out", run.volume("stage_out"))
        else:
            super()._advance(run, now, out)
