"""Tables of a reproduction (Kopanski & Rzadca 2021, §4.2): the summary per scope and policy, and the per-part
means normalised by the reference policy (docs/metrics.md).

Input: the tidy per-job table (`tidy.job_metrics` columns plus `scope` — ``whole`` or ``part-NN``
— and `policy`) and, optionally, each run's summary (utilisations and makespan computed with the
platform, see `summary.Summary`) keyed by (scope, policy).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .figures import ordered
from .stats import normalise_by
from .tidy import describe

#: reference policy of the normalisation (Kopanski & Rzadca 2021, §4.2)
REFERENCE = "sjf-bb"


def summary_table(jobs: pd.DataFrame, run_summaries: dict | None = None) -> pd.DataFrame:
    """One row per (scope, policy): job counts by final state; waiting time [h] and bounded
    slowdown: mean, 95 % CI, quantiles, max; processor and BB utilisation, makespan [s], the run's
    wall time [s] and CPU time [s] of scheduler + simulator (from `run_summaries[(scope, policy)]`, a
    dict with the `Summary` fields, `wall_time` and `cpu_time` {process: s}; NaN when absent)."""
    rows = []
    run_summaries = run_summaries or {}
    for (scope, policy), g in jobs.groupby(["scope", "policy"], sort=False):
        st = g["final_state"]
        row = {"scope": scope, "policy": policy, "jobs": len(g), "started": int(g["waiting_time"].notna().sum()),
               "completed": int((st == "COMPLETED_SUCCESSFULLY").sum()),
               "killed": int(st.isin(["COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED", "COMPLETED_FAILED"]).sum()),
               "rejected": int((st == "REJECTED").sum())}
        for col, scale, pre in (("waiting_time", 3600.0, "wait_h"), ("bounded_slowdown", 1.0, "bsld")):
            for k, v in describe(g[col], scale=scale).items():
                if k != "n":
                    row[f"{pre}_{k}"] = v
        s = run_summaries.get((scope, policy), {})
        row["cpu_utilisation"] = s.get("cpu_utilisation", np.nan)
        row["bb_utilisation"] = s.get("bb_utilisation", np.nan)
        sub = g["submission_time"].min()
        row["makespan_s"] = s.get("makespan", float(g["finish_time"].max() - sub) if len(g) else np.nan)
        row["wall_time_s"] = s.get("wall_time", np.nan)
        cpu = s.get("cpu_time") or {}
        row["cpu_time_s"] = sum(cpu.values()) if cpu else np.nan
        rows.append(row)
    df = pd.DataFrame(rows)
    if len(df):
        order = {p: i for i, p in enumerate(ordered(df["policy"]))}
        df = df.assign(_o=df["policy"].map(order)).sort_values(["scope", "_o"], kind="stable").drop(columns="_o")
    return df.reset_index(drop=True)


def part_means(jobs: pd.DataFrame, reference: str = REFERENCE) -> pd.DataFrame:
    """One row per (part, policy) over the ``part-*`` scopes: mean waiting time [h], mean bounded
    slowdown, and both normalised by `reference`'s mean on the same part (NaN if `reference` did
    not run on that part)."""
    parts = jobs[jobs["scope"].astype(str).str.startswith("part-")]
    cols = ["scope", "policy", "wait_mean_h", "bsld_mean", "wait_norm", "bsld_norm"]
    if parts.empty:
        return pd.DataFrame(columns=cols)
    g = parts.groupby(["scope", "policy"])
    m = pd.DataFrame({"wait_mean_h": g["waiting_time"].mean() / 3600, "bsld_mean": g["bounded_slowdown"].mean()})
    out = m.reset_index()
    for src, dst in (("wait_mean_h", "wait_norm"), ("bsld_mean", "bsld_norm")):
        wide = m[src].unstack("policy")
        if reference in wide:
            norm = normalise_by(wide, reference).stack().rename(dst).reset_index()
            out = out.merge(norm, on=["scope", "policy"], how="left")
        else:
            out[dst] = np.nan
    order = {p: i for i, p in enumerate(ordered(out["policy"]))}
    out = out.assign(_o=out["policy"].map(order)).sort_values(["scope", "_o"]).drop(columns="_o")
    return out[cols].reset_index(drop=True)


def normalised_wide(pm: pd.DataFrame, column: str) -> pd.DataFrame:
    """`part_means` column as a parts × policies table (policies in the paper's order)."""
    if pm.empty:
        return pd.DataFrame()
    wide = pm.pivot(index="scope", columns="policy", values=column)
    return wide[ordered(wide.columns)]


def class_means(jobs: pd.DataFrame, classify, wait: str = "wait_h_{}", bsld: str = "bsld_{}") -> pd.DataFrame:
    """One row per (scope, policy) of the tidy per-job table `jobs`, over the jobs that every policy of the
    scope started (column ``common``: how many): for each class of ``classify(sub)`` — a dict class name →
    boolean array over the rows of `sub`, those common jobs' rows — the number of jobs ``n_<class>``, their
    mean waiting time [h] (column `wait` with the class name) and mean bounded slowdown (column `bsld`); NaN
    for an empty class. The studies' per-class tables (orders: Allcock et al. 2017's classes; backfilling:
    the lecture slides' small/large × short/long)."""
    rows = []
    for scope, g in jobs.groupby("scope", sort=False):
        started = g.dropna(subset=["waiting_time"])
        counts = started.groupby("job_id")["policy"].nunique()
        common = set(counts.index[counts == g["policy"].nunique()])
        sub = started[started["job_id"].isin(common)]
        classes = classify(sub)
        waits, bslds = sub["waiting_time"].to_numpy(float), sub["bounded_slowdown"].to_numpy(float)
        for pol in g["policy"].unique():
            on = (sub["policy"] == pol).to_numpy()
            row = {"scope": scope, "policy": pol, "common": len(common)}
            for c, mask in classes.items():
                m = mask & on
                row[f"n_{c}"] = int(m.sum())
                row[wait.format(c)] = float(waits[m].mean() / 3600) if m.any() else math.nan
                row[bsld.format(c)] = float(bslds[m].mean()) if m.any() else math.nan
            rows.append(row)
    return pd.DataFrame(rows)
