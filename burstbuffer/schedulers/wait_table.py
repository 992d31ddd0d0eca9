"""The wait reasons of a whole queue at once: the classification of docs/wait-reasons.md ("How it is
computed", steps 2-5) as array operations over the queued jobs, and only the jobs whose reason changed
handed to the decision loop.

`ProfileScheduler` classifies every job still queued after each decision. Done job by job in Python that
costs about a microsecond per queued job per decision: on the whole KTH trace, where fcfs and fcfs-easy
keep thousands of jobs queued for weeks, it was most of the scheduler's CPU (fcfs: 707 s of the
scheduler's 707 s + 405 s of the simulator's, against 122 s for fcfs-bb, whose queue stays short).
`QueueTable` keeps the queued jobs' processors and BB shares in numpy arrays, in submission order, in
step with the scheduler's queue (`TrackedQueue` records every insertion and removal), classifies them
with a few vector operations, and returns the jobs whose reason differs from the previous decision's.
The reasons are exactly those of the per-job rule: the BB test Σ_b ⌊free_b / bb⌋ ≥ res
(`placement.bb_room`) is evaluated with integer arithmetic over the distinct free values of the BB nodes.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from ..lazy import lazy

#: numpy, imported with the first table (declaring the policies that keep one costs no numpy)
np = lazy("numpy", globals(), "np")

#: the fixed reason names of docs/wait-reasons.md; a policy's own reasons are added when first seen
BASE_REASONS = ("Resources", "BurstBufferResources", "Priority", "Reservation")


class TrackedQueue(dict):
    """The scheduler's queue (job id → job, insertion order = submission order) that also records, in
    order, each insertion ``("+", id, job)`` and removal ``("-", id, None)`` since `QueueTable` last
    read them. A mutation through another dict method (update, setdefault, popitem, clear) marks the
    record incomplete, and the table then rebuilds itself from the queue."""

    __slots__ = ("events", "complete")

    def __init__(self):
        super().__init__()
        self.events: list[tuple[str, str, object]] = []
        self.complete = True

    def __setitem__(self, key, value):
        if key in self:
            self.complete = False          # a replaced job may have other sizes: rebuild
        else:
            self.events.append(("+", key, value))
        super().__setitem__(key, value)

    def __delitem__(self, key):
        super().__delitem__(key)
        self.events.append(("-", key, None))

    def pop(self, key, *default):
        if key in self:
            self.events.append(("-", key, None))
        return super().pop(key, *default)

    def _untracked(self):
        self.complete = False

    def update(self, *a, **kw):
        self._untracked()
        super().update(*a, **kw)

    def setdefault(self, key, default=None):
        self._untracked()
        return super().setdefault(key, default)

    def popitem(self):
        self._untracked()
        return super().popitem()

    def clear(self):
        self._untracked()
        super().clear()


class QueueTable:
    """Processors, BB share [bytes per processor] and last reason code of every queued job, by position
    in submission order (dead positions, of jobs gone since, are skipped and compacted away)."""

    def __init__(self):
        self.names: list[str] = list(BASE_REASONS)
        self._code: dict[str, int] = {r: k for k, r in enumerate(self.names)}
        self._rooms: dict = {}          # `_room`'s cache
        self._reset(0)

    def _reset(self, capacity: int) -> None:
        cap = max(capacity, 64)
        self.ids: list[str | None] = []
        self.pos: dict[str, int] = {}
        self.res = np.zeros(cap, dtype=np.int64)
        self.bb = np.zeros(cap, dtype=np.int64)
        self.alive = np.zeros(cap, dtype=bool)
        self.prev = np.full(cap, -1, dtype=np.int32)   # reason code after the last decision (-1: none yet)
        self.dead = 0

    def code(self, reason: str) -> int:
        k = self._code.get(reason)
        if k is None:
            k = self._code[reason] = len(self.names)
            self.names.append(reason)
        return k

    # ------------------------------------------------------------------ keeping in step with the queue
    def _append(self, jid: str, job) -> None:
        n = len(self.ids)
        if n == len(self.res):
            grow = len(self.res)
            self.res = np.concatenate([self.res, np.zeros(grow, dtype=np.int64)])
            self.bb = np.concatenate([self.bb, np.zeros(grow, dtype=np.int64)])
            self.alive = np.concatenate([self.alive, np.zeros(grow, dtype=bool)])
            self.prev = np.concatenate([self.prev, np.full(grow, -1, dtype=np.int32)])
        self.ids.append(jid)
        self.pos[jid] = n
        self.res[n] = job.res
        self.bb[n] = job.bb
        self.alive[n] = True
        self.prev[n] = -1

    def _remove(self, jid: str) -> None:
        p = self.pos.pop(jid, None)
        if p is not None:
            self.alive[p] = False
            self.ids[p] = None
            self.dead += 1

    def sync(self, queue: TrackedQueue) -> None:
        """Apply the queue's recorded insertions and removals (or rebuild from it when the record is
        incomplete), then compact when more than half of the positions are dead."""
        if not queue.complete:
            prev = {jid: int(self.prev[p]) for jid, p in self.pos.items()}
            self._reset(len(queue))
            for jid, job in queue.items():
                self._append(jid, job)
                self.prev[self.pos[jid]] = prev.get(jid, -1)
            queue.events.clear()
            queue.complete = True
            return
        for op, jid, job in queue.events:
            if op == "+":
                self._remove(jid)
                self._append(jid, job)
            else:
                self._remove(jid)
        queue.events.clear()
        n = len(self.ids)
        if self.dead > 64 and 2 * self.dead > n:
            keep = np.nonzero(self.alive[:n])[0]
            ids = [self.ids[p] for p in keep]
            res, bb, prev = self.res[keep], self.bb[keep], self.prev[keep]
            self._reset(2 * len(keep))
            m = len(keep)
            self.ids = ids
            self.pos = {jid: k for k, jid in enumerate(ids)}
            self.res[:m], self.bb[:m], self.prev[:m] = res, bb, prev
            self.alive[:m] = True

    # ------------------------------------------------------------------ classification
    def classify(self, free0: int, bb0: Sequence[int], free1: int, bb1: Sequence[int], blocked: str,
                 limits: dict[str, str], noted: dict[str, str]) -> dict[str, str]:
        """Reason of every queued job (docs/wait-reasons.md, in this order: `noted` by the pass, a queue
        limit, Resources if res > free0, BurstBufferResources if its BB shares do not fit `bb0`, Priority
        if res > free1 or its shares do not fit `bb1`, else `blocked`); returns {job id: reason} of the
        jobs whose reason differs from the previous call's (new jobs included), in submission order."""
        n = len(self.ids)
        if n == 0:
            return {}
        pos = self.pos
        noted_here = [(pos[jid], reason) for jid, reason in noted.items() if jid in pos]
        if len(noted_here) == len(pos):          # the pass looked at every queued job: its notes are the reasons
            return self._take_noted(noted_here)
        res, bb = self.res[:n], self.bb[:n]
        codes = np.full(n, self.code(blocked), dtype=np.int32)
        need = bb > 0
        idx = np.nonzero(need)[0]
        no_room1 = np.zeros(n, dtype=bool)
        no_room0 = np.zeros(n, dtype=bool)
        if len(idx):
            shares = bb[idx]
            no_room1[idx] = _room(bb1, shares, self._rooms) < res[idx]
            if tuple(bb0) == tuple(bb1):         # nothing started by the decision: the same BB is free
                no_room0 = no_room1
            else:
                no_room0[idx] = _room(bb0, shares, self._rooms) < res[idx]
        codes[(res > free1) | no_room1] = 2          # Priority
        codes[no_room0] = 1                          # BurstBufferResources
        codes[res > free0] = 0                       # Resources
        for src in (limits, noted):                  # noted last: it comes first
            for jid, reason in src.items():
                p = pos.get(jid)
                if p is not None:
                    codes[p] = self.code(reason)
        alive = self.alive[:n]
        changed = np.nonzero(alive & (codes != self.prev[:n]))[0]
        self.prev[:n] = codes
        ids, names = self.ids, self.names
        return {ids[p]: names[c] for p, c in zip(changed.tolist(), codes[changed].tolist())}

    def _take_noted(self, noted: list[tuple[int, str]]) -> dict[str, str]:
        """`classify` when every queued job was noted by the pass ([(position, reason)], one per queued job):
        no vector classification, only the noted reasons compared with the previous ones (the same result:
        a noted reason comes before every other rule)."""
        prev, code, changed = self.prev, self._code, []
        for p, reason in noted:
            c = code.get(reason)
            if c is None:
                c = self.code(reason)
            if prev[p] != c:
                prev[p] = c
                changed.append(p)
        changed.sort()                           # submission order, as `classify`
        ids, names = self.ids, self.names
        return {ids[p]: names[prev[p]] for p in changed}

    def reasons(self) -> dict[str, str]:
        """{job id: reason after the last `classify`} of every queued job, in submission order."""
        n = len(self.ids)
        return {jid: self.names[c] for jid, c, a in zip(self.ids, self.prev[:n].tolist(), self.alive[:n].tolist())
                if a and c >= 0}


def _room(free: Iterable[int], shares: np.ndarray, cache: dict | None = None) -> np.ndarray:
    """Σ_b ⌊free_b / share⌋ for each share (> 0) of `shares` (int64): how many shares of that size the BB
    nodes with free bytes `free` can hold (`placement.bb_room` compares it with the job's processors).
    The distinct positive free values and their counts are kept in `cache` ({free vector: (values,
    counts)}, emptied past 256 entries): the free vectors repeat from one decision to the next."""
    key = tuple(free)
    vc = cache.get(key) if cache is not None else None
    if vc is None:
        counts: dict[int, int] = {}
        for f in key:
            if f > 0:
                counts[f] = counts.get(f, 0) + 1
        vc = (np.fromiter(counts, dtype=np.int64, count=len(counts)),
              np.fromiter(counts.values(), dtype=np.int64, count=len(counts)))
        if cache is not None:
            if len(cache) >= 256:
                cache.clear()
            cache[key] = vc
    vals, counts = vc
    if len(vals) == 0:
        return np.zeros(len(shares), dtype=np.int64)
    return (vals[None, :] // shares[:, None]) @ counts
