"""`burstbuffer run`: the scheduler process beside the embedded simulator.

The scheduler starts the embedded simulator (`python -m burstbuffer.simulator`, the Batsim side) as a separate
process and answers its protocol v4 messages (docs/protocol.md) over a pipe each way (`burstbuffer.pipelink`):
the same messages as over Batsim's ZeroMQ socket, at a fraction of the CPU per message.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import colocated, pipelink
from .affinity import pinned, resolve_cpu
from .data import input_path
from .batsim.loop import BatsimDied
from .batsim.transport import PipeReplySocket
from .errors import InputError, require_simgrid
from .fileio import OutputLock, output_dir
from .io_model.registry import model_names
from .metrics.batsim_csv import split_subjob_table
from .metrics.summary import Summary
from .session import RunFolder, SchedulerSession, check_protocol_default, write_tables
from .signals import SIGNALS, Interrupted, die_with_parent
from .spec import SchedulerSpec, make_spec
from .simulator import command as simulator_command
from .workloads.batsim_json import load_workload

#: The bundled defaults (`burstbuffer.defaults`, kept apart so that the command line's parser stays cheap).
from .defaults import DEFAULT_PLATFORM, DEFAULT_WORKLOAD  # noqa: E402  (re-exported)
#: The registered job models (`burstbuffer.io_model.registry`), derived: `reproduce` takes its choices here.
MODELS = tuple(model_names())


@dataclass
class RunResult:
    summary: Summary
    jobs_csv: Path
    wall_time: float
    messages: int
    #: the CPU time [s] spent answering the simulator's messages, when the scheduler ran in its process
    scheduler_cpu: float | None = None
    #: the schedule's audit (`burstbuffer.audit.AuditReport`), set once the run ended (docs/audit.md)
    audit: object = None


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _simulator_failed(rc: int, log_path: Path, started: list[str] | None = None) -> None:
    """Raise the simulator's own one-line error: InputError for bad input (status 2), else BatsimDied.

    A simulator killed by a signal (negative `rc`, e.g. SimGrid's abort on an error of its own) is reported
    with SimGrid's CRITICAL line from `log_path` and the jobs `started` by the scheduler's last answer (the
    ones SimGrid was setting up), instead of the last line of a C++ backtrace."""
    lines = [ln for ln in log_path.read_text(errors="replace").strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else "(no output)"
    if rc == 2:
        msg = last.split("error: ", 1)[1] if "error: " in last else last
        parts = msg.split(": ", 2)
        raise InputError(*parts) if len(parts) == 3 else InputError("simulator", "input", msg)
    if rc < 0:
        critical = next((ln for ln in lines if "/CRITICAL]" in ln), None)
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        what = critical.split("/CRITICAL]", 1)[1].strip() if critical else last
        when = critical.split("]", 1)[0].lstrip("[") if critical and critical.startswith("[") else "?"
        jobs = f" while executing {', '.join(started)}" if started else ""
        raise BatsimDied(f"simulator aborted ({name}) at t={when}{jobs}: SimGrid: {what}")
    raise BatsimDied(f"simulator exited with status {rc}: {last}")


#: The links `run` can give the scheduler and the simulator (docs/performance.md): "in-process", the scheduler in
#: the simulator's process (`burstbuffer.colocated`), and "pipes", two processes over a pipe each way
#: (`burstbuffer.pipelink`); the same messages, the same outputs.
LINKS = ("in-process", "pipes")


def run(policy: str | SchedulerSpec, workload: Path, platform: Path, output: Path, *, model: str = "io-aware",
        seed: int = 0, policy_options: dict | None = None, **how) -> RunResult:
    """`run_spec` for the Python API and a study's or campaign's run: `policy` is the run's `SchedulerSpec`, or a
    policy name / ``MODULE:CLASS`` / ``FILE.py:CLASS`` made into one here (`burstbuffer.spec.make_spec`, the run's
    one resolution) with `policy_options`, `model` and `seed` (which a spec carries itself: they are then not
    read). `how`: `run_spec`'s keyword arguments. Raises what `make_spec` and `run_spec` raise."""
    spec = policy if isinstance(policy, SchedulerSpec) else make_spec(policy, options=policy_options,
                                                                        job_model=model, seed=seed)
    return run_spec(spec, workload, platform, output, **how)


def run_spec(spec: SchedulerSpec, workload: Path, platform: Path, output: Path, *, bb_capacity: str | None = None,
             storage: str | None = None, progress: bool = True, timeout: float = 600.0,
             check_protocol: bool | None = None, on_progress: Callable[[int, int | None], None] | None = None,
             cpu: str | int | None = "auto", network_model: str = "exact", run_timeout: float | None = None,
             energy: bool = False, link: str = "in-process") -> RunResult:
    """Simulate `workload` on `platform` under `spec`'s policy and job model; write `output`/jobs.csv (one row per
    original job) and the simulator's Batsim-format `output`/batsim_jobs.csv, batsim_schedule.csv.

    `spec`: the run's `SchedulerSpec` (`burstbuffer.spec`: policy class, checked options, job model, seed).
    `progress`: a tqdm bar on stderr; `on_progress(done, total)`: a callback with the jobs started or
    rejected so far and the workload's job count (see `SchedulerSession`).
    `link` (`LINKS`): "in-process" runs the scheduler inside the simulator's process, a child of this one
    (`burstbuffer.colocated`); "pipes" runs it here, the simulator in a child, over a pipe each way.
    `cpu`: the CPU core the scheduler and the simulator share during the run ("auto": the one this
    process runs on; "off"/None: no pinning; see `burstbuffer.affinity`, which says why).
    `network_model`: the simulator's ``--network-model`` (docs/io-model.md §5; "exact" is Batsim's).
    `energy`: the simulator's ``-E`` (Batsim's energy, docs/batsim.md).
    `check_protocol`: check every answer against protocol v4 (`burstbuffer.batsim.conformance`;
    default: the environment variable CHECK_PROTOCOL_ENV). `timeout` [s] also bounds each decision of the
    policy, `run_timeout` [s] (None: no limit) the whole run (docs/reliability.md). Raises InputError on bad
    input, BatsimDied if the simulator stops or stays silent for `timeout` seconds or the run outlives
    `run_timeout`, `guards.SchedulerFault` if the policy raises, outlives `timeout` in one decision or
    over-fills a burst buffer, ProtocolViolation if checked answers
    break the protocol, `errors.InfeasibleSchedule` if the schedule fails its audit (`burstbuffer.audit`, outputs
    kept), `Interrupted` (from `burstbuffer.signals`, with its `result` set to the
    partial RunResult once jobs.csv is written and the simulator stopped) if a signal arrived within
    `signals.interruptible()`.
    """
    if link not in LINKS:
        raise InputError("--link", link, f"unknown link (choose from {', '.join(LINKS)})")
    workload = input_path(workload, "workload")
    platform = input_path(platform, "platform")
    require_simgrid()       # before any output is made
    with OutputLock(output_dir(output)):          # one writer per output folder (docs/reliability.md §5)
        result = _run_locked(spec, workload, platform, output, bb_capacity=bb_capacity, storage=storage,
                             progress=progress, timeout=timeout, check_protocol=check_protocol,
                             on_progress=on_progress, cpu=cpu, network_model=network_model,
                             run_timeout=run_timeout, energy=energy, link=link)
        from .audit import audited     # every schedule audited from its outputs (docs/audit.md)
        return audited(result, output, workload=workload, platform=platform)


def _run_locked(spec: SchedulerSpec, workload: Path, platform: Path, output: Path, *, bb_capacity, storage,
                progress, timeout, check_protocol, on_progress, cpu, network_model, run_timeout, energy,
                link) -> RunResult:
    """`run_spec` once its inputs are checked and its output folder locked."""
    core = resolve_cpu(cpu)
    total = len(load_workload(workload, require_bb=False).jobs)     # the workload checked, its jobs counted
    output = Path(output)
    uses_dynamic = spec.job_model_class.uses_dynamic_jobs

    def simulator_argv(endpoint: str) -> list[str]:
        return simulator_command(str(platform), str(workload), export_prefix=str(output / "batsim"),
                                 socket_endpoint=endpoint, roles=[f"{storage}:storage"] if storage else (),
                                 dynamic_jobs=uses_dynamic, profile_reuse=uses_dynamic,
                                 network_model=network_model, energy=energy)

    with pinned(core):
        if link == "pipes":
            session = SchedulerSession(spec, output, bb_capacity=bb_capacity, total=total, progress=progress,
                                       platform_source=str(platform), on_progress=on_progress)
            return _over_pipes(session, simulator_argv, timeout=timeout, check_protocol=check_protocol,
                               run_timeout=run_timeout)
        # the parent keeps the folder and the progress; the child builds the scheduler from the spec
        folder = RunFolder(output, label=spec.label, total=total, progress=progress, on_progress=on_progress)
        args = dict(spec=spec, output=output, bb_capacity=bb_capacity, total=total, platform_source=str(platform),
                    check_protocol=check_protocol_default() if check_protocol is None else check_protocol,
                    timeout=timeout, run_timeout=run_timeout, sys_path=list(sys.path))
        # the child's silence includes the policy's decisions, which its own watchdog bounds by `timeout`:
        # the parent gives up only when that watchdog cannot have fired (a simulator stuck in SimGrid)
        silence = None if timeout is None else 2 * timeout + 10
        return _in_process(folder, args, simulator_argv("in-process")[3:], timeout=silence)


def _in_process(session: RunFolder, args: dict, simulator_argv: list[str], *, timeout: float | None
                ) -> RunResult:
    """`run` with the scheduler in the simulator's process (`burstbuffer.colocated`): this process starts the
    child, shows its progress, relays its warnings and raises what ended it."""
    t0 = time.perf_counter()
    report_in, report_out = os.pipe()
    page = colocated.StartedPage.create()
    log_path = session.output / "simulator.log"
    try:
        cmd = colocated.child_command(args, simulator_argv, report_out, page.fd)
        with open(log_path, "wb") as log:
            # die_with_parent: a `run` killed outright (SIGKILL) never leaves the simulation running
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_parent,
                                    pass_fds=(report_out, page.fd))
    except BaseException:
        pipelink.close(report_in)
        page.close()
        raise
    finally:
        os.close(report_out)               # the child's end: the pipe ends when the child does
    outcome = None
    supervisor = colocated.Supervisor(report_in, session._progress)
    try:
        try:
            outcome = supervisor.wait(timeout)
        except Interrupted as exc:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)   # the child ends at its next message, outputs written
            outcome = supervisor.wait(60.0, draining=True)
            _stop(proc)
            if outcome is not None and outcome.written:
                exc.result = _reported(session, outcome, t0)
            elif supervisor.write_seen(session.output):
                exc.result = _seen(session, supervisor, t0)
            raise
        rc = proc.wait(timeout=60)
    except BaseException:
        _stop(proc)
        raise
    finally:
        if session.bar is not None:
            session.bar.close()
        if outcome is None or not outcome.written:     # the child could not write them: the parent does
            _stop(proc)
            try:
                supervisor.wait(0.0, draining=True)      # the frames it sent before it ended
            except (BatsimDied, OSError):
                pass
            supervisor.write_seen(session.output)
        pipelink.close(report_in)
        started = page.read()
        page.close()
    if supervisor.stuck is not None:
        from .guards import DecisionTimedOut
        raise DecisionTimedOut(supervisor.stuck)
    if outcome is not None and outcome.error is not None:
        error = outcome.error
        if isinstance(error, Interrupted) and outcome.written:
            error.result = _reported(session, outcome, t0)
        else:
            _write_tables(session, outcome)
        raise error
    if rc != 0:
        _simulator_failed(rc, log_path, started)
    if outcome is None or not outcome.written:
        raise BatsimDied("the simulation ended without reporting its outcome (simulator.log may say why)")
    return _reported(session, outcome, t0)


def _seen(session: RunFolder, supervisor: colocated.Supervisor, t0: float) -> RunResult:
    """The RunResult of a run whose parent wrote jobs.csv from what the child reported (`Supervisor.write_seen`)."""
    from .metrics.summary import summarize_csv

    return RunResult(summarize_csv(str(session.jobs_csv), *supervisor.sizes), session.jobs_csv,
                     time.perf_counter() - t0, 0, None)


def _write_tables(session: RunFolder, outcome: colocated.Outcome) -> None:
    """bb_occupancy.csv (`session.write_tables`) once the child wrote jobs.csv after seeing the platform."""
    if outcome.written and outcome.sizes[0] is not None:
        write_tables(session.output)


def _reported(session: RunFolder, outcome: colocated.Outcome, t0: float) -> RunResult:
    """The RunResult of a run whose child wrote jobs.csv and reported `outcome`: bb_occupancy.csv written here
    (`_write_tables`), jobs.csv summarised with the platform's sizes."""
    from .metrics.summary import summarize_csv

    _write_tables(session, outcome)
    split_subjob_table(session.output)
    return RunResult(summarize_csv(str(session.jobs_csv), *outcome.sizes), session.jobs_csv,
                     time.perf_counter() - t0, outcome.messages, outcome.scheduler_cpu)


def _over_pipes(session: SchedulerSession, simulator_argv, *, timeout: float, check_protocol: bool | None,
                run_timeout: float | None) -> RunResult:
    """`run` with the scheduler in this process and the simulator in a child, over a pipe each way."""
    t0 = time.perf_counter()
    output = session.output
    # the link: a pipe each way (`burstbuffer.pipelink`); the simulator inherits its two ends
    msg_in, msg_out = os.pipe()            # the simulator's messages
    ans_in, ans_out = os.pipe()            # the scheduler's answers
    sock = PipeReplySocket(msg_in, ans_out, timeout=0.5)
    cmd = simulator_argv(pipelink.endpoint(msg_out, ans_in))
    log_path = output / "simulator.log"
    try:
        with open(log_path, "wb") as log:
            # die_with_parent: a scheduler killed outright (SIGKILL) never leaves the simulator running
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_parent,
                                    pass_fds=(msg_out, ans_in))
    except BaseException:
        sock.close()
        raise
    finally:
        os.close(msg_out)              # the simulator's ends: its pipe ends when it does
        os.close(ans_in)
    from .guards import on_stuck
    on_stuck(lambda line: session.finish())   # a policy stuck in C code: the watchdog writes the outputs, exits 124
    try:
        messages = session.loop(sock, alive=lambda: proc.poll() is None, timeout=timeout,
                                check_protocol=check_protocol, run_timeout=run_timeout)
        rc = proc.wait(timeout=60)
    except BatsimDied as exc:
        rc = proc.poll()
        if rc is None:
            _stop(proc)
            raise
        if rc < 0 and signal.Signals(-rc) in SIGNALS:   # stopped from outside, as the in-process child reports it
            stop = Interrupted(-rc)
            stop.result = RunResult(session.summary(), session.jobs_csv, time.perf_counter() - t0, session.messages)
            raise stop from None
        _simulator_failed(rc, log_path, session.app.last_started)
        raise exc
    except Interrupted as exc:
        _stop(proc)
        exc.result = RunResult(session.summary(), session.jobs_csv, time.perf_counter() - t0,
                               session.messages)
        raise
    except BaseException:
        _stop(proc)
        raise
    finally:
        on_stuck(None)
        sock.close()
    if rc != 0:
        _simulator_failed(rc, log_path, session.app.last_started)
    split_subjob_table(output)
    wall = time.perf_counter() - t0
    return RunResult(session.summary(), session.jobs_csv, wall, messages)
