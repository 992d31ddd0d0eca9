"""The BBSched study's claims (Fan et al., *Scheduling Beyond CPUs for HPC*, HPDC'19, §4.4, Table 3, Fig. 6-11,
§6) on the verdict semantics of `burstbuffer.metrics.claims` (docs/verdicts.md): each claim names its
treatment and control columns, the metric, the paper's number and a two-sided band around it with its
reason, and is judged on the paper-regime workloads of `bbsched_regime` (Cori-like and Theta-like,
Original and S1-S4): one condition per workload over its `bbsched_regime.REPLICATES` replicate scopes
(scope ``<machine>-<scenario>-r*``: each ``<machine>-<scenario>-r<k>`` one replicate), whose noise floor is
the Student's t interval over the per-replicate paired effects (`burstbuffer.metrics.claims.measure`).

What a claim compares is the paper's; where the paper gives a number for a workload, the condition runs
on that workload only. The study's regime checks (`bbsched_regime.GroupRegime.checks`) gate every claim:
one failed check and the verdicts are *out of regime*.

**Bands.** `REL` = ± 50 % of the paper's effect, for every sized claim: the machines here have 96 nodes
and KTH's jobs in place of Cori's 12,076 and Theta's 4,392 nodes and their traces, so the same mechanism
gives an effect of the same order, not the same figure (the project's width; the number is the paper's).
Where the paper bounds an effect ("no more than 3.72 %", "less than 26 %") the band is the bound.

**Metrics.** Waiting time: mean over the jobs submitted inside the measurement window
(`bbsched_regime.window`), paired by job. Node and BB usage: per hour of the window, the share of the
machine's nodes (BB bytes) the running jobs hold, paired by hour; their mean is the usage of §4.2.
"""
from __future__ import annotations

import math

from ...lazy import lazy
from ...metrics.claims import HIGHER, LOWER, NO_DIFFERENCE, Band, Claim, Condition, Metric, around
from ...metrics.verdicts import PROJECT
from . import bbsched_regime as R

np = lazy("numpy")  # numpy and pandas: imported on first use (burstbuffer.lazy)
pd = lazy("pandas")

BASELINE = "bbsched-naive"
#: the width of every sized band (module docstring)
REL = 0.5
REL_REASON = "the paper's number ± 50 %: 96 nodes and KTH's jobs instead of the paper's machine and trace"
#: the length of one usage unit [s]
HOUR = 3600.0
#: the machines' compute nodes and total BB on the bundled platforms (`fan2019`: 12 BB nodes × 1192 / 3934 GB)
CAPACITY = {"cori": (96, 12 * 1192 * 10 ** 9), "theta": (96, 12 * 3934 * 10 ** 9)}


def _in_window(rows: pd.DataFrame):
    a, b, _ = R.window(rows["submission_time"])
    s = rows["submission_time"].to_numpy(float)
    return (s >= a) & (s <= b)


def _bb_total(rows: pd.DataFrame):
    res = pd.to_numeric(rows["requested_number_of_resources"], errors="coerce").fillna(0).to_numpy(float)
    per = (pd.to_numeric(rows["bb_per_node"], errors="coerce").fillna(0).to_numpy(float)
           if "bb_per_node" in rows else np.zeros(len(rows)))
    return res * per


def hourly_usage(rows: pd.DataFrame, weight, capacity: float) -> pd.Series:
    """Per hour of the measurement window of `rows` (one column's per-job rows of one scope): Σ weight ×
    time run in the hour / (`capacity` × hour), indexed by the hour's number. `weight`: per-job array
    (nodes, BB bytes). Empty for no rows."""
    if not len(rows):
        return pd.Series(dtype=float)
    a, b, _ = R.window(rows["submission_time"])
    n = max(1, int((b - a) // HOUR))
    edges = a + HOUR * np.arange(n + 1)
    st = rows["starting_time"].to_numpy(float)
    fi = rows["finish_time"].to_numpy(float)
    w = np.asarray(weight, float)
    ok = ~np.isnan(st) & ~np.isnan(fi) & (w > 0)
    st, fi, w = st[ok], fi[ok], w[ok]
    lo, hi = edges[:-1], edges[1:]
    overlap = np.clip(np.minimum(fi[:, None], hi[None, :]) - np.maximum(st[:, None], lo[None, :]), 0.0, None)
    return pd.Series((w[:, None] * overlap).sum(axis=0) / (capacity * HOUR), index=np.arange(n))


def _machine(scope: str) -> str:
    return scope.split("-")[0]


def node_usage(machine: str) -> Metric:
    """Node usage of §4.2 on `machine`'s platform, per hour of the window."""
    nodes = CAPACITY[machine][0]
    return Metric("node usage", over="jobs", values=lambda r: hourly_usage(
        r, pd.to_numeric(r["requested_number_of_resources"], errors="coerce").fillna(0).to_numpy(float), nodes))


def bb_usage(machine: str) -> Metric:
    """BB usage of §4.2 on `machine`'s platform, per hour of the window."""
    cap = CAPACITY[machine][1]
    return Metric("BB usage", over="jobs", values=lambda r: hourly_usage(r, _bb_total(r), cap))


def wait(select=None, name: str = "mean waiting time [h]") -> Metric:
    """Mean waiting time [h] of the jobs submitted in the window (and kept by `select`)."""
    keep = (lambda r: _in_window(r) & np.asarray(select(r), bool)) if select else _in_window
    return Metric(name, column="waiting_time", stat="mean", scale=3600.0, select=keep)


def conds(treatment: str, control: str, group: str, metric, band: Band, better: str = LOWER,
          asserts: str = "difference", **kw) -> tuple[Condition, ...]:
    """The `Condition` of `group` (e.g. ``theta-S4``) over its replicate scopes (`bbsched_regime.replicates_of`):
    the effect is the mean of the per-replicate effects (paired by job or hour; each class's jobs with
    `treatment_jobs`/`control_jobs` in `kw`), the noise floor their Student's t interval. `metric`: a
    `Metric` or a function machine → `Metric`. A 1-tuple, so that a claim's conditions add up."""
    m = metric(_machine(group)) if callable(metric) and not isinstance(metric, Metric) else metric
    side = lambda lab, j: lab + (f" ({j[0]})" if j else "")  # noqa: E731
    return (Condition(treatment, control, m, band, better=better, asserts=asserts,
                      scope=R.replicates_of(*group.split("-")), label=f"{side(treatment, kw.get('treatment_jobs'))} vs "
                            f"{side(control, kw.get('control_jobs'))} on {group}", **kw),)


def _around(v: float) -> Band:
    return around(v, REL, REL_REASON)


def _class(total_bb: float, lo: float, hi: float):
    """Jobs whose total BB request is in [lo, hi) × `total_bb`."""
    def f(r):
        x = _bb_total(r)
        return (x >= lo * total_bb) & (x < hi * total_bb)
    return f


#: Fig. 9's classes on a 96-node machine by the share of Theta's 4,392 nodes: 1-8 nodes (≤ 0.18 %) → the
#: smallest jobs (1 node); 1024-4392 nodes (≥ 23.3 %) → ≥ 23 nodes
SMALL_NODES, LARGE_NODES = 1, math.ceil(96 * 1024 / 4392)
#: Fig. 10's classes as shares of Theta's 2.16 PB: 100-200 TB → [4.63 %, 9.26 %)
THETA_BB = 2.16e15


def _relative_to(ratio: float) -> float:
    """The `relative` effect [%] (HIGHER) of a treatment `ratio` × the control: 100 × (ratio − 1)."""
    return 100.0 * (ratio - 1.0)


def _cut_vs(t_cut: float, c_cut: float) -> float:
    """The relative wait reduction [%] of a treatment cutting the baseline's wait by `t_cut` % against a
    control cutting it by `c_cut` %: 100 × (1 − (1 − t) / (1 − c))."""
    return 100.0 * (1.0 - (1.0 - t_cut / 100) / (1.0 - c_cut / 100))


#: the paper's own words for each claim (Fan et al., HPDC'19; the section in each claim's source)
WORDS = {
    "wait-theta-s4": "BBSched achieves the most significant reductions on average job wait time, by up to 33.44% on "
                     "Cori and up to 41% on Theta compared with the baseline.",
    "wait-cori-s4": "BBSched achieves the most significant reductions on average job wait time, by up to 33.44% on "
                    "Cori and up to 41% on Theta compared with the baseline.",
    "wait-theta-original": "BBSched reduces the average job wait time by 21.30% on Theta-Original, while it reduces the "
                           "average job wait time by 41% on Theta-S4.",
    "second-best": "The second best method, Weighted_BB, improves average job wait time by less than 26% on both "
                   "machines.",
    "node-gain": "BBSched markedly improves node utilization on Theta-S3 (12.69%), Theta-S4 (20.03%) and Cori-S4 "
                 "(16.28%) compared to the baseline",
    "bb-gain": "BBSched yields the best performance on burst buffer usage for all the workloads, and the "
               "performance improvement is as high as 15.46% over the baseline.",
    "biased-node-cost": "Weighted_BB and Constrained_BB increase burst buffer usage by 10.54% and 12.09% at the cost of "
                        "decreasing node usage by 6.11% and 4.84% respectively on Theta-S1.",
    "constrained-cpu-bb": "Constrained_CPU improves node usage by 0.18%, but reduces burst buffer usage by 1.33% on "
                          "Cori-S1.",
    "bin-packing": "Bin_Packing is capable of improving both node and burst buffer usage, the improvement is no more"
                   " than 3.72%",
    "window-10-20": "As we can see, the most significant improvement is obtained when the window size is between 10 "
                    "and 20. (Table 3: the numbers)",
    "window-20-50": "The improvement slows down with further increase in window size. (Table 3: the numbers)",
    "small-jobs": "BBSched reduces average wait time by 48.29% on 1-8 node jobs, compared to 31.59% of reduction on"
                  " 1024-4392 node jobs.",
    "bb-class-wait": "when using the baseline method, jobs with more than 200TB burst buffer requests wait, on "
                     "average, 10.25 hours as opposed to 2.5 hours of jobs without burst buffer requests.",
    "constrained-cpu-classes": "although Constrained_CPU decreases the average wait time of jobs without burst buffer requests "
                               "by 32.43%, it increases the average wait time of jobs with 100-200TB burst buffer requests by "
                               "17.21%.",
    "long-short": "It is interesting to notice that all optimization methods reduce average wait time of long jobs,"
                  " but increase the average wait time of short jobs.",
}


def _claims() -> tuple[Claim, ...]:
    S4 = ("cori-S4", "theta-S4")
    out = [
        Claim("wait-theta-s4", "BBSched cuts the mean waiting time by 41 % vs the baseline on Theta-S4",
              "§4.4, Fig. 8", paper_value="−41 %",
              words=WORDS["wait-theta-s4"],
              conditions=conds("bbsched", BASELINE, "theta-S4", wait(), _around(41.0))),
        Claim("wait-cori-s4", "BBSched cuts the mean waiting time by up to 33.44 % vs the baseline on Cori",
              "§4.4, Fig. 8 (Cori-S4)", paper_value="−33.44 %",
              words=WORDS["wait-cori-s4"],
              conditions=conds("bbsched", BASELINE, "cori-S4", wait(), _around(33.44))),
        Claim("wait-theta-original", "BBSched cuts the mean waiting time by 21.30 % on Theta-Original",
              "§4.4, Fig. 8", paper_value="−21.30 %",
              words=WORDS["wait-theta-original"],
              conditions=conds("bbsched", BASELINE, "theta-Original", wait(), _around(21.30))),
        Claim("second-best", "the second best method, Weighted_BB, cuts the mean waiting time by less than 26 % on "
              "both machines (BBSched: 41 % on Theta, 33.44 % on Cori)", "§4.4, Fig. 8", paper_value="< 26 %",
              words=WORDS["second-best"],
              conditions=sum((conds("weighted-bb", BASELINE, g, wait(), Band(0.0, 26.0, "the paper: less than 26 %"))
                              for g in S4), ())
              + conds("bbsched", "weighted-bb", "theta-S4", wait(),
                      Band(_cut_vs(41.0, 26.0), 41.0, "BBSched's 41 % against a second best cutting 0-26 %"))
              + conds("bbsched", "weighted-bb", "cori-S4", wait(),
                      Band(_cut_vs(33.44, 26.0), 33.44, "BBSched's 33.44 % against a second best cutting 0-26 %"))),
        Claim("node-gain", "BBSched improves node usage vs the baseline by 12.69 % on Theta-S3, 20.03 % on Theta-S4 and "
              "16.28 % on Cori-S4", "§4.4, Fig. 6", paper_value="+12.69 / +20.03 / +16.28 %",
              words=WORDS["node-gain"],
              conditions=conds("bbsched", BASELINE, "theta-S3", node_usage, _around(12.69), HIGHER)
              + conds("bbsched", BASELINE, "theta-S4", node_usage, _around(20.03), HIGHER)
              + conds("bbsched", BASELINE, "cori-S4", node_usage, _around(16.28), HIGHER)),
        Claim("bb-gain", "BBSched improves BB usage vs the baseline, by as much as 15.46 % (judged on the S4 "
              "workloads, the heaviest)", "§4.4, Fig. 7", paper_value="≤ +15.46 %",
              words=WORDS["bb-gain"],
              conditions=sum((conds("bbsched", BASELINE, g, bb_usage,
                                    Band(0.0, 15.46 * (1 + REL), "the paper: at most 15.46 % on any workload, "
                                         "+ 50 % for the smaller machine"), HIGHER) for g in S4), ())),
        Claim("biased-node-cost", "Weighted_BB and Constrained_BB cost node usage on Theta-S1 (−6.11 % and −4.84 % vs "
              "the baseline) while raising BB usage (+10.54 % and +12.09 %)", "§4.4, Fig. 6-7 (Theta-S1)",
              paper_value="−6.11 / −4.84 %; +10.54 / +12.09 %",
              words=WORDS["biased-node-cost"],
              conditions=conds(BASELINE, "weighted-bb", "theta-S1", node_usage,
                               _around(_relative_to(1 / (1 - 0.0611))), HIGHER)
              + conds(BASELINE, "constrained-bb", "theta-S1", node_usage, _around(_relative_to(1 / (1 - 0.0484))), HIGHER)
              + conds("weighted-bb", BASELINE, "theta-S1", bb_usage, _around(10.54), HIGHER)
              + conds("constrained-bb", BASELINE, "theta-S1", bb_usage, _around(12.09), HIGHER)),
        Claim("constrained-cpu-bb", "Constrained_CPU lowers BB usage on Cori-S1 by 1.33 % vs the baseline",
              "§4.4, Fig. 7 (Cori-S1)", paper_value="−1.33 %",
              words=WORDS["constrained-cpu-bb"],
              conditions=conds(BASELINE, "constrained-cpu", "cori-S1", bb_usage,
                               _around(_relative_to(1 / (1 - 0.0133))), HIGHER)),
        Claim("bin-packing", "Bin_Packing improves node and BB usage vs the baseline by no more than 3.72 % (judged on "
              "the S4 workloads)", "§4.4, Fig. 6-7", paper_value="(0, 3.72 %]",
              words=WORDS["bin-packing"],
              conditions=sum((conds("bin-packing", BASELINE, g, m, Band(0.0, 3.72, "the paper: no more than 3.72 %"),
                                    HIGHER) for g in S4 for m in (node_usage, bb_usage)), ())),
        # §6 names its metric: "the overall performance" — the area of the Kiviat graphs of Fig. 13 (§4.4, "Holistic
        # Performance Comparison"): node usage, BB usage, 1 / mean wait and 1 / mean slowdown, each normalised to
        # [0, 1] over the methods. The paper does not say how 41 / 33 / 35 / 20 % derive from those areas (with
        # min-max axes the worst method's area is 0, so a percentage over it is undefined): not testable as stated.
        Claim("headline", "BBSched improves the overall performance (the Kiviat area of Fig. 13) by 41 % over naive, "
              "33 % over bin packing, 35 % over constrained and 20 % over weighted methods", "§6 (Conclusion); "
              "§4.4, Fig. 13 (the overall performance)", paper_value="41 / 33 / 35 / 20 %",
              words="BBSched is capable of improving the overall performance by 41% over naive method, 33% over bin "
                    "packing method, 35% over constrained methods, and 20% over weighted methods.",
              not_testable="§6's metric is the overall performance, the area of Fig. 13's Kiviat graphs (§4.4: node "
                           "and BB usage, reciprocals of the mean wait and slowdown, each normalised to [0, 1] over "
                           "the methods); the paper does not state how the percentages derive from the areas, and "
                           "with axes normalised over the methods the worst method's area is 0, so a gain over it "
                           "is undefined"),
        Claim("headline-wait", "Does BBSched cut the mean waiting time on Theta-S4 by 41 % over naive, 33 % over bin "
              "packing, 35 % over constrained and 20 % over weighted methods? (§6's numbers read on the mean wait, "
              "which §6 does not name)", "the project's question (§6's numbers; Fig. 8)",
              paper_value="41 / 33 / 35 / 20 %", origin=PROJECT,
              conditions=conds("bbsched", BASELINE, "theta-S4", wait(), _around(41.0))
              + conds("bbsched", "bin-packing", "theta-S4", wait(), _around(33.0))
              + sum((conds("bbsched", m, "theta-S4", wait(), _around(35.0))
                     for m in ("constrained-cpu", "constrained-bb")), ())
              + sum((conds("bbsched", m, "theta-S4", wait(), _around(20.0))
                     for m in ("weighted", "weighted-cpu", "weighted-bb")), ())),
        Claim("window-10-20", "from window 10 to 20 node usage rises (Cori-S4 60.18 → 64.90 %, Theta-S4 67.12 → 73.29 %), "
              "BB usage rises (92.53 → 94.74 %, 84.23 → 89.54 %) and the mean wait falls (55,732 → 51,028 s, "
              "10,402 → 8,847 s)", "§4.4, Table 3", paper_value="Table 3",
              words=WORDS["window-10-20"],
              conditions=conds("bbsched", "bbsched/w10", "cori-S4", node_usage, _around(_relative_to(64.90 / 60.18)), HIGHER)
              + conds("bbsched", "bbsched/w10", "theta-S4", node_usage, _around(_relative_to(73.29 / 67.12)), HIGHER)
              + conds("bbsched", "bbsched/w10", "cori-S4", bb_usage, _around(_relative_to(94.74 / 92.53)), HIGHER)
              + conds("bbsched", "bbsched/w10", "theta-S4", bb_usage, _around(_relative_to(89.54 / 84.23)), HIGHER)
              + conds("bbsched", "bbsched/w10", "cori-S4", wait(), _around(100 * (1 - 51028 / 55732)))
              + conds("bbsched", "bbsched/w10", "theta-S4", wait(), _around(100 * (1 - 8847 / 10402)))),
        Claim("window-20-50", "from window 20 to 50 usage and the mean wait barely change (at most 1.43 %)",
              "§4.4, Table 3", paper_value="≤ 1.43 %",
              words=WORDS["window-20-50"],
              conditions=sum((conds("bbsched/w50", "bbsched", g, m, Band(-2.0, 2.0, "the paper's changes from 20 to 50 "
                                    "are at most 1.43 % (Theta-S4 node usage); ± 2 %"), b, NO_DIFFERENCE)
                              for g in S4 for m, b in ((node_usage, HIGHER), (bb_usage, HIGHER), (wait(), LOWER))), ())),
        Claim("small-jobs", "on Theta-S4 BBSched cuts the wait of the smallest jobs by 48.29 % and of the largest by "
              "31.59 %", "§4.4, Fig. 9", paper_value="−48.29 / −31.59 %",
              words=WORDS["small-jobs"],
              conditions=conds("bbsched", BASELINE, "theta-S4",
                               wait(lambda r: r["requested_number_of_resources"] <= SMALL_NODES,
                                    "mean waiting time of 1-node jobs [h]"), _around(48.29))
              + conds("bbsched", BASELINE, "theta-S4",
                      wait(lambda r: r["requested_number_of_resources"] >= LARGE_NODES,
                           f"mean waiting time of jobs of ≥ {LARGE_NODES} nodes [h]"), _around(31.59))),
        Claim("bb-class-wait", "under the baseline on Theta-S4, jobs with more than 200 TB of BB wait 10.25 h on average, "
              "jobs without BB 2.5 h", "§4.4, Fig. 10", paper_value="10.25 h vs 2.5 h (× 4.1)",
              words=WORDS["bb-class-wait"],
              conditions=conds(BASELINE, BASELINE, "theta-S4", wait(), around(10.25 / 2.5, REL, REL_REASON),
                               effect="ratio", treatment_jobs=("no BB", lambda r: _bb_total(r) == 0),
                               control_jobs=("> 200 TB", _class(R_BB["theta"], 200e12 / THETA_BB, math.inf)))),
        Claim("constrained-cpu-classes", "on Theta-S4 Constrained_CPU cuts the wait of jobs without BB by 32.43 % and "
              "lengthens that of jobs with 100-200 TB by 17.21 %", "§4.4, Fig. 10", paper_value="−32.43 / +17.21 %",
              words=WORDS["constrained-cpu-classes"],
              conditions=conds("constrained-cpu", BASELINE, "theta-S4",
                               wait(lambda r: _bb_total(r) == 0, "mean waiting time of jobs without BB [h]"),
                               _around(32.43))
              + conds(BASELINE, "constrained-cpu", "theta-S4",
                      wait(_class(R_BB["theta"], 100e12 / THETA_BB, 200e12 / THETA_BB),
                           "mean waiting time of jobs with 100-200 TB (Theta's share) [h]"),
                      _around(100 * (1 - 1 / 1.1721)))),
        Claim("long-short", "on Theta-S4 BBSched cuts the wait of long jobs and lengthens that of short jobs (fewer "
              "backfilling holes)", "§4.4, Fig. 11", paper_value="qualitative",
              words=WORDS["long-short"],
              conditions=conds("bbsched", BASELINE, "theta-S4", wait(_long, "mean waiting time of long jobs [h]"),
                               Band(0.0, 100.0, "the paper gives no number: any cut", own=True))
              + conds(BASELINE, "bbsched", "theta-S4", wait(_short, "mean waiting time of short jobs [h]"),
                      Band(0.0, 100.0, "the paper gives no number: any lengthening", own=True))),
    ]
    return tuple(out)


#: the platforms' total BB [bytes] per machine
R_BB = {m: c[1] for m, c in CAPACITY.items()}


def _long(r):
    """Run time in the highest quartile of the rows' jobs (Fig. 11's long jobs)."""
    rt = r["runtime"].astype(float)
    return rt >= rt.quantile(0.75)


def _short(r):
    """Run time in the lowest quartile of the rows' jobs (Fig. 11's short jobs)."""
    rt = r["runtime"].astype(float)
    return rt <= rt.quantile(0.25)


CLAIMS: tuple[Claim, ...] = _claims()
