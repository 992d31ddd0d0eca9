"""The simulator's event loop: the server actor on the ``master`` host (Batsim's ``server_process``), which
receives its messages one at a time through its mailbox (job completions from the job actors, and the
master host's actors': submissions, CALL_ME_LATER wake-ups, the scheduler's events, kill reports; `masters`),
hands them to their handler and talks to the scheduler.

Batsim's rules kept (its ``server.cpp``, ``protocol.cpp``):
- a message goes to the scheduler only when the scheduler is ready, nothing else waits in the server's
  mailbox, and there is something to say; SIMULATION_ENDS when all static jobs were submitted, every
  submitted job ended, no CALL_ME_LATER is pending and (dynamic jobs) ``registration_finished`` came;
- the reply's events apply at their timestamps (later than the message's `now` if the scheduler says so),
  the scheduler is ready again at the reply's ``now``;
- static jobs are submitted at their ``subtime`` (same-time jobs in one go, ordered by subtime then id
  string); NOTIFY ``no_more_static_job_to_submit`` follows the last submission in a message of its own;
- the scheduler's messages are checked as Batsim checks them; a violation stops the simulation with one
  line (`SimulationError`).
"""
from __future__ import annotations

import sys
import time

from ..jsonvalues import excerpt
from . import jsonnumbers, masters
from .events import occurred
from .execution import absorb, release_workers
from .handlers import HANDLERS, killing_done
from .protocol import dumps, is_number
from .state import SimState, SimulationError, Stopped
from .workload import SimJob as Job

SERVER_NAME = masters.SERVER.encode()

_REPLY_TYPES = frozenset(("EXECUTE_JOB", "REJECT_JOB", "KILL_JOB", "CALL_ME_LATER", "REGISTER_JOB",
                          "REGISTER_PROFILE", "SET_JOB_METADATA", "NOTIFY", "CHANGE_JOB_STATE", "TO_JOB_MSG",
                          "SET_RESOURCE_STATE", "QUERY"))


def plan_submissions(st: SimState) -> None:
    """Start the static jobs' submitters (Batsim's job submitters, `masters.submitter`), one per workload,
    then the external events' (`masters.event_submitter`), one per events file, before the server (Batsim
    creates them in that order)."""
    for name in st.static_names:
        wl = st.workloads[name]
        jobs = sorted(wl.jobs.values(), key=lambda j: (j.subtime, j.id))
        st.to_submit[name] = jobs
        st.submitted_upto[name] = 0
        st.submitters_left += 1
        masters.submitter(st, name, jobs)
    for name, evs in st.event_lists.items():
        st.events_upto[name] = 0
        st.event_submitters_left += 1
        masters.event_submitter(st, name, [e.timestamp for e in evs])


def serve(st: SimState) -> None:
    st.append(0.0, "SIMULATION_BEGINS", simulation_begins(st))
    send(st)
    serve_loop(st)
    release_workers(st)


def serve_loop(st: SimState) -> None:
    while not st.end_ack:
        handle(st, next_message(st))
        if st.sched_ready and not st.end_ack and mailbox_empty(st):
            if st.out:
                send(st)
            elif not st.end_sent and finished(st):
                st.append(st.now, "SIMULATION_ENDS", {})
                st.end_sent = True
                if st.bridge is not None:
                    st.bridge.set_end_sent()
                send(st)
    st.end_clock = st.now


def mailbox_empty(st: SimState) -> bool:
    """No message waits in the server's mailbox, as Batsim's ``mailbox_empty`` (``ipp.cpp``) asks it: the
    mailbox looked up by name (a simulation call: the other actors of the instant run first), then whether
    a put is queued there — SimGrid's C ``sg_mailbox_listen`` does both (`state.SimState.listen`)."""
    empty = not st.listen(SERVER_NAME)
    if st.bridge is not None:
        absorb(st)
    return empty


def finished(st: SimState) -> bool:
    return (st.submitters_left == 0 and st.event_submitters_left == 0
            and (not st.cfg.dynamic_jobs or st.registration_finished)
            and st.nb_completed == st.nb_submitted and st.nb_running == 0 and st.nb_waiters == 0
            and st.nb_killers == 0
            and (st.energy is None or st.energy.nb_switching == 0))


def next_message(st: SimState):
    """Block (in simulated time) until the server's next message (Batsim's ``receive_message``: the
    mailbox looked up by name, then one ``get`` on it), in the order the actors' puts were posted: a job's (the job, or an
    energy switch) or a master-host actor's (a tuple, `masters`). Under the bridged core, what its job actors
    did during the get is applied right after it (`execution.absorb`). A server that would wait for a
    message no actor can send stops the simulation (`deadlock_reason`)."""
    if (st.sched_ready and st.submitters_left == 0 and st.event_submitters_left == 0 and st.nb_waiters == 0 and st.nb_killers == 0
            and st.nb_executing == 0 and mailbox_empty(st)):
        raise SimulationError(deadlock_reason(st))
    payload = st.sg.Mailbox.by_name(masters.SERVER).get()  # Batsim's receive_message: by name, then get
    if st.bridge is not None:
        absorb(st)
    return payload


def deadlock_reason(st: SimState) -> str:
    waiting = [j.id for wl in st.workloads.values() for j in wl.jobs.values() if j.state == "SUBMITTED"]
    parts = [f"deadlock at t={st.now:f}: nothing left to simulate but the simulation is not over"]
    if waiting:
        parts.append(f"{len(waiting)} submitted job(s) never started nor rejected (first: {waiting[0]})")
    if st.cfg.dynamic_jobs and not st.registration_finished:
        parts.append("dynamic jobs are enabled and NOTIFY registration_finished was never sent")
    return "; ".join(parts)


#: a stopping signal's number once one arrived, and whether the server waits for the scheduler's answer
_STOP = {"signum": 0, "waiting": False}


def stop_on_signals() -> None:
    """SIGTERM and SIGHUP end the simulation with its outputs (`Stopped`): at once while the server waits for
    the scheduler's answer, else before it sends its next message (an exception raised in the midst of
    SimGrid's own code would not unwind cleanly). Main thread only (a no-op elsewhere)."""
    import signal  # noqa: PLC0415

    def stop(signum, frame) -> None:
        _STOP["signum"] = signum
        if _STOP["waiting"]:
            _STOP["waiting"] = False
            raise Stopped(signum)

    try:
        for s in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, stop)
    except ValueError:       # not the main thread
        pass


def send(st: SimState) -> None:
    """Send the pending events to the scheduler as one message and handle its answer (`queue_reply`);
    the wait is the transport's (`transport`: SimulationError when no answer can come)."""
    now = st.now
    text = dumps({"now": float(now), "events": st.out})
    st.out = []
    st.sched_ready = False
    st.nb_messages += 1
    if st.cfg.log_messages:
        print(f"[{now:f}] [network/INFO] Sending '{text}'", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    if _STOP["signum"]:
        raise Stopped(_STOP["signum"])
    _STOP["waiting"] = True
    try:
        reply = st.transport.request(text, st.nb_messages)
    finally:
        _STOP["waiting"] = False
    st.sched_time += time.perf_counter() - t0
    if st.cfg.log_messages:
        print(f"[{now:f}] [network/INFO] Received '{reply}'", file=sys.stderr, flush=True)
    # Jobs that ended in the message just sent are forgotten now (Batsim's jobs_to_be_deleted).
    if st.to_delete:
        for job in st.to_delete:
            forget(st, job)
        st.to_delete.clear()
    queue_reply(st, reply)


def queue_reply(st: SimState, reply: str) -> None:
    try:
        doc = jsonnumbers.loads(reply)  # Batsim's numbers: RapidJSON's default parse
    except (ValueError, UnicodeDecodeError):  # json.JSONDecodeError is a ValueError
        raise SimulationError("Invalid JSON message: could not be parsed") from None
    except RecursionError:
        raise SimulationError("Invalid JSON message: nested too deeply") from None
    if not isinstance(doc, dict):
        raise SimulationError("Invalid JSON message: not a JSON object")
    if "now" not in doc or not is_number(doc["now"]):
        raise SimulationError("Invalid JSON message: no numeric 'now' key")
    rnow = float(doc["now"])
    events = doc.get("events")
    if not isinstance(events, list):
        raise SimulationError("Invalid JSON message: 'events' should be an array")
    items = []
    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            raise SimulationError(f"Invalid JSON message: event {i} should be an object")
        ts = ev.get("timestamp")
        if not is_number(ts):
            raise SimulationError(f"Invalid JSON message: event {i} should have a numeric 'timestamp'")
        if ts > rnow:
            raise SimulationError(f"Invalid JSON message: timestamp {ts:g} of event {i} should be lower "
                                  f"than or equal to now={rnow:g}")
        if not isinstance(ev.get("type"), str):
            raise SimulationError(f"Invalid JSON message: event {i} should have a string 'type'")
        if ev["type"] not in _REPLY_TYPES:
            raise SimulationError(f"Invalid JSON message: event {i} has an unknown 'type' value "
                                  f"'{excerpt(ev['type'])}'")
        if "data" not in ev:
            raise SimulationError(f"Invalid JSON message: event {i} should have a 'data' key")
        items.append((float(ts), ("EVENT", i, ev)))
    items.append((rnow, ("READY",)))
    # Batsim's request-reply actor, after the exchange: each event, then SCHED_READY, at its date
    masters.at_times(st, "Scheduler REQ-REP", items)


def forget(st: SimState, job: Job) -> None:
    """Batsim deletes a job once its end was sent, and (without profile reuse) its profile too."""
    job.workload.jobs.pop(job.name, None)
    if st.gc_profiles:
        job.profile.collected = True


def handle(st: SimState, payload) -> None:
    """Handle one message: a job's (the job; with energy, maybe a machine's switch) or a master-host
    actor's (``(kind, ...)``, `masters`)."""
    if type(payload) is not tuple:
        # with energy, the message may stand for a machine's switch, not a job (energy.py)
        if st.energy is None or not st.energy.received(payload):
            if payload.orphan is not None:  # its task left running at its walltime: the actor's end cancels it
                payload.orphan.cancel()
                payload.orphan = None
            on_job_done(st, payload)
        return
    kind = payload[0]
    if kind == "EVENT":
        _, i, ev = payload
        HANDLERS[ev["type"]](st, i, ev["data"])
    elif kind == "READY":
        st.sched_ready = True
        if st.end_sent:
            st.end_ack = True
    elif kind == "SUBMIT":
        _, name, upto = payload
        jobs = st.to_submit[name]
        for job in jobs[st.submitted_upto[name]:upto + 1]:
            submit(st, job)
        st.submitted_upto[name] = upto + 1
    elif kind == "WAKE":
        st.nb_waiters -= 1
        st.append(st.now, "REQUESTED_CALL", {})
    elif kind == "KILLED":
        st.nb_killers -= 1
        killing_done(st, *payload[1:])
    elif kind == "EVENTS":
        _, name, upto = payload
        occurred(st, st.event_lists[name][st.events_upto[name]:upto + 1])
        st.events_upto[name] = upto + 1
    elif kind == "HELLO":
        pass
    elif kind == "EVENTS_BYE":
        st.event_submitters_left -= 1
        if st.event_submitters_left == 0:
            st.append(st.now, "NOTIFY", {"type": "no_more_external_event_to_occur"})
    elif kind == "BYE":
        st.submitters_left -= 1
        st.to_submit.pop(payload[1], None)
        if st.submitters_left == 0:
            st.append(st.now, "NOTIFY", {"type": "no_more_static_job_to_submit"})
    else:  # pragma: no cover
        raise AssertionError(kind)


def submit(st: SimState, job: Job) -> None:
    job.state = "SUBMITTED"
    st.nb_submitted += 1
    st.announce(job)


def on_job_done(st: SimState, job: Job) -> None:
    st.nb_executing -= 1
    job.actor = None
    st.nb_running -= 1
    st.nb_completed += 1
    st.append(st.now, "JOB_COMPLETED", {"job_id": job.id, "job_state": job.state,
                                        "return_code": job.return_code, "alloc": job.alloc_text})
    st.job_ended(job)


def simulation_begins(st: SimState) -> dict:
    c = st.cfg
    m = st.machines
    return {
        "nb_resources": len(m.compute) + len(m.storage),
        "nb_compute_resources": len(m.compute),
        "nb_storage_resources": len(m.storage),
        "allow_compute_sharing": bool(c.compute_sharing),
        "allow_storage_sharing": bool(c.storage_sharing),
        "config": {
            "redis-enabled": False, "redis-hostname": c.redis_hostname, "redis-port": c.redis_port,
            "redis-prefix": c.redis_prefix, "profiles-forwarded-on-submission": bool(c.forward_profiles),
            "dynamic-jobs-enabled": bool(c.dynamic_jobs), "dynamic-jobs-acknowledged": bool(c.ack_dynamic_jobs),
            "profile-reuse-enabled": bool(c.dynamic_jobs and c.profile_reuse), "sched-config": c.sched_config,
            "forward-unknown-events": bool(c.forward_unknown_events and c.events),
        },
        "compute_resources": [x.to_json() for x in m.compute],
        "storage_resources": [x.to_json() for x in m.storage],
        "workloads": {name: st.workloads[name].file for name in st.static_names},
        "profiles": {name: {p.name: p.data for p in st.workloads[name].profiles.values()}
                     for name in st.static_names},
    }
