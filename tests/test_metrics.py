"""Metric functions on hand-computed cases (docs/metrics.md), the Batsim sub-job table rebuild (docs/protocol.md)
and the `metrics` command."""
import math

import numpy as np
import pandas as pd
import pytest

from burstbuffer.cli import main
from burstbuffer.metrics.batsim_csv import rebuild_original_jobs
from burstbuffer.metrics.stats import letter_depth_count, letter_values, mean_ci, normalise_by, quantiles, tail
from burstbuffer.metrics.summary import bounded_slowdown
from burstbuffer.metrics.tables import part_means, summary_table
from burstbuffer.metrics.tidy import describe, job_metrics, load_jobs

from .conftest import CAPTURE_DIR

CAPTURE = CAPTURE_DIR / "capture10_jobs.csv"
CAPTURE_WL = CAPTURE_DIR / "kth-io-aware-first10.json"


# --- bounded slowdown, per-job metrics -------------------------------------------------------------------
@pytest.mark.parametrize("turnaround, runtime, tau, expected", [
    (1200.0, 300.0, 600.0, 2.0),     # short job: runtime bounded below by τ → 1200 / 600
    (1800.0, 900.0, 600.0, 2.0),     # long job: the plain slowdown 1800 / 900
    (100.0, 100.0, 600.0, 1.0),      # short job that did not wait: 100 / 600 < 1 → 1
    (700.0, 600.0, 600.0, 700 / 600),
    (100.0, 50.0, 10.0, 2.0),        # another τ: 100 / max(50, 10)
    (100.0, 5.0, 10.0, 10.0),        # 100 / max(5, 10)
])
def test_bounded_slowdown_hand_cases(turnaround, runtime, tau, expected):
    assert bounded_slowdown(turnaround, runtime, tau) == pytest.approx(expected)


def test_bounded_slowdown_vectorised():
    got = bounded_slowdown([1200, 1800, 100], [300, 900, 100])
    assert got == pytest.approx([2.0, 2.0, 1.0])


def test_job_metrics_from_a_jobs_table():
    jobs = pd.DataFrame({
        "job_id": ["1", "2", "3"], "submission_time": [0.0, 100.0, 50.0], "starting_time": [0.0, 1300.0, None],
        "finish_time": [300.0, 2200.0, None], "requested_number_of_resources": [1, 2, 200],
        "requested_time": [600, 3600, 60], "final_state": ["COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED",
                                                          "REJECTED"]})
    m = job_metrics(jobs)
    assert list(m.waiting_time[:2]) == [0.0, 1200.0]
    assert list(m.turnaround_time[:2]) == [300.0, 2100.0]
    assert list(m.runtime[:2]) == [300.0, 900.0]
    # job 1: 300 / max(300, 600) = 0.5 → 1; job 2: 2100 / 900
    assert m.bounded_slowdown[:2].tolist() == pytest.approx([1.0, 2100 / 900])
    assert m.iloc[2][["waiting_time", "turnaround_time", "runtime", "bounded_slowdown"]].isna().all()
    assert m.bb_per_node.isna().all()     # no such column in the input
    # with τ = 100 s, job 1's slowdown is 300 / 300 = 1 and job 2's unchanged
    assert job_metrics(jobs, tau=100).bounded_slowdown[:2].tolist() == pytest.approx([1.0, 2100 / 900])



def test_three_phase_waiting_time_runs_to_the_nodes():
    """A three-phase jobs.csv: job 1 stages in at 100 (BB only) and gets its nodes at 1900, ends at 3100; job 2
    stages in on its nodes (nodes_start = starting_time = 50), ends at 1250; job 3 is rejected. The waiting time
    runs to the nodes (1900, 50), the wait to the stage-in beside it (100, 50); runtime = end − nodes start
    (1200, 1200); bounded slowdown 3000 / 1200 and 1250 / 1200; the run summary agrees."""
    from burstbuffer.metrics.summary import summarize
    jobs = pd.DataFrame({
        "job_id": ["1", "2", "3"], "submission_time": [0.0, 0.0, 0.0], "starting_time": [100.0, 50.0, None],
        "finish_time": [3100.0, 1250.0, None], "requested_number_of_resources": [1, 1, 1],
        "requested_time": [3600, 3600, 60], "final_state": ["COMPLETED_SUCCESSFULLY"] * 2 + ["REJECTED"],
        "execution_time": [3000.0, 1200.0, None],
        "nodes_start": [1900.0, 50.0, None], "nodes_end": [3000.0, 1200.0, None]})
    m = job_metrics(jobs)
    assert list(m.waiting_time[:2]) == [1900.0, 50.0] and list(m.wait_to_stage_in[:2]) == [100.0, 50.0]
    assert list(m.runtime[:2]) == [1200.0, 1200.0]
    assert m.bounded_slowdown[:2].tolist() == pytest.approx([3100 / 1200, 1250 / 1200])
    assert m.iloc[2][["waiting_time", "wait_to_stage_in"]].isna().all()
    s = summarize(jobs)
    assert s.mean_waiting_h == pytest.approx(975 / 3600) and s.max_waiting_h == pytest.approx(1900 / 3600)
    assert s.mean_bounded_slowdown == pytest.approx((3100 / 1200 + 1250 / 1200) / 2) and s.rejected == 1
    two_phase = job_metrics(jobs.drop(columns=["nodes_start", "nodes_end"]))
    assert list(two_phase.waiting_time[:2]) == [100.0, 50.0] == list(two_phase.wait_to_stage_in[:2])

# --- confidence intervals, quantiles, tail, letter values -----------------------------------------------
def test_mean_ci_hand_computed():
    ci = mean_ci([1, 2, 3, 4, 5])
    # s = √2.5, t(0.975, 4) = 2.776445105 → half width 2.776445105 · √2.5 / √5 = 1.963243
    assert ci.mean == 3.0 and ci.n == 5
    assert ci.half_width == pytest.approx(1.9632432, rel=1e-6)
    assert (ci.low, ci.high) == pytest.approx((3 - 1.9632432, 3 + 1.9632432), rel=1e-6)
    # 90 %: t(0.95, 4) = 2.131847 → 1.507443
    assert mean_ci([1, 2, 3, 4, 5], confidence=0.9).half_width == pytest.approx(1.5074432, rel=1e-6)


def test_mean_ci_edge_cases():
    assert mean_ci([7.0]) .low == mean_ci([7.0]).high == 7.0
    e = mean_ci([])
    assert e.n == 0 and math.isnan(e.mean)
    assert mean_ci([1.0, np.nan, 3.0]).mean == 2.0       # NaN (never started) ignored
    assert mean_ci([2.0, 2.0, 2.0]).half_width == 0.0


def test_quantiles_tail_describe():
    q = quantiles([0, 10, 20, 30, 40], levels=(0.25, 0.5, 1.0))
    assert q == {0.25: 10.0, 0.5: 20.0, 1.0: 40.0}
    assert tail([5, 1, np.nan, 3, 4], 3).tolist() == [5, 4, 3]
    assert tail([1, 2], 3000).tolist() == [2, 1]
    d = describe([3600, 7200, np.nan], scale=3600)
    assert d["n"] == 2 and d["mean"] == 1.5 and d["max"] == 2.0 and d["q0.5"] == 1.5


def test_letter_values():
    assert [letter_depth_count(n) for n in (1, 15, 16, 128, 28453)] == [1, 1, 1, 4, 11]
    v = np.arange(1, 129, dtype=float)        # 1 … 128
    lv = letter_values(v)
    assert lv.median == 64.5 and len(lv.boxes) == 4
    assert lv.boxes[0] == pytest.approx(tuple(np.quantile(v, [0.25, 0.75])))
    assert lv.boxes[3] == pytest.approx(tuple(np.quantile(v, [1 / 32, 31 / 32])))
    los, his = zip(*lv.boxes)
    assert list(los) == sorted(los, reverse=True) and list(his) == sorted(his)    # nested boxes
    # outliers: outside the 1/32 … 31/32 box: 4.97 → 1, 2, 3, 4 below, 125 … 128 above
    assert lv.outliers.tolist() == [1, 2, 3, 4, 125, 126, 127, 128]
    with pytest.raises(ValueError):
        letter_values([np.nan])


# --- normalisation over parts ---------------------------------------------------------------------------
def test_normalise_by_reference():
    means = pd.DataFrame({"sjf-bb": [2.0, 4.0, 0.0, 0.0], "filler": [3.0, 2.0, 0.0, 1.0], "plan-2": [1.0, 4.0, 0.0, 0.0]},
                         index=["part-00", "part-01", "part-02", "part-03"])
    n = normalise_by(means, "sjf-bb")
    assert n.loc["part-00"].tolist() == [1.0, 1.5, 0.5]
    assert n.loc["part-01"].tolist() == [1.0, 0.5, 1.0]
    assert n.loc["part-02"].tolist() == [1.0, 1.0, 1.0]        # 0 / 0: equal
    assert n.loc["part-03", "sjf-bb"] == 1.0 and math.isnan(n.loc["part-03", "filler"])
    with pytest.raises(KeyError):
        normalise_by(means, "fcfs")


def _tidy(rows):
    """Tidy table from (scope, policy, [waiting times s], [runtimes s])."""
    out = []
    for scope, policy, waits, runs in rows:
        for i, (w, r) in enumerate(zip(waits, runs)):
            out.append({"scope": scope, "policy": policy, "job_id": str(i), "submission_time": 0.0,
                        "starting_time": w, "finish_time": w + r, "final_state": "COMPLETED_SUCCESSFULLY"})
    df = pd.DataFrame(out)
    m = job_metrics(df)
    m.insert(0, "policy", df.policy)
    m.insert(0, "scope", df.scope)
    return m


def test_part_means_and_summary_table():
    jobs = _tidy([("part-00", "sjf-bb", [0, 7200], [3600, 3600]), ("part-00", "filler", [3600, 7200], [3600, 3600]),
                  ("part-01", "sjf-bb", [3600, 3600], [3600, 3600]), ("part-01", "filler", [0, 3600], [3600, 3600]),
                  ("whole", "sjf-bb", [0, 3600, 7200], [600, 600, 600])])
    pm = part_means(jobs)
    f = pm.set_index(["scope", "policy"])
    assert f.loc[("part-00", "sjf-bb"), "wait_mean_h"] == 1.0
    assert f.loc[("part-00", "filler"), "wait_norm"] == 1.5     # 1.5 h / 1 h
    assert f.loc[("part-01", "filler"), "wait_norm"] == 0.5
    # bounded slowdown: part-00 sjf-bb (1, 3) → 2; filler (2, 3) → 2.5
    assert f.loc[("part-00", "filler"), "bsld_norm"] == pytest.approx(2.5 / 2)
    assert (pm[pm.policy == "sjf-bb"].wait_norm == 1).all()
    s = summary_table(jobs, {("whole", "sjf-bb"): {"cpu_utilisation": 0.5, "bb_utilisation": 0.25,
                                                   "makespan": 9000.0, "wall_time": 3.0}})
    w = s[s.scope == "whole"].iloc[0]
    assert w.jobs == 3 and w.wait_h_mean == 1.0 and w.wait_h_max == 2.0 and w["wait_h_q0.5"] == 1.0
    assert w.wait_h_ci_half == pytest.approx(4.3026527 * 1.0 / math.sqrt(3), rel=1e-6)   # t(0.975, 2), s = 1 h
    assert w.bsld_mean == pytest.approx((1 + 7 + 13) / 3)        # (w + 600) / 600
    assert (w.cpu_utilisation, w.bb_utilisation, w.makespan_s) == (0.5, 0.25, 9000.0)
    assert math.isnan(s[s.scope == "part-00"].iloc[0].cpu_utilisation)


# --- Batsim sub-job tables (docs/protocol.md) ---------------------------------------------------------------------
def test_rebuild_capture10_from_real_batsim():
    jobs = load_jobs(CAPTURE)
    assert len(jobs) == 10 and jobs.job_id.tolist() == [str(i) for i in range(15, 25)]
    assert (jobs.final_state == "COMPLETED_SUCCESSFULLY").all() and jobs.nb_subjobs.sum() == 560
    raw = pd.read_csv(CAPTURE)
    sub = raw[raw.workload_name == "w0%18"]
    j18 = jobs.set_index("job_id").loc["18"]
    assert j18.starting_time == sub.starting_time.min() and j18.finish_time == sub.finish_time.max()
    assert j18.requested_number_of_resources == 17 and len(j18.allocated_resources.split()) >= 1
    m = job_metrics(jobs)
    assert (m.waiting_time == 0).all() and (m.bounded_slowdown >= 1).all()
    # Batsim's own makespan for this run (capture10_schedule.csv) is the last end: 215852.782700 s
    assert m.finish_time.max() == pytest.approx(215852.7827, abs=1e-6)


def test_rebuild_killed_and_never_started_jobs():
    rows = [
        ("1", "w0", "1", 0.0, 4, 100.0, "REJECTED", None, None, ""),
        ("0", "w0%1", "data_staging_profile_0", 0.0, 2, 100.0, "COMPLETED_SUCCESSFULLY", 10.0, 12.0, "96 108"),
        ("1", "w0%1", "parallel_homogeneous_profile_0", 12.0, 4, 100.0, "COMPLETED_WALLTIME_REACHED", 12.0, 110.0,
         "0-3"),
        ("2", "w0", "2", 5.0, 200, 100.0, "REJECTED", None, None, ""),
    ]
    cols = ["job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
            "requested_time", "final_state", "starting_time", "finish_time", "allocated_resources"]
    df = pd.DataFrame(rows, columns=cols)
    for c in ("success", "execution_time", "waiting_time", "turnaround_time", "stretch", "consumed_energy",
              "metadata"):
        df[c] = None
    out = rebuild_original_jobs(df, {"1": 5 * 10**9})
    a, b = out.iloc[0], out.iloc[1]
    assert (a.final_state, a.starting_time, a.finish_time, a.waiting_time, a.allocated_resources) == \
        ("COMPLETED_WALLTIME_REACHED", 10.0, 110.0, 10.0, "0-3")
    assert a.bounded_slowdown == 1.0 and a.bb_per_node == 5 * 10**9     # 110 / max(100, 600) < 1
    assert b.final_state == "REJECTED" and math.isnan(b.starting_time) and b.nb_subjobs == 0
    bad = df[df.job_id != "1"].copy()
    bad = pd.concat([bad, df.iloc[[1]]])
    with pytest.raises(ValueError, match="w0!1"):
        rebuild_original_jobs(bad)


def test_metrics_command_on_batsim_capture(capsys):
    assert main(["metrics", str(CAPTURE), "--nb-compute", "96", "--total-bb", "480GB",
                 "--workload", str(CAPTURE_WL)]) == 0
    out = capsys.readouterr().out
    assert "10 original jobs rebuilt from 560 sub-jobs" in out
    assert "jobs submitted         10" in out and "completed            10" in out
    assert "span                   215852 s" in out      # 215852.78 − 1 (first submission)
    assert "burst-buffer util." in out and "n/a" not in out.split("burst-buffer util.")[1].splitlines()[0]
    assert "waiting time [h]       mean 0 ± 0 (95 % CI, n = 10)" in out


def test_metrics_command_bad_input(tmp_path, capsys):
    assert main(["metrics", str(tmp_path / "none.csv")]) == 2
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    assert main(["metrics", str(bad)]) == 2
    assert "not a Batsim jobs.csv" in capsys.readouterr().err
    assert main(["metrics", str(CAPTURE), "--total-bb", "lots"]) == 2
