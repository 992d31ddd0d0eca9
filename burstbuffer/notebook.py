"""Simulations from Python (a notebook, a script): run one, get the per-job table as a pandas DataFrame and the
summary as a dict, draw it (docs/notebook.md).

    from burstbuffer.notebook import simulate
    sim = simulate("fcfs-easy", jobs=50)            # the first 50 bundled KTH jobs, the paper's platform
    sim.jobs[["job_id", "waiting_time", "bounded_slowdown"]].describe()
    sim.summary["mean_waiting_h"]
    fig, axes = sim.figure()

It is `burstbuffer run` without the command line: the same runner (`burstbuffer.runner.run`), the same
outputs in a folder (`Simulation.output`), the same errors (`InputError` for bad input: a one-line message).
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .lazy import lazy

pd = lazy("pandas")  # imported on first use (burstbuffer.lazy)

__all__ = ["Simulation", "simulate"]


@dataclass
class Simulation:
    """A finished simulation.

    Attributes:
        output: the folder holding its files (jobs.csv, batsim_jobs.csv, run.json, ...; docs/run-outputs.md), None
            when `simulate` was given no `output` (its temporary folder is removed once the tables are read).
        jobs: one row per job of the workload: jobs.csv's columns (times in s, sizes in bytes; the columns of
            docs/run-outputs.md), `job_id` as text.
        summary: the run's summary (`burstbuffer.metrics.summary.Summary` as a dict: counts of jobs submitted,
            completed, killed, rejected, unfinished; ``mean_waiting_h`` and ``max_waiting_h`` [h],
            ``mean_bounded_slowdown``, ``makespan`` [s], ``cpu_utilisation`` and ``bb_utilisation`` in [0, 1], NaN
            when no job started) plus ``wall_time`` [s] of the simulation.
    """

    output: Path | None
    jobs: "pd.DataFrame"
    summary: dict
    #: what the figures draw (`burstbuffer.metrics.runplot.RunData`), read before a temporary folder is removed
    run: object = field(default=None, repr=False)

    def figure(self, *, max_jobs: int | None = None):
        """The run's four-panel figure (Gantt chart, BB held per storage node, queue, utilisation; the figure
        of `burstbuffer plot`, `burstbuffer.metrics.runplot.run_figure`): (matplotlib Figure, {panel: Axes}).
        InputError when no job started."""
        from .metrics.runplot import GANTT_MAX_JOBS, load_run, run_figure
        return run_figure(self.run if self.run is not None else load_run(self.output),
                          max_jobs=max_jobs or GANTT_MAX_JOBS)

    def plot(self, folder: str | Path | None = None) -> list[Path]:
        """Save the figure as run.png and run.svg in `folder` (default: `output`/figures); returns the paths.
        InputError without `folder` when the simulation kept no folder (`output` None)."""
        from .errors import InputError
        from .metrics.figures import save_figure
        if folder is None and self.output is None:
            raise InputError("plot", "folder", "this simulation kept no folder (simulate(..., output=DIR) keeps "
                                               "one): give plot(FOLDER)")
        fig, _ = self.figure()
        return save_figure(fig, Path(folder) if folder is not None else self.output / "figures", "run")


def simulate(policy: str = "sjf-bb", workload: str | Path | None = None, platform: str | Path | None = None, *,
             jobs: int | None = None, model: str = "io-aware", output: str | Path | None = None, seed: int = 0,
             policy_options: dict | None = None, **run_options) -> Simulation:
    """Simulate `workload` (default: the bundled 1000 KTH jobs, workloads/kth-1000.json) on `platform` (default:
    the paper's Dragonfly, platforms/dragonfly96.xml) under `policy` (a name of `burstbuffer policies`, or
    MODULE:CLASS / FILE.py:CLASS) with job `model` (io-aware, alloc-only, three-phase; docs/io-model.md).

    `jobs`: only the first N jobs of the workload (file order), as ``run --jobs N``. `output`: the folder for the
    run's files (default: a temporary folder, removed before returning: nothing is left behind; the tables and
    the figure's data are kept in the `Simulation`). `policy_options`: the policy's options (``burstbuffer
    policies NAME`` lists them). Other keywords go to `burstbuffer.runner.run` (e.g. ``timeout``,
    ``network_model``). A bundled file may be named by its bare name (``"kth-1000.json"``).
    Raises InputError (bad input, SimGrid missing: one line saying what to do), `BatsimDied` if the simulation
    stops, `guards.SchedulerFault` if the policy fails.
    """
    from .data import input_path
    from .defaults import DEFAULT_PLATFORM, DEFAULT_WORKLOAD
    from .errors import require_simgrid
    from .runner import run

    require_simgrid()
    wl = input_path(workload if workload is not None else DEFAULT_WORKLOAD, "workload")
    plat = input_path(platform if platform is not None else DEFAULT_PLATFORM, "platform")
    if jobs is not None and jobs < 1:
        from .errors import InputError
        raise InputError("jobs", str(jobs), "must be at least 1")
    temporary = output is None
    out = Path(tempfile.mkdtemp(prefix="burstbuffer-")) if temporary else Path(output)
    try:
        if jobs is not None:
            from .workloads.split import first_jobs
            out.mkdir(parents=True, exist_ok=True)
            wl = first_jobs(wl, jobs, out / f"workload-first-{jobs}.json")
        run_options.setdefault("progress", False)
        res = run(policy, wl, plat, out, model=model, seed=seed, policy_options=policy_options, **run_options)
        table = pd.read_csv(res.jobs_csv, dtype={"job_id": str})
        from .metrics.runplot import load_run
        data = load_run(out)
    finally:
        if temporary:
            shutil.rmtree(out, ignore_errors=True)
    return Simulation(None if temporary else out, table, {**asdict(res.summary), "wall_time": res.wall_time}, data)
