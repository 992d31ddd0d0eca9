"""Frozen copy of `moo.ga_front` as it was before the C loop (commit 8b06b69), the reference the
faster paths are checked against (tests/test_ga_native.py). Not used by the package."""
from __future__ import annotations

import numpy as np

from burstbuffer.schedulers.moo import DEFAULT_MUTATION_RATE, GA_LIMIT, Front, _as_arrays, _make_front


def ga_front_reference(nodes, bb, cap_nodes: int, cap_bb: int, rng: np.random.Generator, *, population: int = 20,
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

    Every random number comes from `rng` (drawn up front, in a fixed order): the result is a pure
    function of the inputs and the generator's state. Vectorised over the population; per generation
    about 25 numpy calls on (2P × k) arrays. Raises ValueError if k > GA_LIMIT, P < 1, G < 0 or p_m
    outside [0, 1].
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
    nf, bf = n.astype(np.float64), b.astype(np.float64)
    keyw = np.ldexp(1.0, np.arange(k - 1, -1, -1))                  # 2^(k-1-i): job 0 most significant
    V = np.stack([nf, bf, nf + bf, keyw], axis=1)                    # objectives, their sum, the key
    tri = np.triu(np.ones((k, k)))                                   # prefix sums by matmul
    U = np.concatenate([tri * nf[:, None], tri * bf[:, None]], axis=1)
    capv = np.concatenate([np.full(k, float(cap_nodes)), np.full(k, float(cap_bb))])

    # --- every random draw, up front
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
    mut = np.zeros(total, bool)
    if nflip:
        mut[rng.choice(total, size=nflip, replace=False)] = True
    mut = mut.reshape(G, P, k)
    # children rows 0..P-1 of the buffer, the population rows P..2P-1
    ia = (np.concatenate([pa, pb], axis=1)[:, :P] + P)
    ib = (np.concatenate([pb, pa], axis=1)[:, :P] + P)
    cm = np.arange(k)[None, None, :] < cut[:, :, None]
    cmask = np.concatenate([cm, cm], axis=1)[:, :P, :]

    buf = np.empty((2 * P, k), bool)
    F = np.empty((2 * P, 4))
    birth = np.zeros(2 * P, np.int64)

    def repair(x: np.ndarray) -> None:
        ok = (x @ U) <= capv
        x &= ok[:, :k] & ok[:, k:]

    pop = buf[P:]
    pop[:] = init
    repair(pop)
    np.matmul(pop, V, out=F[P:])
    birth[P:] = 0
    later = np.triu(np.ones((2 * P, 2 * P), bool), 1)               # later[i, j]: row i precedes row j
    ch = buf[:P]
    # views and scratch buffers made once (the loop only writes into them)
    f1r, f2r, sr, kr = F[:, 0], F[:, 1], F[:, 2], F[:, 3]
    f1c, f2c, sc, kc = f1r[:, None], f2r[:, None], sr[:, None], kr[:, None]
    A = np.empty((2 * P, 2 * P), bool)
    Bm = np.empty((2 * P, 2 * P), bool)
    big = G + 2

    def levels() -> np.ndarray:
        """0: non-dominated and first copy, 1: dominated, 2: a later copy of an identical chromosome."""
        np.greater_equal(f1c, f1r, out=A)
        np.greater_equal(f2c, f2r, out=Bm)
        np.logical_and(A, Bm, out=A)
        np.greater(sc, sr, out=Bm)
        np.logical_and(A, Bm, out=A)
        dom = A.any(axis=0)
        np.equal(kc, kr, out=Bm)
        np.logical_and(Bm, later, out=Bm)
        return np.where(Bm.any(axis=0), 2, dom)

    for g in range(G):
        np.copyto(ch, np.where(cmask[g], buf[ia[g]], buf[ib[g]]))
        ch ^= mut[g]
        repair(ch)
        np.matmul(ch, V, out=F[:P])
        birth[:P] = g + 1
        lev = levels()
        order = np.argsort(lev * big - birth, kind="stable")[:P]
        buf[P:] = buf[order]
        F[P:] = F[order]
        birth[P:] = birth[order]
    if G == 0:
        f1, f2, s = F[P:, 0], F[P:, 1], F[P:, 2]
        final = ~((f1[:, None] >= f1) & (f2[:, None] >= f2) & (s[:, None] > s)).any(axis=0)
    else:
        final = lev[order] == 0                                      # Set 1 among the survivors
    popF = F[P:][final]
    return _make_front(popF[:, 0].astype(np.int64), popF[:, 1].astype(np.int64),
                       popF[:, 3], buf[P:][final].copy())
