"""BBSched's own regime (Fan et al., *Scheduling Beyond CPUs for HPC*, HPDC'19, §4.1): Cori-like and
Theta-like machines whose burst buffers are the bottleneck, scaled down for a small simulation.

The paper's machines (Table 2, §4.1):

| machine | compute nodes | shared BB | original requests | base order |
| --- | --- | --- | --- | --- |
| Cori  | 12,076 | 1.8 PB  | [1 GB, 65 TB], a few up to 165 TB | FCFS |
| Theta | 4,392  | 2.16 PB (§4.1's assumption; Table 2 says 1.26 PB projected) | [1 GB, 285 TB] | WFP |

S1-S4 give a BB request to 50 % (S1, S3) or 75 % (S2, S4) of the jobs, drawn from the original
requests above 5 TB (S1, S2) or 20 TB (S3, S4); the others request none.

**Scaling (stated, and what is assumed).**

- *Platform*: 96 compute nodes (the bundled Dragonfly, `platforms/cori-like96.xml`,
  `platforms/theta-like96.xml`) with the paper machine's BB per compute node: Cori 1.8 PB / 12,076 =
  149 GB per node → 12 BB nodes × 1192 GB = 14.3 TB; Theta 2.16 PB / 4,392 = 492 GB per node → 12 × 3934 GB
  = 47.2 TB. Node scale s = 96 / 12,076 (Cori), 96 / 4,392 (Theta).
- *Request sizes*: the original requests are not published; a request is drawn **log-uniformly** between
  the scenario's threshold and the machine's largest ordinary request (Cori 65 TB, Theta 285 TB) — a
  density falling with size, as the histograms of Fig. 5 do. The drawn size r (paper bytes) becomes the
  job's total request r × s × `CONCURRENCY` on the small machine, i.e. its share of the machine's BB is
  the paper's share × `CONCURRENCY`. Why the factor: a BB request's share of the machine's BB is what
  makes BB the bottleneck *given how many jobs run at once*; the paper's machines run hundreds to
  thousands of jobs at once, 96 KTH nodes about ten. `CONCURRENCY` is *calibrated* (not taken from the
  paper) so that the paper's Baseline runs at the paper's 85–95 % BB usage on S3/S4 (docs/bbsched-study.md
  gives the measured figures).
- *Jobs*: the selected KTH jobs (sizes, run times, estimates), submission times compressed by `LOAD`
  (t' = t₀ + (t − t₀) / LOAD) so that the queue stays long (the paper's Baseline waits 6-19 h on Cori),
  and the window of 20 is full at most decisions.
- Per-node bytes = total // nodes, capped as `transform.transform_bb` caps them (placement on the BB
  nodes); capped requests are counted.

`regime_workload` is deterministic in its seed.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .batsim_json import Workload, WorkloadJob

__all__ = ["CONCURRENCY", "LOAD", "MACHINES", "Machine", "RegimeResult", "SCENARIOS", "TB", "regime_workload"]

TB = 10 ** 12


@dataclass(frozen=True)
class Machine:
    """One of the paper's machines (§4.1, Table 2): `nodes`, `bb` [bytes], `max_request` (largest
    ordinary original request [bytes]), `order` (the base order of §4.3: fcfs on Cori, wfp on Theta),
    `platform` (the bundled scaled platform, relative to the repository)."""

    name: str
    nodes: int
    bb: float
    max_request: float
    order: str
    platform: str


MACHINES = {
    "cori": Machine("Cori", 12076, 1.8e15, 65 * TB, "fcfs", "platforms/cori-like96.xml"),
    "theta": Machine("Theta", 4392, 2.16e15, 285 * TB, "wfp", "platforms/theta-like96.xml"),
}
#: the paper's S1-S4: (share of jobs with a BB request, lower bound of the drawn request [bytes])
SCENARIOS = {"S1": (0.5, 5 * TB), "S2": (0.75, 5 * TB), "S3": (0.5, 20 * TB), "S4": (0.75, 20 * TB)}
#: how much larger a request's share of the machine's BB is than in the paper (calibrated; module docstring)
CONCURRENCY = {"cori": 12.0, "theta": 12.0}
#: the factor submission times are compressed by (module docstring)
LOAD = 3.0


@dataclass
class RegimeResult:
    """The workload made, with counts for the report: `with_bb` jobs given a request, `capped` of
    them lowered by the placement cap, `mean_share` their mean total request as a share of the machine's BB."""

    workload: Workload
    with_bb: int
    capped: int
    mean_share: float

    def summary(self) -> str:
        return (f"{self.with_bb} of {len(self.workload.jobs)} jobs with a BB request (mean "
                f"{100 * self.mean_share:.2f} % of the machine's BB; {self.capped} capped to fit the BB nodes)")


def regime_workload(workload: Workload, *, machine: str, scenario: str, seed: int, bb_nodes: int,
                    bb_capacity: int, concurrency: float | None = None, load: float | None = None) -> RegimeResult:
    """`workload` (KTH jobs, any BB requests dropped) made into `machine`'s `scenario` on a platform of
    `bb_nodes` BB nodes of `bb_capacity` bytes (module docstring): submissions compressed by `load`
    (default `LOAD`), share × jobs (chosen uniformly) given a log-uniform request in [threshold,
    max_request] × node scale × `concurrency` (default `CONCURRENCY[machine]`).

    Returns a `RegimeResult`. Raises InputError for an unknown machine or scenario, load ≤ 0 or
    concurrency ≤ 0."""
    if machine not in MACHINES:
        raise InputError("machine", machine, f"unknown (known: {', '.join(MACHINES)})")
    if scenario not in SCENARIOS:
        raise InputError("scenario", scenario, f"unknown (known: {', '.join(SCENARIOS)})")
    m = MACHINES[machine]
    c = CONCURRENCY[machine] if concurrency is None else float(concurrency)
    f = LOAD if load is None else float(load)
    if not (c > 0 and f > 0):
        raise InputError("regime", f"concurrency={c}, load={f}", "must be > 0")
    share, low = SCENARIOS[scenario]
    rng = np.random.default_rng(seed)
    n = len(workload.jobs)
    k = int(round(share * n))
    chosen = rng.choice(n, size=k, replace=False)
    drawn = np.exp(rng.uniform(math.log(low), math.log(m.max_request), size=k))
    total_bb = bb_nodes * bb_capacity
    new_bb, capped, shares = {}, 0, []
    for i, r in zip(chosen.tolist(), drawn.tolist()):
        res = workload.jobs[i].res
        tot = r / m.bb * total_bb * c          # the paper's share of the BB × c, on this machine
        per = max(int(tot) // res, 1)
        cap = min(bb_capacity, bb_capacity // math.ceil(res / bb_nodes))
        if per > cap:
            per, capped = cap, capped + 1
        new_bb[i] = per
        shares.append(per * res / total_bb)
    t0 = min((j.subtime for j in workload.jobs), default=0.0)
    profiles = dict(workload.profiles)
    jobs = []
    for i, j in enumerate(workload.jobs):
        bb = new_bb.get(i, 0)
        name = f"{j.profile}_bb{bb}"
        if name not in profiles:
            prof = copy.deepcopy(workload.profiles[j.profile])
            prof["bb"] = bb
            profiles[name] = prof
        jobs.append(WorkloadJob(j.id, t0 + (j.subtime - t0) / f, j.walltime, j.res, name))
    used = {j.profile for j in jobs}
    desc = (f"{workload.description}; {m.name}-like {scenario} (Fan et al. 2019 §4.1): {share:g} of jobs with a "
            f"BB request log-uniform in [{low / TB:g}, {m.max_request / TB:g}] TB of {m.bb / 1e15:g} PB, share × "
            f"{c:g}; submissions compressed × {f:g}; seed {seed}")
    out = Workload(workload.name, desc, workload.nb_res, jobs, {p: v for p, v in profiles.items() if p in used})
    return RegimeResult(out, k, capped, float(np.mean(shares)) if shares else 0.0)
