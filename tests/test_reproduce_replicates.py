"""`burstbuffer reproduce --replicates R` (docs/verdicts.md, "Replicates"): replicate k is one independent draw of
every random input — the KTH workload's burst-buffer and communication requests under seed k, the policies under
--seed + k — shared by every column (paired); each claim is judged on the R per-replicate effects (Student's t);
with one replicate there is no interval; `--seeds` is the same option; runs are keyed by the content of their
inputs and reused from `--cache`."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

from burstbuffer.cli import main
from burstbuffer.metrics.tidy import job_metrics, load_jobs

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    root = tmp_path_factory.mktemp("replicates")
    out = root / "out"
    argv = ["reproduce", "--jobs", "120", "--policies", "sjf-bb,fcfs-easy", "--seed", "5", "--replicates", "3",
            "--gantt-jobs", "0", "--engine", "local", "--workers", "2", "--output", str(out), "--timeout", "120",
            "--cache", str(root / "cache"), "-q"]
    assert main(argv) == 0
    return out, argv, root


def _mean_wait(run: Path) -> float:
    return float(job_metrics(load_jobs(run / "jobs.csv"))["waiting_time"].mean())


def _folders(out: Path) -> list[Path]:
    return [out / "runs" / "whole", out / "runs" / "r1" / "whole", out / "runs" / "r2" / "whole"]


def test_each_replicate_draws_every_input_and_shares_it(three):
    out, _, _ = three
    digests = []
    for k, folder in enumerate(_folders(out)):
        info = {p: json.loads((folder / p / "run.json").read_text()) for p in ("sjf-bb", "fcfs-easy")}
        assert {json.loads((folder / p / "summary.json").read_text())["seed"] for p in info} == {5 + k}
        # treatment and control share the replicate's workload draw (paired) ...
        assert info["sjf-bb"]["workload_sha256"] == info["fcfs-easy"]["workload_sha256"]
        digests.append(info["sjf-bb"]["workload_sha256"])
    # ... and each replicate is its own draw: three different workloads, so a deterministic policy varies
    assert len(set(digests)) == 3
    assert len({(f / "sjf-bb" / "jobs.csv").read_bytes() for f in _folders(out)}) == 3
    assert json.loads((out / "manifest.json").read_text())["replicates"] == 3


def test_claims_are_judged_on_the_per_replicate_effects(three):
    out, argv, _ = three
    v = {e["id"]: e for e in json.loads((out / "verdicts.json").read_text())}
    # a condition of the study judged between the two columns run (either way round)
    conds = [d for e in v.values() for d in e["conditions"] if {d["treatment"], d["control"]} == {"sjf-bb", "fcfs-easy"}
             and d["metric"].startswith("mean waiting")]
    assert conds, sorted(v)
    cond = conds[0]
    assert cond["n"] == 3 and "3 replicates (paired, Student's t), 95 % interval" == cond["noise"]
    per = []
    for folder in _folders(out):
        t, c = _mean_wait(folder / cond["treatment"]), _mean_wait(folder / cond["control"])
        per.append(100 * (c - t) / c if cond["effect"] == "relative" else c / t)
    assert cond["per_replicate"] == pytest.approx(per, rel=1e-9)
    assert cond["value"] == pytest.approx(np.mean(per), rel=1e-9)
    from scipy import stats
    half = stats.t.ppf(0.975, 2) * np.std(per, ddof=1) / math.sqrt(3)
    assert cond["interval"] == pytest.approx([np.mean(per) - half, np.mean(per) + half], rel=1e-9)
    # --seeds is the same option: the same verdicts from the same runs
    same = [a if a != "--replicates" else "--seeds" for a in argv] + ["--report-only"]
    assert main(same) == 0
    assert json.loads((out / "verdicts.json").read_text()) == list(v.values())
    # the tables are those of replicate 0 only
    assert "replicate" not in (out / "job_metrics.csv").read_text().splitlines()[0]


def test_one_replicate_has_no_interval(three):
    out, argv, _ = three
    one = list(argv)
    one[one.index("--replicates") + 1] = "1"
    assert main(one + ["--report-only"]) == 0
    for e in json.loads((out / "verdicts.json").read_text()):
        assert e["verdict"] not in ("reproduced", "partly"), e["id"]
        for d in e["conditions"]:
            if d["verdict"] != "not measured":
                assert d["n"] == 1 and "no interval" in d["why"] and not d["beyond_noise"]
    assert main(argv + ["--report-only"]) == 0              # back to three for the other tests


def test_a_second_output_reuses_the_cached_runs(three, capsys):
    out, argv, root = three
    other = list(argv)
    other[other.index("--output") + 1] = str(root / "other")
    capsys.readouterr()
    assert main(other) == 0
    said = capsys.readouterr().out
    assert "6 copied from the cache, 0 to do" in said
    for a, b in zip(_folders(out), _folders(root / "other")):
        for p in ("sjf-bb", "fcfs-easy"):
            assert (a / p / "jobs.csv").read_bytes() == (b / p / "jobs.csv").read_bytes()
            assert json.loads((b / p / "summary.json").read_text())["reused"]
