"""Statistics of per-job metrics (docs/metrics.md, Kopanski & Rzadca 2021, §4.2): means with 95 % confidence
intervals, quantiles, the tail, letter values (boxenplots) and per-part normalisation.

Every function takes plain sequences / numpy arrays of one metric (NaN = job without a value,
e.g. never started: ignored) and is independent of units.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

#: quantile levels of the summary tables (the paper's "32-quantile" is 31/32 = 0.96875)
QUANTILES = (0.25, 0.5, 0.75, 0.9, 0.96875, 0.99)
#: docs/metrics.md: the tail is the 3000 largest values
TAIL = 3000


def _clean(values) -> np.ndarray:
    a = np.asarray(values, dtype=float).ravel()
    return a[~np.isnan(a)]


@dataclass(frozen=True)
class MeanCI:
    """Sample mean and its two-sided confidence interval [low, high] (Student t)."""

    mean: float
    low: float
    high: float
    n: int

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


def mean_ci(values, confidence: float = 0.95) -> MeanCI:
    """Mean ± t_{(1+c)/2, n−1} · s / √n (s: sample standard deviation, ddof = 1).

    NaNs are ignored. n = 0 gives NaNs; n = 1 gives a zero-width interval (no spread known).
    """
    a = _clean(values)
    n = len(a)
    if n == 0:
        return MeanCI(math.nan, math.nan, math.nan, 0)
    m = float(a.mean())
    if n == 1:
        return MeanCI(m, m, m, 1)
    from scipy import stats as _st     # here, not at import: jobs.csv's readers (bb_occupancy.csv) need no scipy
    half = float(_st.t.ppf((1 + confidence) / 2, n - 1) * a.std(ddof=1) / math.sqrt(n))
    return MeanCI(m, m - half, m + half, n)


def quantiles(values, levels=QUANTILES) -> dict[float, float]:
    """Quantiles (numpy's default linear interpolation) at `levels`; NaN if no value."""
    a = _clean(values)
    if not len(a):
        return {q: math.nan for q in levels}
    return {q: float(v) for q, v in zip(levels, np.quantile(a, levels))}


def tail(values, k: int = TAIL) -> np.ndarray:
    """The `k` largest values, in decreasing order (all of them if fewer)."""
    a = _clean(values)
    return np.sort(a)[::-1][:k]


# --- letter values (Hofmann, Wickham & Kafadar 2017; seaborn's boxenplot) --------------------------
@dataclass(frozen=True)
class LetterValues:
    """Letter values of a sample: `boxes[i] = (lower, upper)` for depth i+1 (i = 0: the fourths,
    i.e. the quartile box; i = 1: the eighths; …), `median`, and the `outliers` beyond the last box."""

    median: float
    boxes: list[tuple[float, float]]
    outliers: np.ndarray
    n: int


def letter_depth_count(n: int) -> int:
    """Number of letter-value boxes by Tukey's rule, as seaborn's ``k_depth="tukey"``:
    ⌊log2 n⌋ − 3, at least 1 (for n ≥ 1)."""
    if n < 1:
        return 0
    return max(int(math.log2(n)) - 3, 1)


def letter_values(values, k: int | None = None) -> LetterValues:
    """Letter values: box i (i = 1 … k) spans the quantiles 2^−(i+1) and 1 − 2^−(i+1) (the
    fourths, eighths, sixteenths, …); values outside the last box are outliers. `k` defaults to
    `letter_depth_count`. Raises ValueError on an empty sample."""
    a = np.sort(_clean(values))
    n = len(a)
    if n == 0:
        raise ValueError("letter values of an empty sample")
    k = letter_depth_count(n) if k is None else max(int(k), 1)
    boxes = []
    for i in range(1, k + 1):
        p = 2.0 ** -(i + 1)
        lo, hi = np.quantile(a, [p, 1 - p])
        boxes.append((float(lo), float(hi)))
    lo, hi = boxes[-1]
    out = a[(a < lo) | (a > hi)]
    return LetterValues(float(np.median(a)), boxes, out, n)


# --- normalisation over parts ----------------------------------------------------------------------
def normalise_by(means: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Each part's policy means divided by the `reference` policy's mean on that part (docs/metrics.md,
    Kopanski & Rzadca 2021, Fig. 11-12).

    `means`: rows = parts, columns = policies, values = that policy's mean on that part.
    Returns the same shape. Where the reference mean is 0, a mean of 0 gives 1 (equal) and any
    other mean NaN (undefined); a missing reference gives NaN. Raises KeyError if `reference` is
    not a column.
    """
    m = means.astype(float)
    ref = m[reference]
    out = m.div(ref.replace(0.0, np.nan), axis=0)
    zero = ref == 0
    if zero.any():
        out.loc[zero] = np.where(m.loc[zero] == 0, 1.0, np.nan)
    return out


# --- the noise floor of a comparison: independent replicates (docs/verdicts.md) -------------------------------
#: the level of every replicate interval, unless a caller states another
LEVEL = 0.95


@dataclass(frozen=True)
class ReplicateInterval:
    """A mean over replicates and its two-sided Student's t interval [low, high] at `level`. `n`: the values it
    is made of (replicates, or, unpaired, the replicates of both sides); `why`: when the interval is NaN, why
    (fewer than 2 values on a side, or values that do not vary: no spread is known), else ""."""

    mean: float
    low: float
    high: float
    n: int
    level: float = LEVEL
    why: str = ""

    @property
    def known(self) -> bool:
        """True when the interval exists (`why` empty)."""
        return not self.why


def _flat(a: np.ndarray) -> bool:
    """True when the values do not vary beyond rounding (spread ≤ 1e-9 of their magnitude)."""
    return float(np.ptp(a)) <= 1e-9 * max(1.0, float(np.max(np.abs(a))))


def paired_interval(effects, level: float = LEVEL) -> ReplicateInterval:
    """The mean of the per-replicate paired effects `effects` (one value per replicate; NaN dropped) and its
    Student's t interval: mean ± t_{(1+level)/2, R−1} · s / √R (``scipy.stats.ttest_1samp``). No interval
    (NaN, `why` set) with fewer than 2 values, or when they are all equal (s = 0: replicates that do not vary
    give no noise floor, they are not independent draws). Source: docs/verdicts.md, "The noise floor"."""
    a = _clean(effects)
    n = len(a)
    m = float(a.mean()) if n else math.nan
    if n < 2:
        return ReplicateInterval(m, math.nan, math.nan, n, level,
                                 f"{n} replicate{'' if n == 1 else 's'}: no interval (at least 2 needed)")
    if _flat(a):
        return ReplicateInterval(m, math.nan, math.nan, n, level,
                                 f"the {n} replicates give the same effect: no spread, no interval (their "
                                 "inputs do not vary)")
    from scipy import stats as _st
    ci = _st.ttest_1samp(a, 0.0).confidence_interval(level)
    return ReplicateInterval(m, float(ci.low), float(ci.high), n, level)


def unpaired_interval(a, b, level: float = LEVEL) -> ReplicateInterval:
    """The difference of means mean(a) − mean(b) of two independent sets of replicate values (NaN dropped) and
    its Welch t interval (``scipy.stats.ttest_ind(equal_var=False)``); `n` = len(a) + len(b). No interval
    (`why` set) with fewer than 2 values on a side or no spread on both."""
    a, b = _clean(a), _clean(b)
    m = float(a.mean() - b.mean()) if len(a) and len(b) else math.nan
    if len(a) < 2 or len(b) < 2:
        return ReplicateInterval(m, math.nan, math.nan, len(a) + len(b), level,
                                 f"{len(a)} and {len(b)} replicates: no interval (at least 2 a side needed)")
    if _flat(a) and _flat(b):
        return ReplicateInterval(m, math.nan, math.nan, len(a) + len(b), level,
                                 "the replicates of each side do not vary: no spread, no interval")
    from scipy import stats as _st
    ci = _st.ttest_ind(a, b, equal_var=False).confidence_interval(level)
    return ReplicateInterval(m, float(ci.low), float(ci.high), len(a) + len(b), level)


def job_bootstrap_interval(t, c, effect, *, paired: bool = True, resamples: int = 1000, level: float = LEVEL,
                           seed: int = 12345) -> tuple[float, float]:
    """DIAGNOSTIC ONLY, never a noise floor: the central `level` interval of ``effect(t[i], c[i], axis=1)`` over
    `resamples` bootstrap resamples i of the jobs of ONE pair of runs (`t`, `c`: per-job values; `paired`
    False: each side resampled on its own). The jobs of one schedule are not independent samples, so this
    interval is far too narrow: A/A comparisons come out "beyond noise" far above the nominal rate
    (benchmarks/calibration.py; docs/verdicts.md). Kept to show that failure. (NaN, NaN) with < 2 jobs."""
    t, c = np.asarray(t, float), np.asarray(c, float)
    n, m = len(t), len(c)
    if n < 2 or m < 2:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(resamples, n))
    jdx = idx if paired else rng.integers(0, m, size=(resamples, m))
    e = np.asarray(effect(t[idx], c[jdx], axis=1), float)
    e = e[~np.isnan(e)]
    if not len(e):
        return (math.nan, math.nan)
    a = (1 - level) / 2
    return float(np.quantile(e, a)), float(np.quantile(e, 1 - a))


def binomial_interval(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The Clopper-Pearson interval [low, high] of a rate k / n (``scipy.stats.binomtest``); (NaN, NaN) for n = 0."""
    if n <= 0:
        return (math.nan, math.nan)
    from scipy import stats as _st
    ci = _st.binomtest(int(k), int(n)).proportion_ci(level, method="exact")
    return float(ci.low), float(ci.high)


def calibrated(k: int, n: int, nominal: float = 0.05, level: float = LEVEL) -> bool:
    """The A/A rule (docs/verdicts.md, "Calibration"): `k` of `n` comparisons where the truth is zero judged
    beyond the noise floor is at or below the `nominal` false-positive rate within sampling error — the
    lower end of its `binomial_interval` at `level` is at or below `nominal`. False for n = 0."""
    lo, _ = binomial_interval(k, n, level)
    return bool(lo == lo and lo <= nominal)
