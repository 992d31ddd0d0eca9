"""Protocol-v4 conformance of the scheduler's answers: a checker and a validating transport wrapper.

`ConformanceChecker` follows one simulation from the scheduler's side (every message Batsim sends,
every answer) and raises `ProtocolViolation` on the first answer that breaks a rule Batsim 4 enforces
(docs/protocol.md; Batsim's documentation, page "protocol"; Batsim's own assertions). `CheckedTransport` wraps
a transport (`recv() -> bytes`, `send(bytes)`) and checks each answer *before* it is sent, so a
violation stops the scheduler with the rule it broke instead of Batsim aborting later.

Rules (the `rule` attribute of the violation):

- ``json``            an answer is a JSON object ``{"now": number, "events": [...]}``, each event with a
                      numeric ``timestamp``, a decision ``type`` Batsim knows and a ``data`` object;
- ``one-answer``      exactly one answer per Batsim message (no answer without a message);
- ``timestamp``       event timestamps are non-decreasing and each is ≤ the answer's ``now``;
- ``now``             the answer's ``now`` ≥ the received ``now`` (no decision in the past);
- ``call-me-later``   a CALL_ME_LATER's ``data.timestamp`` is strictly later than the current time
                      (max(received ``now``, the event's timestamp));
- ``alloc``           EXECUTE_JOB's ``alloc`` is a canonical interval set ("0-3 7": sorted, disjoint,
                      non-adjacent intervals, ``a`` not ``a-a``) of existing resources, with exactly ``res``
                      machines — or, with a ``mapping``, executors 0…res−1 each mapped to an index in alloc;
- ``storage-mapping`` every storage label a job's profile uses (``from``/``to`` of ``data_staging``,
                      ``storage`` of ``parallel_homogeneous_pfs``, default ``pfs``) resolves to a storage
                      machine: through ``storage_mapping`` (values must be storage resource ids) or, as Batsim
                      falls back, a storage machine of that name;
- ``profile``         a registered profile has its type's fields (``data_staging``: ``nb_bytes``, ``from``,
                      ``to``; ``parallel_homogeneous``: ``cpu``, ``com``; ``parallel_homogeneous_pfs``:
                      ``bytes_to_read``, ``bytes_to_write``; ``delay``: ``delay``);
- ``register``        REGISTER_JOB / REGISTER_PROFILE only with dynamic jobs enabled; job ids and
                      (workload, profile name) pairs are unique; a registered job names a known profile of its
                      workload and has a positive integer ``res``;
- ``job``             EXECUTE_JOB / REJECT_JOB / KILL_JOB name known jobs; a job is executed or rejected at
                      most once, and only while submitted (not yet started or ended);
- ``registration-finished``  with dynamic jobs enabled, NOTIFY ``registration_finished`` is sent exactly
                      once, after the last registration (checked again when SIMULATION_ENDS is answered).
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

from .protocol import ProtocolError

#: Decision types of protocol v4 (scheduler → Batsim).
DECISION_TYPES = frozenset({
    "EXECUTE_JOB", "REJECT_JOB", "KILL_JOB", "CALL_ME_LATER", "REGISTER_JOB", "REGISTER_PROFILE",
    "NOTIFY", "SET_JOB_METADATA", "SET_RESOURCE_STATE", "CHANGE_JOB_STATE", "QUERY", "ANSWER",
    "TO_JOB_MSG"})

#: Fields each registered profile type must carry (docs/protocol.md).
PROFILE_FIELDS = {
    "delay": ("delay",),
    "parallel_homogeneous": ("cpu", "com"),
    "parallel": ("cpu", "com"),
    "parallel_homogeneous_pfs": ("bytes_to_read", "bytes_to_write"),
    "data_staging": ("nb_bytes", "from", "to"),
}

_INTERVAL = re.compile(r"^(\d+)(?:-(\d+))?$")


class ProtocolViolation(ProtocolError):
    """An answer of the scheduler breaks a protocol-v4 rule. `rule` names it (module docstring)."""

    def __init__(self, rule: str, message: str, exchange: int | None = None):
        self.rule = rule
        where = f" (answer to message {exchange})" if exchange is not None else ""
        super().__init__(f"protocol violation [{rule}]{where}: {message}")
        self._parts = (rule, message, exchange)

    def __reduce__(self):   # pickled by its parts (a run's child reports it to the parent)
        return (type(self), self._parts)


def parse_interval_set(text: str) -> list[tuple[int, int]]:
    """Batsim's interval-set string ("0-3 7") → [(0, 3), (7, 7)], requiring the canonical form.

    Raises ValueError naming what is not canonical (empty, bad token, a-a, a>b, unsorted,
    overlapping or adjacent intervals).
    """
    if not isinstance(text, str) or not text:
        raise ValueError(f"empty or not a string: {text!r}")
    out: list[tuple[int, int]] = []
    for tok in text.split(" "):
        m = _INTERVAL.match(tok)
        if not m:
            raise ValueError(f"bad interval {tok!r} in {text!r}")
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) is not None else a
        if m.group(2) is not None and b <= a:
            raise ValueError(f"interval {tok!r} in {text!r} is not written a-b with a < b")
        if out and a <= out[-1][1] + 1:
            raise ValueError(f"intervals of {text!r} are not sorted, disjoint and non-adjacent")
        out.append((a, b))
    return out


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


class ConformanceChecker:
    """Protocol-v4 rules over one simulation, seen from the scheduler (module docstring).

    Call `received(raw)` with every Batsim message and `answered(raw)` with every answer, in order;
    `answered` raises ProtocolViolation. `exchanges` counts the answers checked.
    """

    def __init__(self) -> None:
        self.exchanges = 0
        self._pending: tuple[float, list[dict]] | None = None   # received (now, events) not yet answered
        self.dynamic_jobs = False
        self.resources: dict[int, str] = {}                      # id → name (compute and storage)
        self.storage: dict[int, str] = {}                        # storage id → name
        self.profiles: dict[tuple[str, str], dict] = {}          # (workload, name) → profile
        self.jobs: dict[str, dict] = {}                          # job id → {"res", "profile", "state"}
        self.registration_finished = 0
        self.registrations = 0
        self.ended = False
        self._begun = False

    # ---------------------------------------------------------------- Batsim → scheduler
    def received(self, raw: bytes | str) -> None:
        """Record a Batsim message (state only: jobs, profiles, resources, configuration)."""
        if self._pending is not None:
            raise ProtocolViolation("one-answer", "a second Batsim message arrived before the first was answered",
                                    self.exchanges)
        try:
            msg = json.loads(raw)
            now = float(msg["now"])
            events = list(msg.get("events") or [])
        except (ValueError, KeyError, TypeError):   # malformed: the decision loop reports it (ProtocolError)
            self._pending = (-math.inf, [])
            return
        for ev in events:
            if not isinstance(ev, dict):
                continue                                # malformed: the decision loop reports it
            etype, data = ev.get("type"), ev.get("data") or {}
            if not isinstance(data, dict):
                continue
            if etype == "SIMULATION_BEGINS":
                try:
                    self._begins(data)
                except (ValueError, TypeError, KeyError, AttributeError):
                    pass                                # malformed: the decision loop reports it
            elif etype == "JOB_SUBMITTED":
                job_id = data.get("job_id")
                job = data.get("job") or {}
                if not isinstance(job_id, str):
                    continue
                known = self.jobs.get(job_id)
                if known is None:
                    self.jobs[job_id] = {"res": job.get("res"), "profile": job.get("profile"), "state": "submitted"}
                    if data.get("profile") is not None and job.get("profile") is not None:
                        self.profiles.setdefault((job_id.split("!", 1)[0], str(job["profile"])), data["profile"])
                elif known["state"] == "registered":   # --acknowledge-dynamic-jobs
                    known["state"] = "submitted"
            elif etype == "JOB_COMPLETED":
                job = self.jobs.get(data.get("job_id"))
                if job is not None:
                    job["state"] = "ended"
            elif etype == "SIMULATION_ENDS":
                self.ended = True
        self._pending = (now, events)

    def _begins(self, data: dict) -> None:
        self._begun = True
        cfg = data.get("config") or {}
        self.dynamic_jobs = bool(cfg.get("dynamic-jobs-enabled", False))
        if "compute_resources" in data or "storage_resources" in data:
            compute = data.get("compute_resources") or []
            storage = data.get("storage_resources") or []
        else:  # older layout: one list, role in properties
            res = data.get("resources_data") or []
            storage = [r for r in res if "storage" in str((r.get("properties") or {}).get("role", ""))]
            compute = [r for r in res if r not in storage]
        self.resources = {int(r["id"]): str(r.get("name", r["id"])) for r in compute + storage}
        self.storage = {int(r["id"]): str(r.get("name", r["id"])) for r in storage}
        for wname, profs in (data.get("profiles") or {}).items():
            for pname, prof in (profs or {}).items():
                self.profiles[(wname, pname)] = prof

    # ---------------------------------------------------------------- scheduler → Batsim
    def answered(self, raw: bytes | str) -> None:
        """Check an answer against the last received message; raise ProtocolViolation."""
        n = self.exchanges
        if self._pending is None:
            raise ProtocolViolation("one-answer", "an answer was sent with no Batsim message to answer", n)
        recv_now, recv_events = self._pending
        self._pending = None
        self.exchanges += 1

        def fail(rule: str, msg: str) -> None:
            raise ProtocolViolation(rule, msg, n)

        try:
            msg = json.loads(raw)
        except ValueError as exc:
            fail("json", f"not JSON ({exc})")
        if not isinstance(msg, dict) or not _num(msg.get("now")) or not isinstance(msg.get("events"), list):
            fail("json", "an answer must be {\"now\": number, \"events\": [...]}")
        now = float(msg["now"])
        if now < recv_now:
            fail("now", f"answer's now {now:g} is earlier than the received now {recv_now:g}")
        last = -math.inf
        for i, ev in enumerate(msg["events"]):
            if not isinstance(ev, dict) or not _num(ev.get("timestamp")) or not isinstance(ev.get("data"), dict):
                fail("json", f"event {i} needs a numeric timestamp and a data object: {ev!r}")
            etype = ev.get("type")
            if etype not in DECISION_TYPES:
                fail("json", f"event {i} has an unknown decision type {etype!r}")
            ts = float(ev["timestamp"])
            if ts > now:
                fail("timestamp", f"event {i} ({etype}) at {ts:g} is later than the answer's now {now:g}")
            if ts < last:
                fail("timestamp", f"event {i} ({etype}) at {ts:g} is earlier than the event before it ({last:g})")
            last = ts
            self._decision(etype, ev["data"], ts, recv_now, i, fail)
        if self.ended or any(e.get("type") == "SIMULATION_ENDS" for e in recv_events):
            self.ended = True
            self.finish()

    def finish(self) -> None:
        """End-of-simulation rules (called when SIMULATION_ENDS is answered)."""
        if self.dynamic_jobs and self.registration_finished != 1:
            raise ProtocolViolation("registration-finished",
                                    f"NOTIFY registration_finished was sent {self.registration_finished} times "
                                    "(dynamic jobs enabled: exactly once)")

    def _decision(self, etype: str, d: dict, ts: float, recv_now: float, i: int, fail) -> None:
        where = f"event {i} ({etype})"
        if etype == "CALL_ME_LATER":
            at = d.get("timestamp")
            current = max(recv_now, ts)
            if not _num(at) or at <= current:
                fail("call-me-later", f"{where} asks for t={at!r}, not strictly later than the current time {current:g}")
        elif etype == "REGISTER_PROFILE":
            self._register_profile(d, where, fail)
        elif etype == "REGISTER_JOB":
            self._register_job(d, where, fail)
        elif etype == "NOTIFY":
            if d.get("type") == "registration_finished":
                if not self.dynamic_jobs:
                    fail("registration-finished", f"{where}: registration_finished without dynamic jobs enabled")
                self.registration_finished += 1
                if self.registration_finished > 1:
                    fail("registration-finished", f"{where}: registration_finished sent a second time")
        elif etype == "EXECUTE_JOB":
            self._execute(d, where, fail)
        elif etype == "REJECT_JOB":
            job = self._job(d.get("job_id"), where, fail)
            if job["state"] not in ("submitted", "registered"):
                fail("job", f"{where}: job {d.get('job_id')!r} cannot be rejected: it is {job['state']}")
            job["state"] = "rejected"
        elif etype == "KILL_JOB":
            ids = d.get("job_ids")
            if not isinstance(ids, list) or not ids:
                fail("json", f"{where}: job_ids must be a non-empty list")
            for j in ids:
                self._job(j, where, fail)

    def _job(self, job_id: Any, where: str, fail) -> dict:
        job = self.jobs.get(job_id) if isinstance(job_id, str) else None
        if job is None:
            fail("job", f"{where}: unknown job {job_id!r} (neither submitted nor registered)")
        return job

    def _register_profile(self, d: dict, where: str, fail) -> None:
        if not self.dynamic_jobs:
            fail("register", f"{where}: dynamic jobs are not enabled (batsim --enable-dynamic-jobs)")
        if self.registration_finished:
            fail("registration-finished", f"{where}: registration after registration_finished")
        w, name, prof = d.get("workload_name"), d.get("profile_name"), d.get("profile")
        if not isinstance(w, str) or not isinstance(name, str) or not isinstance(prof, dict):
            fail("json", f"{where}: needs workload_name, profile_name (strings) and profile (object)")
        if (w, name) in self.profiles:
            fail("register", f"{where}: profile {name!r} of workload {w!r} is already registered")
        ptype = prof.get("type")
        if not isinstance(ptype, str):
            fail("profile", f"{where}: profile {name!r} has no type")
        missing = [f for f in PROFILE_FIELDS.get(ptype, ()) if f not in prof]
        if missing:
            fail("profile", f"{where}: {ptype} profile {name!r} lacks {', '.join(missing)} "
                            f"(has {', '.join(sorted(prof))})")
        if ptype == "data_staging" and not (_num(prof["nb_bytes"]) and prof["nb_bytes"] >= 0):
            fail("profile", f"{where}: data_staging profile {name!r} has nb_bytes={prof['nb_bytes']!r}")
        self.registrations += 1
        self.profiles[(w, name)] = prof

    def _register_job(self, d: dict, where: str, fail) -> None:
        if not self.dynamic_jobs:
            fail("register", f"{where}: dynamic jobs are not enabled (batsim --enable-dynamic-jobs)")
        if self.registration_finished:
            fail("registration-finished", f"{where}: registration after registration_finished")
        job_id, job = d.get("job_id"), d.get("job")
        if not isinstance(job_id, str) or "!" not in job_id or not isinstance(job, dict):
            fail("json", f"{where}: needs job_id 'WORKLOAD!ID' and a job object")
        if job_id in self.jobs:
            fail("register", f"{where}: job id {job_id!r} is already used")
        if "id" in job and job["id"] != job_id:
            fail("register", f"{where}: job.id {job['id']!r} differs from job_id {job_id!r}")
        res = job.get("res")
        if not isinstance(res, int) or isinstance(res, bool) or res <= 0:
            fail("register", f"{where}: job {job_id!r} has res={res!r} (a positive integer is needed)")
        workload = job_id.split("!", 1)[0]
        if (workload, str(job.get("profile"))) not in self.profiles:
            fail("register", f"{where}: job {job_id!r} names profile {job.get('profile')!r}, "
                             f"not registered in workload {workload!r}")
        self.registrations += 1
        self.jobs[job_id] = {"res": res, "profile": job.get("profile"), "state": "registered"}

    def _execute(self, d: dict, where: str, fail) -> None:
        job_id = d.get("job_id")
        job = self._job(job_id, where, fail)
        if job["state"] not in ("submitted", "registered"):
            fail("job", f"{where}: job {job_id!r} cannot start: it is {job['state']}")
        job["state"] = "running"
        try:
            intervals = parse_interval_set(d.get("alloc"))
        except ValueError as exc:
            fail("alloc", f"{where}: job {job_id!r}: alloc is not a canonical interval set: {exc}")
        size = sum(b - a + 1 for a, b in intervals)
        if self.resources:
            bad = [r for a, b in intervals for r in range(a, b + 1) if r not in self.resources]
            if bad:
                fail("alloc", f"{where}: job {job_id!r}: alloc {d['alloc']!r} names unknown resources {bad[:5]}")
        res = job.get("res")
        mapping = d.get("mapping")
        if mapping is None:
            if isinstance(res, int) and size != res:
                fail("alloc", f"{where}: job {job_id!r} requests res={res} machines, alloc {d['alloc']!r} has {size}")
        else:
            try:
                pairs = {int(k): int(v) for k, v in mapping.items()}
            except (AttributeError, TypeError, ValueError):
                fail("alloc", f"{where}: job {job_id!r}: mapping must map executor numbers to alloc indices")
            want = set(range(res)) if isinstance(res, int) else set(range(len(pairs)))
            if set(pairs) != want or any(not 0 <= v < size for v in pairs.values()):
                fail("alloc", f"{where}: job {job_id!r}: mapping must map executors 0..{len(want) - 1} to "
                              f"indices 0..{size - 1} of alloc, got {mapping!r}")
        workload = job_id.split("!", 1)[0]
        prof = self.profiles.get((workload, str(job.get("profile"))))
        sm = d.get("storage_mapping")
        if sm is not None:
            if not isinstance(sm, dict):
                fail("storage-mapping", f"{where}: storage_mapping must be an object")
            for label, mid in sm.items():
                if not isinstance(mid, int) or isinstance(mid, bool) or (self._begun and mid not in self.storage):
                    fail("storage-mapping", f"{where}: job {job_id!r}: storage_mapping[{label!r}] = {mid!r} "
                                            "is not a storage resource id")
        if prof is None:
            return
        labels: list[str] = []
        if prof.get("type") == "data_staging":
            labels = [prof.get("from"), prof.get("to")]
        elif prof.get("type") == "parallel_homogeneous_pfs":
            labels = [prof.get("storage", "pfs")]
        storage_names = set(self.storage.values())
        for label in labels:
            if (sm or {}).get(label) is None and not (self._begun and label in storage_names):
                fail("storage-mapping", f"{where}: job {job_id!r} ({prof.get('type')}) uses storage label {label!r}: "
                                        "its storage_mapping must map it to a storage machine")


class CheckedTransport:
    """A transport that checks every exchange with a ConformanceChecker (answers before they are sent).

    Wraps anything with `recv() -> bytes` and `send(bytes)` (e.g. `ReplySocket`); other attributes are
    the wrapped transport's. Raises ProtocolViolation from `send`.
    """

    def __init__(self, transport, checker: ConformanceChecker | None = None):
        self.transport = transport
        self.checker = checker if checker is not None else ConformanceChecker()

    def recv(self) -> bytes:
        raw = self.transport.recv()
        self.checker.received(raw)
        return raw

    def send(self, raw: bytes) -> None:
        self.checker.answered(raw)
        self.transport.send(raw)

    def __getattr__(self, name: str):
        return getattr(self.transport, name)
