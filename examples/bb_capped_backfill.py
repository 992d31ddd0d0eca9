"""A complete user policy, the tutorial of docs/writing-a-policy.md:
burstbuffer run --policy examples/bb_capped_backfill.py:BBCappedBackfill --policy-option bb_share=0.5"""
from burstbuffer.schedulers import Policy


class BBCappedBackfill(Policy):
    """EASY backfilling, widest jobs first, never more than bb_share of the burst buffers in use.

    Args:
        bb_share (float): the largest share of the platform's burst-buffer capacity in use at any time,
            from 0 to 1 (jobs asking more are rejected).
    """

    name = "bb-capped"

    def __init__(self, platform, *, seed=0, bb_share=0.5, **options):
        super().__init__(platform, seed=seed, **options)   # period, staging, staging_bandwidth
        self.cap = bb_share * platform.total_bb          # bytes

    def can_ever_fit(self, job):                         # rejected, never queued
        if job.bb_total > self.cap:
            return f"asks {job.bb_total} B of burst buffer, over the cap of {self.cap:.0f} B"
        return super().can_ever_fit(job)

    def schedule(self, now, queue, profile, rng):
        used = self.platform.total_bb - sum(profile.free_at(now)[1].values())
        starts, head = [], None
        for job in queue:                                # FCFS until the head job
            fit = self.fit_now(job)
            if fit is None or used + job.bb_total > self.cap:
                head = job
                break
            starts.append(self.start(job, fit))
            used += job.bb_total
        if head is None:
            return starts
        self.reserve(head)                               # processors + BB at the shadow time
        rest = queue[queue.index(head) + 1:]
        for job in sorted(rest, key=lambda j: -j.res):   # backfill the widest first
            fit = self.fit_now(job)
            if fit is not None and used + job.bb_total <= self.cap:
                starts.append(self.start(job, fit))
                used += job.bb_total
        return starts
