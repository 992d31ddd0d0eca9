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

Batsim's job submitter (`job_submitter.cpp`) is *not* reproduced bit for bit: why, and the bound on the
difference, are in docs/batsim-fidelity.md §3.
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

    def forget(self, job) -> None:
        """`job` ended without a message of its own (killed): drop its start rank."""
        self._key.pop(job, None)

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

