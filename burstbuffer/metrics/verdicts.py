"""The four verdict strings of a reproduction report and the `Verdict` row (claim, measurement, verdict).

The primitives below `burstbuffer.metrics.claims` (which evaluates claims into verdicts) and
`burstbuffer.metrics.report` (which renders them); neither this module nor those import a study.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["REPRODUCED", "PARTLY", "NOT", "MISSING", "Verdict"]

REPRODUCED, PARTLY, NOT, MISSING = "reproduced", "partly", "not reproduced", "not measured"


@dataclass
class Verdict:
    """One claim: its text and place in the paper, what was measured, the verdict (one of the four
    strings above) and how far the measurement is from the claim; `id` and `paper_value` come from the
    claim's row (`burstbuffer.metrics.claims.Claim`)."""

    claim: str
    source: str
    measured: str
    verdict: str
    by_how_much: str
    id: str = ""
    paper_value: str = ""
