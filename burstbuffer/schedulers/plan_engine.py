"""Execution plans over a scratch copy of the availability profile (the hot path of plan-α).

An *execution plan* of a permutation P of the queued jobs (Kopanski & Rzadca 2021, §3.3) puts each job, in P's
order, at the earliest time ≥ now at which its processors and its burst buffers (BB) are free for
its whole walltime, given the running jobs' holds and the jobs placed before it, and reserves them
there. Its score is Eq. 1: S = Σ_j W_j^α with W_j = planned start − subtime [s].

`PlanEngine` builds such plans for one decision. It copies the profile's breakpoints once (O(n)),
then each plan only adds reservations to that copy; they are logged and undone (undo log), so a
plan that shares its first c jobs with the plan currently applied re-places only the other ones
(`apply`), and going back to the previous plan re-reserves the saved placements without searching
again (`revert`). The profile itself is never modified.

The placement rule is exactly `AvailabilityProfile.earliest_fit` + `reserve` (processors: the
lowest ids free over the whole window; BB: each node's share on one BB node following the
chassis → group → any preference, docs/platform.md), on a faster representation: parallel Python lists,
BB free bytes packed in one int (one field per BB node, so a reservation subtracts all nodes at
once and a per-node minimum is a few big-int operations). tests/test_plan.py checks plans against
the profile's own `earliest_fit`/`reserve`.

A native implementation of the same engine (`burstbuffer.schedulers._plan_native`, C compiled on
first use) is used when available; it returns bit-identical results (tests compare them).

Units: seconds, bytes. Source: Kopanski & Rzadca 2021, §3.3 (execution plan, Eq. 1), docs/policies.md.
"""
from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from typing import NamedTuple, Sequence

from .base import Job
from .profile import AvailabilityProfile

__all__ = ["PlanEngine", "Placement", "make_engine"]


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


class PlanEngine:
    """Plans of a fixed list of jobs over a scratch copy of `profile` (pure Python).

    Args:
        profile: the availability profile at decision time (running jobs' holds); not modified.
        jobs: the queued jobs (index k = position in this list), each able to fit the empty
            platform (`ProfileScheduler.can_ever_fit`).
        now: decision time [s] (≥ profile origin); plans start no earlier.
        alpha: exponent α > 0 of Eq. 1.

    A job that cannot be placed at all (an infinite hold is in its way) counts as waiting until
    `horizon` = last finite breakpoint + Σ finite walltimes + 1 s, later than any placed job can
    start, so plans that place it are preferred.

    State: the *applied* plan, a permutation prefix whose reservations are in the scratch copy.
    """

    native = False

    def __init__(self, profile: AvailabilityProfile, jobs: Sequence[Job], now: float, alpha: float):
        if not alpha > 0:
            raise ValueError(f"alpha must be > 0, got {alpha!r}")
        self.alpha = float(alpha)
        self.now = float(max(now, profile.origin))
        self.jobs = list(jobs)
        bb_ids = profile.bb_ids
        caps = [int(profile.platform.bb_capacity[b]) for b in bb_ids]
        self.nbb = nbb = len(bb_ids)
        self._F = F = (max(caps).bit_length() + 1) if caps else 2   # field width incl. guard bit
        self._shifts = tuple(k * F for k in range(nbb))
        self._vmask = (1 << (F - 1)) - 1
        self._guard = sum(1 << (s + F - 1) for s in self._shifts)
        base_keys, base_vals = [], []
        for t, m, bb, c in profile.packed_breakpoints():
            base_keys.append(t)
            base_vals.append((m, c, self._pack(bb), sum(bb)))
        self._keys = base_keys
        self._vals = base_vals
        # BB placement preference (docs/platform.md) per compute id, as BB indices
        self._pref: dict[int, tuple[int, ...]] = {p: profile.bb_preference_index(p) for p in profile.platform.compute}
        groups: dict[int, int] = {}
        for p, pr in self._pref.items():
            if pr:
                groups[pr[0]] = groups.get(pr[0], 0) | (1 << p)
        self._first_groups = tuple(sorted(groups.items()))
        # per-job constants: (res, walltime, bb per node, res × bb, quick-accept threshold)
        self._jd = [(j.res, float(j.walltime), int(j.bb), j.res * int(j.bb), (j.res + nbb) * int(j.bb))
                    for j in self.jobs]
        self._sub = [float(j.subtime) for j in self.jobs]
        last = max((t for t in base_keys if not math.isinf(t)), default=self.now)
        self.horizon = max(last, self.now) + sum(j.walltime for j in self.jobs
                                                 if not math.isinf(j.walltime)) + 1.0
        # applied plan: parallel stacks (job index, placement or None, cumulative score after it);
        # a placement is kept as (start, processor mask, packed free BB, packed used BB)
        self._perm: list[int] = []
        self._pl: list[tuple[float, int, int, int] | None] = []
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
        jd = self._jd
        for k, pl, cum in zip(perm, pls, cums):
            if pl is None:
                self._log.append(None)
            else:
                t = pl[0]
                self._log.append(self._reserve(t, t + jd[k][1], pl[1], pl[3], jd[k][3]))
            self._perm.append(k)
            self._pl.append(pl)
            self._cum.append(cum)
        return self._cum[-1] if self._cum else 0.0

    def placements(self) -> list[tuple[int, Placement | None]]:
        """(job index, placement or None if unplaceable) of the applied plan, in plan order."""
        unpack = self._unpack
        return [(k, None if pl is None else Placement(pl[0], pl[1], unpack(pl[2]), unpack(pl[3])))
                for k, pl in zip(self._perm, self._pl)]

    # ------------------------------------------------------------------ internals
    def _truncate(self, c: int) -> None:
        log, keys, vals = self._log, self._keys, self._vals
        while len(log) > c:
            u = log.pop()
            if u is not None:
                lo, hi, ok, ov = u
                keys[lo:hi] = ok
                vals[lo:hi] = ov
        del self._perm[c:], self._pl[c:], self._cum[c:]

    def _extend(self, perm: Sequence[int], c: int) -> None:
        jd, sub, alpha, now = self._jd, self._sub, self.alpha, self.now
        cum = self._cum[-1] if self._cum else 0.0
        fit, choose, reserve = self._fit, self._choose, self._reserve
        for i in range(c, len(perm)):
            k = perm[i]
            res, w, need, tot, qa = jd[k]
            r = fit(res, w, need, tot, qa, now)
            if r is None:
                pl = None
                self._log.append(None)
                wait = self.horizon - sub[k]
            else:
                t, m, A = r
                chosen, used = choose(res, need, m, A)
                self._log.append(reserve(t, t + w, chosen, used, tot))
                pl = (t, chosen, A, used)
                wait = t - sub[k]
            if wait < 0.0:
                wait = 0.0
            cum += wait ** alpha
            self._perm.append(k)
            self._pl.append(pl)
            self._cum.append(cum)

    def _pack(self, vec) -> int:
        x = 0
        for s, v in zip(self._shifts, vec):
            x |= int(v) << s
        return x

    def _unpack(self, x: int) -> tuple[int, ...]:
        vm = self._vmask
        return tuple((x >> s) & vm for s in self._shifts)

    def _chunks_ok(self, x: int, need: int, res: int) -> bool:
        """Can `res` shares of `need` bytes be placed, each on one BB node (free bytes packed in x)?"""
        vm = self._vmask
        n = 0
        for s in self._shifts:
            n += ((x >> s) & vm) // need
            if n >= res:
                return True
        return False

    def _fit(self, res: int, w: float, need: int, tot: int, qa: int, t0: float):
        """Earliest start ≥ t0 (AvailabilityProfile.earliest_fit semantics): returns (start,
        free-processor mask over the window, packed per-node min free BB over the window) or None.

        A slot "alone-fits" when it has ≥ res free processors and room for res BB shares (quick
        tests on the total free BB first: < res·need → no; ≥ (res + nb BB nodes)·need → yes).
        A slot that does not alone-fit excludes every start whose window contains it.
        """
        keys, vals = self._keys, self._vals
        n = len(keys)
        i = bisect_right(keys, t0) - 1
        first = i
        chunks_ok = self._chunks_ok
        while i < n:
            m, c, bb, tb = vals[i]
            if c < res or (need and (tb < tot or (tb < qa and not chunks_ok(bb, need, res)))):
                i += 1
                continue
            t = t0 if i == first else keys[i]
            end = t + w
            j = i + 1
            nxt = -1
            while j < n and keys[j] < end:
                m2, c2, bb2, tb2 = vals[j]
                if c2 < res or (need and (tb2 < tot or (tb2 < qa and not chunks_ok(bb2, need, res)))):
                    nxt = j + 1
                    break
                m &= m2
                if m.bit_count() < res:
                    nxt = i + 1
                    break
                j += 1
            if nxt >= 0:
                i = nxt
                continue
            if not need:
                return t, m, 0
            A = bb
            if j > i + 1:
                G, F1 = self._guard, self._F - 1
                for k in range(i + 1, j):
                    B = vals[k][2]
                    ge = ((A | G) - B) & G          # guard bit set where A ≥ B (per field)
                    sel = ge - (ge >> F1)           # value bits of those fields
                    A = (B & sel) | (A & ~sel)      # per-field minimum
            if chunks_ok(A, need, res):
                return t, m, A
            i += 1
        return None

    def _choose(self, res: int, need: int, m: int, A: int) -> tuple[int, int]:
        """Lowest `res` ids of mask `m` and the packed bytes taken per BB node (greedy per node in
        ascending id, first BB node of its preference with `need` bytes left; docs/platform.md)."""
        chosen = 0
        x = m
        for _ in range(res):
            low = x & -x
            chosen |= low
            x ^= low
        if not need:
            return chosen, 0
        vm, shifts = self._vmask, self._shifts
        used = 0
        # fast path: every node's first preference has room for all nodes preferring it first
        for b, gm in self._first_groups:
            cnt = (chosen & gm).bit_count()
            if cnt:
                if cnt * need > (A >> shifts[b]) & vm:
                    break
                used |= (cnt * need) << shifts[b]
        else:
            return chosen, used
        return chosen, self._pack(self._bb_greedy(chosen, need, list(self._unpack(A))))

    def _bb_greedy(self, chosen: int, need: int, left: list[int]) -> list[int]:
        used = [0] * self.nbb
        pref = self._pref
        y = chosen
        while y:
            low = y & -y
            y ^= low
            for b in pref[low.bit_length() - 1]:
                if left[b] >= need:
                    left[b] -= need
                    used[b] += need
                    break
            else:  # pragma: no cover - excluded by the feasibility check
                raise AssertionError("BB placement failed after the feasibility check")
        return used

    def bb_of_node(self, pl: Placement, need: int, bb_ids: Sequence[int]) -> dict[int, int]:
        """compute id → BB storage id for a placement (same greedy as `AvailabilityProfile`)."""
        out: dict[int, int] = {}
        left = list(pl.bb_free)
        pref = self._pref
        y = pl.procs
        while y:
            low = y & -y
            y ^= low
            p = low.bit_length() - 1
            for b in pref[p]:
                if left[b] >= need:
                    left[b] -= need
                    out[p] = bb_ids[b]
                    break
        return out

    def _reserve(self, s: float, e: float, pm: int, dpk: int, dt: int):
        """Subtract processors `pm` and packed BB `dpk` (total `dt` bytes) over [s, e); returns the
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
        for k in range(i, hi):
            m, c, bb, tb = vals[k]
            m &= npm
            vals[k] = (m, m.bit_count(), bb - dpk, tb - dt)
        return lo, newhi, ok, ov


def make_engine(profile: AvailabilityProfile, jobs: Sequence[Job], now: float, alpha: float, *,
                native: bool | None = None) -> PlanEngine:
    """The fastest available engine: the native one if it can be built (and `native` is not
    False), else the pure-Python `PlanEngine`. ``native=True`` raises RuntimeError if the native
    engine is unavailable. Both give identical plans and scores."""
    if native is not False:
        from . import _plan_native
        cls = _plan_native.engine_class()
        if cls is not None:
            return cls(profile, jobs, now, alpha)
        if native:
            raise RuntimeError(f"native plan engine unavailable: {_plan_native.unavailable_reason()}")
    return PlanEngine(profile, jobs, now, alpha)
