"""The oracle of plan-α's C engine: `PlanEngine`, execution plans in pure Python over the decision-time copy of the
profile, built on the placement rule's one definition (`burstbuffer.schedulers.placement`), the implementation the
C engine (`_plan_native.NativePlanEngine`, native/plan_engine.c) mirrors function by function. Not part of the
package: tests/test_placement_mirror.py, tests/test_plan.py and tests/test_staged_plan.py check the C engine's plans
and scores against it (and it against `AvailabilityProfile.earliest_fit` + `reserve`).

`PlanEngine` copies the profile's breakpoints once (`_plan_base.EngineBase`, O(n)), then each plan only adds
reservations to that copy; they are logged and undone (undo log), so a plan that shares its first c jobs with the
plan currently applied re-places only the other ones (`apply`), and going back to the previous plan re-reserves the
saved placements without searching again (`revert`). The profile itself is never modified. Each job is placed by
`placement.earliest_window` (window and earliest start), `placement.lowest_mask` (processors) and
`placement.place_bb` (BB shares, chassis → group → any); on the three-phase model (``stage`` given) by
`placement.earliest_staged_window`.

Units: seconds, bytes. Source: Kopanski & Rzadca, Euro-Par 2021, §3.3 (execution plan, Eq. 1), §4.1 (BB placement);
docs/io-model.md §3 (the three-phase model).
"""
from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from operator import sub as _sub
from typing import Sequence

from burstbuffer.schedulers._plan_base import EngineBase, Placement
from burstbuffer.schedulers.base import Job
from burstbuffer.schedulers.placement import (earliest_staged_window, earliest_window, lowest_mask, place_bb,
                                              staged_bb_start)
from burstbuffer.schedulers.profile import AvailabilityProfile

__all__ = ["PlanEngine", "Placement"]


class PlanEngine(EngineBase):
    """Plans of a fixed list of jobs over a scratch copy of `profile` (pure Python).

    Args:
        profile: the availability profile at decision time (running jobs' holds); not modified.
        jobs: the queued jobs (index k = position in this list), each able to fit the empty
            platform (`ProfileScheduler.can_ever_fit`).
        now: decision time [s] (≥ profile origin); plans start no earlier.
        alpha: exponent α > 0 of Eq. 1 (ValueError otherwise).
        stage: None, or the per-job stage estimates [s] of the three-phase model (`EngineBase`).

    A job that cannot be placed at all (an infinite hold is in its way) counts as waiting until
    `horizon` = last finite breakpoint + Σ finite walltimes + 1 s, later than any placed job can
    start, so plans that place it are preferred.

    State: the *applied* plan, a permutation prefix whose reservations are in the scratch copy.
    """

    native = False

    def __init__(self, profile: AvailabilityProfile, jobs: Sequence[Job], now: float, alpha: float,
                 stage: Sequence[float] | None = None):
        super().__init__(profile, jobs, now, alpha, stage)
        self._zero = (0,) * self.nbb
        # applied plan: parallel stacks (job index, placement or None, cumulative score after it)
        self._perm: list[int] = []
        self._pl: list[Placement | None] = []
        self._cum: list[float] = []
        self._log: list[tuple | None] = []
        self._stash: tuple[int, list[int], list, list] | None = None

    # ------------------------------------------------------------------ search API
    def apply(self, perm: Sequence[int]) -> float:
        """Make `perm` (job indices, a permutation of range(len(jobs))) the applied plan and return
        its score S (Eq. 1). The prefix shared with the applied plan is kept; the rest is undone
        and saved so that `revert` can bring it back."""
        cur = self._perm
        c = 0
        n = min(len(cur), len(perm))
        while c < n and cur[c] == perm[c]:
            c += 1
        self._stash = (c, cur[c:], self._pl[c:], self._cum[c:])
        self._truncate(c)
        self._extend(perm, c)
        return self._cum[-1] if self._cum else 0.0

    def revert(self) -> float:
        """Back to the plan applied before the last `apply` (its saved placements are reserved
        again, not searched). Returns its score. Raises RuntimeError if there is nothing to
        revert."""
        if self._stash is None:
            raise RuntimeError("revert: no previous plan")
        c, perm, pls, cums = self._stash
        self._stash = None
        self._truncate(c)
        for k, pl, cum in zip(perm, pls, cums):
            if pl is None:
                self._log.append(None)
            else:
                self._log.append(self._hold(k, pl.start, pl.procs, pl.bb_used))
            self._perm.append(k)
            self._pl.append(pl)
            self._cum.append(cum)
        return self._cum[-1] if self._cum else 0.0

    def placements(self) -> list[tuple[int, Placement | None]]:
        """(job index, placement or None if unplaceable) of the applied plan, in plan order."""
        return list(zip(self._perm, self._pl))

    # ------------------------------------------------------------------ internals
    def _truncate(self, c: int) -> None:
        log, keys, vals = self._log, self._keys, self._vals
        while len(log) > c:
            u = log.pop()
            if u is None:
                continue
            for lo, hi, ok, ov in (reversed(u) if len(u) == 2 else (u,)):   # staged: nodes, then BB
                keys[lo:hi] = ok
                vals[lo:hi] = ov
        del self._perm[c:], self._pl[c:], self._cum[c:]

    def _extend(self, perm: Sequence[int], c: int) -> None:
        jd, sub, alpha, now = self._jd, self._sub, self.alpha, self.now
        keys, vals, nbb = self._keys, self._vals, self.nbb
        pref = self._pref.__getitem__
        stage = self.stage
        cum = self._cum[-1] if self._cum else 0.0
        for i in range(c, len(perm)):
            k = perm[i]
            res, w, need = jd[k][:3]
            s = stage[k] if stage is not None else 0.0
            if s > 0.0:
                r = earliest_staged_window(keys, vals, now, res, w, need, s)
            else:
                r = earliest_window(keys, vals, bisect_right(keys, now) - 1, now, res, w, need)
            if r is None:
                pl = None
                self._log.append(None)
                wait = self.horizon - sub[k]
            else:
                t, m, free = r
                chosen = lowest_mask(m, res)
                used = [0] * nbb
                if need:
                    for _, b in place_bb(chosen, free, need, pref):
                        used[b] += need
                else:
                    free = (0,) * nbb
                pl = Placement(t, chosen, free, tuple(used))
                self._log.append(self._hold(k, t, chosen, pl.bb_used))
                wait = (staged_bb_start(t, now, s) if s > 0.0 else t) - sub[k]
            if wait < 0.0:
                wait = 0.0
            cum += wait ** alpha
            self._perm.append(k)
            self._pl.append(pl)
            self._cum.append(cum)

    def _hold(self, k: int, t: float, pm: int, used: tuple[int, ...]):
        """Reserve job k placed at `t` (processors `pm`, BB bytes `used` per BB node); returns the undo
        record, or for a staged job the pair (BB record, nodes record): BB over [b0, t + walltime + s),
        nodes over [t, t + walltime) (`EngineBase` ``stage``)."""
        w = self._jd[k][1]
        s = self.stage[k] if self.stage is not None else 0.0
        if s > 0.0:
            e = t + w
            first = self._reserve(staged_bb_start(t, self.now, s), e + s, 0, used)
            return first, self._reserve(t, e, pm, self._zero)
        return self._reserve(t, t + w, pm, used)

    def _reserve(self, s: float, e: float, pm: int, used: tuple[int, ...]):
        """Subtract processors `pm` and BB bytes `used` (per BB node) over [s, e); returns the
        undo record (lo, hi, old keys, old values)."""
        keys, vals = self._keys, self._vals
        lo = bisect_right(keys, s) - 1
        hi = bisect_left(keys, e, lo)
        ok, ov = keys[lo:hi], vals[lo:hi]
        i = lo
        if keys[lo] != s:
            i = lo + 1
            keys.insert(i, s)
            vals.insert(i, vals[lo])
            hi += 1
        newhi = hi
        if e != math.inf and (hi == len(keys) or keys[hi] != e):
            keys.insert(hi, e)
            vals.insert(hi, vals[hi - 1])
            newhi = hi + 1
        npm = ~pm
        take = any(used)
        for k in range(i, hi):
            m, bb, _ = vals[k]
            m &= npm
            vals[k] = (m, tuple(map(_sub, bb, used)) if take else bb, m.bit_count())
        return lo, newhi, ok, ov


def oracle_engine(profile: AvailabilityProfile, jobs: Sequence[Job], now: float, alpha: float, *,
                  stage: Sequence[float] | None = None) -> PlanEngine:
    """`plan_engine.make_engine`'s signature, building the oracle."""
    return PlanEngine(profile, jobs, now, alpha, stage)


def oracle_plans():
    """A context in which plan-α's policies (`burstbuffer.schedulers.plan`) plan with the oracle instead of the C
    engine: the schedule the C engine must reproduce."""
    from unittest import mock

    return mock.patch("burstbuffer.schedulers.plan.make_engine", oracle_engine)
