"""`burstbuffer plot` / `run --plot`: the run figure's panels and series, checked on a small real run."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from procset import ProcSet

from burstbuffer.cli import main
from burstbuffer.metrics.figures import KILLED_STATES, plt
from burstbuffer.metrics.runplot import binned_mean, load_run, run_figure, step_function
from burstbuffer.runner import DEFAULT_WORKLOAD

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

N_JOBS = 150   # the first 150 bundled jobs: some are killed at their walltime in the io-aware model


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plot")
    data = json.loads(DEFAULT_WORKLOAD.read_text())
    data["jobs"] = data["jobs"][:N_JOBS]
    (tmp / "w.json").write_text(json.dumps(data))
    out = tmp / "run"
    assert main(["run", "--policy", "fcfs-easy", "--workload", str(tmp / "w.json"), "--output", str(out),
                 "-q", "--plot"]) == 0
    return out


def started(run_dir):
    j = pd.read_csv(run_dir / "jobs.csv", dtype={"allocated_resources": str, "bb_allocation": str})
    return j[j["starting_time"].notna() & j["finish_time"].notna()]


def value_at(times, values, t):
    k = np.searchsorted(times, t, side="right") - 1
    return values[k] if k >= 0 else 0.0


def test_run_plot_writes_png_and_svg_and_prints_wait_reasons(run_dir, capsys):
    for ext in ("png", "svg"):
        assert (run_dir / "figures" / f"run.{ext}").stat().st_size > 10_000
    assert main(["plot", str(run_dir), "--output", str(run_dir / "again")]) == 0
    assert (run_dir / "again" / "run.svg").read_text().lstrip().startswith("<?xml")
    assert "wrote" in capsys.readouterr().out


def test_gantt_bars_killed_jobs_and_processor_axis(run_dir):
    s = started(run_dir)
    fig, ax = run_figure(load_run(run_dir))
    g = ax["gantt"]
    bars = [c for c in g.collections if c.get_gid() == "jobs"][0]
    killed = [c for c in g.collections if c.get_gid() == "killed jobs"][0]
    intervals = [iv for a in s["allocated_resources"] for iv in ProcSet.from_str(a).intervals()]
    assert len(bars.get_paths()) == len(intervals) and len(s) == N_JOBS
    k = s[s["final_state"].isin(KILLED_STATES)]
    assert len(k) > 0
    assert len(killed.get_paths()) == sum(len(list(ProcSet.from_str(a).intervals())) for a in k["allocated_resources"])
    assert g.get_ylim() == (0, 96)                     # the 96 processors of the bundled platform
    # every bar spans its job's processors and its start → end [h]
    xs = sorted((round(p.vertices[:, 0].min() * 3600, 3), int(p.vertices[:, 1].min()), int(p.vertices[:, 1].max()))
                for p in bars.get_paths())
    want = sorted((round(a, 3), lo, hi + 1) for a, al in zip(s["starting_time"], s["allocated_resources"])
                  for lo, hi in ProcSet.from_str(al).intervals())
    assert xs == want
    plt.close(fig)


def test_bb_lines_per_storage_node_and_utilisation(run_dir):
    s = started(run_dir)
    meta = json.loads((run_dir / "run.json").read_text())
    fig, ax = run_figure(load_run(run_dir))
    lines = {ln.get_gid(): ln for ln in ax["bb"].get_lines() if (ln.get_gid() or "").startswith("bb ")}
    assert sorted(lines) == sorted(f"bb {k}" for k in meta["bb_capacity"])        # one line per storage node
    assert len(lines) == 12
    # at each job's mid-run time, a node's line = Σ of the bytes the running jobs hold on it [GB]
    alloc = [(a, b, dict((int(x.split(":")[0]), int(x.split(":")[1])) for x in str(al).split()))
             for a, b, al in zip(s["starting_time"], s["finish_time"], s["bb_allocation"].fillna(""))]
    for t in [(a + b) / 2 for a, b, _ in alloc[::10]]:
        for node in meta["bb_capacity"]:
            ln = lines[f"bb {node}"]
            x, y = np.asarray(ln.get_xdata()) * 3600, np.asarray(ln.get_ydata())
            want = sum(d.get(int(node), 0) for a, b, d in alloc if a <= t < b) * 1e-9
            assert value_at(x, y, t) == pytest.approx(want, abs=1e-9)
            assert y.max() <= meta["bb_capacity"][node] * 1e-9 + 1e-9
    # processor utilisation: its time integral = Σ res × runtime / 96 processors
    proc = [ln for ln in ax["utilisation"].get_lines() if ln.get_gid() == "processors"][0]
    x, y = np.asarray(proc.get_xdata()) * 3600, np.asarray(proc.get_ydata())
    area = float(np.sum(y[:-1] * np.diff(x))) / 100
    assert area == pytest.approx(float((s["requested_number_of_resources"] * (s["finish_time"] - s["starting_time"])).sum()) / 96)
    # queue: +1 at submission, −1 at start
    q = [ln for ln in ax["queue"].get_lines() if ln.get_gid() == "queue"][0]
    x, y = np.asarray(q.get_xdata()) * 3600, np.asarray(q.get_ydata())
    for t in np.linspace(s["submission_time"].min(), s["finish_time"].max(), 97):
        want = int(((s["submission_time"] <= t) & (s["starting_time"] > t)).sum())
        assert value_at(x, y, t) == want
    plt.close(fig)


def test_heat_map_above_the_job_limit(run_dir):
    """Above max_jobs the Gantt panel is a busy-fraction image whose mean is the processor utilisation."""
    s = started(run_dir)
    fig, ax = run_figure(load_run(run_dir), max_jobs=10)
    im = [i for i in ax["gantt"].get_images() if i.get_gid() == "busy fraction"][0]
    grid = np.asarray(im.get_array())
    assert grid.shape == (96, 1200)
    t0 = min(s["submission_time"].min(), s["starting_time"].min())
    busy = float((s["requested_number_of_resources"] * (s["finish_time"] - s["starting_time"])).sum())
    assert grid.mean() == pytest.approx(busy / (96 * (s["finish_time"].max() - t0)), rel=1e-9)
    ticks = [c for c in ax["gantt"].collections if c.get_gid() == "killed jobs"][0]
    assert len(ticks.get_offsets()) == int(s["final_state"].isin(KILLED_STATES).sum())
    plt.close(fig)


def test_step_function_and_binned_mean():
    t, v = step_function([0, 1, 1], [2, 3, 4], [1, 2, 3])
    assert t.tolist() == [0, 1, 2, 3, 4] and v.tolist() == [1, 6, 5, 3, 0]
    assert binned_mean(t, v, np.array([0.0, 1.0, 2.0, 4.0, 5.0])).tolist() == [1, 6, 4, 0]
    assert binned_mean(t, v, np.array([-1.0, 0.5])).tolist() == [pytest.approx(1 / 3)]


def test_matches_evalys(run_dir):
    """Batsim's own analysis library reads our jobs.csv and finds the same processor load."""
    evalys = pytest.importorskip("evalys.jobset")
    js = evalys.JobSet.from_csv(str(run_dir / "jobs.csv"))
    s = started(run_dir)
    t, v = step_function(s["starting_time"], s["finish_time"], s["requested_number_of_resources"])
    u = js.utilisation
    times, loads = u.index.to_numpy(float), u["load"].to_numpy()
    assert len(times) > 100
    # evalys holds load[k] on [times[k], times[k+1]) (its times are start + execution, rounded): compare mid-way
    for a, b, load in zip(times[:-1], times[1:], loads[:-1]):
        if b - a > 1e-3:
            assert value_at(t, v, (a + b) / 2) == load


def test_plot_bad_folder_is_one_line_error(tmp_path, capsys):
    assert main(["plot", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"burstbuffer: {tmp_path}: jobs.csv: no jobs.csv nor PREFIX_jobs.csv: not a run or Batsim "
                   "output folder")


DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("given, name, n_jobs", [
    (DATA / "batsim-4.2.1" / "outputs" / "walltime", "walltime", 44),           # a Batsim 4.2.1 export prefix
    (DATA / "evalys-medium_late-easy", "out", 801),                              # a Batsim 1.x output folder
    (DATA / "batsim-layouts" / "evalys-tests-batsim_out_jobs.csv", "evalys-tests-batsim_out", 100),  # 1.x file
])
def test_plot_batsim_outputs_without_bb_panel(tmp_path, capsys, given, name, n_jobs):
    """`plot` on Batsim's own outputs (a prefix, a folder with one PREFIX_jobs.csv, a pre-3.0 table without
    final_state): the figure is named after the prefix, has no BB panel (no BB in the table), and its Gantt
    panel draws every started job's allocation: one rectangle per job and contiguous range of processors."""
    from burstbuffer.metrics.runplot import load_run, run_figure
    assert main(["plot", str(given), "--output", str(tmp_path)]) == 0
    assert (tmp_path / f"{name}.png").is_file() and (tmp_path / f"{name}.svg").is_file()
    run = load_run(given)
    assert len(run.jobs) == n_jobs and not run.has_bb
    fig, ax = run_figure(run)
    assert set(ax) == {"gantt", "queue", "utilisation"}
    s = run.started
    ranges = sum(len(list(ProcSet.from_str(a).intervals())) for a in s["allocated_resources"])
    bars = [c for c in ax["gantt"].collections if c.get_gid() == "jobs"][0]
    assert len(bars.get_paths()) == ranges
    # Batsim's PREFIX_machine_states.csv beside the table: the share of machines computing, as Batsim counted it
    lines = [ln for ln in ax["utilisation"].get_lines() if ln.get_gid() == "machines computing"]
    assert len(lines) == (run.machine_states is not None) == (name != "evalys-tests-batsim_out")
    if lines:
        ms = run.machine_states
        total = ms[["nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle", "nb_computing"]].sum(axis=1)
        want = (100 * ms["nb_computing"] / total).to_numpy()
        assert np.allclose(lines[0].get_ydata()[1:-1], want) and set(total) == {4 if name == "walltime" else 32}
    plt.close(fig)


def test_plot_folder_with_several_prefixes_names_them(tmp_path, capsys):
    for n in ("a", "b"):
        (tmp_path / f"{n}_jobs.csv").write_text((DATA / "batsim-4.2.1" / "outputs" / "walltime_jobs.csv").read_text())
    assert main(["plot", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "several (a_jobs.csv, b_jobs.csv)" in err[0]
