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
