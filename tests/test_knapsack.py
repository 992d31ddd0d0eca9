"""Cerberus' knapsacks (burstbuffer.schedulers.knapsack; Cerberus §3.2 Problem 1, §3.3 Problem 2) against brute force."""
from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from .conftest import examples

from burstbuffer.schedulers.knapsack import DP_LIMIT, EXACT_LIMIT, knapsack, total


def brute(values, weights, caps):
    n, best = len(values), 0.0
    for k in range(n + 1):
        for c in combinations(range(n), k):
            if all(sum(w[i] for i in c) <= cap for w, cap in zip(weights, caps)):
                best = max(best, sum(values[i] for i in c))
    return best


def check(values, weights, caps, method):
    chosen = knapsack(values, weights, caps, method=method)
    assert chosen == sorted(set(chosen))
    assert all(sum(w[i] for i in chosen) <= c for w, c in zip(weights, caps))
    return total(values, chosen)


@settings(max_examples=examples(2), deadline=None)
# HiGHS' presolve called this optimal at 645,644 B: the greedy answer is kept, being better (knapsack._no_worse)
@example(bbs=[644, 0, 645000, 0, 644998778], free=644999415, method="milp")
# small shares HiGHS' tolerances cannot tell apart, re-chosen by the DP
@example(bbs=[0, 176983992178, 0, 792711, 0, 0, 395123, 0, 524242, 875849], free=176985666871, method="milp")
# presolve again, and a density order tied to the last bit passing over the largest item: largest first kept
@example(bbs=[65, 644999, 644998592], free=644998656, method="milp")
@given(st.lists(st.integers(0, 10**12), max_size=10), st.integers(0, 3 * 10**12),
       st.sampled_from(["dp", "milp", "exact"]))
def test_problem1_fills_the_free_bb_exactly_as_brute_force(bbs, free, method):
    """Problem 1: max Σ bb·x s.t. Σ bb·x ≤ free BB (byte-sized weights, so HiGHS' tolerances matter): the DP
    exactly, milp within HiGHS' relative 1e-6 of the optimum (knapsack module docstring)."""
    got, best = check(bbs, [bbs], [free], method), brute(bbs, [bbs], [free])
    if method in ("dp", "exact"):                 # "exact" is the DP up to DP_LIMIT items
        assert got == best
    else:
        assert best - 1e-6 * best <= got <= best


@settings(max_examples=examples(2), deadline=None)
@given(st.integers(1, 10).flatmap(lambda n: st.tuples(
    st.lists(st.integers(1, 1000), min_size=n, max_size=n), st.lists(st.integers(1, 96), min_size=n, max_size=n),
    st.lists(st.integers(0, 40), min_size=n, max_size=n))), st.integers(0, 96), st.integers(0, 100),
    st.sampled_from(["dp", "milp", "exact"]))
def test_problem2_maximises_profit_under_nodes_and_bb_as_brute_force(items, nodes, bb, method):
    profit, c, b = items
    assert check(profit, [c, b], [nodes, bb], method) == pytest.approx(brute(profit, [c, b], [nodes, bb]))


@given(st.lists(st.integers(1, 100), max_size=10), st.integers(0, 300))
def test_greedy_is_feasible_and_at_most_optimal(bbs, free):
    assert check(bbs, [bbs], [free], "greedy") <= brute(bbs, [bbs], [free])


def test_exact_stays_exact_above_the_auto_limit():
    """Problem 1 with 201 items that each fit 1000 B: two of 500 B and 199 of 999 B. The optimum is 1000 B (the
    two halves); "auto" turns greedy above EXACT_LIMIT = 200 items and takes one 999 B item, "exact" (milp at this
    size) finds the optimum, as brute force on the distinct sizes says."""
    sizes = [500, 500] + [999] * 199
    assert len(sizes) > EXACT_LIMIT
    assert total(sizes, knapsack(sizes, [sizes], [1000], method="exact")) == 1000 == brute([500, 500, 999],
                                                                                           [[500, 500, 999]], [1000])
    assert total(sizes, knapsack(sizes, [sizes], [1000], method="auto")) == 999


@settings(max_examples=examples(1), deadline=None)
@given(st.integers(DP_LIMIT + 1, DP_LIMIT + 8).flatmap(lambda n: st.tuples(
    st.lists(st.integers(1, 50), min_size=n, max_size=n), st.lists(st.integers(1, 8), min_size=n, max_size=n),
    st.lists(st.integers(0, 20), min_size=n, max_size=n))), st.integers(0, 12), st.integers(0, 30))
def test_exact_above_the_dp_limit_matches_the_dp(items, nodes, bb):
    """Above DP_LIMIT items "exact" is milp: the same optimum as the DP (exact, checked against brute force
    below the limit) on two-constraint instances (Problem 2)."""
    profit, c, b = items
    assert check(profit, [c, b], [nodes, bb], "exact") == pytest.approx(check(profit, [c, b], [nodes, bb], "dp"))


def test_bad_input():
    with pytest.raises(ValueError, match="method"):
        knapsack([1], [[1]], [1], method="annealing")
    with pytest.raises(ValueError, match=">= 0"):
        knapsack([1], [[-1]], [1])
    with pytest.raises(ValueError, match="row"):
        knapsack([1, 2], [[1]], [1])
