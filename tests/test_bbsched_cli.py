"""BBSched from the command line: `workload transform` (Fan et al. 2019 §4.1), an end-to-end run checked for
over-allocation from its jobs.csv, and the same schedule beside a real Batsim 4.2.1 (docs/protocol.md)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from burstbuffer.cli import main
from burstbuffer.workloads.batsim_json import load_workload

ROOT = Path(__file__).resolve().parents[1]
KTH = ROOT / "workloads" / "kth-1000.json"
GB = 10**9
BATSIM = Path.home() / ".cache" / "batsim-4.2.1" / "build" / "batsim"
SO = Path.home() / ".cache" / "batsim-4.2.1" / "platforms" / "dragonfly96_sg332.so"
STORAGE = "node_0,node_9,node_18,node_27,node_36,node_45,node_54,node_63,node_72,node_81,node_90,node_99"


def first_jobs(tmp_path: Path, n: int) -> Path:
    d = json.loads(KTH.read_text())
    d["jobs"] = d["jobs"][:n]
    p = tmp_path / f"kth{n}.json"
    p.write_text(json.dumps(d))
    return p


# ---------------------------------------------------------------------------- transform
def test_transform_s2(tmp_path, capsys):
    out = tmp_path / "s2.json"
    frac = 5 / 1800
    assert main(["workload", "transform", str(KTH), "--bb-share", "0.75", "--bb-from-above", str(frac),
                 "--seed", "3", "--output", str(out)]) == 0
    w0, w = load_workload(KTH), load_workload(out)
    assert [j.id for j in w.jobs] == [j.id for j in w0.jobs] and [j.res for j in w.jobs] == [j.res for j in w0.jobs]
    threshold = int(frac * 480 * GB)
    pool = {j.res * w0.bb_of(j) for j in w0.jobs if j.res * w0.bb_of(j) > threshold}
    with_bb = [j for j in w.jobs if w.bb_of(j) > 0]
    assert len(with_bb) == 750                                     # round(0.75 × 1000)
    cap_hits = 0
    for j in with_bb:
        per = w.bb_of(j)
        cap = min(40 * GB, 40 * GB // -(-j.res // 12))
        assert per <= cap
        if per == cap:
            cap_hits += 1
        else:                                                       # total // res of a pool value
            assert any(t // j.res == per for t in pool)
    # deterministic in the seed; another seed draws other jobs
    out2 = tmp_path / "again.json"
    main(["workload", "transform", str(KTH), "--bb-share", "0.75", "--bb-from-above", str(frac), "--seed", "3",
          "--output", str(out2)])
    assert out2.read_text() == out.read_text()
    main(["workload", "transform", str(KTH), "--bb-share", "0.75", "--bb-from-above", str(frac), "--seed", "4",
          "--output", str(out2)])
    assert out2.read_text() != out.read_text()


def test_transform_bad_input(tmp_path, capsys):
    assert main(["workload", "transform", str(KTH), "--bb-share", "0", "--bb-from-above", "0.01",
                 "--output", str(tmp_path / "x.json")]) == 2
    assert main(["workload", "transform", str(KTH), "--bb-share", "0.5", "--bb-from-above", "1",
                 "--output", str(tmp_path / "x.json")]) == 2
    assert main(["workload", "transform", str(KTH), "--bb-share", "0.5", "--bb-from-above", "5",
                 "--output", str(tmp_path / "x.json")]) == 2      # a fraction of the machine's BB: in [0, 1]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and "nothing to draw from" in err[1] and "must be in [0, 1]" in err[2]


def test_window_options_are_checked(capsys):
    assert main(["run", "--policy", "sjf-bb", "--window", "5", "-q"]) == 2
    assert main(["run", "--policy", "weighted", "--generations", "5", "-q"]) == 2
    assert main(["run", "--policy", "bbsched", "--mutation-rate", "3", "-q"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 and "--window: 5: policy sjf-bb takes no option 'window'" in err[0]
    assert "--generations: 5: policy weighted takes no option 'generations'" in err[1]
    assert "--mutation-rate: '3': must be in [0, 1]" in err[2]     # the option's rule as argparse's type, at parse time


# ---------------------------------------------------------------------------- end to end
def overallocation(jobs: pd.DataFrame, nb: int = 96, cap: int = 40 * GB) -> list[str]:
    """Instants at which processors are used twice or a BB node exceeds its capacity (jobs.csv)."""
    from procset import ProcSet
    bad = []
    ok = jobs[jobs.starting_time.notna()]
    for t in sorted(set(ok.starting_time)):
        run = ok[(ok.starting_time <= t) & (ok.finish_time > t)]
        seen = ProcSet()
        bb: dict[str, int] = {}
        for _, r in run.iterrows():
            p = ProcSet.from_str(r.allocated_resources)
            if p & seen:
                bad.append(f"t={t}: processors {p & seen} twice")
            seen |= p
            for part in str(r.bb_allocation).split():
                k, v = part.split(":")
                bb[k] = bb.get(k, 0) + int(v)
        if len(seen) > nb or any(v > cap for v in bb.values()):
            bad.append(f"t={t}: over capacity")
    return bad


@pytest.mark.parametrize("policy", ["bbsched", "constrained-bb"])
def test_run_end_to_end_never_over_allocates(tmp_path, policy, capsys):
    wl = first_jobs(tmp_path, 150)
    out = tmp_path / policy
    args = ["run", "--policy", policy, "--workload", str(wl), "--output", str(out), "--model", "alloc-only",
            "--window", "10", "--starvation-bound", "20", "-q"]
    if policy == "bbsched":
        args += ["--generations", "100", "--record-gd"]
    assert main(args) == 0
    jobs = pd.read_csv(out / "jobs.csv")
    assert len(jobs) == 150 and (jobs.final_state != "").all()
    assert overallocation(jobs) == []
    dec = pd.read_csv(out / "decisions.csv")
    assert (dec.window <= 10).all() and len(dec) > 0
    if policy == "bbsched":
        ga = dec[dec.solver == "ga"]
        assert len(ga) > 0 and ga.gd.notna().all() and (ga.gd >= 0).all()


# ---------------------------------------------------------------------------- real Batsim 4.2.1
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(not (BATSIM.is_file() and SO.is_file()), reason="no real Batsim 4.2.1 binary (docs/protocol.md)")
@pytest.mark.parametrize("policy", ["bbsched", "weighted"])
def test_same_schedule_beside_real_batsim(tmp_path, policy):
    wl = first_jobs(tmp_path, 120)
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    serve = subprocess.Popen([sys.executable, "-m", "burstbuffer", "serve", "--policy", policy, "--socket",
                              f"tcp://127.0.0.1:{port}", "--bb-capacity", "40GB", "--output", str(tmp_path / "serve"),
                              "-q", "--timeout", "120"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        time.sleep(2.0)
        b = subprocess.run([str(BATSIM), "-p", str(SO), "-w", str(wl), "-e", str(tmp_path / "batsim"),
                            "-s", f"tcp://127.0.0.1:{port}", "-r", f"{STORAGE}:storage", "--enable-dynamic-jobs",
                            "--enable-profile-reuse"], capture_output=True, timeout=300)
        assert b.returncode == 0, b.stderr[-2000:]
        assert serve.wait(timeout=120) == 0
    finally:
        if serve.poll() is None:
            serve.kill()
    assert main(["run", "--policy", policy, "--workload", str(wl), "--output", str(tmp_path / "run"), "-q"]) == 0
    cols = ["job_id", "starting_time", "finish_time", "allocated_resources", "bb_allocation", "final_state"]
    real = pd.read_csv(tmp_path / "serve" / "jobs.csv")[cols]
    ours = pd.read_csv(tmp_path / "run" / "jobs.csv")[cols]
    assert len(real) == len(ours) == 120
    m = real.merge(ours, on="job_id", suffixes=("_real", "_ours"))
    assert np.allclose(m.starting_time_real, m.starting_time_ours, atol=1e-6)
    assert np.allclose(m.finish_time_real, m.finish_time_ours, atol=1e-6)
    assert (m.allocated_resources_real == m.allocated_resources_ours).all()
    assert (m.bb_allocation_real == m.bb_allocation_ours).all()
