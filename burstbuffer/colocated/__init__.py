"""The scheduler inside the embedded simulator's process: `burstbuffer run`'s default link (``--link in-simulator``).

`burstbuffer run` starts one child, ``python -m burstbuffer.colocated``. The child builds the run's scheduler (a
`session.SchedulerSession` from the run's `spec.SchedulerSpec`, which the parent made and checked) and the simulator (`simulator.server.Simulator`), and the simulator's link to the
scheduler is a function call (`call.CallTransport`): the same protocol v4 messages, in the same order, as over a
pipe or Batsim's socket, but no two processes taking turns on the CPU for every message (docs/performance.md,
"The scheduler in the simulator's process"). With ``--link pipes`` the same child runs the scheduler alone and
the simulator in a child of its own over a pipe each way (`pipes.pipes_main`, `pipes.over_pipes`), and reports
to the parent alike (`pipes.ReportingSocket`): on both links the parent runs no user code, and reports whatever
ends the child.

The parent keeps the terminal and the caller's callbacks (`supervisor.Supervisor`). The child reports to it over a pipe,
in `pipelink` frames of pickled tuples:

- ``("progress", done, total)``: jobs started or rejected so far, at most every `PROGRESS_PERIOD` s and last;
- ``("log", level, text)``: a record of the ``burstbuffer`` logger (a warning of the scheduler's);
- ``("alive",)``: at least every `ALIVE_PERIOD` s while messages flow (the parent's silence timeout);
- ``("jobs", columns, rows, run_info, sizes)``: the jobs.csv rows of the jobs whose record changed, at most every
  `MIRROR_PERIOD` s (`reporting.JobsMirror`), with run.json's content once the platform is known: what the parent writes
  itself when the child cannot (killed, stopped, stuck, exited without its outcome);
- ``("stuck", text)``: the policy outlived its limit in code that never returned to Python (`guards.Watchdog`);
  the child exits at once;
- ``("end", Outcome)``: last, once the outputs are written.

What `run` reports is what it reports over pipes: a signal (SIGINT, SIGTERM, SIGHUP; blocked in the child
and looked for at every message) ends the simulation at the next message, the outputs written and unfinished
jobs marked; the policy's faults, protocol violations and the run's wall-clock limit end it likewise, and the
parent raises them; the simulator's own errors are its one-line error in ``simulator.log``, as over pipes.
A SimGrid abort kills the child: the parent then names the jobs being started from a shared page the child
keeps up to date (`frames.StartedPage`). Whenever the child ends without writing its outputs (an abort, SIGKILL, a
SIGSTOP that outlives the silence limit, a policy stuck in C code or calling ``os._exit``), the parent writes
jobs.csv (unfinished jobs marked), run.json and bb_occupancy.csv from the rows the child last reported
(`supervisor.Supervisor.write_seen`): the jobs seen up to at most `MIRROR_PERIOD` s before the end.

The package: `frames` (what both sides share), `reporting` (the child's reports), `call` (the in-simulator
link), `pipes` (the pipes link), `child` (the child's main), `launch` and `supervisor` (the parent's side).
"""
from __future__ import annotations

from .call import CallTransport
from .child import main
from .frames import (ALIVE_PERIOD, MIRROR_PERIOD, PAGE, PROGRESS_PERIOD, REPORT_PERIOD, Outcome, StartedPage,
                     portable)
from .launch import child_command, load_spec, simulator_failed, spec_blob, stop_process
from .pipes import PIPE_ENDPOINT, ReportingSocket, over_pipes, pipes_main
from .reporting import JobsMirror, Relay, Reporter
from .supervisor import Supervisor

__all__ = ["ALIVE_PERIOD", "CallTransport", "JobsMirror", "MIRROR_PERIOD", "Outcome", "PAGE", "PIPE_ENDPOINT",
           "PROGRESS_PERIOD", "REPORT_PERIOD", "Relay", "Reporter", "ReportingSocket", "StartedPage", "Supervisor",
           "child_command", "load_spec", "main", "over_pipes", "pipes_main", "portable", "simulator_failed",
           "spec_blob", "stop_process"]
