"""The pipes link (``run --link pipes``, `burstbuffer.colocated`): the scheduler in the child of `run`, the
simulator in a child of it over a pipe each way (`over_pipes`), reporting to the parent as the in-simulator
child does (`ReportingSocket`, `pipes_main`)."""
from __future__ import annotations

import os
import signal

from .. import pipelink
from ..batsim.loop import BatsimDied
from ..signals import SIGNALS, Interrupted
from .frames import Outcome, StartedPage, portable
from .launch import load_spec, simulator_failed, stop_process
from .reporting import JobsMirror, Reporter


def over_pipes(session, simulator_argv, *, timeout: float, check_protocol: bool | None,
                run_timeout: float | None, report=None, stuck=None) -> int:
    """The scheduler in this process (the pipes link's child, `burstbuffer.colocated`), the simulator in a child
    of it over a pipe each way; returns the messages answered. `simulator_argv(endpoint)`: the simulator's argv;
    `report(sock)`: the socket the session uses (e.g. one that reports after each answer); `stuck(line)`: what
    the watchdog calls before it ends a policy stuck in C code (default: write the outputs). The simulator
    writes to this process's standard output and error (simulator.log). Raises what `run_spec` raises,
    `Interrupted` without a result."""
    msg_in, msg_out = os.pipe()            # the simulator's messages
    ans_in, ans_out = os.pipe()            # the scheduler's answers
    import subprocess  # noqa: PLC0415

    from ..batsim.transport import PipeReplySocket  # noqa: PLC0415
    from ..signals import die_with_parent  # noqa: PLC0415
    sock = PipeReplySocket(msg_in, ans_out, timeout=0.5)
    cmd = simulator_argv(pipelink.endpoint(msg_out, ans_in))
    log_path = session.output / "simulator.log"
    try:
        # die_with_parent: a scheduler killed outright (SIGKILL) never leaves the simulator running
        proc = subprocess.Popen(cmd, preexec_fn=die_with_parent, pass_fds=(msg_out, ans_in))
    except BaseException:
        sock.close()
        raise
    finally:
        os.close(msg_out)              # the simulator's ends: its pipe ends when it does
        os.close(ans_in)
    from ..guards import on_stuck
    on_stuck(stuck or (lambda line: session.finish()))   # a policy stuck in C code: outputs written, exit 124
    try:
        messages = session.loop(report(sock) if report else sock, alive=lambda: proc.poll() is None,
                                timeout=timeout, check_protocol=check_protocol, run_timeout=run_timeout,
                                tables=False)
        rc = proc.wait(timeout=60)
    except BatsimDied as exc:
        rc = proc.poll()
        if rc is None:
            stop_process(proc)
            raise
        signum = -rc if rc < 0 else rc - 128     # killed by a signal, or ended by one (`simulate`'s 128 + N)
        if signum in SIGNALS:      # stopped from outside, as the in-simulator child reports it
            raise Interrupted(signum) from None
        simulator_failed(rc, log_path, session.app.last_started)
        raise exc
    except BaseException:
        stop_process(proc)
        raise
    finally:
        on_stuck(None)
        sock.close()
    if rc != 0:
        simulator_failed(rc, log_path, session.app.last_started)
    return messages


#: the simulator's endpoint in the argv the parent gives a pipes child: replaced by the pipes' ``fd://OUT,IN``
PIPE_ENDPOINT = "fd://PIPES"


class ReportingSocket:
    """A pipes child's link to its simulator (`transport.PipeReplySocket` `sock`) that reports to the parent
    after each answer, as `CallTransport` does: the jobs being started (`page`), the rows of jobs that ended or
    changed (`mirror`), a frame at least every `ALIVE_PERIOD` s (`reporter`)."""

    def __init__(self, sock, app, reporter: Reporter, page: StartedPage, mirror: JobsMirror):
        self.recv, self._send = sock.recv, sock.send
        self.app, self.reporter, self.page, self.mirror = app, reporter, page, mirror
        self._started = None

    def send(self, raw: bytes) -> None:
        self._send(raw)
        started = self.app.last_started
        if started is not self._started:
            self._started = started
            self.page.write(started)
        frame = self.mirror.frame()
        if frame is not None:
            self.reporter.send(*frame)
        self.reporter.tick()


def pipes_main(args: dict, simulator: list[str], reporter: Reporter, page: StartedPage, *, check_protocol: bool,
                timeout, run_timeout) -> int:
    """The child of ``run --link pipes``: the scheduler here, the simulator in a child of this process over a
    pipe each way (`over_pipes`), reporting to the parent as the in-simulator child does. SIGINT, SIGTERM
    and SIGHUP end the run with its outputs written (`signals.interruptible`). Exit status 0, else 1."""
    from ..session import SchedulerSession  # noqa: PLC0415
    from ..signals import interruptible  # noqa: PLC0415

    outcome, session = Outcome(scheduler_cpu=None), None
    argv = simulator[1:] if simulator[:1] == ["--"] else simulator
    try:
        with interruptible():
            signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)
            args["spec"] = load_spec(args["spec"])
            session = SchedulerSession(**args, progress=False, on_progress=reporter.progress)
            mirror = JobsMirror(session)

            def stuck(line: str) -> None:      # the watchdog's thread: outputs written, then the line
                session.finish(tables=False)
                frame = mirror.frame(force=True)
                if frame is not None:
                    reporter.send(*frame)
                reporter.send("stuck", line)

            try:
                outcome.messages = over_pipes(
                    session, lambda endpoint: [endpoint if a == PIPE_ENDPOINT else a for a in argv],
                    timeout=timeout, check_protocol=check_protocol, run_timeout=run_timeout,
                    report=lambda sock: ReportingSocket(sock, session.app, reporter, page, mirror), stuck=stuck)
            finally:
                outcome.messages = outcome.messages or session.messages
                reporter.flush()
                outcome.sizes, outcome.written = session.sizes(), session.finished
    except BaseException as exc:  # noqa: BLE001 (reported to the parent, which raises it)
        outcome.error = portable(exc)
    reporter.send("end", outcome)
    return 1 if outcome.error is not None else 0
