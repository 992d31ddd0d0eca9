"""The EASY family's decision in C (``native/easy_pass.c``), built on first use (ctypes).

`EasyPass.run` hands the availability profile (from the decision's time on: a few tens of breakpoints) and the
queue to the C engine, packed, in one call per decision. On its copy of the profile the engine runs the FCFS pass,
finds the head job's reservation (or takes the kept one), then runs the backfilling pass: a fit at the decision's
time per job, each start taken in the copy, a wait reason per job passed over. The policy
(`easy.EasyBackfilling._native_schedule`) then applies the starts to the profile itself, in the same order, as the
Python passes do. The C functions mirror, one by one, the Python definitions (Kopanski & Rzadca, Euro-Par 2021,
Algorithm 1 lines 12-17; the placement rule §3.1/§4.1):

- ``bb_room``    = `placement.bb_room`;
- ``window_fit`` = `placement.window_fit` over the breakpoints of ``[now, now + walltime)`` (`fit_at` at the
  profile's origin, the decision's time);
- ``earliest``   = `placement.earliest_window` from the origin (`AvailabilityProfile.earliest_fit`);
- ``choose``     = `placement.lowest_mask` + `placement.place_bb` (the plain greedy, which `place_bb`'s resumed
  search equals);
- ``split`` / ``take`` = `AvailabilityProfile._split` / `reserve` (no merge: a breakpoint equal to the one before
  it changes no fit);
- ``reason``     = `ProfileScheduler._note_wait` without queue limits;
- ``easy_decide`` = `easy.FcfsPolicy._fcfs_pass`, `ProfileScheduler._reserve` (lazy, the kept reservation) and
  `ProfileScheduler._backfill` (two-phase).

Used only where the passes are the plain ones: two-phase holds, no queues, no queue-limit reasons, no extra nodes
(`easy.EasyBackfilling._native_usable`). ``BURSTBUFFER_NATIVE=0``, no compiler or a failed build: the Python
passes (the same decisions, reservations and wait reasons: tests/test_easy_native.py).
"""
from __future__ import annotations

import ctypes
from itertools import chain
from struct import pack
from typing import Sequence

import numpy as np

from ..cbuild import NativeLibrary
from .profile import AvailabilityProfile

__all__ = ["EasyPass", "LIBRARY", "available", "STARTED"]

#: `EasyPass.run`'s status of a started candidate (0-4: the wait reason's code, -1: not looked at)
STARTED = 5

_I32, _F64, _VP, _CP = ctypes.c_int32, ctypes.c_double, ctypes.c_void_p, ctypes.c_char_p
_FIELDS = [(x, _I32) for x in ("W", "B", "n", "cap", "P")]
_FIELDS += [(x, _VP) for x in ("keys", "mask", "cnt", "bb", "pref", "prow")]
_FIELDS += [(x, _I32) for x in ("J", "reserve_bb", "free0", "gidx")] + [("gstart", _F64), ("gend", _F64)]
_FIELDS += [(x, _I32) for x in ("head", "found", "given", "asked", "nseq")] + [("rstart", _F64), ("rend", _F64)]
_FIELDS += [(x, _VP) for x in ("rmask", "rbb", "rplace", "status", "seq", "chosen", "place", "off",
                                "wm", "wa", "left", "nbb", "take")]


class _Easy(ctypes.Structure):
    _fields_ = _FIELDS


def _declare(lib) -> None:
    lib.easy_decide.restype = ctypes.c_int
    lib.easy_decide.argtypes = [ctypes.POINTER(_Easy)] + [_CP] * 11


LIBRARY = NativeLibrary("easy_pass", declare=_declare)


def available() -> bool:
    """Whether the C pass can be used (built now if it was not; False when disabled or without a compiler)."""
    return LIBRARY.get() is not None


class EasyPass:
    """The C decision bound to one availability profile (its platform's masks, BB nodes and preferences).

    Raises RuntimeError if the library is unavailable (check `available()` first)."""

    def __init__(self, profile: AvailabilityProfile):
        lib = LIBRARY.get()
        if lib is None:  # pragma: no cover - guarded by available()
            raise RuntimeError(f"native EASY pass unavailable: {LIBRARY.reason}")
        self._fn = lib.easy_decide
        self.profile = profile
        plat = profile.platform
        self.B = len(profile.bb_ids)
        maxid = max(plat.compute.max if len(plat.compute) else 0, 0)
        self.W = maxid // 64 + 1
        self.P = maxid + 1
        B1 = max(self.B, 1)
        rows: dict[int, int] = {}                  # one row per preference list (one per chassis: shared tuples)
        lists = []
        prow = np.zeros(self.P, np.int32)
        for p in plat.compute:
            pr = profile.bb_preference_index(p)
            r = rows.get(id(pr))
            if r is None:
                r = rows[id(pr)] = len(lists)
                lists.append(pr)
            prow[p] = r
        pref = np.full((max(len(lists), 1), B1), -1, np.int32)
        for r, pr in enumerate(lists):
            pref[r, :len(pr)] = pr
        self._pref, self._prow = pref, prow
        self._e = _Easy(W=self.W, B=self.B, P=self.P, pref=pref.ctypes.data, prow=prow.ctypes.data)
        self._ref = ctypes.byref(self._e)
        self._rows = self._jobs = self._ids = -1
        self._scratch = {x: np.zeros(B1, np.int64) for x in ("wa", "left", "nbb", "take", "rbb")}
        self._scratch["wm"] = np.zeros(self.W, np.uint64)
        self._scratch["rmask"] = np.zeros(self.W, np.uint64)
        for x, a in self._scratch.items():
            setattr(self._e, x, a.ctypes.data)
        self._nb = 8 * self.W
        self._zero = bytes(8 * B1)

    def _grow(self, rows: int, jobs: int, ids: int) -> None:
        e, W, B1 = self._e, self.W, max(self.B, 1)
        if rows > self._rows:
            self._rows = max(rows, 2 * self._rows, 64)
            self.keys = np.zeros(self._rows, np.float64)
            self.mask = np.zeros((self._rows, W), np.uint64)
            self.cnt = np.zeros(self._rows, np.int32)
            self.bb = np.zeros((self._rows, B1), np.int64)
            e.keys, e.mask, e.cnt, e.bb = (a.ctypes.data for a in (self.keys, self.mask, self.cnt, self.bb))
            e.cap = self._rows
        if jobs > self._jobs:
            self._jobs = max(jobs, 2 * self._jobs, 64)
            J = self._jobs
            self.status, self.seq, self.off = np.zeros(J, np.int32), np.zeros(J, np.int32), np.zeros(J + 1, np.int32)
            self.chosen = np.zeros((J, W), np.uint64)
            e.status, e.seq, e.chosen, e.off = (a.ctypes.data for a in (self.status, self.seq, self.chosen, self.off))
        if ids > self._ids:
            self._ids = max(ids, 2 * self._ids, 256)
            self.place = np.zeros(self._ids, np.int32)
            self.rplace = np.zeros(self._ids, np.int32)
            e.place, e.rplace = self.place.ctypes.data, self.rplace.ctypes.data

    def run(self, jobs: Sequence, walls: Sequence[float], perm: Sequence[int] | None, reserve_bb: bool,
            free0: tuple[int, tuple[int, ...]], kept: tuple | None = None) -> dict:
        """One decision at the profile's origin (the decision's time), on a copy of the profile.

        Args:
            jobs: the queued jobs in queue order (``res``, ``bb`` [B per processor]); `walls` their walltimes [s].
            perm: the backfilling pass's order (indices into `jobs`), None: the queue's.
            reserve_bb: the head's reservation holds its BB (fcfs-bb, sjf-bb) or processors only (fcfs-easy).
            free0: (free processors, free bytes per BB node) before the decision's starts.
            kept: the kept reservation ``(index of its job in jobs, start [s], end [s], procs bitmask,
                {BB index: bytes})``, used if its job is the head and the FCFS pass started nothing; None: none.
        Returns a dict: ``head`` (index, -1: every job started), ``found`` (a reservation is held), ``given`` (it is
        the kept one), ``asked`` (the backfilling pass asked for a fit), ``status`` per job (`STARTED`, a wait
        reason's code 0-4: Resources, BurstBufferResources, Priority, Reservation, the policy's blocked reason; -1
        not looked at), ``seq`` (the started jobs' indices in start order); with a reservation found: ``start``
        [s], ``mask`` (its processors) and ``place`` (BB index of each, ascending id; empty without BB). Raises
        AssertionError if a BB placement fails after its feasibility check.
        """
        slots, e, W, B, nb = self.profile._slots, self._e, self.W, self.B, self._nb
        keys = slots.keys()
        vals = slots.values()
        n, J = len(keys), len(jobs)
        res = [j.res for j in jobs]
        self._res = res
        self._grow(n + J + 4, J, max(sum(res), 1))
        e.n, e.J, e.free0, e.reserve_bb = n, J, free0[0], reserve_bb
        gmask = gbb = self._zero
        if kept is not None:
            e.gidx, e.gstart, e.gend = kept[0], kept[1], kept[2]
            gmask = kept[3].to_bytes(nb, "little")
            v = [0] * max(B, 1)
            for i, x in kept[4].items():
                v[i] = x
            gbb = pack(f"{len(v)}q", *v)
        else:
            e.gidx = -1
        if self._fn(self._ref, pack(f"{n}d", *keys), b"".join([v[0].to_bytes(nb, "little") for v in vals]),
                    pack(f"{n}i", *[v[2] for v in vals]), pack(f"{n * B}q", *chain.from_iterable([v[1] for v in vals])),
                    pack(f"{J}i", *res), pack(f"{J}d", *walls),
                    pack(f"{J}q", *[j.bb for j in jobs]), None if perm is None else pack(f"{J}i", *perm),
                    pack(f"{B}q", *free0[1]), gmask, gbb) != 0:
            raise AssertionError("BB placement failed after the feasibility check")
        out = {"head": e.head, "found": e.found, "given": e.given, "asked": e.asked,
               "status": self.status[:J].tolist(), "seq": self.seq[:e.nseq].tolist()}
        if e.found and not e.given:
            h = e.head
            out["start"] = e.rstart
            out["mask"] = int.from_bytes(self._scratch["rmask"].tobytes(), "little")
            out["place"] = self.rplace[:res[h]].tolist() if reserve_bb and jobs[h].bb > 0 else []
        return out

    def chosen_of(self, k: int) -> int:
        """The processors bitmask of started job `k` of the last `run`."""
        return int.from_bytes(self.chosen[k].tobytes(), "little")

    def place_of(self, k: int) -> list[int]:
        """The BB index of each of started job `k`'s processors (ascending id) in the last `run`."""
        a = int(self.off[k])
        return self.place[a:a + self._res[k]].tolist()
