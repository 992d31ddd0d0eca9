"""plan-α's plan engine in C: a declared mirror of the placement rule, built at install time (ctypes).

`NativePlanEngine` (`apply`, `revert`, `placements`, `bb_of_node`, `horizon`) gives the plans and scores of its
oracle, the pure-Python `PlanEngine` of tests/oracles/plan_engine.py (not in the package), ~20x faster. The C code
mirrors, function by function, the single definition of the rule in
`burstbuffer.schedulers.placement` (Kopanski & Rzadca, Euro-Par 2021, §3.1/§4.1):

- ``chunks_ok``   = `placement.bb_room`;
- ``fit``         = `placement.earliest_window` (same candidates, same jumps past a breakpoint
  that alone cannot host the job, per-BB-node minimum taken once the processors fit);
- ``choose``      = `placement.lowest_mask` + `placement.place_bb`;
- ``reserve``     = the oracle's `PlanEngine._hold` (undo = give the reservation back and drop the
  breakpoints it inserted);
- ``fit_staged``  = `placement.earliest_staged_window` (``staged_check`` = its one candidate,
  ``bb_start`` = `placement.staged_bb_start`): the three-phase model's placement, used for the
  jobs with BB when the engine is given stage estimates (`_plan_base.EngineBase`, ``stage``).

Two shortcuts do not change any result: ``alone`` first compares the total free BB with
``res·need`` (below → no room) and ``(res + number of BB nodes)·need`` (at or above → room), and
``choose`` first tries giving every node its first preference, which is what the greedy does
whenever each first-preference node has room for all the chosen nodes that prefer it first.
tests/test_placement_mirror.py checks the equality on generated profiles, jobs and platforms.
Scores are summed in plan order with C `pow`, the function CPython's float `**` calls.

Build: the extension module ``burstbuffer.schedulers.native.plan_engine`` (native/plan_engine.c), built when the
package is installed with ``-O2 -std=c99 -ffp-contract=off`` (`burstbuffer.cbuild`, setup.py); missing (a broken
install): InputError naming the fix. This module imports `_plan_base`, never `plan_engine`.
"""
from __future__ import annotations

import ctypes
from typing import Sequence

import numpy as np

from ..cbuild import NativeLibrary
from ._plan_base import EngineBase, Placement
from .base import Job
from .profile import AvailabilityProfile

__all__ = ["LIBRARY", "NativePlanEngine"]

_FIELDS = [(name, ctypes.c_int32) for name in
           ("W", "B", "cap", "n", "J", "P", "depth", "stash_c", "stash_len", "stash_valid")]
_FIELDS += [(name, ctypes.c_double) for name in ("alpha", "now", "horizon")]
_PTRS = ["keys", "mask", "cnt", "bb", "tb", "res", "wall", "need", "tot", "qa", "sub", "pref", "gmask",
         "perm", "placed", "start", "chosen", "bbfree", "bbused", "cum", "u_lo", "u_hi", "u_ins_s",
         "u_ins_e", "s_perm", "s_placed", "s_start", "s_chosen", "s_bbfree", "s_bbused", "s_cum",
         "wm", "wa", "left", "stg", "zm", "zu", "v_lo", "v_hi", "v_ins_s", "v_ins_e", "pbn", "pbb"]
_FIELDS += [(name, ctypes.c_void_p) for name in _PTRS]
_FIELDS += [(name, ctypes.c_int32) for name in ("pfill", "pln", "plb")]


class _Eng(ctypes.Structure):
    _fields_ = _FIELDS


def _declare(lib) -> None:
    for fn in (lib.eng_apply, lib.eng_revert):
        fn.restype = ctypes.c_int
    lib.eng_apply.argtypes = [ctypes.POINTER(_Eng), ctypes.c_void_p]
    lib.eng_revert.argtypes = [ctypes.POINTER(_Eng)]


#: the engine (burstbuffer/schedulers/native/plan_engine.c), built at install time
LIBRARY = NativeLibrary("plan_engine", declare=_declare)


def _words(mask: int, W: int) -> list[int]:
    return [(mask >> (64 * x)) & 0xFFFFFFFFFFFFFFFF for x in range(W)]


class NativePlanEngine(EngineBase):
    """Execution plans of a fixed list of jobs over a scratch copy of the profile (`plan_engine`), in C.

    Args: profile, jobs, now [s], alpha > 0, stage (`_plan_base.EngineBase`). Raises InputError if the C engine
    is missing (a broken install), ValueError from `apply` if the permutation's length is not the number of
    jobs."""

    native = True

    def __init__(self, profile: AvailabilityProfile, jobs: Sequence[Job], now: float, alpha: float,
                 stage: Sequence[float] | None = None):
        super().__init__(profile, jobs, now, alpha, stage)
        self._lib = LIBRARY.get()
        plat = profile.platform
        nbb = self.nbb
        B = max(nbb, 1)
        maxid = max(plat.compute.max if len(plat.compute) else 0, 0)
        W = maxid // 64 + 1
        J = len(self.jobs)
        nb = len(self._keys)
        cap = nb + 4 * J + 4          # a placed job adds ≤ 2 breakpoints (≤ 4 staged)
        self._W, self._B, self._J = W, B, J
        a = {}
        a["keys"] = np.empty(cap, np.float64)
        a["mask"] = np.zeros((cap, W), np.uint64)
        a["cnt"] = np.zeros(cap, np.int32)
        a["bb"] = np.zeros((cap, B), np.int64)
        a["tb"] = np.zeros(cap, np.int64)
        for i, (t, (m, bb, c)) in enumerate(zip(self._keys, self._vals)):
            a["keys"][i] = t
            a["mask"][i] = _words(m, W)
            a["cnt"][i] = c
            if nbb:
                a["bb"][i] = bb
            a["tb"][i] = sum(bb)
        jd = self._jd
        a["res"] = np.array([x[0] for x in jd], np.int32)
        a["wall"] = np.array([x[1] for x in jd], np.float64)
        a["need"] = np.array([x[2] for x in jd], np.int64)
        a["tot"] = np.array([x[3] for x in jd], np.int64)
        a["qa"] = np.array([x[4] for x in jd], np.int64)
        a["sub"] = np.array(self._sub, np.float64)
        P = maxid + 1
        a["pref"] = np.full((P, B), -1, np.int32)
        for p, pr in self._pref.items():
            a["pref"][p, :len(pr)] = pr
        a["gmask"] = np.zeros((B, W), np.uint64)
        for b, gm in self._first_groups:
            a["gmask"][b] = _words(gm, W)
        Jc = max(J, 1)
        for pre in ("", "s_"):
            a[pre + "perm"] = np.zeros(Jc, np.int32)
            a[pre + "placed"] = np.zeros(Jc, np.int8)
            a[pre + "start"] = np.zeros(Jc, np.float64)
            a[pre + "chosen"] = np.zeros((Jc, W), np.uint64)
            a[pre + "bbfree"] = np.zeros((Jc, B), np.int64)
            a[pre + "bbused"] = np.zeros((Jc, B), np.int64)
            a[pre + "cum"] = np.zeros(Jc, np.float64)
        a["u_lo"] = np.zeros(Jc, np.int32)
        a["u_hi"] = np.zeros(Jc, np.int32)
        a["u_ins_s"] = np.zeros(Jc, np.int8)
        a["u_ins_e"] = np.zeros(Jc, np.int8)
        a["wm"] = np.zeros(W, np.uint64)
        a["wa"] = np.zeros(B, np.int64)
        a["left"] = np.zeros(B, np.int64)
        a["stg"] = np.zeros(Jc, np.float64)
        if self.stage is not None:
            a["stg"][:J] = self.stage
        a["zm"] = np.zeros(W, np.uint64)
        a["zu"] = np.zeros(B, np.int64)
        for name, dtype in (("v_lo", np.int32), ("v_hi", np.int32), ("v_ins_s", np.int8), ("v_ins_e", np.int8)):
            a[name] = np.zeros(Jc, dtype)
        a["pbn"] = np.zeros(cap, np.int32)
        a["pbb"] = np.zeros(cap, np.int32)
        self._arr = a  # keeps the buffers alive
        eng = _Eng(W=W, B=nbb, cap=cap, n=nb, J=J, P=P, depth=0, stash_c=0, stash_len=0,
                   stash_valid=0, alpha=self.alpha, now=self.now, horizon=self.horizon)
        for name in _PTRS:
            setattr(eng, name, a[name].ctypes.data)
        self._eng = eng
        self._ref = ctypes.byref(eng)
        self._permbuf = np.zeros(Jc, np.int32)

    def apply(self, perm: Sequence[int]) -> float:
        if len(perm) != self._J:
            raise ValueError(f"apply: permutation of {len(perm)} jobs, engine has {self._J}")
        self._permbuf[:self._J] = perm
        if self._lib.eng_apply(self._ref, self._permbuf.ctypes.data) != 0:  # pragma: no cover
            raise AssertionError("BB placement failed after the feasibility check")
        d = self._eng.depth
        return float(self._arr["cum"][d - 1]) if d else 0.0

    def revert(self) -> float:
        if self._lib.eng_revert(self._ref) != 0:
            raise RuntimeError("revert: no previous plan")
        d = self._eng.depth
        return float(self._arr["cum"][d - 1]) if d else 0.0

    def placements(self) -> list[tuple[int, Placement | None]]:
        a, d, W, nbb = self._arr, self._eng.depth, self._W, self.nbb
        perm, placed, start = a["perm"][:d].tolist(), a["placed"][:d].tolist(), a["start"][:d].tolist()
        chosen = a["chosen"][:d].tolist()
        free, used = a["bbfree"][:d, :nbb].tolist(), a["bbused"][:d, :nbb].tolist()
        out: list[tuple[int, Placement | None]] = []
        for i in range(d):
            if not placed[i]:
                out.append((perm[i], None))
                continue
            m = 0
            for x, v in enumerate(chosen[i]):
                m |= v << (64 * x)
            out.append((perm[i], Placement(start[i], m, tuple(free[i]), tuple(used[i]))))
        return out
