"""The master host's actors besides the server, as Batsim 4.2.1 runs them: each one sends its messages to
the server's mailbox, looked up by name, by a blocking 1-byte ``put`` (Batsim's ``send_message``, ``ipp.cpp``), after the
sleeps Batsim's code makes, so that the server receives Batsim's messages at Batsim's dates.

- `submitter`: one per static workload (``job_submitter.cpp``, ``static_job_submitter_process``): a hello;
  then, for each job in (subtime, id) order, if its subtime is after the current submission date (the clock
  as a long double), the jobs gathered so far are sent in one message and the actor sleeps
  ``double(subtime - current)``, then takes the clock as the new current date; the last group; a bye.
- `event_submitter`: one per events file (``event_submitter.cpp``, ``static_event_submitter_process``): the
  submitter's steps over the events' timestamps.
- `at_times`: the request-reply actor's part after the exchange with the scheduler (``protocol.cpp``,
  ``send_message_at_time``): for each event of the reply, a sleep until its timestamp if it is ahead of the
  clock, then the message; then SCHED_READY at the reply's ``now``. A killer's report (``killer_process``,
  ``jobs_execution.cpp``) is one message at once.
- `waiter`: a CALL_ME_LATER (``waiter_process``): a sleep of ``target - now`` (at least 1e-5 s), then the
  message, unless the simulation has ended meanwhile.

Under the bridged core they are the bridge's C++ actors (``native/simbridge.cpp``); under the actor core,
Python actors making the same SimGrid calls. A message is a tuple ``(kind, ...)`` the server dispatches on
(`loop.handle`); a job's message is the job itself (`execution`).
"""
from __future__ import annotations

from .state import LD, SimState


#: the server's mailbox (Batsim's "server")
SERVER = "server"


def put(st: SimState, payload) -> None:
    """A Python actor's message to the server, as Batsim's ``send_message`` (``ipp.cpp``) sends it: the
    mailbox looked up by name — a simulation call of its own (SimGrid's ``Mailbox::by_name``), which lets
    the actors of the same instant run before the put — then a blocking 1-byte put."""
    st.sg.Mailbox.by_name(SERVER).put(payload, 1)


def submitter(st: SimState, name: str, jobs: list) -> None:
    """Start the static job submitter of workload `name` on the master host; `jobs` in (subtime, id) order.
    Its group messages are ``("SUBMIT", name, i)``: the jobs gathered so far, up to ``jobs[i]``."""
    hello, bye = ("HELLO", name), ("BYE", name)
    groups = [("SUBMIT", name, i) for i in range(len(jobs))]
    if st.bridge is not None:
        st.bridge.submitter(f"workload_submitter_{name}", [j.subtime for j in jobs], hello, groups, bye)
    else:
        st.sg.Actor.create(f"workload_submitter_{name}", st.master_host, st.guarded, _submitter_body, st,
                           [j.subtime for j in jobs], hello, groups, bye)


def event_submitter(st: SimState, name: str, dates: list[float]) -> None:
    """Start the event submitter of events file `name` (``we0``, ...) on the master host; `dates`: its events'
    timestamps [s], in order. Its messages: ``("HELLO", name)``, ``("EVENTS", name, i)`` (the events gathered
    so far, up to the i-th), ``("EVENTS_BYE", name)``."""
    hello, bye = ("HELLO", name), ("EVENTS_BYE", name)
    groups = [("EVENTS", name, i) for i in range(len(dates))]
    if st.bridge is not None:
        st.bridge.submitter(f"event_submitter_{name}", dates, hello, groups, bye)
    else:
        st.sg.Actor.create(f"event_submitter_{name}", st.master_host, st.guarded, _submitter_body, st,
                           dates, hello, groups, bye, False)


def _submitter_body(st: SimState, subtimes: list[float], hello, groups: list, bye, jobs: bool = True) -> None:
    sg = st.sg
    put(st, hello)
    current = LD(sg.Engine.clock)
    last = -1
    for i, subtime in enumerate(subtimes):
        if LD(subtime) > current:
            if last >= 0:
                put(st, groups[last])
            last = -1
            sg.this_actor.sleep_for(float(LD(subtime) - current))
            current = LD(sg.Engine.clock)
        if i == 0 and jobs and st.energy is not None:
            st.energy.first_job_submitted()  # read by Batsim's submitter at its first job
        last = i
    if last >= 0:
        put(st, groups[last])
    put(st, bye)


def at_times(st: SimState, name: str, items: list) -> None:
    """Start an actor `name` on the master host that sends each ``(date [s], message)`` of `items` in turn,
    after sleeping until its date when that date is ahead of the clock."""
    if st.bridge is not None:
        st.bridge.at_times(name, items)
    else:
        st.sg.Actor.create(name, st.master_host, st.guarded, _at_times_body, st, items)


def _at_times_body(st: SimState, items: list) -> None:
    sg = st.sg
    for when, payload in items:
        now = sg.Engine.clock
        if when > now:
            sg.this_actor.sleep_for(when - now)
        put(st, payload)


def waiter(st: SimState, target: float) -> None:
    """Start a CALL_ME_LATER waiter: ``("WAKE",)`` at `target` [s] (at least 1e-5 s from now), unless the
    simulation has ended by then."""
    payload = ("WAKE",)
    if st.bridge is not None:
        st.bridge.waiter(target, payload)
    else:
        st.sg.Actor.create(f"waiter {target:f}", st.master_host, st.guarded, _waiter_body, st, target, payload)


def _waiter_body(st: SimState, target: float, payload) -> None:
    sg = st.sg
    now = sg.Engine.clock
    if now < target:
        sg.this_actor.sleep_for(max(target - now, 1e-5))
    if not (st.end_sent or st.end_ack):
        put(st, payload)
