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

The package: `quantities` (directions, bands, effects, metrics, noise floors), `conditions` (a condition, a
regime check), `measure` and `judge` (a condition measured and judged), `claim` (a claim, `evaluate`).
"""
from __future__ import annotations

from ..verdicts import (DIFFERENCE, MISSING, MODES, NO_DIFFERENCE, NOT, NOT_TESTABLE, OUT_OF_REGIME,  # noqa: F401
                        PAPER, PARTLY, PROJECT, REPRODUCED, Verdict, placebo_column)
from .claim import Claim, evaluate, false_positive_rate  # noqa: F401
from .conditions import Condition, Paired, RegimeCheck  # noqa: F401
from .judge import beyond_noise, decide, judge  # noqa: F401
from .measure import measure  # noqa: F401
from .quantities import EFFECTS, HIGHER, LOWER, STATS, Band, Metric, Replicates, around  # noqa: F401
