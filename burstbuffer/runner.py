"""`burstbuffer run`: the scheduler and the embedded simulator, supervised.

`run` starts one child (`burstbuffer.colocated`) that runs the policy and answers the embedded simulator's
protocol v4 messages (docs/protocol.md): with the simulator in its process (a function call per message) or in
a child of its own over a pipe each way (`burstbuffer.pipelink`; ``--link pipes``): the same messages as over
Batsim's ZeroMQ socket. This process runs no user code: it shows the progress, writes the jobs the child
reported if the child cannot, and reports whatever ended it (docs/reliability.md §5).
"""
from __future__ import annotations

import contextlib
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
from .links import UnknownLink, link as link_name
from .data import input_path
from .batsim.loop import BatsimDied
from .errors import InputError, is_disk_full, require_simgrid
from .fileio import OutputLock, open_output, output_dir, refuse_links
from .io_model.registry import model_names
from .metrics.batsim_csv import split_subjob_table
from .metrics.summary import Summary
from .session import RunFolder, check_protocol_default, write_tables
from .signals import Interrupted, die_with_parent
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
             energy: bool = False, link: str = "in-simulator") -> RunResult:
    """Simulate `workload` on `platform` under `spec`'s policy and job model; write `output`/jobs.csv (one row per
    original job) and the simulator's Batsim-format `output`/batsim_jobs.csv, batsim_schedule.csv.

    `spec`: the run's `SchedulerSpec` (`burstbuffer.spec`: policy class, checked options, job model, seed).
    `progress`: a tqdm bar on stderr; `on_progress(done, total)`: a callback with the jobs started or
    rejected so far and the workload's job count (see `SchedulerSession`).
    `link` (`burstbuffer.links.LINKS`; a former spelling in `LINK_ALIASES` is accepted): "in-simulator" runs
    the scheduler inside the simulator's process, a child of this one (`burstbuffer.colocated`); "pipes" runs it
    in a child of this process, the simulator in a child of that one, over a pipe each way.
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
    try:
        link = link_name(link)
    except UnknownLink as exc:
        raise InputError("--link", link, exc.reason) from None
    workload = input_path(workload, "workload")
    platform = input_path(platform, "platform")
    require_simgrid()       # before any output is made
    with OutputLock(output_dir(output)), _naming_full_disk(output):   # one writer per folder (reliability.md §5)
        refuse_links(output)                      # nothing written through a link (docs/reliability.md §5)
        result = _run_locked(spec, workload, platform, output, bb_capacity=bb_capacity, storage=storage,
                             progress=progress, timeout=timeout, check_protocol=check_protocol,
                             on_progress=on_progress, cpu=cpu, network_model=network_model,
                             run_timeout=run_timeout, energy=energy, link=link)
        from .metrics.runinfo import record_inputs
        record_inputs(Path(output), workload, platform, spec.seed)   # what `burstbuffer compare` pairs runs by
        from .audit import audited     # every schedule audited from its outputs (docs/audit.md)
        return audited(result, output, workload=workload, platform=platform)


@contextlib.contextmanager
def _naming_full_disk(output: Path):
    """A full file system's OSError (`errors.is_disk_full`) raised in the block names the output folder when it
    names no file (a stream's write), for the CLI's one line (exit `errors.EXIT_DISK_FULL`)."""
    try:
        yield
    except OSError as exc:
        if not is_disk_full(exc) or exc.filename:
            raise
        raise OSError(exc.errno, exc.strerror, str(output)) from None


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
                                 network_model=network_model, energy=energy,
                                 audit=False)    # the run's own audit reads more (`audit.audited`)

    with pinned(core):
        # the parent keeps the folder and the progress; a child builds the scheduler from the spec and runs it,
        # with the simulator in its process (in-simulator) or in a child of its own over a pipe each way (pipes):
        # whatever ends that child (a crash, os._exit, a signal), this process reports it and writes the jobs seen
        folder = RunFolder(output, label=spec.label, total=total, progress=progress, on_progress=on_progress)
        args = dict(spec=spec, output=output, bb_capacity=bb_capacity, total=total, platform_source=str(platform),
                    check_protocol=check_protocol_default() if check_protocol is None else check_protocol,
                    timeout=timeout, run_timeout=run_timeout, sys_path=list(sys.path), link=link)
        # the child's silence includes the policy's decisions, which its own watchdog bounds by `timeout`:
        # the parent gives up only when that watchdog cannot have fired (a simulator stuck in SimGrid)
        silence = None if timeout is None else 2 * timeout + 10
        argv = simulator_argv(colocated.PIPE_ENDPOINT if link == "pipes" else "in-simulator")
        return _supervised(folder, args, argv[3:] if link == "in-simulator" else argv, timeout=silence, link=link)


def _supervised(session: RunFolder, args: dict, simulator_argv: list[str], *, timeout: float | None,
                link: str = "in-simulator") -> RunResult:
    """`run` with the scheduler in a child (`burstbuffer.colocated`; `link`: the simulator in its process, or in
    a child of its own over pipes): this process starts the child, shows its progress, relays its warnings and
    raises what ended it. Every process the child started (a policy's forks too) ends with the run: the child
    leads a process group of its own, killed at the end."""
    t0 = time.perf_counter()
    report_in, report_out = os.pipe()
    page = colocated.StartedPage.create()
    log_path = session.output / "simulator.log"
    try:
        cmd = colocated.child_command(args, simulator_argv, report_out, page.fd)
        with open_output(log_path, "wb") as log:
            # die_with_parent: a `run` killed outright (SIGKILL) never leaves the simulation running
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_parent,
                                    pass_fds=(report_out, page.fd), process_group=0)
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
            colocated.stop_process(proc)
            if outcome is not None and outcome.written:
                exc.result = _reported(session, outcome, t0)
            elif supervisor.write_seen(session.output):
                exc.result = _seen(session, supervisor, t0)
            raise
        rc = proc.wait(timeout=60)
    except BaseException:
        colocated.stop_process(proc)
        raise
    finally:
        if session.bar is not None:
            session.bar.close()
        if outcome is None or not outcome.written:     # the child could not write them: the parent does
            colocated.stop_process(proc)
            try:
                supervisor.wait(0.0, draining=True)      # the frames it sent before it ended
            except (BatsimDied, OSError):
                pass
            supervisor.write_seen(session.output)
        pipelink.close(report_in)
        started = page.read()
        page.close()
        _end_group(proc)
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
        colocated.simulator_failed(rc, log_path, started, who="the scheduler's process (its policy)" if link == "pipes"
                          else "the simulation's process (the simulator and the policy)")
    if outcome is None or not outcome.written:
        raise BatsimDied(f"the {'scheduler' if link == 'pipes' else 'simulation'}'s process ended (status {rc}) "
                         "without finishing the run (the policy called os._exit?): the jobs seen are in jobs.csv")
    return _reported(session, outcome, t0)


def _end_group(proc: subprocess.Popen) -> None:
    """SIGKILL to the process group `proc` leads (`_supervised`): whatever it started and left running."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


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
