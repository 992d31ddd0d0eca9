"""The burst-buffer ledger of the queue-based three-phase policies (`cerberus.Cerberus`, `slurm_bb.SlurmBB`): the
free bytes of every BB node, the BB node of each share of every job holding BB, the bytes per share each job
holds, and (Cerberus as written) the bb_run bytes promised to the jobs in stage-in or staged. The policy owns
one (``bb``) and decides; the ledger only places shares and keeps the counts (docs/policies.md "cerberus")."""
from __future__ import annotations

from .base import Job

__all__ = ["BBLedger", "deal"]


class BBLedger:
    """BB bytes per BB node, free and held (module docstring).

    Args:
        capacity: BB node storage id → capacity [bytes] (`Platform.bb_capacity`).

    Attributes: free (BB node → free bytes); slots (job id → the BB node of each of its shares); promised (BB node
    → bb_run bytes promised, Cerberus as written)."""

    def __init__(self, capacity: dict[int, int]) -> None:
        self.capacity = dict(capacity)
        self.free = dict(capacity)
        self.slots: dict[str, tuple[int, ...]] = {}
        self._share: dict[str, int] = {}                # job id → bytes per share it holds
        self.promised: dict[int, int] = {}
        self._promise: dict[str, int] = {}              # job id → its bb_run per share, while promised

    def total(self) -> int:
        """Free BB bytes over every BB node."""
        return sum(self.free.values())

    def place(self, job: Job) -> tuple[int, ...] | None:
        """BB node of each of the job's `res` shares of `bb` bytes, dealt round-robin over the BB nodes with
        room (by id), so that a job's shares spread like its compute nodes will; None if no room."""
        if job.bb == 0:
            return ()
        room = {b: f // job.bb for b, f in sorted(self.free.items()) if f >= job.bb}
        return deal(room, job.res)

    def place_as(self, job: Job, need: int, largest: int, *, promised: bool = False) -> tuple[int, ...] | None:
        """BB node of each of `job`'s shares, round-robin by id over the BB nodes with room for `need` bytes
        per share now (less the promised bytes, `promised`) and for its `largest` share once free; None if there
        is no room. `need` > 0."""
        room: dict[int, int] = {}
        for b, f in sorted(self.free.items()):
            f -= self.promised.get(b, 0) if promised else 0
            k = min(f // need if f > 0 else 0, self.capacity[b] // largest)
            if k > 0:
                room[b] = k
        return deal(room, job.res)

    def take(self, job_id: str, slots: tuple[int, ...], share: int) -> None:
        """`job_id` holds `share` bytes on each BB node of `slots` (one per share) from now."""
        self.slots[job_id], self._share[job_id] = slots, 0
        self.hold(job_id, share)

    def hold(self, job_id: str, share: int) -> None:
        """Make `job_id` hold `share` bytes on the BB node of each of its shares, from what it held."""
        old = self._share.get(job_id, 0)
        for b in self.slots.get(job_id, ()):
            self.free[b] -= share - old
        self._share[job_id] = share

    def promise(self, job_id: str, per_share: int) -> None:
        """Promise `per_share` more bytes on each of `job_id`'s slots (its bb_run, Cerberus as written)."""
        self._promise[job_id] = per_share
        for b in self.slots[job_id]:
            self.promised[b] = self.promised.get(b, 0) + per_share

    def unpromise(self, job_id: str) -> None:
        """`job_id`'s promise is kept or dropped: it leaves `promised`."""
        per = self._promise.pop(job_id, 0)
        for b in self.slots.get(job_id, ()) if per else ():
            self.promised[b] -= per

    def room_on_slots(self, job_id: str, extra: int) -> bool:
        """Whether `extra` more bytes per share fit on `job_id`'s slots now."""
        count: dict[int, int] = {}
        for b in self.slots.get(job_id, ()):
            count[b] = count.get(b, 0) + 1
        return all(self.free[b] >= k * extra for b, k in count.items())

    def release(self, job_id: str) -> None:
        """`job_id` ended: its promise and every byte it holds are given back."""
        self.unpromise(job_id)
        per_share = self._share.pop(job_id, 0)
        for b in self.slots.pop(job_id, ()):
            self.free[b] += per_share


def deal(room: dict[int, int], res: int) -> tuple[int, ...] | None:
    """`res` shares dealt round-robin over the BB nodes of `room` (node id -> how many more shares fit, in
    the order to deal), the node of each share, sorted; None when fewer than `res` fit."""
    if sum(room.values()) < res:
        return None
    out: list[int] = []
    while len(out) < res:
        for b in room:
            if room[b] > 0 and len(out) < res:
                out.append(b)
                room[b] -= 1
    return tuple(sorted(out))
