"""The shape of a condition's rule (docs/verdicts.md, "Which way a rule can fail"): which of "too small" and
"too large" its band can reject, read off the band and the largest effect the metric allows.

A condition asserting a difference passes only with the paper's direction beyond the noise floor; its band
[low, high] then adds

- a **minimal effect** when low lies above the null (an effect beyond the noise floor but below low is
  *partly*: the rule can fail "too small");
- a **maximal effect** when high lies below the largest effect possible (`ceiling`: 100 % for a reduction,
  a share or points; unbounded for a ratio or an increase): the rule can fail "too large".

Both: *two-sided* (it can fail both ways); only the first: *at least*; only the second: *at most*; neither:
*direction only* (any effect beyond the noise floor passes). A condition asserting no difference is an
equivalence test: it fails when the interval leaves the band on either side (two-sided).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .claims import EFFECTS, LOWER, Condition
from .verdicts import NO_DIFFERENCE

__all__ = ["TWO_SIDED", "AT_LEAST", "AT_MOST", "DIRECTION_ONLY", "EQUIVALENCE", "Rule", "ceiling", "rule"]

TWO_SIDED, AT_LEAST, AT_MOST, DIRECTION_ONLY, EQUIVALENCE = (
    "two-sided", "at least (one-sided)", "at most (one-sided)", "direction only", "equivalence (two-sided)")


def ceiling(effect: str, better: str) -> float:
    """The largest value effect kind `effect` (`claims.EFFECTS`) can take in direction `better`: 100 for a
    relative reduction (the treatment's statistic at 0), a share or points; +inf for a ratio or a relative
    increase."""
    if effect in ("share", "points") or (effect == "relative" and better == LOWER):
        return 100.0
    return math.inf


@dataclass(frozen=True)
class Rule:
    """A condition's rule: `kind` (one of the constants above), whether it can fail "too small"
    (`fails_small`) and "too large" (`fails_large`), and `text`: the rule in words with the band's unit
    (e.g. "at least 5 %: cannot fail too large")."""

    kind: str
    fails_small: bool
    fails_large: bool
    text: str

    @property
    def both_ways(self) -> bool:
        return self.fails_small and self.fails_large


def _num(x: float, unit: str) -> str:
    return f"{x:.4g}{unit}"


def rule(cond: Condition) -> Rule:
    """The `Rule` of `cond` (module docstring)."""
    unit = EFFECTS[cond.effect][0]
    lo, hi = cond.band.low, cond.band.high
    if cond.asserts == NO_DIFFERENCE:
        return Rule(EQUIVALENCE, True, True, f"no difference: the interval inside [{_num(lo, unit)}, "
                                             f"{_num(hi, unit)}]; fails when it leaves the band on either side")
    small, large = lo > cond.null, hi < ceiling(cond.effect, cond.better)
    if small and large:
        return Rule(TWO_SIDED, True, True, f"two-sided: from {_num(lo, unit)} to {_num(hi, unit)}; can fail "
                                           "too small and too large")
    if small:
        return Rule(AT_LEAST, True, False, f"minimal effect {_num(lo, unit)}: at least that, beyond the noise "
                                           "floor; cannot fail too large")
    if large:
        return Rule(AT_MOST, False, True, f"at most {_num(hi, unit)}, beyond the noise floor; cannot fail too "
                                          "small")
    return Rule(DIRECTION_ONLY, False, False, "direction only: any effect beyond the noise floor in the "
                                              "paper's direction; cannot fail too small or too large")
