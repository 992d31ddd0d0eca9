"""External events (Batsim's ``--events FILE``): machines becoming unavailable or available again, and
generic events forwarded to the scheduler (``--forward-unknown-events``), as Batsim 4.2.1 simulates them
(its ``events.cpp``, ``event_submitter.cpp``, ``server.cpp``; docs/batsim.md, "External events").

An events file holds one JSON object per line (empty lines skipped), each with a numeric ``timestamp``
[s] (>= 0) and a string ``type``:

- ``{"timestamp": 10, "type": "machine_unavailable", "resources": "0 5-8"}``: from then on the machines
  (Batsim ids, an interval set) are unavailable; the scheduler receives ``NOTIFY`` with
  ``{"type": "event_machine_unavailable", "resources": "0 5-8"}``.
- ``machine_available``: the same, back to idle (or computing if a job runs there), ``NOTIFY``
  ``event_machine_available``.
- any other type: an error unless ``--forward-unknown-events`` is given; then a *generic* event whose
  whole object (timestamp and type included) is the ``data`` of a ``NOTIFY``.

The events of a file are sorted by timestamp, then machine_available before machine_unavailable before
generic, keeping the file's order otherwise (Batsim's sort is not stable beyond 16 events: it may order
same-time same-type events differently). One event submitter per file (``we0``, ``we1``, ...) sends them to
the server at their dates, grouped by date, as the job submitters do (`masters.event_submitter`); when
all of them have ended, the scheduler receives ``NOTIFY no_more_external_event_to_occur``, and the
simulation does not end before that.

As in Batsim, a machine made unavailable keeps running the jobs it runs, and nothing stops the scheduler
from starting a job on it (it becomes computing); an unavailable machine that finishes its jobs stays
unavailable. Making an unavailable machine unavailable, or an available one available, stops the
simulation (`SimulationError`), as Batsim aborts. A machine id that does not exist is an input error
(Batsim reads out of its machine array).
"""
from __future__ import annotations

import json

from ..errors import InputError
from ..records import Record
from .jsonnumbers import loads
from .protocol import is_number, parse_interval_set
from .state import SimState, SimulationError

#: Batsim's EventType order (events.hpp): same-time events are sorted by it
EVENT_TYPES = ("machine_available", "machine_unavailable", "generic")


class ExternalEvent(Record):
    """One event of an events file: `timestamp` [s], `type` (one of `EVENT_TYPES`), `machines` (a ProcSet
    of Batsim machine ids, the availability events) or `data` (the generic event's whole JSON object)."""

    _fields = ("timestamp", "type", "machines", "data")

    def __init__(self, timestamp: float, type: str, machines=None, data: dict | None = None):
        self.timestamp = timestamp
        self.type = type
        self.machines = machines
        self.data = data


def load_events(path: str, forward_unknown: bool) -> list[ExternalEvent]:
    """The events of file `path` (module docstring), in the order they occur. `forward_unknown`: an event
    of another type is a generic event (else an error). Raises InputError (``PATH: line N: REASON``) for an
    unreadable file, a line that is not a JSON object, a missing or ill-typed field, a negative timestamp,
    a malformed interval set or (without `forward_unknown`) an unknown type."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, "events file", f"cannot be read ({exc.__class__.__name__}: {exc})") from None
    out = []
    for n, line in enumerate(lines, 1):
        if not line:
            continue
        where = f"line {n}"
        try:
            obj = loads(line)
        except (ValueError, RecursionError):
            raise InputError(path, where, "not a JSON object (one event per line)") from None
        if not isinstance(obj, dict):
            raise InputError(path, where, "not a JSON object (one event per line)")
        if not isinstance(obj.get("type"), str):
            raise InputError(path, where, "the event needs a string 'type'")
        ts = obj.get("timestamp")
        if not is_number(ts):
            raise InputError(path, where, "the event needs a numeric 'timestamp'")
        if ts < 0:
            raise InputError(path, where, f"negative timestamp {ts}")
        t = obj["type"]
        if t in ("machine_available", "machine_unavailable"):
            res = obj.get("resources")
            if not isinstance(res, str):
                raise InputError(path, where, f"a {t} event needs a string 'resources' (machine ids, e.g. "
                                              "\"0 5-8\")")
            try:
                machines = parse_interval_set(res)
            except ValueError as exc:
                raise InputError(path, where, str(exc)) from None
            out.append(ExternalEvent(float(ts), t, machines=machines))
        elif forward_unknown:
            out.append(ExternalEvent(float(ts), "generic", data=obj))
        else:
            raise InputError(path, where, f"unknown event type {json.dumps(t)} (Batsim knows machine_available "
                                          "and machine_unavailable; --forward-unknown-events forwards others "
                                          "to the scheduler)")
    out.sort(key=lambda e: (e.timestamp, EVENT_TYPES.index(e.type)))
    return out


def check_machines(path: str, events: list[ExternalEvent], nb_machines: int) -> None:
    """InputError if an availability event of file `path` names a machine id >= `nb_machines`."""
    for e in events:
        if e.machines is not None and len(e.machines) and max(e.machines) >= nb_machines:
            raise InputError(path, f"{e.type} at t={e.timestamp:g}",
                             f"machine {max(e.machines)} does not exist (there are {nb_machines} machines)")


def occurred(st: SimState, events: list[ExternalEvent]) -> None:
    """The server's handling of events that occurred now (Batsim's ``server_on_event_occurred``): machine
    states changed, one NOTIFY each to the scheduler. SimulationError on an inconsistent change."""
    for e in events:
        if e.type == "generic":
            st.append(st.now, "NOTIFY", e.data)
            continue
        if not len(e.machines):
            continue
        now = st.now
        for mid in e.machines:
            ms = st.mstate[mid]
            if e.type == "machine_unavailable":
                if ms.state == "unavailable":
                    raise SimulationError(f"The making of machine {mid} ('{ms.m.name}') unavailable was "
                                          "requested but this machine was already in UNAVAILABLE state.")
                ms.set_state("unavailable", now)
            else:
                if ms.state != "unavailable":
                    raise SimulationError(f"The making of machine {mid} ('{ms.m.name}') available was "
                                          "requested but this machine was not in UNAVAILABLE state (current "
                                          f"state: {ms.state}).")
                ms.set_state("computing" if ms.jobs else "idle", now)
        st.append(now, "NOTIFY", {"type": f"event_{e.type}", "resources": str(e.machines)})
