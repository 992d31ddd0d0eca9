"""The idle-while-queued measure by hand, and the backfilling and orders columns as valid options (fast tier).
(The orders and backfilling claims: tests/test_claims_orders_backfilling.py; the BBSched claims, each judged
both ways and under a placebo: tests/test_bbsched_study.py.)"""
from __future__ import annotations

import math

import pandas as pd
import pytest

from burstbuffer.metrics.regime import idle_while_queued
from burstbuffer.reproduce.studies import backfilling as BF
from burstbuffer.reproduce.studies import orders as O


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


def test_backfilling_columns_are_valid_alloc_only_runs():
    from burstbuffer.schedulers.options import check_options
    assert {v.model for v in BF.VARIANTS} == {"alloc-only"}
    for v in BF.VARIANTS:
        check_options(v.policy, v.options)
    for v in O.VARIANTS[-5:]:
        check_options(v.policy, v.options)
