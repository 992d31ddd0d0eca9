"""BBSched's bi-objective job selection (Fan et al., *Scheduling Beyond CPUs for HPC*, HPDC'19, §3.2).

A window of k jobs, job i asking ``nodes[i]`` compute nodes and ``bb[i]`` bytes of burst buffer (its
total request). A selection is x ∈ {0,1}^k; it maximises both f1(x) = Σ nodes·x (node usage) and
f2(x) = Σ bb·x (BB usage) subject to f1 ≤ ``cap_nodes`` and f2 ≤ ``cap_bb`` (the free nodes and the
free pooled BB, §3.2.1). Everything here is pure numpy on these arrays — no scheduler state:

- `ga_front`: the paper's genetic algorithm (§3.2.2-3.2.3): numpy draws, then the generations in C
  (`_ga_native`; see its docstring for the operators, the constraint handling and the mutation rate);
- `exact_front`: the true Pareto set by enumerating the 2^k subsets (k ≤ `EXACT_LIMIT`);
- `nsga2_front`: pymoo's NSGA-II on the same problem (a labelled alternative, not the paper's rule);
- `choose` : the decision rule of §3.2.4 on a front;
- `generational_distance`: GD (§3.2.3) of an approximate front to the true one (pymoo's indicator);
- `enumerate_objectives`, `best_subset`, `bin_packing`, `milp_best`: the single-objective
  baselines of §4.3 (weighted, constrained, bin packing).

Conventions. A *selection* is a bool vector over the window, job 0 = the front of the window. Ties are
broken towards the front of the window (§3.2.4: "the solution containing the jobs at the front of the
window"): of two selections, the preferred one is the larger when read as a binary number with job 0
as the most significant bit (`front_key`). Objective values are exact integers (float64 arithmetic is
exact while every sum stays below 2^53 bytes, 9 PB).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .limits import DEFAULT_MUTATION_RATE, EXACT_LIMIT, GA_LIMIT

__all__ = ["EXACT_LIMIT", "GA_LIMIT", "Front", "bin_packing", "best_subset", "choose", "enumerate_objectives",
           "exact_front", "front_key", "ga_front", "generational_distance", "milp_best", "nsga2_front"]

#: Default per-gene mutation probability p_m (the paper's §4.3 default, 0.05 %).


@dataclass(frozen=True)
class Front:
    """A Pareto front: ``points`` (m, 2) int64 — (f1 nodes, f2 bytes) — sorted by f1 descending
    (so f2 ascending), distinct; ``sets`` (m, k) bool — for each point the selection achieving it that
    is nearest the front of the window (largest `front_key`)."""

    points: np.ndarray
    sets: np.ndarray

    def __len__(self) -> int:
        return len(self.points)


def front_key(x: np.ndarray) -> int:
    """Tie-break key of a selection (bool vector, job 0 first): the integer whose most significant bit
    is job 0; larger = nearer the front of the window."""
    k = len(x)
    return int(sum(1 << (k - 1 - i) for i in np.flatnonzero(x)))


def _as_arrays(nodes, bb) -> tuple[np.ndarray, np.ndarray]:
    n = np.asarray(nodes, dtype=np.int64)
    b = np.asarray(bb, dtype=np.int64)
    if n.ndim != 1 or n.shape != b.shape:
        raise ValueError(f"nodes and bb must be 1-d arrays of one length, got {n.shape} and {b.shape}")
    if (n < 0).any() or (b < 0).any():
        raise ValueError("nodes and bb must be >= 0")
    return n, b


def _make_front(f1: np.ndarray, f2: np.ndarray, keys: np.ndarray, sets: np.ndarray) -> Front:
    """Front of candidate solutions (objectives, keys, bool sets): non-dominated distinct points, each
    with its largest-key selection."""
    if len(f1) == 0:
        return Front(np.zeros((0, 2), np.int64), np.zeros((0, sets.shape[1]), bool))
    # sort by f1 desc, f2 desc, key desc; first of each distinct point is its representative
    order = np.lexsort((-keys, -f2, -f1))
    f1, f2, sets = f1[order], f2[order], sets[order]
    first = np.ones(len(f1), bool)
    first[1:] = (f1[1:] != f1[:-1]) | (f2[1:] != f2[:-1])
    f1, f2, sets = f1[first], f2[first], sets[first]
    # non-dominated: f2 strictly above every point with a larger f1 (and best f2 at its own f1)
    prev_best = np.maximum.accumulate(np.concatenate(([-1], f2[:-1])))
    nd = f2 > prev_best
    return Front(np.stack([f1[nd], f2[nd]], axis=1).astype(np.int64), sets[nd])


# ---------------------------------------------------------------------------- exact enumeration
def enumerate_objectives(nodes, bb) -> tuple[np.ndarray, np.ndarray]:
    """f1 and f2 of all 2^k selections, as two int64 arrays of length 2^k indexed by the selection's
    `front_key` (bit k-1-i of the index = job i). Raises ValueError if k > 24."""
    n, b = _as_arrays(nodes, bb)
    k = len(n)
    if k > 24:
        raise ValueError(f"enumerating 2^{k} selections is too large (at most 24 jobs)")
    f1 = np.zeros(1, np.int64)
    f2 = np.zeros(1, np.int64)
    for i in range(k - 1, -1, -1):   # job k-1 is bit 0, job 0 the most significant bit
        f1 = np.concatenate((f1, f1 + n[i]))
        f2 = np.concatenate((f2, f2 + b[i]))
    return f1, f2


def _bits(index: np.ndarray | int, k: int) -> np.ndarray:
    idx = np.atleast_1d(np.asarray(index, dtype=np.int64))
    return ((idx[:, None] >> (k - 1 - np.arange(k))) & 1).astype(bool)


def exact_front(nodes, bb, cap_nodes: int, cap_bb: int) -> Front:
    """The true Pareto front (Fan et al. 2019 §3.2.1) by enumerating every selection.

    Args: nodes, bb: (k,) requests (nodes, bytes); cap_nodes, cap_bb: free nodes and free pooled BB.
    Returns the `Front`; the empty selection when nothing fits. Raises ValueError if k > EXACT_LIMIT.
    Cost: O(2^k) memory and time (about 10-30 ms at k = 20).
    """
    n, b = _as_arrays(nodes, bb)
    k = len(n)
    if k > EXACT_LIMIT:
        raise ValueError(f"the exact front enumerates 2^k selections: k = {k} > {EXACT_LIMIT}")
    f1, f2 = enumerate_objectives(n, b)
    idx = np.flatnonzero((f1 <= cap_nodes) & (f2 <= cap_bb))     # never empty: index 0 = no job
    g1, g2 = f1[idx], f2[idx]
    top = int(g1.max())
    best2 = np.full(top + 1, -1, np.int64)
    np.maximum.at(best2, g1, g2)
    sel = g2 == best2[g1]
    best_idx = np.full(top + 1, -1, np.int64)
    np.maximum.at(best_idx, g1[sel], idx[sel])
    levels = np.flatnonzero(best2 >= 0)[::-1]                      # f1 descending
    b2 = best2[levels]
    prev = np.maximum.accumulate(np.concatenate(([-1], b2[:-1])))
    nd = b2 > prev
    lv = levels[nd]
    return Front(np.stack([lv, best2[lv]], axis=1).astype(np.int64), _bits(best_idx[lv], k))


def best_subset(nodes, bb, cap_nodes: int, cap_bb: int, score: str, w_nodes: float = 0.5,
                total_nodes: int = 1, total_bb: int = 1) -> np.ndarray:
    """Optimal selection of a single-objective baseline (Fan et al. 2019 §4.3) by enumeration (k ≤ EXACT_LIMIT).

    `score`: ``"weighted"`` — maximise w_nodes·f1/total_nodes + (1 − w_nodes)·f2/total_bb;
    ``"nodes"`` — maximise f1 (Constrained_CPU); ``"bb"`` — maximise f2 (Constrained_BB); all under the
    capacities. Ties: the selection nearest the front of the window. Returns a (k,) bool selection.
    Raises ValueError on an unknown score or k > EXACT_LIMIT.
    """
    n, b = _as_arrays(nodes, bb)
    k = len(n)
    if k > EXACT_LIMIT:
        raise ValueError(f"enumeration of 2^{k} selections: k > {EXACT_LIMIT}")
    f1, f2 = enumerate_objectives(n, b)
    feas = (f1 <= cap_nodes) & (f2 <= cap_bb)
    if score == "weighted":
        val = w_nodes * (f1 / total_nodes) + (1.0 - w_nodes) * (f2 / total_bb)
    elif score == "nodes":
        val = f1.astype(np.float64)
    elif score == "bb":
        val = f2.astype(np.float64)
    else:
        raise ValueError(f"unknown score {score!r}")
    val = np.where(feas, val, -np.inf)
    best = val.max()
    s = int(np.flatnonzero(val == best)[-1])                      # largest key = front of the window
    return _bits(s, k)[0]


def milp_best(nodes, bb, cap_nodes: int, cap_bb: int, score: str, w_nodes: float = 0.5,
              total_nodes: int = 1, total_bb: int = 1) -> np.ndarray:
    """`best_subset` for windows larger than EXACT_LIMIT: the same objective solved as a 0/1 program
    with scipy's HiGHS MILP (optimal within HiGHS's tolerances, mip_rel_gap = 0; ties as the solver
    finds them). Returns a (k,) bool selection."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    n, b = _as_arrays(nodes, bb)
    if score == "weighted":
        c = -(w_nodes * n / total_nodes + (1.0 - w_nodes) * b / total_bb)
    elif score == "nodes":
        c = -n.astype(np.float64)
    elif score == "bb":
        c = -b / max(total_bb, 1)
    else:
        raise ValueError(f"unknown score {score!r}")
    cons = LinearConstraint(np.stack([n, b]).astype(np.float64), -np.inf, [cap_nodes, cap_bb])
    res = milp(c, constraints=cons, integrality=np.ones(len(n)), bounds=Bounds(0, 1),
               options={"mip_rel_gap": 0.0})
    if res.x is None:
        return np.zeros(len(n), bool)
    x = res.x > 0.5
    if int(n[x].sum()) > cap_nodes or int(b[x].sum()) > cap_bb:   # tolerance guard
        return np.zeros(len(n), bool)
    return x


def bin_packing(nodes, bb, cap_nodes: int, cap_bb: int, total_nodes: int, total_bb: int) -> np.ndarray:
    """Bin_Packing of Fan et al. 2019 §4.3 (after Tetris, Grandl et al. 2014): repeatedly pick the job with
    the highest alignment score — the dot product of the free resources and the job's request, both as
    fractions of the machine's totals — among those that still fit; stop when none fits. Ties: the job
    nearest the front of the window. Returns a (k,) bool selection."""
    n, b = _as_arrays(nodes, bb)
    x = np.zeros(len(n), bool)
    fn, fb = int(cap_nodes), int(cap_bb)
    while True:
        ok = ~x & (n <= fn) & (b <= fb)
        if not ok.any():
            return x
        score = np.where(ok, (fn / total_nodes) * (n / total_nodes) + (fb / total_bb) * (b / total_bb), -np.inf)
        i = int(np.argmax(score))                                  # first maximum = front of the window
        x[i] = True
        fn -= int(n[i])
        fb -= int(b[i])


# ---------------------------------------------------------------------------- decision (§3.2.4)
def choose(front: Front, total_nodes: int, total_bb: int) -> int:
    """Index into `front` of the solution chosen by Fan et al. 2019 §3.2.4.

    Start from the solution of maximum node usage (the front's first point; its set is the one nearest
    the front of the window). Another solution replaces it if its gain in BB usage is more than twice its
    loss in node usage, both as fractions of the machine's totals (`total_nodes`, `total_bb` bytes):
    (f2 − f2₀)/B > 2·(f1₀ − f1)/N, compared exactly in integers. Among several, the largest gain.
    Raises ValueError on an empty front.
    """
    if len(front) == 0:
        raise ValueError("empty front")
    f1_0, f2_0 = (int(v) for v in front.points[0])
    best, best_gain = 0, 0
    for i in range(1, len(front)):
        f1, f2 = (int(v) for v in front.points[i])
        gain, loss = f2 - f2_0, f1_0 - f1                             # bytes, nodes
        if gain * total_nodes > 2 * loss * total_bb and gain > best_gain:
            best, best_gain = i, gain
    return best


def generational_distance(approx: np.ndarray, true: np.ndarray, total_nodes: int, total_bb: int) -> float:
    """GD (Fan et al. 2019 §3.2.3): the mean over the points of `approx` of the Euclidean distance to the
    nearest point of `true`, objectives as fractions of the machine (f1/total_nodes, f2/total_bb).
    Both (m, 2) arrays of (f1 nodes, f2 bytes). Computed with pymoo's `GD` indicator."""
    from pymoo.indicators.gd import GD

    scale = np.array([float(total_nodes), float(total_bb)])
    a = np.asarray(approx, dtype=np.float64).reshape(-1, 2) / scale
    t = np.asarray(true, dtype=np.float64).reshape(-1, 2) / scale
    return float(GD(t)(a))


# ---------------------------------------------------------------------------- the GA (§3.2.2)
def ga_front(nodes, bb, cap_nodes: int, cap_bb: int, rng: np.random.Generator, *, population: int = 20,
             generations: int = 500, mutation_rate: float = DEFAULT_MUTATION_RATE) -> Front:
    """Approximate Pareto front by BBSched's genetic algorithm (Fan et al. 2019 §3.2.2-3.2.3, Fig. 3).

    - A chromosome is a selection (k genes). Generation 0: P chromosomes with genes drawn uniformly.
    - Each generation makes P children: pairs of distinct parents drawn uniformly from the population,
      one-point crossover at a uniform cut in 1..k−1 (two children per pair: prefix of one parent,
      suffix of the other), then bit-flip mutation of every child gene with probability
      `mutation_rate` (p_m; default 0.05 %, the paper's §4.3 value, within its "below 0.1 %").
    - Constraint handling (capacities): an infeasible chromosome is repaired by dropping its selected
      jobs from the back of the window until it fits — the kept jobs are the longest feasible prefix of
      its selection — so every chromosome is feasible and a feasible one is never changed.
    - Survival among the P parents and P children (§3.2.2): Set 1 = the non-dominated chromosomes, Set 2
      = the rest; Set 1 first, then Set 2, newer first within each (ages: generation of birth; same age:
      children before parents, then earlier rank); if Set 1 alone exceeds P, its P newest. Identical
      chromosomes count once in Set 1: the newest copy stays there, the others go after Set 2.
    - After G generations, the non-dominated chromosomes of the last population form the front.

    Every random number comes from `rng`, drawn up front in a fixed order (`_ga_draws`): the result is
    a pure function of the inputs and the generator's state. The generations then run in C
    (`_ga_native`, ~0.1 ms per 100 generations at w = 20; its oracle, the same generations vectorised in numpy,
    is tests/oracles/ga_numpy.py: tests/test_ga_native.py checks both equal). Raises ValueError if k > GA_LIMIT,
    P < 1, G < 0 or p_m outside [0, 1]; InputError if the C engine is missing (a broken install).
    """
    n, b = _as_arrays(nodes, bb)
    k = len(n)
    P, G = int(population), int(generations)
    if k > GA_LIMIT:
        raise ValueError(f"window of {k} jobs: the GA handles at most {GA_LIMIT}")
    if P < 1 or G < 0:
        raise ValueError(f"population must be >= 1 and generations >= 0, got {P}, {G}")
    if not 0.0 <= mutation_rate <= 1.0:
        raise ValueError(f"mutation rate must be in [0, 1], got {mutation_rate}")
    if k == 0:
        return Front(np.zeros((1, 2), np.int64), np.zeros((1, 0), bool))
    init, pa, pb, cut, flips = _ga_draws(k, P, G, mutation_rate, rng)
    from . import _ga_native

    pop, final = _ga_native.ga_loop(n, b, cap_nodes, cap_bb, init, pa, pb, cut, flips, G)
    nf, bf = n.astype(np.float64), b.astype(np.float64)
    keyw = np.ldexp(1.0, np.arange(k - 1, -1, -1))
    sets = pop[final]
    F = sets @ np.stack([nf, bf, keyw], axis=1)
    return _make_front(F[:, 0].astype(np.int64), F[:, 1].astype(np.int64), F[:, 2], sets.copy())


def _ga_draws(k: int, P: int, G: int, mutation_rate: float, rng: np.random.Generator):
    """Every random number of one GA run (k ≥ 1 genes), in this order: the first generation (P, k) bool
    (uniform genes), the first parents pa (G, ⌈P/2⌉) uniform in 0..P−1, the second pb = pa + uniform
    1..P−1 mod P (distinct), the cut points (G, ⌈P/2⌉) uniform in 1..k−1 (k when k = 1), the number of
    mutations ~ Binomial(G·P·k, p_m) and their distinct flat positions in (G, P, k)."""
    H = (P + 1) // 2
    init = rng.random((P, k)) < 0.5
    if P >= 2:
        pa = rng.integers(0, P, size=(G, H))
        pb = (pa + rng.integers(1, P, size=(G, H))) % P
    else:
        pa = pb = np.zeros((G, H), np.int64)
    cut = rng.integers(1, k, size=(G, H)) if k >= 2 else np.full((G, H), k)
    total = G * P * k
    nflip = int(rng.binomial(total, mutation_rate)) if total and mutation_rate > 0 else 0
    flips = rng.choice(total, size=nflip, replace=False) if nflip else np.zeros(0, np.int64)
    return init, pa, pb, cut, flips


# ---------------------------------------------------------------------------- pymoo NSGA-II
def nsga2_front(nodes, bb, cap_nodes: int, cap_bb: int, rng: np.random.Generator, *, population: int = 20,
                generations: int = 500, mutation_rate: float = DEFAULT_MUTATION_RATE) -> Front:
    """Approximate front by pymoo's NSGA-II (a labelled alternative to BBSched's GA, not its survival
    rule): binary random sampling, single-point crossover, bit-flip mutation (per-gene `mutation_rate`),
    duplicates kept (pymoo's elimination loops on small windows), the capacities as pymoo inequality constraints (constraint domination),
    `generations` generations of `population`. Seeded with one integer drawn from `rng`."""
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.core.problem import Problem
    from pymoo.operators.crossover.pntx import SinglePointCrossover
    from pymoo.operators.mutation.bitflip import BitflipMutation
    from pymoo.operators.sampling.rnd import BinaryRandomSampling
    from pymoo.optimize import minimize

    n, b = _as_arrays(nodes, bb)
    k = len(n)
    seed = int(rng.integers(0, 2**31 - 1))
    if k < 2:
        return exact_front(n, b, cap_nodes, cap_bb)
    M = np.stack([n, b], axis=1).astype(np.float64)
    caps = np.array([float(cap_nodes), float(cap_bb)])
    scale = np.array([max(float(n.sum()), 1.0), max(float(b.sum()), 1.0)])

    class _Window(Problem):
        def __init__(self):
            super().__init__(n_var=k, n_obj=2, n_ieq_constr=2, xl=0, xu=1, vtype=bool)

        def _evaluate(self, X, out, *args, **kwargs):
            S = X.astype(np.float64) @ M
            out["F"] = -S / scale
            out["G"] = (S - caps) / scale

    algo = NSGA2(pop_size=int(population), sampling=BinaryRandomSampling(), crossover=SinglePointCrossover(),
                 mutation=BitflipMutation(prob=1.0, prob_var=float(mutation_rate)), eliminate_duplicates=False)
    res = minimize(_Window(), algo, ("n_gen", int(generations)), seed=seed, verbose=False)
    X = res.X
    if X is None:
        return Front(np.zeros((1, 2), np.int64), np.zeros((1, k), bool))
    X = np.atleast_2d(np.asarray(X, dtype=bool))
    f1 = X.astype(np.int64) @ n
    f2 = X.astype(np.int64) @ b
    keys = X.astype(np.float64) @ np.ldexp(1.0, np.arange(k - 1, -1, -1))
    feas = (f1 <= cap_nodes) & (f2 <= cap_bb)
    if not feas.any():
        return Front(np.zeros((1, 2), np.int64), np.zeros((1, k), bool))
    return _make_front(f1[feas], f2[feas], keys[feas], X[feas])
