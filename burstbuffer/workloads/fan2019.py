"""BBSched's own regime (Fan et al., *Scheduling Beyond CPUs for HPC*, HPDC'19, §4.1): the Original and
S1-S4 workloads of a Cori-like and a Theta-like machine, built as §4.1 builds them, on a small platform.

The paper's machines (Table 2, §4.1):

| machine | compute nodes | shared BB | original requests | jobs with a request (Original) | base order |
| --- | --- | --- | --- | --- | --- |
| Cori  | 12,076 | 1.8 PB  | [1 GB, 65 TB], a few up to 165 TB | 0.618 % | FCFS |
| Theta | 4,392  | 2.16 PB (§4.1's assumption; Table 2 says 1.26 PB projected) | [1 GB, 285 TB] | 17.18 % | WFP |

S1-S4 give a BB request to 50 % (S1, S3) or 75 % (S2, S4) of the jobs, drawn from the original
requests above 5 TB (S1, S2) or 20 TB (S3, S4); the others request none. Original: the share of jobs
with a request the paper reports, drawn from the machine's whole range.

**Construction (what is the paper's, what is assumed).**

- *Platform*: 96 compute nodes (the bundled Dragonfly, `platforms/cori-like96.xml`,
  `platforms/theta-like96.xml`) with the paper machine's BB per compute node: Cori 1.8 PB / 12,076 =
  149 GB per node → 12 BB nodes × 1192 GB = 14.3 TB; Theta 2.16 PB / 4,392 = 492 GB per node → 12 × 3934 GB
  = 47.2 TB.
- *Request sizes*: the original requests are not published; a request is drawn **log-uniformly** between
  the scenario's lower bound and the machine's largest ordinary request (Cori 65 TB, Theta 285 TB) — a
  density falling with size, as the histograms of Fig. 5 do (an assumption). A drawn request r (bytes of
  the paper's machine) becomes r × (platform BB / machine BB) on the small platform: the same share of
  the machine's BB as in the paper, nothing more (no calibrated factor).
- *Jobs*: the selected KTH jobs (sizes, run times, estimates) with their submissions as the trace has
  them; `compression` > 1 (t' = t₀ + (t − t₀) / compression) is a stated option, not a default. The
  study's regime checks (`burstbuffer.reproduce.studies.bbsched_regime`) say whether the result is the
  paper's regime (offered load below 1, BB usage of the paper's class, a GA that decides).
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

__all__ = ["GB", "MACHINES", "Machine", "RegimeResult", "SCENARIOS", "TB", "regime_workload"]

GB = 10 ** 9
TB = 10 ** 12


@dataclass(frozen=True)
class Machine:
    """One of the paper's machines (§4.1, Table 2): `nodes`, `bb` [bytes], `max_request` (largest
    ordinary original request [bytes]), `original_share` (share of the jobs with a request in the
    original trace), `order` (the base order of §4.3: fcfs on Cori, wfp on Theta), `platform` (the
    bundled scaled platform, relative to the repository)."""

    name: str
    nodes: int
    bb: float
    max_request: float
    original_share: float
    order: str
    platform: str


MACHINES = {
    "cori": Machine("Cori", 12076, 1.8e15, 65 * TB, 0.00618, "fcfs", "platforms/cori-like96.xml"),
    "theta": Machine("Theta", 4392, 2.16e15, 285 * TB, 0.1718, "wfp", "platforms/theta-like96.xml"),
}
#: the paper's workloads: (share of jobs with a BB request, lower bound of the drawn request [bytes]);
#: Original's share is the machine's (`Machine.original_share`, None here), its requests from 1 GB up
SCENARIOS = {"Original": (None, 1 * GB), "S1": (0.5, 5 * TB), "S2": (0.75, 5 * TB), "S3": (0.5, 20 * TB),
             "S4": (0.75, 20 * TB)}


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
                    bb_capacity: int, compression: float = 1.0) -> RegimeResult:
    """`workload` (KTH jobs, any BB requests dropped) made into `machine`'s `scenario` (`SCENARIOS`) on a
    platform of `bb_nodes` BB nodes of `bb_capacity` bytes (module docstring): share × jobs (chosen
    uniformly; Original: the machine's `original_share`) given a log-uniform request r in [lower bound,
    max_request], r × platform BB / machine BB on the platform; submissions compressed by `compression`
    (default 1: as the trace has them).

    Returns a `RegimeResult`. Raises InputError for an unknown machine or scenario, or compression ≤ 0."""
    if machine not in MACHINES:
        raise InputError("machine", machine, f"unknown (known: {', '.join(MACHINES)})")
    if scenario not in SCENARIOS:
        raise InputError("scenario", scenario, f"unknown (known: {', '.join(SCENARIOS)})")
    m = MACHINES[machine]
    f = float(compression)
    if not f > 0:
        raise InputError("regime", f"compression={compression}", "must be > 0")
    share, low = SCENARIOS[scenario]
    share = m.original_share if share is None else share
    rng = np.random.default_rng(seed)
    n = len(workload.jobs)
    k = int(round(share * n))
    chosen = rng.choice(n, size=k, replace=False)
    drawn = np.exp(rng.uniform(math.log(low), math.log(m.max_request), size=k))
    total_bb = bb_nodes * bb_capacity
    new_bb, capped, shares = {}, 0, []
    for i, r in zip(chosen.tolist(), drawn.tolist()):
        res = workload.jobs[i].res
        tot = r / m.bb * total_bb              # the paper's share of the machine's BB
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
            f"BB request log-uniform in [{low / TB:g}, {m.max_request / TB:g}] TB of {m.bb / 1e15:g} PB, the same "
            f"share of this platform's BB; " + (f"submissions compressed × {f:g}; " if f != 1 else "") + f"seed {seed}")
    out = Workload(workload.name, desc, workload.nb_res, jobs, {p: v for p, v in profiles.items() if p in used})
    return RegimeResult(out, k, capped, float(np.mean(shares)) if shares else 0.0)
