"""The objects a `ProfileScheduler` owns work alone, from what they are given (the profile, a hold shape, the
submission indices): small cases checked by hand. Also cerberus' BB ledger (`bb_ledger.BBLedger`)."""
from __future__ import annotations

import logging
from types import SimpleNamespace

from procset import ProcSet

from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers.base import Job, StageIn
from burstbuffer.schedulers.bb_ledger import BBLedger
from burstbuffer.schedulers.holds import NO_STAGING, HoldShape
from burstbuffer.schedulers.profile import AvailabilityProfile
from burstbuffer.schedulers.profile_scheduler import QueueOrder, Reservations, StagedLifecycle

GB = 10 ** 9


def _busy_profile():
    """4 nodes, one BB node of 100 GB; a running job holds nodes 0-2 and 30 GB over [0, 100)."""
    plat = Platform.simple(4, [100 * GB])
    prof = AvailabilityProfile(plat, origin=0.0)
    prof.reserve(0.0, 100.0, ProcSet((0, 2)), {4: 30 * GB})
    return plat, prof


def test_reservations_reserve_the_earliest_window_and_drop_it():
    _, prof = _busy_profile()
    res = Reservations()
    head = Job("h", 0.0, 50.0, 2, 10 * GB)
    r = res.reserve(prof, head, 0.0, NO_STAGING, bb=True)
    assert (r.start, r.end, r.procs, r.bb_per_storage) == (100.0, 150.0, ProcSet((0, 1)), {4: 20 * GB})
    assert res.held is r and res.last is r and prof.nb_free_at(120.0) == 2
    # a job of 1 node fits now beside the running job (node 3); 2 nodes do not
    assert res.fits_now(prof, Job("a", 0.0, 500.0, 1, 0), 0.0, NO_STAGING).procs == ProcSet(3)
    assert res.fits_now(prof, Job("b", 0.0, 10.0, 2, 0), 0.0, NO_STAGING) is None
    res.unreserve(prof)
    assert res.held is None and res.last is r and prof.nb_free_at(120.0) == 4


def test_a_lazy_reservation_enters_the_profile_at_the_first_fit_asked():
    _, prof = _busy_profile()
    res = Reservations()
    res.reserve(prof, Job("h", 0.0, 50.0, 2, 0), 0.0, NO_STAGING, bb=False, lazy=True)
    assert prof.nb_free_at(120.0) == 4                     # not in the profile yet
    res.fits_now(prof, Job("a", 0.0, 500.0, 1, 0), 0.0, NO_STAGING)
    assert prof.nb_free_at(120.0) == 2                     # entered before the fit
    res.unreserve(prof)
    assert prof.nb_free_at(120.0) == 4


def test_an_unchanged_profile_gives_back_the_kept_reservation():
    _, prof = _busy_profile()
    res = Reservations()
    head = Job("h", 0.0, 50.0, 2, 10 * GB)
    r0 = res.reserve(prof, head, 0.0, NO_STAGING, bb=True)
    res.unreserve(prof)
    assert res.kept is not None and res.kept[2] is r0
    r1 = res.reserve(prof, head, 5.0, NO_STAGING, bb=True)
    assert (r1.start, r1.procs, r1.bb_per_storage, r1.made_at) == (r0.start, r0.procs, r0.bb_per_storage, 5.0)
    res.unreserve(prof)
    prof.release(50.0, 100.0, ProcSet((0, 2)), {4: 30 * GB})   # a release: the kept one is not trusted any more
    assert res.reserve(prof, head, 6.0, NO_STAGING, bb=True).start == 50.0


def test_queue_order_sorts_the_jobs_it_is_given():
    jobs = [Job("a", 0.0, 30.0, 1), Job("b", 1.0, 10.0, 1), Job("c", 2.0, 10.0, 1)]
    submission = {"a": 0, "b": 1, "c": 2}
    sjf = QueueOrder(4, "sjf", None, {})
    assert not sjf.plain and [j.id for j in sjf.ordered(jobs, submission, 5.0)] == ["b", "c", "a"]
    assert [j.id for j in sjf.ordered(jobs, {"a": 0, "b": 2, "c": 1}, 5.0)] == ["c", "b", "a"]   # ties: submission
    fcfs = QueueOrder(4, None, None, {})
    assert fcfs.plain and fcfs.ordered(jobs, submission, 5.0) == jobs and fcfs.extra_job_columns == []
    assert fcfs.eligible(jobs[0]) and fcfs.route_reason(jobs[0]) is None


def test_staged_lifecycle_binds_only_a_model_that_stages_separately(caplog):
    model = SimpleNamespace(stages_separately=True, name="three-phase",
                            hold_shape=lambda job, bw: HoldShape(job.bb * job.res / bw, job.bb * job.res / bw))
    job = Job("j", 0.0, 100.0, 2, 5 * GB)
    st = StagedLifecycle("bb-first", 1 * GB)
    st.bind(SimpleNamespace(stages_separately=False, name="io-aware"), "p", lambda: None)
    assert not st.staged and st.shape(job) == NO_STAGING
    st.bind(model, "p", lambda: None)
    assert st.staged and st.shape(job) == HoldShape(10.0, 10.0)
    with caplog.at_level(logging.WARNING, logger="burstbuffer"):
        st.bind(model, "p", lambda: "queues")
    assert not st.staged and "p with queues keeps its two-phase behaviour" in caplog.text
    nodes = StagedLifecycle("with-nodes", 1 * GB)
    nodes.bind(model, "p", lambda: None)
    assert not nodes.staged


def test_staged_lifecycle_commits_a_stage_in_and_releases_it():
    plat = Platform.simple(4, [100 * GB])
    prof = AvailabilityProfile(plat, origin=0.0)
    model = SimpleNamespace(stages_separately=True, name="three-phase",
                            hold_shape=lambda job, bw: HoldShape(10.0, 10.0))
    st = StagedLifecycle("bb-first", 1 * GB)
    st.bind(model, "p", lambda: None)
    job = Job("j", 0.0, 100.0, 2, 5 * GB)
    fit = prof.fit_at(job, 10.0, shape=st.shape(job), now=0.0)
    d = st.commit(prof, job, fit, 0.0)
    assert isinstance(d, StageIn) and st.waiting_jobs() == [job]
    assert prof.free_counts_at(5.0) == (4, (90 * GB,))      # BB from now, nodes from the stage-in's end
    assert prof.free_counts_at(50.0) == (2, (90 * GB,)) and prof.free_counts_at(115.0) == (4, (90 * GB,))
    assert prof.free_counts_at(125.0) == (4, (100 * GB,))
    assert st.ended(prof, "j", 0.0) and not st.ended(prof, "j", 0.0)
    assert prof.free_counts_at(50.0) == (4, (100 * GB,))


def test_bb_ledger_places_takes_promises_and_releases():
    led = BBLedger({10: 100, 11: 100})
    job = Job("j", 0.0, 10.0, 4, 30)
    slots = led.place(job)
    assert slots == (10, 10, 11, 11)                         # round-robin by id over the nodes with room
    led.take("j", slots, 30)
    assert led.free == {10: 40, 11: 40} and led.total() == 80
    assert led.room_on_slots("j", 20) and not led.room_on_slots("j", 21)
    led.promise("j", 5)
    assert led.promised == {10: 10, 11: 10}
    assert led.place_as(Job("k", 0.0, 10.0, 2, 0), 15, 15, promised=True) == (10, 11)
    assert led.place_as(Job("k", 0.0, 10.0, 4, 0), 16, 16, promised=True) is None   # 30 - 10 left: one share each
    led.release("j")
    assert led.free == {10: 100, 11: 100} and led.promised == {10: 0, 11: 0} and led.slots == {}
