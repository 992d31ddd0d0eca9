"""The paper's figures (Kopanski & Rzadca 2021, §4.2, Fig. 3 and 5-12) with matplotlib, as PNG and SVG.

Letter-value plots ("boxenplots", Fig. 7-8) are drawn here with plain matplotlib (`letter_value_plot`)
from `stats.letter_values`, so seaborn is not a dependency. Every function takes the tidy per-job
table (`tidy.job_metrics` columns plus `policy`, `scope`) or per-part means, writes
``<folder>/<name>.png`` and ``.svg`` and returns the two paths.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from .stats import TAIL, letter_values, mean_ci  # noqa: E402

#: the paper's policy order and one colour per policy (stable across figures)
POLICY_ORDER = ["fcfs", "fcfs-easy", "filler", "fcfs-bb", "sjf-bb", "plan-1", "plan-2", "plan-3"]
_PALETTE = plt.get_cmap("tab10").colors
#: waiting times below this [h] (1 s) are drawn at it on log axes
WAIT_FLOOR_H = 1 / 3600
METRICS = {"waiting_time": ("waiting time [h]", 3600.0), "bounded_slowdown": ("bounded slowdown", 1.0)}


def ordered(policies) -> list[str]:
    """Policies in the paper's order, unknown ones after, alphabetically."""
    ps = list(dict.fromkeys(policies))
    return [p for p in POLICY_ORDER if p in ps] + sorted(p for p in ps if p not in POLICY_ORDER)


def colour(policy: str):
    i = POLICY_ORDER.index(policy) if policy in POLICY_ORDER else len(POLICY_ORDER) + sum(map(ord, policy)) % 2
    return _PALETTE[i % len(_PALETTE)]


def _save(fig, folder: Path, name: str) -> list[Path]:
    from ..errors import InputError
    from ..fileio import output_dir
    paths = [folder / f"{name}.png", folder / f"{name}.svg"]
    try:
        output_dir(folder, "--output")
        fig.savefig(paths[0], dpi=130, bbox_inches="tight")
        fig.savefig(paths[1], bbox_inches="tight")
    except OSError as exc:
        raise InputError(str(folder), "--output", f"cannot write the figures ({exc.strerror or exc})") from None
    finally:
        plt.close(fig)
    return paths


def _values(jobs: pd.DataFrame, policy: str, metric: str) -> np.ndarray:
    scale = METRICS[metric][1]
    v = jobs.loc[jobs["policy"] == policy, metric].to_numpy(dtype=float) / scale
    return v[~np.isnan(v)]


def mean_bars(jobs: pd.DataFrame, metric: str, folder: Path, name: str, title: str) -> list[Path]:
    """Fig. 5 / 6: each policy's mean with its 95 % CI as a small black bar; log y axis when the
    means span more than 50×, every bar labelled with its value."""
    pols = ordered(jobs["policy"].unique())
    cis = [mean_ci(_values(jobs, p, metric)) for p in pols]
    means = np.array([c.mean for c in cis])
    fig, ax = plt.subplots(figsize=(1.0 + 0.9 * len(pols), 3.6))
    x = np.arange(len(pols))
    ax.bar(x, means, color=[colour(p) for p in pols], width=0.7)
    ax.errorbar(x, means, yerr=[means - [c.low for c in cis], [c.high for c in cis] - means], fmt="none",
                ecolor="black", capsize=4, lw=1.2)
    pos = means[np.isfinite(means) & (means > 0)]
    if len(pos) and pos.max() / pos.min() > 50:
        ax.set_yscale("log")
    for xi, m in zip(x, means):
        if np.isfinite(m):
            ax.annotate(f"{m:.3g}", (xi, m), textcoords="offset points", xytext=(0, 3), ha="center",
                        fontsize=7)
    ax.set_xticks(x, pols, rotation=30, ha="right")
    ax.set_ylabel(METRICS[metric][0])
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, folder, name)


def letter_value_plot(ax, samples: list[np.ndarray], positions, colours, *, width: float = 0.8,
                      floor: float | None = None) -> None:
    """Draw one letter-value plot per sample on `ax` (Hofmann, Wickham & Kafadar 2017): nested
    boxes for the fourths, eighths, … (Tukey's depth rule, `stats.letter_values`), each narrower and
    lighter than the one inside it, the median as a line, outliers as small dots. Values below
    `floor` are drawn at `floor` (for log axes)."""
    for s, x0, col in zip(samples, positions, colours):
        if not len(s):
            continue
        if floor is not None:
            s = np.maximum(s, floor)
        lv = letter_values(s)
        k = len(lv.boxes)
        rgb = np.array(matplotlib.colors.to_rgb(col))
        for i in range(k - 1, -1, -1):   # outermost first, innermost on top
            lo, hi = lv.boxes[i]
            w = width * (1 - 0.8 * i / max(k, 1))
            shade = 1 - (i + 1) / (k + 1)    # innermost darkest
            fc = rgb * (0.35 + 0.65 * shade) + (1 - (0.35 + 0.65 * shade)) * np.ones(3)
            ax.add_patch(Rectangle((x0 - w / 2, lo), w, max(hi - lo, 0), facecolor=fc, edgecolor="white",
                                   lw=0.4))
        ax.plot([x0 - width / 2, x0 + width / 2], [lv.median, lv.median], color="black", lw=1.2)
        if len(lv.outliers):
            ax.scatter(np.full(len(lv.outliers), x0), lv.outliers, s=3, marker="d", color=rgb * 0.6, lw=0)


def quantile_plot(jobs: pd.DataFrame, metric: str, folder: Path, name: str, title: str) -> list[Path]:
    """Fig. 7 / 8: letter-value plots per policy on a logarithmic axis."""
    pols = ordered(jobs["policy"].unique())
    samples = [_values(jobs, p, metric) for p in pols]
    floor = WAIT_FLOOR_H if metric == "waiting_time" else None
    fig, ax = plt.subplots(figsize=(1.0 + 0.9 * len(pols), 4.0))
    letter_value_plot(ax, samples, range(len(pols)), [colour(p) for p in pols], floor=floor)
    ax.set_yscale("log")
    ax.set_xlim(-0.6, len(pols) - 0.4)
    allv = np.concatenate([s for s in samples if len(s)] or [np.array([1.0])])
    if floor is not None:
        allv = np.maximum(allv, floor)
    ax.set_ylim(allv.min() / 1.5, allv.max() * 1.5)
    ax.set_xticks(range(len(pols)), pols, rotation=30, ha="right")
    label = METRICS[metric][0] + (" (< 1 s drawn at 1 s)" if floor is not None else "")
    ax.set_ylabel(label)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3, which="major")
    return _save(fig, folder, name)


def tail_plot(jobs: pd.DataFrame, metric: str, folder: Path, name: str, title: str, k: int = TAIL,
              seed: int = 0) -> list[Path]:
    """Fig. 9 / 10: for each policy the `k` largest values, one jittered dot per job."""
    pols = ordered(jobs["policy"].unique())
    rng = np.random.default_rng(seed)
    fig, ax = plt.subplots(figsize=(1.0 + 0.9 * len(pols), 4.0))
    n_tail = 0
    for i, p in enumerate(pols):
        v = np.sort(_values(jobs, p, metric))[::-1][:k]
        n_tail = max(n_tail, len(v))
        ax.scatter(i + rng.uniform(-0.3, 0.3, len(v)), v, s=2, color=colour(p), alpha=0.6, lw=0)
    ax.set_xticks(range(len(pols)), pols, rotation=30, ha="right")
    ax.set_ylabel(METRICS[metric][0])
    ax.set_title(f"{title} ({n_tail} largest per policy)", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, folder, name)


def normalised_boxplot(norm: pd.DataFrame, folder: Path, name: str, title: str, reference: str,
                       seed: int = 0) -> list[Path]:
    """Fig. 11 / 12: per policy, a boxplot of the part means normalised by `reference`'s, with one
    jittered dot per part. `norm`: rows = parts, columns = policies."""
    pols = ordered(norm.columns)
    rng = np.random.default_rng(seed)
    fig, ax = plt.subplots(figsize=(1.0 + 0.9 * len(pols), 3.8))
    data = [norm[p].dropna().to_numpy(float) for p in pols]
    ax.boxplot([d if len(d) else [np.nan] for d in data], positions=range(len(pols)), widths=0.6,
               showfliers=False, medianprops={"color": "black"})
    for i, (p, d) in enumerate(zip(pols, data)):
        ax.scatter(i + rng.uniform(-0.15, 0.15, len(d)), d, s=12, color=colour(p), zorder=3,
                   edgecolor="black", lw=0.3)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    finite = np.concatenate([d for d in data if len(d)] or [np.array([1.0])])
    if len(finite) and finite.max() / max(finite.min(), 1e-12) > 50:
        ax.set_yscale("log")
    ax.set_xticks(range(len(pols)), pols, rotation=30, ha="right")
    ax.set_ylabel(f"part mean / {reference} part mean")
    ax.set_title(f"{title} ({len(norm)} parts)", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, folder, name)


def step_function(t_on, t_off, weight) -> tuple[np.ndarray, np.ndarray]:
    """Σ of `weight` over the intervals [t_on, t_off) as a right-continuous step function: (times,
    values), values[k] holding on [times[k], times[k+1]); 0 before times[0] and after the last."""
    t_on, t_off, w = (np.asarray(a, float) for a in (t_on, t_off, weight))
    t = np.concatenate([t_on, t_off])
    if not len(t):
        return np.zeros(0), np.zeros(0)
    d = np.concatenate([w, -w])
    order = np.argsort(t, kind="stable")
    times, idx = np.unique(t[order], return_index=True)
    return times, np.cumsum(np.add.reduceat(d[order], idx))


def binned_mean(times: np.ndarray, values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Exact mean of the step function (times, values) over each bin [edges[i], edges[i+1])."""
    if not len(times):
        return np.zeros(len(edges) - 1)
    integral = np.concatenate([[0.0], np.cumsum(values[:-1] * np.diff(times))])   # ∫ up to times[k]
    k = np.searchsorted(times, edges, side="right") - 1
    kk = np.maximum(k, 0)
    at = np.where(k >= 0, integral[kk] + values[kk] * (edges - times[kk]), 0.0)
    return np.diff(at) / np.diff(edges)


#: final states of a job that did not complete successfully (docs/metrics.md): marked in the Gantt chart
KILLED_STATES = frozenset({"COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED", "COMPLETED_FAILED"})


def save_figure(fig, folder: Path, name: str) -> list[Path]:
    """Write `fig` as ``<folder>/<name>.png`` (130 dpi) and ``.svg``, close it, return the two paths."""
    return _save(fig, folder, name)


def _job_rects(jobs: pd.DataFrame):
    """(start, end, [(lo, hi), ...], killed) per started job: the contiguous ranges [lo, hi] of its
    `allocated_resources` (an interval set as Batsim writes it: ``"0-3 7"``, ascending, disjoint)."""
    st = pd.to_numeric(jobs["starting_time"], errors="coerce")
    fin = pd.to_numeric(jobs["finish_time"], errors="coerce")
    state = jobs["final_state"].fillna("").astype(str) if "final_state" in jobs else pd.Series("", jobs.index)
    out = []
    for a, b, alloc, fs in zip(st, fin, jobs["allocated_resources"].fillna("").astype(str), state):
        if not (np.isfinite(a) and np.isfinite(b)) or not alloc.strip():
            continue
        ivs = []
        for tok in alloc.split():
            lo, _, hi = tok.partition("-")
            ivs.append((int(lo), int(hi or lo)))
        out.append((a, b, ivs, fs in KILLED_STATES))
    return out


def gantt_axes(ax, jobs: pd.DataFrame, *, nb_res: int | None = None, unit_s: float = 86400.0,
               max_jobs: int | None = None, bins: int = 1200, rows: int = 200,
               t_range: tuple[float, float] | None = None, seed: int = 0):
    """Draw a Gantt chart of processors on `ax`: x = time / `unit_s`, y = processor id, [0, nb_res).

    `jobs`: Batsim `_jobs.csv` columns (starting_time, finish_time, allocated_resources as an interval
    set such as ``"0-3 7"``, final_state). Up to `max_jobs` started jobs (None: no limit): one rectangle
    per job and contiguous processor range, coloured per job (tab20, seeded), in a PolyCollection with
    gid "jobs"; killed jobs (`KILLED_STATES`) in a second one, gid "killed jobs", hatched with red edges.
    Above `max_jobs`: an image (gid "busy fraction") of `rows` processor blocks × `bins` time bins over
    `t_range` (default: first start to last end), each cell the exact busy fraction, and killed jobs as
    red ticks at their end (gid "killed jobs"). Returns the main artist."""
    rects = _job_rects(jobs)
    top = max([hi + 1 for *_, iv, _k in rects for _lo, hi in iv], default=0)
    nb = nb_res or top or 1
    ax.set_ylim(0, nb)
    ax.set_ylabel("processor")
    if not rects:
        return None
    t0, t1 = t_range or (min(r[0] for r in rects), max(r[1] for r in rects))
    if max_jobs is not None and len(rects) > max_jobs:
        rows = max(1, min(rows, nb))
        k = nb / rows
        edges = np.linspace(t0, t1, bins + 1)
        # per row: a step function of its busy processors (fractions at block edges), then its exact bin means
        recs: dict[int, tuple[list, list, list]] = {}
        kx, ky = [], []
        for a, b, iv, killed in rects:
            for lo, hi in iv:
                r0, r1 = int(lo // k), min(int((hi + 1 - 1e-9) // k), rows - 1)
                for r in range(r0, r1 + 1):
                    w = (min(hi + 1, (r + 1) * k) - max(lo, r * k)) / k
                    if w > 0:
                        on, off, ws = recs.setdefault(r, ([], [], []))
                        on.append(a)
                        off.append(b)
                        ws.append(w)
            if killed:
                kx.append(b / unit_s)
                ky.append((iv[0][0] + iv[0][1] + 1) / 2)
        grid = np.zeros((rows, bins))
        for r, (on, off, ws) in recs.items():
            grid[r] = binned_mean(*step_function(on, off, ws), edges)
        im = ax.imshow(np.clip(grid, 0, 1), aspect="auto", origin="lower", cmap="viridis", vmin=0, vmax=1,
                       extent=(t0 / unit_s, t1 / unit_s, 0, nb), interpolation="nearest")
        im.set_gid("busy fraction")
        ax.figure.colorbar(im, cax=ax.inset_axes([1.01, 0.0, 0.012, 1.0]), label="busy fraction")
        if kx:
            ax.scatter(kx, ky, marker="|", color="red", s=20, lw=0.8, gid="killed jobs",
                       label=f"killed ({len(kx)})")
            ax.legend(fontsize=7, loc="lower right", bbox_to_anchor=(1.0, 1.0), frameon=False, borderaxespad=0.1)
        return im
    rng = np.random.default_rng(seed)
    cmap = plt.get_cmap("tab20")
    polys, cols, kpolys = [], [], []
    for a, b, iv, killed in rects:
        c = cmap(rng.integers(20))
        for lo, hi in iv:
            x0, x1 = a / unit_s, b / unit_s
            poly = [(x0, lo), (x1, lo), (x1, hi + 1), (x0, hi + 1)]
            polys.append(poly)
            cols.append(c)
            if killed:
                kpolys.append(poly)
    coll = PolyCollection(polys, facecolors=cols, edgecolors="black", linewidths=0.1)
    coll.set_gid("jobs")
    ax.add_collection(coll)
    if kpolys:
        kc = PolyCollection(kpolys, facecolors="none", edgecolors="red", linewidths=0.6, hatch="////")
        kc.set_gid("killed jobs")
        ax.add_collection(kc)
        ax.add_patch(Rectangle((0, 0), 0, 0, facecolor="none", edgecolor="red", hatch="////",
                               label=f"killed ({sum(r[3] for r in rects)})"))
        ax.legend(fontsize=7, loc="lower right", bbox_to_anchor=(1.0, 1.0), frameon=False, borderaxespad=0.1)
    ax.set_xlim(t0 / unit_s, t1 / unit_s)
    return coll


def gantt(jobs: pd.DataFrame, folder: Path, name: str, title: str, nb_res: int | None = None,
          seed: int = 0) -> list[Path]:
    """Fig. 3: Gantt chart, one rectangle per job and contiguous range of its processors
    (`allocated_resources` as an interval set, e.g. ``"0-3 7"``) from its start to its end [days]
    (`gantt_axes` with no job limit)."""
    fig, ax = plt.subplots(figsize=(12, 4))
    gantt_axes(ax, jobs, nb_res=nb_res, unit_s=86400.0, seed=seed)
    ax.set_xlabel("time [days]")
    ax.set_title(title, fontsize=10)
    return _save(fig, folder, name)
