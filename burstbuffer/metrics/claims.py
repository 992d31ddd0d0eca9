"""Claims as data: a table of `Claim` definitions evaluated by one function, `evaluate`. The verdict
semantics are docs/verdicts.md; in short:

A claim compares a *treatment* with a *control* — two columns of a study (policies or variants) — in one
or more `Condition`s. Each condition names its `Metric` (a statistic of per-job values, e.g. the mean
waiting time of the jobs of a size class, or of per-part values) and the better direction (`LOWER` or
`HIGHER`), the `Effect` it measures (a relative change in %, a ratio, a difference in points, the share of
paired units where the treatment is better), what it asserts (`DIFFERENCE` or `NO_DIFFERENCE`), its
`Band` around the paper's number (with the band's reason, and whether the number is the paper's or the
project's own) and its noise floor (`Paired`: a paired bootstrap over jobs, or over the parts; `Seeds`:
the spread over at least 3 seeds). A condition asserting a difference is

- *reproduced* when the effect has the paper's direction, lies beyond the noise floor and inside the band;
- *partly* when it has the paper's direction beyond the noise floor but lies outside the band;
- *not reproduced* when it has the wrong direction or lies inside the noise floor;

a condition asserting no difference is reproduced when the whole noise interval lies inside its band, not
reproduced otherwise. A claim is reproduced when all its conditions are, not reproduced when one is not,
partly otherwise; ``out of regime`` when a regime check of the study failed (`RegimeCheck`: then every
condition says so too); ``not measured`` when the runs lack a condition's columns; ``not testable`` when its
source states nothing a run could check (`Claim.not_testable`: never judged). No condition can pass with the
treatment worse than the control on its own metric.

Because every condition names its treatment and its control, `evaluate` can judge the same table as a
*placebo* (the control's runs in place of the treatment's: the simulator is deterministic for a given seed,
so the control run again under the treatment's name is the control's run) or *reversed* (treatment and
control swapped): a claim asserting a difference must then fail.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable

from ..lazy import lazy
from .verdicts import (DIFFERENCE, MISSING, MODES, NO_DIFFERENCE, NOT, NOT_TESTABLE, OUT_OF_REGIME, PAPER, PARTLY,
                       PROJECT, REPRODUCED, Verdict)

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
class Paired:
    """Noise floor: a paired bootstrap over the units of the metric (jobs, or parts): `resamples` resamples
    of the paired units (seeded: the same interval every time), the effect recomputed on each; the effect is
    beyond the noise floor when the central `level` interval lies entirely on the treatment-better side of
    the null. With identical treatment and control (a placebo) the interval is the null itself: inside."""

    resamples: int = 1000
    level: float = 0.95
    seed: int = 12345

    def text(self, n: int, over: str) -> str:
        return f"paired bootstrap over {n} {over}, {self.resamples} resamples, {100 * self.level:g} % interval"

    def interval(self, t, c, effect, paired: bool = True) -> tuple[float, float]:
        """The central `level` interval of ``effect(t[i], c[i])`` over bootstrap index sets i (`paired`);
        unpaired (two groups of different jobs): ``effect(t[i], c[j])``, i and j drawn apart."""
        n, m = len(t), len(c)
        if n < 2 or m < 2:
            return (math.nan, math.nan)
        rng = np.random.default_rng(self.seed)
        out, left = [], self.resamples
        chunk = max(1, 2_000_000 // max(n, m))
        while left > 0:
            k = min(chunk, left)
            idx = rng.integers(0, n, size=(k, n))
            jdx = idx if paired else rng.integers(0, m, size=(k, m))
            out.append(effect(t[idx], c[jdx], axis=1))
            left -= k
        e = np.concatenate(out)
        e = e[~np.isnan(e)]
        if not len(e):
            return (math.nan, math.nan)
        a = (1 - self.level) / 2
        return float(np.quantile(e, a)), float(np.quantile(e, 1 - a))


@dataclass(frozen=True)
class Seeds:
    """Noise floor: the spread over at least `min_seeds` seeds. The per-job table must carry a ``seed``
    column (one run of each column per seed); the effect is computed per seed, and is beyond the noise
    floor when every seed's effect lies on the treatment-better side of the null. The interval reported is
    [lowest, highest] per-seed effect. Fewer seeds: the condition is not measured."""

    min_seeds: int = 3

    def __post_init__(self):
        if self.min_seeds < 3:
            raise ValueError("a seed spread needs at least 3 seeds")

    def text(self, n: int, over: str) -> str:
        return f"spread over {n} seeds (at least {self.min_seeds})"


@dataclass(frozen=True)
class Condition:
    """One comparison of a claim: `treatment` against `control` (column labels of the study: policies or
    variant labels) on `metric`, whose `better` direction is `LOWER` or `HIGHER`, measured as `effect`
    (a key of `EFFECTS`), asserting `asserts` (`DIFFERENCE` or `NO_DIFFERENCE`), judged against `band`
    (`Band`) beyond the noise floor `noise` (`Paired` or `Seeds`), on the runs of `scope` (a scope name
    such as ``whole`` or ``cori-S4``, or ``parts``: every ``part-NN`` scope). `label`: its name in the
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
    noise: Paired | Seeds = field(default_factory=Paired)
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
        if not self.paired and (self.metric.over != "jobs" or isinstance(self.noise, Seeds) or self.effect == "share"):
            raise ValueError(f"condition {self.name}: classes of jobs are compared over jobs, by bootstrap")
        if self.metric.over == "parts" and isinstance(self.noise, Seeds):
            raise ValueError(f"condition {self.name}: a metric over parts pairs parts, not seeds")

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
        placebo (the control — column and class — in place of the treatment); reverse (the two swapped)."""
        if mode == "reverse":
            return self.control, self.control_jobs, self.treatment, self.treatment_jobs
        if mode == "placebo":
            return self.control, self.control_jobs, self.control, self.control_jobs
        return self.treatment, self.treatment_jobs, self.control, self.control_jobs

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
        """The rows of column `label` in `scope` (``parts``: every ``part-NN`` scope)."""
        if scope == "parts":
            got = [g for (sc, pol), g in self.groups.items() if pol == label and sc.startswith("part-")]
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


def judge(cond: Condition, jobs, mode: str = "real") -> dict:
    """One condition's verdict on the tidy per-job table `jobs` (columns scope, policy, job_id, the metric's
    column; ``seed`` for `Seeds`) in `mode` (`MODES`): a dict with name, treatment, control, scope, metric,
    better, effect (kind), unit, asserts, value (the effect), interval (the noise floor's), treatment_value and
    control_value (the metric's statistic), n (paired units), band, noise (text), verdict, why (text).
    Verdict ``not measured`` when a column lacks runs in the scope or no unit pairs."""
    cd = cond
    t_label, tj, c_label, cj = cond.sides(mode)
    unit = EFFECTS[cd.effect][0]
    out = {"name": cond.name, "treatment": t_label, "control": c_label, "scope": cd.scope,
           "metric": cd.metric.name, "better": cd.better, "effect": cd.effect, "unit": unit.strip(),
           "asserts": cd.asserts, "band": cd.band.text(unit), "value": math.nan, "interval": [math.nan, math.nan],
           "treatment_value": math.nan, "control_value": math.nan, "n": 0, "noise": "", "verdict": MISSING,
           "why": ""}
    rows = jobs if isinstance(jobs, _Rows) else _Rows(jobs)
    rt, rc = rows(t_label, cd.scope), rows(c_label, cd.scope)
    lacking = [lab for lab, r in ((t_label, rt), (c_label, rc)) if r.empty]
    if lacking:
        out["why"] = f"needs {' and '.join(dict.fromkeys(lacking))} on {cd.scope}"
        return out
    f = _stat(cd.metric.stat)
    if isinstance(cd.noise, Seeds):
        if "seed" not in rows.jobs:
            out["why"] = f"needs runs over at least {cd.noise.min_seeds} seeds"
            return out
        per, tv, cv = [], [], []
        for sd in sorted(set(rt["seed"]) & set(rc["seed"])):
            t, c = _pair(cd, rt[rt["seed"] == sd], rc[rc["seed"] == sd], tj, cj)
            if len(t):
                per.append(float(cd.effect_of(t, c)))
                tv.append(float(f(t)))
                cv.append(float(f(c)))
        if len(per) < cd.noise.min_seeds:
            out["why"] = f"needs runs over at least {cd.noise.min_seeds} seeds ({len(per)} paired)"
            return out
        value, lo, hi = float(np.mean(per)), float(min(per)), float(max(per))
        out.update(n=len(per), treatment_value=float(np.mean(tv)), control_value=float(np.mean(cv)))
        out["noise"] = cd.noise.text(len(per), cd.metric.over)
    else:
        first = None
        if "seed" in rows.jobs:      # runs of several seeds: a bootstrap judges those of the first one
            common = set(rt["seed"]) & set(rc["seed"])
            if not common:
                out["why"] = f"no seed common to {t_label} and {c_label} on {cd.scope}"
                return out
            first = min(common)
            rt, rc = rt[rt["seed"] == first], rc[rc["seed"] == first]
        t, c = _pair(cd, rt, rc, tj, cj)
        if not (len(t) and len(c)):
            out["why"] = f"no {cd.metric.over} paired between {t_label} and {c_label} on {cd.scope}"
            return out
        value = float(cd.effect_of(t, c))
        lo, hi = cd.noise.interval(t, c, cd.effect_of, cd.paired)
        out.update(n=len(t) if cd.paired else [len(t), len(c)], treatment_value=float(f(t)),
                   control_value=float(f(c)))
        out["noise"] = (cd.noise.text(len(t), cd.metric.over) if cd.paired else
                        f"bootstrap over {len(t)} and {len(c)} jobs (unpaired: two classes), {cd.noise.resamples} "
                        f"resamples, {100 * cd.noise.level:g} % interval")
        if first is not None:
            out["noise"] += f" (the runs of seed {first})"
    out.update(value=value, interval=[lo, hi])
    null = cd.null
    if value != value:
        out.update(verdict=NOT, why="effect undefined (the control's statistic is 0)")
    elif cd.asserts == NO_DIFFERENCE:
        inside = cd.band.holds(value) and cd.band.holds(lo) and cd.band.holds(hi)
        out.update(verdict=REPRODUCED if inside else NOT,
                   why="the noise interval lies inside the band" if inside else "the effect or its noise interval "
                   "leaves the band")
    elif value == null:
        out.update(verdict=NOT, why="no effect")
    elif not value > null:
        out.update(verdict=NOT, why="wrong direction: the treatment is worse than the control")
    elif not lo > null:
        out.update(verdict=NOT, why="inside the noise floor")
    elif cd.band.holds(value):
        out.update(verdict=REPRODUCED, why="right direction, beyond the noise floor, inside the band")
    else:
        out.update(verdict=PARTLY, why="right direction, beyond the noise floor, outside the band")
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


def over_seeds(claims: list[Claim] | tuple[Claim, ...], min_seeds: int = 3) -> list[Claim]:
    """`claims` with the noise floor of every condition that pairs jobs (`Condition.paired`, a metric over
    jobs) the spread over at least `min_seeds` seeds (`Seeds`) in place of the one it states: what
    `reproduce --seeds N` (N >= 3) judges them by (docs/verdicts.md). The other conditions (over parts, or
    comparing classes of jobs) keep their bootstrap, on the runs of the first seed (`judge`)."""
    def spread(d: Condition) -> Condition:
        return replace(d, noise=Seeds(min_seeds)) if d.paired and d.metric.over == "jobs" else d
    return [replace(c, conditions=tuple(spread(d) for d in c.conditions)) for c in claims]


def evaluate(claims: list[Claim] | tuple[Claim, ...], jobs: pd.DataFrame | None, mode: str = "real",
             regime: list[RegimeCheck] | tuple[RegimeCheck, ...] = ()) -> list[Verdict]:
    """One verdict per claim, in table order (docs/verdicts.md).

    `jobs`: the tidy per-job table of every run (columns scope, policy = column label, job_id, then
    `burstbuffer.metrics.tidy.job_metrics`'s; ``seed`` for a `Seeds` noise floor; None or empty: every
    claim ``not measured``). `mode`: one of `MODES` (``placebo``: each condition's control in place of its
    treatment; ``reverse``: the two swapped). `regime`: the study's `RegimeCheck`s; when one failed, every
    measured claim is ``out of regime`` (its measurement still reported). ValueError for an unknown mode."""
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
