"""What a claim's condition measures (`burstbuffer.metrics.claims`): the better direction, the band around
the source's number (`Band`), the effects, the statistics, the metric (`Metric`) and the noise floor
(`Replicates`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from ...lazy import lazy


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


#: the statistics `statistic` knows besides q<p>
STATS = ("mean", "median", "max", "min", "sum")


def statistic(name: str, resolve: bool = True):
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
        statistic(self.stat, resolve=False)

    def units(self, rows: pd.DataFrame) -> pd.Series:
        """Per-unit values of one column of the study (`rows`: its per-job rows in the condition's scopes):
        indexed by job_id (over jobs) or by scope (over parts; the statistic over each part's jobs)."""
        if self.values is not None:
            return self.values(rows).astype(float).dropna()
        if self.select is not None and len(rows):
            rows = rows[np.asarray(self.select(rows), bool)]
        v = pd.to_numeric(rows[self.column], errors="coerce") / self.scale
        if self.over == "parts":
            f = statistic(self.stat)
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
