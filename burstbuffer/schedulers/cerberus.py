"""The Cerberus policy (Yan et al., *Cerberus: A 3-Phase Burst Buffer Aware Batch Scheduler for HPC Systems*,
§3; docs/policies.md "cerberus"), for the three-phase job model (docs/io-model.md §3).

Defaults: the paper's algorithm — ``phases="as-written"`` (the three BB amounts, Problem 1 on Q_I and Q_O,
Problem 2 under free nodes and free BB: below), ``starvation="none"`` (the paper states no starvation rule),
``knapsack_method="exact"`` (the problems solved exactly at every size). The project's variants are options or
presets of their own (`registry`): ``cerberus-fcfs-24h`` (the same with the project's 24-h starvation
rule "fcfs"), ``phases="one"`` (one BB amount per job, below).

Policy with ``phases="one"`` (one BB amount per job; not the paper's):
Three queues: Q_I (submitted, waiting for the BB of their stage-in), Q_R (staged, waiting for compute
nodes), Q_O (nodes released, output on the BB, stage-out running). At every decision:

1. Q_I (Problem 1): choose jobs maximising Σ bb_i·x_i subject to Σ bb_i·x_i ≤ free BB (bb_i = res × bb
   per node, bytes), then place each chosen job's shares on BB nodes; each gets a `StageIn`.
2. Q_R (Problem 2): choose jobs maximising Σ p_i·x_i subject to Σ c_i·x_i ≤ free nodes and
   Σ bb_run_i·x_i ≤ free BB; a staged job already holds its BB, so bb_run_i (BB needed beyond what it
   holds) is 0 in this model. Each chosen job gets a `Start` on the lowest free node ids.
3. Q_O needs no decision here: its jobs hold the BB their output was written to, so Problem 1 on Q_O with
   the BB they hold selects all of them; the job model starts the stage-out when the nodes are released.

p_i = f(c_i, bb_i, ert_i), ert_i = walltime (option ``profit``): "node-seconds" (default, c_i·ert_i),
"nodes" (c_i), "short-first" (c_i / ert_i: node count per second of walltime, favouring short jobs).

Starvation (the paper is silent; the project's rules): a queued job that has waited longer than
``starvation_limit`` seconds (default 86400) since it entered its queue is *starving*. Option ``starvation``:

- "none" (default): no rule (the paper states none): every queue is served by its knapsack at every decision.
- "fcfs" (policy ``cerberus-fcfs-24h``): while Q_I's (resp. Q_R's) oldest job starves, that queue is served in FCFS order from its
  head and stops at the first job that does not fit: no later job takes the BB (resp. nodes) the starving job
  waits for, so it starts once enough is freed — but no other job of the queue is served meanwhile, and under
  load the next oldest job starves in turn, so the queue stays first come first served without backfilling.
- "reserve": only the oldest starving job is protected, and the knapsacks go on around it. In Q_I it is
  staged first if its BB fits, else a drain: its shares are assigned to BB nodes by id (as many as each node
  holds), and the free bytes of those nodes, up to its shares there, are withheld from the knapsack, so the
  BB free for it only grows until it fits. In Q_R it starts first if its nodes are free, else it gets
  an EASY reservation at its shadow time (the running jobs' node releases expected at start + walltime), and
  the knapsack takes only jobs that fit now and end by the shadow time or fit in the nodes the reservation
  leaves free (a second knapsack constraint).

Cerberus as written (option ``phases="as-written"``, the default; ``"one"`` is the one-amount policy above).
Each job has three BB amounts per compute node (`Job.phase_bb`: bb_in, bb_run, bb_out; docs/workload.md
"Phase amounts"), and the policy also decides the stage-outs (`decides_stage_out`: the three-phase model waits,
the job on its nodes, after its computation). A job holds bb_in per share from its stage-in, bb_in + bb_run
while it runs (its input and its checkpoints), nothing once its computation ended, and bb_out from its
`StageOut` (its output, written from its nodes, which it then releases) until it ends; every share stays on
the BB node chosen at the job's first phase that needs BB (the compute node it binds writes there), and that
choice leaves room on each BB node for the job's largest share, max(bb_in + bb_run, bb_out), once it is free.
At every decision, in this order (the paper gives none: outputs free nodes, runs use staged data, stage-ins
take what is left):

1. Q_O (Problem 1 on Q_O, §3.2): the computed jobs; maximise Σ bb_out_i·x_i subject to Σ bb_out_i·x_i ≤ free
   BB, then each chosen job whose output fits on its BB nodes gets a `StageOut` (a job with bb_out = 0 at once).
2. Q_R (Problem 2, §3.3): the staged jobs; maximise Σ p_i·x_i, p_i = f(c_i, res·bb_run_i, ert_i), subject to
   Σ c_i·x_i ≤ free nodes and Σ res·bb_run_i·x_i ≤ free BB; a chosen job whose bb_run fits on its BB nodes
   gets a `Start`.
3. Q_I (Problem 1, §3.2): maximise Σ bb_in_i·x_i subject to Σ bb_in_i·x_i ≤ free BB less the bb_run promised
   to the jobs in stage-in or staged; a chosen job is placed where its bb_in + bb_run fits beside those
   promises. The promise is this project's guard, not the paper's: without it Problem 1 can fill the BB with
   staged jobs none of which finds its bb_run, and nothing runs again.

Knapsacks as ``knapsack_method`` says ("exact" solves them exactly at every size); the starvation rules
"none" and "fcfs" apply to the three queues. The one deadlock the promise does not prevent — a computed job
whose output exceeds its own input and checkpoint space and finds no room while nothing else can free BB —
raises ValueError (the run stops with one line).
"""
from __future__ import annotations

import math
from dataclasses import replace

from procset import ProcSet

from ..platforms.model import Platform
from .base import Job, Scheduler, StageIn, StageOut, Start
from .bb_ledger import BBLedger
from .cerberus_reserve import decide_reserve
from .knapsack import METHODS, knapsack
from .options import Choice, Number, Option
from .placement import lowest_procs
from .holds import bind_slots, platform_fit_reason

__all__ = ["Cerberus", "PHASES", "PROFITS", "STARVATION"]

#: option ``phases``: one BB amount per job, or the paper's three (the default; module docstring)
PHASES = ("one", "as-written")
#: option ``starvation``
STARVATION = ("fcfs", "reserve", "none")

#: ert [s] of a job without walltime (one year), so that its profit stays finite.
NO_WALLTIME_ERT = 365 * 86400.0

#: Problem 2's profit p_i = f(c_i, bb_i, ert_i) [docs/policies.md "cerberus"].
PROFITS = {
    "node-seconds": lambda c, bb, ert: c * ert,
    "nodes": lambda c, bb, ert: float(c),
    "short-first": lambda c, bb, ert: c / ert,
}


class Cerberus(Scheduler):
    """Policy "cerberus": by default the paper's algorithm as written (Yan et al., §3: bb_in, bb_run, bb_out per
    job, no starvation rule, exact knapsacks; module docstring). Needs the three-phase job model.

    Args:
        platform: the scheduler's view of the platform.
        seed: unused (the policy makes no random choice); accepted as every policy's.
        profit: name in `PROFITS`.
        starvation_limit: seconds (> 0) after which a queued job is served FCFS (module docstring).
        knapsack_method: "auto", "exact" (default), "dp", "milp" or "greedy" (`burstbuffer.schedulers.knapsack`).
        starvation: "none" (default: the paper's), "fcfs" or "reserve" (module docstring).
        phases: "as-written" (default: the paper's) or "one" (module docstring).
    Raises ValueError on an unknown profit, knapsack method, starvation rule or phases, a non-positive
    starvation limit, or ``phases="as-written"`` with ``starvation="reserve"``.
    """

    name = "cerberus"
    needs_staged_model = True
    declared_options = (
        Option("profit", Choice(tuple(PROFITS)), "profit of a job in cerberus' running-queue knapsack "
               "(docs/policies.md)", flag="--profit"),
        Option("starvation_limit", Number(0, open_low=True),
               "[s] after which a queued job is served first (cerberus-fcfs-24h; cerberus with a starvation rule)",
               flag="--starvation-limit", metavar="S"),
        Option("knapsack_method", Choice(METHODS),
               "solver of cerberus' knapsacks: auto (exact up to 200 items, greedy above), exact (at every size), "
               "dp, milp, greedy"),
        Option("starvation", Choice(STARVATION),
               "what cerberus does for a starving job: nothing (none: the paper's), serve its queue first come first "
               "served (fcfs: the project's rule, as cerberus-fcfs-24h), reserve for it (reserve; phases=one only)"),
        Option("phases", Choice(PHASES),
               "cerberus' BB amounts: one per job (one), or bb_in, bb_run, bb_out with Problem 2's BB constraint "
               "and the stage-out decision (as-written: the paper's, Yan et al., Cerberus, §3)"),
    )

    @classmethod
    def options_conflict(cls, options: dict) -> str | None:
        if options.get("phases") == "as-written" and options.get("starvation") == "reserve":
            return "phases=as-written takes starvation none or fcfs, not reserve"
        return super().options_conflict(options)

    def __init__(self, platform: Platform, *, seed: int = 0, profit: str = "node-seconds",
                 starvation_limit: float = 86400.0, knapsack_method: str = "exact", starvation: str = "none",
                 phases: str = "as-written"):
        if starvation not in STARVATION:
            raise ValueError(f"unknown starvation {starvation!r}; valid: {', '.join(STARVATION)}")
        self.starvation = starvation
        if profit not in PROFITS:
            raise ValueError(f"unknown profit {profit!r}; valid: {', '.join(sorted(PROFITS))}")
        if knapsack_method not in METHODS:
            raise ValueError(f"unknown knapsack_method {knapsack_method!r}; valid: {', '.join(METHODS)}")
        if phases not in PHASES:
            raise ValueError(f"unknown phases {phases!r}; valid: {', '.join(PHASES)}")
        why = type(self).options_conflict({"phases": phases, "starvation": starvation})
        if why:
            raise ValueError(why)
        self.phases = phases
        #: the as-written policy decides the stage-outs (module docstring)
        self.decides_stage_out = phases == "as-written"
        if not starvation_limit > 0:
            raise ValueError(f"starvation_limit must be > 0 seconds, got {starvation_limit!r}")
        self.platform = platform
        self.profit, self.starvation_limit, self.method = PROFITS[profit], float(starvation_limit), knapsack_method
        self.free_nodes = ProcSet(platform.compute)
        #: the BB: free bytes per BB node, each job's shares and their bytes, the promises (`bb_ledger.BBLedger`)
        self.bb = BBLedger(platform.bb_capacity)
        self.q_in: dict[str, tuple[Job, float]] = {}    # job id → (job, time it entered the queue)
        self.q_run: dict[str, tuple[Job, float]] = {}
        self.staging: dict[str, Job] = {}               # stage-in running
        self.nodes: dict[str, ProcSet] = {}             # job id → compute nodes it holds
        self.q_out: set[str] = set()
        self.node_end: dict[str, float] = {}            # running job → expected node release [s] (start + walltime)
        # phases="as-written" only
        self.q_o: dict[str, tuple[Job, float]] = {}     # computed jobs waiting for their StageOut
        self.outputs: set[str] = set()                  # jobs whose StageOut was decided, not ended
        self.running_jobs: dict[str, Job] = {}          # started jobs still computing

    # ------------------------------------------------------------------ Scheduler contract
    def can_ever_fit(self, job: Job) -> str | None:
        why = platform_fit_reason(self.platform, job)    # same rules as every policy (docs/policies.md)
        if why is None and self.phases == "as-written" and self._largest(job) > job.bb:
            big = replace(job, bb=self._largest(job))
            why = platform_fit_reason(self.platform, big)
            if why is not None:
                why = f"its largest phase share, max(bb_in + bb_run, bb_out): {why}"
        return why

    @staticmethod
    def _largest(job: Job) -> int:
        """The largest BB share [bytes per node] of `job` as written: max(bb_in + bb_run, bb_out)."""
        b_in, b_run, b_out = job.phase_bb
        return max(b_in + b_run, b_out)

    def submit(self, job: Job, now: float) -> None:
        self.q_in[job.id] = (job, now)

    def stage_in_done(self, job_id: str, now: float) -> None:
        self.q_run[job_id] = (self.staging.pop(job_id), now)

    def nodes_released(self, job_id: str, now: float) -> None:
        self.node_end.pop(job_id, None)
        if job_id not in self.nodes:       # already ended (as-written: a StageOut of nothing ends the job at once)
            return
        self.free_nodes |= self.nodes.pop(job_id)
        self.q_out.add(job_id)

    def job_ended(self, job_id: str, now: float) -> None:
        self.node_end.pop(job_id, None)
        if job_id in self.nodes:                         # ended before its output (failure, walltime)
            self.free_nodes |= self.nodes.pop(job_id)
        self.q_out.discard(job_id)
        self.staging.pop(job_id, None)
        self.q_run.pop(job_id, None)
        if self.phases == "as-written":
            self.q_o.pop(job_id, None)
            self.running_jobs.pop(job_id, None)
            self.outputs.discard(job_id)
        self.bb.release(job_id)

    def job_computed(self, job_id: str, now: float) -> None:
        """(phases="as-written") `job_id` ended its computation: it gives back its input and checkpoint space and
        enters Q_O, on its nodes."""
        self.node_end.pop(job_id, None)
        self.bb.hold(job_id, 0)
        self.q_o[job_id] = (self.running_jobs.pop(job_id), now)

    @property
    def queue(self) -> list[Job]:
        """The jobs not started yet: Q_I, those in stage-in, Q_R (not Q_O: those have started)."""
        jobs = [j for j, _ in self.q_in.values()] + list(self.staging.values()) + [j for j, _ in self.q_run.values()]
        return sorted(jobs, key=lambda j: (j.subtime, j.id))

    # ------------------------------------------------------------------ decisions
    def _stage_in(self, jid: str, job: Job, slots) -> StageIn:
        """Take `job`'s BB `slots` (BB node per compute share) and move it from Q_I to stage-in."""
        self.bb.take(jid, slots, job.bb)
        del self.q_in[jid]
        self.staging[jid] = job
        return StageIn(job, slots)

    def _select(self, queue: dict[str, tuple[Job, float]], now: float, values, weights, caps) -> list[str]:
        """Job ids to serve from `queue`: FCFS from the head while its oldest job starves, else the knapsack."""
        ids = list(queue)
        if self._starves(queue, now):
            return ids                                   # FCFS: the caller stops at the first misfit
        chosen = knapsack([values(queue[i][0]) for i in ids], [[w(queue[i][0]) for i in ids] for w in weights],
                          caps, method=self.method)
        return [ids[k] for k in chosen]

    def _ert(self, job: Job) -> float:
        """Expected running time [s]: the walltime (a job without one counts as `NO_WALLTIME_ERT`)."""
        return job.walltime if math.isfinite(job.walltime) else NO_WALLTIME_ERT

    def decide(self, now: float) -> list[Start | StageIn]:
        out: list[Start | StageIn] = []
        for jid in [i for i, (j, _) in self.q_in.items() if j.bb == 0]:   # nothing to stage: straight to Q_R
            job = self.q_in.pop(jid)[0]
            self.q_run[jid] = (job, now)
            self.bb.take(jid, (), 0)
        if self.starvation == "reserve":
            return decide_reserve(self, now, out)
        if self.phases == "as-written":
            return self._decide_as_written(now, out)
        # Q_I — Problem 1
        fcfs = self._starves(self.q_in, now)
        for jid in self._select(self.q_in, now, lambda j: j.bb_total, [lambda j: j.bb_total],
                                [self.bb.total()]):
            job = self.q_in[jid][0]
            slots = self.bb.place(job)
            if slots is None:
                if fcfs:
                    break
                continue
            out.append(self._stage_in(jid, job, slots))
        # Q_R — Problem 2 (bb_run = 0: a staged job holds its BB)
        fcfs = self._starves(self.q_run, now)
        for jid in self._select(self.q_run, now, lambda j: self.profit(j.res, j.bb_total, self._ert(j)),
                                [lambda j: j.res, lambda j: 0], [len(self.free_nodes), 0]):
            job = self.q_run[jid][0]
            if job.res > len(self.free_nodes):
                if fcfs:
                    break
                continue
            procs = lowest_procs(self.free_nodes, job.res)
            self.free_nodes -= procs
            self.nodes[jid] = procs
            del self.q_run[jid]
            out.append(Start(job, procs, bind_slots(self.platform, procs, self.bb.slots[jid])))
        return out

    def _starves(self, queue: dict[str, tuple[Job, float]], now: float) -> bool:
        """Rule "fcfs": whether `queue`'s oldest job waited longer than the starvation limit (never under "none")."""
        return (self.starvation != "none" and bool(queue)
                and now - next(iter(queue.values()))[1] > self.starvation_limit)

    # ------------------------------------------------------------------ phases "as-written"
    def _idle(self) -> bool:
        """No job computes, stages in or stages out: no event will come to free nodes or BB (as-written)."""
        return not (self.running_jobs or self.staging or self.outputs)

    def _serve(self, queue: dict[str, tuple[Job, float]], now: float, values, weights, caps, serve) -> None:
        """One problem of the as-written decision over `queue`: `_select` under the capacities `caps()`, then
        `serve(job id)` (True: served) for each chosen job in order. While the oldest job starves (FCFS) the
        first one not served ends it, unless no job computes, stages in or stages out (then nothing would free
        what it waits for: the jobs after it are served as below). Otherwise a chosen job that cannot be served
        now (its share does not fit on its BB nodes, though the free BB in all would hold it) is left out and
        the problem solved again over the jobs not yet chosen, under what is still free, until a solution is
        served whole: the resources it would have had are not kept idle for it (else jobs waiting for nodes
        while holding the BB it needs, and it chosen each time for those nodes, would wait for ever)."""
        fcfs = self._starves(queue, now)
        left_out: set[str] = set()
        while True:
            pool = {i: v for i, v in queue.items() if i not in left_out} if left_out else queue
            missed = False
            for jid in self._select(pool, now, values, weights, caps()):
                if serve(jid):
                    continue
                if fcfs and not self._idle():
                    return
                left_out.add(jid)
                missed = True
            if not missed:
                return

    def _decide_as_written(self, now: float, out: list) -> list[Start | StageIn | StageOut]:
        """`decide` with ``phases="as-written"`` (module docstring): Q_O, Q_R, Q_I, each by `_serve`."""
        # jobs with nothing to stage in: straight to Q_R
        for jid in [i for i, (j, _) in self.q_in.items() if j.phase_bb[0] == 0]:
            job = self.q_in.pop(jid)[0]
            self.q_run[jid] = (job, now)
            self.bb.take(jid, (), 0)
        total = self.bb.total
        # Q_O — Problem 1 on bb_out
        for jid in [i for i, (j, _) in self.q_o.items() if j.phase_bb[2] == 0]:
            out.append(self._stage_out(jid, 0))
        chose_out = False

        def output(jid: str) -> bool:
            nonlocal chose_out
            job = self.q_o[jid][0]
            b_out = job.phase_bb[2]
            if not self.bb.slots.get(jid):
                slots = self.bb.place_as(job, b_out, self._largest(job))
                if slots is not None:
                    self.bb.take(jid, slots, 0)
            if self.bb.slots.get(jid) and self.bb.room_on_slots(jid, b_out):
                out.append(self._stage_out(jid, b_out))
                chose_out = True
                return True
            return False

        self._serve(self.q_o, now, lambda j: j.res * j.phase_bb[2], [lambda j: j.res * j.phase_bb[2]],
                    lambda: [total()], output)

        # Q_R — Problem 2: free nodes and free BB for bb_run
        def run(jid: str) -> bool:
            job = self.q_run[jid][0]
            b_in, b_run, _ = job.phase_bb
            fits = job.res <= len(self.free_nodes)
            if fits and b_run > 0:
                if not self.bb.slots.get(jid):
                    slots = self.bb.place_as(job, b_run, self._largest(job))
                    fits = slots is not None
                    if fits:
                        self.bb.take(jid, slots, 0)
                else:
                    fits = self.bb.room_on_slots(jid, b_run)
            if not fits:
                return False
            self.bb.unpromise(jid)
            self.bb.hold(jid, b_in + b_run)
            procs = lowest_procs(self.free_nodes, job.res)
            self.free_nodes -= procs
            self.nodes[jid] = procs
            self.node_end[jid] = now + self._ert(job)
            self.running_jobs[jid] = self.q_run.pop(jid)[0]
            out.append(Start(job, procs, bind_slots(self.platform, procs, self.bb.slots[jid]), share=b_in + b_run))
            return True

        self._serve(self.q_run, now, lambda j: self.profit(j.res, j.res * j.phase_bb[1], self._ert(j)),
                    [lambda j: j.res, lambda j: j.res * j.phase_bb[1]],
                    lambda: [len(self.free_nodes), total()], run)

        # Q_I — Problem 1 on bb_in, beside the bb_run promised to the staged jobs
        def stage_in(jid: str) -> bool:
            job = self.q_in[jid][0]
            b_in, b_run, _ = job.phase_bb
            slots = self.bb.place_as(job, b_in + b_run, self._largest(job), promised=True)
            if slots is None:
                return False
            del self.q_in[jid]
            self.bb.take(jid, slots, b_in)
            if b_run > 0:
                self.bb.promise(jid, b_run)
            self.staging[jid] = job
            out.append(StageIn(job, slots, share=b_in))
            return True

        self._serve(self.q_in, now, lambda j: j.res * j.phase_bb[0], [lambda j: j.res * j.phase_bb[0]],
                    lambda: [max(total() - sum(self.bb.promised.values()), 0)], stage_in)
        if self.q_o and not chose_out and self._idle():
            raise ValueError(f"deadlock: {len(self.q_o)} computed job(s) wait for room for their output (job "
                             f"{next(iter(self.q_o))}: bb_out above its bb_in + bb_run) and no job can free "
                             "burst buffer")
        return out

    def _stage_out(self, jid: str, share: int) -> StageOut:
        job = self.q_o.pop(jid)[0]
        self.bb.hold(jid, share)
        self.outputs.add(jid)
        return StageOut(job, self.bb.slots.get(jid, ()), share)

    def _start_run(self, jid: str, job: Job, now: float) -> Start:
        """Start staged `job` on the lowest free compute nodes (it leaves Q_R)."""
        procs = lowest_procs(self.free_nodes, job.res)
        self.free_nodes -= procs
        self.nodes[jid] = procs
        self.node_end[jid] = now + self._ert(job)
        del self.q_run[jid]
        return Start(job, procs, bind_slots(self.platform, procs, self.bb.slots[jid]))
