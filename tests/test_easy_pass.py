"""The EASY family's passes (`easy.EasyBackfilling`: the FCFS pass, the head's reservation, the backfilling pass and
the wait reasons it notes), hand-checked on one decision (Kopanski & Rzadca 2021, Algorithm 1 lines 12-17)."""
from __future__ import annotations

from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers import make_scheduler
from burstbuffer.schedulers.base import Job

GB = 10**9


def test_sjf_bb_decision_hand_checked():
    """2 processors, one 10 GB BB node (id 2): a runs [0, 10) on processor 0 with 6 GB. At t=1: b (2 processors,
    2 x 2 GB) is the head (Resources: 1 processor free), reserved at 10 on 0-1 with 4 GB; by ascending walltime, c
    (5 s, 5 GB) does not fit the 4 GB free (BurstBufferResources), e (5 s, 1 GB) starts on processor 1 with its GB
    on node 2 (it ends at 6, before the reservation), then no processor is free: d (20 s) is not looked at, its
    reason after the decision is Priority (it fitted before e started)."""
    plat = Platform.simple(2, [10 * GB])
    sched = make_scheduler("sjf-bb", plat)
    sched.submit(Job("w0!a", 0.0, 10.0, 1, 6 * GB), 0.0)
    assert [s.job.id for s in sched.decide(0.0)] == ["w0!a"]
    for j in (Job("w0!b", 0.0, 5.0, 2, 2 * GB), Job("w0!c", 0.0, 5.0, 1, 5 * GB), Job("w0!d", 0.0, 20.0, 1, 2 * GB),
              Job("w0!e", 0.0, 5.0, 1, GB)):
        sched.submit(j, 1.0)
    starts = sched.decide(1.0)
    assert [(s.job.id, str(s.procs), s.bb_of_node) for s in starts] == [("w0!e", "1", {1: 2})]
    r = sched.last_reservation
    assert (r.job_id, r.start, r.end, str(r.procs), r.bb_per_storage) == ("w0!b", 10.0, 15.0, "0-1", {2: 4 * GB})
    assert sched.wait_reasons == {"w0!b": "Resources", "w0!c": "BurstBufferResources", "w0!d": "Priority"}
