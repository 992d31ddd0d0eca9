"""A claim (`Claim`: its conditions and source) and the evaluation of a table of them (`evaluate`,
`false_positive_rate`), `burstbuffer.metrics.claims`.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...lazy import lazy
from ..verdicts import (DIFFERENCE, MISSING, MODES, NO_DIFFERENCE, NOT, NOT_TESTABLE, OUT_OF_REGIME, PAPER, PARTLY,
                        PROJECT, REPRODUCED, Verdict)
from .conditions import Condition, RegimeCheck
from .judge import judge
from .measure import Rows
from .quantities import EFFECTS


pd = lazy("pandas")


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


def _g(x: float) -> str:
    return "n/a" if x != x else f"{x:.3g}"


def _judge_claim(c: Claim, jobs: "Rows | None", mode: str) -> Verdict:
    """A claim with conditions: each condition judged (`judge`), then combined (`burstbuffer.metrics.claims`)."""
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


def evaluate(claims: list[Claim] | tuple[Claim, ...], jobs: pd.DataFrame | None, mode: str = "real",
             regime: list[RegimeCheck] | tuple[RegimeCheck, ...] = ()) -> list[Verdict]:
    """One verdict per claim, in table order (docs/verdicts.md).

    `jobs`: the tidy per-job table of every run (columns scope, policy = column label, job_id, then
    `burstbuffer.metrics.tidy.job_metrics`'s; ``replicate`` (0 when absent) for the noise floor; None or empty: every
    claim ``not measured``). `mode`: one of `MODES` (``placebo``: an A/A test, each condition's control
    against its A/A column, `placebo_column`, unpaired; ``reverse``: a sign check, the two swapped).
    `regime`: the study's `RegimeCheck`s; when one failed, every measured claim is ``out of regime`` (its
    measurement still reported). ValueError for an unknown mode."""
    if mode not in MODES:
        raise ValueError(f"mode {mode!r} not in {MODES}")
    failed = [f"{r.name}: {r.measured} (needs {r.needs})" for r in regime if not r.ok]
    rows = Rows(jobs) if jobs is not None and not jobs.empty else None
    out = []
    for c in claims:
        v = _judge_claim(c, rows, mode)
        if failed and v.verdict not in (MISSING, NOT_TESTABLE):
            _out_of_regime(v, failed)
        out.append(v)
    return out


def false_positive_rate(verdicts: list[Verdict]) -> tuple[int, int]:
    """(k, n) of an A/A (placebo) judgement: n conditions asserting a difference that were measured, k of them
    beyond the noise floor in either direction. Nominal: k / n ≈ 1 − the interval's level."""
    conds = [d for v in verdicts for d in v.conditions if d["asserts"] == DIFFERENCE and d["verdict"] != MISSING]
    return sum(bool(d["beyond_noise"]) for d in conds), len(conds)


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
