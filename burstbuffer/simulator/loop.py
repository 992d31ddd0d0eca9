"""The simulator's event loop: the server actor on the ``master`` host, which receives its messages one at a
time (job completions from the job actors, and the master host's own: submissions, CALL_ME_LATER wake-ups,
the scheduler's events, kill reports), hands them to their handler and talks to the scheduler.

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

import heapq
import json
import time

from ..jsonvalues import excerpt
from .execution import absorb
from .handlers import HANDLERS, killing_done
from .protocol import dumps, is_number
from .state import SimState, SimulationError
from .workload import SimJob as Job

_REPLY_TYPES = frozenset(("EXECUTE_JOB", "REJECT_JOB", "KILL_JOB", "CALL_ME_LATER", "REGISTER_JOB",
                          "REGISTER_PROFILE", "SET_JOB_METADATA", "NOTIFY", "CHANGE_JOB_STATE", "TO_JOB_MSG",
                          "SET_RESOURCE_STATE", "QUERY"))


def plan_submissions(st: SimState) -> None:
    """Post the static jobs' submissions (Batsim's job submitters): one message per workload and subtime,
    the last one followed by the submitter's goodbye (`handle`)."""
    for name in st.static_names:
        wl = st.workloads[name]
        jobs = sorted(wl.jobs.values(), key=lambda j: (j.subtime, j.id))
        groups: list[list[Job]] = []
        for j in jobs:
            if groups and groups[-1][0].subtime == j.subtime:
                groups[-1].append(j)
            else:
                groups.append([j])
        st.submitters_left += 1
        if not groups:
            st.push(0.0, "BYE", name)
        for i, g in enumerate(groups):
            st.push(g[0].subtime, "SUBMIT", (name, g, i == len(groups) - 1))


def serve(st: SimState) -> None:
    st.append(0.0, "SIMULATION_BEGINS", simulation_begins(st))
    send(st)
    serve_loop(st)


def serve_loop(st: SimState) -> None:
    while not st.end_ack:
        kind, payload = next_message(st)
        handle(st, kind, payload)
        if st.sched_ready and not st.end_ack and mailbox_empty(st):
            if st.out:
                send(st)
            elif not st.end_sent and finished(st):
                st.append(st.now, "SIMULATION_ENDS", {})
                st.end_sent = True
                send(st)
        flush_deferred(st)
    st.end_clock = st.now


def flush_deferred(st: SimState) -> None:
    """Queue the messages posted just after the one handled (a submitter's goodbye follows its last
    submission): after the decision to send, before the scheduler's reply (Batsim's order)."""
    for due, kind, payload in st.deferred:
        st.push(due, kind, payload)
    st.deferred.clear()


def mailbox_empty(st: SimState) -> bool:
    if st.posts:
        return False
    return not (st.internal and st.internal[0][0] <= max(st.now, st.reached))


def finished(st: SimState) -> bool:
    return (st.submitters_left == 0
            and (not st.cfg.dynamic_jobs or st.registration_finished)
            and st.nb_completed == st.nb_submitted and st.nb_running == 0 and st.nb_waiters == 0
            and (st.energy is None or st.energy.nb_switching == 0))


def next_message(st: SimState):
    """Block (in simulated time) until the server's next message, Batsim-style: one at a time, in the
    order they were posted; a job's message travels from its host to ``master`` (SimGrid comm).

    The server's receive on its mailbox, once posted, stays posted until a job message takes it: while the
    server handles a message of its own host (`st.receiving` false), a job actor does not put into it but
    queues its host in `st.senders` (execution.end_job), and the server, when it receives next, starts that
    message's transfer itself (`Comm.sendto_async` from the job's host, 1 byte) — where SimGrid would match
    the waiting put with the new receive: the same transfer at the same date. This spares withdrawing and
    re-posting the receive around each such message, and the job actor's put.

    Under the bridged core the job actors are the bridge's C++ actors: what they did during each of the
    server's simulation calls is applied right after it (`execution.absorb`)."""
    Comm = st.sg.Comm
    bridged = st.bridge is not None
    while True:
        if st.inflight is not None:
            # A job's message is on its way: a job actor's put took the posted receive, or the server
            # started the transfer of a queued one. The server is busy receiving it.
            if st.inflight is True:
                Comm.wait_any([st.get_comm])
            else:
                st.inflight.wait()
            if bridged:
                absorb(st)
            return take_job_message(st)
        now = max(st.now, st.reached)
        if st.internal and st.internal[0][0] <= now and (
                not st.posts or st.posts[0][0] >= st.internal[0][0]):
            st.receiving = False  # job messages posted from now on wait (execution.end_job)
            _, _, kind, payload = heapq.heappop(st.internal)
            return kind, payload
        if st.senders:
            # the oldest waiting job message: its transfer starts as the receive is posted
            st.inflight = Comm.sendto_async(st.senders.popleft(), st.master_host, 1)
            if bridged:
                absorb(st)
            continue
        st.receiving = True
        if st.internal:
            if st.get_comm is None:
                st.get_comm, st.get_data = st.mailbox.get_async()
                if bridged:
                    absorb(st)
            target = st.internal[0][0]
            timed_out = Comm.wait_any_for([st.get_comm], target - st.now) < 0
            if bridged:
                absorb(st)
            if timed_out:
                # the clock may stop one ulp short of `target`: the timer has fired all the same
                st.reached = max(st.reached, target)
                continue
        elif st.nb_executing > 0:
            if st.get_comm is None:
                st.mailbox.get()  # posting and waiting in one simulation call
            else:
                Comm.wait_any([st.get_comm])
            if bridged:
                absorb(st)
        else:
            raise SimulationError(deadlock_reason(st))
        return take_job_message(st)


def take_job_message(st: SimState):
    if st.inflight is True and st.get_comm is not None:
        st.get_data.get()  # one job's message; which job it stands for: Batsim's order (fidelity.py)
        st.get_comm = st.get_data = None
    st.inflight = None
    st.receiving = False
    i = st.completion_order.pick(st.posts)
    job = st.posts[i][1]
    del st.posts[i]
    return "JOB_DONE", job


def deadlock_reason(st: SimState) -> str:
    waiting = [j.id for wl in st.workloads.values() for j in wl.jobs.values() if j.state == "SUBMITTED"]
    parts = [f"deadlock at t={st.now:f}: nothing left to simulate but the simulation is not over"]
    if waiting:
        parts.append(f"{len(waiting)} submitted job(s) never started nor rejected (first: {waiting[0]})")
    if st.cfg.dynamic_jobs and not st.registration_finished:
        parts.append("dynamic jobs are enabled and NOTIFY registration_finished was never sent")
    return "; ".join(parts)


def send(st: SimState) -> None:
    now = st.now
    text = dumps({"now": float(now), "events": st.out})
    st.out = []
    st.sched_ready = False
    st.nb_messages += 1
    t0 = time.perf_counter()
    try:
        monitor = getattr(st, "monitor", None)
        if monitor is not None:
            while monitor.poll(0):            # disconnections before this request do not concern it
                monitor.recv_multipart()
        st.sock.send_string(text)
        reply = st.sock.recv_string() if monitor is None else await_reply(st, monitor)
    except st.zmq.Again:
        raise SimulationError(f"no answer from the scheduler on {st.cfg.socket} within "
                              f"{st.cfg.timeout:g} s") from None
    except st.zmq.ZMQError as exc:
        raise SimulationError(f"ZeroMQ error talking to {st.cfg.socket}: {exc}") from None
    st.sched_time += time.perf_counter() - t0
    flush_deferred(st)
    # Jobs that ended in the message just sent are forgotten now (Batsim's jobs_to_be_deleted).
    if st.to_delete:
        for job in st.to_delete:
            forget(st, job)
        st.to_delete.clear()
    queue_reply(st, reply, now)


def await_reply(st: SimState, monitor) -> str:
    """The scheduler's answer to the request just sent, watching `monitor` (the REQ socket's
    EVENT_DISCONNECTED events): SimulationError once the scheduler has been disconnected for
    `cfg.disconnect_grace` s (its ZeroMQ REQ request is lost, the answer can never come) or after
    `cfg.timeout` s (None: no limit)."""
    zmq = st.zmq
    deadline = None if st.cfg.timeout is None else time.monotonic() + st.cfg.timeout
    lost_at = None
    while True:
        if st.sock.poll(250, zmq.POLLIN):
            return st.sock.recv_string()
        while monitor.poll(0):
            monitor.recv_multipart()
            lost_at = lost_at or time.monotonic()
        now = time.monotonic()
        if lost_at is not None and now - lost_at > st.cfg.disconnect_grace:
            raise SimulationError(f"the scheduler on {st.cfg.socket} disconnected (or stopped answering "
                                  f"ZeroMQ heartbeats) without answering message {st.nb_messages}")
        if deadline is not None and now > deadline:
            raise zmq.Again()


def queue_reply(st: SimState, reply: str, sent_at: float) -> None:
    try:
        doc = json.loads(reply)
    except (json.JSONDecodeError, UnicodeDecodeError):
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
    due = sent_at
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
        due = max(due, float(ts))
        st.push(due, "EVENT", (i, ev))
    st.push(max(due, rnow), "READY", None)


def forget(st: SimState, job: Job) -> None:
    """Batsim deletes a job once its end was sent, and (without profile reuse) its profile too."""
    job.workload.jobs.pop(job.name, None)
    st.completion_order.forget(job)
    if st.gc_profiles:
        job.profile.collected = True


def handle(st: SimState, kind: str, payload) -> None:
    if kind == "JOB_DONE":
        # with energy, the message may stand for a machine's switch, not a job (energy.py)
        if st.energy is None or not st.energy.received(payload):
            on_job_done(st, payload)
        return
    if kind == "SUBMIT" and st.energy is not None:
        st.energy.first_job_submitted()  # Batsim's submitter reads it before sending its message
    # Every other message comes, in Batsim, from an actor on the master host (submitter, waiter, killer,
    # REQ-REP): a 1-byte transfer master -> master, 1e-10 s on SimGrid's loopback. Spend the same time.
    # Measured once as a real comm, then spent as a sleep of the same duration (much cheaper).
    if st.msg_cost is None:
        t0 = st.sg.Engine.clock
        st.sg.Comm.sendto(st.master_host, st.master_host, 1)
        st.msg_cost = st.sg.Engine.clock - t0
    else:
        st.sg.this_actor.sleep_for(st.msg_cost)
    if st.bridge is not None:
        absorb(st)   # what the bridged core's job actors did meanwhile
    if kind == "SUBMIT":
        name, group, last = payload
        for job in group:
            submit(st, job)
        if last:
            st.deferred.append((st.now, "BYE", name))
    elif kind == "BYE":
        st.submitters_left -= 1
        if st.submitters_left == 0:
            st.append(st.now, "NOTIFY", {"type": "no_more_static_job_to_submit"})
    elif kind == "WAKE":
        st.nb_waiters -= 1
        st.append(st.now, "REQUESTED_CALL", {})
    elif kind == "READY":
        st.sched_ready = True
        if st.end_sent:
            st.end_ack = True
    elif kind == "KILLED":
        killing_done(st, *payload)
    elif kind == "EVENT":
        i, ev = payload
        HANDLERS[ev["type"]](st, i, ev["data"])
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
                                        "return_code": job.return_code, "alloc": str(job.allocation)})
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
            "redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379,
            "redis-prefix": "default", "profiles-forwarded-on-submission": bool(c.forward_profiles),
            "dynamic-jobs-enabled": bool(c.dynamic_jobs), "dynamic-jobs-acknowledged": bool(c.ack_dynamic_jobs),
            "profile-reuse-enabled": bool(c.profile_reuse), "sched-config": c.sched_config,
            "forward-unknown-events": False,
        },
        "compute_resources": [x.to_json() for x in m.compute],
        "storage_resources": [x.to_json() for x in m.storage],
        "workloads": {name: st.workloads[name].file for name in st.static_names},
        "profiles": {name: {p.name: p.data for p in st.workloads[name].profiles.values()}
                     for name in st.static_names},
    }
