"""The placement rule: when and where a job fits, given free processors and free burst buffers.

This module is the single definition of the rule. `AvailabilityProfile.fit_at` /
`earliest_fit` (the policies' profile) and the C engines' oracles (tests/oracles/plan_engine.py, plan-α's
scratch copy) call these functions; the C engine in `_plan_native` is a declared mirror of them, checked
equal on generated cases by tests/test_placement_mirror.py.

The rule (Kopanski & Rzadca, "Plan-based Job Scheduling for Supercomputers with Shared Burst
Buffers", Euro-Par 2021, §3.1 platform and BB request model, §4.1 BB placement; Algorithm 1
line 14 for the earliest start):

1. *Window.* A job asking ``res`` processors, ``need`` bytes of BB per processor, for a walltime
   ``w`` [s], fits at start ``t`` when, over the whole window ``[t, t + w)``, at least ``res``
   compute ids are free in every breakpoint (their intersection has ``res`` ids) and the
   per-BB-node minimum of free bytes can host ``res`` shares of ``need`` bytes, each share on a
   single BB node (`bb_room`).
2. *Earliest start.* Candidate starts are ``t0`` and every breakpoint after it, in order; the
   first candidate whose window fits is the start (`earliest_window`).
3. *Processors.* The ``res`` lowest free ids of the window (`lowest_mask`).
4. *BB nodes.* For each chosen compute id in ascending order, the first BB node of its
   preference list (own chassis → own group → any, `Platform.bb_preference`) that still has
   ``need`` bytes left over the window takes its share (`place_bb`).

Representation (shared with `AvailabilityProfile`): a breakpoint value is a tuple ``(mask, bb,
count)`` — mask: int bitmask of free compute ids (bit i = id i), bb: tuple of free bytes per BB
node (index = position in the profile's ``bb_ids``), count: ``mask.bit_count()``. Times are
seconds (floats, ``inf`` allowed as a key), BB amounts bytes (ints).
"""
from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from typing import Callable, Iterable, Iterator, Sequence

from procset import ProcInt, ProcSet

__all__ = ["mask_of", "procset_of", "lowest_mask", "lowest_procs", "bb_room", "window_fit",
           "earliest_window", "earliest_staged_window", "staged_window_fit", "staged_bb_start", "place_bb", "Slot"]

#: a breakpoint value: (free-processor bitmask, free bytes per BB node, number of free processors)
Slot = tuple[int, tuple[int, ...], int]


# ---------------------------------------------------------------------------- bitmasks
def mask_of(procs: ProcSet) -> int:
    """Bitmask of a ProcSet (bit i set ⇔ id i in the set); ids must be ≥ 0."""
    m = 0
    for itv in procs.intervals():
        m |= ((1 << (itv.sup - itv.inf + 1)) - 1) << itv.inf
    return m


def _runs(mask: int) -> Iterator[tuple[int, int]]:
    """(first id, length) of each run of consecutive set bits, ascending."""
    while mask:
        low = (mask & -mask).bit_length() - 1
        x = mask >> low
        n = ((~x) & (x + 1)).bit_length() - 1  # trailing ones of x
        yield low, n
        mask &= ~(((1 << n) - 1) << low)


def _direct_procsets() -> bool:
    """Whether a ProcSet can be made straight from its sorted disjoint intervals (procset 1.x keeps them in
    ``_itvs``, a list of `ProcInt`): checked once against the public constructor."""
    try:
        a, b = ProcSet((1, 2), (5, 5)), ProcSet()
        b._itvs = [ProcInt(1, 2), ProcInt(5, 5)]
        return a == b and str(a) == str(b) and list(a) == list(b) and type(a._itvs) is list
    except (AttributeError, TypeError):
        return False


_DIRECT = _direct_procsets()


def procset_of(mask: int) -> ProcSet:
    """ProcSet of a bitmask (inverse of `mask_of`). Its intervals are the mask's runs, already sorted,
    disjoint and apart: they are set directly (`_direct_procsets`), 7 times cheaper than the public
    constructor, which merges them one by one (same ProcSet; tests/test_placement.py)."""
    if _DIRECT:
        ps = ProcSet()
        ps._itvs = [ProcInt(a, a + n - 1) for a, n in _runs(mask)]
        return ps
    return ProcSet(*[(a, a + n - 1) for a, n in _runs(mask)])


def lowest_mask(mask: int, k: int) -> int:
    """The `k` lowest set bits of `mask` (all of them if it has fewer): rule step 3."""
    out = 0
    for a, n in _runs(mask):
        if k <= 0:
            break
        take = min(n, k)
        out |= ((1 << take) - 1) << a
        k -= take
    return out


def lowest_procs(free: ProcSet, k: int) -> ProcSet:
    """The `k` lowest ids of `free` (requires ``len(free) >= k``); deterministic processor choice."""
    return procset_of(lowest_mask(mask_of(free), k))


# ---------------------------------------------------------------------------- feasibility
def bb_room(free: Sequence[int], need: int, res: int) -> bool:
    """Can `res` shares of `need` bytes (> 0) be placed, each on one BB node with `free` bytes?

    Σ_b ⌊free[b] / need⌋ ≥ res. The greedy of `place_bb` always succeeds when this holds: every
    compute id's preference list names every BB node (its last level is "any")."""
    n = 0
    for f in free:
        n += f // need
        if n >= res:
            return True
    return False


def window_fit(slots: Iterable[Slot], res: int, need: int) -> tuple[int, tuple[int, ...]] | None:
    """Rule step 1 over the breakpoint values covering a window, in time order.

    Returns (bitmask of the ids free over the whole window, per-BB-node minimum of free bytes)
    or None if fewer than `res` ids stay free or (``need > 0``) the BB shares do not fit.
    `slots` must be non-empty. ``need = 0`` ignores the BB (the returned vector is then the
    first slot's, unused)."""
    it = iter(slots)
    m, bb, nfree = next(it)
    if nfree < res or (need > 0 and not bb_room(bb, need, res)):
        return None
    for m2, b2, n2 in it:
        if n2 < res:
            return None
        m &= m2
        if m.bit_count() < res:
            return None
        if need > 0:
            bb = tuple(map(min, bb, b2))
            if not bb_room(bb, need, res):
                return None
    return m, bb


def earliest_window(keys: Sequence[float], vals: Sequence[Slot], i: int, t0: float, res: int,
                    walltime: float, need: int) -> tuple[float, int, tuple[int, ...]] | None:
    """Rule step 2: the earliest start ≥ `t0` whose window fits (step 1).

    Args:
        keys: breakpoint times [s], ascending; `vals` their values (same length).
        i: index of the breakpoint in force at `t0` (``keys[i] <= t0``, the last such one).
        t0: earliest allowed start [s]; the candidates are `t0` and ``keys[i+1:]``.
        res, walltime, need: processors, walltime [s], BB bytes per processor (0 = processors only).
    Returns (start [s], bitmask of ids free over the window, per-BB-node minimum free bytes over
    the window) or None if no candidate fits. A breakpoint that alone cannot host the job rules
    out every candidate whose window contains it, so the search jumps past it. The BB minimum is
    taken once the processors fit over the window (a BB failure moves to the next candidate, as
    a processor failure does), which finds the same first fitting start as checking both at each
    breakpoint. With ``need = 0`` the returned BB vector is breakpoint i's (unused).
    """
    n = len(keys)
    first = i
    alone: list[bool | None] = [None] * (n - first)  # cache: can breakpoint j alone host the job?

    def alone_ok(j: int) -> bool:
        a = alone[j - first]
        if a is None:
            v = vals[j]
            a = alone[j - first] = v[2] >= res and (need <= 0 or bb_room(v[1], need, res))
        return a

    while i < n:
        if not alone_ok(i):
            i += 1
            continue
        t = t0 if i == first else keys[i]
        m, bb, _ = vals[i]
        end = t + walltime
        j = i + 1
        nxt = -1  # next candidate index; -1 = the processors fit over the window
        while j < n and keys[j] < end:
            if not alone_ok(j):
                nxt = j + 1  # breakpoint j blocks every start up to keys[j]
                break
            m &= vals[j][0]
            if m.bit_count() < res:
                nxt = i + 1
                break
            j += 1
        if nxt >= 0:
            i = nxt
            continue
        if need > 0 and j > i + 1:  # per-BB-node minimum over the window's breakpoints i .. j-1
            bb = tuple(map(min, *[vals[q][1] for q in range(i, j)]))
            if need > 0 and not bb_room(bb, need, res):
                i += 1
                continue
        return t, m, bb
    return None


# ---------------------------------------------------------------------------- three-phase model
def staged_bb_start(t: float, now: float, s: float) -> float:
    """Start [s] of the BB window of a job whose nodes start at `t` on the three-phase model, `s` being its
    stage-in estimate [s]: `now` for t = now + s (its stage-in starts now), else max(t − s, now)."""
    if t == now + s:
        return now
    b = t - s
    return b if b > now else now


def _last_bad(lo: int, hi: int, ok: Callable[[int], bool]) -> int:
    """The largest index q in [lo, hi) with not ok(q), or −1."""
    for q in range(hi - 1, lo - 1, -1):
        if not ok(q):
            return q
    return -1


def _staged_fit(keys: Sequence[float], vals: Sequence[Slot], now: float, t: float, res: int, walltime: float,
                need: int, s: float, node_ok: Callable[[int], bool], bb_ok: Callable[[int], bool],
                s_out: float | None = None) -> tuple[tuple[float, int, tuple[int, ...]] | None, float]:
    """One candidate of `earliest_staged_window`: ((t, node mask, BB minimum) or None, the least candidate
    worth trying next). A breakpoint that alone cannot host the job's nodes (`node_ok`) or BB shares (`bb_ok`)
    rules out every candidate whose window holds it: the next one worth trying puts the window just past the
    last such breakpoint of the window (nodes: at its end; BB: at its end + s). `s` is the stage-in estimate,
    `s_out` the stage-out one (None: = s)."""
    n = len(keys)
    end = t + walltime
    q0 = bisect_right(keys, t) - 1
    q1 = bisect_left(keys, end, q0 + 1)                  # the node window: breakpoints q0 .. q1 − 1
    bad = _last_bad(q0, q1, node_ok)
    if bad >= 0:
        return None, (keys[bad + 1] if bad + 1 < n else math.inf)
    b0, bend = staged_bb_start(t, now, s), end + (s if s_out is None else s_out)
    r0 = bisect_right(keys, b0) - 1
    r1 = bisect_left(keys, bend, r0 + 1)                 # the BB window: breakpoints r0 .. r1 − 1
    bad = _last_bad(r0, r1, bb_ok)
    if bad >= 0:
        return None, (keys[bad + 1] + s if bad + 1 < n else math.inf)
    m = vals[q0][0]
    for q in range(q0 + 1, q1):
        m &= vals[q][0]
        if m.bit_count() < res:
            return None, t
    bb = vals[r0][1]
    if r1 > r0 + 1:
        bb = tuple(map(min, *[vals[q][1] for q in range(r0, r1)]))
    if not bb_room(bb, need, res):
        return None, t
    return (t, m, bb), t


def staged_window_fit(keys: Sequence[float], vals: Sequence[Slot], now: float, t: float, res: int,
                      walltime: float, need: int, s_in: float, s_out: float
                      ) -> tuple[int, tuple[int, ...]] | None:
    """Rule step 1 for a staged hold shape (`holds.HoldShape`): the nodes free over [t, t + walltime) and the
    `need` > 0 bytes per node of BB over [`staged_bb_start`(t, now, s_in), t + walltime + s_out). Returns
    (bitmask of the ids free over the node window, per-BB-node minimum over the BB window) or None."""
    r, _ = _staged_fit(keys, vals, now, t, res, walltime, need, s_in,
                       lambda q: vals[q][2] >= res, lambda q: bb_room(vals[q][1], need, res), s_out)
    return None if r is None else (r[1], r[2])


def earliest_staged_window(keys: Sequence[float], vals: Sequence[Slot], now: float, res: int, walltime: float,
                           need: int, s: float, s_out: float | None = None
                           ) -> tuple[float, int, tuple[int, ...]] | None:
    """Rule steps 1-2 on the three-phase model (docs/io-model.md §3, docs/policies.md "On the three-phase
    model"): a job holds its BB alone during its stage-in and stage-out, each estimated at `s` [s].

    The earliest node start t ≥ now + s such that `res` compute ids are free over the node window
    [t, t + walltime) and the BB shares (`need` > 0 bytes per processor, `bb_room`) fit over the BB window
    [`staged_bb_start`(t), t + walltime + s) — the stage-in starts at or after `now`.

    Args:
        keys, vals: breakpoints as `earliest_window` (``keys[0] <= now``).
        now: decision time [s]; res, walltime [s], need [B]; s: stage-in estimate [s], ≥ 0; s_out: stage-out
            estimate [s] (None: = s).
    Candidates: now + s, every breakpoint after it and every breakpoint + s after it, ascending: the node window
    leaves an interval at a breakpoint, the BB window at a breakpoint + s, and between two candidates the windows
    only grow. Returns (t, bitmask of the ids free over the node window, per-BB-node minimum free bytes over the
    BB window) or None. `AvailabilityProfile.earliest_fit` answers it for a staged `holds.HoldShape`; the C plan
    engine (`_plan_native`) mirrors it (equal stage-in and stage-out estimates).
    """
    n = len(keys)
    t0 = now + s
    i, j = bisect_right(keys, t0), bisect_right(keys, now)
    nodes: dict[int, bool] = {}                          # per breakpoint: can it alone host the nodes, the BB
    room: dict[int, bool] = {}

    def node_ok(q: int) -> bool:
        a = nodes.get(q)
        if a is None:
            a = nodes[q] = vals[q][2] >= res
        return a

    def bb_ok(q: int) -> bool:
        a = room.get(q)
        if a is None:
            a = room[q] = bb_room(vals[q][1], need, res)
        return a

    t = nxt = t0
    while t != math.inf:
        if t >= nxt:
            r, nxt = _staged_fit(keys, vals, now, t, res, walltime, need, s, node_ok, bb_ok, s_out)
            if r is not None:
                return r
        while i < n and keys[i] <= t:
            i += 1
        while j < n and keys[j] + s <= t:
            j += 1
        a = keys[i] if i < n else math.inf
        b = keys[j] + s if j < n else math.inf
        t = a if a < b else b
    return None


# ---------------------------------------------------------------------------- placement
def place_bb(chosen: int, free: Sequence[int], need: int,
             pref: Callable[[int], Sequence[int]]) -> list[tuple[int, int]]:
    """Rule step 4: (compute id, BB index) for each id of bitmask `chosen`, ascending id.

    Args:
        chosen: bitmask of the chosen compute ids.
        free: free bytes per BB node over the window (index = BB index); not modified.
        need: bytes per compute id (≥ 0; with 0 no id gets a BB node: a job without a burst buffer
            holds none, and the io-aware model stages nothing for it).
        pref: compute id → BB indices, best first (chassis → group → any).
    Raises AssertionError if a share finds no room (impossible after `bb_room` held).

    Ids that share one preference list (the same object: `AvailabilityProfile` keeps one per chassis) take up
    the search where the previous one stopped: the BB nodes before it had no room left then, and the room only
    shrinks, so the choices are those of a search from the list's start.
    """
    if need <= 0:
        return []
    left = list(free)
    out: list[tuple[int, int]] = []
    y = chosen
    last, pos = None, 0                     # the previous id's preference list and the position it chose there
    while y:
        low = y & -y
        y ^= low
        p = low.bit_length() - 1
        order = pref(p)
        if order is not last:
            last, pos = order, 0
        for q in range(pos, len(order)):
            b = order[q]
            if left[b] >= need:
                left[b] -= need
                out.append((p, b))
                pos = q
                break
        else:
            raise AssertionError("BB placement failed after the feasibility check")
    return out
