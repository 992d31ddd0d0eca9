"""A condition measured on a study's per-job rows (`measure`): the effect and its noise interval over
independent replicates (`burstbuffer.metrics.claims`).
"""
from __future__ import annotations

import math
from dataclasses import replace

from ...lazy import lazy
from .conditions import Condition
from .quantities import statistic, LOWER


np = lazy("numpy")  # numpy and pandas: imported on first use (burstbuffer.lazy)
pd = lazy("pandas")


class Rows:
    """The per-job rows of each (scope, column) of a per-job table, split once."""

    def __init__(self, jobs: pd.DataFrame):
        self.jobs = jobs
        self.groups = {k: g for k, g in jobs.groupby([jobs["scope"].astype(str), jobs["policy"].astype(str)],
                                                      sort=False)}

    def __call__(self, label: str, scope: str) -> pd.DataFrame:
        """The rows of column `label` in `scope` (``parts``: every ``part-NN`` scope; ``PREFIX*``: every scope
        starting with PREFIX)."""
        if scope == "parts" or scope.endswith("*"):
            prefix = "part-" if scope == "parts" else scope[:-1]
            got = [g for (sc, pol), g in self.groups.items() if pol == label and sc.startswith(prefix)]
            return pd.concat(got) if got else self.jobs.iloc[0:0]
        return self.groups.get((scope, label), self.jobs.iloc[0:0])


def paired_values(cond: Condition, rt: pd.DataFrame, rc: pd.DataFrame, tj=None, cj=None):
    """(t, c): the per-unit values of treatment rows `rt` and control rows `rc`, paired on their common units;
    for a condition comparing classes of jobs, each side's class `tj`, `cj` ((name, selection); unpaired:
    the values of each)."""
    if not cond.paired:
        sel = lambda r, j: r if j is None or r.empty else r[np.asarray(j[1](r), bool)]  # noqa: E731
        return cond.metric.units(sel(rt, tj)).to_numpy(float), cond.metric.units(sel(rc, cj)).to_numpy(float)
    t, c = cond.metric.units(rt), cond.metric.units(rc)
    t = t[~t.index.duplicated()]
    c = c[~c.index.duplicated()]
    common = t.index.intersection(c.index)
    return t.loc[common].to_numpy(float), c.loc[common].to_numpy(float)


def replicate_values(cond: Condition, rows: pd.DataFrame) -> dict:
    """The rows of one side split by replicate: key → rows. The key is the ``replicate`` column's value (0
    for every row when the table has none); for a condition over a group of scopes (``parts``, ``PREFIX*``),
    (replicate, scope): each part of each draw is a replicate of its own (the trace's parts are the paper's
    own replicates), and so is each scope of a group a study draws as its own replicates."""
    rep = rows["replicate"].to_numpy() if "replicate" in rows else np.zeros(len(rows), int)
    if cond.metric.over == "parts" or cond.scope == "parts" or cond.scope.endswith("*"):
        return {k: g for k, g in rows.groupby([rep, rows["scope"].astype(str).to_numpy()], sort=True)}
    return {k: g for k, g in rows.groupby(rep, sort=True)}


def measure(cond: Condition, rt: pd.DataFrame, rc: pd.DataFrame, *, tj=None, cj=None,
            paired: bool = True) -> dict:
    """The effect of one condition on treatment rows `rt` and control rows `rc` (per-job rows with a
    ``replicate`` column; tj, cj: each side's class of jobs as `Condition.sides` gives them) and its noise
    floor (`Replicates`): a dict with value (the effect), interval [low, high] (NaN when unknown), n (the
    replicates), treatment_value and control_value (the metric's statistic, mean over replicates),
    per_replicate (the paired effects; unpaired: []), paired, noise (text) and why_no_interval ("" when the
    interval is known). `paired`: treatment and control share each replicate's inputs (the same replicate
    keys); False: independent replicates a side (``share``: paired by position, the only form it has). A
    share whose replicates are one unit each (a part) is a binomial proportion: Clopper-Pearson interval.
    The one rule `judge` (a study's claims) and `burstbuffer compare` use."""
    from ..stats import binomial_interval, paired_interval, unpaired_interval
    f = statistic(cond.metric.stat)
    gt, gc = replicate_values(cond, rt), replicate_values(cond, rc)
    lvl = cond.noise.level
    out = {"paired": paired, "per_replicate": []}
    if paired or cond.effect == "share":
        keys = sorted(set(gt) & set(gc)) if paired else list(zip(sorted(gt), sorted(gc)))
        per, tv, cv = [], [], []
        for k in keys:
            kt, kc = (k, k) if paired else k
            t, c = paired_values(cond, gt[kt], gc[kc], tj, cj)
            if len(t) and len(c):
                per.append(float(cond.effect_of(t, c)))
                tv.append(float(f(t)))
                cv.append(float(f(c)))
        ci = paired_interval(per, lvl)
        binary = cond.effect == "share" and len(per) >= 2 and all(v in (0.0, 100.0) for v in per)
        if binary:       # one unit per replicate (a part): the share of them is a binomial proportion
            k = sum(v == 100.0 for v in per)
            lo, hi = binomial_interval(k, len(per), lvl)
            ci = replace(ci, low=100 * lo, high=100 * hi, why="")
        out.update(value=ci.mean, interval=[ci.low, ci.high], n=ci.n, per_replicate=per,
                   treatment_value=float(np.mean(tv)) if tv else math.nan,
                   control_value=float(np.mean(cv)) if cv else math.nan, why_no_interval=ci.why)
        if binary:
            out["noise"] = (f"{ci.n} replicates (one unit each: Clopper-Pearson binomial), {100 * lvl:g} % "
                            "interval")
            return out
    else:
        sel = lambda r, j: r if j is None or r.empty else r[np.asarray(j[1](r), bool)]  # noqa: E731
        side = lambda g, j: [float(f(u)) for u in (cond.metric.units(sel(r, j)).to_numpy(float)  # noqa: E731
                                                   for r in g.values()) if len(u)]
        tv, cv = side(gt, tj), side(gc, cj)
        # the difference in the better direction: C − T (lower is better) or T − C
        a, b = (cv, tv) if cond.better == LOWER else (tv, cv)
        ci = unpaired_interval(a, b, lvl)
        cm = float(np.mean(cv)) if cv else math.nan
        eff = lambda d: cond.effect_of_difference(d, cm) if d == d else math.nan  # noqa: E731
        out.update(value=eff(ci.mean), interval=[eff(ci.low), eff(ci.high)], n=ci.n,
                   treatment_value=float(np.mean(tv)) if tv else math.nan, control_value=cm,
                   why_no_interval=ci.why)
        out["n_sides"] = [len(tv), len(cv)]
    out["noise"] = cond.noise.text(out["n"], paired)
    return out
