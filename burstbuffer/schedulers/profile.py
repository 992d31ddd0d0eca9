"""The availability profile: free processors and free burst-buffer bytes as a step function of time.

A `sortedcontainers.SortedDict` keyed by time [s]; the
value at breakpoint ``t`` holds the free compute resources and the free bytes of every
burst-buffer (BB) node from ``t`` until the next breakpoint. The last breakpoint extends to +inf.
Reservations (running jobs until start + walltime, the EASY head job's reservation at the shadow
time) are subtracted from the breakpoints they cover; releases add them back.

Processor sets are `procset.ProcSet` at the interface (arguments and results). Inside a breakpoint
they are stored as a Python int bitmask (bit i set = compute resource id i free) with its
popcount: intersecting two fragmented ProcSets costs ~40 µs in pure Python, two ints ~0.1 µs,
and `earliest_fit` intersects once per breakpoint it visits.

Costs (n = number of breakpoints, w = breakpoints inside a job's window):

- `reserve` / `release`: O(log n + w) (two splits, w updates, two merge checks);
- `fit_at`: O(log n + w);
- `earliest_fit`: O(n) to take the breakpoints from t0 on, plus O(c·w) for the c candidate start
  times visited (a breakpoint that alone cannot host the job skips every candidate up to it);
- `advance(now)`: O(number of breakpoints dropped), amortised O(1) per breakpoint ever created.

Nothing is rebuilt from scratch per query.

Transactions (`begin` / `rollback` / `commit`) make tentative reservations cheap to undo: while a
transaction is open every change of a breakpoint is logged (key, previous value), and `rollback`
restores them in reverse order — cost proportional to the breakpoints touched, not to the profile.
Policies that try a whole plan of reservations and keep none (plan-α, conservative backfilling)
reserve inside a transaction and roll it back.

The placement rule itself (window, earliest start, lowest ids, BB preference) is defined once in
`burstbuffer.schedulers.placement`; `fit_at` / `earliest_fit` call it on the breakpoints.

Source: Kopanski & Rzadca, "Plan-based Job Scheduling for Supercomputers with Shared Burst
Buffers", Euro-Par 2021: §3.1 (BB capacity per storage node, chassis → group → any preference),
§4.1 and Algorithm 1 line 14 (earliest time at which processors and burst buffers are free for
the whole walltime).
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Iterator, NamedTuple

from procset import ProcSet
from sortedcontainers import SortedDict

from ..platforms.model import Platform
from .base import Job
from .holds import NO_STAGING, HoldShape
from .placement import (earliest_staged_window, earliest_window, lowest_mask, lowest_procs, mask_of, place_bb,
                        procset_of, staged_window_fit, window_fit)

__all__ = ["AvailabilityProfile", "BBPreference", "Fit", "lowest_procs", "mask_of", "procset_of"]


class Fit(NamedTuple):
    """Where and when a job fits.

    Attributes:
        start: start time [s] (the window is ``[start, start + walltime)``).
        procs: the chosen compute resources (exactly ``job.res`` Batsim ids, the lowest ids free
            over the whole window).
        bb_of_node: compute id → BB node (storage resource id) holding that node's ``job.bb`` bytes;
            empty when the fit was computed with ``bb_aware=False``.
    """

    start: float
    procs: ProcSet
    bb_of_node: dict[int, int]

    def bb_per_storage(self, bb_per_node: int) -> dict[int, int]:
        """Total bytes per BB node (storage id → bytes) for a job asking `bb_per_node` bytes per node."""
        return {b: k * bb_per_node for b, k in Counter(self.bb_of_node.values()).items()}   # first-seen order


# ---------------------------------------------------------------------------- the profile
_ABSENT = object()  # undo-log marker: the breakpoint did not exist


class BBPreference:
    """Which BB nodes each compute node prefers (Kopanski & Rzadca, Euro-Par 2021, §3.1; `Platform.bb_preference`),
    and the `Fit` of a window found in the profile (rule steps 3-4 of `placement`): the part of the placement that
    depends on the platform only, owned by an `AvailabilityProfile`.

    Args:
        platform: the `Platform`.
        bb_ids: the BB node storage ids, ascending (the profile's `bb_ids`: the indices of `index` point into it).
    """

    __slots__ = ("platform", "_bb_ids", "_bb_index", "_pref", "_pref_by_location", "_pref_all")

    def __init__(self, platform: Platform, bb_ids: tuple[int, ...]):
        self.platform = platform
        self._bb_ids = bb_ids
        self._bb_index = {b: i for i, b in enumerate(bb_ids)}
        self._pref: dict[int, tuple[int, ...]] = {}
        self._pref_by_location: dict[tuple[int, int] | None, tuple[int, ...]] = {}
        self._pref_all = False          # `_pref` holds every compute node (`fit`)

    def index(self, compute_id: int) -> tuple[int, ...]:
        """Indices into `bb_ids` of the BB nodes `compute_id` prefers, best first (same chassis, same
        group, any: Kopanski & Rzadca, Euro-Par 2021, §3.1; `Platform.bb_preference`).

        The order depends only on the node's (group, chassis) (`Platform.location`), so the nodes of one
        chassis share one tuple: memory and set-up O(compute nodes + chassis × BB nodes), not O(compute
        nodes × BB nodes) (platforms/dragonfly9600.xml, every compute node's list: 120 tuples, 1.5 MB and
        15 ms of CPU, where one tuple per node took 89 MB and 0.90 s)."""
        pref = self._pref.get(compute_id)
        if pref is None:
            loc = self.platform.location.get(compute_id)
            pref = self._pref_by_location.get(loc)
            if pref is None:
                pref = tuple(self._bb_index[b] for b in self.platform.bb_preference(compute_id)
                             if b in self._bb_index)
                self._pref_by_location[loc] = pref
            self._pref[compute_id] = pref
        return pref

    def fit(self, t: float, free: int, bb: tuple[int, ...], job: Job, bb_aware: bool) -> Fit:
        """The `Fit` at `t` of `job` in a window whose free processors are the bitmask `free` and free BB bytes `bb`
        (per BB node, `bb_ids` order): rule steps 3-4 (`placement`), lowest free ids, then each id's BB share by
        preference (with ``job.bb == 0`` no id gets a BB node; none without `bb_aware`)."""
        chosen = lowest_mask(free, job.res)
        procs = procset_of(chosen)
        if not bb_aware:
            return Fit(t, procs, {})
        if not self._pref_all:          # every node's list once (shared per chassis): then a plain dict look-up
            for p in self.platform.compute:
                self.index(p)
            self._pref_all = True
        ids = self._bb_ids
        return Fit(t, procs, {p: ids[b] for p, b in place_bb(chosen, bb, job.bb, self._pref.__getitem__)})


class AvailabilityProfile:
    """Step function over time of (free processors, free BB bytes per BB node).

    Args:
        platform: the `Platform` (compute ProcSet, ``bb_capacity`` {storage id: bytes},
            ``bb_preference(compute_id)``).
        origin: time [s] of the first breakpoint (the present); everything is free from it on.

    Times are seconds (floats); ``end = math.inf`` is allowed in `reserve` / `release` (a hold
    without a known end). BB amounts are bytes, given per storage id. Each breakpoint's value is
    the tuple (free-processor bitmask, free bytes per BB node in `bb_ids` order, number of free
    processors).
    """

    __slots__ = ("platform", "_slots", "_bb_ids", "_bb_index", "_caps", "_bbpref", "_all", "_undo", "_marks",
                 "changes", "releases")

    def __init__(self, platform: Platform, origin: float = 0.0):
        self.platform = platform
        if len(platform.compute) and platform.compute.min < 0:
            raise ValueError("compute resource ids must be ≥ 0")
        self._bb_ids: tuple[int, ...] = tuple(sorted(platform.bb_capacity))
        self._bb_index = {b: i for i, b in enumerate(self._bb_ids)}
        self._caps: tuple[int, ...] = tuple(int(platform.bb_capacity[b]) for b in self._bb_ids)
        self._bbpref = BBPreference(platform, self._bb_ids)    # each node's BB preference, a fit's placement
        self._all = mask_of(platform.compute)
        self._slots: SortedDict = SortedDict(
            {float(origin): (self._all, self._caps, self._all.bit_count())})
        self._undo: list[tuple[float, object]] = []  # (key, previous value or _ABSENT)
        self._marks: list[int] = []                   # undo-log length at each open `begin`
        #: counts of the changes of the free resources (`reserve`, `release`, `rollback`) and of those that may have
        #: freed some (`release`, `rollback`): equal counts, unchanged profile from the present on (`advance` only
        #: forgets the past)
        self.changes = 0
        self.releases = 0

    # ------------------------------------------------------------------ inspection
    @property
    def origin(self) -> float:
        """Time [s] of the first breakpoint (everything before it is forgotten)."""
        return self._slots.peekitem(0)[0]

    def __len__(self) -> int:
        """Number of breakpoints."""
        return len(self._slots)

    @property
    def bb_ids(self) -> tuple[int, ...]:
        """BB node storage ids, ascending."""
        return self._bb_ids

    def free_at(self, t: float) -> tuple[ProcSet, dict[int, int]]:
        """(free processors, {BB storage id: free bytes}) at time `t` (≥ origin; earlier → origin)."""
        m, bb, _ = self._slots[self._floor_key(t)]
        return procset_of(m), dict(zip(self._bb_ids, bb))

    def nb_free_at(self, t: float) -> int:
        """Number of free processors at time `t` (O(log n))."""
        return self._slots[self._floor_key(t)][2]

    def free_counts_at(self, t: float) -> tuple[int, tuple[int, ...]]:
        """(number of free processors, free bytes per BB node in `bb_ids` order) at time `t` (O(log n))."""
        _, bb, n = self._slots[self._floor_key(t)]
        return n, bb

    def breakpoints(self) -> Iterator[tuple[float, ProcSet, dict[int, int]]]:
        """Iterate over (time, free processors, {BB storage id: free bytes}), ascending time."""
        for t, (m, bb, _) in self._slots.items():
            yield t, procset_of(m), dict(zip(self._bb_ids, bb))

    def packed_breakpoints(self) -> Iterator[tuple[float, int, tuple[int, ...], int]]:
        """Iterate over the breakpoints in their packed form, ascending time: (time [s], free-processor
        bitmask (bit i = compute id i), free bytes per BB node in `bb_ids` order, number of free
        processors). For engines that copy the profile (plan_engine)."""
        for t, (m, bb, c) in self._slots.items():
            yield t, m, bb, c

    def window_keys(self, a: float, b: float) -> list[float]:
        """Keys of the breakpoints covering ``[a, b)``: the one in force at `a` (the origin for `a` before it)
        and every later one before `b`, ascending (for fits over windows of one's own, e.g.
        `burstbuffer.schedulers.staged`)."""
        return list(self._slots.irange(self._floor_key(a), b, inclusive=(True, False)))

    def keys_from(self, t: float) -> list[float]:
        """Keys of the breakpoint in force at `t` and of every later one, ascending."""
        return list(self._slots.irange(self._floor_key(t), None))

    def value_at_key(self, k: float) -> tuple[int, tuple[int, ...], int]:
        """Packed value of breakpoint `k` (a key): (free-processor bitmask, free bytes per BB node in
        `bb_ids` order, number of free processors). KeyError if `k` is not a key."""
        return self._slots[k]

    def next_key(self, k: float) -> float:
        """The first breakpoint key after `k`, or +inf if there is none."""
        i = self._slots.bisect_right(k)
        return self._slots.peekitem(i)[0] if i < len(self._slots) else math.inf

    def bb_preference_index(self, compute_id: int) -> tuple[int, ...]:
        """Indices into `bb_ids` of the BB nodes `compute_id` prefers, best first (`BBPreference.index`)."""
        return self._bbpref.index(compute_id)

    # ------------------------------------------------------------------ time
    def advance(self, now: float) -> None:
        """Forget the past: breakpoints before `now` are dropped and the value in force at `now`
        becomes the first breakpoint. No-op if `now` ≤ origin."""
        slots = self._slots
        if now <= slots.peekitem(0)[0]:
            return
        if self._marks:
            raise RuntimeError("advance: not allowed inside a transaction (rollback or commit first)")
        i = slots.bisect_right(now) - 1  # index of the value in force at `now`
        if slots.peekitem(i)[0] == now:
            for _ in range(i):
                slots.popitem(0)
        else:
            val = slots.peekitem(i)[1]
            for _ in range(i + 1):
                slots.popitem(0)
            slots[now] = val

    # ------------------------------------------------------------------ queries
    def fit_at(self, job: Job, t: float, *, bb_aware: bool = True, shape: HoldShape = NO_STAGING,
               now: float | None = None) -> Fit | None:
        """Fit `job` with its nodes starting exactly at `t` for its whole walltime, or None.

        Processors: ``job.res`` ids free over ``[t, t + walltime)`` (lowest ids chosen). With
        `bb_aware`, also each chosen node's ``job.bb`` bytes on one BB node free over the BB window,
        following ``platform.bb_preference`` (own chassis → group → any;
        Kopanski & Rzadca, Euro-Par 2021, §3.1/§4.1). Rule: `placement.window_fit`.
        The BB window is the node window for the two-phase `shape` (`holds.NO_STAGING`); for a staged shape
        it is ``[placement.staged_bb_start(t, now, shape.stage_in), t + walltime + shape.stage_out)`` (rule:
        `placement.staged_window_fit`; `now` defaults to the origin, the present of a decision).
        Raises ValueError if `t` is before the origin.
        """
        slots = self._slots
        origin = slots.peekitem(0)[0]
        if t < origin:
            raise ValueError(f"fit_at: time {t} is before the profile origin {origin}")
        need = job.bb if bb_aware else 0
        if need > 0 and not shape.empty:
            w = staged_window_fit(slots.keys(), slots.values(), origin if now is None else now, t, job.res,
                                  job.walltime, need, shape.stage_in, shape.stage_out)
        else:                                  # a decision's fits are at its time, the origin
            keys = slots.irange(t if t == origin else self._floor_key(t), t + job.walltime, inclusive=(True, False))
            w = window_fit(map(slots.__getitem__, keys), job.res, need)
        return None if w is None else self._bbpref.fit(t, w[0], w[1], job, bb_aware)

    def earliest_fit(self, job: Job, t0: float, *, bb_aware: bool = True, shape: HoldShape = NO_STAGING
                     ) -> Fit | None:
        """Earliest fit of `job` whose holds start at a time ≥ `t0` (Kopanski & Rzadca, Euro-Par 2021,
        Algorithm 1 line 14; rule: `placement.earliest_window`).

        Returns the `Fit` at the earliest start time t ≥ t0 at which ``job.res`` processors and,
        with `bb_aware`, the BB (each compute node's ``job.bb`` bytes on one BB node) are free for
        the whole window ``[t, t + walltime)``; with ``bb_aware=False`` only processors are
        considered (fcfs-easy's processor-only reservation) and ``bb_of_node`` is empty.
        Candidate start times are `t0` and the breakpoints after it. None if the job never fits
        (more processors or BB than the platform has, or an infinite hold in the way).

        A staged `shape` (`holds.HoldShape`, three-phase model): the nodes start at t ≥ t0 + stage_in (the
        stage-in starts at or after `t0`, the present of a decision) and, with `bb_aware`, the BB is held over
        ``[t − stage_in, t + walltime + stage_out)`` (rule: `placement.earliest_staged_window`).
        """
        if t0 < self.origin:
            t0 = self.origin
        slots = self._slots
        need = job.bb if bb_aware else 0
        if not shape.empty:
            if need > 0:
                r = earliest_staged_window(slots.keys(), slots.values(), t0, job.res, job.walltime, need,
                                           shape.stage_in, shape.stage_out)
                return None if r is None else self._bbpref.fit(r[0], r[1], r[2], job, bb_aware)
            t0 = t0 + shape.stage_in
        i0 = slots.bisect_right(t0) - 1
        r = earliest_window(slots.keys()[i0:], slots.values()[i0:], 0, t0, job.res, job.walltime, need)
        return None if r is None else self._bbpref.fit(r[0], r[1], r[2], job, bb_aware)

    # ------------------------------------------------------------------ updates
    def reserve(self, start: float, end: float, procs: ProcSet, bb_per_storage: dict[int, int]) -> None:
        """Take `procs` and ``bb_per_storage`` ({storage id: bytes}) over ``[start, end)``.

        Raises ValueError if `start` is before the origin, ``end <= start``, a processor is not
        free, or a BB node lacks the bytes somewhere in the window (the profile is left unchanged).
        """
        if start < self.origin:
            raise ValueError(f"reserve: start {start} is before the profile origin {self.origin}")
        if not end > start:
            raise ValueError(f"reserve: empty window [{start}, {end})")
        pm = mask_of(procs)
        delta = self._bb_delta(bb_per_storage)
        for k in self._slots.irange(self._floor_key(start), end, inclusive=(True, False)):
            m, b, _ = self._slots[k]
            if pm & m != pm:
                raise ValueError(f"reserve: processors {procset_of(pm & ~m)} are not free at "
                                 f"t={max(k, start)}")
            if any(b[i] < d for i, d in delta):
                raise ValueError(f"reserve: not enough free BB at t={max(k, start)} for {bb_per_storage}")
        self._apply(start, end, pm, delta, -1)

    def release(self, start: float, end: float, procs: ProcSet, bb_per_storage: dict[int, int]) -> None:
        """Give back `procs` and ``bb_per_storage`` over ``[start, end)`` (undo of `reserve`).

        The part of the window before the origin is ignored (the past is forgotten); an empty
        remaining window is a no-op. Raises ValueError if a processor is already free or a BB node
        would exceed its capacity (the profile is left unchanged).
        """
        start = max(start, self.origin)
        if not end > start:
            return
        pm = mask_of(procs)
        if pm & ~self._all:
            raise ValueError(f"release: {procset_of(pm & ~self._all)} are not compute resources")
        delta = self._bb_delta(bb_per_storage)
        caps = self._caps
        for k in self._slots.irange(self._floor_key(start), end, inclusive=(True, False)):
            m, b, _ = self._slots[k]
            if pm & m:
                raise ValueError(f"release: processors {procset_of(pm & m)} are already free at "
                                 f"t={max(k, start)}")
            if any(b[i] + d > caps[i] for i, d in delta):
                raise ValueError(f"release: BB over capacity at t={max(k, start)} for {bb_per_storage}")
        self._apply(start, end, pm, delta, +1)

    # ------------------------------------------------------------------ transactions
    def begin(self) -> int:
        """Open a (possibly nested) transaction; returns its depth (1 for the outermost).

        Until the matching `rollback` or `commit`, every change made by `reserve` / `release` is
        logged so that `rollback` can undo it in O(breakpoints touched). `advance` is refused
        inside a transaction (RuntimeError)."""
        self._marks.append(len(self._undo))
        return len(self._marks)

    def rollback(self) -> None:
        """Undo every change since the matching `begin` and close that transaction.
        Raises RuntimeError if no transaction is open."""
        if not self._marks:
            raise RuntimeError("rollback: no open transaction")
        mark = self._marks.pop()
        undo, slots = self._undo, self._slots
        self.changes += 1
        self.releases += 1
        while len(undo) > mark:
            k, old = undo.pop()
            if old is _ABSENT:
                del slots[k]
            else:
                slots[k] = old

    def commit(self) -> None:
        """Keep the changes since the matching `begin` and close that transaction (inside an
        outer transaction they stay undoable by the outer `rollback`). Raises RuntimeError if no
        transaction is open."""
        if not self._marks:
            raise RuntimeError("commit: no open transaction")
        self._marks.pop()
        if not self._marks:
            self._undo.clear()

    @property
    def in_transaction(self) -> bool:
        """True while a transaction opened by `begin` is pending."""
        return bool(self._marks)

    # ------------------------------------------------------------------ internals
    def _set(self, k: float, v) -> None:
        """slots[k] = v, logged when a transaction is open."""
        if self._marks:
            self._undo.append((k, self._slots.get(k, _ABSENT)))
        self._slots[k] = v

    def _del(self, k: float) -> None:
        """del slots[k], logged when a transaction is open."""
        if self._marks:
            self._undo.append((k, self._slots[k]))
        del self._slots[k]

    def _floor_key(self, t: float) -> float:
        """Key of the breakpoint in force at `t` (the origin for t before it)."""
        i = self._slots.bisect_right(t) - 1
        return self._slots.peekitem(max(i, 0))[0]

    def _split(self, t: float) -> None:
        if t not in self._slots and not math.isinf(t):
            self._set(t, self._slots[self._floor_key(t)])

    def _apply(self, start: float, end: float, pm: int, delta: list[tuple[int, int]], sign: int) -> None:
        """Take (`sign` < 0) or give back `pm` and the sparse BB `delta` ([(BB index, bytes)]) over
        ``[start, end)``; only the BB nodes in `delta` are touched (a BB vector has one entry per BB node of
        the platform: 1,200 at 10,800 hosts)."""
        slots = self._slots
        self.changes += 1
        if sign > 0:
            self.releases += 1
        self._split(start)
        self._split(end)
        for k in list(slots.irange(start, end, inclusive=(True, False))):
            m, b, _ = slots[k]
            m = m & ~pm if sign < 0 else m | pm
            if delta:
                nb = list(b)
                for i, d in delta:
                    nb[i] += sign * d
                b = tuple(nb)
            self._set(k, (m, b, m.bit_count()))
        self._merge(end)
        self._merge(start)

    def _merge(self, t: float) -> None:
        """Drop breakpoint `t` if it carries the same value as its predecessor."""
        slots = self._slots
        if t not in slots:
            return
        i = slots.index(t)
        if i > 0 and slots.peekitem(i - 1)[1] == slots[t]:
            self._del(t)

    def _bb_delta(self, bb_per_storage: dict[int, int]) -> list[tuple[int, int]]:
        """{storage id: bytes} → [(BB index, bytes)] for the BB nodes with bytes, ascending index.
        Raises ValueError for a storage id that is not a BB node of the platform."""
        index = self._bb_index
        try:                                   # distinct storage ids: distinct indices
            delta = sorted([(index[b], int(n)) for b, n in bb_per_storage.items()])
        except KeyError as exc:
            raise ValueError(f"storage id {exc.args[0]} is not a BB node of the platform") from None
        return [x for x in delta if x[1]]
