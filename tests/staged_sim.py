"""A three-phase event loop for policy tests (no simulator): stagings at a fixed rate, the running phase
of a given length, the policy's wake-ups; it checks the BB and node invariants at every decision. Shared by
tests/test_staged.py (the EASY family, conservative-bb, plan-α) and tests/test_three_phase.py (cerberus,
slurm-bb)."""
from __future__ import annotations

import heapq

from burstbuffer.schedulers.base import StageIn, Start

GB = 10**9


class Events:
    """The drivers' event queue: (time [s], kind, job) in time order, ties in the order pushed; the jobs'
    submissions pushed first."""

    def __init__(self, jobs):
        self.heap: list = []
        self.seq = 0
        for j in jobs:
            self.push(j.subtime, "submit", j)

    def push(self, t, kind, j) -> None:
        heapq.heappush(self.heap, (t, self.seq, kind, j))
        self.seq += 1

    def __bool__(self) -> bool:
        return bool(self.heap)

    def now(self):
        """The earliest event's time."""
        return self.heap[0][0]

    def at(self, now):
        """Pop the events of time `now` as (kind, job), including those pushed for `now` while iterating."""
        while self.heap and self.heap[0][0] == now:
            _, _, kind, j = heapq.heappop(self.heap)
            yield kind, j

    def has(self, t, kind) -> bool:
        return any(e[0] == t and e[2] == kind for e in self.heap)


def simulate(sched, plat, jobs, *, rate=GB, runtime=None):
    """Drive a three-phase policy with its wake-ups: a stage-in or stage-out of B bytes lasts B / `rate` s,
    the running phase `runtime(job)` s (default its walltime). At every instant checks that the BB held by
    the jobs in stage-in, staged, running and in stage-out never exceeds a BB node's capacity, that no node is
    given twice and that a job with BB is started only after its stage-in. Returns {job id: (stage-in start,
    nodes start, end)}."""
    runtime = runtime or (lambda j: j.walltime)
    events = Events(jobs)
    push = events.push
    bb_used = {b: 0 for b in plat.bb_capacity}
    nodes_used: set[int] = set()
    staged_ids, held, procs, times = set(), {}, {}, {}
    while events:
        now = events.now()
        for kind, j in events.at(now):
            if kind == "submit":
                sched.submit(j, now)
            elif kind == "staged":
                staged_ids.add(j.id)
                sched.stage_in_done(j.id, now)
            elif kind == "released":
                nodes_used.difference_update(procs.pop(j.id))
                sched.nodes_released(j.id, now)
                push(now + j.bb_total / rate, "ended", j)
            elif kind == "ended":
                for b, n in held.pop(j.id, {}).items():
                    bb_used[b] -= n
                sched.job_ended(j.id, now)
                times[j.id] = times[j.id] + (now,)
        for d in sched.decide(now):
            j = d.job
            if isinstance(d, StageIn):
                assert len(d.bb_slots) == j.res and j.bb > 0 and j.id not in times
                held[j.id] = d.bb_per_storage
                for b, n in held[j.id].items():
                    bb_used[b] += n
                    assert bb_used[b] <= plat.bb_capacity[b], (now, j.id)
                times[j.id] = (now,)
                push(now + j.bb_total / rate, "staged", j)
            else:
                assert isinstance(d, Start)
                assert j.bb == 0 or j.id in staged_ids
                assert len(d.procs) == j.res and not (set(d.procs) & nodes_used), (now, j.id)
                assert d.bb_per_storage == held.get(j.id, {})
                nodes_used.update(d.procs)
                procs[j.id] = set(d.procs)
                times[j.id] = times.get(j.id, (now,)) + (now,)
                push(now + runtime(j), "released", j)
        wake = sched.wakeup(now)
        if wake is not None:
            assert wake > now
            if not events.has(wake, "wake"):
                push(wake, "wake", None)
    return times
