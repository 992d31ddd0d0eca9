"""Claims judged both ways on small hand-made summary tables (fast tier): the orders study's drain and clamp
claims (Allcock et al. §4, §4.3.4) and its tightened rules, the backfilling study's claims (Casanova's ICS 632
slides 24, 31-32, 34), the BBSched claims whose rules judge the paper's size; rows that agree with a claim
give "reproduced", rows that contradict it "not reproduced". Also the idle-while-queued measure by hand."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from burstbuffer.metrics.claims import evaluate
from burstbuffer.metrics.regime import idle_while_queued
from burstbuffer.metrics.verdicts import MISSING, NOT, PARTLY, REPRODUCED
from burstbuffer.reproduce.studies import backfilling as BF
from burstbuffer.reproduce.studies import bbsched as B
from burstbuffer.reproduce.studies import orders as O


def _verdict(claims, cid, rows):
    return evaluate([c for c in claims if c.id == cid], rows)[0]


# ---------------------------------------------------------------------------- idle while queued
def test_idle_while_queued_by_hand():
    # 4 nodes: A 2 nodes [0, 10); B 4 nodes, submitted 1, runs [10, 20); C 2 nodes, submitted 2, runs [20, 29).
    # Jobs wait over [1, 20): 2 nodes idle over [1, 10), none over [10, 20) → 18 / (19 × 4)
    j = pd.DataFrame({"submission_time": [0.0, 1.0, 2.0], "starting_time": [0.0, 10.0, 20.0],
                      "finish_time": [10.0, 20.0, 29.0], "requested_number_of_resources": [2, 4, 2]})
    assert idle_while_queued(j, 4) == pytest.approx(18 / 76)
    # nobody ever waits: undefined
    j2 = j.assign(starting_time=[0.0, 1.0, 2.0], finish_time=[1.0, 2.0, 3.0])
    assert math.isnan(idle_while_queued(j2, 4))
    # a job that never started waits to the last event with the machine idle
    j3 = pd.DataFrame({"submission_time": [0.0, 0.0], "starting_time": [0.0, math.nan],
                       "finish_time": [10.0, math.nan], "requested_number_of_resources": [1, 8]})
    assert idle_while_queued(j3, 4) == pytest.approx(3 / 4)


# ---------------------------------------------------------------------------- orders (Allcock et al.)
def _orows(values: dict) -> pd.DataFrame:
    return pd.DataFrame([{"scope": "whole", "policy": lb, **v} for lb, v in values.items()])


L = f"wait_h_mean_size_{O.LARGE}"


@pytest.mark.parametrize("easy_idle, easy_large, verdicts", [
    (0.20, 4.0, (REPRODUCED, REPRODUCED)),      # the reservation leaves nodes idle, large jobs gain
    (0.10, 8.0, (NOT, NOT)),                    # no cost at all; large jobs gain nothing
    (0.05, 12.0, (NOT, NOT)),                   # the other way round
])
def test_drain_claims_both_ways(easy_idle, easy_large, verdicts):
    rows = _orows({"filler/wfp": {"idle_queued": 0.10, L: 8.0},
                   "fcfs-bb/wfp": {"idle_queued": easy_idle, L: easy_large},
                   "sjf-bb/wfp": {"idle_queued": easy_idle, L: easy_large}})
    assert (_verdict(O.CLAIMS, "drain-cost", rows).verdict, _verdict(O.CLAIMS, "drain-capability", rows).verdict) \
        == verdicts
    assert _verdict(O.CLAIMS, "drain-cost", rows.iloc[1:]).verdict == MISSING      # without filler/wfp


def test_drain_cost_needs_a_measurable_cost():
    rows = _orows({"filler/wfp": {"idle_queued": 0.100}, "fcfs-bb/wfp": {"idle_queued": 0.105}})
    assert _verdict(O.CLAIMS, "drain-cost", rows).verdict == NOT          # half a point: a rounding difference


def _clamp_rows(with_, without, key):
    """wfp and wfp-without-`key` columns of both policies: {column: value} each."""
    return _orows({**{f"{p}/wfp": with_ for p in O.POLICIES}, **{O.clamp_label(p, key): without for p in O.POLICIES}})


def test_clamp_floor_both_ways():
    ok = _clamp_rows({"wait_h_mean_large_short": 4.0, "idle_queued": 0.10},
                     {"wait_h_mean_large_short": 2.0, "idle_queued": 0.15}, "nofloor")
    assert _verdict(O.CLAIMS, "clamp-floor", ok).verdict == REPRODUCED
    bad = _clamp_rows({"wait_h_mean_large_short": 4.0, "idle_queued": 0.15},
                      {"wait_h_mean_large_short": 5.0, "idle_queued": 0.10}, "nofloor")
    assert _verdict(O.CLAIMS, "clamp-floor", bad).verdict == NOT
    half = _clamp_rows({"wait_h_mean_large_short": 4.0, "idle_queued": 0.10},
                       {"wait_h_mean_large_short": 2.0, "idle_queued": 0.10}, "nofloor")   # faster, no cost
    v = _verdict(O.CLAIMS, "clamp-floor", half)
    assert v.verdict == PARTLY and "2 of 4" in v.by_how_much


def test_clamp_ceiling_both_ways():
    ok = _clamp_rows({"wait_h_mean_wt_over12": 6.0, "wait_h_mean_wt_upto12": 2.0},
                     {"wait_h_mean_wt_over12": 9.0}, "noceiling")
    assert _verdict(O.CLAIMS, "clamp-ceiling", ok).verdict == REPRODUCED
    bad = _clamp_rows({"wait_h_mean_wt_over12": 1.0, "wait_h_mean_wt_upto12": 2.0},   # favoured beyond the others,
                      {"wait_h_mean_wt_over12": 0.9}, "noceiling")                      # and no help from the ceiling
    assert _verdict(O.CLAIMS, "clamp-ceiling", bad).verdict == NOT
    undue = _clamp_rows({"wait_h_mean_wt_over12": 1.0, "wait_h_mean_wt_upto12": 2.0},
                        {"wait_h_mean_wt_over12": 9.0}, "noceiling")                    # helped, but too much
    assert _verdict(O.CLAIMS, "clamp-ceiling", undue).verdict == PARTLY


def test_queue_waits_fails_both_ways():
    cap, short, long_ = (f"wait_h_mean_q_{q}" for q in ("prod-capability", "prod-short", "prod-long"))
    mira = {cap: 77.4, short: 12.6, long_: 76.9}                                       # Table 2 [h]
    assert _verdict(O.CLAIMS, "queue-waits", _orows({"fcfs-bb/wfp+queues": mira})).verdict == REPRODUCED
    # "almost the same" is not a factor of 2, either way round; "far less" is not "a bit less"
    for long_wait in (2 * 77.4, 77.4 / 2):
        v = _verdict(O.CLAIMS, "queue-waits", _orows({"fcfs-bb/wfp+queues": {**mira, long_: long_wait}}))
        assert v.verdict == PARTLY and v.by_how_much.startswith("2 of 3")
    v = _verdict(O.CLAIMS, "queue-waits", _orows({"fcfs-bb/wfp+queues": {cap: 10.0, short: 60.0, long_: 30.0}}))
    assert v.verdict == NOT


def test_wfp_large_fails_both_ways():
    def rows(wfp):
        return _orows({"fcfs-bb/fcfs": {L: 10.0}, "fcfs-bb/wfp": {L: wfp}})
    assert _verdict(O.CLAIMS, "wfp-large", rows(8.0)).verdict == REPRODUCED     # −20 %
    assert _verdict(O.CLAIMS, "wfp-large", rows(9.9)).verdict == NOT            # −1 %: no preference
    assert _verdict(O.CLAIMS, "wfp-large", rows(12.0)).verdict == NOT           # large jobs wait longer


# ---------------------------------------------------------------------------- backfilling (slides)
def _brows(values: dict) -> pd.DataFrame:
    return pd.DataFrame([{"scope": "whole", "policy": lb, **v} for lb, v in values.items()])


def _classes(all_, ss, sl, ls, ll, bsld=None):
    """Mean waits [h] for all jobs and the four classes (bounded slowdowns = `bsld` or the waits + 1)."""
    w = dict(zip(("all", *BF.CLASSES), (all_, ss, sl, ls, ll)))
    b = bsld or {k: v + 1 for k, v in w.items()}
    return {**{f"wait_h_{k}": v for k, v in w.items()}, **{f"bsld_{k}": v for k, v in b.items()}}


def test_easy_asymmetries_both_ways():
    fcfs = _classes(10.0, 8.0, 12.0, 6.0, 20.0)
    cons = _classes(2.0, 1.0, 3.0, 1.0, 6.0)
    agree = _brows({"fcfs": fcfs, "conservative": cons,
                    "easy": _classes(2.0, 1.0, 1.0, 3.0, 6.0)})        # small long: −67 % / −92 %; large short +200 %, −50 %
    assert _verdict(BF.CLAIMS, "easy-small-long", agree).verdict == REPRODUCED
    assert _verdict(BF.CLAIMS, "easy-large-short", agree).verdict == REPRODUCED
    contra = _brows({"fcfs": fcfs, "conservative": cons,
                     "easy": _classes(2.0, 1.0, 6.0, 0.5, 6.0)})       # the opposite asymmetry
    assert _verdict(BF.CLAIMS, "easy-small-long", contra).verdict == NOT
    assert _verdict(BF.CLAIMS, "easy-large-short", contra).verdict == NOT
    same = _brows({"conservative": cons, "easy": cons})                # EASY = conservative: neither favours
    assert _verdict(BF.CLAIMS, "easy-small-long", same).verdict == NOT
    assert _verdict(BF.CLAIMS, "easy-large-short", same).verdict == NOT
    zero = _brows({"conservative": _classes(1.0, 0.0, 0.0, 0.0, 1.0), "easy": _classes(1.0, 0.0, 0.0, 0.0, 1.0)})
    assert _verdict(BF.CLAIMS, "easy-small-long", zero).verdict == NOT  # nobody waits: nothing is favoured
    assert _verdict(BF.CLAIMS, "easy-small-long", _brows({"easy": cons})).verdict == MISSING


def test_inflated_estimates_both_ways():
    easy = _classes(2.0, 1.0, 2.0, 3.0, 6.0)
    better = _classes(1.8, 0.9, 1.8, 2.7, 5.4)
    worse = _classes(2.2, 1.1, 2.2, 3.3, 6.6)
    assert _verdict(BF.CLAIMS, "estimates-x2", _brows({"easy": easy, "easy/x2": better})).verdict == REPRODUCED
    assert _verdict(BF.CLAIMS, "estimates-x2", _brows({"easy": easy, "easy/x2": worse})).verdict == NOT
    assert _verdict(BF.CLAIMS, "estimates-x2", _brows({"easy": easy, "easy/x2": easy})).verdict == NOT
    assert _verdict(BF.CLAIMS, "estimates-x3", _brows({"easy": easy, "easy/x3": better})).verdict == REPRODUCED
    assert _verdict(BF.CLAIMS, "estimates-x3", _brows({"easy": easy, "easy/x3": worse})).verdict == NOT
    some = _classes(1.8, 0.9, 1.8, 3.3, 6.6)                           # better for the small jobs only
    v = _verdict(BF.CLAIMS, "estimates-x3", _brows({"easy": easy, "easy/x3": some}))
    assert v.verdict == PARTLY and "better needs" in v.by_how_much


@pytest.mark.parametrize("lookahead_bsld, verdict", [(4.5, REPRODUCED), (4.98, NOT), (5.5, NOT), (2.0, PARTLY)])
def test_lookahead_a_little_both_ways(lookahead_bsld, verdict):
    # window/fcfs 5.0: 10 % better is "a little"; 0.4 % is nothing; worse fails; 60 % is more than a little
    rows = _brows({"window/fcfs": {"bsld_all": 5.0, "wait_h_all": 2.0},
                   "window/lookahead": {"bsld_all": lookahead_bsld, "wait_h_all": 2.0}})
    assert _verdict(BF.CLAIMS, "lookahead", rows).verdict == verdict


# ---------------------------------------------------------------------------- BBSched: sizes both ways
COLS = ("node_usage", "bb_usage", "wait_h_mean", "wait_h_small", "wait_h_large")
#: one S4 workload where the sized claims hold: the paper's sizes within a factor 2
GOOD = {"bbsched-naive": (0.50, 0.80, 20.0, 10.0, 20.0),
        "bbsched": (0.60, 0.90, 12.0, 5.0, 14.0),               # wait −40 %; small −50 %, large −30 %
        "weighted-bb": (0.47, 0.88, 15.0, 9.0, 15.0),
        "constrained-cpu": (0.52, 0.70, 19.0, 9.0, 19.0),
        "bin-packing": (0.51, 0.82, 18.0, 9.0, 19.0),            # +2 % node, +2.5 % BB
        "bbsched/w10": (0.55, 0.86, 14.0, 6.0, 15.0),            # rises 5 and 4 pp; wait −14 %
        "bbsched/w50": (0.605, 0.895, 11.9, 5.0, 14.0)}


def _bv(cid, change=None, scopes=("cori-S4", "theta-S4")):
    rows = []
    for sc in scopes:
        for p, vals in GOOD.items():
            r = {"scope": sc, "policy": p, "bsld_mean": 1.0, **dict(zip(COLS, vals))}
            r.update((change or {}).get(p, {}))
            rows.append(r)
    return _verdict(B.CLAIMS, cid, pd.DataFrame(rows))


def test_bbsched_sized_claims_hold_on_the_paper_sizes():
    for cid in ("wait", "bb-usage", "window", "window-wait", "small-jobs", "bin-packing", "all-beat-baseline"):
        assert _bv(cid).verdict == REPRODUCED, cid


@pytest.mark.parametrize("cid, change, verdict", [
    ("wait", {"bbsched": {"wait_h_mean": 2.0}}, PARTLY),                 # −90 %: best, but far beyond 33-41 %
    ("wait", {"bbsched": {"wait_h_mean": 19.0}}, NOT),                   # −5 %: not the best, far below
    ("window", {"bbsched/w10": {"node_usage": 0.40, "bb_usage": 0.60}}, PARTLY),   # rises of 20 and 30 pp
    ("window", {"bbsched/w10": {"node_usage": 0.65, "bb_usage": 0.95}, "bbsched/w50": {"node_usage": 0.70,
                                                                                      "bb_usage": 0.99}}, NOT),
    ("window-wait", {"bbsched/w10": {"wait_h_mean": 40.0}}, PARTLY),     # a −70 % drop: not the paper's −8 / −15 %
    ("window-wait", {"bbsched/w10": {"wait_h_mean": 11.0}, "bbsched/w50": {"wait_h_mean": 20.0}}, NOT),
    ("small-jobs", {"bbsched": {"wait_h_small": 0.1}}, PARTLY),          # −99 %: beyond twice the paper's −48 %
    ("small-jobs", {"bbsched": {"wait_h_small": 9.5}}, NOT),             # −5 %, and less than the large jobs'
    ("bin-packing", {"bin-packing": {"bb_usage": 0.80}}, PARTLY),        # improves the nodes only
    ("bin-packing", {"bin-packing": {"node_usage": 0.60, "bb_usage": 0.99}}, NOT),     # +20 %: an optimiser's gain
    ("bb-usage", {"bbsched-naive": {"bb_usage": 0.50}}, PARTLY),         # best, but +80 % over the baseline
    ("bb-usage", {"bbsched": {"bb_usage": 0.81}}, NOT),                  # not the best, +1 %
    ("all-beat-baseline", {m: {"wait_h_mean": 19.9} for m in GOOD if m != "bbsched-naive"}, NOT),   # −0.5 %
])
def test_bbsched_sized_claims_fail_both_ways(cid, change, verdict):
    assert _bv(cid, change).verdict == verdict


def test_backfilling_columns_are_valid_alloc_only_runs():
    from burstbuffer.schedulers.options import check_options
    assert {v.model for v in BF.VARIANTS} == {"alloc-only"}
    for v in BF.VARIANTS:
        check_options(v.policy, v.options)
    for v in O.VARIANTS[-5:]:
        check_options(v.policy, v.options)
