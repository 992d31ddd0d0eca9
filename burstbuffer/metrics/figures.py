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
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{name}.png", folder / f"{name}.svg"]
    fig.savefig(paths[0], dpi=130, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight")
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


def gantt(jobs: pd.DataFrame, folder: Path, name: str, title: str, nb_res: int | None = None,
          seed: int = 0) -> list[Path]:
    """Fig. 3: Gantt chart, one rectangle per job and contiguous range of its processors
    (`allocated_resources` as an interval set, e.g. ``"0-3 7"``) from its start to its end [days]."""
    from procset import ProcSet

    rng = np.random.default_rng(seed)
    polys, cols = [], []
    day = 86400.0
    started = jobs[pd.to_numeric(jobs["starting_time"], errors="coerce").notna()]
    cmap = plt.get_cmap("tab20")
    top = 0
    for st, fin, alloc in zip(pd.to_numeric(started["starting_time"]), pd.to_numeric(started["finish_time"]),
                              started["allocated_resources"].fillna("").astype(str)):
        if not alloc.strip() or not np.isfinite(fin):
            continue
        c = cmap(rng.integers(20))
        for lo, hi in ProcSet.from_str(alloc).intervals():
            x0, x1 = st / day, fin / day
            polys.append([(x0, lo), (x1, lo), (x1, hi + 1), (x0, hi + 1)])
            cols.append(c)
            top = max(top, hi + 1)
    fig, ax = plt.subplots(figsize=(12, 4))
    ax.add_collection(PolyCollection(polys, facecolors=cols, edgecolors="black", linewidths=0.1))
    if polys:
        xs = np.array([p[0][0] for p in polys] + [p[1][0] for p in polys])
        ax.set_xlim(xs.min(), xs.max())
    ax.set_ylim(0, nb_res or top or 1)
    ax.set_xlabel("time [days]")
    ax.set_ylabel("processor")
    ax.set_title(title, fontsize=10)
    return _save(fig, folder, name)
