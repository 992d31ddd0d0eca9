"""The slurm-bb policy: Slurm's documented burst-buffer behaviour on the three-phase job model (docs/policies.md
"slurm-bb"; Kopanski & Rzadca, Euro-Par 2021, §3.2; Slurm's burst buffer guide, https://slurm.schedmd.com/burst_buffer.html).

- Stage-in: the pending jobs whose stage-in has not started are taken in order of their expected start time
  (the earliest time enough compute nodes are free if the running jobs end at their walltime, ignoring the
  other pending jobs; ties by submission), and each whose BB fits now gets a `StageIn` (one that does not fit
  is passed over, as Slurm allocates BB to whichever job it can).
- A job is allocated compute nodes only after its stage-in completed: EASY backfilling over the staged jobs
  in submission order — the first staged job that does not fit gets a node reservation at its shadow time,
  later staged jobs start if they fit now and end before it or use only nodes it leaves free. A job whose
  stage-in has not started gets no reservation (other jobs may be backfilled ahead of it: the starvation
  issue the paper points out).
- Stage-out after the nodes are released (the three-phase job model does it).
"""
from __future__ import annotations

import math

from .base import StageIn, Start
from .cerberus import Cerberus
from .placement import lowest_procs
from .holds import bind_slots

__all__ = ["SlurmBB"]


class SlurmBB(Cerberus):
    """Policy "slurm-bb" (see the module docstring). Needs the three-phase job model. Shares cerberus'
    bookkeeping of free nodes, BB slots and queues; only `decide` differs.

    Args: platform, seed (unused; the policy makes no random choice).
    """

    name = "slurm-bb"
    declared_options = ()

    def __init__(self, platform, *, seed: int = 0):
        super().__init__(platform, seed=seed, phases="one")   # one BB amount per job: its own decide uses it
        self.node_end: dict[str, float] = {}     # running job → expected node release [s] (start + walltime)

    def nodes_released(self, job_id: str, now: float) -> None:
        self.node_end.pop(job_id, None)
        super().nodes_released(job_id, now)

    def job_ended(self, job_id: str, now: float) -> None:
        self.node_end.pop(job_id, None)
        super().job_ended(job_id, now)

    def _releases(self, now: float) -> list[tuple[float, int]]:
        """(expected time, nodes) of the running jobs' node releases, in time order (overdue ones at `now`)."""
        return sorted((max(end, now), len(self.nodes[j])) for j, end in self.node_end.items())

    def _expected_start(self, res: int, now: float, releases) -> float:
        free = len(self.free_nodes)
        if free >= res:
            return now
        for t, n in releases:
            free += n
            if free >= res:
                return t
        return math.inf

    def decide(self, now: float) -> list[Start | StageIn]:
        out: list[Start | StageIn] = []
        releases = self._releases(now)
        for jid in [i for i, (j, _) in self.q_in.items() if j.bb == 0]:   # nothing to stage
            job = self.q_in.pop(jid)[0]
            self.q_run[jid] = (job, now)
            self.bb.take(jid, (), 0)
        # stage-in for the jobs expected to start soonest, while their BB fits
        order = sorted(self.q_in, key=lambda i: (self._expected_start(self.q_in[i][0].res, now, releases),
                                                 self.q_in[i][0].subtime, i))
        for jid in order:
            job = self.q_in[jid][0]
            slots = self.bb.place(job)
            if slots is None:
                continue
            out.append(self._stage_in(jid, job, slots))
        # EASY backfilling over the staged jobs (submission order)
        shadow, extra = None, 0
        for jid in sorted(self.q_run, key=lambda i: (self.q_run[i][0].subtime, i)):
            job = self.q_run[jid][0]
            free = len(self.free_nodes)
            if job.res > free:
                if shadow is None:                       # the head: reserve nodes at its shadow time
                    avail = free
                    shadow = math.inf
                    for t, n in releases:
                        avail += n
                        if avail >= job.res:
                            shadow, extra = t, avail - job.res
                            break
                continue
            if shadow is not None:
                ends_before = now + job.walltime <= shadow
                if not ends_before:
                    if job.res > extra:
                        continue
                    extra -= job.res
            procs = lowest_procs(self.free_nodes, job.res)
            self.free_nodes -= procs
            self.nodes[jid] = procs
            self.node_end[jid] = now + job.walltime
            del self.q_run[jid]
            out.append(Start(job, procs, bind_slots(self.platform, procs, self.bb.slots[jid])))
        return out
