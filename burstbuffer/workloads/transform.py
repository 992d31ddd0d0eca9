"""BBSched's synthetic workloads S1-S4 (Fan et al., *Scheduling Beyond CPUs for HPC*, HPDC'19, §4.1).

The paper raises the share of jobs that request burst buffers to 50 % (S1, S3) or 75 % (S2, S4); each
such job gets a request drawn at random from the trace's original requests above a threshold: 5 TB
(S1, S2) or 20 TB (S3, S4) of Cori's 1.8 PB. Here the threshold is a fraction of the machine's total
BB (`FROM_ABOVE`: 5/1800 and 20/1800), so that it scales to any platform.

`transform_bb` applies this to a Batsim workload whose profiles carry ``bb`` (bytes per node, docs/workload.md):
1. the pool = the original *total* requests (res × bb per node) larger than fraction × total BB;
2. round(share × number of jobs) jobs, chosen uniformly without replacement, get a total drawn
   uniformly (with replacement) from the pool, turned into bytes per node as total // res, then capped
   as the request model caps it (docs/workload.md): at most one BB node's capacity, and at most
   ⌊capacity / ⌈res / BB nodes⌉⌋ so that the job's nodes can be placed on the BB nodes;
3. every other job gets no BB request (bb = 0), as in the paper where the rest request none — or keeps
   its original request with ``keep_others=True``.
Each changed job gets its own profile (a copy of its old one with the new ``bb``). Deterministic in `seed`.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass

from ..errors import InputError
from ..lazy import lazy
from .batsim_json import Workload, WorkloadJob

np = lazy("numpy")  # imported on first use (burstbuffer.lazy)

__all__ = ["FROM_ABOVE", "SCENARIOS", "TransformResult", "transform_bb"]

#: the paper's thresholds as fractions of Cori's 1.8 PB: 5 TB and 20 TB
FROM_ABOVE = {"5TB": 5 / 1800, "20TB": 20 / 1800}
#: the paper's S1-S4: (share of jobs with a BB request, threshold fraction)
SCENARIOS = {"S1": (0.5, FROM_ABOVE["5TB"]), "S2": (0.75, FROM_ABOVE["5TB"]),
             "S3": (0.5, FROM_ABOVE["20TB"]), "S4": (0.75, FROM_ABOVE["20TB"])}


@dataclass
class TransformResult:
    workload: Workload
    pool_size: int
    threshold: int          # bytes
    with_bb: int            # jobs given a drawn request
    capped: int             # of them, requests lowered by the placement cap

    def summary(self) -> str:
        return (f"{self.with_bb} of {len(self.workload.jobs)} jobs given a BB request drawn from {self.pool_size} "
                f"original requests > {self.threshold} B ({self.capped} capped to fit the BB nodes)")


def transform_bb(workload: Workload, *, share: float, from_above: float, seed: int, total_bb: int,
                 bb_nodes: int, bb_capacity: int, keep_others: bool = False, source: str = "workload") -> TransformResult:
    """The S1-S4 transformation (module docstring) of `workload`; returns a new Workload.

    Args: share in (0, 1]; from_above ≥ 0 (fraction of `total_bb`, bytes); seed of numpy's Generator;
    bb_nodes, bb_capacity (bytes per BB node) for the placement cap. Raises InputError(source, item,
    reason) on a bad share or fraction or an empty pool.
    """
    if not 0.0 < share <= 1.0:
        raise InputError("--bb-share", str(share), "must be in (0, 1]")
    if not from_above >= 0.0:
        raise InputError("--bb-from-above", str(from_above), "must be a fraction >= 0 of the total BB")
    threshold = int(from_above * total_bb)
    totals = np.array([j.res * workload.bb_of(j) for j in workload.jobs], dtype=np.int64)
    pool = totals[totals > threshold]
    if len(pool) == 0:
        raise InputError(source, "bb", f"no original BB request above {threshold} B "
                                       f"({from_above:g} of {total_bb} B): nothing to draw from")
    rng = np.random.default_rng(seed)
    n = len(workload.jobs)
    m = int(round(share * n))
    chosen = rng.choice(n, size=m, replace=False)
    drawn = rng.choice(pool, size=m, replace=True)
    new_bb: dict[int, int] = {}
    capped = 0
    for i, tot in zip(chosen.tolist(), drawn.tolist()):
        res = workload.jobs[i].res
        per = max(int(tot) // res, 1)
        cap = min(bb_capacity, bb_capacity // math.ceil(res / bb_nodes))
        if per > cap:
            per, capped = cap, capped + 1
        new_bb[i] = per
    profiles = dict(workload.profiles)
    jobs: list[WorkloadJob] = []
    for i, j in enumerate(workload.jobs):
        if i in new_bb:
            bb = new_bb[i]
        elif keep_others:
            bb = workload.bb_of(j)
        else:
            bb = 0
        if bb == workload.bb_of(j):
            jobs.append(j)
            continue
        name = f"{j.profile}_bb{bb}"
        if name not in profiles:
            prof = copy.deepcopy(workload.profiles[j.profile])
            prof["bb"] = bb
            profiles[name] = prof
        jobs.append(WorkloadJob(j.id, j.subtime, j.walltime, j.res, name))
    desc = (f"{workload.description}; BB requests: {share:g} of jobs drawn from originals > {from_above:g} of "
            f"the total BB, seed {seed}" + ("" if not keep_others else ", others kept"))
    out = Workload(workload.name, desc, workload.nb_res, jobs, profiles)
    return TransformResult(out, len(pool), threshold, m, capped)
