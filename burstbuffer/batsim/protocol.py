"""Batsim protocol v4: typed events (Batsim → scheduler) and decisions (scheduler → Batsim).

Every message is ``{"now": float, "events": [{"timestamp": float, "type": str, "data": {...}}]}``
(docs/protocol.md; Batsim's documentation, page "protocol"). This module only converts between bytes and
typed objects; it knows no policy and no socket.
"""
from __future__ import annotations

import json
import re
from json.encoder import encode_basestring_ascii
from dataclasses import dataclass, field
from typing import Any, Union

from procset import ProcSet

from ..jsonvalues import excerpt


class ProtocolError(Exception):
    """A message that breaks protocol v4 (malformed JSON, missing field, bad timestamp)."""


# ---------------------------------------------------------------- events: Batsim → scheduler
@dataclass
class SimulationBegins:
    data: dict


@dataclass
class JobSubmitted:
    """`job` is Batsim's job dict (id, subtime, walltime, res, profile, …); `profile` the
    profile dict when Batsim forwards it."""

    job_id: str
    job: dict
    profile: dict | None = None


#: The final states a JOB_COMPLETED names (Batsim's documentation, page "protocol").
JOB_STATES = frozenset({"COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED",
                        "COMPLETED_KILLED", "REJECTED"})


@dataclass
class JobCompleted:
    """`job_state` ∈ `JOB_STATES`; `alloc` its machines as Batsim's interval set ("0-3 7"), "" if not given."""

    job_id: str
    job_state: str
    return_code: int = 0
    alloc: str = ""


@dataclass
class JobKilled:
    job_ids: list[str]


@dataclass
class RequestedCall:
    pass


@dataclass
class Notify:
    type: str
    data: dict = field(default_factory=dict)


@dataclass
class ResourceStateChanged:
    resources: str
    state: str


@dataclass
class SimulationEnds:
    pass


@dataclass
class UnknownEvent:
    type: str
    data: dict


Event = Union[SimulationBegins, JobSubmitted, JobCompleted, JobKilled, RequestedCall, Notify,
              ResourceStateChanged, SimulationEnds, UnknownEvent]


# ---------------------------------------------------------------- decisions: scheduler → Batsim
@dataclass
class ExecuteJob:
    """Start `job_id` on the machines `alloc` (Batsim ids). `storage_mapping` maps a profile's
    storage label to a storage machine id (mandatory for data_staging profiles)."""

    job_id: str
    alloc: ProcSet
    mapping: dict[int, int] | None = None
    storage_mapping: dict[str, int] | None = None


@dataclass
class RejectJob:
    job_id: str


@dataclass
class KillJob:
    job_ids: list[str]


@dataclass
class CallMeLater:
    """Ask Batsim for a REQUESTED_CALL at `at` (strictly later than the current time)."""

    at: float


@dataclass
class RegisterProfile:
    workload_name: str
    profile_name: str
    profile: dict


@dataclass
class RegisterJob:
    job_id: str
    job: dict


@dataclass
class NotifyBatsim:
    """NOTIFY from the scheduler, e.g. ``registration_finished``."""

    type: str


@dataclass
class SetJobMetadata:
    job_id: str
    metadata: str


Decision = Union[ExecuteJob, RejectJob, KillJob, CallMeLater, RegisterProfile, RegisterJob,
                 NotifyBatsim, SetJobMetadata]


#: Largest simulated time accepted from Batsim [s]. Batsim runs any finite date (its own test workload
#: test_long_workload.json submits jobs at 1e16 and 1e17 s), so the bound is far beyond any workload; it
#: keeps sums and products of times (a job's end, its area, the metrics' totals) finite. A time that is
#: negative, NaN, infinite or above it can only come from a malformed message (ProtocolError).
MAX_TIME = 1e200


def _quoted(x: Any, limit: int) -> str:
    """`x` for an error message: a string's repr (quoted), anything else's, at most about `limit` characters
    (`excerpt`), cut before its repr is made."""
    return excerpt(repr(x[:limit + 1]) if isinstance(x, (str, bytes)) else x, limit)


def _time(x: Any, what: str) -> float:
    if type(x) is not int and type(x) is not float:   # a string ("3"), a bool, null: not a JSON number
        raise TypeError(f"{what} {_quoted(x, 60)} is not a number")
    t = float(x)
    if not 0.0 <= t <= MAX_TIME:          # also rejects NaN
        raise ValueError(f"{what} {_quoted(x, 60)} is not a time in [0, {MAX_TIME:g}] s")
    return t


def _job_id(x: Any) -> str:
    if not isinstance(x, str) or not x:
        raise TypeError(f"job_id {_quoted(x, 100)} is not a non-empty string")
    return x


def _int(x: Any, what: str) -> int:
    if type(x) is not int:
        raise TypeError(f"{what} {_quoted(x, 60)} is not an integer")
    return x


#: Batsim's interval set of machine ids ("0-3 7 9-12"), ids of at most 18 digits
_ALLOC = re.compile(r"\d{1,18}(?:-\d{1,18})?(?: \d{1,18}(?:-\d{1,18})?)*")


def _alloc(x: Any) -> str:
    if not isinstance(x, str) or (x and _ALLOC.fullmatch(x) is None):
        raise ValueError(f"alloc {_quoted(x, 60)} is not an interval set of machine ids (\"0-3 7\")")
    return x


def _job_completed(data: dict) -> JobCompleted:
    state = data["job_state"]
    if state not in JOB_STATES:                 # also a value that is not a string
        raise ValueError(f"job_state {_quoted(state, 60)} is not one of {', '.join(sorted(JOB_STATES))}")
    return JobCompleted(_job_id(data["job_id"]), state, _int(data.get("return_code", 0), "return_code"),
                        _alloc(data.get("alloc", "")))


def _job_submitted(data: dict) -> JobSubmitted:
    job_id = _job_id(data["job_id"])
    job = data.get("job") or {"id": job_id}
    profile = data.get("profile")
    if not isinstance(job, dict) or not (profile is None or isinstance(profile, dict)):
        raise TypeError("JOB_SUBMITTED job/profile is not an object")
    if "id" in job and job["id"] != job_id:
        raise ValueError(f"JOB_SUBMITTED job.id {_quoted(job['id'], 100)} differs from job_id {_quoted(job_id, 100)}")
    return JobSubmitted(job_id, job, profile)


def _event(etype: str, data: dict) -> Event:
    if not isinstance(data, dict):
        raise TypeError(f"{etype} data is not an object")
    if etype == "JOB_COMPLETED":              # the most frequent (the io-aware model's sub-jobs)
        return _job_completed(data)
    if etype == "SIMULATION_BEGINS":
        return SimulationBegins(data)
    if etype == "JOB_SUBMITTED":
        return _job_submitted(data)
    if etype == "JOB_KILLED":
        ids = data.get("job_ids", [])
        if not isinstance(ids, list):
            raise TypeError("JOB_KILLED job_ids is not a list")
        return JobKilled([_job_id(i) for i in ids])
    if etype == "REQUESTED_CALL":
        return RequestedCall()
    if etype == "NOTIFY":
        return Notify(str(data["type"]), data)
    if etype == "RESOURCE_STATE_CHANGED":
        return ResourceStateChanged(str(data.get("resources", "")), str(data.get("state", "")))
    if etype == "SIMULATION_ENDS":
        return SimulationEnds()
    return UnknownEvent(str(etype), data)


#: `json.loads` without its checks of the argument's type (a str here)
_loads = json.JSONDecoder().decode


def decode(raw: bytes | str) -> tuple[float, list[tuple[float, Event]]]:
    """Parse a Batsim → scheduler message into (now, [(timestamp, event), …]).

    Bytes are UTF-8 (as Batsim sends). Raises ProtocolError on malformed JSON or UTF-8, a missing field or a
    field of the wrong type, and on a `now` or timestamp that is not a time in [0, MAX_TIME] s.
    """
    try:
        # decoded here: `json.loads` of bytes first guesses their encoding among UTF-8, -16 and -32
        msg = _loads(raw.decode() if isinstance(raw, (bytes, bytearray)) else raw)
        now = msg["now"]
        if type(now) is not float or not 0.0 <= now <= MAX_TIME:    # a float in range is taken as it is
            now = _time(now, "now")
        out = []
        for ev in msg["events"]:
            ts = ev["timestamp"]
            if type(ts) is not float or not 0.0 <= ts <= MAX_TIME:
                ts = _time(ts, "timestamp")
            out.append((ts, _event(ev["type"], ev.get("data") or {})))
        return now, out
    except RecursionError:
        raise ProtocolError(f"malformed Batsim message (nested too deeply): {excerpt(raw, 200)}") from None
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
        raise ProtocolError(f"malformed Batsim message ({exc.__class__.__name__}: {excerpt(str(exc), 200)}): "
                            f"{excerpt(raw, 200)}") from None


def alloc_text(procs: ProcSet) -> str:
    """``str(procs)`` (Batsim's interval set: ``"0-3 8 12-15"``), written from its intervals: 4-6 times cheaper
    than ProcSet's own formatting, which goes through a format specification per interval. Anything else: its
    ``str``."""
    if type(procs) is not ProcSet:
        return str(procs)
    return " ".join([f"{a}-{b}" if a != b else str(a) for a, b in procs.intervals()])


#: the JSON encoder of the answers (`json.dumps` with options builds one per call), for the values `_json` does
#: not write itself
_ENCODER = json.JSONEncoder(separators=(",", ":"))
_value = _ENCODER.encode
#: a JSON string (the encoder's own C function: the same escapes as `_ENCODER`)
_string = encode_basestring_ascii
_INF = float("inf")


def _json(v: Any) -> str:
    """`v` as `_ENCODER` writes it: strings, finite floats, ints and objects of such values with string keys (the
    answers' job descriptions, profiles, mappings) written here; anything else by `_ENCODER` (each of its calls
    costs more than a small object written here)."""
    t = type(v)
    if t is str:
        return _string(v)
    if t is float:
        return repr(v) if -_INF < v < _INF else _value(v)
    if t is int:
        return repr(v)
    if t is dict:
        parts = []
        for k, x in v.items():
            if type(k) is not str:
                return _value(v)
            parts.append(f"{_string(k)}:{_json(x)}")
        return "{" + ",".join(parts) + "}"
    return _value(v)


class EventText(str):
    """One decision already written as text: its event's text after ``"type":`` (the type, then its data), as
    `encode` writes it; `encode` puts it into the answer as it is (a job model's sub-jobs, written once, without a
    decision object). `decision_of` reads it back as a decision."""

    __slots__ = ()


def register_job_text(job_id: str, subtime: float, walltime: float, res: int, profile: str) -> EventText:
    """The event text of ``RegisterJob(job_id, {"id": job_id, "subtime": subtime, "walltime": walltime, "res": res,
    "profile": profile})``: the same bytes as `encode` writes for that decision (times in seconds, walltime −1
    for none)."""
    s = _string(job_id)
    return EventText(f'"REGISTER_JOB","data":{{"job_id":{s},"job":{{"id":{s},"subtime":{_json(subtime)},'
                     f'"walltime":{_json(walltime)},"res":{_json(res)},"profile":{_string(profile)}}}}}')


def execute_job_text(job_id: str, alloc: str, more: str = "") -> EventText:
    """The event text of an EXECUTE_JOB of `job_id` on `alloc` (its machines as `alloc_text` writes them); `more`:
    the text of its optional fields, each as ``,"name":value`` (`mapping_text`)."""
    return EventText(f'"EXECUTE_JOB","data":{{"job_id":{_string(job_id)},"alloc":{_string(alloc)}{more}}}')


def mapping_text(name: str, mapping: dict) -> str:
    """An optional field of EXECUTE_JOB (``mapping``, ``storage_mapping``) as `execute_job_text` takes it."""
    return f',"{name}":{_json(mapping)}'


def _execute_job(d: ExecuteJob) -> str:
    more = ""
    if d.mapping is not None:
        more = mapping_text("mapping", {str(k): v for k, v in d.mapping.items()})
    if d.storage_mapping is not None:
        more += mapping_text("storage_mapping", d.storage_mapping)
    return execute_job_text(d.job_id, alloc_text(d.alloc), more)


#: decision type → its event's text after ``"type":`` (the type, then its data)
_EVENT_TEXT = {
    RegisterJob: lambda d: f'"REGISTER_JOB","data":{{"job_id":{_string(d.job_id)},"job":{_json(d.job)}}}',
    ExecuteJob: _execute_job,
    RejectJob: lambda d: f'"REJECT_JOB","data":{{"job_id":{_string(d.job_id)}}}',
    KillJob: lambda d: f'"KILL_JOB","data":{{"job_ids":{_json(list(d.job_ids))}}}',
    CallMeLater: lambda d: f'"CALL_ME_LATER","data":{{"timestamp":{_json(d.at)}}}',
    RegisterProfile: lambda d: (f'"REGISTER_PROFILE","data":{{"workload_name":{_string(d.workload_name)},'
                                f'"profile_name":{_string(d.profile_name)},"profile":{_json(d.profile)}}}'),
    NotifyBatsim: lambda d: f'"NOTIFY","data":{{"type":{_string(d.type)}}}',
    SetJobMetadata: lambda d: (f'"SET_JOB_METADATA","data":{{"job_id":{_string(d.job_id)},'
                               f'"metadata":{_string(d.metadata)}}}'),
}


def _event_text(d: Decision) -> str:
    text = _EVENT_TEXT.get(type(d))
    if text is None:
        if type(d) is EventText:
            return d
        text = next((f for cls, f in _EVENT_TEXT.items() if isinstance(d, cls)), None)   # a decision's subclass
        if text is None:
            raise TypeError(f"not a decision: {d!r}")
    return text(d)


def encode(now: float, decisions: list[tuple[float, Decision | EventText]]) -> bytes:
    """Serialise a scheduler → Batsim answer: compact JSON (no spaces, ASCII), the bytes `json.dumps` with
    ``separators=(",", ":")`` gives for ``{"now": now, "events": [{"timestamp": ts, "type": …, "data": {…}}]}``,
    written as text around the decisions' nested objects (no dict per decision); an `EventText` is put in as it
    is. Callers guarantee the ordering rules (see `burstbuffer.batsim.loop.Outbox`). TypeError for an object
    that is not a decision."""
    parts = []
    last = stamp = None
    for ts, d in decisions:
        if ts is not last:                     # most events of an answer share one time object: written once
            last, stamp = ts, _json(ts)
        parts.append(f'{{"timestamp":{stamp},"type":{d if type(d) is EventText else _event_text(d)}}}')
    return f'{{"now":{_json(now)},"events":[{",".join(parts)}]}}'.encode()


#: an answer's event type → the decision it reads back as (`decision_of`), from its ``data``
_DECISION_OF = {
    "REGISTER_JOB": lambda x: RegisterJob(x["job_id"], x["job"]),
    "EXECUTE_JOB": lambda x: ExecuteJob(x["job_id"], ProcSet.from_str(x["alloc"]),
                                        {int(k): v for k, v in x["mapping"].items()} if "mapping" in x else None,
                                        x.get("storage_mapping")),
}


def decision_of(text: EventText) -> Decision:
    """The decision an `EventText` writes (REGISTER_JOB, EXECUTE_JOB), for a reader of decisions rather than of
    bytes (pybatsim's adapter, tests). ValueError for another event type."""
    event = json.loads(f'{{"type":{text}}}')
    read = _DECISION_OF.get(event["type"])
    if read is None:
        raise ValueError(f"not a sub-job's event text: {excerpt(text, 100)}")
    return read(event["data"])
