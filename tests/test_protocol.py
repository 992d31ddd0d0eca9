"""Protocol v4 layer: decoding Batsim's real messages, encoding answers, the ordering rules."""
import json
from pathlib import Path

import pytest
from procset import ProcSet

from burstbuffer.batsim.loop import Outbox, run_loop
from burstbuffer.batsim.protocol import (CallMeLater, ExecuteJob, JobCompleted, JobSubmitted, NotifyBatsim,
                                         ProtocolError, RejectJob, SimulationBegins, SimulationEnds, decode,
                                         encode)

CAPTURE = Path(__file__).resolve().parent / "data" / "batsim-4.2.1" / "protocol-full-run.jsonl"


def _capture():
    return [json.loads(line) for line in CAPTURE.open()]


def test_decode_every_message_of_a_real_batsim_run():
    msgs = [m for m in _capture() if m["dir"] == "batsim->scheduler"]
    kinds = set()
    for m in msgs:
        now, events = decode(m["raw"])
        assert all(ts <= now + 1e-9 for ts, _ in events)
        kinds |= {type(e).__name__ for _, e in events}
    assert {"SimulationBegins", "JobSubmitted", "JobCompleted", "RequestedCall", "Notify",
            "SimulationEnds"} <= kinds
    now, events = decode(msgs[0]["raw"])
    begins = events[0][1]
    assert isinstance(begins, SimulationBegins)
    assert begins.data["nb_compute_resources"] == 96
    now, events = decode(msgs[1]["raw"])
    assert isinstance(events[0][1], JobSubmitted) and events[0][1].job_id == "w0!15"
    assert events[0][1].job["res"] == 4


def test_decoded_completion_fields():
    now, events = decode(b'{"now":4.0555,"events":[{"timestamp":4.0552,"type":"JOB_COMPLETED","data":'
                         b'{"job_id":"w0%15!0","job_state":"COMPLETED_SUCCESSFULLY","return_code":0,"alloc":"96 108"}}]}')
    assert now == 4.0555
    assert events == [(4.0552, JobCompleted("w0%15!0", "COMPLETED_SUCCESSFULLY", 0, "96 108"))]


def test_malformed_message_is_a_protocol_error():
    with pytest.raises(ProtocolError):
        decode(b'{"now": 1.0}')
    with pytest.raises(ProtocolError):
        decode(b'not json')


def test_times_batsim_runs_are_accepted_and_impossible_ones_refused():
    """Batsim's own test_long_workload.json runs to t = 1e17 s: such a date is a time; a negative, NaN,
    infinite or absurdly large one is a malformed message (MAX_TIME)."""
    def completed(t) -> bytes:
        return (f'{{"now":{t},"events":[{{"timestamp":{t},"type":"JOB_COMPLETED","data":{{"job_id":"w0!15",'
                f'"job_state":"COMPLETED_SUCCESSFULLY","return_code":0,"alloc":"0"}}}}]}}').encode()
    for t in ("1000000000000020.25", "1e17", "100000000000000000030"):
        now, [(ts, _)] = decode(completed(t))
        assert now == ts == float(t)
    for t in ("-1.0", "NaN", "Infinity", "-Infinity", "1e300"):
        with pytest.raises(ProtocolError, match="is not a time in"):
            decode(completed(t))


def test_encode_matches_batsim_field_names():
    raw = encode(4.5, [(4.5, ExecuteJob("w0%15!0", ProcSet(96, 108), storage_mapping={"source": 108,
                                                                                      "destination": 96})),
                       (4.5, RejectJob("w0!15")), (4.5, CallMeLater(100.0)),
                       (4.5, NotifyBatsim("registration_finished"))])
    msg = json.loads(raw)
    assert msg["now"] == 4.5
    assert msg["events"][0] == {"timestamp": 4.5, "type": "EXECUTE_JOB",
                                "data": {"job_id": "w0%15!0", "alloc": "96 108",
                                         "storage_mapping": {"source": 108, "destination": 96}}}
    assert msg["events"][1]["data"] == {"job_id": "w0!15"}
    assert msg["events"][2] == {"timestamp": 4.5, "type": "CALL_ME_LATER", "data": {"timestamp": 100.0}}
    assert msg["events"][3]["data"] == {"type": "registration_finished"}


def test_outbox_timestamps_never_go_back_and_now_is_the_max():
    out = Outbox(10.0)
    out.add(RejectJob("a"), 9.0)     # in the past: clamped to now
    out.add(RejectJob("b"), 12.0)    # a decision later than now moves the answer's now
    out.add(RejectJob("c"), 11.0)    # never before the previous decision
    ts = [t for t, _ in out.items]
    assert ts == [10.0, 12.0, 12.0]
    assert out.now == 12.0


def test_call_me_later_not_strictly_in_the_future_is_dropped():
    out = Outbox(10.0)
    out.add(CallMeLater(10.0))
    out.add(CallMeLater(10.5))
    assert [d.at for _, d in out.finish()] == [10.5]


class _Scripted:
    """A transport replaying given messages and keeping the answers."""

    def __init__(self, msgs):
        self.msgs, self.answers = list(msgs), []

    def recv(self):
        return self.msgs.pop(0)

    def send(self, raw):
        self.answers.append(json.loads(raw))


class _Echo:
    def __init__(self):
        self.seen = []

    def on_event(self, ts, ev, out):
        self.seen.append(type(ev).__name__)
        if isinstance(ev, JobSubmitted):
            out.add(RejectJob(ev.job_id), ts)

    def after_events(self, now, out):
        out.add(CallMeLater(now + 5))


def test_run_loop_answers_every_message_once_and_stops_at_simulation_ends():
    msgs = [b'{"now":0,"events":[{"timestamp":0,"type":"SIMULATION_BEGINS","data":{}}]}',
            b'{"now":3,"events":[{"timestamp":3,"type":"JOB_SUBMITTED","data":{"job_id":"w0!1","job":{}}}]}',
            b'{"now":7,"events":[{"timestamp":7,"type":"SOMETHING_NEW","data":{}}]}',
            b'{"now":9,"events":[{"timestamp":9,"type":"SIMULATION_ENDS","data":{}}]}']
    t, h = _Scripted(msgs), _Echo()
    assert run_loop(t, h) == 4
    assert len(t.answers) == 4
    assert t.answers[1]["events"][0] == {"timestamp": 3.0, "type": "REJECT_JOB", "data": {"job_id": "w0!1"}}
    assert t.answers[1]["events"][1]["data"] == {"timestamp": 8.0}
    assert t.answers[3] == {"now": 9.0, "events": []}
    assert h.seen == ["SimulationBegins", "JobSubmitted", "UnknownEvent", "SimulationEnds"]
    assert all(a["now"] >= float(json.loads(m)["now"]) for a, m in zip(t.answers, msgs))


def test_encode_is_the_compact_json_of_every_decision():
    """The answer written as text is byte for byte `json.dumps` (compact separators, ASCII) of its objects: every
    decision type, escapes and non-ASCII in strings, integer, infinite and NaN times."""
    from burstbuffer.batsim.protocol import (KillJob, RegisterJob, RegisterProfile, SetJobMetadata)
    job = {"id": 'w"1%é!0', "subtime": 3, "walltime": -1, "res": 2, "profile": "p\n"}
    cases = [
        (RegisterJob('w"1%é!0', job), "REGISTER_JOB", {"job_id": 'w"1%é!0', "job": job}),
        (ExecuteJob("j", ProcSet((0, 3), 8), mapping={0: 1, 2: 3}, storage_mapping={"bb": 7}), "EXECUTE_JOB",
         {"job_id": "j", "alloc": "0-3 8", "mapping": {"0": 1, "2": 3}, "storage_mapping": {"bb": 7}}),
        (ExecuteJob("j", ProcSet(5)), "EXECUTE_JOB", {"job_id": "j", "alloc": "5"}),
        (RejectJob("\u2603"), "REJECT_JOB", {"job_id": "\u2603"}),
        (KillJob(("a", "b")), "KILL_JOB", {"job_ids": ["a", "b"]}),
        (CallMeLater(1e20), "CALL_ME_LATER", {"timestamp": 1e20}),
        (RegisterProfile("w", "p", {"type": "delay", "delay": 0.1, "x": {"y": [1, True, None], "z": -2.5e-300},
                                    "n": float("nan"), "b": False}), "REGISTER_PROFILE",
         {"workload_name": "w", "profile_name": "p", "profile": {"type": "delay", "delay": 0.1,
                                                                  "x": {"y": [1, True, None], "z": -2.5e-300},
                                                                  "n": float("nan"), "b": False}}),
        (RegisterProfile("w", "q", {1: "a", "2": 3}), "REGISTER_PROFILE",
         {"workload_name": "w", "profile_name": "q", "profile": {1: "a", "2": 3}}),
        (NotifyBatsim("registration_finished"), "NOTIFY", {"type": "registration_finished"}),
        (SetJobMetadata("j", 'a "b"'), "SET_JOB_METADATA", {"job_id": "j", "metadata": 'a "b"'}),
    ]
    for now, ts in ((4.5, 0.1 + 0.2), (7, 7), (float("inf"), float("nan")), (1e-7, -0.0)):
        raw = encode(now, [(ts, d) for d, _, _ in cases])
        want = json.dumps({"now": now, "events": [{"timestamp": ts, "type": t, "data": data} for _, t, data in cases]},
                          separators=(",", ":"))
        assert raw == want.encode()
    assert encode(2.0, []) == b'{"now":2.0,"events":[]}'

    class Reject(RejectJob):                        # a subclass of a decision type is that decision
        pass
    assert encode(2.0, [(2.0, Reject("x"))]) == encode(2.0, [(2.0, RejectJob("x"))])
    with pytest.raises(TypeError):
        encode(1.0, [(1.0, "not a decision")])


@pytest.mark.parametrize("subtime,walltime", [(3.25, 7.5), (3, -1), (0.1 + 0.2, 1e-7), (5.0, float("inf"))])
def test_the_sub_jobs_written_as_text_are_their_decisions_bytes(subtime, walltime):
    """A sub-job's REGISTER_JOB and EXECUTE_JOB written as text (`register_job_text`, `execute_job_text`) are the
    bytes `encode` writes for the same decisions, and `decision_of` reads those decisions back."""
    from burstbuffer.batsim.protocol import (EventText, RegisterJob, decision_of, execute_job_text, mapping_text,
                                             register_job_text)
    job_id = 'w"0%é!3'
    job = {"id": job_id, "subtime": subtime, "walltime": walltime, "res": 4, "profile": "data_staging_0"}
    for alloc, mapping, storage in ((ProcSet((0, 3), 8), None, {"source": 96, "destination": 108}),
                                    (ProcSet(5), {0: 1, 2: 3}, None), (ProcSet(7), None, None)):
        decided = [(subtime, RegisterJob(job_id, job)),
                   (subtime, ExecuteJob(job_id, alloc, mapping=mapping, storage_mapping=storage))]
        more = "" if mapping is None else mapping_text("mapping", {str(k): v for k, v in mapping.items()})
        more += "" if storage is None else mapping_text("storage_mapping", storage)
        texts = [register_job_text(job_id, subtime, walltime, 4, "data_staging_0"),
                 execute_job_text(job_id, str(alloc), more)]
        assert all(type(t) is EventText for t in texts)
        assert encode(9.0, [(subtime, t) for t in texts]) == encode(9.0, decided)
        assert [decision_of(t) for t in texts] == [d for _, d in decided]
    with pytest.raises(ValueError):
        decision_of(EventText('"REJECT_JOB","data":{"job_id":"a"}'))


def test_the_outbox_keeps_texts_in_time_order_and_names_the_executed_jobs():
    """`Outbox.add_text` stamps as `add` does (never backwards), `started` lists the EXECUTE_JOBs of both kinds in
    order, and `decisions()` reads the texts back as decisions."""
    from burstbuffer.batsim.loop import Outbox
    from burstbuffer.batsim.protocol import execute_job_text
    out = Outbox(5.0)
    out.add(ExecuteJob("a", ProcSet(1)), 4.0)
    out.add_text(execute_job_text("b", "2-3"), 6.0, "b")
    out.add(CallMeLater(5.5), 5.0)
    assert [ts for ts, _ in out.items] == [5.0, 6.0, 6.0]
    assert out.started == ["a", "b"]
    assert out.decisions() == [(5.0, ExecuteJob("a", ProcSet(1))), (6.0, ExecuteJob("b", ProcSet((2, 3))))]
