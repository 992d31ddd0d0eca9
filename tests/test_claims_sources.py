"""Claims judged only as their sources state them (docs/verdicts.md): the shape of each rule (which ways it can
fail), claims a source gives no experiment for (*not testable*, never reproduced), the project's own questions
apart, out-of-regime claims saying so in every condition, Kopanski's regime checked by what the runs are
(platform content, job model, trace identity — not a job count), Allcock's claims out of regime off a Mira-like
machine, slide 31's estimate 3 × the actual run time, and the study pages' claim tables matching the code."""
from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from burstbuffer.data import bundled
from burstbuffer.metrics.claims import Band, Claim, Condition, Metric, RegimeCheck, evaluate
from burstbuffer.metrics.rules import AT_LEAST, AT_MOST, DIRECTION_ONLY, EQUIVALENCE, TWO_SIDED, rule
from burstbuffer.metrics.verdicts import NO_DIFFERENCE, NOT_TESTABLE, OUT_OF_REGIME, PROJECT, REPRODUCED
from burstbuffer.reproduce import claim_pages
from burstbuffer.reproduce.runs import PlannedRun
from burstbuffer.reproduce.study import all_studies
from burstbuffer.reproduce.studies import backfilling as BF
from burstbuffer.reproduce.studies import kopanski2021 as K
from burstbuffer.reproduce.studies import orders as O

ROOT = Path(__file__).parents[1]
WAIT = Metric("mean waiting time [h]", scale=3600)


def _cond(lo, hi, effect="relative", better="lower", asserts="difference"):
    return Condition("t", "c", WAIT, Band(lo, hi, "test"), better=better, effect=effect, asserts=asserts)


# ------------------------------------------------------------------------------------------ rules
@pytest.mark.parametrize("lo, hi, effect, better, kind", [
    (3, 6, "relative", "lower", TWO_SIDED),
    (0, 100, "relative", "lower", DIRECTION_ONLY),        # a reduction cannot pass 100 %: no "too large"
    (0, math.inf, "relative", "lower", DIRECTION_ONLY),
    (5, 100, "relative", "lower", AT_LEAST),
    (0, 26, "relative", "lower", AT_MOST),
    (0, 100, "relative", "higher", AT_MOST),              # an increase can pass 100 %
    (2, math.inf, "ratio", "lower", AT_LEAST),
    (2, 100, "ratio", "lower", TWO_SIDED),                # a ratio can pass 100×
    (56.25, 100, "share", "lower", AT_LEAST),
])
def test_the_rule_of_a_band(lo, hi, effect, better, kind):
    r = rule(_cond(lo, hi, effect, better))
    assert r.kind == kind
    assert r.both_ways == (kind == TWO_SIDED)
    assert r.fails_small == (kind in (TWO_SIDED, AT_LEAST)) and r.fails_large == (kind in (TWO_SIDED, AT_MOST))


def test_a_rule_can_fail_the_ways_it_says():
    """Judged on hand-made per-job tables: an at-least rule fails a small effect and passes any large one; an
    at-most rule the other way round; direction only passes both."""
    base = np.linspace(1.0, 3.0, 200)

    def jobs(factor):                      # 3 replicates, the treatment's effect varying a little between them
        return pd.concat([pd.DataFrame({"scope": "whole", "policy": ["t"] * 200 + ["c"] * 200, "replicate": r,
                                        "job_id": [str(i) for i in range(200)] * 2,
                                        "waiting_time": 3600 * np.concatenate([(factor + 0.002 * r) * base, base])})
                          for r in range(3)], ignore_index=True)
    small, large = jobs(0.98), jobs(0.2)          # about 2 % and 80 % lower
    at_least, at_most, direction = _cond(5, 100), _cond(0, 26), _cond(0, 100)
    v = lambda c, j: evaluate([Claim("x", "x", "s", conditions=(c,))], j)[0].verdict  # noqa: E731
    assert (v(at_least, small), v(at_least, large)) == ("partly", REPRODUCED)
    assert (v(at_most, small), v(at_most, large)) == (REPRODUCED, "partly")
    assert (v(direction, small), v(direction, large)) == (REPRODUCED, REPRODUCED)


def test_no_difference_is_an_equivalence_test():
    assert rule(_cond(-2, 2, asserts=NO_DIFFERENCE)).kind == EQUIVALENCE


def test_every_qualitative_condition_states_a_minimal_effect_or_says_direction_only():
    for st in all_studies().values():
        for c in st.claims:
            for k in c.conditions:
                r = rule(k)
                if c.paper_value.startswith("qualitative") and not r.fails_small:
                    assert r.kind == DIRECTION_ONLY and "direction only" in r.text, (st.name, c.id, k.name)


def test_verdicts_page_does_not_call_every_band_two_sided():
    text = (ROOT / "docs" / "verdicts.md").read_text()
    assert "no band is one-sided" not in text
    assert "direction only" in text and "minimal effect" in text


# ------------------------------------------------------------------------ not testable, the project's
def _all_pass_table():
    base = np.linspace(1.0, 3.0, 100)
    return pd.concat([pd.DataFrame({"scope": "whole", "policy": ["t"] * 100 + ["c"] * 100, "replicate": r,
                                    "job_id": [str(i) for i in range(100)] * 2,
                                    "waiting_time": 3600 * np.concatenate([(0.5 + 0.01 * r) * base, base])})
                      for r in range(3)], ignore_index=True)          # 3 replicates, a little apart


def test_a_claim_with_no_experiment_is_never_reproduced():
    cond = _cond(0, 100)
    jobs = _all_pass_table()
    nt = Claim("nt", "x", "§1", conditions=(cond,), not_testable="the source reports no experiment")
    assert evaluate([Claim("ok", "x", "§1", conditions=(cond,))], jobs)[0].verdict == REPRODUCED   # the rule passes
    failed = [RegimeCheck("r", False, "m", "n")]
    for mode in ("real", "placebo", "reverse"):
        for regime in ((), failed):
            v = evaluate([nt], jobs, mode=mode, regime=regime)[0]
            assert v.verdict == NOT_TESTABLE and v.by_how_much == "the source reports no experiment"
    assert Claim("bare", "x", "§1", not_testable="no experiment").conditions == ()
    with pytest.raises(ValueError):
        Claim("bare", "x", "§1")


def test_sources_without_an_experiment_are_not_testable():
    studies = all_studies()
    cerberus = {c.id: c for c in studies["three-phase"].claims}
    assert cerberus["cerberus-results"].not_testable and cerberus["cerberus-results"].origin != PROJECT
    assert all(c.origin == PROJECT for i, c in cerberus.items() if i != "cerberus-results")
    bb = {c.id: c for c in studies["bbsched"].claims}
    assert bb["headline"].not_testable and "Kiviat" in bb["headline"].not_testable        # §6's own metric
    assert bb["headline-wait"].origin == PROJECT
    for st in studies.values():
        v = evaluate(st.claims, _all_pass_table())
        assert all(x.verdict == NOT_TESTABLE for x, c in zip(v, st.claims) if c.not_testable)
        assert all(x.origin == c.origin for x, c in zip(v, st.claims))


def test_every_paper_claim_quotes_its_source():
    for st in all_studies().values():
        for c in st.claims:
            if c.origin != PROJECT:
                assert c.words and c.source, (st.name, c.id)


# ------------------------------------------------------------------------------- out of regime
def test_an_out_of_regime_claim_says_so_in_every_condition():
    from tests.test_claims import _jobs, _waits
    jobs = _jobs(_waits())
    assert evaluate(K.CLAIMS, jobs)[3].verdict == REPRODUCED           # plan2-wait, in regime
    failed = [RegimeCheck("workload", False, "the first 1000 jobs of the KTH trace", "the whole KTH trace")]
    for v in evaluate(K.CLAIMS, jobs, regime=failed):
        if v.verdict == "not measured":
            continue
        assert v.verdict == OUT_OF_REGIME and v.regime
        assert "reproduced" not in v.by_how_much and OUT_OF_REGIME in v.by_how_much, v.by_how_much
        for d in v.conditions:
            assert d["verdict"] == OUT_OF_REGIME and d["why"].startswith(OUT_OF_REGIME)
            assert "reproduced" not in d["why"]


# ------------------------------------------------------------------- Kopanski's regime, by content
@pytest.fixture(scope="module")
def kth(tmp_path_factory):
    """The whole KTH trace as the project converts it, the paper's 28,453 jobs, and the 16 parts unpacked."""
    from burstbuffer.workloads.bundled import ensure_kth_workload
    d = tmp_path_factory.mktemp("kth")
    whole = ensure_kth_workload(d / "kth-all.json")
    fitting = ensure_kth_workload(d / "kth-fit.json", drop_oversized=True, seed=7)    # another BB draw too
    parts = []
    for k in range(16):
        p = d / f"part-{k}.json"
        p.write_bytes(gzip.decompress((bundled("workloads", "KTH-split") / f"part-{k}.json.gz").read_bytes()))
        parts.append(p)
    return whole, fitting, parts


def _specs(whole, parts=(), model="io-aware", platform=""):
    out = [PlannedRun("whole", p, str(whole), model, f"o/{p}", 1, platform=platform) for p in ("sjf-bb", "plan-2")]
    out += [PlannedRun(f"part-{k:02d}", "sjf-bb", str(w), model, f"o/{k}", 1, platform=platform)
            for k, w in enumerate(parts)]
    out.append(PlannedRun("gantt", "fcfs-easy", str(whole), "alloc-only", "o/g", 1))       # Fig. 3: not checked
    return out


PAPER = str(bundled("platforms", "dragonfly96.xml"))


def _failed(checks):
    return {c.name for c in checks if not c.ok}


def test_the_papers_runs_are_in_regime(kth):
    whole, fitting, parts = kth
    assert _failed(K.regime_checks(_specs(whole, parts), PAPER)) == set()
    assert _failed(K.regime_checks(_specs(fitting), PAPER)) == set()            # 28,453 jobs, another draw


def test_another_job_model_is_out_of_regime(kth):
    assert _failed(K.regime_checks(_specs(kth[0], model="alloc-only"), PAPER)) == {"job model"}


def test_another_platform_is_out_of_regime(kth, tmp_path):
    other = str(bundled("platforms", "cori-like96.xml"))
    assert _failed(K.regime_checks(_specs(kth[0]), other)) == {"platform"}
    edited = tmp_path / "dragonfly96.xml"                   # the same name, one byte more: by content
    edited.write_bytes(Path(PAPER).read_bytes() + b"\n")
    assert _failed(K.regime_checks(_specs(kth[0]), str(edited))) == {"platform"}
    assert _failed(K.regime_checks(_specs(kth[0], platform=str(edited)), PAPER)) == {"platform"}


def test_any_28453_job_workload_is_not_the_kth_trace(kth, tmp_path):
    from burstbuffer.workloads.batsim_json import load_workload, write_workload
    w = load_workload(kth[1], require_bb=False)
    assert len(w.jobs) == K.PAPER_JOBS
    fake = w.replaced(jobs=[j.replaced(subtime=j.subtime + 1) for j in w.jobs])   # 28,453 jobs, one second later
    write_workload(tmp_path / "fake.json", fake)
    checks = K.regime_checks(_specs(tmp_path / "fake.json"), PAPER)
    assert _failed(checks) == {"workload"}
    assert "trace" in next(c for c in checks if c.name == "workload").measured
    first = ROOT / "workloads" / "kth-1000.json"                             # the first 1000 jobs: not the trace
    assert _failed(K.regime_checks(_specs(first), PAPER)) == {"workload"}


def test_parts_must_be_the_papers_sixteen(kth):
    whole, _, parts = kth
    assert _failed(K.regime_checks(_specs(whole, parts[:15]), PAPER)) == {"parts"}
    assert _failed(K.regime_checks(_specs(whole, parts[:15] + [parts[0]]), PAPER)) == {"parts"}


# ------------------------------------------------------------------------------ Allcock: Mira
def test_allcocks_claims_need_a_mira_like_machine():
    assert not O.machine_check([96]).ok and not O.machine_check([49152]).ok      # no partitions here
    assert "49,152" in O.machine_check([96]).needs
    jobs = pd.DataFrame({"scope": "whole", "policy": ["fcfs-bb/wfp", "fcfs-bb/fcfs"],
                         "job_id": ["1", "1"], "waiting_time": [1.0, 2.0],
                         "requested_number_of_resources": [40, 40], "requested_time": [60.0, 60.0]})
    v = evaluate(O.CLAIMS, jobs, regime=[O.machine_check([96])])
    assert all(x.verdict in (OUT_OF_REGIME, "not measured") for x in v)
    table2 = next(c for c in O.CLAIMS if c.id == "queue-waits")
    assert "statistic of Mira's job log" in table2.text and "not a policy comparison" in table2.text


# ------------------------------------------------------------------------------ slide 31
def test_slide_31_estimates_three_times_the_actual_run_time(tmp_path):
    """KTH job 15 ran 3477 s (SWF field 4) and asked 53,940 s: on slide 31's scope it runs 3477 s, easy sees
    3477 s (f = 1) and easy/x3 sees 10,431 s = 3 × 3477 (not 3 × 53,940)."""
    from procset import ProcSet
    from burstbuffer.platforms.model import Platform
    from burstbuffer.schedulers import make_scheduler
    from burstbuffer.schedulers.base import Job
    src = tmp_path / "two.json"
    d = json.loads((ROOT / "workloads" / "kth-1000.json").read_text())
    d["jobs"] = d["jobs"][:2]
    d["profiles"] = {j["profile"]: d["profiles"][j["profile"]] for j in d["jobs"]}
    src.write_text(json.dumps(d))
    (extra,) = BF.actual_runtime_workload(src, tmp_path)
    assert extra.scope == BF.ACTUAL
    out = json.loads(Path(extra.path).read_text())
    j15 = next(j for j in out["jobs"] if j["id"] == 15)
    assert j15["walltime"] == 3477 and out["profiles"][j15["profile"]] == {
        "type": "delay", "delay": 3477.0, "bb": d["profiles"]["15"]["bb"]}
    x3 = next(v for v in BF.VARIANTS if v.label == BF.X3)
    assert x3.scopes == (BF.ACTUAL,)
    plat = Platform(ProcSet((0, 95)), {i: f"node_{i}" for i in range(96)}, {96: 10 ** 12}, None, None)
    sched = make_scheduler(x3.policy, plat, **x3.options)
    sched.submit(Job("w0!15", 1.0, float(j15["walltime"]), 4), 1.0)
    assert sched._queue["w0!15"].walltime == 3 * 3477
    claim = next(c for c in BF.CLAIMS if c.id == "estimates-x3")
    assert all(k.scope == BF.ACTUAL and (k.treatment, k.control) == (BF.X3, BF.EASY) for k in claim.conditions)


def test_slide_31_needs_the_traces_run_times(tmp_path):
    src = tmp_path / "other.json"
    d = json.loads((ROOT / "workloads" / "kth-1000.json").read_text())
    d["jobs"] = [dict(d["jobs"][0], id=10 ** 9)]
    src.write_text(json.dumps(d))
    assert BF.actual_runtime_workload(src, tmp_path) == []


# ------------------------------------------------------------------------------ the pages
@pytest.mark.parametrize("name", sorted(all_studies()))
def test_each_study_page_shows_its_claims_as_the_code_judges_them(name):
    st = all_studies()[name]
    inc = ROOT / "docs" / "studies" / "claims" / f"{name}.inc"
    assert inc.read_text() == claim_pages.markdown(st), "run `make claim-pages`"
    text = inc.read_text()
    for c in st.claims:
        assert f"**`{c.id}`**" in text
        if c.not_testable:
            assert NOT_TESTABLE in text
    if any(c.origin == PROJECT for c in st.claims):
        own = text.split("The project's own questions", 1)[1]
        assert all(f"`{c.id}`" in own for c in st.claims if c.origin == PROJECT)
        assert not any(f"**`{c.id}`**" in own for c in st.claims if c.origin != PROJECT)


def test_the_claim_pages_are_included():
    for name in all_studies():
        pages = [p for p in (ROOT / "docs").rglob("*.md") if f"claims/{name}.inc" in p.read_text()]
        assert pages, name
