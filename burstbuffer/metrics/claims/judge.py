"""A condition judged (`judge`, `decide`): its verdict from the effect, the noise interval and the band
(docs/verdicts.md; `burstbuffer.metrics.claims`).
"""
from __future__ import annotations

import math

from ..verdicts import MISSING, NO_DIFFERENCE, NOT, PARTLY, REPRODUCED
from .conditions import Condition
from .measure import Rows, measure
from .quantities import EFFECTS


def decide(cond: Condition, value: float, lo: float, hi: float, why_no_interval: str = "") -> tuple[str, str]:
    """(verdict, why) of one condition from its effect `value` and its noise interval [`lo`, `hi`]
    (docs/verdicts.md): no interval (`why_no_interval`): never reproduced; a difference: reproduced beyond
    the noise floor inside the band, partly outside it, not reproduced in the wrong direction or inside the
    noise floor; no difference: reproduced when the whole interval lies inside the band."""
    null = cond.null
    if value != value:
        return NOT, "effect undefined (the control's statistic is 0, or nothing paired)"
    if why_no_interval or lo != lo or hi != hi:
        return NOT, why_no_interval or "no noise interval"
    if cond.asserts == NO_DIFFERENCE:
        inside = cond.band.holds(value) and cond.band.holds(lo) and cond.band.holds(hi)
        return (REPRODUCED, "the noise interval lies inside the band") if inside else \
            (NOT, "the effect or its noise interval leaves the band")
    if value == null:
        return NOT, "no effect"
    if not value > null:
        return NOT, "wrong direction: the treatment is worse than the control"
    if not lo > null:
        return NOT, "inside the noise floor"
    if cond.band.holds(value):
        return REPRODUCED, "right direction, beyond the noise floor, inside the band"
    return PARTLY, "right direction, beyond the noise floor, outside the band"


def beyond_noise(cond: Condition, lo: float, hi: float) -> bool:
    """True when the interval [`lo`, `hi`] excludes the null (no effect) on either side."""
    return bool(lo == lo and hi == hi and (lo > cond.null or hi < cond.null))


def judge(cond: Condition, jobs, mode: str = "real") -> dict:
    """One condition's verdict on the tidy per-job table `jobs` (columns scope, policy, job_id, replicate, the
    metric's column) in `mode` (`MODES`; ``placebo``: the A/A column against the control, unpaired): a dict
    with name, treatment, control, scope, metric, better, effect (kind), unit, asserts, value (the effect),
    interval (the noise floor's), beyond_noise, treatment_value and control_value (the metric's statistic),
    n (replicates), per_replicate, band, noise (text), verdict, why (text). Verdict ``not measured`` when a
    column lacks runs in the scope or no replicate pairs."""
    cd = cond
    t_label, tj, c_label, cj = cond.sides(mode)
    unit = EFFECTS[cd.effect][0]
    out = {"name": cond.name, "treatment": t_label, "control": c_label, "scope": cd.scope,
           "metric": cd.metric.name, "better": cd.better, "effect": cd.effect, "unit": unit.strip(),
           "asserts": cd.asserts, "band": cd.band.text(unit), "value": math.nan, "interval": [math.nan, math.nan],
           "beyond_noise": False, "treatment_value": math.nan, "control_value": math.nan, "n": 0,
           "per_replicate": [], "noise": "", "verdict": MISSING, "why": ""}
    rows = jobs if isinstance(jobs, Rows) else Rows(jobs)
    rt, rc = rows(t_label, cd.scope), rows(c_label, cd.scope)
    lacking = [lab for lab, r in ((t_label, rt), (c_label, rc)) if r.empty]
    if lacking:
        why = f"needs {' and '.join(dict.fromkeys(lacking))} on {cd.scope}"
        if mode == "placebo" and t_label in lacking:
            why += " (the A/A runs: reproduce --placebo)"
        out["why"] = why
        return out
    m = measure(cd, rt, rc, tj=tj, cj=cj, paired=mode != "placebo")
    if not m["n"] and not m["per_replicate"]:     # paired units whose effect is undefined are judged below
        out["why"] = f"no {cd.metric.over} paired between {t_label} and {c_label} on {cd.scope}"
        return out
    lo, hi = m["interval"]
    verdict, why = decide(cd, m["value"], lo, hi, m["why_no_interval"])
    out.update(value=m["value"], interval=[lo, hi], beyond_noise=beyond_noise(cd, lo, hi), n=m["n"],
               per_replicate=m["per_replicate"], treatment_value=m["treatment_value"],
               control_value=m["control_value"], noise=m["noise"], verdict=verdict, why=why)
    return out
