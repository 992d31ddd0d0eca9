"""0/1 knapsacks of the Cerberus policy (Yan et al., *Cerberus: A 3-Phase Burst Buffer Aware Batch Scheduler
for HPC Systems*, §3.2 Problem 1 and §3.3 Problem 2; docs/policies.md "cerberus").

`knapsack(values, weights, capacities)` selects items maximising Σ values[i]·x[i] subject to
Σ weights[k][i]·x[i] ≤ capacities[k] for every resource k, x ∈ {0, 1}. Problem 1 is the case of one
resource with values = weights (fill the free burst buffer); Problem 2 has two resources (free compute
nodes, free BB).

Methods (chosen by `method="auto"`, measured in benchmarks/bench_knapsack.py):

- ``"dp"``: exact dynamic programme over the reachable weight vectors with dominance pruning (a state is
  dropped when another one has no more weight on every resource and at least the value). Fastest for few
  items; its state count can grow as 2^n, so "auto" uses it up to `DP_LIMIT` items.
- ``"milp"``: mixed-integer programme solved by HiGHS through `scipy.optimize.milp` with a zero
  relative gap; the rows are scaled by their capacity, and the answer is checked in exact integer
  arithmetic (items are dropped, lowest value first, should HiGHS' feasibility tolerance let a row
  exceed its capacity), then every item that still fits is added, largest value first. That answer is
  replaced only by a strictly better one: the items worth less than `FINE` of the largest value (which
  HiGHS' tolerances cannot tell apart) re-chosen by the DP in the room the others leave, the greedy
  heuristic's answer and the largest items first (HiGHS' presolve has called a far worse answer optimal near its feasibility
  tolerance). Optimal up to HiGHS' absolute tolerances on the objective scaled to 1: its value is within a
  relative 1e-6 of the optimum (with byte-sized weights, a few hundred bytes of a 100 MB fill;
  tests/test_knapsack.py). "auto" uses it from `DP_LIMIT` + 1 to `EXACT_LIMIT` items.
- ``"greedy"``: the heuristic above `EXACT_LIMIT` items: items by decreasing value density
  (value / Σ_k weight_k / capacity_k), each taken if it still fits.
- ``"exact"``: an exact method at every size, never the heuristic: "dp" up to `DP_LIMIT` items, "milp" above
  (the as-written Cerberus; "auto" differs only above `EXACT_LIMIT` items).

Weights and capacities are non-negative integers, values non-negative numbers; no method draws random
numbers, so a result depends on the inputs only.
"""
from __future__ import annotations

from typing import Sequence

__all__ = ["DP_LIMIT", "EXACT_LIMIT", "METHODS", "knapsack", "total"]

#: the `method` names of `knapsack`
METHODS = ("auto", "exact", "dp", "milp", "greedy")

#: "auto": exact DP up to this many items, milp above (measured: benchmarks/bench_knapsack.py).
DP_LIMIT = 24
#: "auto": greedy heuristic above this many items.
EXACT_LIMIT = 200


def total(values: Sequence[float], chosen: Sequence[int]) -> float:
    """Σ values[i] over `chosen`."""
    return sum(values[i] for i in chosen)


def _fits(weights: Sequence[Sequence[int]], capacities: Sequence[int], chosen: Sequence[int]) -> bool:
    return all(sum(w[i] for i in chosen) <= c for w, c in zip(weights, capacities))


def _dp(values, weights, capacities) -> list[int]:
    m, n = len(capacities), len(values)
    # state: (weight vector) -> (value, chosen tuple); keep only non-dominated states
    states: list[tuple[tuple[int, ...], float, tuple[int, ...]]] = [((0,) * m, 0.0, ())]
    for i in range(n):
        wi = tuple(weights[k][i] for k in range(m))
        new = list(states)
        for w, v, ch in states:
            nw = tuple(a + b for a, b in zip(w, wi))
            if all(a <= c for a, c in zip(nw, capacities)):
                new.append((nw, v + values[i], ch + (i,)))
        kept: list[tuple[tuple[int, ...], float, tuple[int, ...]]] = []
        if m == 1:   # one resource: by weight, keep a state only if it beats every lighter one (O(S log S))
            new.sort(key=lambda s: (s[0], -s[1], s[2]))
            for s in new:
                if not kept or s[1] > kept[-1][1]:
                    kept.append(s)
        else:        # dominance pruning: by value desc, keep states no kept one dominates
            new.sort(key=lambda s: (-s[1], s[0], s[2]))
            for s in new:
                if not any(k[1] >= s[1] and all(a <= b for a, b in zip(k[0], s[0])) for k in kept):
                    kept.append(s)
        states = kept
    best = max(states, key=lambda s: (s[1], [-i for i in s[2]]))
    return list(best[2])


def _milp(values, weights, capacities) -> list[int]:
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp

    n = len(values)
    rows, ub = [], []
    for w, c in zip(weights, capacities):
        rows.append(np.asarray(w, dtype=float) / c if c > 0 else np.asarray(w, dtype=float))
        ub.append(1.0 if c > 0 else 0.0)
    scale = max(values) or 1.0                   # objective of order 1: HiGHS' tolerances are absolute
    res = milp(-np.asarray(values, dtype=float) / scale, integrality=np.ones(n),
               bounds=Bounds(np.zeros(n), np.ones(n)),
               constraints=LinearConstraint(np.vstack(rows), -np.inf, np.asarray(ub)),
               options={"mip_rel_gap": 0.0, "presolve": True})
    if res.x is None:
        return []
    chosen = [i for i in range(n) if res.x[i] > 0.5]
    while chosen and not _fits(weights, capacities, chosen):   # exact integer check (HiGHS tolerances)
        chosen.remove(min(chosen, key=lambda i: (values[i], -i)))
    # HiGHS' absolute optimality gap (1e-6 of the objective scaled to 1) hides items worth less than that share
    # of the largest value (a 1-byte share beside a 6 GB one): add, largest value first, every item that still fits
    left = sorted((i for i in range(n) if i not in set(chosen) and values[i] > 0), key=lambda i: (-values[i], i))
    for i in left:
        if _fits(weights, capacities, chosen + [i]):
            chosen.append(i)
    return sorted(_no_worse(values, weights, capacities, chosen, scale))


#: `_no_worse`: items worth less than this share of the largest value are re-chosen by the DP
FINE = 1e-3


def _no_worse(values, weights, capacities, chosen: list[int], scale: float) -> list[int]:
    """HiGHS' answer `chosen`, replaced only by a strictly better one: its items worth less than `FINE` of the
    largest value (which HiGHS' absolute tolerances cannot tell apart) re-chosen by the DP in the capacity the
    others leave, when they are at most `DP_LIMIT`; then the greedy heuristic's answer and `_by_value`'s, should
    one be better (HiGHS' presolve has been seen to return a far worse answer as "optimal" near its feasibility
    tolerance: ``tests/test_knapsack.py``)."""
    best, value = chosen, total(values, chosen)
    fine = [i for i in range(len(values)) if values[i] < FINE * scale]
    if 0 < len(fine) <= DP_LIMIT:
        kept = [i for i in chosen if values[i] >= FINE * scale]
        room = [c - sum(w[i] for i in kept) for w, c in zip(weights, capacities)]
        sub = _dp([values[i] for i in fine], [[w[i] for i in fine] for w in weights], room)
        cand = kept + [fine[j] for j in sub]
        if total(values, cand) > value:
            best, value = cand, total(values, cand)
    for cand in (_greedy(values, weights, capacities), _by_value(values, weights, capacities)):
        if total(values, cand) > value:
            best, value = cand, total(values, cand)
    return best


def _by_value(values, weights, capacities) -> list[int]:
    """Items by decreasing value (then index), each taken if it still fits: the floor that keeps the largest
    item that fits, which a density order tied to the last bit may pass over."""
    used = [0] * len(capacities)
    chosen = []
    for i in sorted(range(len(values)), key=lambda i: (-values[i], i)):
        if all(u + w[i] <= c for u, w, c in zip(used, weights, capacities)):
            chosen.append(i)
            used = [u + w[i] for u, w in zip(used, weights)]
    return chosen


def _greedy(values, weights, capacities) -> list[int]:
    n = len(values)

    def density(i: int) -> float:
        load = sum(w[i] / c for w, c in zip(weights, capacities) if c > 0)
        return values[i] / load if load > 0 else float("inf")

    used = [0] * len(capacities)
    chosen = []
    for i in sorted(range(n), key=lambda i: (-density(i), -values[i], i)):
        if all(u + w[i] <= c for u, w, c in zip(used, weights, capacities)):
            chosen.append(i)
            used = [u + w[i] for u, w in zip(used, weights)]
    return sorted(chosen)


def knapsack(values: Sequence[float], weights: Sequence[Sequence[int]], capacities: Sequence[int], *,
             method: str = "auto") -> list[int]:
    """Indices (increasing) of the items chosen (see the module docstring).

    Args:
        values: n item values (≥ 0).
        weights: m rows of n non-negative integer weights (one row per resource).
        capacities: m non-negative integer capacities.
        method: "auto", "exact", "dp", "milp" or "greedy".

    Raises ValueError on mismatched shapes, a negative weight/value/capacity, or an unknown method.
    """
    n = len(values)
    if len(weights) != len(capacities) or any(len(w) != n for w in weights):
        raise ValueError("knapsack: weights must be one row of len(values) per capacity")
    if any(v < 0 for v in values) or any(c < 0 for c in capacities) or any(x < 0 for w in weights for x in w):
        raise ValueError("knapsack: values, weights and capacities must be >= 0")
    # items that can never fit, or have no value, are left out before solving
    items = [i for i in range(n) if values[i] > 0 and all(w[i] <= c for w, c in zip(weights, capacities))]
    if not items:
        return []
    v = [values[i] for i in items]
    rows = [k for k, row in enumerate(weights) if any(row[i] for i in items)]   # all-zero rows constrain nothing
    w = [[weights[k][i] for i in items] for k in rows]
    capacities = [capacities[k] for k in rows]
    if not rows:                                 # nothing constrains: take every item of value
        return items
    if method == "auto":
        method = "dp" if len(items) <= DP_LIMIT else "milp" if len(items) <= EXACT_LIMIT else "greedy"
    elif method == "exact":
        method = "dp" if len(items) <= DP_LIMIT else "milp"
    solver = {"dp": _dp, "milp": _milp, "greedy": _greedy}.get(method)
    if solver is None:
        raise ValueError(f"knapsack: unknown method {method!r} (dp, milp, greedy, auto, exact)")
    return sorted(items[i] for i in solver(v, w, list(capacities)))
