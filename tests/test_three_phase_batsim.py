"""The three-phase job model and cerberus beside a real Batsim 4.2.1 (docs/io-model.md §3): the same message
exchange and the same per-job results as the embedded simulator.

Uses the differential helpers `tests/batsim_diff.py` (skips without them, without a Batsim binary —
$BATSIM_BIN, else ~/.cache/batsim-4.2.1/build/batsim — or without its Dragonfly platform plugin)."""
from __future__ import annotations

import csv
import io

import pytest

from burstbuffer.schedulers import registry

B = pytest.importorskip("tests.batsim_diff", reason="the differential helpers tests/batsim_diff.py are absent")
BATSIM, PLUGIN = B.find_batsim(), B.find_dragonfly_plugin()
pytestmark = [pytest.mark.batsim,   # test tier (setup.cfg markers; docs/testing.md)
              pytest.mark.skipif(BATSIM is None or PLUGIN is None,
                                reason="no real Batsim 4.2.1 binary or Dragonfly plugin (build them with "
                                       "../shared/batsim-4.2.1/build/build-batsim.sh)")]


#: the tutorial policy (docs/writing-a-policy.md), a user's policy on the public API: staged like the built-ins
TUTORIAL = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "examples" / "bb_capped_backfill.py") + ":BBCappedBackfill"


#: Cerberus with one BB amount per job (the project's form; the default, as written, decides the stage-outs: the
#: model waits for the policy's StageOut)
ONE = ["--policy-option", "phases=one"]


#: (policy, first N KTH jobs): the three-phase policies (cerberus: as written, its default) and cerberus with one
#: amount on 100 jobs, then every other built-in policy (the registry's) and the tutorial's on 30
CASES = ([("cerberus", 100), ("cerberus-one", 100), ("slurm-bb", 100)]
         + [(p, 30) for p in registry.any_model_names()] + [("tutorial", 30)])


@pytest.mark.parametrize("policy,n", CASES)
def test_three_phase_same_as_real_batsim(tmp_path, policy, n):
    options = []
    if policy == "tutorial":
        policy = TUTORIAL
    elif policy == "cerberus-one":
        policy, options = "cerberus", ONE
    wl = B.kth_subset(tmp_path / "kth.json", n)
    extra = ["-r", B.STORAGE + ":storage", "--enable-dynamic-jobs", "--enable-profile-reuse"]
    cmd = B.serve_cmd(policy, "three-phase", wl) + options
    real = B.run_one(tmp_path, "real", B.real_cmd(BATSIM, PLUGIN, wl, extra), cmd)
    emb = B.run_one(tmp_path, "embedded", B.embedded_cmd(B.DRAGONFLY_XML, wl, extra), cmd)
    assert real.returncode == 0, real.stderr[-2000:]
    assert emb.returncode == 0, emb.stderr[-2000:]
    assert B.compare_exchanges(real, emb, platform_free=True) == []
    assert B.sched_jobs(real) == B.sched_jobs(emb)
    rows = list(csv.DictReader(io.StringIO(B.sched_jobs(real).decode())))
    assert len(rows) == n and all(r["final_state"].startswith("COMPLETED") for r in rows)
