"""A three-phase event loop for policy tests (no simulator): stagings at a fixed rate, the running phase
of a given length, the policy's wake-ups; it checks the BB and node invariants at every decision. Shared by
tests/test_staged.py (the EASY family, conservative-bb, plan-α) and tests/test_three_phase.py (cerberus,
slurm-bb)."""
from __future__ import annotations

import heapq

from burstbuffer.schedulers.base import StageIn, Start

GB = 10**9


def simulate(sched, plat, jobs, *, rate=GB, runtime=None):
    """Drive a three-phase policy with its wake-ups: a stage-in or stage-out of B bytes lasts B / `rate` s,
    the running phase `runtime(job)` s (default its walltime). At every instant checks that the BB held by
    the jobs in stage-in, staged, running and in stage-out never exceeds a BB node's capacity, that no node is
    given twice and that a job with BB is started only after its stage-in. Returns {job id: (stage-in start,
    nodes start, end)}."""
    runtime = runtime or (lambda j: j.walltime)
    events, seq = [], 0

    def push(t, kind, j):
        nonlocal seq
        heapq.heappush(events, (t, seq, kind, j))
        seq += 1

    for j in jobs:
        push(j.subtime, "submit", j)
    bb_used = {b: 0 for b in plat.bb_capacity}
    nodes_used: set[int] = set()
    staged_ids, held, procs, times = set(), {}, {}, {}
    while events:
        now = events[0][0]
        while events and events[0][0] == now:
            _, _, kind, j = heapq.heappop(events)
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
            if not any(e[0] == wake and e[2] == "wake" for e in events):
                push(wake, "wake", None)
    return times
