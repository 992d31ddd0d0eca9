"""The simulator's network models (docs/io-model.md §5; burstbuffer.simulator.network): the exact
all-to-all of Batsim, the opt-in rings with n flows instead of n(n-1), and the opt-in uncontended model
(phases timed alone on the network, no flows)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from burstbuffer.simulator.network import NETWORK_MODELS, homogeneous_bytes

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)


def rows_cols(m: list[float], n: int) -> tuple[list[float], list[float]]:
    return ([sum(m[i * n:(i + 1) * n]) for i in range(n)], [sum(m[j::n]) for j in range(n)])


def test_exact_is_batsims_matrix():
    assert homogeneous_bytes(3, 5.0) == [0, 5, 5, 5, 0, 5, 5, 5, 0]
    assert homogeneous_bytes(4, 0.0) == [] and homogeneous_bytes(4, 0.0, "ring") == []
    assert NETWORK_MODELS[0] == "exact"


def test_ring_small_case():
    # host k sends its whole all-to-all volume, 2 x 5 bytes, to host k+1 (mod 3)
    assert homogeneous_bytes(3, 5.0, "ring") == [0, 10, 0, 0, 0, 10, 10, 0, 0]


@settings(deadline=None)   # pure arithmetic: hypothesis' 200 ms per example failed only on a loaded machine
@given(st.integers(1, 40), st.floats(1.0, 1e9), st.sampled_from(["ring", "random-ring"]))
def test_rings_keep_every_hosts_volume_with_n_flows(n, com, model):
    exact, ring = homogeneous_bytes(n, com), homogeneous_bytes(n, com, model)
    assert len(exact) == len(ring) == n * n
    (sent_r, recv_r), (sent_e, recv_e) = rows_cols(ring, n), rows_cols(exact, n)
    assert sent_r == pytest.approx(sent_e) and recv_r == pytest.approx(recv_e)   # bytes per host
    assert sum(x > 0 for x in ring) == (0 if n == 1 else 2 if n == 2 else n)
    assert all(ring[k * n + k] == 0 for k in range(n))
    if n <= 2:
        assert ring == exact
    # one cycle through every host: following the flows from host 0 visits all n hosts
    nxt = {k // n: k % n for k, x in enumerate(ring) if x > 0}
    seen, h = set(), 0
    while n > 1 and h not in seen:
        seen.add(h)
        h = nxt[h]
    assert n == 1 or len(seen) == n
    assert homogeneous_bytes(n, com, model) == ring          # the same in every call (seeded by n)


def test_random_ring_spreads_destinations():
    """Over many hosts the random ring's flows leave a block of hosts as the all-to-all's bytes do: the first
    half of 400 hosts sends about half of its flows to the second half."""
    n = 400
    ring = homogeneous_bytes(n, 1.0, "random-ring")
    cross = sum(1 for k, x in enumerate(ring) if x > 0 and (k // n < n // 2) != (k % n < n // 2))
    assert 0.4 * n / 2 <= cross / 2 <= 0.6 * n / 2
    near = homogeneous_bytes(n, 1.0, "ring")
    assert sum(1 for k, x in enumerate(near) if x > 0 and (k // n < n // 2) != (k % n < n // 2)) == 2


def test_unknown_model():
    with pytest.raises(ValueError, match="unknown network model 'star'"):
        homogeneous_bytes(5, 1.0, "star")


# ------------------------------------------------------------------------ runs: exact unchanged, ring bounded

def _run(tmp_path, workload, model, alloc_only=False):
    from burstbuffer.runner import run
    from .conftest import PLATFORM
    out = tmp_path / model
    run("sjf-bb", workload, PLATFORM, out, model="alloc-only" if alloc_only else "io-aware", progress=False,
        timeout=300, cpu=None, network_model=model)
    import pandas as pd
    return pd.read_csv(out / "jobs.csv"), out


@pytest.mark.parametrize("model", ["ring", "random-ring", "uncontended"])
def test_ring_deviation_bounded_on_the_paper_platform(tmp_path, kth_subset, model):
    """60 KTH jobs on the paper's 108-node Dragonfly, io-aware, sjf-bb: the ring models end every job in the
    same state and keep the schedule close to the exact model's. Bounds (docs/io-model.md §5, where the
    measured deviations are): mean waiting time within 2 %, the median job's finish time within 1 % of its
    exact turnaround, the makespan within 1 %."""
    w = kth_subset(60)
    exact, out_e = _run(tmp_path, w, "exact")
    ring, out_r = _run(tmp_path, w, model)
    assert list(exact.job_id) == list(ring.job_id)
    assert (exact.final_state == ring.final_state).all()
    m = exact.merge(ring, on="job_id", suffixes=("_e", "_r"))
    wide = m[m.requested_number_of_resources_e > 2]
    assert len(wide) >= 10          # jobs on which the two models differ
    we, wr = exact.waiting_time.mean(), ring.waiting_time.mean()
    assert abs(wr - we) <= 0.02 * we
    rel = (m.finish_time_r - m.finish_time_e).abs() / m.turnaround_time_e.clip(lower=1.0)
    assert (rel > 0).any()          # the option reached the simulator
    print(f"{model}: mean wait {we:.1f} -> {wr:.1f} s, finish rel. median {rel.median():.5f}, p90 "
          f"{rel.quantile(.9):.4f}, max {rel.max():.3f}; makespan {exact.finish_time.max():.0f} -> "
          f"{ring.finish_time.max():.0f}")
    assert rel.median() <= 0.01
    assert abs(ring.finish_time.max() - exact.finish_time.max()) <= 0.01 * exact.finish_time.max()
    # the simulator's own outputs differ only where the ring changed a duration: same job set
    assert (out_e / "batsim_jobs.csv").read_text().count("\n") == (out_r / "batsim_jobs.csv").read_text().count("\n")


def test_cli_run_takes_the_network_model(tmp_path, kth_subset):
    """`burstbuffer run --network-model ring` runs; an unknown model is an argparse error (exit 2)."""
    import subprocess
    import sys
    from .conftest import ROOT
    w = kth_subset(5)
    base = [sys.executable, "-m", "burstbuffer", "run", "--workload", str(w), "-q", "--cpu", "off"]
    ok = subprocess.run(base + ["--network-model", "ring", "--output", str(tmp_path / "o")], cwd=ROOT,
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert len((tmp_path / "o" / "jobs.csv").read_text().splitlines()) == 6
    bad = subprocess.run(base + ["--network-model", "star"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "invalid choice: 'star'" in bad.stderr


# ------------------------------------------------------------------- uncontended: phases timed alone

def test_uncontended_seconds_is_l07_alone():
    """latency + max(computation, transfer): the larger one bounds the phase (ptask_L07 alone)."""
    from burstbuffer.simulator.network import uncontended_seconds
    assert uncontended_seconds(10.0, [2.0, 5.0], 0.5, 3.0) == 5.5        # the slower host computes 5 s
    assert uncontended_seconds(10.0, [2.0, 5.0], 0.5, 8.0) == 8.5        # the transfer bounds it
    assert uncontended_seconds(0.0, [0.0], 0.0, 1.0) == 1.0              # communication only
    with pytest.raises(ValueError, match="no speed"):
        uncontended_seconds(1.0, [0.0, 1.0], 0.0, 0.0)
    assert homogeneous_bytes(5, 3.0, "uncontended") == []                # no flows at all


def test_uncontended_equals_exact_for_a_job_alone_on_its_router(tmp_path):
    """Jobs one at a time on the nodes of one router of the paper's platform (alloc-only, so the phase is
    the job's parallel_homogeneous profile): every route is the two hosts' own links, which carry (n-1)
    x com each way in the all-to-all and in the ring alike, so the uncontended duration is exact's, for a
    transfer-bound job (2 and 3 nodes) and a computation-bound one. A wrong latency, bandwidth or
    direction of a link would move these execution times."""
    import json

    import pandas as pd
    from burstbuffer.runner import run
    from .conftest import PLATFORM
    jobs = [(2, 0.0, 4e9), (3, 1e9, 5e9), (3, 2e12, 1e6), (2, 1e11, 2e9)]   # (nodes, flops, bytes per pair)
    w = {"nb_res": 96, "jobs": [{"id": k, "subtime": 10_000 * k, "walltime": 9_000, "res": n, "profile": str(k)}
                                for k, (n, _, _) in enumerate(jobs)],
         "profiles": {str(k): {"type": "parallel_homogeneous", "cpu": c, "com": b}
                      for k, (_, c, b) in enumerate(jobs)}}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(w))
    times = {}
    for model in ("exact", "uncontended"):
        run("fcfs", path, PLATFORM, tmp_path / model, model="alloc-only", progress=False, timeout=120, cpu=None,
            network_model=model)
        df = pd.read_csv(tmp_path / model / "jobs.csv").sort_values("job_id")
        assert (df.allocated_resources.str.split("-").str[0].astype(int) == 0).all()   # on nodes 0.. (router 0)
        times[model] = df.execution_time.to_numpy()
    print(times)
    assert times["exact"] == pytest.approx(times["uncontended"], rel=1e-9)
    # the transfer bounds job 0 (3.2 s for 4e9 bytes at 1.25 GB/s), the computation job 2 (2000 s at 1 Gflop/s)
    assert times["exact"][0] == pytest.approx(3.2, abs=0.01) and times["exact"][2] == pytest.approx(2000, abs=0.01)
