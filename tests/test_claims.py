"""The claims table (burstbuffer.metrics.claims, the kopanski2021 study's CLAIMS) on small synthetic
summaries whose verdicts are computed by hand: one case per verdict kind, each rule at its bounds, a
claim over the parts, and a table of one's own evaluated by the same function."""
import math

import pandas as pd
import pytest

from burstbuffer.metrics.claims import Above, AllHold, AtLeast, Claim, Measurement, Within, evaluate
from burstbuffer.metrics.report import MISSING, NOT, PARTLY, REPRODUCED
from burstbuffer.reproduce.studies.kopanski2021 import CLAIMS


def _whole(means: dict[str, float], bsld: dict[str, float] | None = None) -> pd.DataFrame:
    """summary_table-like rows of the whole scope: mean waiting time [h] (and mean bounded slowdown) per policy."""
    return pd.DataFrame([{"scope": "whole", "policy": p, "wait_h_mean": w, "bsld_mean": (bsld or means)[p],
                          "wait_h_q0.5": w, "wait_h_q0.96875": w, "wait_h_max": w} for p, w in means.items()])


def _claim(cid: str) -> Claim:
    return next(c for c in CLAIMS if c.id == cid)


@pytest.mark.parametrize("sjf, verdict, text", [
    (0.955, REPRODUCED, "4.5 % lower"),     # 1 − 0.955 / 1 = 4.5 %, within ±2.5 of 4.5
    (0.99, PARTLY, "1.0 % lower"),          # 1 %: lower, but 3.5 points from 4.5
    (1.10, NOT, "-10.0 % lower"),           # sjf-bb above fcfs-bb
])
def test_sjf_vs_fcfs_bb_each_verdict(sjf, verdict, text):
    [v] = evaluate([_claim("sjf-vs-fcfs-bb")], _whole({"fcfs-bb": 1.0, "sjf-bb": sjf}))
    assert v.verdict == verdict and text in v.measured and v.id == "sjf-vs-fcfs-bb" and v.paper_value == "4.5 %"


def test_missing_policy_is_not_measured_and_says_what_it_needs():
    [v] = evaluate([_claim("sjf-vs-fcfs-bb")], _whole({"sjf-bb": 1.0}))
    assert (v.verdict, v.measured, v.source, v.by_how_much) == (MISSING, "needs sjf-bb and fcfs-bb", "§4.2", "")


def test_plan2_bsld_tolerance():
    # improvement 1 − 0.755 / 1 = 24.5 % = 27 − 2.5: reproduced at the bound; 24 %: partly; −5 %: not
    for plan2, verdict in ((0.755, REPRODUCED), (0.76, PARTLY), (1.05, NOT)):
        s = _whole({"sjf-bb": 1.0, "plan-2": 1.0}, bsld={"sjf-bb": 1.0, "plan-2": plan2})
        [v] = evaluate([_claim("plan2-bsld")], s)
        assert v.verdict == verdict, plan2


def test_fcfs_easy_orders_of_magnitude():
    # fcfs-easy / the highest other (fcfs excluded): 40 / 1 = 40 ≥ 10^1.5 ≈ 31.6 on both metrics
    assert evaluate([_claim("easy-orders")], _whole({"fcfs": 99, "fcfs-easy": 40, "sjf-bb": 1, "plan-2": 0.5}))[0].verdict \
        == REPRODUCED
    # 30 / 1 < 31.6: partly; 0.5 / 1: not
    assert evaluate([_claim("easy-orders")], _whole({"fcfs-easy": 30, "sjf-bb": 1}))[0].verdict == PARTLY
    assert evaluate([_claim("easy-orders")], _whole({"fcfs-easy": 0.5, "sjf-bb": 1}))[0].verdict == NOT
    assert evaluate([_claim("easy-orders")], _whole({"fcfs": 1, "fcfs-easy": 5}))[0].verdict == MISSING


def test_parts_claim_counts_parts():
    # plan-1 below plan-2 in parts 0 and 1 of 3 (waiting time: majority) but only in part 0 for the
    # bounded slowdown (minority): one of two conditions → partly
    rows = []
    for k, (w1, b1) in enumerate([(1.0, 1.0), (1.0, 3.0), (3.0, 3.0)]):
        rows += [{"scope": f"part-{k:02d}", "policy": "plan-1", "wait_mean_h": w1, "bsld_mean": b1},
                 {"scope": f"part-{k:02d}", "policy": "plan-2", "wait_mean_h": 2.0, "bsld_mean": 2.0}]
    [v] = evaluate([_claim("parts-plan1")], _whole({}).reindex(columns=["policy"]), pd.DataFrame(rows))
    assert v.verdict == PARTLY and "2 of 3 parts (waiting time), 1 of 3" in v.measured
    # without parts: not measured, whatever the whole scope holds
    [v] = evaluate([_claim("parts-plan1")], _whole({"plan-1": 1, "plan-2": 2}), None)
    assert v.verdict == MISSING and v.measured == "needs the parts with plan-1 and plan-2"


def test_rules_at_their_bounds():
    m = lambda value, partly=None: Measurement("", "", value=value, partly_value=partly)  # noqa: E731
    assert AtLeast(2, 1).verdict(m(2)) == REPRODUCED and AtLeast(2, 1).verdict(m(1)) == NOT
    assert AtLeast(2, 1).verdict(m(1.5)) == PARTLY and AtLeast(2, 1).verdict(m(math.nan)) == NOT
    assert Above(1, 0).verdict(m(1, 0.5)) == PARTLY and Above(1, 0).verdict(m(1, 0)) == NOT
    assert Above(1, 0).verdict(m(1.01, -3)) == REPRODUCED
    assert Within(4.5, 2.5).verdict(m(7.0, 0.07)) == REPRODUCED and Within(4.5, 2.5).verdict(m(7.1, 0.071)) == PARTLY
    assert Within(4.5, 2.5).verdict(m(-1, -0.01)) == NOT
    c = lambda k, n: Measurement("", "", count=(k, n))  # noqa: E731
    assert [AllHold().verdict(c(k, 3)) for k in range(4)] == [NOT, PARTLY, PARTLY, REPRODUCED]


def test_a_table_of_ones_own():
    """A new study's claim is a row: its measure reads the summary, its rule judges the value."""
    ratio = Claim("x", "a beats b by 2×", "§0", "whole", ("a", "b"), "2×",
                  lambda s: None if len(s) < 2 else Measurement(
                      "m", "", value=float(s.set_index("policy").wait_h_mean["b"] / s.set_index("policy").wait_h_mean["a"])),
                  AtLeast(2, 1), "a and b")
    out = evaluate([ratio, ratio], _whole({"a": 1.0, "b": 1.5}))
    assert [v.verdict for v in out] == [PARTLY, PARTLY] and out[0].claim == "a beats b by 2×"
    assert evaluate([ratio], _whole({"a": 1.0}))[0].verdict == MISSING
    with pytest.raises(ValueError):
        Claim("y", "", "", "somewhere", (), "", ratio.measure, AtLeast(1, 0), "")


def test_the_paper_table():
    assert len(CLAIMS) == 11 and len({c.id for c in CLAIMS}) == 11
    assert [c.scope for c in CLAIMS] == ["whole"] * 8 + ["parts"] * 3
