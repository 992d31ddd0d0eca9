"""Batsim 4.2.1's tie rules, kept apart from the server loop (docs/batsim-fidelity.md has the derivation).

`CompletionOrder`: in which order the server receives the messages of jobs that ended at the same
simulated date. In Batsim every job actor sends its JOB_COMPLETED message as soon as SimGrid wakes it
up, and SimGrid 3.32 wakes the actors of the activities that finish in one solve step in the order of
the model's started-action set, i.e. the order in which those activities were *started*
(`EngineImpl::wake_all_waiting_actors` -> `Model::extract_done_action`, and `HostL07Model::
update_actions_state` walks `get_started_action_set()` front to back; a new action is appended). The
embedded simulator runs the same activities on the same SimGrid, but its other actors take different
steps, so float rounding of the activities' remaining work can split such a tie over two solve steps
at the *same* clock value, in the opposite order. The rule kept here: among the job messages posted at
the very same clock value, the job whose current activity started first is received first.

`submission_groups`: how Batsim's static job submitter (`job_submitter.cpp`,
`static_job_submitter_process`) splits a workload into JOB_SUBMITTED messages.
"""
from __future__ import annotations

import itertools


class CompletionOrder:
    """Start order of the jobs' current SimGrid activities, and the pick of the next job message.

    `started(job)` is called when a job starts an activity (a parallel task, a transfer or a sleep);
    `pick(posts)` takes the FIFO of ``(post clock [s], job)`` pairs not yet received (oldest first) and
    returns the index of the one the server receives next."""

    def __init__(self):
        self._seq = itertools.count()
        self._key: dict = {}

    def started(self, job) -> None:
        self._key[job] = next(self._seq)

    def pick(self, posts) -> int:
        t0 = posts[0][0]
        best, best_key = 0, self._key.get(posts[0][1], -1)
        for i in range(1, len(posts)):
            t, job = posts[i]
            if t != t0:
                break
            k = self._key.get(job, -1)
            if k < best_key:
                best, best_key = i, k
        self._key.pop(posts[best][1], None)
        return best


def submission_groups(jobs, first_clock: float = 0.0):
    """Batsim's split of static jobs into submission messages.

    `jobs`: the workload's jobs sorted by (subtime, id), each with `subtime` [s]. The submitter keeps
    ``current`` = the clock (a double, widened to long double) after its last wake-up and, for each job in
    turn, if ``subtime > current`` sends the jobs gathered so far and sleeps ``double(subtime - current)``
    (long double difference rounded to double). Returns the list of groups (lists of jobs), each sent in
    one message. `first_clock` is the clock after the submitter's hello message.

    The wake-up clock is modelled as ``current + double(subtime - current)`` rounded to double: SimGrid
    advances its clock by the sums of its solve steps, which this function cannot see (other actors' steps
    in between can change the last bit), so the result is exact only when that sum rounds as one
    addition; the deviation is at most one ulp of the clock per wake-up (docs/batsim-fidelity.md)."""
    import numpy as np

    LD = np.longdouble
    groups: list[list] = []
    cur_group: list = []
    current = LD(first_clock)
    for job in jobs:
        st = LD(job.subtime)
        if st > current:
            if cur_group:
                groups.append(cur_group)
            cur_group = []
            clock = float(current) + float(st - current)
            current = LD(clock)
        cur_group.append(job)
    if cur_group:
        groups.append(cur_group)
    return groups
