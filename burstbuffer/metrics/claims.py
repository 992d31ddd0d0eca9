"""Claims as data: a table of `Claim` definitions evaluated by one function, `evaluate`.

A claim states what a paper measured (its text, its place in the paper, the value it gives), what it
needs (the scope: the whole workload or the parts; the policies compared), a *measure* — a function of
the summary tables that returns a `Measurement` (the numbers, as text for the report, and the values
the rule judges) or None when the inputs lack what the claim needs — and a *rule* that turns the
measurement into a verdict:

- `AtLeast` / `Above`: reproduced when the value reaches the paper's bound, partly when it is
  past a weaker bound (same direction, smaller effect);
- `Within`: reproduced when the value lies within a tolerance of the paper's value;
- `AllHold`: the measurement counts `k` of `n` conditions: reproduced when all hold, not
  reproduced when none does, partly otherwise.

Verdicts (the strings of `burstbuffer.metrics.verdicts`): ``reproduced``, ``partly``,
``not reproduced``, and ``not measured`` when the measure returns None (the report then says what
more data the claim needs).
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Callable, Protocol

from ..lazy import lazy
from .verdicts import MISSING, NOT, PARTLY, REPRODUCED, Verdict

pd = lazy("pandas")  # imported on first use (burstbuffer.lazy)

#: The scopes a claim may be judged on: the whole workload (``summary_table`` rows of scope
#: ``whole``, one per policy) or the parts (``part_means`` rows, one per part and policy).
SCOPES = ("whole", "parts")


@dataclass(frozen=True)
class Measurement:
    """What a measure found. `measured`, `by_how_much`: the report's text. `value`: the number the
    rule judges (NaN compares false: not reproduced). `partly_value`: the number the rule's weaker
    bound judges, when it is another quantity (default: `value`). `count`: (k conditions that hold,
    n conditions) for `AllHold`."""

    measured: str
    by_how_much: str
    value: float = float("nan")
    partly_value: float | None = None
    count: tuple[int, int] | None = None


class Rule(Protocol):
    """Turns a measurement into one of ``reproduced``, ``partly``, ``not reproduced``."""

    def verdict(self, m: Measurement) -> str: ...


_OPS = {">=": operator.ge, ">": operator.gt}


@dataclass(frozen=True)
class Bound:
    """Reproduced when ``value OP reproduced``, else partly when ``partly_value PARTLY_OP partly``,
    else not reproduced. OP, PARTLY_OP: ``>=`` or ``>``."""

    reproduced: float
    partly: float
    op: str = ">="
    partly_op: str = ">"

    def verdict(self, m: Measurement) -> str:
        pv = m.value if m.partly_value is None else m.partly_value
        if _OPS[self.op](m.value, self.reproduced):
            return REPRODUCED
        return PARTLY if _OPS[self.partly_op](pv, self.partly) else NOT


def AtLeast(reproduced: float, partly: float) -> Bound:  # noqa: N802 - reads as a rule in the table
    """Reproduced when value >= `reproduced`, partly when > `partly`."""
    return Bound(reproduced, partly, ">=", ">")


def Above(reproduced: float, partly: float) -> Bound:  # noqa: N802
    """Reproduced when value > `reproduced`, partly when (partly_value) > `partly`."""
    return Bound(reproduced, partly, ">", ">")


@dataclass(frozen=True)
class Within:
    """Reproduced when |value − target| <= tol, else partly when partly_value > `partly_above`."""

    target: float
    tol: float
    partly_above: float = 0.0

    def verdict(self, m: Measurement) -> str:
        pv = m.value if m.partly_value is None else m.partly_value
        if abs(m.value - self.target) <= self.tol:
            return REPRODUCED
        return PARTLY if pv > self.partly_above else NOT


@dataclass(frozen=True)
class AllHold:
    """`Measurement.count` = (k, n): reproduced when k == n, not reproduced when k == 0, else partly."""

    def verdict(self, m: Measurement) -> str:
        k, n = m.count
        return REPRODUCED if k == n else NOT if k == 0 else PARTLY


@dataclass(frozen=True)
class Claim:
    """One row of a claims table.

    id: short stable name (``verdicts.json``); text: the claim in words; source: where the paper
    states it (section, figures); scope: ``whole`` or ``parts`` (which table `measure` reads);
    policies: the policies it compares; paper_value: the paper's number or ``qualitative``;
    measure: (table of the scope) → Measurement, or None when it cannot be measured; rule: the
    tolerance / verdict rule; needs: what is missing when not measured (report text)."""

    id: str
    text: str
    source: str
    scope: str
    policies: tuple[str, ...]
    paper_value: str
    measure: Callable[[pd.DataFrame], Measurement | None]
    rule: Rule
    needs: str
    missing_source: str | None = None

    def __post_init__(self):
        if self.scope not in SCOPES:
            raise ValueError(f"claim {self.id}: scope {self.scope!r} not in {SCOPES}")


def evaluate(claims: list[Claim] | tuple[Claim, ...], whole: pd.DataFrame,
             parts: pd.DataFrame | None = None) -> list[Verdict]:
    """One verdict per claim, in table order.

    `whole`: ``summary_table`` rows of the whole-workload scope (columns ``policy``,
    ``wait_h_mean`` [h], ``bsld_mean``, quantile columns ``wait_h_q<q>`` [h], ``wait_h_max`` [h]; may be
    empty). `parts`: ``part_means`` rows (``scope``, ``policy``, ``wait_mean_h`` [h], ``bsld_mean``,
    ``wait_norm``, ``bsld_norm``; None or empty: no parts). A claim whose measure returns None is
    ``not measured`` with "needs …" as its measurement. Errors of a measure propagate."""
    tables = {"whole": whole, "parts": parts if parts is not None else pd.DataFrame()}
    out = []
    for c in claims:
        m = c.measure(tables[c.scope])
        if m is None:
            out.append(Verdict(c.text, c.missing_source or c.source, f"needs {c.needs}", MISSING, "",
                               id=c.id, paper_value=c.paper_value))
        else:
            out.append(Verdict(c.text, c.source, m.measured, c.rule.verdict(m), m.by_how_much,
                               id=c.id, paper_value=c.paper_value))
    return out
