"""`burstbuffer compare` (docs/compare.md): runs judged against runs by the rule `reproduce` uses — the mean of
the paired per-replicate effects, Student's t over the replicates —, pairs checked by their workload's content,
one replicate a side never beyond noise; hand-made run folders for exact figures, simulated ones for the
checks of docs/compare.md (sjf-bb against fcfs-easy over 4 burst-buffer draws of 400 KTH records; halves of 8
plan-2 seeds on one draw)."""
from __future__ import annotations

import importlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

from burstbuffer.cli import main
from burstbuffer.metrics.compare import JSON_KEYS, compare_runs

HEADER = ("job_id,submission_time,requested_number_of_resources,requested_time,final_state,starting_time,"
          "execution_time,finish_time,waiting_time,turnaround_time,bounded_slowdown\n")


def _run(folder: Path, waits: list[float], workload: str = "w0") -> Path:
    """A run folder by hand: jobs of 100 s submitted at 0 that waited `waits` [s]; run.json naming `workload`."""
    folder.mkdir(parents=True)
    rows = [f"{i},0,1,200,COMPLETED_SUCCESSFULLY,{w},100,{w + 100},{w},{w + 100},{(w + 100) / 100}\n"
            for i, w in enumerate(waits)]
    (folder / "jobs.csv").write_text(HEADER + "".join(rows))
    (folder / "run.json").write_text(json.dumps({"policy": folder.name, "workload_sha256": workload}))
    return folder


def test_effect_and_interval_by_hand(tmp_path):
    # control mean waits 100 s; treatment 80, 90, 70: per-pair effects 20, 10, 30 %
    t = [_run(tmp_path / f"t{k}", [w, w], f"w{k}") for k, w in enumerate((80.0, 90.0, 70.0))]
    c = [_run(tmp_path / f"c{k}", [100.0, 100.0], f"w{k}") for k in range(3)]
    r = compare_runs(t, c)
    half = 4.302652729911275 * 10.0 / math.sqrt(3)          # t(0.975, 2) × s / √3, s = 10
    assert r["effect"] == pytest.approx(20.0) and r["replicates"] == 3
    assert r["interval"] == pytest.approx([20.0 - half, 20.0 + half])
    assert not r["beyond_noise"] and r["verdict"] == "inside the noise floor"
    # a steadier treatment: 19, 20, 21 % → beyond the noise floor
    t2 = [_run(tmp_path / f"s{k}", [w, w], f"w{k}") for k, w in enumerate((81.0, 80.0, 79.0))]
    r = compare_runs(t2, c)
    assert r["beyond_noise"] and r["verdict"] == "treatment better beyond the noise floor"
    assert compare_runs(c, t2)["verdict"] == "treatment worse beyond the noise floor"     # the sign check
    # with a band: the verdict of a claim (docs/verdicts.md)
    assert compare_runs(t2, c, band="15:25")["verdict"] == "reproduced"
    assert compare_runs(t2, c, band="30:40")["verdict"] == "partly"
    assert compare_runs(t, c, band="15:25")["verdict"] == "not reproduced"
    # the metric: a quantile of the turnaround time (wait + 100 s): 100 × (200 − 180) / 200 = 10 % in the mean
    r = compare_runs(t2, c, metric="q0.5:turnaround_time")
    assert r["metric"].startswith("q0.5 turnaround_time") and r["effect"] == pytest.approx(10.0)


def test_unpaired_is_welch(tmp_path):
    t = [_run(tmp_path / f"t{k}", [w], f"a{k}") for k, w in enumerate((80.0, 90.0, 70.0))]
    c = [_run(tmp_path / f"c{k}", [w], f"b{k}") for k, w in enumerate((100.0, 110.0, 90.0, 100.0))]
    r = compare_runs(t, c, unpaired=True)
    from scipy import stats
    ci = stats.ttest_ind([100, 110, 90, 100], [80, 90, 70], equal_var=False).confidence_interval(0.95)
    assert r["replicates"] == [3, 4] and r["effect"] == pytest.approx(20.0)
    assert r["interval"] == pytest.approx([100 * ci.low / 100, 100 * ci.high / 100])


def test_one_replicate_a_side_is_never_beyond_noise(tmp_path):
    t = [_run(tmp_path / "t", [1.0] * 50)]
    c = [_run(tmp_path / "c", [1000.0] * 50)]                 # a 99.9 % effect on each of 50 jobs
    for kw in ({}, {"unpaired": True}, {"band": "90:100"}):
        r = compare_runs(t, c, **kw)
        assert not r["beyond_noise"] and math.isnan(r["interval"][0]) and r["verdict"] != "reproduced", kw
        assert "no interval" in r["why"]


def test_pairs_are_checked_and_bad_input_is_one_line(tmp_path, capsys):
    t = [_run(tmp_path / f"t{k}", [80.0], f"w{k}") for k in range(2)]
    c = [_run(tmp_path / f"c{k}", [100.0], f"w{k}") for k in range(2)]
    args = ["compare", "--treatment", *map(str, t), "--control"]
    assert main([*args, str(c[1]), str(c[0])]) == 2           # swapped: pair 1 has different workloads
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "pair 1: different workloads" in err and "--unpaired" in err
    assert main([*args, str(c[0])]) == 2                       # 2 treatment runs, 1 control run
    assert "paired by position" in capsys.readouterr().err
    assert main([*args, str(c[1]), str(c[0]), "--unpaired"]) == 0
    (c[0] / "run.json").write_text("{}")                        # a run that does not say its workload
    assert main([*args, *map(str, c)]) == 2 and "no workload_sha256" in capsys.readouterr().err
    for bad in (["--metric", "happiness"], ["--metric", "q2:waiting_time"], ["--band", "30:10"], ["--band", "x"]):
        assert main([*args, *map(str, c), "--unpaired", *bad]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert main(["compare", "--treatment", str(tmp_path / "nope"), "--control", str(c[0])]) == 2
    assert "no jobs.csv" in capsys.readouterr().err


def test_json_has_exactly_its_keys(tmp_path):
    t = [_run(tmp_path / f"t{k}", [w], f"w{k}") for k, w in enumerate((81.0, 80.0, 79.0))]
    c = [_run(tmp_path / f"c{k}", [100.0], f"w{k}") for k in range(3)]
    out = tmp_path / "r.json"
    assert main(["compare", "--treatment", *map(str, t), "--control", *map(str, c), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert tuple(doc) == JSON_KEYS and doc["effect"] == pytest.approx(20.0) and doc["replicates"] == 3
    assert doc["beyond_noise"] is True and doc["metric"].startswith("mean waiting_time")


# --- simulated --------------------------------------------------------------------------------------------
def _simulate(tmp: Path, jobs: int, draws, policies, seeds=(0,)) -> dict:
    """Runs of `policies` on draws of the first `jobs` KTH records (`workload from-swf --seed d`) under `seeds`,
    two at a time: {(policy, draw, seed): run folder}."""
    from burstbuffer.data import bundled
    from burstbuffer.reproduce.local import LocalPoolExecutor
    from burstbuffer.reproduce.runs import PlannedRun
    from burstbuffer.runner import DEFAULT_PLATFORM
    ex = importlib.import_module("burstbuffer.reproduce.execute")
    specs, where = [], {}
    for d in draws:
        wl = tmp / f"kth-{jobs}-{d}.json"
        assert main(["workload", "from-swf", str(bundled("workloads", "KTH-SP2-1996-2.1-cln.swf.gz")), "--jobs",
                     str(jobs), "--artifact-selection", "--seed", str(d), "--output", str(wl)]) == 0
        for p in policies:
            for s in seeds:
                out = tmp / f"{p}-{d}-{s}"
                specs.append(PlannedRun("whole", p, str(wl), "io-aware", str(out), jobs, seed=s, label=out.name))
                where[(p, d, s)] = out
    res = ex.execute(specs, LocalPoolExecutor(2, progress=False, log=lambda m: None), ex.RunSettings(
        str(DEFAULT_PLATFORM), timeout=300), log=lambda m: None)
    assert not [k for k, v in res.items() if "error" in v]
    return where


@pytest.mark.slow
def test_sjf_bb_beats_fcfs_easy_beyond_noise_over_4_draws_of_400_records(tmp_path, capsys):
    runs = _simulate(tmp_path, 400, range(4), ("sjf-bb", "fcfs-easy"))
    t = [str(runs[("sjf-bb", d, 0)]) for d in range(4)]
    c = [str(runs[("fcfs-easy", d, 0)]) for d in range(4)]
    out = tmp_path / "c.json"
    assert main(["compare", "--treatment", *t, "--control", *c, "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["beyond_noise"] and doc["effect"] > 0 and doc["replicates"] == 4, doc
    assert doc["verdict"] == "treatment better beyond the noise floor"
    # one replicate a side: no noise floor, whatever the effect
    assert main(["compare", "--treatment", t[0], "--control", c[0], "--json", str(out)]) == 0
    assert not json.loads(out.read_text())["beyond_noise"]
    # mismatched pairs are refused
    assert main(["compare", "--treatment", *t[:2], "--control", c[1], c[0]]) == 2
    assert "different workloads" in capsys.readouterr().err


@pytest.mark.slow
def test_halves_of_8_plan2_seeds_on_one_draw_are_no_difference(tmp_path):
    runs = _simulate(tmp_path, 200, (7,), ("plan-2",), seeds=range(8))
    folders = [runs[("plan-2", 7, s)] for s in range(8)]
    # the seeds do change plan-2's schedules here (else the check below would prove nothing)
    assert len({(f / "jobs.csv").read_bytes() for f in folders}) > 1
    rng = np.random.default_rng(51)
    beyond = 0
    for _ in range(5):
        perm = rng.permutation(8)
        beyond += compare_runs([folders[i] for i in perm[:4]], [folders[i] for i in perm[4:]])["beyond_noise"]
    assert beyond <= 1
