"""The scheduler's side of one simulation: a policy and a job model answering a Batsim-compatible simulator.

`SchedulerSession` is shared by every way the project runs a scheduler: `burstbuffer run` (the embedded
simulator, with the scheduler in its process, `burstbuffer.colocated`, or beside it over a pipe pair) and
`burstbuffer serve` (an external Batsim over ZeroMQ).
"""
from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .app import SchedulerApp
from .batsim.conformance import CheckedTransport
from .batsim.loop import run_loop
from .errors import InputError
from .logs import progress_bar
from .spec import SchedulerSpec

if TYPE_CHECKING:
    from .metrics.summary import Summary

#: Environment variable that turns on the protocol-conformance check of every answer
#: (`burstbuffer.batsim.conformance`) when `check_protocol` is not given; the tests set it.
CHECK_PROTOCOL_ENV = "BURSTBUFFER_CHECK_PROTOCOL"


def check_protocol_default() -> bool:
    """True if the environment variable CHECK_PROTOCOL_ENV is set to anything but "", 0, false, no."""
    return os.environ.get(CHECK_PROTOCOL_ENV, "").strip().lower() not in ("", "0", "false", "no")


class RunFolder:
    """A run's output folder and its progress: what the parent of an in-simulator run keeps while the scheduler
    runs in the child (`burstbuffer.colocated`), and what `SchedulerSession` writes into.

    Raises InputError if `output` cannot be created. `total` (jobs in the workload, if known) sizes the
    progress bar (`progress`, labelled `label`); `on_progress(done, total)` (jobs started or rejected so far,
    `total`) is called at every change, with or without the bar."""

    def __init__(self, output: Path, *, label: str, total: int | None = None, progress: bool = True,
                 on_progress: Callable[[int, int | None], None] | None = None):
        self.output = Path(output)
        try:
            self.output.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(str(output), "output folder", f"cannot create it ({exc.strerror})") from None
        from .metrics.runinfo import AUDIT_FILES
        for name in AUDIT_FILES:     # a previous run's, which this run may not write: its audit must not read them
            (self.output / name).unlink(missing_ok=True)
        self.bar = None
        if progress_bar(progress):   # no carriage returns in a log file
            from tqdm import tqdm
            self.bar = tqdm(total=total, unit="job", desc=label, dynamic_ncols=True, leave=True)
        self.total = total
        self.on_progress = on_progress

    def _progress(self, done: int, known: int) -> None:
        if self.bar is not None:
            self.bar.update(done - self.bar.n)
        if self.on_progress is not None:
            self.on_progress(done, self.total)

    @property
    def jobs_csv(self) -> Path:
        return self.output / "jobs.csv"


class SchedulerSession(RunFolder):
    """The scheduler side of one simulation, shared by `run` (embedded simulator) and `serve` (external
    Batsim): the `spec`'s policy and job model in a SchedulerApp (the policy built at SIMULATION_BEGINS,
    `SchedulerSpec.build`), a progress bar, the decision loop over a transport, then `output`/jobs.csv and the
    summary. The other arguments are `RunFolder`'s; `platform_source` names the platform in run.json.
    """

    def __init__(self, spec: SchedulerSpec, output: Path, *, bb_capacity: str | None = None,
                 total: int | None = None, progress: bool = True, platform_source: str = "SIMULATION_BEGINS",
                 on_progress: Callable[[int, int | None], None] | None = None):
        super().__init__(output, label=spec.label, total=total, progress=progress, on_progress=on_progress)
        self.spec = spec
        self.job_model = spec.make_job_model()
        self.app = SchedulerApp(spec.build, self.job_model, bb_capacity=bb_capacity, on_progress=self._progress,
                                platform_source=platform_source)
        self.app.policy_label = spec.label
        self.messages = 0
        self.finished = False       # `finish` wrote the outputs

    def loop(self, transport, *, alive=None, timeout: float | None = None, check_protocol: bool | None = None,
             run_timeout: float | None = None, tables: bool = True) -> int:
        """Serve the simulator over `transport` until SIMULATION_ENDS (see `run_loop`); return the number of
        messages. Whatever happens (end, BatsimDied, ProtocolError, interruption), the progress bar is
        closed and jobs.csv written with the jobs so far. `check_protocol` (default: the environment
        variable CHECK_PROTOCOL_ENV) checks every answer with `CheckedTransport` before it is sent.
        `timeout` [s] bounds the simulator's silence and each decision of the policy (`guards.SchedulerFault`
        when one takes longer); `run_timeout` [s] the whole loop's wall-clock time (BatsimDied); None: no
        limit (docs/reliability.md). `tables`: as for `finish`."""
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
            self.finish(tables=tables)
        return self.messages

    def finish(self, *, tables: bool = True) -> None:
        """Close the progress bar and write the outputs: jobs.csv with the jobs so far (unfinished ones marked
        when SIMULATION_ENDS was not seen), run.json and bb_occupancy.csv once the platform is known, and the
        policy's own files (e.g. a window policy's decisions.csv). Called whatever ended the simulation.
        `tables=False` leaves bb_occupancy.csv (`write_tables`, made from jobs.csv with pandas) to the caller:
        a run's simulating process does not import the analysis stack (`burstbuffer.colocated`)."""
        if self.bar is not None:
            self.bar.close()
        # unfinished jobs (an interrupted or failed run, or a simulator that ended with jobs still running or
        # pending: `SchedulerApp.unfinished`) are marked RUNNING / PENDING
        self.app.write_jobs_csv(str(self.jobs_csv), mark_unfinished=True)
        if self.app.platform is not None:   # the platform, for `burstbuffer plot`
            from .metrics.runinfo import write_run_json
            write_run_json(self.output / "run.json", self.app.platform, self.spec.text, self.spec.job_model)
            if tables:
                write_tables(self.output)
        if self.app.profiles_without_bb:
            n = len(self.app.profiles_without_bb)
            logging.getLogger("burstbuffer").warning(
                "%d profile%s no bb: treated as 0 B (no burst buffer, no data staging)", n,
                " has" if n == 1 else "s have")
        sched = self.app.scheduler
        if sched is not None:                                       # e.g. a window policy's decisions.csv
            sched.write_outputs(self.output)
        self.finished = True

    def sizes(self) -> tuple[int | None, int | None]:
        """(compute nodes, total BB [bytes]) of the platform once SIMULATION_BEGINS was seen, else (None, None)."""
        plat = self.app.platform
        return (plat.nb_compute, plat.total_bb) if plat else (None, None)

    def summary(self) -> Summary:
        """Summary of jobs.csv (docs/metrics.md), with the platform's size once SIMULATION_BEGINS was seen."""
        from .metrics.summary import summarize_csv
        return summarize_csv(str(self.jobs_csv), *self.sizes())


def write_tables(output: Path) -> None:
    """bb_occupancy.csv (BB held per node over time, `burstbuffer.metrics.bb_occupancy`) from `output`/jobs.csv;
    a failure is a logged warning, never the run's outcome."""
    from .metrics.bb_occupancy import write_bb_occupancy
    try:
        write_bb_occupancy(output)
    except (InputError, OSError) as exc:
        logging.getLogger("burstbuffer").warning("bb_occupancy.csv not written: %s", exc)
