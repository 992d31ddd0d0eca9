"""Native (C) loop of BBSched's genetic algorithm (`moo.ga_front`), built at install time (ctypes).

`moo.ga_front` draws every random number of a decision up front with numpy (`moo._ga_draws`), then
runs G generations. The generations are sequential and each is ~25 numpy calls on 40 × 20 arrays, so
the numpy loop costs ~30 ms at w = 20, P = 20, G = 500 whatever numpy does per element. `ga_loop`
here runs the same generations in C on the same draws — chromosomes bit-packed in a uint64 (bit
k−1−i = job i, i.e. the chromosome *is* its `moo.front_key`), objectives summed as exact int64 — and
returns the last population and its Set-1 flags, from which `moo.ga_front` builds the `Front` exactly
as the numpy loop does. The C code mirrors the numpy loop step by step (Fan et al., *Scheduling
Beyond CPUs for HPC*, HPDC'19, §3.2.2; docs/bbsched.md "The GA"):

- crossover: child c < H = ⌈P/2⌉ takes genes < cut[c] from parent pa[c] and the rest from pb[c];
  child c ≥ H the same with the parents swapped (cut[c − H]);
- mutation: XOR with the flips drawn by `moo._ga_draws` (flat indices (g·P + c)·k + j);
- repair: keep the longest prefix (window order) of the selected jobs that fits both capacities;
- survival: level 2 = a later copy (same chromosome in an earlier buffer row), 1 = dominated
  (f1 ≥, f2 ≥, f1 + f2 >), 0 = Set 1; order by (level, birth descending, buffer row), keep P.

The numpy loop is the C loop's oracle (tests/oracles/ga_numpy.py, not in the package): the two give identical
results while every objective sum and capacity is below 2^53 (the numpy loop works in float64, exact there; `moo`
documents the same bound) — tests/test_ga_native.py checks them equal on generated windows. Build: the extension
module ``burstbuffer.schedulers.native.ga``, built when the package is installed (`burstbuffer.cbuild`, setup.py);
missing (a broken install): InputError naming the fix.
"""
from __future__ import annotations

import ctypes

import numpy as np

from ..cbuild import NativeLibrary

__all__ = ["LIBRARY", "ga_loop"]

_P = ctypes.c_void_p


def _declare(lib) -> None:
    lib.ga_loop.restype = ctypes.c_int
    lib.ga_loop.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, _P, _P, ctypes.c_int64, ctypes.c_int64,
                            _P, _P, _P, _P, _P, ctypes.c_int64, _P, _P, _P]


#: the engine (burstbuffer/schedulers/native/ga.c), built at install time
LIBRARY = NativeLibrary("ga", declare=_declare)


def _ptr(a: np.ndarray) -> int:
    return a.ctypes.data


def ga_loop(n: np.ndarray, b: np.ndarray, cap_nodes: int, cap_bb: int, init: np.ndarray, pa: np.ndarray,
            pb: np.ndarray, cut: np.ndarray, flips: np.ndarray, generations: int) -> tuple[np.ndarray, np.ndarray]:
    """The G generations of `moo.ga_front` in C, on its draws (see the module docstring).

    Args: n, b (k,) int64 requests; cap_nodes, cap_bb the capacities (all sums < 2^53); init (P, k)
    bool first generation (before repair); pa, pb, cut (G, ⌈P/2⌉) int64 parents and cut points; flips
    the flat mutation indices into (G, P, k) (distinct); generations G.
    Returns (population (P, k) bool in buffer order, final (P,) bool = Set 1 of the last survival).
    Raises RuntimeError if the library rejects the sizes (k > 64, P > 2^20) or cannot allocate its scratch
    memory; InputError if it is missing (`cbuild.NativeLibrary`).
    """
    lib = LIBRARY.get()
    P, k = init.shape
    G = int(generations)
    init8 = np.ascontiguousarray(init, dtype=np.uint8)
    pa, pb, cut = (np.ascontiguousarray(a, dtype=np.int64) for a in (pa, pb, cut))
    flips = np.ascontiguousarray(flips, dtype=np.int64)
    n = np.ascontiguousarray(n, dtype=np.int64)
    b = np.ascontiguousarray(b, dtype=np.int64)
    mut = np.empty(max(G * P, 1), np.uint64)
    pop = np.empty((P, k), np.uint8)
    final = np.empty(P, np.uint8)
    rc = lib.ga_loop(k, P, G, _ptr(n), _ptr(b), int(cap_nodes), int(cap_bb), _ptr(init8), _ptr(pa), _ptr(pb),
                     _ptr(cut), _ptr(flips), len(flips), _ptr(mut), _ptr(pop), _ptr(final))
    if rc != 0:
        raise RuntimeError(f"native GA failed (code {rc}) at k = {k}, P = {P}")
    return pop.view(bool), final.view(bool)
