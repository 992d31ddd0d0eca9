"""A claim's condition (`Condition`: treatment, control, metric, effect, band, noise floor) and a study's
regime check (`RegimeCheck`), `burstbuffer.metrics.claims`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from ...lazy import lazy
from ..verdicts import DIFFERENCE, NO_DIFFERENCE, placebo_column
from .quantities import statistic, Band, EFFECTS, HIGHER, LOWER, Metric, Replicates


np = lazy("numpy")  # numpy and pandas: imported on first use (burstbuffer.lazy)
pd = lazy("pandas")


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
            f = statistic(self.metric.stat)
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
