"""The protocol-v4 conformance checker: the real Batsim 4.2.1 capture passes, each rule fails when broken,
and `runner.run` is wired to it."""
import json

import pytest
from procset import ProcSet

from burstbuffer.batsim.conformance import (CheckedTransport, ConformanceChecker, ProtocolViolation,
                                            parse_interval_set)
from burstbuffer.runner import run

from .conftest import CAPTURE_DIR, PLATFORM

CAPTURE = CAPTURE_DIR / "protocol-full-run.jsonl"


def test_every_scheduler_message_of_the_real_batsim_capture_passes():
    c = ConformanceChecker()
    n = 0
    for line in CAPTURE.read_text().splitlines():
        r = json.loads(line)
        if r["dir"] == "batsim->scheduler":
            c.received(r["raw"])
        else:
            c.answered(r["raw"])
            n += 1
    assert n == c.exchanges == 124
    assert c.ended and c.registration_finished == 1 and c.registrations == 584


# ------------------------------------------------------------------ hand-made exchanges
def _ev(t, typ, **data):
    return {"timestamp": t, "type": typ, "data": data}


BEGINS = _ev(0.0, "SIMULATION_BEGINS",
             config={"dynamic-jobs-enabled": True, "profile-reuse-enabled": True},
             compute_resources=[{"id": 0, "name": "c0"}, {"id": 1, "name": "c1"}, {"id": 2, "name": "c2"}],
             storage_resources=[{"id": 3, "name": "bb0"}, {"id": 4, "name": "pfs"}],
             profiles={"w0": {"p": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}})
SUBMIT = _ev(5.0, "JOB_SUBMITTED", job_id="w0!1", job={"id": "w0!1", "subtime": 5, "res": 2, "profile": "p",
                                                       "walltime": 100})
STAGE = {"type": "data_staging", "nb_bytes": 10, "from": "source", "to": "destination"}


def _msg(now, *events):
    return json.dumps({"now": now, "events": list(events)})


def _checker(dynamic=True):
    c = ConformanceChecker()
    begins = json.loads(json.dumps(BEGINS))
    begins["data"]["config"]["dynamic-jobs-enabled"] = dynamic
    c.received(_msg(0.0, begins))
    c.answered(_msg(0.0))
    c.received(_msg(5.0, SUBMIT))
    return c


def _register(t=5.0, job="w0%1!0", profile="s", prof=STAGE, res=2):
    return [_ev(t, "REGISTER_PROFILE", workload_name=job.split("!")[0], profile_name=profile, profile=prof),
            _ev(t, "REGISTER_JOB", job_id=job, job={"id": job, "subtime": t, "res": res, "profile": profile,
                                                    "walltime": 50})]


def test_a_valid_exchange_passes():
    c = _checker()
    c.answered(_msg(5.0, _ev(5.0, "REJECT_JOB", job_id="w0!1"), *_register(),
                    _ev(5.0, "EXECUTE_JOB", job_id="w0%1!0", alloc="3-4",
                        storage_mapping={"source": 4, "destination": 3}),
                    _ev(5.0, "CALL_ME_LATER", timestamp=6.0)))
    c.received(_msg(7.0, _ev(7.0, "JOB_COMPLETED", job_id="w0%1!0", job_state="COMPLETED_SUCCESSFULLY"),
                    _ev(7.0, "NOTIFY", type="no_more_static_job_to_submit")))
    c.answered(_msg(7.5, _ev(7.0, "NOTIFY", type="registration_finished"),
                    _ev(7.5, "SET_JOB_METADATA", job_id="w0!1", metadata="x")))
    c.received(_msg(8.0, _ev(8.0, "SIMULATION_ENDS")))
    c.answered(_msg(8.0))
    # a static job on its res machines, with and without a mapping
    c = _checker(dynamic=False)
    c.answered(_msg(5.0, _ev(5.0, "EXECUTE_JOB", job_id="w0!1", alloc="0-1")))
    c = _checker(dynamic=False)
    c.answered(_msg(5.0, _ev(5.0, "EXECUTE_JOB", job_id="w0!1", alloc="2", mapping={"0": 0, "1": 0})))


VIOLATIONS = {
    # rule: (what, answer to the JOB_SUBMITTED at now=5 of a 2-machine job "w0!1" with profile "p")
    "json": [("not JSON", "{now: 5"),
             ("no events list", json.dumps({"now": 5.0})),
             ("unknown decision type", _msg(5.0, _ev(5.0, "START_JOB", job_id="w0!1")))],
    "timestamp": [("event after the answer's now", _msg(5.0, _ev(6.0, "REJECT_JOB", job_id="w0!1"))),
                  ("decreasing timestamps", _msg(6.0, _ev(6.0, "CALL_ME_LATER", timestamp=9.0),
                                                 _ev(5.5, "REJECT_JOB", job_id="w0!1")))],
    "now": [("answer's now before the received now", _msg(4.0))],
    "call-me-later": [("at the current time", _msg(5.0, _ev(5.0, "CALL_ME_LATER", timestamp=5.0))),
                      ("in the past", _msg(5.0, _ev(5.0, "CALL_ME_LATER", timestamp=1.0))),
                      ("not after its own event time", _msg(8.0, _ev(8.0, "CALL_ME_LATER", timestamp=7.0)))],
    "alloc": [("one machine short", _msg(5.0, _ev(5.0, "EXECUTE_JOB", job_id="w0!1", alloc="0"))),
              ("one machine too many", _msg(5.0, _ev(5.0, "EXECUTE_JOB", job_id="w0!1", alloc="0-2"))),
              ("not sorted", _msg(5.0, _ev(5.0, "EXECUTE_JOB", job_id="w0!1", alloc="2 0"))),
              ("adjacent intervals", _msg(5.0, _ev(5.0, "EXECUTE_JOB", job_id="w0!1", alloc="0 1"))),
              ("a-a", _msg(5.0, _ev(5.0, "EXECUTE_JOB", job_id="w0!1", alloc="0-0 2"))),
              ("overlap", _msg(5.0, _ev(5.0, "EXECUTE_JOB", job_id="w0!1", alloc="0-1 1-2"))),
              ("comma separated", _msg(5.0, _ev(5.0, "EXECUTE_JOB", job_id="w0!1", alloc="0,1"))),
              ("unknown resource", _msg(5.0, _ev(5.0, "EXECUTE_JOB", job_id="w0!1", alloc="1 9"))),
              ("mapping misses an executor", _msg(5.0, _ev(5.0, "EXECUTE_JOB", job_id="w0!1", alloc="0",
                                                           mapping={"0": 0}))),
              ("mapping out of alloc", _msg(5.0, _ev(5.0, "EXECUTE_JOB", job_id="w0!1", alloc="0",
                                                     mapping={"0": 0, "1": 1})))],
    "storage-mapping": [
        ("data staging without its destination", _msg(5.0, *_register(), _ev(
            5.0, "EXECUTE_JOB", job_id="w0%1!0", alloc="3-4", storage_mapping={"source": 4}))),
        ("data staging without storage_mapping", _msg(5.0, *_register(), _ev(
            5.0, "EXECUTE_JOB", job_id="w0%1!0", alloc="3-4"))),
        ("mapped to a compute machine", _msg(5.0, *_register(), _ev(
            5.0, "EXECUTE_JOB", job_id="w0%1!0", alloc="3-4", storage_mapping={"source": 4, "destination": 0}))),
        ("pfs profile with an unmapped label", _msg(5.0, *_register(
            profile="ck", prof={"type": "parallel_homogeneous_pfs", "bytes_to_read": 0, "bytes_to_write": 5,
                                "storage": "burstbuffer"}, res=1),
            _ev(5.0, "EXECUTE_JOB", job_id="w0%1!0", alloc="0")))],
    "profile": [("pybatsim's data-staging fields", _msg(5.0, *_register(
                    prof={"type": "data_staging", "size": 10, "direction": "to_storage"}))),
                ("no nb_bytes", _msg(5.0, *_register(prof={"type": "data_staging", "from": "a", "to": "b"}))),
                ("compute profile without com", _msg(5.0, *_register(
                    prof={"type": "parallel_homogeneous", "cpu": 1e9})))],
    "register": [("a job id used twice", _msg(5.0, *_register(), *_register(profile="s2"))),
                 ("a profile registered twice", _msg(5.0, *_register(), *_register(job="w0%1!1"))),
                 ("a static job id", _msg(5.0, *_register(job="w0!1"))),
                 ("a job with an unregistered profile", _msg(5.0, _register()[1])),
                 ("a job with no res", _msg(5.0, *_register(res=0)))],
    "job": [("unknown job", _msg(5.0, _ev(5.0, "EXECUTE_JOB", job_id="w0!2", alloc="0-1"))),
            ("started twice", _msg(5.0, _ev(5.0, "EXECUTE_JOB", job_id="w0!1", alloc="0-1"),
                                   _ev(5.0, "EXECUTE_JOB", job_id="w0!1", alloc="0-1"))),
            ("rejected after its start", _msg(5.0, _ev(5.0, "EXECUTE_JOB", job_id="w0!1", alloc="0-1"),
                                              _ev(5.0, "REJECT_JOB", job_id="w0!1"))),
            ("killing an unknown job", _msg(5.0, _ev(5.0, "KILL_JOB", job_ids=["w0!7"])))],
    "registration-finished": [
        ("sent twice", _msg(5.0, _ev(5.0, "NOTIFY", type="registration_finished"),
                            _ev(5.0, "NOTIFY", type="registration_finished"))),
        ("a registration after it", _msg(5.0, _ev(5.0, "NOTIFY", type="registration_finished"), *_register()))],
}
CASES = [(rule, what, answer) for rule, cases in VIOLATIONS.items() for what, answer in cases]


@pytest.mark.parametrize("rule, what, answer", CASES, ids=[f"{r}: {w}" for r, w, _ in CASES])
def test_each_rule_fails_when_broken(rule, what, answer):
    c = _checker()
    with pytest.raises(ProtocolViolation) as err:
        c.answered(answer)
    assert err.value.rule == rule, str(err.value)


def test_registering_without_dynamic_jobs_fails():
    c = _checker(dynamic=False)
    with pytest.raises(ProtocolViolation, match=r"\[register\].*enable-dynamic-jobs"):
        c.answered(_msg(5.0, *_register()))


def test_simulation_ends_without_registration_finished_fails():
    c = _checker()
    c.answered(_msg(5.0, _ev(5.0, "REJECT_JOB", job_id="w0!1")))
    c.received(_msg(9.0, _ev(9.0, "SIMULATION_ENDS")))
    with pytest.raises(ProtocolViolation) as err:
        c.answered(_msg(9.0))
    assert err.value.rule == "registration-finished"


def test_exactly_one_answer_per_message():
    c = _checker()
    with pytest.raises(ProtocolViolation) as err:
        c.received(_msg(6.0))            # a second message before the first was answered
    assert err.value.rule == "one-answer"
    c = _checker()
    c.answered(_msg(5.0))
    with pytest.raises(ProtocolViolation) as err:
        c.answered(_msg(5.0))            # an answer to nothing
    assert err.value.rule == "one-answer"


def test_interval_sets_must_be_canonical():
    assert parse_interval_set("0-3 7") == [(0, 3), (7, 7)]
    assert parse_interval_set(str(ProcSet(5, 1, 2, 3, 9))) == [(1, 3), (5, 5), (9, 9)]
    for bad in ("", "3-1", "1 1", "0  1", " 0", "0-2 3", "x"):
        with pytest.raises(ValueError):
            parse_interval_set(bad)


class _Fake:
    def __init__(self, msgs):
        self.msgs, self.sent = list(msgs), []

    def recv(self):
        return self.msgs.pop(0)

    def send(self, raw):
        self.sent.append(raw)


def test_checked_transport_stops_a_bad_answer_before_it_is_sent():
    t = CheckedTransport(_Fake([_msg(0.0, BEGINS), _msg(5.0, SUBMIT)]))
    t.recv()
    t.send(_msg(0.0).encode())
    t.recv()
    with pytest.raises(ProtocolViolation, match="alloc"):
        t.send(_msg(5.0, _ev(5.0, "EXECUTE_JOB", job_id="w0!1", alloc="0")).encode())
    assert len(t.transport.sent) == 1


#: a policy file whose import, in `run`'s child only, gives every job one machine too many (AllocOnlyModel.start)
OVERSIZE_POLICY = """
import sys
from procset import ProcSet
from burstbuffer.batsim.protocol import ExecuteJob
from burstbuffer.io_model.alloc_only import AllocOnlyModel
from burstbuffer.schedulers import EasyBackfilling as FcfsBB   # fcfs-bb: its defaults

if sys.argv[0].endswith("colocated/__main__.py"):  # the simulator's process, not the test's
    def _oversize(self, start, now, out):
        self._running.add(start.job.id)
        extra = max(set(range(96)) - set(start.procs))
        out.add(ExecuteJob(start.job.id, start.procs | ProcSet(extra)), now)
    AllocOnlyModel.start = _oversize


class Fcfs(FcfsBB):
    pass
"""


@pytest.mark.parametrize("link", ["in-simulator", "pipes"])
def test_run_checks_the_protocol_and_fails_on_a_violation(kth_subset, tmp_path, link):
    """The wiring used by every end-to-end test: a scheduler that gives a job one machine too many is
    stopped by the check (the conftest fixture turns it on for every run), in the simulator's process or
    beside it (both in a child of this process: the faulty model comes with the policy's file)."""
    (tmp_path / "oversize.py").write_text(OVERSIZE_POLICY)
    policy = f"{tmp_path / 'oversize.py'}:Fcfs"
    with pytest.raises(ProtocolViolation, match=r"\[alloc\].*res=\d+ machines"):
        run(policy, kth_subset(3), PLATFORM, tmp_path / "o", model="alloc-only", progress=False, timeout=60,
            link=link)
    assert (tmp_path / "o" / "jobs.csv").is_file()     # outputs so far are written all the same
