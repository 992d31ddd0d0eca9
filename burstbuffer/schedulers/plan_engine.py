"""Execution plans over a scratch copy of the availability profile (the hot path of plan-α): `make_engine`.

An *execution plan* of a permutation P of the queued jobs (Kopanski & Rzadca, Euro-Par 2021,
§3.3) puts each job, in P's order, at the earliest time ≥ now at which its processors and its
burst buffers (BB) are free for its whole walltime, given the running jobs' holds and the jobs
placed before it, and reserves them there. Its score is Eq. 1: S = Σ_j W_j^α with
W_j = planned start − subtime [s].

The engine (`_plan_native.NativePlanEngine`, C built when the package is installed) copies the profile's
breakpoints once per decision (`_plan_base.EngineBase`), then each plan only adds reservations to that copy; they
are logged and undone, so a plan that shares its first c jobs with the plan currently applied re-places only the
other ones (`apply`), and going back to the previous plan re-reserves the saved placements without searching again
(`revert`). The profile itself is never modified. Its placement rule mirrors the rule's one definition in
`placement` (`earliest_window`, `lowest_mask`, `place_bb`: the functions `AvailabilityProfile.earliest_fit` calls);
its oracle, the same engine in pure Python on those functions, is tests/oracles/plan_engine.py, and
tests/test_placement_mirror.py checks on generated profiles, jobs and platforms that both give identical placements,
plans and scores.

On the three-phase model (``stage`` given, `_plan_base.EngineBase`) a job with BB holds its nodes over its
running phase only and its BB over its stage-in, running phase and stage-out
(`placement.earliest_staged_window`; docs/policies.md "On the three-phase model").

Units: seconds, bytes. Source: Kopanski & Rzadca, Euro-Par 2021, §3.3 (execution plan, Eq. 1),
§4.1 (BB placement); docs/io-model.md §3 (the three-phase model).
"""
from __future__ import annotations

from typing import Sequence

from ._plan_base import EngineBase, Placement
from .base import Job
from .profile import AvailabilityProfile

__all__ = ["Placement", "make_engine"]


def make_engine(profile: AvailabilityProfile, jobs: Sequence[Job], now: float, alpha: float, *,
                stage: Sequence[float] | None = None) -> EngineBase:
    """The plan engine of one decision (`_plan_native.NativePlanEngine`; its arguments: profile, jobs, now [s],
    alpha > 0, and `stage`: the three-phase model's per-job stage estimates [s] (`EngineBase`), None for the
    paper's two-phase plans). Raises InputError if the C engine is missing (a broken install)."""
    from ._plan_native import NativePlanEngine

    return NativePlanEngine(profile, jobs, now, alpha, stage)
