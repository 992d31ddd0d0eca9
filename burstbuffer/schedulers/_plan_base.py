"""What the plan engine and its oracle share: the decision-time copy of the profile.

Holds `Placement` and `EngineBase` (the copied breakpoints, the per-job constants, the BB
preference per compute id, the horizon of unplaceable jobs, `bb_of_node`). `_plan_native` (the C engine) and its
oracle, the pure-Python `PlanEngine` of tests/oracles/plan_engine.py, both build on it; `plan_engine` (`make_engine`)
imports `_plan_native`, never the other way: ``_plan_native`` → ``_plan_base`` ← ``plan_engine`` → ``_plan_native``.

Units: seconds, bytes. Source: Kopanski & Rzadca, Euro-Par 2021, §3.3 (execution plan, Eq. 1)
and §4.1 (BB placement); the rule itself is `burstbuffer.schedulers.placement`.
"""
from __future__ import annotations

import math
from typing import NamedTuple, Sequence

from .base import Job
from .placement import place_bb
from .profile import AvailabilityProfile

__all__ = ["EngineBase", "Placement"]


class Placement(NamedTuple):
    """Where a job sits in a plan.

    Attributes:
        start: planned start [s].
        procs: bitmask of the chosen compute ids (bit i = id i).
        bb_free: per-BB-node minimum free bytes over the window *before* the job was placed (in
            `AvailabilityProfile.bb_ids` order); used to derive the per-node BB placement.
        bb_used: bytes taken per BB node (same order).
    """

    start: float
    procs: int
    bb_free: tuple[int, ...]
    bb_used: tuple[int, ...]


class EngineBase:
    """State common to the plan engines (built once per decision, O(breakpoints + jobs)).

    Args:
        profile: the availability profile at decision time (running jobs' holds); not modified.
        jobs: the queued jobs (index k = position in this list).
        now: decision time [s] (≥ profile origin); plans start no earlier.
        alpha: exponent α > 0 of Eq. 1. Raises ValueError otherwise.
        stage: None (the two-phase plans of the paper), or per job its stage-in (= stage-out) estimate [s]
            on the three-phase model (len = len(jobs), each ≥ 0 and finite; ValueError otherwise): a job with
            BB and a positive estimate s holds its nodes over [t, t + walltime) and its BB over
            [b0, t + walltime + s), b0 = `placement.staged_bb_start` (its stage-in start, ≥ now), placed by
            `placement.earliest_staged_window`; its waiting time in Eq. 1 is b0 − subtime (when Batsim starts
            it: jobs.csv's starting_time). Other jobs are placed as without `stage`.

    A job that cannot be placed at all (an infinite hold is in its way) counts as waiting until
    `horizon` = last finite breakpoint + Σ finite walltimes (+ 2 Σ stage estimates) + 1 s, later than any
    placed job can start, so plans that place it are preferred.
    """

    native = False

    def __init__(self, profile: AvailabilityProfile, jobs: Sequence[Job], now: float, alpha: float,
                 stage: Sequence[float] | None = None):
        if not alpha > 0:
            raise ValueError(f"alpha must be > 0, got {alpha!r}")
        if stage is not None:
            stage = [float(x) for x in stage]
            if len(stage) != len(jobs) or not all(0 <= x < math.inf for x in stage):
                raise ValueError("stage: one finite estimate ≥ 0 [s] per job expected")
        #: per job: its stage estimate [s] if it is placed staged (BB and estimate > 0), else 0.0 (None: two-phase)
        self.stage = None if stage is None else tuple(x if int(j.bb) > 0 else 0.0 for x, j in zip(stage, jobs))
        self.alpha = float(alpha)
        self.now = float(max(now, profile.origin))
        self.jobs = list(jobs)
        self.nbb = nbb = len(profile.bb_ids)
        self._keys: list[float] = []
        self._vals: list[tuple[int, tuple[int, ...], int]] = []  # placement.Slot values
        for t, m, bb, c in profile.packed_breakpoints():
            self._keys.append(t)
            self._vals.append((m, tuple(bb), c))
        # BB placement preference (chassis → group → any) per compute id, as BB indices
        self._pref: dict[int, tuple[int, ...]] = {p: profile.bb_preference_index(p)
                                                  for p in profile.platform.compute}
        groups: dict[int, int] = {}
        for p, pr in self._pref.items():
            if pr:
                groups[pr[0]] = groups.get(pr[0], 0) | (1 << p)
        #: (BB index, bitmask of the compute ids whose first preference it is), for the C mirror
        self._first_groups = tuple(sorted(groups.items()))
        # per-job constants: (res, walltime, bb per node, res × bb, quick-accept threshold)
        self._jd = [(j.res, float(j.walltime), int(j.bb), j.res * int(j.bb), (j.res + nbb) * int(j.bb))
                    for j in self.jobs]
        self._sub = [float(j.subtime) for j in self.jobs]
        last = max((t for t in self._keys if not math.isinf(t)), default=self.now)
        self.horizon = max(last, self.now) + sum(j.walltime for j in self.jobs
                                                 if not math.isinf(j.walltime)) + 1.0
        if self.stage is not None:
            self.horizon += 2.0 * sum(self.stage)

    def placements(self) -> list[tuple[int, Placement | None]]:  # pragma: no cover - abstract
        """(job index, placement or None if unplaceable) of the applied plan, in plan order."""
        raise NotImplementedError

    def bb_of_node(self, pl: Placement, need: int, bb_ids: Sequence[int]) -> dict[int, int]:
        """compute id → BB storage id for a placement (rule step 4, `placement.place_bb`)."""
        return {p: bb_ids[b] for p, b in place_bb(pl.procs, pl.bb_free, need, self._pref.__getitem__)}
