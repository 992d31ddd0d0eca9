"""Claims as data: a table of `Claim` definitions evaluated by one function, `evaluate`. The verdict
semantics are docs/verdicts.md; in short:

A claim compares a *treatment* with a *control* — two columns of a study (policies or variants) — in one
or more `Condition`s. Each condition names its `Metric` (a statistic of per-job values, e.g. the mean
waiting time of the jobs of a size class, or of per-part values) and the better direction (`LOWER` or
`HIGHER`), the `Effect` it measures (a relative change in %, a ratio, a difference in points, the share of
paired units where the treatment is better), what it asserts (`DIFFERENCE` or `NO_DIFFERENCE`), its
`Band` around the paper's number (with the band's reason, and whether the number is the paper's or the
project's own) and its noise floor (`Replicates`: Student's t over independent replicates, never a resampling
of the jobs of one run). A condition asserting a difference is

- *reproduced* when the effect has the paper's direction, lies beyond the noise floor and inside the band;
- *partly* when it has the paper's direction beyond the noise floor but lies outside the band;
- *not reproduced* when it has the wrong direction, lies inside the noise floor, or has no noise floor
  (fewer than 2 replicates, or replicates that do not vary);

a condition asserting no difference is reproduced when the whole noise interval lies inside its band, not
reproduced otherwise. A claim is reproduced when all its conditions are, not reproduced when one is not,
partly otherwise; ``out of regime`` when a regime check of the study failed (`RegimeCheck`: then every
condition says so too); ``not measured`` when the runs lack a condition's columns; ``not testable`` when its
source states nothing a run could check (`Claim.not_testable`: never judged). No condition can pass with the
treatment worse than the control on its own metric.

Because every condition names its treatment and its control, `evaluate` can judge the same table as a
*placebo*, an A/A test (the control's A/A column, the control policy run again with independent seeds on
independent workload draws, in place of the treatment, judged unpaired: a claim of a difference must then
fail, at the interval's nominal rate), or *reversed* (treatment and control swapped: a sign check, it
fails whenever the real verdict is a difference in the paper's direction).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable

from ..lazy import lazy
from .verdicts import (DIFFERENCE, MISSING, MODES, NO_DIFFERENCE, NOT, NOT_TESTABLE, OUT_OF_REGIME, PAPER, PARTLY,
                       PROJECT, REPRODUCED, Verdict, placebo_column)

np = lazy("numpy")  # numpy and pandas: imported on first use (burstbuffer.lazy)
pd = lazy("pandas")

LOWER, HIGHER = "lower", "higher"


# --- the verdict semantics (docs/verdicts.md) ------------------------------------------------------------
@dataclass(frozen=True)
class Band:
    """The magnitudes of an effect that reproduce a paper's number: [`low`, `high`] in the effect's unit
    (`EFFECTS`), both included. `reason`: why this band (e.g. "the paper rounds to whole percent; ± a third
    of the effect for a smaller machine"); `own`: True when the number is the project's own because the
    paper gives none (the report then says so). For a condition asserting no difference, the band is the
    equivalence band around the null."""

    low: float
    high: float
    reason: str
    own: bool = False

    def __post_init__(self):
        if not self.low <= self.high:
            raise ValueError(f"band [{self.low}, {self.high}]: low above high")
        if not self.reason:
            raise ValueError("a band needs its reason")

    def holds(self, x: float) -> bool:
        return self.low <= x <= self.high

    def text(self, unit: str) -> str:
        lo = "−∞" if self.low == -math.inf else f"{self.low:.4g}"
        hi = "∞" if self.high == math.inf else f"{self.high:.4g}"
        own = "the project's own: " if self.own else ""
        return f"[{lo}, {hi}]{unit} ({own}{self.reason})"


def around(value: float, rel: float, reason: str, own: bool = False) -> Band:
    """The band value × (1 ± `rel`) (value > 0), e.g. ``around(27, 0.25, …)`` = [20.25, 33.75]."""
    return Band(value * (1 - rel), value * (1 + rel), reason, own)


#: the effects a condition measures: name → (unit, null value). T and C: the metric's statistic under the
#: treatment and the control; "better" is the condition's direction.
#: relative: 100 × (C − T) / C for LOWER (100 × (T − C) / C for HIGHER) [%], positive = treatment better;
#: ratio: C / T for LOWER (T / C for HIGHER) [×], above 1 = treatment better;
#: points: 100 × (C − T) for LOWER (100 × (T − C) for HIGHER) [percentage points] (for shares in [0, 1]);
#: share: the percentage of paired units (jobs, parts) where the treatment's value is better [%], null 50.
EFFECTS = {"relative": (" %", 0.0), "ratio": ("×", 1.0), "points": (" points", 0.0), "share": (" %", 50.0)}


#: the statistics `_stat` knows besides q<p>
STATS = ("mean", "median", "max", "min", "sum")


def _stat(name: str, resolve: bool = True):
    """The statistic `name` over an array without NaN: mean, median, max, min, sum, q<p> (quantile p,
    0 ≤ p ≤ 1). ValueError for an unknown name; `resolve` False: only that check (numpy not imported: a
    claims table is built when a study module is imported)."""
    if name.startswith("q") and name[1:].replace(".", "", 1).isdigit() and 0 <= float(name[1:]) <= 1:
        q = float(name[1:])
        return (lambda a, axis=None: np.quantile(a, q, axis=axis)) if resolve else None
    if name not in STATS:
        raise ValueError(f"statistic {name!r}: not one of {', '.join(STATS)}, q<p> (0 ≤ p ≤ 1)")
    return getattr(np, name) if resolve else None


@dataclass(frozen=True)
class Metric:
    """What a condition compares: the statistic `stat` (mean, median, max, min, sum, q<p>) of the per-job
    column `column` of the tidy per-job table (`burstbuffer.metrics.tidy.job_metrics`: waiting_time [s],
    bounded_slowdown, …) divided by `scale` (3600: hours), over the jobs `select` keeps (a function of that
    table → boolean array; None: every job) that both the treatment and the control started. `name`: its
    report text with its unit. `over`: the paired units — ``jobs`` (one value per job), ``parts`` (one
    value per part scope ``part-NN``: the statistic over the part's jobs) or ``windows`` (time windows, with
    `values`). `values`: instead of a column, a function (per-job rows of one column of the study in the
    condition's scopes; they carry a ``nodes`` column, the compute nodes of each run's platform, when
    `burstbuffer reproduce` judges) → pandas Series of per-unit values indexed by unit (for a metric that is
    not a per-job value, e.g. the idle node-time per window, `burstbuffer.metrics.regime`); `stat` then
    aggregates those units."""

    name: str
    column: str = "waiting_time"
    stat: str = "mean"
    scale: float = 1.0
    select: Callable[[pd.DataFrame], object] | None = None
    over: str = "jobs"
    values: Callable[[pd.DataFrame], pd.Series] | None = None

    def __post_init__(self):
        if self.over not in ("jobs", "parts", "windows"):
            raise ValueError(f"metric {self.name}: over {self.over!r} not in ('jobs', 'parts', 'windows')")
        if self.over == "windows" and self.values is None:
            raise ValueError(f"metric {self.name}: values over windows need their function")
        _stat(self.stat, resolve=False)

    def units(self, rows: pd.DataFrame) -> pd.Series:
        """Per-unit values of one column of the study (`rows`: its per-job rows in the condition's scopes):
        indexed by job_id (over jobs) or by scope (over parts; the statistic over each part's jobs)."""
        if self.values is not None:
            return self.values(rows).astype(float).dropna()
        if self.select is not None and len(rows):
            rows = rows[np.asarray(self.select(rows), bool)]
        v = pd.to_numeric(rows[self.column], errors="coerce") / self.scale
        if self.over == "parts":
            f = _stat(self.stat)
            return v.groupby(rows["scope"].to_numpy()).agg(lambda a: f(a.dropna().to_numpy(float))
                                                           if a.notna().any() else math.nan).dropna()
        return pd.Series(v.to_numpy(float), index=rows["job_id"].astype(str).to_numpy()).dropna()


@dataclass(frozen=True)
class Replicates:
    """Noise floor: independent replicates (docs/verdicts.md, "The noise floor"). A replicate is one independent
    draw of every random input of an experiment (the workload's burst-buffer and communication draw, the
    policy's seed, and where the paper used them the trace's parts); the per-job table's ``replicate``
    column says which run belongs to which. Paired (treatment and control share each replicate's inputs):
    the effect is the mean of the R per-replicate effects, its interval Student's t over those R values
    (`burstbuffer.metrics.stats.paired_interval`). Unpaired (independent inputs a side, e.g. the A/A
    placebo): the effect of the means of the per-replicate statistics, its interval Welch's t on their
    difference (`stats.unpaired_interval`). Fewer than 2 replicates, or replicates that do not vary: no
    interval, never *reproduced*. The jobs of one run are never resampled."""

    level: float = 0.95

    def __post_init__(self):
        if not 0 < self.level < 1:
            raise ValueError(f"level {self.level}: not in (0, 1)")

    def text(self, n: int, paired: bool = True) -> str:
        how = "paired, Student's t" if paired else "unpaired, Welch's t"
        return f"{n} replicate{'' if n == 1 else 's'} ({how}), {100 * self.level:g} % interval"


#: the name conditions gave their noise floor before replicates; the same noise floor now (`Replicates`)
Paired = Replicates


@dataclass(frozen=True)
class Condition:
    """One comparison of a claim: `treatment` against `control` (column labels of the study: policies or
    variant labels) on `metric`, whose `better` direction is `LOWER` or `HIGHER`, measured as `effect`
    (a key of `EFFECTS`), asserting `asserts` (`DIFFERENCE` or `NO_DIFFERENCE`), judged against `band`
    (`Band`) beyond the noise floor `noise` (`Replicates`), on the runs of `scope` (a scope name
    such as ``whole`` or ``cori-S4``; ``parts``: every ``part-NN`` scope; ``PREFIX*``: every scope starting
    with PREFIX, each one replicate, e.g. ``theta-S4-r*`` for a study's own draws). `label`: its name in the
    report (default: "treatment vs control").

    `treatment_jobs`, `control_jobs`: (name, selection) — a job class of each side (a function of the
    per-job rows → boolean array, on top of the metric's `select`), for a claim that compares two classes
    of jobs (e.g. Allcock et al.'s Table 2: prod-short's mean wait against prod-capability's, in one
    column): the two sides are then different jobs, compared unpaired (the bootstrap resamples each side
    on its own); treatment and control may then be the same column. In a placebo the treatment takes the
    control's column and class; reversed, the two swap."""

    treatment: str
    control: str
    metric: Metric
    band: Band
    better: str = LOWER
    effect: str = "relative"
    asserts: str = DIFFERENCE
    noise: Replicates = field(default_factory=Replicates)
    scope: str = "whole"
    label: str = ""
    treatment_jobs: tuple[str, Callable[[pd.DataFrame], object]] | None = None
    control_jobs: tuple[str, Callable[[pd.DataFrame], object]] | None = None

    def __post_init__(self):
        if self.better not in (LOWER, HIGHER):
            raise ValueError(f"condition {self.name}: better {self.better!r} not in ({LOWER!r}, {HIGHER!r})")
        if self.effect not in EFFECTS:
            raise ValueError(f"condition {self.name}: effect {self.effect!r} not in {tuple(EFFECTS)}")
        if self.asserts not in (DIFFERENCE, NO_DIFFERENCE):
            raise ValueError(f"condition {self.name}: asserts {self.asserts!r}")
        if self.treatment == self.control and (self.treatment_jobs is None or self.control_jobs is None
                                               or self.treatment_jobs[0] == self.control_jobs[0]):
            raise ValueError(f"condition {self.name}: treatment and control are the same column and jobs")
        if not self.paired and (self.metric.over != "jobs" or self.effect == "share"):
            raise ValueError(f"condition {self.name}: classes of jobs are compared over jobs, by a statistic")
        if not isinstance(self.noise, Replicates):
            raise ValueError(f"condition {self.name}: its noise floor must be Replicates (docs/verdicts.md)")

    @property
    def paired(self) -> bool:
        """True when both sides are the same jobs (no class of its own on either side)."""
        return self.treatment_jobs is None and self.control_jobs is None

    @property
    def name(self) -> str:
        if self.label:
            return self.label
        side = lambda lab, j: lab + (f" ({j[0]})" if j else "")  # noqa: E731
        return f"{side(self.treatment, self.treatment_jobs)} vs {side(self.control, self.control_jobs)}"

    @property
    def null(self) -> float:
        return EFFECTS[self.effect][1]

    def sides(self, mode: str) -> tuple[str, tuple | None, str, tuple | None]:
        """(treatment column, its jobs, control column, its jobs) as judged in `mode` (`MODES`): real;
        placebo, an A/A test (the control's A/A column — the control policy run again with independent seeds
        on independent workload draws, `placebo_column` — in place of the treatment, judged unpaired);
        reverse, a sign check (the two swapped)."""
        if mode == "reverse":
            return self.control, self.control_jobs, self.treatment, self.treatment_jobs
        if mode == "placebo":
            return placebo_column(self.control), self.control_jobs, self.control, self.control_jobs
        return self.treatment, self.treatment_jobs, self.control, self.control_jobs

    def effect_of_difference(self, d: float, c: float) -> float:
        """The effect (`EFFECTS`) of a control statistic `c` and a difference `d` of the statistic in the
        better direction (C − T for LOWER, T − C for HIGHER): what an unpaired interval on d maps to. NaN where
        undefined; not for ``share``."""
        if self.effect == "points":
            return 100.0 * d
        if self.effect == "relative":
            return 100.0 * d / abs(c) if c != 0 else math.nan
        if self.effect == "ratio":
            den = (c - d) if self.better == LOWER else c
            num = c if self.better == LOWER else c + d
            return num / den if den > 0 else (math.inf if num > 0 else math.nan)
        raise ValueError(f"condition {self.name}: a share has no unpaired form")

    def effect_of(self, t, c, axis=None):
        """The effect (`EFFECTS`) of per-unit values `t` (treatment) and `c` (control), paired by position,
        along `axis` (None: the whole arrays) — NaN where undefined (a zero control statistic)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.effect == "share":
                b = (t < c) if self.better == LOWER else (t > c)
                return 100.0 * np.mean(b, axis=axis)
            f = _stat(self.metric.stat)
            T, C = f(t, axis=axis), f(c, axis=axis)
            d = (C - T) if self.better == LOWER else (T - C)
            if self.effect == "points":
                return 100.0 * d
            if self.effect == "relative":
                return np.where(C != 0, 100.0 * d / np.abs(C), np.nan) if axis is not None else (
                    100.0 * d / abs(C) if C != 0 else math.nan)
            num, den = (C, T) if self.better == LOWER else (T, C)
            return np.where(den != 0, num / den, np.nan) if axis is not None else (num / den if den != 0 else math.nan)


@dataclass(frozen=True)
class RegimeCheck:
    """One check that a study ran in the regime its paper's claims are about (e.g. the offered load, the
    share of decisions the optimiser changed): `name`, whether it holds (`ok`), what was measured and what
    the paper's regime needs (`measured`, `needs`: report text). A failed check makes every claim of the
    study ``out of regime``."""

    name: str
    ok: bool
    measured: str
    needs: str


@dataclass(frozen=True)
class Claim:
    """One row of a claims table.

    id: short stable name (``verdicts.json``); text: the claim in words; source: where the paper states it
    (section, figures); paper_value: the paper's number, or ``qualitative``; conditions: its `Condition`s
    (treatment, control, metric, band, noise floor each), all of which must hold for ``reproduced``.
    words: the source's own words, quoted (the study pages show them beside `source`); origin: `PAPER` (a
    statement of the source) or `PROJECT` (a question the project asks itself: listed apart, as the
    project's); not_testable: why the source gives nothing a run could check (no experiment, no defined
    metric) — the claim is then ``not testable``, never judged, and may have no condition.
    ValueError for a testable claim without conditions, or an unknown origin."""

    id: str
    text: str
    source: str
    paper_value: str = ""
    conditions: tuple[Condition, ...] = ()
    words: str = ""
    origin: str = PAPER
    not_testable: str = ""

    def __post_init__(self):
        if not self.conditions and not self.not_testable:
            raise ValueError(f"claim {self.id}: no condition (docs/verdicts.md)")
        if self.origin not in (PAPER, PROJECT):
            raise ValueError(f"claim {self.id}: origin {self.origin!r} not in ({PAPER!r}, {PROJECT!r})")

    @property
    def asserts(self) -> str:
        """`DIFFERENCE` when a condition asserts one (or when there is no condition: a claim not testable states
        an effect), else `NO_DIFFERENCE`."""
        if not self.conditions:
            return DIFFERENCE
        return DIFFERENCE if any(c.asserts == DIFFERENCE for c in self.conditions) else NO_DIFFERENCE


class _Rows:
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


def _pair(cond: Condition, rt: pd.DataFrame, rc: pd.DataFrame, tj=None, cj=None):
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


def _replicates(cond: Condition, rows: pd.DataFrame) -> dict:
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
    from .stats import binomial_interval, paired_interval, unpaired_interval
    f = _stat(cond.metric.stat)
    gt, gc = _replicates(cond, rt), _replicates(cond, rc)
    lvl = cond.noise.level
    out = {"paired": paired, "per_replicate": []}
    if paired or cond.effect == "share":
        keys = sorted(set(gt) & set(gc)) if paired else list(zip(sorted(gt), sorted(gc)))
        per, tv, cv = [], [], []
        for k in keys:
            kt, kc = (k, k) if paired else k
            t, c = _pair(cond, gt[kt], gc[kc], tj, cj)
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


def decide(cond: Condition, value: float, lo: float, hi: float, why_no_interval: str = "") -> tuple[str, str]:
    """(verdict, why) of one condition from its effect `value` and its noise interval [`lo`, `hi`]
    (docs/verdicts.md): no interval (`why_no_interval`): never reproduced; a difference: reproduced beyond
    the noise floor inside the band, partly outside it, not reproduced in the wrong direction or inside the
    noise floor; no difference: reproduced when the whole interval lies inside the band."""
    null = cond.null
    if value != value:
        return NOT, "effect undefined (the control's statistic is 0, or nothing paired)"
    if why_no_interval or lo != lo or hi != hi:
        return NOT, why_no_interval or "no noise interval"
    if cond.asserts == NO_DIFFERENCE:
        inside = cond.band.holds(value) and cond.band.holds(lo) and cond.band.holds(hi)
        return (REPRODUCED, "the noise interval lies inside the band") if inside else \
            (NOT, "the effect or its noise interval leaves the band")
    if value == null:
        return NOT, "no effect"
    if not value > null:
        return NOT, "wrong direction: the treatment is worse than the control"
    if not lo > null:
        return NOT, "inside the noise floor"
    if cond.band.holds(value):
        return REPRODUCED, "right direction, beyond the noise floor, inside the band"
    return PARTLY, "right direction, beyond the noise floor, outside the band"


def beyond_noise(cond: Condition, lo: float, hi: float) -> bool:
    """True when the interval [`lo`, `hi`] excludes the null (no effect) on either side."""
    return bool(lo == lo and hi == hi and (lo > cond.null or hi < cond.null))


def judge(cond: Condition, jobs, mode: str = "real") -> dict:
    """One condition's verdict on the tidy per-job table `jobs` (columns scope, policy, job_id, replicate, the
    metric's column) in `mode` (`MODES`; ``placebo``: the A/A column against the control, unpaired): a dict
    with name, treatment, control, scope, metric, better, effect (kind), unit, asserts, value (the effect),
    interval (the noise floor's), beyond_noise, treatment_value and control_value (the metric's statistic),
    n (replicates), per_replicate, band, noise (text), verdict, why (text). Verdict ``not measured`` when a
    column lacks runs in the scope or no replicate pairs."""
    cd = cond
    t_label, tj, c_label, cj = cond.sides(mode)
    unit = EFFECTS[cd.effect][0]
    out = {"name": cond.name, "treatment": t_label, "control": c_label, "scope": cd.scope,
           "metric": cd.metric.name, "better": cd.better, "effect": cd.effect, "unit": unit.strip(),
           "asserts": cd.asserts, "band": cd.band.text(unit), "value": math.nan, "interval": [math.nan, math.nan],
           "beyond_noise": False, "treatment_value": math.nan, "control_value": math.nan, "n": 0,
           "per_replicate": [], "noise": "", "verdict": MISSING, "why": ""}
    rows = jobs if isinstance(jobs, _Rows) else _Rows(jobs)
    rt, rc = rows(t_label, cd.scope), rows(c_label, cd.scope)
    lacking = [lab for lab, r in ((t_label, rt), (c_label, rc)) if r.empty]
    if lacking:
        why = f"needs {' and '.join(dict.fromkeys(lacking))} on {cd.scope}"
        if mode == "placebo" and t_label in lacking:
            why += " (the A/A runs: reproduce --placebo)"
        out["why"] = why
        return out
    m = measure(cd, rt, rc, tj=tj, cj=cj, paired=mode != "placebo")
    if not m["n"] and not m["per_replicate"]:     # paired units whose effect is undefined are judged below
        out["why"] = f"no {cd.metric.over} paired between {t_label} and {c_label} on {cd.scope}"
        return out
    lo, hi = m["interval"]
    verdict, why = decide(cd, m["value"], lo, hi, m["why_no_interval"])
    out.update(value=m["value"], interval=[lo, hi], beyond_noise=beyond_noise(cd, lo, hi), n=m["n"],
               per_replicate=m["per_replicate"], treatment_value=m["treatment_value"],
               control_value=m["control_value"], noise=m["noise"], verdict=verdict, why=why)
    return out


def _g(x: float) -> str:
    return "n/a" if x != x else f"{x:.3g}"


def _judge_claim(c: Claim, jobs: "_Rows | None", mode: str) -> Verdict:
    """A claim with conditions: each condition judged (`judge`), then combined (module docstring)."""
    base = dict(id=c.id, paper_value=c.paper_value, asserts=c.asserts, mode=mode, origin=c.origin,
                band="; ".join(dict.fromkeys(f"{k.name}: {k.band.text(EFFECTS[k.effect][0])}" for k in c.conditions)))
    if c.not_testable:
        return Verdict(c.text, c.source, "", NOT_TESTABLE, c.not_testable, **base)
    if jobs is None or jobs.jobs.empty:
        return Verdict(c.text, c.source, "needs the per-job table of the runs", MISSING, "", **base)
    conds = [judge(k, jobs, mode) for k in c.conditions]
    noise = "; ".join(dict.fromkeys(d["noise"] for d in conds if d["noise"]))
    missing = [d["why"] for d in conds if d["verdict"] == MISSING]
    if missing:
        return Verdict(c.text, c.source, "; ".join(dict.fromkeys(missing)), MISSING, "", noise=noise,
                       conditions=conds, **base)
    vs = [d["verdict"] for d in conds]
    verdict = NOT if NOT in vs else PARTLY if PARTLY in vs else REPRODUCED
    measured = "; ".join(f"{d['name']}: {d['metric']} {_g(d['treatment_value'])} vs {_g(d['control_value'])}"
                         for d in conds)
    how = "; ".join(f"{d['name']}, {d['metric']}: {_g(d['value'])}{EFFECTS[d['effect']][0]} "
                    f"(interval {_g(d['interval'][0])} to {_g(d['interval'][1])}): {d['verdict']}, {d['why']}"
                    for d in conds)
    return Verdict(c.text, c.source, measured, verdict, how, noise=noise, conditions=conds, **base)


def evaluate(claims: list[Claim] | tuple[Claim, ...], jobs: pd.DataFrame | None, mode: str = "real",
             regime: list[RegimeCheck] | tuple[RegimeCheck, ...] = ()) -> list[Verdict]:
    """One verdict per claim, in table order (docs/verdicts.md).

    `jobs`: the tidy per-job table of every run (columns scope, policy = column label, job_id, then
    `burstbuffer.metrics.tidy.job_metrics`'s; ``replicate`` (0 when absent) for the noise floor; None or empty: every
    claim ``not measured``). `mode`: one of `MODES` (``placebo``: an A/A test, each condition's control
    against its A/A column, `placebo_column`, unpaired; ``reverse``: a sign check, the two swapped).
    `regime`: the study's `RegimeCheck`s; when one failed, every measured claim is ``out of regime`` (its
    measurement still reported). ValueError for an unknown mode."""
    if mode not in MODES:
        raise ValueError(f"mode {mode!r} not in {MODES}")
    failed = [f"{r.name}: {r.measured} (needs {r.needs})" for r in regime if not r.ok]
    rows = _Rows(jobs) if jobs is not None and not jobs.empty else None
    out = []
    for c in claims:
        v = _judge_claim(c, rows, mode)
        if failed and v.verdict not in (MISSING, NOT_TESTABLE):
            _out_of_regime(v, failed)
        out.append(v)
    return out


def false_positive_rate(verdicts: list[Verdict]) -> tuple[int, int]:
    """(k, n) of an A/A (placebo) judgement: n conditions asserting a difference that were measured, k of them
    beyond the noise floor in either direction. Nominal: k / n ≈ 1 − the interval's level."""
    conds = [d for v in verdicts for d in v.conditions if d["asserts"] == DIFFERENCE and d["verdict"] != MISSING]
    return sum(bool(d["beyond_noise"]) for d in conds), len(conds)


def _out_of_regime(v: Verdict, failed: list[str]) -> None:
    """`v` (a measured verdict) made ``out of regime`` everywhere it is read: the claim's verdict, each
    condition's verdict and why, and the per-condition text (the effects stay reported, unjudged)."""
    v.verdict, v.regime = OUT_OF_REGIME, failed
    for d in v.conditions:
        if d["verdict"] != MISSING:
            d["verdict"] = OUT_OF_REGIME
            d["why"] = f"{OUT_OF_REGIME} ({'; '.join(failed)}): the effect is reported, not judged"
    v.by_how_much = "; ".join(f"{d['name']}, {d['metric']}: {_g(d['value'])}{EFFECTS[d['effect']][0]} (interval "
                              f"{_g(d['interval'][0])} to {_g(d['interval'][1])}): {OUT_OF_REGIME}"
                              for d in v.conditions)
