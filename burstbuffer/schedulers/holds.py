"""The shape of a job's holds: which resources a job holds, over which windows, under a job model.

A job model states the shape (`burstbuffer.io_model.base.JobModel.hold_shape`); the availability profile
answers placement queries for it (`profile.AvailabilityProfile.fit_at` / `earliest_fit`, one placement rule:
`placement`); every policy on the profile (`profile_scheduler.ProfileScheduler`, the user `api.Policy`) plans with it.
No policy knows which job model it runs under: it sees only shapes.

A job whose nodes start at ``t`` holds

- its compute nodes over ``[t, t + walltime)``;
- its burst buffer (BB) over ``[t − stage_in, t + walltime + stage_out)``.

Two-phase job models (io-aware, alloc-only) have empty stagings (`NO_STAGING`): nodes and BB over the same
window, the stage-in and stage-out being part of the job's run (Kopanski & Rzadca, Euro-Par 2021, §3.1, §4.1).
The three-phase model (docs/io-model.md §3; Cerberus, §2) holds BB alone during the stagings: a policy then
decides a `base.StageIn` when the stage-in may start and a `base.Start` once it is done.

The stage durations are the model's estimates (`stage_estimate`: the bytes over a staging bandwidth, by default
the paper's PFS link, 5 GB/s, docs/platform.md §1), a lower bound of the real staging.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from procset import ProcSet

from ..platforms.model import Platform
from .base import Job

__all__ = ["HoldShape", "NO_STAGING", "STAGING_BANDWIDTH", "STAGINGS", "bind_slots", "check_staging",
           "platform_fit_reason", "stage_estimate", "wake_time"]

#: default stage-in / stage-out bandwidth [B/s]: the paper's PFS link (docs/platform.md §1)
STAGING_BANDWIDTH = 5e9
#: values of the policies' ``staging`` option: "bb-first" (BB alone during the stagings when the job model
#: separates them) or "with-nodes" (a job keeps its nodes from stage-in to stage-out, as two-phase)
STAGINGS = ("bb-first", "with-nodes")


@dataclass(frozen=True)
class HoldShape:
    """A job's holds relative to the start ``t`` of its nodes (module docstring).

    Attributes:
        stage_in: BB held before the nodes [s] (≥ 0).
        stage_out: BB held after the nodes' walltime [s] (≥ 0).
    """

    stage_in: float = 0.0
    stage_out: float = 0.0

    def __post_init__(self):
        for name in ("stage_in", "stage_out"):
            v = getattr(self, name)
            if not (0.0 <= v < math.inf):
                raise ValueError(f"HoldShape.{name} must be a finite number of seconds ≥ 0, got {v!r}")

    @property
    def empty(self) -> bool:
        """True for the two-phase shape: nodes and BB over the same window."""
        return self.stage_in == 0.0 and self.stage_out == 0.0


#: the two-phase shape (io-aware, alloc-only; a job without BB on every model)
NO_STAGING = HoldShape()


def stage_estimate(job: Job, bandwidth: float) -> float:
    """Estimated length [s] of `job`'s stage-in (= of its stage-out): res × bb bytes / `bandwidth` [B/s]; 0 for
    a job without BB (docs/io-model.md §3)."""
    return job.bb_total / bandwidth if job.bb > 0 else 0.0


def check_staging(staging: str, bandwidth: float) -> None:
    """ValueError unless `staging` is one of `STAGINGS` and `bandwidth` [B/s] > 0 and finite."""
    if staging not in STAGINGS:
        raise ValueError(f"unknown staging {staging!r}; valid: {', '.join(STAGINGS)}")
    if isinstance(bandwidth, bool) or not (isinstance(bandwidth, (int, float)) and 0 < bandwidth < math.inf):
        raise ValueError(f"staging_bandwidth must be a positive number of bytes per second, got {bandwidth!r}")


def bind_slots(platform: Platform, procs: ProcSet, slots: tuple[int, ...]) -> dict[int, int]:
    """Compute node → BB node: each node of `procs`, in id order, takes a remaining slot (BB node of one of
    the job's shares, `StageIn.bb_slots`) on the first BB node of its preference list (docs/platform.md §2:
    own chassis, own group, any). {} for a job without BB."""
    if not slots:
        return {}
    left: dict[int, int] = {}
    for b in slots:
        left[b] = left.get(b, 0) + 1
    out = {}
    for node in procs:
        b = next((b for b in platform.bb_preference(node) if left.get(b, 0) > 0), None)
        if b is None:
            b = next(b for b, k in left.items() if k > 0)
        left[b] -= 1
        out[node] = b
    return out


def platform_fit_reason(platform: Platform, job: Job) -> str | None:
    """None if `job` fits the empty `platform`, else the one-line reason it never can (docs/policies.md).

    Reasons: walltime not > 0; res < 1; res > number of compute nodes; negative BB; bb per node larger than
    the largest BB node; res × bb not placeable on the BB nodes with each node's share on a single BB node."""
    if not (job.walltime > 0):
        return f"walltime {job.walltime} is not > 0"
    if job.res < 1:
        return f"requests {job.res} compute nodes"
    n = platform.nb_compute
    if job.res > n:
        return f"requests {job.res} compute nodes, the platform has {n}"
    if job.bb < 0:
        return f"negative burst-buffer request {job.bb} B per node"
    if job.bb > 0:
        largest = max(platform.bb_capacity.values(), default=0)
        if job.bb > largest:
            return (f"requests {job.bb} B of burst buffer per node, the largest BB node holds "
                    f"{largest} B")
        slots = sum(c // job.bb for c in platform.bb_capacity.values())
        if slots < job.res:
            return (f"{job.res} nodes × {job.bb} B of burst buffer cannot be placed on the BB "
                    f"nodes (room for {slots} such shares)")
    return None


def wake_time(t: float) -> float:
    """The first time on the microsecond grid at or after `t` [s] (Batsim's message times have 6 decimals).

    Successive plans give the same planned stage-in start a few 1e-9 s apart (t − s from different
    breakpoints); asked as distinct CALL_ME_LATERs, the real Batsim 4.2.1 delivers them together and the
    embedded simulator one by one — one more decision, and plan-α's annealing then draws other random moves
    (benchmarks/three_phase_batsim.py). On the grid they are one time, asked once (the app skips a pending time).
    A wake-up up to 1 µs late starts the stage-in then, its plan being recomputed there."""
    w = math.ceil(t * 1e6) / 1e6
    return w if w >= t else (math.ceil(t * 1e6) + 1) / 1e6
