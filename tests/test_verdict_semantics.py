"""The verdict semantics of docs/verdicts.md (burstbuffer.metrics.claims: `Condition`, `Band`, `Replicates`,
`RegimeCheck`, `evaluate`) on small per-job tables made by hand, one per replicate: every rule shown passing and
failing, in both directions, as an A/A placebo and reversed."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from burstbuffer.metrics.claims import (Band, Claim, Condition, HIGHER, LOWER, Metric, Paired, RegimeCheck,
                                        Replicates, around, evaluate, false_positive_rate, judge)
from burstbuffer.metrics.verdicts import (DIFFERENCE, MISSING, NO_DIFFERENCE, NOT, OUT_OF_REGIME, PARTLY,
                                          REPRODUCED, placebo_column)

WAIT = Metric("mean waiting time [h]", "waiting_time", "mean", scale=3600)
BAND20 = Band(15.0, 25.0, "the paper's 20 % ± 5 points")
R = 4                                      # replicates of the tables below


def _jobs(values: dict[str, list[float]], scope: str = "whole", replicate: int | None = 0) -> pd.DataFrame:
    """One row per job and column label: waiting times [h] → seconds; `replicate` None: no such column."""
    rows = []
    for lab, ws in values.items():
        for i, w in enumerate(ws):
            r = {"scope": scope, "policy": lab, "job_id": str(i), "waiting_time": 3600.0 * w,
                 "bounded_slowdown": 1.0 + w}
            if replicate is not None:
                r["replicate"] = replicate
            rows.append(r)
    return pd.DataFrame(rows)


def _claim(*conds: Condition, cid: str = "c") -> Claim:
    return Claim(cid, "t beats c", "§0", paper_value="20 %", conditions=conds)


def _one(claim: Claim, jobs: pd.DataFrame, mode: str = "real", regime=()):
    return evaluate([claim], jobs, mode=mode, regime=regime)[0]


RNG = np.random.default_rng(7)
#: the control's waiting times [h] per job in each replicate: independent workload draws
BASES = [RNG.uniform(1.0, 3.0, 400) for _ in range(2 * R)]
BASE = BASES[0]
#: small differences between replicates of the treatment's factor (± 1 %)
JITTER = (0.0, 0.01, -0.01, 0.005)


def _reps(factor, columns=("t", "c"), n: int = R, aa: bool = False, jitter=JITTER) -> pd.DataFrame:
    """`n` replicates: the control c on draw k, the treatment t at `factor` (± `jitter`) of it; `aa`: also the
    control's A/A column on independent draws (R + k)."""
    out = []
    for k in range(n):
        f = factor + jitter[k % len(jitter)]
        vals = {columns[0]: list(BASES[k] * f), columns[1]: list(BASES[k])}
        if aa:
            vals[placebo_column(columns[1])] = list(BASES[R + k])
        out.append(_jobs(vals, replicate=k))
    return pd.concat(out, ignore_index=True)


def _table(**cols) -> pd.DataFrame:
    """R replicates of columns given as functions (control draw [h], jitter) → waiting times [h]."""
    return pd.concat([_jobs({lab: list(f(BASES[k], JITTER[k % len(JITTER)])) for lab, f in cols.items()}, replicate=k)
                      for k in range(R)], ignore_index=True)


def _cond(**kw) -> Condition:
    return Condition("t", "c", kw.pop("metric", WAIT), kw.pop("band", BAND20), **kw)


@pytest.mark.parametrize("factor, verdict", [
    (0.80, REPRODUCED),     # 20 % lower in every replicate: inside [15, 25]
    (0.95, PARTLY),         # 5 % lower: right direction, beyond the noise, outside the band
    (0.50, PARTLY),         # 50 % lower: more than the paper, outside the band too
    (1.20, NOT),            # 20 % higher: the treatment is worse
])
def test_relative_effect_each_verdict(factor, verdict):
    v = _one(_claim(_cond()), _reps(factor))
    assert v.verdict == verdict, v.by_how_much
    d = v.conditions[0]
    assert d["value"] == pytest.approx(100 * (1 - factor - np.mean(JITTER)))
    assert d["n"] == R and len(d["per_replicate"]) == R and "Student's t" in d["noise"]
    # the interval is Student's t over the R per-replicate effects
    from scipy import stats
    e = np.asarray(d["per_replicate"])
    half = stats.t.ppf(0.975, R - 1) * e.std(ddof=1) / math.sqrt(R)
    assert d["interval"] == pytest.approx([e.mean() - half, e.mean() + half])


def test_an_effect_inside_the_noise_is_not_reproduced():
    # the replicates disagree: +6 %, −4 %, +2 %, 0 %: the mean is 1 %, the interval straddles 0
    v = _one(_claim(_cond(band=Band(0.5, 2.0, "a 1 % effect"))), _reps(0.99, jitter=(-0.05, 0.05, -0.01, 0.01)))
    d = v.conditions[0]
    assert d["value"] == pytest.approx(1.0, abs=0.01) and d["interval"][0] < 0 < d["interval"][1]
    assert v.verdict == NOT and "noise" in d["why"] and not d["beyond_noise"]


def test_one_replicate_has_no_interval_and_is_never_reproduced():
    for jobs in (_reps(0.8, n=1), _jobs({"t": list(BASE * 0.8), "c": list(BASE)}, replicate=None)):
        v = _one(_claim(_cond()), jobs)
        d = v.conditions[0]
        assert v.verdict == NOT and d["n"] == 1 and "1 replicate: no interval" in d["why"]
        assert math.isnan(d["interval"][0]) and not d["beyond_noise"]


def test_replicates_that_do_not_vary_give_no_interval():
    # the same effect in every replicate: their inputs did not vary (e.g. a deterministic policy on one
    # workload file run under several seeds): no spread is known, never reproduced
    v = _one(_claim(_cond()), _reps(0.8, jitter=(0.0,)))
    assert v.verdict == NOT and "no spread" in v.conditions[0]["why"]


def test_jobs_of_one_run_are_never_resampled():
    # 400 jobs, one replicate a side, a clear 20 % effect on every job: still no interval (a job bootstrap
    # would call it beyond noise); the noise floor only comes from replicates
    v = _one(_claim(_cond()), _reps(0.8, n=1))
    assert v.verdict == NOT and v.conditions[0]["n"] == 1


@pytest.mark.parametrize("effect, band", [("relative", BAND20), ("ratio", Band(1.2, 1.3, "1.25×")),
                                          ("points", Band(30, 50, "40 points"))])
def test_placebo_is_an_aa_test_and_reverse_a_sign_check(effect, band):
    c = _claim(_cond(effect=effect, band=band))
    jobs = _reps(0.8, aa=True)
    assert _one(c, jobs).verdict == REPRODUCED
    p = _one(c, jobs, "placebo")
    d = p.conditions[0]
    # the control against its A/A column (independent draws), unpaired: no difference beyond the noise
    assert p.verdict == NOT and p.mode == "placebo" and d["treatment"] == "c (A/A)" and "unpaired" in d["noise"]
    assert d["interval"][0] < {"relative": 0.0, "ratio": 1.0, "points": 0.0}[effect] < d["interval"][1]
    assert false_positive_rate([p]) == (0, 1)
    r = _one(c, jobs, "reverse")
    assert r.verdict == NOT and r.conditions[0]["treatment"] == "c" and "wrong direction" in r.conditions[0]["why"]
    # without the A/A runs the placebo is not measured, and says how to get them
    q = _one(c, _reps(0.8), "placebo")
    assert q.verdict == MISSING and "reproduce --placebo" in q.measured


def test_placebo_fails_when_the_aa_column_differs():
    # an A/A column that is not the control (here 20 % better): the placebo catches it
    jobs = _reps(0.8, aa=True)
    aa = jobs["policy"] == "c (A/A)"
    jobs.loc[aa, "waiting_time"] *= 0.8
    p = _one(_claim(_cond()), jobs, "placebo")
    assert p.conditions[0]["beyond_noise"] and false_positive_rate([p]) == (1, 1)


def test_higher_is_better():
    cond = _cond(metric=Metric("utilisation", "bounded_slowdown", "mean"), better=HIGHER,
                 band=Band(10, 30, "the paper's +20 %"))
    up = _table(t=lambda b, j: (1.2 + j) * (1 + b), c=lambda b, j: 1 + b)
    assert _one(_claim(cond), up).verdict == REPRODUCED
    down = _table(t=lambda b, j: (0.8 + j) * (1 + b), c=lambda b, j: 1 + b)
    assert _one(_claim(cond), down).verdict == NOT
    assert _one(_claim(cond), up, "reverse").verdict == NOT


def test_ratio_and_points_bands_are_two_sided():
    ratio = _cond(effect="ratio", band=Band(10 ** 1.5, 10 ** 2.5, "two orders of magnitude"))
    for f, verdict in ((1 / 100, REPRODUCED), (1 / 5, PARTLY), (1 / 1000, PARTLY), (2.0, NOT)):
        jobs = _table(t=lambda b, j: b * f * (1 + j), c=lambda b, j: b)
        assert _one(_claim(ratio), jobs).verdict == verdict, f
    share = Metric("max waiting time [h]", stat="max", scale=3600)
    tail = _cond(metric=share, effect="ratio", band=Band(1.5, 4.0, "a tail several times longer"))
    def top(b, x):
        b = b.copy()
        b[0] = x
        return b
    jobs = _table(t=lambda b, j: top(b, 20.0 / (1.01 + j)), c=lambda b, j: top(b, 20.0))   # no starvation
    assert _one(_claim(tail), jobs).verdict in (NOT, PARTLY)


def test_several_conditions_reproduced_only_when_all_are():
    jobs = _table(t=lambda b, j: b * (0.8 + j), c=lambda b, j: b, u=lambda b, j: b * (0.95 + j))
    a = _cond()
    b = Condition("u", "c", WAIT, BAND20, label="u vs c")
    assert _one(_claim(a), jobs).verdict == REPRODUCED
    v = _one(_claim(a, b), jobs)
    assert v.verdict == PARTLY and [d["verdict"] for d in v.conditions] == [REPRODUCED, PARTLY]
    w = Condition("c", "u", WAIT, BAND20, label="c vs u")          # c is worse than u: fails
    v = _one(_claim(a, b, w), jobs)
    assert v.verdict == NOT and len(v.conditions) == 3


def test_no_difference():
    same = _cond(asserts=NO_DIFFERENCE, effect="ratio", band=Band(1 / 1.25, 1.25, "almost the same"))
    c = _claim(same)
    assert c.asserts == NO_DIFFERENCE
    assert _one(c, _reps(1.02)).verdict == REPRODUCED
    assert _one(c, _reps(2.0)).verdict == NOT
    assert _one(c, _reps(0.5)).verdict == NOT
    assert _one(c, _reps(1.02, n=1)).verdict == NOT             # one replicate: no interval to lie inside
    # a claim with one differing condition asserts a difference
    assert _claim(same, _cond()).asserts == DIFFERENCE


def _parts(n_better: int, n: int = 10) -> pd.DataFrame:
    """`n` parts of 20 jobs; the treatment 20 % better in the first `n_better`, 20 % worse in the others."""
    return pd.concat([_jobs({"t": list(BASE[:20] * (0.8 if k < n_better else 1.2)), "c": list(BASE[:20])},
                            f"part-{k:02d}") for k in range(n)])


PART_MEAN = Metric("part mean waiting time [h]", stat="mean", scale=3600, over="parts")


def test_parts_are_replicates():
    """Over parts every part (of every draw) is a replicate: the share of parts where the treatment is better,
    its interval Student's t over the parts' 0/100 values."""
    cond = _cond(metric=PART_MEAN, effect="share", scope="parts", band=Band(60, 100, "most of the parts"))
    v = _one(_claim(cond), _parts(9))
    assert v.conditions[0]["value"] == pytest.approx(90.0) and v.conditions[0]["n"] == 10
    assert v.conditions[0]["interval"][0] > 50 and v.verdict == REPRODUCED
    v = _one(_claim(cond), _parts(6))                                   # 6 of 10: a coin could do it
    assert v.conditions[0]["interval"][0] <= 50 and v.verdict == NOT and "noise" in v.conditions[0]["why"]
    assert _one(_claim(cond), _parts(9), "reverse").verdict == NOT      # 1 of 10
    # one unit per replicate: the share is a binomial proportion, its interval Clopper-Pearson
    from burstbuffer.metrics.stats import binomial_interval
    d = _one(_claim(cond), _parts(9)).conditions[0]
    assert d["interval"] == pytest.approx([100 * x for x in binomial_interval(9, 10)]) and "binomial" in d["noise"]
    assert _one(_claim(cond), _parts(16, 16)).verdict == REPRODUCED     # 16 of 16: 100 %, the bound included
    narrow = _cond(metric=PART_MEAN, effect="share", scope="parts", band=Band(60, 90, "most, not all"))
    assert _one(_claim(narrow), _parts(16, 16)).verdict == PARTLY
    assert _one(_claim(cond), _parts(1, 1)).verdict == NOT               # one part: no interval
    # relative effect per part: the mean of the per-part effects
    rel = _cond(metric=PART_MEAN, scope="parts", band=Band(0, 100, "better"))
    d = _one(_claim(rel), _parts(9)).conditions[0]
    assert d["value"] == pytest.approx((9 * 20 - 20) / 10) and d["n"] == 10
    # a second draw of the parts adds its parts as more replicates
    two = pd.concat([_parts(9), _parts(9).assign(replicate=1)])
    assert _one(_claim(rel), two).conditions[0]["n"] == 20


def test_a_group_of_scopes_is_a_set_of_replicates():
    """A study that draws its own replicates as scopes (``theta-S4-r0`` …): scope ``theta-S4-r*`` judges them as
    one condition, each scope a replicate."""
    jobs = pd.concat([_jobs({"t": list(BASES[k] * (0.8 + JITTER[k])), "c": list(BASES[k])}, f"theta-S4-r{k}")
                      for k in range(R)] + [_jobs({"t": list(BASE), "c": list(BASE * 0.5)}, "cori-S4")])
    d = judge(_cond(scope="theta-S4-r*"), jobs)
    assert d["n"] == R and d["verdict"] == REPRODUCED        # cori-S4, where t is worse, is not in the group
    assert judge(_cond(scope="theta-S4-r0"), jobs)["verdict"] == NOT      # one scope alone: one replicate


def test_paired_is_the_replicate_noise_floor():
    assert Paired is Replicates and _cond().noise == Replicates(0.95)
    with pytest.raises(ValueError):
        Replicates(1.5)


def test_regime_and_missing():
    c = _claim(_cond())
    jobs = _reps(0.8)
    bad = [RegimeCheck("offered load", False, "2.2", "0.8 to 1.2"), RegimeCheck("jobs", True, "1000", "≥ 500")]
    v = _one(c, jobs, regime=bad)
    assert v.verdict == OUT_OF_REGIME and v.regime == ["offered load: 2.2 (needs 0.8 to 1.2)"]
    d = v.conditions[0]                   # still measured and shown, but judged nowhere: out of regime everywhere
    assert d["verdict"] == OUT_OF_REGIME and d["value"] is not None and REPRODUCED not in d["why"]
    assert _one(c, jobs, regime=bad[1:]).verdict == REPRODUCED
    v = _one(c, _jobs({"t": list(BASE)}))
    assert v.verdict == MISSING and v.measured == "needs c on whole"
    assert _one(c, None).verdict == MISSING
    with pytest.raises(ValueError):
        evaluate([c], jobs, mode="sideways")


def test_declarations_are_checked():
    with pytest.raises(ValueError):
        Band(2, 1, "upside down")
    with pytest.raises(ValueError):
        Band(1, 2, "")
    with pytest.raises(ValueError):
        Condition("a", "a", WAIT, BAND20)
    with pytest.raises(ValueError):
        Condition("a", "b", WAIT, BAND20, better="faster")
    with pytest.raises(ValueError):
        Condition("a", "b", WAIT, BAND20, effect="vibes")
    with pytest.raises(ValueError):
        Claim("x", "", "")                                              # no condition
    for bad in ("average", "q2", "qx"):
        with pytest.raises(ValueError):
            Metric("m", stat=bad)
    with pytest.raises(ValueError):
        Metric("m", over="weeks")
    with pytest.raises(ValueError):
        Metric("m", over="windows")                                     # windows need their values
    assert around(27, 0.25, "r").low == pytest.approx(20.25) and around(27, 0.25, "r").high == pytest.approx(33.75)
    assert "the project's own" in Band(1, 2, "no number in the paper", own=True).text(" %")


def test_select_restricts_the_jobs_and_the_pairs():
    jobs = _reps(0.8)
    jobs["requested_number_of_resources"] = jobs["job_id"].astype(int) % 2
    small = Metric("mean waiting time of odd jobs [h]", scale=3600,
                   select=lambda r: r["requested_number_of_resources"].to_numpy() == 1)
    d = judge(_cond(metric=small), jobs)
    assert d["n"] == R and d["verdict"] == REPRODUCED
    # only the odd jobs count: make the even ones of the treatment far worse, the verdict stays
    jobs.loc[(jobs["policy"] == "t") & (jobs["requested_number_of_resources"] == 0), "waiting_time"] *= 10
    assert judge(_cond(metric=small), jobs)["verdict"] == REPRODUCED
    assert judge(_cond(), jobs)["verdict"] == NOT
    # a job the treatment never started (NaN wait) is not paired: the statistic moves, not the verdict
    jobs.loc[(jobs["policy"] == "t") & (jobs["job_id"] == "1"), "waiting_time"] = math.nan
    assert judge(_cond(metric=small), jobs)["verdict"] == REPRODUCED


def test_two_classes_of_jobs_in_one_column():
    # Table-2-like: in one column, short jobs wait 6× less than capability jobs, in each of R replicates
    n = 300
    kind = np.array(["short", "cap"] * (n // 2))

    def run(k, col="q"):
        w = np.where(kind == "short", 1.0, 6.0) * np.random.default_rng(k).uniform(0.5, 1.5, n)
        return pd.DataFrame({"scope": "whole", "policy": col, "job_id": [str(i) for i in range(n)],
                             "waiting_time": 3600 * w, "kind": kind, "replicate": k % R})
    jobs = pd.concat([run(k) for k in range(R)] + [run(R + k, "q (A/A)") for k in range(R)])
    short = ("short jobs", lambda r: r["kind"].to_numpy() == "short")
    cap = ("capability jobs", lambda r: r["kind"].to_numpy() == "cap")
    cond = Condition("q", "q", WAIT, Band(3, 12, "Table 2's 6.1×, within a factor 2"), effect="ratio",
                     treatment_jobs=short, control_jobs=cap)
    assert not cond.paired and cond.name == "q (short jobs) vs q (capability jobs)"
    v = _one(_claim(cond), jobs)
    assert v.verdict == REPRODUCED and v.conditions[0]["n"] == R
    assert 5 < v.conditions[0]["value"] < 7.5
    p = _one(_claim(cond), jobs, "placebo")          # capability jobs of the A/A runs vs those of the runs
    assert p.verdict == NOT and p.conditions[0]["value"] == pytest.approx(1.0, abs=0.1)
    assert _one(_claim(cond), jobs, "reverse").verdict == NOT
    same = ("short jobs", short[1])
    with pytest.raises(ValueError):
        Condition("q", "q", WAIT, BAND20, treatment_jobs=short, control_jobs=same)
    with pytest.raises(ValueError):
        Condition("q", "q", WAIT, BAND20, effect="share", treatment_jobs=short, control_jobs=cap)


def _aa_runs(rng, jobs: int = 200, run_sd: float = 0.1):
    """Per-job waits [h] of one run: the workload's jobs (fixed) × a schedule-level factor shared by every job
    of the run (what a policy seed or a workload draw changes) × a little per-job noise."""
    base = np.random.default_rng(0).uniform(1.0, 3.0, jobs)
    return base * np.exp(rng.normal(0, run_sd)) * rng.uniform(0.9, 1.1, jobs)


def test_aa_rule_passes_replicates_and_fails_a_job_bootstrap():
    """200 synthetic A/A comparisons (the truth is zero) of 3 replicates a side whose runs differ by a
    schedule-level factor: the replicate noise floor's false-positive rate passes the A/A rule
    (`stats.calibrated`), the bootstrap over the jobs of one pair of runs — an interval too narrow — fails it."""
    from burstbuffer.metrics.stats import calibrated, job_bootstrap_interval
    rng = np.random.default_rng(51)
    cond = _cond(band=Band(-math.inf, math.inf, "any"))
    n, hits, boot = 200, 0, 0
    for _ in range(n):
        runs = [_aa_runs(rng) for _ in range(6)]
        jobs = pd.concat([_jobs({"t": list(runs[k]), "c": list(runs[3 + k])}, replicate=k) for k in range(3)])
        d = judge(cond, jobs)
        hits += d["beyond_noise"]
        lo, hi = job_bootstrap_interval(runs[0], runs[3], cond.effect_of, resamples=300)
        boot += lo > 0 or hi < 0
    assert calibrated(hits, n) and hits / n <= 0.1
    assert not calibrated(boot, n) and boot / n > 0.5
    assert not calibrated(0, 0) and calibrated(5, 100) and not calibrated(20, 100)


def test_a_control_that_never_waits_is_measured_with_an_undefined_effect():
    """Jobs paired in every replicate, the control's mean wait 0: a relative effect is undefined (never
    reproduced, and says why), not *not measured* as if nothing were paired; no job at all is not measured."""
    zero = pd.concat([_jobs({"t": list(BASES[k]), "c": [0.0] * len(BASES[k])}, replicate=k) for k in range(R)],
                     ignore_index=True)
    v = _one(_claim(_cond()), zero)
    d = v.conditions[0]
    assert v.verdict == NOT and "effect undefined" in d["why"] and len(d["per_replicate"]) == R
    assert d["control_value"] == 0.0 and not d["beyond_noise"]
    none = pd.DataFrame({"scope": ["whole"] * 2, "policy": ["t", "c"], "job_id": ["0", "1"],
                         "waiting_time": [3600.0, 3600.0], "replicate": [0, 0]})   # no job in both columns
    v = _one(_claim(_cond()), none)
    assert v.verdict == MISSING and "no jobs paired" in v.measured
