"""The scheduler inside the embedded simulator's process: `burstbuffer run`'s default link (``--link in-simulator``).

`burstbuffer run` starts one child, ``python -m burstbuffer.colocated``. The child builds the run's scheduler (a
`session.SchedulerSession` from the run's `spec.SchedulerSpec`, which the parent made and checked) and the simulator (`simulator.server.Simulator`), and the simulator's link to the
scheduler is a function call (`CallTransport`): the same protocol v4 messages, in the same order, as over a
pipe or Batsim's socket, but no two processes taking turns on the CPU for every message (docs/performance.md,
"The scheduler in the simulator's process"). With ``--link pipes`` the same child runs the scheduler alone and
the simulator in a child of its own over a pipe each way (`_pipes_main`, `over_pipes`), and reports
to the parent alike (`ReportingSocket`): on both links the parent runs no user code, and reports whatever
ends the child.

The parent keeps the terminal and the caller's callbacks (`Supervisor`). The child reports to it over a pipe,
in `pipelink` frames of pickled tuples:

- ``("progress", done, total)``: jobs started or rejected so far, at most every `PROGRESS_PERIOD` s and last;
- ``("log", level, text)``: a record of the ``burstbuffer`` logger (a warning of the scheduler's);
- ``("alive",)``: at least every `ALIVE_PERIOD` s while messages flow (the parent's silence timeout);
- ``("jobs", columns, rows, run_info, sizes)``: the jobs.csv rows of the jobs whose record changed, at most every
  `MIRROR_PERIOD` s (`JobsMirror`), with run.json's content once the platform is known: what the parent writes
  itself when the child cannot (killed, stopped, stuck, exited without its outcome);
- ``("stuck", text)``: the policy outlived its limit in code that never returned to Python (`guards.Watchdog`);
  the child exits at once;
- ``("end", Outcome)``: last, once the outputs are written.

What `run` reports is what it reports over pipes: a signal (SIGINT, SIGTERM, SIGHUP; blocked in the child
and looked for at every message) ends the simulation at the next message, the outputs written and unfinished
jobs marked; the policy's faults, protocol violations and the run's wall-clock limit end it likewise, and the
parent raises them; the simulator's own errors are its one-line error in ``simulator.log``, as over pipes.
A SimGrid abort kills the child: the parent then names the jobs being started from a shared page the child
keeps up to date (`StartedPage`). Whenever the child ends without writing its outputs (an abort, SIGKILL, a
SIGSTOP that outlives the silence limit, a policy stuck in C code or calling ``os._exit``), the parent writes
jobs.csv (unfinished jobs marked), run.json and bb_occupancy.csv from the rows the child last reported
(`Supervisor.write_seen`): the jobs seen up to at most `MIRROR_PERIOD` s before the end.
"""
from __future__ import annotations

import argparse
import base64
import itertools
import logging
import mmap
import os
import pickle
import signal
import sys
import time
from dataclasses import dataclass

from . import pipelink
from .batsim.loop import BatsimDied, Exchange, SimulatorTimedOut, run_timed_out
from .signals import SIGNALS, Interrupted

#: the least time between two progress frames [s]
PROGRESS_PERIOD = 0.1
#: the most time between two frames while messages flow [s]
ALIVE_PERIOD = 1.0
#: the size of the shared page with the jobs being started [bytes]
PAGE = 4096
#: the most time between two reports of every job's row while messages flow [s]
MIRROR_PERIOD = 0.5
#: the most time between a job's submission, start or end and its row's report to the parent [s]
REPORT_PERIOD = 0.01


@dataclass
class Outcome:
    """What the child reports last: `messages` answered, `sizes` (compute nodes, total BB [bytes]) of the platform
    (None, None before SIMULATION_BEGINS; the parent summarises jobs.csv with them), `error` (the exception that
    ended the simulation early, None when it ended), `scheduler_cpu` [s] (the CPU time spent answering messages:
    the scheduler's own cost), `written` (jobs.csv was written)."""
    messages: int = 0
    sizes: tuple = (None, None)
    error: BaseException | None = None
    scheduler_cpu: float = 0.0
    written: bool = False


class StartedPage:
    """The job ids of the scheduler's last EXECUTE_JOBs, on a page of shared memory (a memfd): the child
    writes it after each answer that starts jobs, the parent reads it after a SimGrid abort (`read`)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.map: mmap.mmap | None = None

    @classmethod
    def create(cls) -> StartedPage:
        fd = os.memfd_create("burstbuffer-started", 0)
        os.ftruncate(fd, PAGE)
        return cls(fd)

    def write(self, ids: list[str]) -> None:
        if self.map is None:
            self.map = mmap.mmap(self.fd, PAGE)
        data = ", ".join(ids).encode()
        if len(data) > PAGE - 4:                # the ids that fit whole (none if the first does not)
            data = data[:max(0, data.rfind(b", ", 0, PAGE - 4))]
        self.map[:4 + len(data)] = len(data).to_bytes(4, "little") + data

    def read(self) -> list[str]:
        raw = os.pread(self.fd, PAGE, 0)
        n = int.from_bytes(raw[:4], "little")
        return raw[4:4 + n].decode(errors="replace").split(", ") if n else []

    def close(self) -> None:
        if self.map is not None:
            self.map.close()
        os.close(self.fd)


def portable(exc: BaseException) -> BaseException:
    """`exc` if it survives pickling, else a BatsimDied naming it (the parent re-raises what it receives)."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001
        return BatsimDied(f"{type(exc).__name__}: {exc}")


class Reporter:
    """The child's side of the report pipe (module docstring)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.sent_at = time.monotonic()
        self.progress_at = 0.0
        self.pending: tuple | None = None

    def send(self, *frame) -> None:
        try:
            pipelink.write_frame(self.fd, pickle.dumps(frame))
        except BrokenPipeError:          # the parent is gone: the run's outputs are still written
            pass
        self.sent_at = time.monotonic()

    def progress(self, done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - self.progress_at >= PROGRESS_PERIOD:
            self.progress_at = now
            self.pending = None
            self.send("progress", done, total)
        else:
            self.pending = ("progress", done, total)

    def tick(self) -> None:
        """At every message: a frame if none was sent for `ALIVE_PERIOD` s."""
        if time.monotonic() - self.sent_at >= ALIVE_PERIOD:
            if self.pending is not None:
                self.send(*self.pending)
                self.pending = None
            else:
                self.send("alive")

    def flush(self) -> None:
        if self.pending is not None:
            self.send(*self.pending)
            self.pending = None


class JobsMirror:
    """The child's side of the parent's copy of jobs.csv: `frame()` is the ``jobs`` frame of the records of
    `session`'s application changed since the last one, or None if nothing changed. Every record is looked at
    once the last full frame is `MIRROR_PERIOD` s old (or with `force`); in between, at most every
    `REPORT_PERIOD` s, only the jobs submitted, started (`SchedulerApp.last_started`) or ended
    (`SchedulerApp.ended_ids`) since: the parent has every job seen, and every finished one, within
    `REPORT_PERIOD` s, whenever the child dies."""

    def __init__(self, session):
        self.session, self.app = session, session.app
        self.seen: dict[str, tuple] = {}
        self.at = 0.0
        self.info = None
        self.n_ended = self.n_records = 0     # app.ended_ids and app.records already reported
        self.started = None                   # app.last_started already reported
        self.partial_at = 0.0

    def _changed(self, jid: str, rec, rows: list) -> None:
        key = (rec.start, rec.end, rec.state, rec.reason, rec.wait_reason, rec.nodes_start, rec.nodes_end,
               rec.staged_at)
        if self.seen.get(jid) != key:
            self.seen[jid] = key
            rows.append(((rec.job.subtime, jid), self.app.job_row(rec, True)))

    def frame(self, force: bool = False) -> tuple | None:
        now = time.monotonic()
        app, rows = self.app, []
        ended = app.ended_ids
        records = app.records
        if not force and now - self.at < MIRROR_PERIOD:
            started = app.last_started
            if self.info is None or now - self.partial_at < REPORT_PERIOD or (
                    len(ended) == self.n_ended and len(records) == self.n_records and started is self.started):
                return None
            self.partial_at = now
            for jid in ended[self.n_ended:]:
                self._changed(jid, records[jid], rows)
            for jid in itertools.islice(records, self.n_records, None):
                self._changed(jid, records[jid], rows)
            if started is not self.started:
                for jid in started:
                    if jid in records:
                        self._changed(jid, records[jid], rows)
            self.n_ended, self.n_records, self.started = len(ended), len(records), started
            return ("jobs", app.jobs_csv_columns(), rows, None, self.session.sizes()) if rows else None
        self.at = now
        self.n_ended, self.n_records, self.started = len(ended), len(records), app.last_started
        for jid, rec in app.records.items():
            self._changed(jid, rec, rows)
        info = None
        if self.info is None and app.platform is not None:
            from .metrics.runinfo import run_info  # noqa: PLC0415
            info = self.info = run_info(app.platform, self.session.spec.text, self.session.spec.job_model)
        if not rows and info is None:
            return None
        return ("jobs", app.jobs_csv_columns(), rows, info, self.session.sizes())


class _Relay(logging.Handler):
    """The ``burstbuffer`` logger's records, sent to the parent."""

    def __init__(self, reporter: Reporter):
        super().__init__()
        self.reporter = reporter

    def emit(self, record: logging.LogRecord) -> None:
        self.reporter.send("log", record.levelno, record.getMessage())


class CallTransport:
    """The simulator's link to a scheduler in its own process (the contract of `simulator.transport.connect`:
    `request(text, n)` returns the answer or raises SimulationError).

    Each message is answered by an `Exchange` over `session`'s application, checked with a ConformanceChecker
    if `check_protocol`. Before each message, a pending signal of `SIGNALS` or a passed `deadline`
    (time.monotonic(), None: none) ends the simulation; so does anything the scheduler raises. The cause is
    kept in `failure` and the simulator is given a SimulationError, so that it stops cleanly.
    """

    def __init__(self, session, *, check_protocol: bool, deadline: float | None, run_timeout: float | None,
                 reporter: Reporter, page: StartedPage | None, mirror: JobsMirror | None = None):
        from .simulator.state import SimulationError  # noqa: PLC0415

        self.SimulationError = SimulationError
        self.app = session.app
        self.app.strict_peer = check_protocol
        self.exchange = Exchange(self.app, strict=check_protocol)
        self.checker = None
        if check_protocol:
            from .batsim.conformance import ConformanceChecker  # noqa: PLC0415
            self.checker = ConformanceChecker()
        self.deadline, self.run_timeout = deadline, run_timeout
        self.reporter, self.page, self.mirror = reporter, page, mirror
        self.failure: BaseException | None = None
        self.cpu = 0.0
        self._started = self.app.last_started
        self._signals = set(SIGNALS)

    def _stop(self, failure: BaseException, why: str):
        self.failure = failure
        return self.SimulationError(why)

    def request(self, text: str, n: int) -> str:
        if self.failure is not None:
            raise self.SimulationError("the scheduler has stopped")
        pending = signal.sigpending() & self._signals
        if pending:
            signum = min(pending)
            raise self._stop(Interrupted(signum), f"interrupted by {signal.Signals(signum).name}")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise self._stop(run_timed_out(self.run_timeout), "run timeout")
        t = time.thread_time()
        try:
            if self.checker is not None:
                self.checker.received(text.encode())
                answer = self.exchange.answer(text)
                self.checker.answered(answer)
            else:
                answer = self.exchange.answer(text)
        except BaseException as exc:  # noqa: BLE001 (anything the scheduler raises ends the run, reported)
            raise self._stop(exc, f"the scheduler failed: {type(exc).__name__}: {exc}") from None
        finally:
            self.cpu += time.thread_time() - t
        started = self.app.last_started
        if started is not self._started:
            self._started = started
            if self.page is not None:
                self.page.write(started)
        if self.mirror is not None:
            frame = self.mirror.frame()
            if frame is not None:
                self.reporter.send(*frame)
        self.reporter.tick()
        return answer.decode()

    def close(self) -> None:
        pass


class Supervisor:
    """The parent's side of the report pipe `fd` (module docstring): `progress(done, total)` is called for each
    progress frame, each record is logged under the ``burstbuffer`` logger. The frames read but not handled yet
    are kept between two calls of `wait` (one after an interruption, to drain the pipe)."""

    def __init__(self, fd: int, progress):
        self.fd, self.progress = fd, progress
        self.columns: list[str] | None = None          # the child's last ``jobs`` frames (`write_seen`)
        self.rows: dict[tuple, dict] = {}
        self.info: dict | None = None
        self.sizes: tuple = (None, None)
        self.stuck: str | None = None
        self.seen_written = False
        self.buffer = bytearray()
        self.ready = pipelink.readable(fd)
        self.log = logging.getLogger("burstbuffer")

    def _handle(self) -> tuple[bool, Outcome | None]:
        """Handle the complete frames of the buffer: (True, outcome) at the end frame, else (False, None)."""
        buf = self.buffer
        while len(buf) >= 4:
            size = int.from_bytes(buf[:4], "little")
            if len(buf) < 4 + size:
                break
            frame = bytes(buf[4:4 + size])
            del buf[:4 + size]
            try:
                kind, *rest = pickle.loads(frame)
            except Exception as exc:  # noqa: BLE001 (e.g. an error the child could pickle but not this process)
                raise BatsimDied(f"unreadable report from the simulation: {type(exc).__name__}: {exc}") from None
            if kind == "end":
                return True, rest[0]
            if kind == "jobs":
                self.columns = rest[0]
                self.rows.update(rest[1])
                self.info = rest[2] or self.info
                self.sizes = rest[3]
            elif kind == "stuck":
                self.stuck = rest[0]
            elif kind == "progress":
                self.progress(*rest)
            elif kind == "log":
                self.log.log(rest[0], "%s", rest[1])
        return False, None

    def wait(self, timeout: float | None, *, draining: bool = False) -> Outcome | None:
        """Handle frames until the child's Outcome, returned; None if the pipe ends without one (the child
        died). Raises BatsimDied after `timeout` s (None: no limit) without a frame: "no message from the
        simulator". SIGINT, SIGTERM and SIGHUP are held while frames are read and handled, so that the
        `Interrupted` they raise never cuts one. `draining`: after an interruption, the frames up to the end,
        and None (not BatsimDied) after `timeout` s."""
        while True:
            held = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
            try:
                done, outcome = self._handle()
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
            if done:
                return outcome
            if not self.ready(timeout):
                if draining:
                    return None
                raise SimulatorTimedOut(f"no message from the simulator for {timeout:g} s")
            held = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
            try:
                chunk = os.read(self.fd, 1 << 16)
                self.buffer += chunk
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
            if not chunk:
                return None


    def write_seen(self, output) -> bool:
        """jobs.csv (the rows last reported, in submission order, unfinished jobs marked RUNNING or PENDING),
        run.json (once the platform was reported) and bb_occupancy.csv in the folder `output`, for a child that
        could not write them. False if the child reported no job (nothing is written then). Once."""
        if self.seen_written or self.columns is None:
            return self.seen_written
        import csv  # noqa: PLC0415
        import io  # noqa: PLC0415
        from pathlib import Path  # noqa: PLC0415

        from .fileio import atomic_write_text  # noqa: PLC0415
        from .metrics.runinfo import write_run_json  # noqa: PLC0415
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=self.columns)
        w.writeheader()
        w.writerows(self.rows[k] for k in sorted(self.rows))
        atomic_write_text(Path(output) / "jobs.csv", buf.getvalue())
        if self.info is not None:
            write_run_json(Path(output) / "run.json", None, "", "", info=self.info)
            from .session import write_tables  # noqa: PLC0415
            write_tables(Path(output))
        self.seen_written = True
        return True


def _spec_blob(spec) -> bytes:
    """`spec` pickled; a spec whose policy class cannot be pickled (a class made with ``type()``, whose name is
    not where its module holds it) travels as the ``--policy`` text it was resolved from and its other fields,
    and the child resolves the text again (`_load_spec`)."""
    try:
        return pickle.dumps(spec)
    except Exception:  # noqa: BLE001 (pickle raises PicklingError, AttributeError, TypeError...)
        from dataclasses import astuple  # noqa: PLC0415
        return pickle.dumps(("resolve", spec.text, *astuple(spec)[1:]))


def _load_spec(blob: bytes):
    """The child's `SchedulerSpec` from `_spec_blob`'s bytes."""
    spec = pickle.loads(blob)
    if isinstance(spec, tuple) and spec[:1] == ("resolve",):
        from .schedulers.resolve import policy_info  # noqa: PLC0415
        from .spec import SchedulerSpec  # noqa: PLC0415
        spec = SchedulerSpec(policy_info(spec[1]).policy, *spec[2:])
    return spec


def child_command(session_args: dict, simulator_argv: list[str], report_fd: int, page_fd: int) -> list[str]:
    """The child's argv: ``python -m burstbuffer.colocated`` with `session_args` (`SchedulerSession`'s arguments:
    spec, output and its keyword arguments, plus check_protocol, timeout, run_timeout and sys_path, the parent's module search path) and the
    simulator's options (`simulator_argv`, as `simulator.command` gives them past ``python -m
    burstbuffer.simulator``). Raises pickle's error if an argument cannot be pickled."""
    # the spec pickled apart: its policy class may live in a module of the parent's search path, which the child
    # adds before it unpickles the spec
    args = {**session_args, "spec": _spec_blob(session_args["spec"])}
    blob = base64.b64encode(pickle.dumps(args)).decode()
    return [sys.executable, "-m", "burstbuffer.colocated", "--report-fd", str(report_fd), "--page-fd",
            str(page_fd), "--session", blob, "--", *simulator_argv]


def stop_process(proc) -> None:
    """SIGTERM to `proc`, SIGKILL if it has not ended 10 s later."""
    import subprocess  # noqa: PLC0415
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def simulator_failed(rc: int, log_path, started: list[str] | None = None, who: str = "simulator") -> None:
    """Raise the simulator's own one-line error: InputError for bad input (status 2), else BatsimDied.

    A simulator killed by a signal (negative `rc`, e.g. SimGrid's abort on an error of its own) is reported
    with SimGrid's CRITICAL line from `log_path` and the jobs `started` by the scheduler's last answer (the
    ones SimGrid was setting up), instead of the last line of a C++ backtrace."""
    lines = [ln for ln in log_path.read_text(errors="replace").strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else "(no output)"
    if rc == 2:
        from .errors import InputError  # noqa: PLC0415
        msg = last.split("error: ", 1)[1] if "error: " in last else last
        parts = msg.split(": ", 2)
        raise InputError(*parts) if len(parts) == 3 else InputError("simulator", "input", msg)
    if rc < 0:
        critical = next((ln for ln in lines if "/CRITICAL]" in ln), None)
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        jobs = f" while executing {', '.join(started)}" if started else ""
        if critical is None:
            raise BatsimDied(f"{who} was killed by {name}{jobs}: the run cannot go on (a crash in native code, "
                             "or a kill from outside); the jobs seen are in jobs.csv")
        what = critical.split("/CRITICAL]", 1)[1].strip()
        when = critical.split("]", 1)[0].lstrip("[") if critical.startswith("[") else "?"
        raise BatsimDied(f"simulator aborted ({name}) at t={when}{jobs}: SimGrid: {what}")
    raise BatsimDied(f"simulator exited with status {rc}: {last}")


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

    from .batsim.transport import PipeReplySocket  # noqa: PLC0415
    from .signals import die_with_parent  # noqa: PLC0415
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
    from .guards import on_stuck
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


def _pipes_main(args: dict, simulator: list[str], reporter: Reporter, page: StartedPage, *, check_protocol: bool,
                timeout, run_timeout) -> int:
    """The child of ``run --link pipes``: the scheduler here, the simulator in a child of this process over a
    pipe each way (`over_pipes`), reporting to the parent as the in-simulator child does. SIGINT, SIGTERM
    and SIGHUP end the run with its outputs written (`signals.interruptible`). Exit status 0, else 1."""
    from .session import SchedulerSession  # noqa: PLC0415
    from .signals import interruptible  # noqa: PLC0415

    outcome, session = Outcome(scheduler_cpu=None), None
    argv = simulator[1:] if simulator[:1] == ["--"] else simulator
    try:
        with interruptible():
            signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)
            args["spec"] = _load_spec(args["spec"])
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


def main(argv: list[str] | None = None) -> int:
    """The child (module docstring). Exit status: the simulator's (0, 2 bad input, 1 stopped), 1 if the
    scheduler ended the simulation."""
    ap = argparse.ArgumentParser(prog="python -m burstbuffer.colocated", description=__doc__.splitlines()[0])
    ap.add_argument("--report-fd", type=int, required=True)
    ap.add_argument("--page-fd", type=int, required=True)
    ap.add_argument("--session", required=True)
    ap.add_argument("simulator", nargs=argparse.REMAINDER)
    ns = ap.parse_args(argv)
    signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)     # looked for at every message (CallTransport)
    reporter = Reporter(ns.report_fd)
    log = logging.getLogger("burstbuffer")
    log.addHandler(_Relay(reporter))
    log.propagate = False
    from .logs import setup  # noqa: PLC0415
    setup()                   # the parent's --log-level: records also in simulator.log (this process's stderr)
    args = pickle.loads(base64.b64decode(ns.session))
    check_protocol, timeout, run_timeout = args.pop("check_protocol"), args.pop("timeout"), args.pop("run_timeout")
    link = args.pop("link", "in-simulator")
    sys.path += [p for p in args.pop("sys_path") if p not in sys.path]   # the parent's: its policies' modules
    if link == "pipes":
        return _pipes_main(args, ns.simulator, reporter, StartedPage(ns.page_fd), check_protocol=check_protocol,
                           timeout=timeout, run_timeout=run_timeout)
    from .affinity import one_blas_thread  # noqa: PLC0415
    from .session import SchedulerSession  # noqa: PLC0415
    from .simulator import cli  # noqa: PLC0415

    one_blas_thread()
    outcome = Outcome()
    page = StartedPage(ns.page_fd)
    rc = 1
    try:
        args["spec"] = _load_spec(args["spec"])
        session = SchedulerSession(**args, progress=False, on_progress=reporter.progress)
        session.app.decision_timeout = timeout
        deadline = None if run_timeout is None else time.monotonic() + run_timeout
        mirror = JobsMirror(session)
        transport = CallTransport(session, check_protocol=check_protocol, deadline=deadline,
                                  run_timeout=run_timeout, reporter=reporter, page=page, mirror=mirror)

        def stuck(line: str) -> None:      # the watchdog's thread; the main one is stuck in the policy's C code
            frame = mirror.frame(force=True)
            if frame is not None:
                reporter.send(*frame)
            reporter.send("stuck", line)

        from .guards import on_stuck  # noqa: PLC0415
        on_stuck(stuck)
        sim_args = ns.simulator[1:] if ns.simulator[:1] == ["--"] else ns.simulator
        try:
            rc = cli.run_args(cli.parse_args(sim_args), transport=transport)
        finally:
            outcome.messages, outcome.scheduler_cpu = transport.exchange.n, transport.cpu
            outcome.error = transport.failure
            session.finish(tables=False)        # bb_occupancy.csv and the summary: the parent's (pandas)
            reporter.flush()
            outcome.sizes, outcome.written = session.sizes(), True
    except BaseException as exc:  # noqa: BLE001 (reported to the parent, which raises it)
        outcome.error = outcome.error or exc
    if outcome.error is not None:
        outcome.error = portable(outcome.error)
        rc = rc or 1
    reporter.send("end", outcome)
    return rc


if __name__ == "__main__":
    # the module by its name, not as __main__: the parent unpickles its Outcome as burstbuffer.colocated's
    from burstbuffer.colocated import main as _main
    sys.exit(_main())
