"""The verdict strings of a reproduction report and the `Verdict` row (claim, measurement, verdict).

Their meaning is docs/verdicts.md: ``reproduced`` (the paper's direction, a magnitude inside the claim's
band, beyond the noise floor), ``partly`` (right direction beyond the noise floor, magnitude outside the
band), ``not reproduced`` (wrong direction, or inside the noise floor), ``out of regime`` (the study's
regime checks failed: no verdict), ``not measured`` (the runs lack what the claim needs), ``not testable``
(the source states no experiment or number that a run could check: the claim is listed, never judged).

The primitives below `burstbuffer.metrics.claims` (which evaluates claims into verdicts) and
`burstbuffer.metrics.report` (which renders them); neither this module nor those import a study.
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["REPRODUCED", "PARTLY", "NOT", "MISSING", "OUT_OF_REGIME", "NOT_TESTABLE", "VERDICTS", "DIFFERENCE",
           "NO_DIFFERENCE", "MODES", "PAPER", "PROJECT", "PLACEBO_SUFFIX", "placebo_column", "Verdict"]

REPRODUCED, PARTLY, NOT, MISSING = "reproduced", "partly", "not reproduced", "not measured"
OUT_OF_REGIME = "out of regime"
NOT_TESTABLE = "not testable"
#: every verdict, in the order a report counts them
VERDICTS = (REPRODUCED, PARTLY, NOT, OUT_OF_REGIME, MISSING, NOT_TESTABLE)
#: what a claim asserts (``Verdict.asserts``): a difference between its treatment and its control, or none
DIFFERENCE, NO_DIFFERENCE = "difference", "no difference"
#: how the claims were judged: on the runs as planned; ``placebo``, an A/A test (each claim's control against
#: the control policy run again with independent seeds on independent workload draws, unpaired: a claim of a
#: difference must then fail); ``reverse``, a sign check (treatment and control swapped); docs/verdicts.md
MODES = ("real", "placebo", "reverse")
#: the column name of a column's A/A runs (the placebo's treatment)
PLACEBO_SUFFIX = " (A/A)"


def placebo_column(label: str) -> str:
    """The name of column `label`'s A/A runs in a per-job table: ``label (A/A)``."""
    return label + PLACEBO_SUFFIX
#: whose claim a row is (``Verdict.origin``): a statement of the source, or a question the project asks itself
#: (listed apart from the source's claims, as the project's)
PAPER, PROJECT = "paper", "project"


@dataclass
class Verdict:
    """One claim: its text and place in the paper, what was measured, the verdict (one of `VERDICTS`)
    and how far the measurement is from the claim; `id` and `paper_value` come from the claim's row
    (`burstbuffer.metrics.claims.Claim`). `asserts`: `DIFFERENCE` or `NO_DIFFERENCE`; `band`: the band
    around the paper's number and its reason; `noise`: the claim's noise floor; `conditions`: one dict
    per condition (treatment, control, metric, effect, interval, band, verdict); `mode`: one of `MODES`;
    `regime`: the failed regime checks when the verdict is `OUT_OF_REGIME`; `origin`: `PAPER` or `PROJECT`."""

    claim: str
    source: str
    measured: str
    verdict: str
    by_how_much: str
    id: str = ""
    paper_value: str = ""
    asserts: str = DIFFERENCE
    band: str = ""
    noise: str = ""
    conditions: list = field(default_factory=list)
    mode: str = "real"
    regime: list = field(default_factory=list)
    origin: str = PAPER
