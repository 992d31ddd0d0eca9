"""Studies whose columns are policy variants (a policy with options, maybe its own job model) and whose
workloads include ones derived from the selected workload: the plan, the run folders, resumability with
options, and the analysis naming every row by the variant's label."""
import argparse
from pathlib import Path

import pandas as pd

from burstbuffer.reproduce import RunSettings, analyse, execute, plan_runs
from burstbuffer.reproduce.local import LocalPoolExecutor
from burstbuffer.reproduce.runs import subset
from burstbuffer.reproduce.study import ExtraWorkload, Study, Variant
from burstbuffer.runner import DEFAULT_PLATFORM
from burstbuffer.schedulers import POLICIES

VARIANTS = (Variant("sjf-bb", "sjf-bb"), Variant("fcfs-bb/ljf", "fcfs-bb", {"order": "ljf"}),
            Variant("sjf-bb/alloc", "sjf-bb", model="alloc-only"))


def _first_half(whole: Path, work: Path, seed: int, platform: Path) -> list[ExtraWorkload]:
    from burstbuffer.reproduce.runs import njobs
    n = njobs(whole) // 2
    return [ExtraWorkload("half", subset(whole, n, work / "half.json"), f"half: the first {n} jobs (seed {seed})")]


def _study(seen: list) -> Study:
    return Study("t", "A test study", "test", policies=(), reference="sjf-bb", claims=(), variants=VARIANTS,
                 workloads=_first_half, sections=lambda d: seen.append(d) or [])


def _args(wl: Path, **kw) -> argparse.Namespace:
    base = dict(jobs="1000", workload=str(wl), parts=False, parts_from=None, split=None, policies=None,
                model="io-aware", gantt_jobs=0, seed=3)
    base.update(kw)
    return argparse.Namespace(**base)


def test_plan_of_variants_and_derived_workloads(tmp_path, kth_subset):
    wl = kth_subset(12)
    plan = plan_runs(_study([]), _args(wl), tmp_path, POLICIES, log=lambda m: None)
    assert [s.key for s in plan.specs] == ["whole/sjf-bb", "whole/fcfs-bb/ljf", "whole/sjf-bb/alloc",
                                           "half/sjf-bb", "half/fcfs-bb/ljf", "half/sjf-bb/alloc"]
    ljf = plan.specs[1]
    assert (ljf.policy, ljf.options, ljf.model, ljf.column) == ("fcfs-bb", '{"order":"ljf"}', "io-aware", "fcfs-bb/ljf")
    assert Path(ljf.out) == tmp_path / "runs" / "whole" / "fcfs-bb" / "ljf"
    assert plan.specs[2].model == "alloc-only" and plan.specs[0].column == ""
    assert [s.jobs for s in plan.specs] == [12] * 3 + [6] * 3
    assert "half: the first 6 jobs (seed 3)" in plan.notes
    # --policies selects variants by label; a plain name not among them is a variant of its own
    plan = plan_runs(_study([]), _args(wl, policies="fcfs-bb/ljf,fcfs"), tmp_path, POLICIES, log=lambda m: None)
    assert [(s.key, s.policy, s.options) for s in plan.specs if s.scope == "whole"] == \
        [("whole/fcfs-bb/ljf", "fcfs-bb", '{"order":"ljf"}'), ("whole/fcfs", "fcfs", "")]


def test_variants_run_and_are_reported_by_label(tmp_path, kth_subset):
    wl = kth_subset(12)
    seen = []
    study = _study(seen)
    out = tmp_path / "rep"
    plan = plan_runs(study, _args(wl), out, POLICIES, log=lambda m: None)
    results = execute(plan.specs, LocalPoolExecutor(2, pin=False, progress=False),
                      RunSettings(str(DEFAULT_PLATFORM), seed=3), log=lambda m: None)
    assert all("error" not in r for r in results.values()), results
    manifest = {"model": "io-aware", "platform": str(DEFAULT_PLATFORM), "seed": 3, "workers": 2}
    analyse(out, study, plan.specs, results, manifest, log=lambda m: None)
    summ = pd.read_csv(out / "summary.csv")
    assert sorted(zip(summ["scope"], summ["policy"])) == sorted(
        (sc, v.label) for sc in ("whole", "half") for v in VARIANTS)
    assert (summ.set_index(["scope", "policy"])["jobs"].loc[[("half", "sjf-bb"), ("whole", "sjf-bb")]]
            .tolist() == [6, 12])
    # each variant ran with its options and its model (the markers record what the runner was given)
    assert results["whole/fcfs-bb/ljf"]["options"] == '{"order":"ljf"}'
    assert results["half/sjf-bb/alloc"]["model"] == "alloc-only" and results["half/sjf-bb"]["model"] == "io-aware"
    assert len(seen) == 1 and set(seen[0].summary["scope"]) == {"whole", "half"}
    assert "Summary per policy: half" in (out / "report.md").read_text()
    # a marker made with other options is not reused
    again = execute(plan.specs, LocalPoolExecutor(1, pin=False, progress=False),
                    RunSettings(str(DEFAULT_PLATFORM), seed=3), log=lambda m: None)
    assert again == results
    from dataclasses import replace
    other = replace(plan.specs[1], options='{"order":"sjf"}')
    from burstbuffer.reproduce import read_marker
    assert read_marker(plan.specs[1]) is not None and read_marker(other) is None
