"""The verdict semantics of docs/verdicts.md (burstbuffer.metrics.claims: `Condition`, `Band`, `Paired`,
`Seeds`, `RegimeCheck`, `evaluate`) on small per-job tables made by hand: every rule shown passing and
failing, in both directions, in a placebo and reversed."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from burstbuffer.metrics.claims import (Band, Claim, Condition, HIGHER, LOWER, Metric, Paired, RegimeCheck, Seeds,
                                        around, evaluate, judge)
from burstbuffer.metrics.verdicts import (DIFFERENCE, MISSING, NO_DIFFERENCE, NOT, OUT_OF_REGIME, PARTLY,
                                          REPRODUCED)

WAIT = Metric("mean waiting time [h]", "waiting_time", "mean", scale=3600)
BAND20 = Band(15.0, 25.0, "the paper's 20 % ± 5 points")


def _jobs(values: dict[str, list[float]], scope: str = "whole", seed: int | None = None) -> pd.DataFrame:
    """One row per job and column label: waiting times [h] → seconds."""
    rows = []
    for lab, ws in values.items():
        for i, w in enumerate(ws):
            r = {"scope": scope, "policy": lab, "job_id": str(i), "waiting_time": 3600.0 * w,
                 "bounded_slowdown": 1.0 + w}
            if seed is not None:
                r["seed"] = seed
            rows.append(r)
    return pd.DataFrame(rows)


def _claim(*conds: Condition, cid: str = "c") -> Claim:
    return Claim(cid, "t beats c", "§0", paper_value="20 %", conditions=conds)


def _one(claim: Claim, jobs: pd.DataFrame, mode: str = "real", regime=()):
    return evaluate([claim], jobs, mode=mode, regime=regime)[0]


RNG = np.random.default_rng(7)
BASE = RNG.uniform(1.0, 3.0, 400)          # the control's waiting times [h], per job


def _cond(**kw) -> Condition:
    return Condition("t", "c", kw.pop("metric", WAIT), kw.pop("band", BAND20), **kw)


@pytest.mark.parametrize("factor, verdict", [
    (0.80, REPRODUCED),     # 20 % lower on every job: inside [15, 25]
    (0.95, PARTLY),         # 5 % lower on every job: right direction, beyond the noise, outside the band
    (0.50, PARTLY),         # 50 % lower: more than the paper, outside the band too
    (1.20, NOT),            # 20 % higher: the treatment is worse
    (1.00, NOT),            # no effect at all
])
def test_relative_effect_each_verdict(factor, verdict):
    v = _one(_claim(_cond()), _jobs({"t": list(BASE * factor), "c": list(BASE)}))
    assert v.verdict == verdict, v.by_how_much
    assert v.conditions[0]["value"] == pytest.approx(100 * (1 - factor))


def test_an_effect_inside_the_noise_is_not_reproduced():
    # the treatment is 1 % better in the mean, with ± 3 h of noise per job: the bootstrap interval straddles 0
    t_noisy = BASE + RNG.normal(0, 3.0, len(BASE))
    t_noisy = t_noisy - (t_noisy.mean() - 0.99 * BASE.mean())   # 1 % lower in the mean, per-job noise ± 3 h
    v = _one(_claim(_cond(band=Band(0.5, 2.0, "a 1 % effect"))), _jobs({"t": list(t_noisy), "c": list(BASE)}))
    d = v.conditions[0]
    assert d["value"] == pytest.approx(1.0, abs=0.01) and d["interval"][0] < 0 < d["interval"][1]
    assert v.verdict == NOT and "noise" in d["why"]


@pytest.mark.parametrize("mode", ["placebo", "reverse"])
@pytest.mark.parametrize("effect, band", [("relative", BAND20), ("ratio", Band(1.2, 1.3, "1.25×")),
                                          ("points", Band(30, 50, "40 points"))])
def test_placebo_and_reverse_fail_every_effect(mode, effect, band):
    c = _claim(_cond(effect=effect, band=band))
    jobs = _jobs({"t": list(BASE * 0.8), "c": list(BASE)})
    assert _one(c, jobs).verdict == REPRODUCED
    v = _one(c, jobs, mode)
    assert v.verdict == NOT and v.mode == mode and v.asserts == DIFFERENCE
    if mode == "placebo":
        # the control's runs under the treatment's name: no effect, and an interval that is the null itself
        null = {"relative": 0.0, "ratio": 1.0, "points": 0.0}[effect]
        assert v.conditions[0]["value"] == pytest.approx(null) and v.conditions[0]["interval"] == [null, null]
    else:
        assert v.conditions[0]["treatment"] == "c" and "wrong direction" in v.conditions[0]["why"]


def test_higher_is_better():
    cond = _cond(metric=Metric("utilisation", "bounded_slowdown", "mean"), better=HIGHER,
                 band=Band(10, 30, "the paper's +20 %"))
    up = _jobs({"t": list(1.2 * (1 + BASE)), "c": list(1 + BASE)})
    assert _one(_claim(cond), up).verdict == REPRODUCED
    down = _jobs({"t": list(0.8 * (1 + BASE)), "c": list(1 + BASE)})
    assert _one(_claim(cond), down).verdict == NOT
    assert _one(_claim(cond), up, "reverse").verdict == NOT


def test_ratio_and_points_bands_are_two_sided():
    ratio = _cond(effect="ratio", band=Band(10 ** 1.5, 10 ** 2.5, "two orders of magnitude"))
    for f, verdict in ((1 / 100, REPRODUCED), (1 / 5, PARTLY), (1 / 1000, PARTLY), (2.0, NOT)):
        assert _one(_claim(ratio), _jobs({"t": list(BASE * f), "c": list(BASE)})).verdict == verdict, f
    share = Metric("max waiting time [h]", stat="max", scale=3600)
    tail = _cond(metric=share, effect="ratio", band=Band(1.5, 4.0, "a tail several times longer"))
    c = BASE.copy()
    c[0] = 20.0
    t = BASE.copy()
    t[0] = 20.0 / 1.01                          # a 1.01× tail is no starvation
    assert _one(_claim(tail), _jobs({"t": list(t), "c": list(c)})).verdict in (NOT, PARTLY)
    assert _one(_claim(tail), _jobs({"t": list(t), "c": list(c)})).verdict != REPRODUCED


def test_several_conditions_reproduced_only_when_all_are():
    jobs = pd.concat([_jobs({"t": list(BASE * 0.8), "c": list(BASE), "u": list(BASE * 0.95)})])
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
    assert _one(c, _jobs({"t": list(BASE * 1.02), "c": list(BASE)})).verdict == REPRODUCED
    assert _one(c, _jobs({"t": list(BASE * 2.0), "c": list(BASE)})).verdict == NOT
    assert _one(c, _jobs({"t": list(BASE * 0.5), "c": list(BASE)})).verdict == NOT
    # a claim with one differing condition asserts a difference
    assert _claim(same, _cond()).asserts == DIFFERENCE


def _parts(n_better: int, n: int = 10) -> pd.DataFrame:
    """`n` parts of 20 jobs; the treatment 20 % better in the first `n_better`, 20 % worse in the others."""
    return pd.concat([_jobs({"t": list(BASE[:20] * (0.8 if k < n_better else 1.2)), "c": list(BASE[:20])},
                            f"part-{k:02d}") for k in range(n)])


PART_MEAN = Metric("part mean waiting time [h]", stat="mean", scale=3600, over="parts")


def test_parts_share_of_parts():
    cond = _cond(metric=PART_MEAN, effect="share", scope="parts", band=Band(60, 100, "most of the parts"))
    v = _one(_claim(cond), _parts(8))
    assert v.conditions[0]["value"] == pytest.approx(80.0) and v.conditions[0]["n"] == 10
    assert v.conditions[0]["interval"][0] > 50 and v.verdict == REPRODUCED
    v = _one(_claim(cond), _parts(6))                                   # 6 of 10: a coin could do it
    assert v.conditions[0]["interval"][0] <= 50 and v.verdict == NOT and "noise" in v.conditions[0]["why"]
    assert _one(_claim(cond), _parts(8), "placebo").verdict == NOT      # 0 of 10 strictly better
    assert _one(_claim(cond), _parts(8), "reverse").verdict == NOT      # 2 of 10
    assert _one(_claim(cond), _parts(16, 16)).verdict == REPRODUCED     # 16 of 16: 100 %, the bound included
    narrow = _cond(metric=PART_MEAN, effect="share", scope="parts", band=Band(60, 90, "most, not all"))
    assert _one(_claim(narrow), _parts(16, 16)).verdict == PARTLY


def test_seed_spread():
    cond = _cond(noise=Seeds())
    runs = [_jobs({"t": list(BASE * f), "c": list(BASE)}, seed=s) for s, f in enumerate((0.8, 0.82, 0.78))]
    assert _one(_claim(cond), pd.concat(runs)).verdict == REPRODUCED
    assert _one(_claim(cond), pd.concat(runs[:2])).verdict == MISSING               # two seeds are not a spread
    assert _one(_claim(cond), pd.concat(runs[:2]).drop(columns="seed")).verdict == MISSING
    mixed = [_jobs({"t": list(BASE * f), "c": list(BASE)}, seed=s) for s, f in enumerate((0.8, 1.1, 0.9))]
    v = _one(_claim(cond), pd.concat(mixed))
    assert v.verdict == NOT and v.conditions[0]["interval"][0] < 0                  # one seed the other way
    assert _one(_claim(cond), pd.concat(runs), "placebo").verdict == NOT
    with pytest.raises(ValueError):
        Seeds(2)


def test_over_seeds_judges_job_conditions_on_the_spread_and_the_others_on_the_first_seed():
    """`reproduce --seeds N`: a condition pairing jobs is judged on the spread over the seeds (a seed going
    the other way fails it, the placebo and the reversal fail it); one over parts keeps its bootstrap, on
    the runs of the first seed only (the other seeds' rows would otherwise pair as duplicates)."""
    from burstbuffer.metrics.claims import over_seeds
    jobs_cond = _cond()
    parts_cond = _cond(metric=PART_MEAN, effect="share", scope="parts", band=Band(60, 100, "most of the parts"))
    claims = over_seeds([_claim(jobs_cond, cid="jobs"), _claim(parts_cond, cid="parts")])
    assert isinstance(claims[0].conditions[0].noise, Seeds) and isinstance(claims[1].conditions[0].noise, Paired)
    assert isinstance(jobs_cond.noise, Paired)                                     # the study's own is kept

    def table(factors, n_better):
        return pd.concat([pd.concat([_jobs({"t": list(BASE * f), "c": list(BASE)}, seed=s),
                                     _parts(nb).assign(seed=s)])
                          for s, (f, nb) in enumerate(zip(factors, n_better))])
    good = evaluate(claims, table((0.8, 0.82, 0.78), (8, 2, 2)))
    assert good[0].verdict == REPRODUCED and "3 seeds" in good[0].conditions[0]["noise"]
    assert good[0].conditions[0]["value"] == pytest.approx(100 * (1 - (0.8 + 0.82 + 0.78) / 3))
    # the parts condition sees seed 0 only (8 of 10 better; seeds 1 and 2 have 2 of 10)
    assert good[1].verdict == REPRODUCED and good[1].conditions[0]["value"] == pytest.approx(80.0)
    assert "seed 0" in good[1].conditions[0]["noise"]
    assert evaluate(claims, table((0.8, 0.82, 0.78), (2, 8, 8)))[1].verdict == NOT
    assert evaluate(claims, table((0.8, 1.1, 0.8), (8, 8, 8)))[0].verdict == NOT       # one seed the other way
    # the band is two-sided on the mean over the seeds: too large and too small are partly
    assert evaluate(claims, table((0.5, 0.52, 0.48), (8, 8, 8)))[0].verdict == PARTLY
    assert evaluate(claims, table((0.95, 0.96, 0.94), (8, 8, 8)))[0].verdict == PARTLY
    for mode in ("placebo", "reverse"):
        assert [v.verdict for v in evaluate(claims, table((0.8, 0.82, 0.78), (8, 8, 8)), mode)] == [NOT, NOT]


def test_regime_and_missing():
    c = _claim(_cond())
    jobs = _jobs({"t": list(BASE * 0.8), "c": list(BASE)})
    bad = [RegimeCheck("offered load", False, "2.2", "0.8 to 1.2"), RegimeCheck("jobs", True, "1000", "≥ 500")]
    v = _one(c, jobs, regime=bad)
    assert v.verdict == OUT_OF_REGIME and v.regime == ["offered load: 2.2 (needs 0.8 to 1.2)"]
    assert v.conditions[0]["verdict"] == REPRODUCED                  # still measured and shown
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
    jobs = _jobs({"t": list(BASE * 0.8), "c": list(BASE)})
    jobs["requested_number_of_resources"] = np.tile(np.arange(400) % 2, 2)
    small = Metric("mean waiting time of odd jobs [h]", scale=3600,
                   select=lambda r: r["requested_number_of_resources"].to_numpy() == 1)
    d = judge(_cond(metric=small), jobs)
    assert d["n"] == 200 and d["verdict"] == REPRODUCED
    # a job the treatment never started (NaN wait) is not paired
    jobs.loc[(jobs["policy"] == "t") & (jobs["job_id"] == "1"), "waiting_time"] = math.nan
    assert judge(_cond(metric=small), jobs)["n"] == 199


def test_two_classes_of_jobs_in_one_column():
    # Table-2-like: in one column, short jobs wait 6× less than capability jobs
    n = 300
    kind = np.array(["short", "cap"] * (n // 2))
    w = np.where(kind == "short", 1.0, 6.0) * RNG.uniform(0.5, 1.5, n)
    jobs = pd.DataFrame({"scope": "whole", "policy": "q", "job_id": [str(i) for i in range(n)],
                         "waiting_time": 3600 * w, "kind": kind})
    short = ("short jobs", lambda r: r["kind"].to_numpy() == "short")
    cap = ("capability jobs", lambda r: r["kind"].to_numpy() == "cap")
    cond = Condition("q", "q", WAIT, Band(3, 12, "Table 2's 6.1×, within a factor 2"), effect="ratio",
                     treatment_jobs=short, control_jobs=cap)
    assert not cond.paired and cond.name == "q (short jobs) vs q (capability jobs)"
    v = _one(_claim(cond), jobs)
    assert v.verdict == REPRODUCED and v.conditions[0]["n"] == [150, 150]
    assert 5 < v.conditions[0]["value"] < 7.5
    p = _one(_claim(cond), jobs, "placebo")
    assert p.verdict == NOT and p.conditions[0]["value"] == pytest.approx(1.0)
    assert _one(_claim(cond), jobs, "reverse").verdict == NOT
    same = ("short jobs", short[1])
    with pytest.raises(ValueError):
        Condition("q", "q", WAIT, BAND20, treatment_jobs=short, control_jobs=same)
    with pytest.raises(ValueError):
        Condition("q", "q", WAIT, BAND20, effect="share", treatment_jobs=short, control_jobs=cap)
