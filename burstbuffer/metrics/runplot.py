"""Figures of one run (`burstbuffer plot RUN_DIR`, `burstbuffer run --plot`): what happened over time.

One figure, ``<out>/run.png`` and ``.svg``, four panels sharing the time axis:

1. Gantt chart of the processors (`figures.gantt_axes`, the reproduction's Fig. 3 drawing): one
   rectangle per job and contiguous range of its processors, killed jobs (final state
   COMPLETED_KILLED, COMPLETED_WALLTIME_REACHED or COMPLETED_FAILED) hatched with a red edge. Above
   `GANTT_MAX_JOBS` jobs a rectangle would be narrower than a pixel: the panel becomes a heat map of the
   busy fraction of each (time bin, block of processors) instead, killed jobs as red ticks at their end;
2. burst-buffer occupancy [GB] of every storage node (one line each, its capacity dotted; above
   `MAX_BB_LINES` nodes a heat map of each node's held fraction of its capacity per time bin);
3. queue length: jobs submitted and not started (rejected jobs never queue);
4. processor and BB utilisation [%]: busy processors / processors, bytes held / total capacity.

The inputs are the run's ``jobs.csv`` (our per-job table: `allocated_resources` as an interval set,
`bb_allocation` as ``"<storage id>:<bytes> ..."``, held from start to finish, docs/metrics.md) and
``run.json`` (the platform as the scheduler saw it: compute ids, BB capacity per storage id, names) and, for a
three-phase run, ``bb_holds.csv`` (each job's BB per phase),
which `burstbuffer run` / `serve` write; without it the processors are taken as 0 … highest
allocated id and the capacities are unknown (no capacity line, no BB utilisation).

Step functions with more than `MAX_STEPS` changes (long runs) are drawn as their exact mean over
`BINS` equal time bins. Times are shown in hours, or days for runs longer than 3 days.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from procset import ProcSet

from ..errors import InputError
# matplotlib and scipy (behind .figures) load only when a figure is drawn: every `run` writes run.json through
# this module, and importing them cost the scheduler process 1.2-1.6 s of each run (py-spy).
_FIGURE_NAMES = ("binned_mean", "step_function", "gantt_axes", "plt", "save_figure")


def __getattr__(name: str):
    if name in _FIGURE_NAMES:
        from . import figures
        return getattr(figures, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["RunData", "load_run", "step_function", "binned_mean", "run_figure", "plot_run", "GANTT_MAX_JOBS"]

#: above this many started jobs the Gantt panel is a heat map (a 28,000-job run spans ~2,000 px)
GANTT_MAX_JOBS = 3000
#: step functions with more changes than this are drawn as bin means
MAX_STEPS = 4000
#: time bins of the heat map and of the binned step functions
BINS = 1200
#: processor rows of the heat map (at most; one per processor below that)
HEAT_ROWS = 200
#: above this many storage nodes the BB panel is a heat map (one row per node) instead of one line each
MAX_BB_LINES = 24


@dataclass
class RunData:
    """A run's per-job table and platform. `jobs`: jobs.csv as read (strings for ids and allocations);
    `compute`: processor ids; `bb_capacity`: {storage id: bytes} ({} if unknown); `names`: {id: host};
    `label`: policy and model if known, else the folder name."""

    jobs: pd.DataFrame
    compute: ProcSet
    bb_capacity: dict[int, int] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    label: str = ""
    #: the figures' file name: ``run`` for a run folder, the export prefix's name for Batsim's outputs
    name: str = "run"
    #: Batsim's ``PREFIX_machine_states.csv`` beside a Batsim table (time [s], the number of machines in each
    #: state), None if absent: the utilisation panel then also draws the share of machines computing
    machine_states: pd.DataFrame | None = None
    #: the run's bb_holds.csv (`burstbuffer.audit.load_holds`: a three-phase run's BB amount per phase), None if
    #: absent: `bb_spans` then reads jobs.csv's one allocation per job
    holds: pd.DataFrame | None = None

    def bb_spans(self) -> list[tuple[float, float, dict[int, int]]]:
        """The BB each started job held: [(from [s], to [s], {storage id: bytes})]. Read by phase from `holds`
        for the jobs it lists (a job holding different amounts in its stage-in, running and stage-out phases,
        as cerberus' do: jobs.csv's one amount is its running phase's), else jobs.csv's ``bb_allocation`` over
        [start, end)."""
        s = self.started
        if self.holds is not None:
            from ..audit import bb_holds
            done = self.jobs[self.jobs["job_id"].astype(str).isin(s["job_id"].astype(str))]
            return [(float(a), float(b), {int(node): int(v)})
                    for node, v, a, b in zip(*bb_holds(done.astype({"job_id": str}), self.holds)[1:])]
        return [(float(a), float(b), _bb_of(x)) for a, b, x in zip(s["start"], s["end"],
                                                                     s["bb_allocation"].fillna(""))]

    @property
    def has_bb(self) -> bool:
        """True when the table or the platform says anything of burst buffers (else no BB panel is drawn)."""
        return bool(self.bb_capacity) or bool(self.jobs["bb_allocation"].fillna("").astype(str).str.strip().any())

    @property
    def started(self) -> pd.DataFrame:
        """Jobs with a start and an end (float columns ``start``, ``end``), in file order."""
        j = self.jobs
        st = pd.to_numeric(j["starting_time"], errors="coerce")
        en = pd.to_numeric(j["finish_time"], errors="coerce")
        ok = st.notna() & en.notna()
        out = j[ok].copy()
        out["start"], out["end"] = st[ok], en[ok]
        return out


def find_jobs_table(where: str | Path) -> tuple[Path, Path, str]:
    """The per-job table `where` names, as (path, its folder, the figures' name): a run folder (``jobs.csv``,
    figures named ``run``), a Batsim export prefix (``PREFIX_jobs.csv``, named PREFIX), a ``*_jobs.csv`` file,
    or a folder holding exactly one ``*_jobs.csv`` (Batsim's outputs, any version: ``out_jobs.csv``...).
    Raises InputError (one line) when there is none, or several without a way to choose."""
    where = Path(where)
    if where.is_dir() and (where / "jobs.csv").is_file():
        return where / "jobs.csv", where, "run"
    if where.is_file() and where.name.endswith("jobs.csv"):
        stem = where.name[:-len("jobs.csv")].rstrip("_") or "run"
        return where, where.parent, stem
    prefixed = where.parent / f"{where.name}_jobs.csv"
    if where.name and prefixed.is_file():
        return prefixed, where.parent, where.name
    if where.is_dir():
        found = sorted(p for p in where.glob("*_jobs.csv") if p.name != "batsim_subjobs.csv")
        if len(found) == 1:
            return found[0], where, found[0].name[:-len("_jobs.csv")]
        if found:
            raise InputError(str(where), "jobs tables", f"several ({', '.join(p.name for p in found[:4])}): give "
                                                        "the export prefix, e.g. " + str(where / found[0].name[:-9]))
        raise InputError(str(where), "jobs.csv", "no jobs.csv nor PREFIX_jobs.csv: not a run or Batsim output "
                                                 "folder")
    raise InputError(str(where), "jobs table", "no such folder, file nor Batsim export prefix (PREFIX_jobs.csv)")


def load_run(run_dir: str | Path) -> RunData:
    """Read the per-job table `run_dir` names (`find_jobs_table`: a run folder, a Batsim export prefix or output
    folder of any layout 1.x-4.2, read by `tidy.load_jobs`: older layouts translated, an I/O-aware Batsim run's
    sub-jobs rebuilt per original job) and, beside a run's jobs.csv, run.json. Raises InputError (file, item,
    reason) if there is no such table, it lacks a column the figures need, or run.json is malformed."""
    path, run_dir, name = find_jobs_table(run_dir)
    from .tidy import load_jobs
    try:
        jobs = load_jobs(path)
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(str(path), "table", f"unreadable ({exc})") from None
    need = {"submission_time", "starting_time", "finish_time", "final_state", "allocated_resources",
            "requested_number_of_resources"}
    missing = sorted(need - set(jobs.columns))
    if missing:
        raise InputError(str(path), "columns", f"missing {', '.join(missing)}")
    if "bb_allocation" not in jobs:
        jobs["bb_allocation"] = ""
    for i, a in enumerate(jobs["allocated_resources"]):
        try:
            if isinstance(a, str) and a.strip():
                ProcSet.from_str(a)
        except ValueError:
            from ..jsonvalues import excerpt
            raise InputError(str(path), f"row {i + 1}, column allocated_resources",
                             f"{excerpt(a, 40)} is not a set of resource ids (e.g. 0-3 8)") from None
    meta, label = run_dir / "run.json", (run_dir.name if name == "run" else name)
    if name == "run" and meta.is_file():
        try:
            doc = json.loads(meta.read_text())
            compute = ProcSet.from_str(doc["compute"])
            caps = {int(k): int(v) for k, v in doc.get("bb_capacity", {}).items()}
            names = {int(k): str(v) for k, v in doc.get("names", {}).items()}
            label = f"{doc.get('policy', '?')}, {doc.get('model', '?')} model"
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InputError(str(meta), "content", f"malformed ({exc})") from None
        from ..audit import AuditError, load_holds
        try:
            holds = load_holds(run_dir)
        except AuditError as exc:
            raise InputError(str(run_dir), "bb_holds.csv", str(exc)) from None
        return RunData(jobs, compute, caps, names, label, name, holds=holds)
    top = -1
    for a in jobs["allocated_resources"].dropna():
        if str(a).strip():
            top = max(top, ProcSet.from_str(str(a)).max)
    return RunData(jobs, ProcSet((0, top)) if top >= 0 else ProcSet(), {}, {}, label, name,
                   _machine_states(run_dir / f"{name}_machine_states.csv") if name != "run" else None)


#: the columns of Batsim's ``_machine_states.csv`` (Batsim 1.x to 4.2: the same header)
MACHINE_STATE_COLUMNS = ("time", "nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle", "nb_computing")


def _machine_states(path: Path) -> pd.DataFrame | None:
    """Batsim's machine-state table at `path`, or None when absent or not of that layout (then not drawn)."""
    if not path.is_file():
        return None
    try:
        ms = pd.read_csv(path)
    except (OSError, ValueError):
        return None
    if not set(MACHINE_STATE_COLUMNS) <= set(ms.columns) or ms.empty:
        return None
    return ms[list(MACHINE_STATE_COLUMNS)].apply(pd.to_numeric, errors="coerce").dropna()


def natural_key(name: str) -> tuple:
    """Sort key reading the digit runs of `name` as numbers: node_9 < node_18 < node_108 (not node_108 < node_18
    < node_9, the order of text)."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def _bb_of(alloc: str) -> dict[int, int]:
    out: dict[int, int] = {}
    for tok in str(alloc).split():
        k, _, v = tok.partition(":")
        out[int(k)] = out.get(int(k), 0) + int(v)
    return out


def _draw_steps(ax, times, values, t0, t1, scale, unit_s, **kw):
    """Step function on `ax` ([t0, t1], x in units of `unit_s`), binned above MAX_STEPS changes."""
    from .figures import binned_mean
    if len(times) > MAX_STEPS:
        edges = np.linspace(t0, t1, BINS + 1)
        v = binned_mean(times, values, edges)
        return ax.stairs(v * scale, edges / unit_s, **kw)
    x = np.concatenate([[t0], times, [t1]]) / unit_s
    y = np.concatenate([[0.0], values, [values[-1] if len(values) else 0.0]]) * scale
    return ax.step(x, y, where="post", **kw)[0]


def run_figure(run: RunData, *, max_jobs: int = GANTT_MAX_JOBS):
    """The four-panel figure of `run` (module docstring). Returns (figure, {panel name: Axes}) with
    panels "gantt", "bb", "queue", "utilisation"; without burst buffers (`RunData.has_bb`: a Batsim table, a
    platform without BB) no "bb" panel. Raises InputError if no job started."""
    from .figures import binned_mean, gantt_axes, plt, step_function
    s = run.started
    if s.empty:
        raise InputError("jobs.csv", "jobs", "no job started: nothing to plot")
    sub = pd.to_numeric(run.jobs["submission_time"], errors="coerce")
    t0 = float(min(sub.min(), s["start"].min()))
    t1 = float(s["end"].max())
    unit_s, unit = (86400.0, "days") if t1 - t0 > 3 * 86400 else (3600.0, "h")
    panels = ("gantt", "bb", "queue", "utilisation") if run.has_bb else ("gantt", "queue", "utilisation")
    ratios = {"gantt": 3, "bb": 1.6, "queue": 1, "utilisation": 1.2}
    fig, axes = plt.subplots(len(panels), 1, figsize=(12, 10 if run.has_bb else 8), sharex=True,
                             gridspec_kw={"height_ratios": [ratios[p] for p in panels], "hspace": 0.12})
    ax = dict(zip(panels, axes))
    nb = len(run.compute)
    gantt_axes(ax["gantt"], s, nb_res=nb, unit_s=unit_s, max_jobs=max_jobs, bins=BINS,
               rows=min(HEAT_ROWS, max(nb, 1)), t_range=(t0, t1))
    ax["gantt"].set_title(f"{run.label}: {len(s)} jobs started", fontsize=10, loc="left")

    # BB occupancy per storage node
    bb_rows = run.bb_spans()
    nodes = sorted(set(run.bb_capacity) | {k for *_, d in bb_rows for k in d},
                   key=lambda n: natural_key(run.names.get(n, f"BB {n}")))      # node_9 before node_18
    per_node = {n: ([], [], []) for n in nodes}
    for a, b, d in bb_rows:
        for node, v in d.items():
            on, off, w = per_node[node]
            on.append(a)
            off.append(b)
            w.append(v)
    total = step_function(*(sum((per_node[n][i] for n in nodes), []) for i in range(3)))
    if "bb" not in ax:
        pass
    elif len(nodes) > MAX_BB_LINES:     # one row per storage node, busy fraction of its capacity per time bin
        edges = np.linspace(t0, t1, BINS + 1)
        grid = np.array([binned_mean(*step_function(*per_node[n]), edges)
                         / (run.bb_capacity.get(n) or max(1, max(per_node[n][2], default=1))) for n in nodes])
        im = ax["bb"].imshow(grid, aspect="auto", origin="lower", cmap="viridis", vmin=0, vmax=1,
                             extent=(t0 / unit_s, t1 / unit_s, 0, len(nodes)), interpolation="nearest")
        im.set_gid("bb fraction")
        fig.colorbar(im, cax=ax["bb"].inset_axes([1.01, 0.0, 0.012, 1.0]), label="BB held / capacity")
        ax["bb"].set_ylabel("storage node (rank)")
    else:
        cmap = plt.get_cmap("tab20")
        for i, node in enumerate(nodes):
            times, vals = step_function(*per_node[node])
            col = cmap(i % 20)
            art = _draw_steps(ax["bb"], times, vals, t0, t1, 1e-9, unit_s, color=col, lw=0.8,
                              label=run.names.get(node, f"BB {node}"))
            art.set_gid(f"bb {node}")
            if node in run.bb_capacity:
                ax["bb"].axhline(run.bb_capacity[node] * 1e-9, color=col, lw=0.6, ls=":")
        ax["bb"].set_ylabel("BB held [GB]")
        if nodes:
            ax["bb"].legend(fontsize=6, ncol=1 if len(nodes) <= 12 else 2, loc="upper left",
                            bbox_to_anchor=(1.005, 1.0), frameon=False, title="storage node\n(dotted: capacity)",
                            title_fontsize=6)
    # queue length
    ok = sub.notna() & (run.jobs["final_state"].fillna("") != "REJECTED")
    q_on = sub[ok].to_numpy(float)
    q_off = pd.to_numeric(run.jobs.loc[ok, "starting_time"], errors="coerce").fillna(np.inf).to_numpy(float)
    qt, qv = step_function(q_on, q_off, np.ones(len(q_on)))
    if len(qt) and not np.isfinite(qt[-1]):
        qt, qv = qt[:-1], qv[:-1]
    _draw_steps(ax["queue"], qt, qv, t0, t1, 1.0, unit_s, color="black", lw=0.8).set_gid("queue")
    ax["queue"].set_ylabel("queued jobs")
    # utilisation
    res = pd.to_numeric(s["requested_number_of_resources"], errors="coerce").fillna(0).to_numpy(float)
    pt, pv = step_function(s["start"], s["end"], res)
    _draw_steps(ax["utilisation"], pt, pv, t0, t1, 100.0 / max(nb, 1), unit_s, color="tab:blue", lw=0.8,
                label="processors").set_gid("processors")
    if run.machine_states is not None:     # Batsim's own count: machines computing / machines
        ms = run.machine_states
        total = ms[list(MACHINE_STATE_COLUMNS[1:])].sum(axis=1).to_numpy(float)
        share = ms["nb_computing"].to_numpy(float) / np.maximum(total, 1)
        _draw_steps(ax["utilisation"], ms["time"].to_numpy(float), share, t0, t1, 100.0, unit_s, color="tab:green",
                    lw=0.8, ls="--", label="machines computing\n(_machine_states.csv)").set_gid("machines computing")
    cap = sum(run.bb_capacity.values())
    if cap:
        _draw_steps(ax["utilisation"], *total, t0, t1, 100.0 / cap, unit_s, color="tab:orange", lw=0.8,
                    label="burst buffers").set_gid("burst buffers")
    ax["utilisation"].set_ylim(0, 105)
    ax["utilisation"].set_ylabel("utilisation [%]")
    ax["utilisation"].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0), frameon=False)
    ax["utilisation"].set_xlabel(f"time [{unit}]")
    ax["utilisation"].set_xlim(t0 / unit_s, t1 / unit_s)
    for a in axes:
        a.grid(alpha=0.25, lw=0.5)
    return fig, ax


def plot_run(run_dir: str | Path, out: str | Path | None = None, *, max_jobs: int = GANTT_MAX_JOBS) -> list[Path]:
    """Write the run figure of `run_dir` (a run folder, a Batsim export prefix or output folder: `load_run`) as
    `out`/NAME.png and NAME.svg, NAME ``run`` for a run folder, else the export prefix's name (default `out`: the
    folder of the table, /figures). Returns the two paths. InputError as `load_run` and `run_figure`."""
    from .figures import save_figure
    path, folder, _ = find_jobs_table(run_dir)
    run = load_run(run_dir)
    fig, _ = run_figure(run, max_jobs=max_jobs)
    return save_figure(fig, Path(out) if out is not None else folder / "figures", run.name)
