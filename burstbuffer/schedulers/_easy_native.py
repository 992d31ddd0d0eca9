"""The EASY family's decision after its FCFS pass in C (``native/easy_pass.c``), built on first use (ctypes).

`EasyPass.run` copies the availability profile (from the decision's time on: a few tens of breakpoints) into
the C engine, which finds the head job's reservation (or takes a kept one), then runs the backfilling pass on
its copy: a fit at the decision's time per candidate, each start taken in the copy, a wait reason per job
passed over. The policy (`easy.EasyBackfilling`) then applies the starts to the profile itself, as the Python
pass does. The C functions mirror, one by one, the Python definitions (Kopanski & Rzadca, Euro-Par 2021,
Algorithm 1 lines 13-17; the placement rule §3.1/§4.1):

- ``bb_room``    = `placement.bb_room`;
- ``window_fit`` = `placement.window_fit` over the breakpoints of ``[now, now + walltime)`` (`fit_at` at the
  profile's origin);
- ``earliest``   = `placement.earliest_window` from the origin (`AvailabilityProfile.earliest_fit`);
- ``choose``     = `placement.lowest_mask` + `placement.place_bb` (the plain greedy, which `place_bb`'s
  resumed search equals);
- ``split`` / ``take`` = `AvailabilityProfile._split` / `reserve` (no merge: a breakpoint equal to the one
  before it changes no fit);
- ``reason``     = `ProfileScheduler._note_wait` without queue limits;
- ``easy_pass``  = `ProfileScheduler._reserve` (lazy) + `ProfileScheduler._backfill` (two-phase).

Used only where the pass is the plain one: two-phase holds, no queues, no queue-limit reasons, no extra nodes
(`easy.EasyBackfilling._native_pass`). ``BURSTBUFFER_NATIVE=0``, no compiler or a failed build: the Python
pass (the same decisions, reservations and wait reasons: tests/test_easy_native.py).
"""
from __future__ import annotations

import ctypes
from itertools import chain
from typing import Sequence

import numpy as np

from ._cbuild import NativeLibrary
from .profile import AvailabilityProfile

__all__ = ["EasyPass", "LIBRARY", "available", "STARTED"]

#: `EasyPass.run`'s status of a started candidate (0-4: the wait reason's code, -1: not looked at)
STARTED = 5

_I32, _F64, _VP = ctypes.c_int32, ctypes.c_double, ctypes.c_void_p
_FIELDS = [(x, _I32) for x in ("W", "B", "n", "cap", "P")]
_FIELDS += [(x, _VP) for x in ("keys", "mask", "cnt", "bb", "pref")]
_FIELDS += [("mode", _I32), ("h_res", _I32), ("h_wall", _F64), ("h_need", ctypes.c_int64),
            ("found", _I32), ("asked", _I32), ("rstart", _F64), ("rend", _F64)]
_FIELDS += [(x, _VP) for x in ("rmask", "rbb", "rplace")]
_FIELDS += [("J", _I32)] + [(x, _VP) for x in ("res", "wall", "need", "off")]
_FIELDS += [("free0", _I32), ("bb0", _VP)]
_FIELDS += [(x, _VP) for x in ("status", "chosen", "place", "wm", "wa", "left", "nbb", "take")]


class _Easy(ctypes.Structure):
    _fields_ = _FIELDS


def _declare(lib) -> None:
    lib.easy_pass.restype = ctypes.c_int
    lib.easy_pass.argtypes = [ctypes.POINTER(_Easy)]


LIBRARY = NativeLibrary("easy_pass.c", "easy_native", declare=_declare)


def available() -> bool:
    """Whether the C pass can be used (built now if it was not; False when disabled or without a compiler)."""
    return LIBRARY.get() is not None


class EasyPass:
    """The C pass bound to one availability profile (its platform's masks, BB nodes and preferences).

    Raises RuntimeError if the library is unavailable (check `available()` first)."""

    def __init__(self, profile: AvailabilityProfile):
        lib = LIBRARY.get()
        if lib is None:  # pragma: no cover - guarded by available()
            raise RuntimeError(f"native EASY pass unavailable: {LIBRARY.reason}")
        self._fn = lib.easy_pass
        self.profile = profile
        plat = profile.platform
        self.B = len(profile.bb_ids)
        maxid = max(plat.compute.max if len(plat.compute) else 0, 0)
        self.W = maxid // 64 + 1
        self.P = maxid + 1
        B1 = max(self.B, 1)
        pref = np.full((self.P, B1), -1, np.int32)
        for p in plat.compute:
            pr = profile.bb_preference_index(p)
            pref[p, :len(pr)] = pr
        self._pref = pref
        self._e = _Easy(W=self.W, B=self.B, P=self.P, pref=pref.ctypes.data)
        self._ref = ctypes.byref(self._e)
        self._rows = self._jobs = self._ids = -1
        self._scratch = {x: np.zeros(B1, np.int64) for x in ("wa", "left", "nbb", "take", "rbb", "bb0")}
        self._scratch["wm"] = np.zeros(self.W, np.uint64)
        self._scratch["rmask"] = np.zeros(self.W, np.uint64)
        for x in ("wa", "left", "nbb", "take", "rbb", "bb0", "wm", "rmask"):
            setattr(self._e, x, self._scratch[x].ctypes.data)

    def _grow(self, rows: int, jobs: int, ids: int) -> None:
        e, W, B1 = self._e, self.W, max(self.B, 1)
        if rows > self._rows:
            self._rows = max(rows, 2 * self._rows, 64)
            self.keys = np.zeros(self._rows, np.float64)
            self.mask = np.zeros((self._rows, W), np.uint64)
            self.cnt = np.zeros(self._rows, np.int32)
            self.bb = np.zeros((self._rows, B1), np.int64)
            e.keys, e.mask, e.cnt, e.bb = (a.ctypes.data for a in (self.keys, self.mask, self.cnt, self.bb))
        if jobs > self._jobs:
            self._jobs = max(jobs, 2 * self._jobs, 64)
            J = self._jobs
            self.res, self.wall, self.need = np.zeros(J, np.int32), np.zeros(J, np.float64), np.zeros(J, np.int64)
            self.off, self.status = np.zeros(J + 1, np.int32), np.zeros(J, np.int32)
            self.chosen = np.zeros((J, W), np.uint64)
            e.res, e.wall, e.need, e.off, e.status, e.chosen = (
                a.ctypes.data for a in (self.res, self.wall, self.need, self.off, self.status, self.chosen))
        if ids > self._ids:
            self._ids = max(ids, 2 * self._ids, 256)
            self.place = np.zeros(self._ids, np.int32)
            self.rplace = np.zeros(self._ids, np.int32)
            e.place, e.rplace = self.place.ctypes.data, self.rplace.ctypes.data

    def run(self, head: tuple | None, jobs: Sequence, free0: tuple[int, tuple[int, ...]]) -> dict:
        """One pass at the profile's origin (the decision's time).

        Args:
            head: ``("find", res, walltime [s], need [B per processor, 0: processors only])`` to find the head's
                earliest fit, or ``("given", start [s], end [s], procs bitmask, {BB index: bytes})`` for a kept
                reservation.
            jobs: the backfilling candidates in the pass's order (``res``, ``walltime``, ``bb``).
            free0: (free processors, free bytes per BB node) before the decision's starts.
        Returns a dict: ``found`` (a reservation is held), ``asked`` (a fit was asked), and with ``found`` and a
        head to find ``start`` [s], ``mask`` (the head's processors) and ``place`` (BB index of each, ascending id;
        empty without BB); ``status`` per candidate (`STARTED`, a reason code 0-4 or -1), ``chosen`` and
        ``place`` per started candidate. Raises AssertionError if a BB placement fails after its feasibility check.
        """
        prof, e, W, B = self.profile, self._e, self.W, self.B
        keys = list(prof._slots.keys())
        vals = list(prof._slots.values())
        n, J = len(keys), len(jobs)
        res = [j.res for j in jobs]
        offs = [0]
        for r in res:
            offs.append(offs[-1] + r)
        hres = head[1] if head is not None and head[0] == "find" else 0
        self._grow(n + J + 4, J, max(offs[-1], hres, 1))
        self.keys[:n] = keys
        nb = 8 * W
        self.mask[:n] = np.frombuffer(b"".join([v[0].to_bytes(nb, "little") for v in vals]),
                                      np.uint64).reshape(n, W)
        self.cnt[:n] = [v[2] for v in vals]
        if B:
            self.bb[:n, :B] = np.fromiter(chain.from_iterable([v[1] for v in vals]), np.int64, n * B).reshape(n, B)
            self._scratch["bb0"][:B] = free0[1]
        e.n, e.cap, e.free0, e.J = n, self._rows, free0[0], J
        if J:
            self.res[:J] = res
            self.wall[:J] = [j.walltime for j in jobs]
            self.need[:J] = [j.bb for j in jobs]
            self.off[:J + 1] = offs
        if head is None:
            e.mode = 0
        elif head[0] == "find":
            e.mode, e.h_res, e.h_wall, e.h_need = 2, head[1], head[2], head[3]
        else:
            _, e.rstart, e.rend, m, bbs = head
            e.mode = 1
            self._scratch["rmask"][:] = np.frombuffer(m.to_bytes(nb, "little"), np.uint64)
            rbb = self._scratch["rbb"]
            rbb[:] = 0
            for i, x in bbs.items():
                rbb[i] = x
        if self._fn(self._ref) != 0:
            raise AssertionError("BB placement failed after the feasibility check")
        out = {"found": bool(e.found), "asked": bool(e.asked), "status": self.status[:J].tolist()}
        if e.found and e.mode == 2:
            out["start"] = e.rstart
            out["mask"] = int.from_bytes(self._scratch["rmask"].tobytes(), "little")
            out["place"] = self.rplace[:hres].tolist() if head[3] > 0 else []
        return out

    def chosen_of(self, k: int) -> int:
        """The processors bitmask of started candidate `k` of the last `run`."""
        return int.from_bytes(self.chosen[k].tobytes(), "little")

    def place_of(self, k: int, res: int) -> list[int]:
        """The BB index of each of started candidate `k`'s processors (ascending id) in the last `run`."""
        a = int(self.off[k])
        return self.place[a:a + res].tolist()
