"""The oracle of BBSched's GA loop: the generations of `moo.ga_front` vectorised in numpy, on the same draws
(`moo._ga_draws`), the implementation the C loop (`_ga_native`, native/ga.c) mirrors step by step. Not part of the
package: tests/test_ga_native.py checks the C loop against it and
``benchmarks/bench_bbsched.py --engine numpy`` times it. Equal to the C loop while every objective sum and capacity is
below 2^53 (float64 sums here, exact int64 there; `moo`'s bound)."""
from __future__ import annotations

import numpy as np

from burstbuffer.schedulers import moo
from burstbuffer.schedulers.limits import DEFAULT_MUTATION_RATE, GA_LIMIT

__all__ = ["ga_front_numpy"]


def ga_front_numpy(nodes, bb, cap_nodes: int, cap_bb: int, rng: np.random.Generator, *, population: int = 20,
                   generations: int = 500, mutation_rate: float = DEFAULT_MUTATION_RATE) -> moo.Front:
    """`moo.ga_front` with its generations in numpy (`_ga_numpy`): the same arguments, draws and front."""
    n, b = moo._as_arrays(nodes, bb)
    k = len(n)
    P, G = int(population), int(generations)
    if k > GA_LIMIT or P < 1 or G < 0 or not 0.0 <= mutation_rate <= 1.0:
        raise ValueError(f"bad GA arguments: k = {k}, P = {P}, G = {G}, p_m = {mutation_rate}")
    if k == 0:
        return moo.Front(np.zeros((1, 2), np.int64), np.zeros((1, 0), bool))
    init, pa, pb, cut, flips = moo._ga_draws(k, P, G, mutation_rate, rng)
    return _ga_numpy(n, b, cap_nodes, cap_bb, init, pa, pb, cut, flips, G)


def _ga_numpy(n: np.ndarray, b: np.ndarray, cap_nodes: int, cap_bb: int, init, pa, pb, cut, flips,
              G: int) -> Front:
    """The generations of `ga_front` in numpy on its draws (`_ga_draws`)."""
    P, k = init.shape
    nf, bf = n.astype(np.float64), b.astype(np.float64)
    keyw = np.ldexp(1.0, np.arange(k - 1, -1, -1))                  # 2^(k-1-i): job 0 most significant
    V = np.stack([nf, bf, nf + bf, keyw], axis=1)                    # objectives, their sum, the key
    tri = np.triu(np.ones((k, k)))                                   # prefix sums by matmul
    U = np.concatenate([tri * nf[:, None], tri * bf[:, None]], axis=1)
    capv = np.concatenate([np.full(k, float(cap_nodes)), np.full(k, float(cap_bb))])

    total = G * P * k
    mut = np.zeros(total, bool)
    if len(flips):
        mut[flips] = True
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
    return moo._make_front(popF[:, 0].astype(np.int64), popF[:, 1].astype(np.int64),
                       popF[:, 3], buf[P:][final].copy())
