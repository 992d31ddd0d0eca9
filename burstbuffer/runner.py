"""`burstbuffer run`: the scheduler process beside the embedded simulator.

The scheduler starts the embedded simulator (`python -m burstbuffer.simulator`, the Batsim side) as a separate
process and answers its protocol v4 messages (docs/protocol.md) over a pipe each way (`burstbuffer.pipelink`):
the same messages as over Batsim's ZeroMQ socket, at a fraction of the CPU per message.
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import pipelink
from .affinity import pinned, resolve_cpu
from .cliargs import input_file
from .app import SchedulerApp
from .batsim.conformance import CheckedTransport
from .batsim.loop import BatsimDied, run_loop
from .batsim.transport import PipeReplySocket
from .errors import InputError
from .io_model.base import JobModel
from .io_model.registry import make_model, model_names
from .metrics.summary import Summary, summarize_csv
from .schedulers.resolve import policy_info  # noqa: F401  (re-exported: the CLI's and pybatsim's resolver)
from .signals import Interrupted, die_with_parent
from .simulator import command as simulator_command
from .workloads.batsim_json import load_workload

#: The bundled defaults (`burstbuffer.defaults`, kept apart so that the command line's parser stays cheap).
from .defaults import DEFAULT_PLATFORM, DEFAULT_WORKLOAD  # noqa: E402  (re-exported)
#: The registered job models (`burstbuffer.io_model.registry`), derived: `reproduce` takes its choices here.
MODELS = tuple(model_names())
#: Environment variable that turns on the protocol-conformance check of every answer
#: (`burstbuffer.batsim.conformance`) when `check_protocol` is not given; the tests set it.
CHECK_PROTOCOL_ENV = "BURSTBUFFER_CHECK_PROTOCOL"


@dataclass
class RunResult:
    summary: Summary
    jobs_csv: Path
    wall_time: float
    messages: int


def count_jobs(workload: Path) -> int:
    """Number of static jobs of a Batsim workload file, after validating it (one-line InputError
    naming the job or profile and the field otherwise)."""
    return len(load_workload(workload, require_bb=False).jobs)


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


def make_executor(model: str) -> JobModel:
    """The job model registered as `model` (`burstbuffer.io_model.registry`). Raises
    InputError("--model", model, reason naming the valid models) if there is none."""
    try:
        return make_model(model)
    except ValueError:
        raise InputError("--model", model, f"unknown job model (choose from {', '.join(model_names())})") from None


def check_protocol_default() -> bool:
    """True if the environment variable CHECK_PROTOCOL_ENV is set to anything but "", 0, false, no."""
    return os.environ.get(CHECK_PROTOCOL_ENV, "").strip().lower() not in ("", "0", "false", "no")


class SchedulerSession:
    """The scheduler side of one simulation, shared by `run` (embedded simulator) and `serve` (external
    Batsim): the policy and job model in a SchedulerApp, a progress bar, the decision loop over a
    transport, then `output`/jobs.csv and the summary.

    Raises InputError for an unknown model or policy. `total` (jobs in the workload, if known) sizes
    the progress bar; `on_progress(done, total)` (jobs started or rejected so far, `total`) is called
    after every message that changes them, with or without the bar.
    """

    def __init__(self, policy: str, output: Path, *, model: str = "io-aware", seed: int = 0,
                 bb_capacity: str | None = None, policy_options: dict | None = None, total: int | None = None,
                 progress: bool = True, platform_source: str = "SIMULATION_BEGINS",
                 on_progress: Callable[[int, int | None], None] | None = None):
        from .schedulers.registry import THREE_PHASE_POLICIES

        self.executor = make_executor(model)
        self.policy = policy_info(policy)
        if policy in THREE_PHASE_POLICIES and model != "three-phase":
            raise InputError("--policy", policy, "needs --model three-phase (it decides stage-ins, docs/io-model.md §3)")
        self.output = Path(output)
        try:
            self.output.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(str(output), "output folder", f"cannot create it ({exc.strerror})") from None
        self.bar = None
        if progress:
            from tqdm import tqdm
            self.bar = tqdm(total=total, unit="job", desc=self.policy.label, dynamic_ncols=True, leave=True)
        factory = self.policy.factory
        self.app = SchedulerApp(lambda plat: factory(plat, seed=seed, **(policy_options or {})),
                                self.executor, bb_capacity=bb_capacity, on_progress=self._progress,
                                platform_source=platform_source)
        self.app.policy_label = self.policy.label
        self.messages = 0
        self.total = total
        self.policy, self.model = policy, model
        self.on_progress = on_progress

    def _progress(self, done: int, known: int) -> None:
        if self.bar is not None:
            self.bar.update(done - self.bar.n)
        if self.on_progress is not None:
            self.on_progress(done, self.total)

    @property
    def jobs_csv(self) -> Path:
        return self.output / "jobs.csv"

    def loop(self, transport, *, alive=None, timeout: float | None = None, check_protocol: bool | None = None,
             run_timeout: float | None = None) -> int:
        """Serve the simulator over `transport` until SIMULATION_ENDS (see `run_loop`); return the number of
        messages. Whatever happens (end, BatsimDied, ProtocolError, interruption), the progress bar is
        closed and jobs.csv written with the jobs so far. `check_protocol` (default: the environment
        variable CHECK_PROTOCOL_ENV) checks every answer with `CheckedTransport` before it is sent.
        `timeout` [s] bounds the simulator's silence and each decision of the policy (`guards.SchedulerFault`
        when one takes longer); `run_timeout` [s] the whole loop's wall-clock time (BatsimDied); None: no
        limit (docs/reliability.md)."""
        self.app.decision_timeout = timeout
        if check_protocol is None:
            check_protocol = check_protocol_default()
        if check_protocol:
            transport = CheckedTransport(transport)

        def count(received: bytes, answer: bytes) -> None:
            self.messages += 1

        self.app.strict_peer = check_protocol
        try:
            run_loop(transport, self.app, alive=alive, timeout=timeout, on_message=count, strict=check_protocol,
                     run_timeout=run_timeout)
        finally:
            if self.bar is not None:
                self.bar.close()
            # unfinished jobs (an interrupted or failed run) are marked RUNNING / PENDING
            self.app.write_jobs_csv(str(self.jobs_csv), mark_unfinished=not self.app.simulation_ended)
            if self.app.platform is not None:   # the platform, for `burstbuffer plot`
                from .metrics.runplot import write_run_json
                write_run_json(self.output / "run.json", self.app.platform, self.policy, self.model)
                from .metrics.bb_occupancy import write_bb_occupancy   # BB held per node over time
                try:
                    write_bb_occupancy(self.output)
                except (InputError, OSError) as exc:     # never hide the run's own outcome
                    logging.getLogger("burstbuffer").warning("bb_occupancy.csv not written: %s", exc)
            if self.app.profiles_without_bb:
                n = len(self.app.profiles_without_bb)
                logging.getLogger("burstbuffer").warning(
                    "%d profile%s no bb: treated as 0 B (no burst buffer, no data staging)", n,
                    " has" if n == 1 else "s have")
            sched = self.app.scheduler
            if sched is not None:                                       # e.g. a window policy's decisions.csv
                sched.write_outputs(self.output)
        return self.messages

    def summary(self) -> Summary:
        """Summary of jobs.csv (docs/metrics.md), with the platform's size once SIMULATION_BEGINS was seen."""
        plat = self.app.platform
        return summarize_csv(str(self.jobs_csv), plat.nb_compute if plat else None, plat.total_bb if plat else None)


def run(policy: str, workload: Path, platform: Path, output: Path, *, model: str = "io-aware",
        seed: int = 0, bb_capacity: str | None = None, storage: str | None = None,
        progress: bool = True, timeout: float = 600.0, policy_options: dict | None = None,
        check_protocol: bool | None = None,
        on_progress: Callable[[int, int | None], None] | None = None,
        cpu: str | int | None = "auto", network_model: str = "exact",
        run_timeout: float | None = None, energy: bool = False) -> RunResult:
    """Simulate `workload` on `platform` under `policy`; write `output`/jobs.csv (one row per
    original job) and the simulator's Batsim-format `output`/batsim_jobs.csv, batsim_schedule.csv.

    `progress`: a tqdm bar on stderr; `on_progress(done, total)`: a callback with the jobs started or
    rejected so far and the workload's job count (see `SchedulerSession`).
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
    break the protocol, `Interrupted` (from `burstbuffer.signals`, with its `result` set to the
    partial RunResult once jobs.csv is written and the simulator stopped) if a signal arrived within
    `signals.interruptible()`.
    """
    input_file(workload, "workload")
    input_file(platform, "platform")
    core = resolve_cpu(cpu)
    total = count_jobs(workload)
    session = SchedulerSession(policy, output, model=model, seed=seed, bb_capacity=bb_capacity,
                               policy_options=policy_options, total=total, progress=progress,
                               platform_source=str(platform), on_progress=on_progress)
    executor = session.executor
    t0 = time.perf_counter()
    # the link: a pipe each way (`burstbuffer.pipelink`); the simulator inherits its two ends
    msg_in, msg_out = os.pipe()            # the simulator's messages
    ans_in, ans_out = os.pipe()            # the scheduler's answers
    sock = PipeReplySocket(msg_in, ans_out, timeout=0.5)
    with pinned(core):
        cmd = simulator_command(str(platform), str(workload), export_prefix=str(output / "batsim"),
                                socket_endpoint=pipelink.endpoint(msg_out, ans_in),
                                roles=[f"{storage}:storage"] if storage else (),
                                dynamic_jobs=executor.uses_dynamic_jobs, profile_reuse=executor.uses_dynamic_jobs,
                                network_model=network_model, energy=energy)
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
        try:
            messages = session.loop(sock, alive=lambda: proc.poll() is None, timeout=timeout,
                                    check_protocol=check_protocol, run_timeout=run_timeout)
            rc = proc.wait(timeout=60)
        except BatsimDied as exc:
            rc = proc.poll()
            if rc is None:
                _stop(proc)
                raise
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
            sock.close()
        if rc != 0:
            _simulator_failed(rc, log_path, session.app.last_started)
    wall = time.perf_counter() - t0
    return RunResult(session.summary(), session.jobs_csv, wall, messages)
