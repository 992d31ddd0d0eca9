"""The metrics, tables and figures of the BBSched study (Fan et al., *Scheduling Beyond CPUs for HPC*,
HPDC'19, §4.2 and §4.4) from the tidy per-job table of `burstbuffer reproduce` (`tidy.job_metrics`
columns plus ``scope`` and ``policy``).

**The paper's metrics (§4.2)**, one row per (scope, policy) in `paper_metrics`:

- node usage: node-seconds used by jobs inside the measurement window / (compute nodes × window length);
- BB usage: BB byte-seconds held by jobs (nodes × BB per node, from start to finish) inside the window /
  (the machine's total BB × window length);
- mean waiting time [h] and mean bounded slowdown (τ = 600 s, `metrics.definitions`; the paper's slowdown
  drops "abnormal" jobs that end at once, the bounded slowdown caps their weight instead) over the jobs
  submitted inside the window.

**The measurement window** (`measurement_window`): the paper drops the first half-month (warm-up) and the
last half-month (cool-down) of a four- to five-month trace. Here the window is [first submission + 15 d,
last submission − 15 d] when the submissions span at least `TRIM_MIN_SPAN` (60 days: at least a month is
left), else [first submission, last submission] with nothing dropped — the case of the bundled 1000 KTH
jobs (about two weeks). Either way the usages count only the time while jobs still arrive, not the drain
after the last submission, which is what the paper's cool-down drops.
"""
from __future__ import annotations

import math
from pathlib import Path
from ...lazy import lazy

np = lazy("numpy")  # numpy and pandas: imported on first use (burstbuffer.lazy)
pd = lazy("pandas")


DAY = 86400.0
#: the paper's warm-up and cool-down (§4.2): half a month each [s]
HALF_MONTH = 15 * DAY
#: the shortest submission span [s] on which the half-months are dropped
TRIM_MIN_SPAN = 60 * DAY
#: upper edges of the BB request classes of `wait_by_bb_class`, as fractions of the machine's total BB
#: (the first class is "no BB request"; the paper's Fig. 10 uses TB classes of Theta's 2.16 PB)
BB_CLASS_EDGES = (0.02, 0.05, 0.10)


def measurement_window(submissions) -> tuple[float, float, bool]:
    """(start, end [s], trimmed) of the measurement window of a workload's submission times (module
    docstring). ValueError if `submissions` is empty."""
    s = np.asarray(submissions, dtype=float)
    s = s[~np.isnan(s)]
    if not len(s):
        raise ValueError("no submission time")
    t0, t1 = float(s.min()), float(s.max())
    if t1 - t0 >= TRIM_MIN_SPAN:
        return t0 + HALF_MONTH, t1 - HALF_MONTH, True
    return t0, t1, False


def usage(start, finish, weight, a: float, b: float, capacity: float) -> float:
    """Σ weight × |[start, finish] ∩ [a, b]| / (capacity × (b − a)): the share of `capacity` (nodes, bytes)
    the intervals used over [a, b]; NaN rows (jobs that never ran) count 0. NaN when b ≤ a or capacity ≤ 0."""
    if not (b > a) or not capacity > 0:
        return math.nan
    st = np.asarray(start, dtype=float)
    fi = np.asarray(finish, dtype=float)
    w = np.asarray(weight, dtype=float)
    overlap = np.clip(np.minimum(fi, b) - np.maximum(st, a), 0.0, None)
    used = np.nansum(np.where(np.isnan(overlap), 0.0, overlap * w))
    return float(used / (capacity * (b - a)))


def bb_bytes(jobs: pd.DataFrame) -> pd.Series:
    """Each job's total BB request [bytes]: nodes × BB per node (0 when absent)."""
    res = pd.to_numeric(jobs["requested_number_of_resources"], errors="coerce").fillna(0)
    per = pd.to_numeric(jobs.get("bb_per_node", pd.Series(0, index=jobs.index)), errors="coerce").fillna(0)
    return res * per


def paper_metrics(jobs: pd.DataFrame, capacities: dict, window_fn=None) -> pd.DataFrame:
    """One row per (scope, policy) of the tidy per-job table `jobs`: scope, policy, node_usage, bb_usage
    (fractions), wait_h_mean [h], bsld_mean, jobs (submitted in the window), started (of them),
    window_start, window_end [s], trimmed — the paper's §4.2 metrics over the scope's measurement window
    (module docstring). `capacities`: (scope, policy) → (compute nodes, total BB bytes); a run missing
    there gets NaN usages. `window_fn`: submissions → (start, end, trimmed) instead of `measurement_window`."""
    rows = []
    window_fn = window_fn or measurement_window
    windows = {sc: window_fn(g["submission_time"]) for sc, g in jobs.groupby("scope", sort=False)}
    for (scope, policy), g in jobs.groupby(["scope", "policy"], sort=False):
        a, b, trimmed = windows[scope]
        n, bb = capacities.get((scope, policy), (math.nan, math.nan))
        res = pd.to_numeric(g["requested_number_of_resources"], errors="coerce").fillna(0)
        inside = g[(g["submission_time"] >= a) & (g["submission_time"] <= b)]
        rows.append({"scope": scope, "policy": policy,
                     "node_usage": usage(g["starting_time"], g["finish_time"], res, a, b, n),
                     "bb_usage": usage(g["starting_time"], g["finish_time"], bb_bytes(g), a, b, bb),
                     "wait_h_mean": float(inside["waiting_time"].mean() / 3600),
                     "bsld_mean": float(inside["bounded_slowdown"].mean()),
                     "jobs": len(inside), "started": int(inside["waiting_time"].notna().sum()),
                     "window_start": a, "window_end": b, "trimmed": trimmed})
    return pd.DataFrame(rows, columns=["scope", "policy", "node_usage", "bb_usage", "wait_h_mean", "bsld_mean",
                                       "jobs", "started", "window_start", "window_end", "trimmed"])


def class_labels(total_bb: float, edges=BB_CLASS_EDGES) -> list[str]:
    """The names of `wait_by_bb_class`'s classes: "none", then "≤ x GB (y %)" … and "> z GB"."""
    gb = lambda f: f"{f * total_bb / 1e9:.3g} GB"  # noqa: E731
    out = ["none"]
    lo = 0.0
    for e in edges:
        out.append(f"{gb(lo)}–{gb(e)} ({100 * lo:g}–{100 * e:g} %)" if lo else f"≤ {gb(e)} (≤ {100 * e:g} %)")
        lo = e
    out.append(f"> {gb(lo)} (> {100 * lo:g} %)")
    return out


def bb_class(jobs: pd.DataFrame, total_bb: float, edges=BB_CLASS_EDGES) -> pd.Series:
    """Each job's class index: 0 = no BB request, k = total request in (edges[k-2], edges[k-1]] of
    `total_bb` (edges[-1] = 0), len(edges) + 1 = above the last edge."""
    frac = bb_bytes(jobs) / float(total_bb)
    cls = np.searchsorted(np.asarray(edges, dtype=float), frac.to_numpy(), side="left") + 1
    return pd.Series(np.where(frac.to_numpy() > 0, cls, 0), index=jobs.index)


def wait_by_bb_class(jobs: pd.DataFrame, total_bb: float, edges=BB_CLASS_EDGES) -> pd.DataFrame:
    """Mean waiting time [h] per policy (rows, in first-seen order) and BB request class (columns,
    `class_labels`; Fan et al. 2019 §4.4, Fig. 10) over the jobs of `jobs` that started; the row ``jobs``
    counts each class's jobs (of the first policy). Empty classes are NaN."""
    labels = class_labels(total_bb, edges)
    cls = bb_class(jobs, total_bb, edges)
    started = jobs["waiting_time"].notna()
    t = (jobs.loc[started, "waiting_time"] / 3600).groupby([jobs.loc[started, "policy"], cls[started]]).mean()
    wide = t.unstack().reindex(index=list(dict.fromkeys(jobs["policy"])), columns=range(len(labels)))
    first = jobs["policy"] == jobs["policy"].iloc[0]
    counts = cls[first].value_counts().reindex(range(len(labels)), fill_value=0)
    wide.loc["jobs"] = counts.to_numpy()
    wide.columns = labels
    return wide


def gd_summary(decisions: pd.DataFrame) -> dict:
    """The GA's approximation over one run's ``decisions.csv`` rows: ga (GA decisions), recorded (with a
    GD, ≤ 20 candidates), exact (GD = 0), mean, q0.9 and max GD, median candidates of the GA decisions."""
    ga = decisions[decisions["solver"].isin(["ga", "nsga2"])]
    gd = pd.to_numeric(ga["gd"], errors="coerce").dropna()
    return {"ga": len(ga), "recorded": len(gd), "exact": int((gd == 0).sum()),
            "mean": float(gd.mean()) if len(gd) else math.nan,
            "q0.9": float(gd.quantile(0.9)) if len(gd) else math.nan,
            "max": float(gd.max()) if len(gd) else math.nan,
            "candidates_median": float(ga["candidates"].median()) if len(ga) else math.nan}


def read_capacity(run_dir: Path, default: tuple[int, int]) -> tuple[int, int]:
    """(compute nodes, total BB bytes) of a run from its ``run.json`` (`metrics.runinfo.platform_size`),
    `default` when it is absent or unreadable."""
    from ...metrics.runinfo import platform_size
    return platform_size(run_dir) or default


# --- figures -------------------------------------------------------------------------------------------
def grouped_bars(table: pd.DataFrame, folder: Path, name: str, title: str, ylabel: str,
                 percent: bool = False) -> list[Path]:
    """One group of bars per workload (columns of `table`), one bar per policy (rows, in order), as
    the paper's Fig. 6-8 and 12; saved as `folder`/`name`.png and .svg (the two paths returned)."""
    from ...metrics.figures import save_figure
    import matplotlib.pyplot as plt
    palette = plt.get_cmap("tab20").colors
    pols, scopes = list(table.index), list(table.columns)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(scopes) * max(1, len(pols)) / 4), 3.6))
    width = 0.8 / max(1, len(pols))
    x = np.arange(len(scopes))
    for i, p in enumerate(pols):
        v = table.loc[p].to_numpy(dtype=float) * (100 if percent else 1)
        ax.bar(x + (i - (len(pols) - 1) / 2) * width, v, width, label=p, color=palette[i % len(palette)],
               hatch="//" if p.endswith("-cpu") else ("oo" if p.endswith("-bb") and p != "sjf-bb" else None),
               edgecolor="white", linewidth=0.3)
    ax.set_xticks(x, scopes)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=min(5, len(pols)), loc="upper center", bbox_to_anchor=(0.5, -0.12), frameon=False)
    return save_figure(fig, folder, name)


#: job classes of `class_waits` (Fan et al. 2019 Fig. 9-11, Theta-S4): small jobs ≤ 8 of 4,392 nodes and large
#: ones ≥ 1,024 of them, as shares of the machine (at least 1 node); short and long: the workload's lowest and
#: highest quartile of run time
SMALL_SHARE = 8 / 4392
LARGE_SHARE = 1024 / 4392


def class_waits(jobs: pd.DataFrame, nodes: dict, window_fn=None) -> pd.DataFrame:
    """Mean waiting time [h] per (scope, policy) of job classes among the jobs submitted inside the
    measurement window (`window_fn`, default `measurement_window`): ``wait_h_bb`` / ``wait_h_nobb`` (with
    / without a BB request), ``wait_h_small`` / ``wait_h_large`` (`SMALL_SHARE`, `LARGE_SHARE` of the
    machine's `nodes[(scope, policy)]`, default 96), ``wait_h_short`` / ``wait_h_long`` (run time in
    the scope's lowest / highest quartile, over every policy's jobs). NaN for an empty class."""
    window_fn = window_fn or measurement_window
    rows = []
    for scope, gs in jobs.groupby("scope", sort=False):
        a, b, _ = window_fn(gs["submission_time"])
        rt = gs["runtime"]
        q1, q3 = float(rt.quantile(0.25)), float(rt.quantile(0.75))
        for policy, g in gs.groupby("policy", sort=False):
            n = nodes.get((scope, policy), (96, 0))[0]
            x = g[(g["submission_time"] >= a) & (g["submission_time"] <= b)]
            w = x["waiting_time"] / 3600
            res = x["requested_number_of_resources"]
            bb = bb_bytes(x) > 0
            m = lambda mask: float(w[mask].mean()) if mask.any() else math.nan  # noqa: E731
            rows.append({"scope": scope, "policy": policy, "wait_h_bb": m(bb), "wait_h_nobb": m(~bb),
                         "wait_h_small": m(res <= max(1, math.floor(SMALL_SHARE * n))),
                         "wait_h_large": m(res >= max(1, math.ceil(LARGE_SHARE * n))),
                         "wait_h_short": m(x["runtime"] <= q1), "wait_h_long": m(x["runtime"] >= q3)})
    return pd.DataFrame(rows, columns=["scope", "policy", *CLASS_WAITS])


CLASS_WAITS = ("wait_h_bb", "wait_h_nobb", "wait_h_small", "wait_h_large", "wait_h_short", "wait_h_long")
