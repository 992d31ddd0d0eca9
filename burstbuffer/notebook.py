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

import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from .lazy import lazy

pd = lazy("pandas")  # imported on first use (burstbuffer.lazy)

__all__ = ["Simulation", "simulate"]


@dataclass
class Simulation:
    """A finished simulation.

    Attributes:
        output: the folder holding its files (jobs.csv, batsim_jobs.csv, run.json, ...; docs/run-outputs.md).
        jobs: one row per job of the workload: jobs.csv's columns (times in s, sizes in bytes; the columns of
            docs/run-outputs.md), `job_id` as text.
        summary: the run's summary (`burstbuffer.metrics.summary.Summary` as a dict: counts of jobs submitted,
            completed, killed, rejected, unfinished; ``mean_waiting_h`` and ``max_waiting_h`` [h],
            ``mean_bounded_slowdown``, ``makespan`` [s], ``cpu_utilisation`` and ``bb_utilisation`` in [0, 1], NaN
            when no job started) plus ``wall_time`` [s] of the simulation.
    """

    output: Path
    jobs: "pd.DataFrame"
    summary: dict

    def figure(self, *, max_jobs: int | None = None):
        """The run's four-panel figure (Gantt chart, BB held per storage node, queue, utilisation; the figure
        of `burstbuffer plot`, `burstbuffer.metrics.runplot.run_figure`): (matplotlib Figure, {panel: Axes}).
        InputError when no job started."""
        from .metrics.runplot import GANTT_MAX_JOBS, load_run, run_figure
        return run_figure(load_run(self.output), max_jobs=max_jobs or GANTT_MAX_JOBS)

    def plot(self, folder: str | Path | None = None) -> list[Path]:
        """Save the figure as run.png and run.svg in `folder` (default: `output`/figures); returns the paths."""
        from .metrics.runplot import plot_run
        return plot_run(self.output, folder)


def simulate(policy: str = "sjf-bb", workload: str | Path | None = None, platform: str | Path | None = None, *,
             jobs: int | None = None, model: str = "io-aware", output: str | Path | None = None, seed: int = 0,
             policy_options: dict | None = None, **run_options) -> Simulation:
    """Simulate `workload` (default: the bundled 1000 KTH jobs, workloads/kth-1000.json) on `platform` (default:
    the paper's Dragonfly, platforms/dragonfly96.xml) under `policy` (a name of `burstbuffer policies`, or
    MODULE:CLASS / FILE.py:CLASS) with job `model` (io-aware, alloc-only, three-phase; docs/io-model.md).

    `jobs`: only the first N jobs of the workload (file order), as ``run --jobs N``. `output`: the folder for the
    run's files (default: a new temporary folder). `policy_options`: the policy's options (``burstbuffer
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
    out = Path(output) if output is not None else Path(tempfile.mkdtemp(prefix="burstbuffer-"))
    if jobs is not None:
        from .errors import InputError
        from .workloads.split import first_jobs
        if jobs < 1:
            raise InputError("jobs", str(jobs), "must be at least 1")
        out.mkdir(parents=True, exist_ok=True)
        wl = first_jobs(wl, jobs, out / f"workload-first-{jobs}.json")
    run_options.setdefault("progress", False)
    res = run(policy, wl, plat, out, model=model, seed=seed, policy_options=policy_options, **run_options)
    table = pd.read_csv(res.jobs_csv, dtype={"job_id": str})
    return Simulation(out, table, {**asdict(res.summary), "wall_time": res.wall_time})
