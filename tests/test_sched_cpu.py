"""The scheduler side's cheaper paths give what the plain ones give (docs/performance.md, "The scheduler
process"): ProcSets made straight from a bitmask's runs, the wait-reason table's cached BB room against the
per-job rule, the ZeroMQ receive's own timeout, and the EASY head's reservation kept between decisions."""
from __future__ import annotations

import threading

import numpy as np
import pytest
import zmq
from hypothesis import given
from hypothesis import strategies as st
from procset import ProcSet

from burstbuffer.batsim.protocol import alloc_text
from burstbuffer.batsim.transport import ReplySocket, TransportTimeout
from burstbuffer.schedulers.placement import _runs, bb_room, mask_of, procset_of
from burstbuffer.schedulers.wait_table import BASE_REASONS, QueueTable, TrackedQueue, _room
from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers import make_scheduler
from burstbuffer.schedulers.base import Job
from burstbuffer.schedulers.profile import AvailabilityProfile

from .test_policies import GB, PROPS, simulate, workloads


@given(st.integers(min_value=0, max_value=(1 << 300) - 1))
def test_procset_of_equals_the_public_constructor(mask):
    """Every bitmask: the same intervals, string, members and behaviour under set operations as a ProcSet made
    by the public constructor, and `mask_of` gives the mask back."""
    slow = ProcSet(*[(a, a + n - 1) for a, n in _runs(mask)])
    fast = procset_of(mask)
    assert fast == slow and str(fast) == str(slow) and list(fast) == list(slow) and len(fast) == len(slow)
    assert mask_of(fast) == mask
    assert (fast | ProcSet(0)) == (slow | ProcSet(0)) and (fast - ProcSet((0, 5))) == (slow - ProcSet((0, 5)))


def test_procset_of_small_cases():
    assert str(procset_of(0)) == "" and not procset_of(0)
    assert str(procset_of(0b1011)) == "0-1 3"
    assert procset_of(1 << 95) == ProcSet(95)


@given(st.lists(st.integers(min_value=0, max_value=50), min_size=1, max_size=14),
       st.lists(st.integers(min_value=1, max_value=30), min_size=1, max_size=20))
def test_room_with_its_cache_is_the_sum_of_floors(free, shares):
    """Σ_b ⌊free_b / share⌋ per share, with the cache empty, filled and reused."""
    cache: dict = {}
    want = [sum(f // s for f in free) for s in shares]
    arr = np.array(shares, dtype=np.int64)
    assert _room(free, arr).tolist() == want
    assert _room(free, arr, cache).tolist() == want
    assert _room(tuple(free), arr, cache).tolist() == want and len(cache) == 1


def _rule(job: Job, free0: int, bb0, free1: int, bb1, blocked: str) -> str:
    """The per-job classification of docs/wait-reasons.md (a job not noted by the pass, no queue limit)."""
    if job.res > free0:
        return "Resources"
    if job.bb > 0 and not bb_room(bb0, job.bb, job.res):
        return "BurstBufferResources"
    if job.res > free1 or (job.bb > 0 and not bb_room(bb1, job.bb, job.res)):
        return "Priority"
    return blocked


_job = st.tuples(st.integers(min_value=1, max_value=8), st.sampled_from([0, 0, 1, 2, 3, 5, 8]))
_step = st.tuples(
    st.lists(_job, max_size=4),                                     # submissions
    st.lists(st.integers(min_value=0, max_value=30), max_size=3),   # removals (by position among the queued)
    st.integers(min_value=0, max_value=8), st.lists(st.integers(min_value=0, max_value=12), min_size=3, max_size=3),
    st.integers(min_value=0, max_value=8), st.lists(st.integers(min_value=0, max_value=12), min_size=3, max_size=3),
    st.sampled_from(BASE_REASONS + ("Custom",)),
    st.lists(st.tuples(st.integers(min_value=0, max_value=30), st.sampled_from(BASE_REASONS + ("Noted",))),
             max_size=3),
    st.booleans())                                                  # the pass noted every queued job


@given(st.lists(_step, min_size=1, max_size=15))
def test_queue_table_incremental_equals_full_recomputation(steps):
    """On generated queues (jobs submitted and removed between decisions, compactions, free counts changing or
    not, reasons noted by the pass): the reasons the table hands over at each decision — only the changed ones —
    accumulated from the start, equal the per-job rule recomputed for the whole queue, and `reasons()` equals
    that too."""
    queue, table = TrackedQueue(), QueueTable()
    known: dict[str, str] = {}
    seq = 0
    for subs, removals, free0, bb0, free1, bb1, blocked, noted, note_all in steps:
        for res, bb in subs:
            queue[f"j{seq}"] = Job(f"j{seq}", 0.0, 10.0, res, bb)
            seq += 1
        for k in removals:
            ids = list(queue)
            if ids:
                del queue[ids[k % len(ids)]]
        table.sync(queue)
        ids = list(queue)
        marks = {ids[k % len(ids)]: r for k, r in noted} if ids else {}
        if note_all:          # every queued job noted (in another order than submission's), one that left too
            marks = {jid: marks.get(jid, BASE_REASONS[len(jid) % 4]) for jid in reversed(ids)}
            marks["gone"] = "Priority"
        changed = table.classify(free0, tuple(bb0), free1, tuple(bb1), blocked, {}, marks)
        want = {jid: marks.get(jid) or _rule(j, free0, bb0, free1, bb1, blocked) for jid, j in queue.items()}
        assert set(changed) <= set(want)
        assert list(changed) == [jid for jid in queue if jid in changed]     # in submission order
        assert all(want[jid] == r for jid, r in changed.items())
        for jid in list(known):
            if jid not in queue:
                del known[jid]
        known.update(changed)
        assert known == want
        assert table.reasons() == want


@given(st.integers(min_value=0, max_value=(1 << 200) - 1))
def test_alloc_text_is_the_procset_string(mask):
    """EXECUTE_JOB's alloc as ProcSet's own string, for any set of machines (and str() of anything else)."""
    ps = ProcSet(*[(a, a + n - 1) for a, n in _runs(mask)])
    assert alloc_text(ps) == str(ps)
    assert alloc_text("0-3") == "0-3"


def test_reply_socket_times_out_then_serves():
    """A receive with nothing sent raises TransportTimeout after the timeout; the socket then still serves a
    request and its answer."""
    sock = ReplySocket("inproc://test-sched-cpu", timeout=0.05)
    try:
        with pytest.raises(TransportTimeout):
            sock.recv()
        req = zmq.Context.instance().socket(zmq.REQ)
        req.connect("inproc://test-sched-cpu")
        got = {}
        t = threading.Thread(target=lambda: (req.send(b"ping"), got.setdefault("answer", req.recv())))
        t.start()
        assert sock.recv() == b"ping"
        sock.send(b"pong")
        t.join(5)
        assert got["answer"] == b"pong"
        req.close(linger=0)
    finally:
        sock.close()


@PROPS
@given(workloads(), st.sampled_from(["fcfs-easy", "fcfs-bb", "sjf-bb"]), st.sampled_from([None, 1.0, 3.0]),
       st.booleans())
def test_kept_reservation_is_the_one_computed_again(wl, policy, period, extra):
    """The EASY head's reservation kept from one decision to the next while the profile is unchanged
    (`Reservations._keep`) gives, at every decision, the same starts and the same reservation (shadow
    time, processors, BB per node) as computing it again each time; periodic decisions (`period`) make many
    decisions without a change. The same with the reservation entered into the profile at once instead of at the
    backfilling pass's first fit (`_reserve`'s `lazy`)."""
    plat, jobs, runtime = wl
    opts = {"period": period, "easy_extra_nodes": extra}

    def run(keep: bool, lazy: bool = True):
        sched = make_scheduler(policy, plat, seed=0, **opts)
        seen = []
        reserve = sched._reserve

        def spy(job, now, *, bb, **kw):
            if not keep:
                sched._res.kept = None                 # the owned reservations' kept one
            if not lazy:
                kw["lazy"] = False
            r = reserve(job, now, bb=bb, **kw)
            seen.append(None if r is None else (now, r.job_id, r.start, r.end, str(r.procs),
                                                sorted(r.bb_per_storage.items()), r.made_at))
            return r
        sched._reserve = spy
        return simulate(sched, jobs, runtime, period=period), seen

    (kept, res_kept), (fresh, res_fresh), (eager, res_eager) = run(True), run(False), run(True, lazy=False)
    assert kept.decisions == fresh.decisions == eager.decisions
    assert kept.reservations == fresh.reservations == eager.reservations
    assert res_kept == res_fresh == res_eager


def test_kept_reservation_is_reused_and_dropped_on_a_release(monkeypatch):
    """Hand-checked: 2 processors; a runs [0, 10) on one, b (2 processors) is the head, reserved at 10. At t=1 and
    t=2 nothing changed: b's reservation is reused (no new earliest fit); c ends at t=3 (it was backfilled on the
    other processor until 5): the profile freed resources, so the reservation is computed again."""
    plat = Platform.simple(2, [10 * GB])
    sched = make_scheduler("sjf-bb", plat)
    calls = []
    sched.submit(Job("w0!a", 0.0, 10.0, 1, 0), 0.0)
    assert [s.job.id for s in sched.decide(0.0)] == ["w0!a"]
    original = AvailabilityProfile.earliest_fit

    def counted(self, job, t0, **kw):
        calls.append((job.id, t0))
        return original(self, job, t0, **kw)
    monkeypatch.setattr(AvailabilityProfile, "earliest_fit", counted)
    sched.submit(Job("w0!b", 0.0, 5.0, 2, 0), 0.0)
    sched.submit(Job("w0!c", 0.0, 5.0, 1, 0), 0.0)
    assert [s.job.id for s in sched.decide(0.0)] == ["w0!c"]          # backfilled: ends by 5 ≤ the shadow time 10
    assert calls == [("w0!b", 0.0)] and sched.last_reservation.start == 10.0
    assert sched.decide(1.0) == [] and sched.decide(2.0) == []
    assert calls == [("w0!b", 0.0)]                                    # kept: no new search
    assert sched.last_reservation.start == 10.0 and sched.last_reservation.made_at == 2.0
    sched.job_ended("w0!c", 3.0)                                       # frees [3, 5) on processor 1
    assert sched.decide(3.0) == []
    assert calls == [("w0!b", 0.0), ("w0!b", 3.0)] and sched.last_reservation.start == 10.0
