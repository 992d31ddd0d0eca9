"""Cerberus' starvation rule "reserve" (``starvation="reserve"``, ``phases="one"``; docs/policies.md "cerberus",
the module docstring of `cerberus`): the decision that protects the oldest starving job of each queue while the
knapsacks go on around it. In Q_I it is staged first if its BB fits, else a drain withholds from the knapsack the
free bytes of the BB nodes its shares would take; in Q_R it starts first if its nodes are free, else it gets an
EASY reservation at its shadow time and the knapsack takes only jobs that end by then or fit in the nodes the
reservation leaves free. The rule is the project's (the paper states none)."""
from __future__ import annotations

import math

from .base import Job, StageIn, Start
from .knapsack import knapsack

__all__ = ["decide_reserve", "starving"]


def starving(queue: dict[str, tuple[Job, float]], now: float, limit: float) -> str | None:
    """The id of `queue`'s oldest job if it waited more than `limit` [s] since it entered the queue, else None."""
    if queue:
        jid, (_, since) = next(iter(queue.items()))
        if now - since > limit:
            return jid
    return None


def decide_reserve(c, now: float, out: list) -> list[Start | StageIn]:
    """`cerberus.Cerberus.decide` with ``starvation="reserve"`` (module docstring) for the policy `c` (its queues,
    free nodes, BB ledger and starts): the decisions appended to `out`."""
    # Q_I: the oldest starving job first, else a drain of the BB it could take now
    held: dict[int, int] = {}
    bb = c.bb
    old = starving(c.q_in, now, c.starvation_limit)
    if old is not None:
        job = c.q_in[old][0]
        slots = bb.place(job)
        if slots is not None:
            out.append(c._stage_in(old, job, slots))
        else:                                        # its shares' BB nodes by id, as many as each holds
            left = job.res
            for b, cap in sorted(c.platform.bb_capacity.items()):
                k = min(cap // job.bb, left)
                if k > 0:
                    held[b] = min(bb.free[b], k * job.bb)
                    left -= k
                if left == 0:
                    break
    for b, n in held.items():
        bb.free[b] -= n
    ids = [i for i in c.q_in if i != old]
    chosen = knapsack([c.q_in[i][0].bb_total for i in ids], [[c.q_in[i][0].bb_total for i in ids]],
                      [bb.total()], method=c.method) if ids else []
    for k in chosen:
        jid = ids[k]
        job = c.q_in[jid][0]
        slots = bb.place(job)
        if slots is not None:
            out.append(c._stage_in(jid, job, slots))
    for b, n in held.items():
        bb.free[b] += n
    # Q_R: the oldest starving job first, else an EASY reservation for it
    old = starving(c.q_run, now, c.starvation_limit)
    shadow, extra = math.inf, len(c.free_nodes)
    if old is not None:
        job = c.q_run[old][0]
        if job.res <= len(c.free_nodes):
            out.append(c._start_run(old, job, now))
            extra = len(c.free_nodes)
        else:
            avail = len(c.free_nodes)
            for t, n in sorted((max(e, now), len(c.nodes[j])) for j, e in c.node_end.items()):
                avail += n
                if avail >= job.res:
                    shadow, extra = t, avail - job.res
                    break
            else:
                extra = 0
    ids = [i for i in c.q_run if i != old]
    if ids:
        jobs = [c.q_run[i][0] for i in ids]
        long = [j.res if now + c._ert(j) > shadow else 0 for j in jobs]
        chosen = knapsack([c.profit(j.res, j.bb_total, c._ert(j)) for j in jobs],
                          [[j.res for j in jobs], long], [len(c.free_nodes), extra], method=c.method)
        for k in chosen:
            if jobs[k].res <= len(c.free_nodes):
                out.append(c._start_run(ids[k], jobs[k], now))
    return out
