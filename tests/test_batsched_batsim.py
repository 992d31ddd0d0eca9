"""batsched 1.4.0 (Batsim's C++ reference schedulers) beside a real Batsim 4.2.1 and the embedded simulator:
every message both ways (tests/batsim_diff.py's proxy) and the outputs, cell for cell with ``-E``
(tests/energy_diff.py).

The energy algorithms get tests/data/energy4.xml's energy model as their options (pstate 0 computes at 95 W
idle, 200 W loaded; pstate 2 sleeps at 10 W; switching off takes 2 s at 120 W, on 5 s at 150 W). Two
algorithms registered by batsched 1.4.0 are not run: `energy_watcher` reads members its constructor leaves
uninitialised at its first decision and aborts (under the real Batsim as well), and `energy_bf_monitoring`
asks to be called back every monitoring period forever, so no simulation ends.

Skips when the real Batsim ($BATSIM_BIN, else ~/.cache/batsim-4.2.1/build/batsim) or batsched ($BATSCHED_BIN,
else ~/.cache/batsched-1.4.0/build/batsched; tests/batsched/build-batsched.sh builds it from batsched's
sources) is absent, and the ``-E`` tests when the simulator's energy module cannot be built.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from . import batsim_diff as B
from .energy_diff import compare_energy_outputs, energy_platform

BATSIM = B.find_batsim()
DEFAULT_BATSCHED = Path.home() / ".cache" / "batsched-1.4.0" / "build" / "batsched"


def find_batsched() -> str | None:
    """The batsched 1.4.0 binary: $BATSCHED_BIN, else ~/.cache/batsched-1.4.0/build/batsched; None if absent."""
    p = os.environ.get("BATSCHED_BIN") or str(DEFAULT_BATSCHED)
    return p if os.path.isfile(p) and os.access(p, os.X_OK) else None


BATSCHED = find_batsched()
pytestmark = [pytest.mark.batsim,
              pytest.mark.skipif(BATSIM is None, reason="no real Batsim 4.2.1 binary (set BATSIM_BIN)"),
              pytest.mark.skipif(BATSCHED is None, reason="no batsched 1.4.0 binary (set BATSCHED_BIN, or build it "
                                 "with tests/batsched/build-batsched.sh)")]

DATA = B.REPO / "tests" / "data"
# tests/data/energy4.xml's energy model, in batsched's terms (energy_bf.cpp's options)
ENERGY_MODEL = {"power_compute": 200, "power_idle": 95, "power_sleep": 10, "pstate_compute": 0, "pstate_sleep": 2,
                "time_switch_on": 5, "time_switch_off": 2, "energy_switch_on": 750, "energy_switch_off": 240}
# The algorithms' own options (energy_bf_dicho.cpp, energy_bf_monitoring_*.cpp,
# energy_bf_machine_subpart_sleeper.cpp)
EXTRA = {"energy_bf_dicho": {"tolerated_slowdown_loss_ratio": 0.5},
         "energy_bf_idle_sleeper": {"monitoring_period": 10, "idle_time_to_sedate": 10},
         "energy_bf_monitoring_inertial": {"monitoring_period": 10},
         "energy_bf_subpart_sleeper": {"monitoring_period": 10, "fraction_of_machines_to_let_awake": 0.5}}
ENERGY_ALGOS = ("energy_bf", "energy_bf_dicho", "energy_bf_idle_sleeper", "energy_bf_monitoring_inertial",
                "energy_bf_subpart_sleeper", "sleeper")
# Algorithms whose reply to the t=0 submission changes machine states: see test_energy_algorithm's docstring.
SWITCH_AT_ZERO = {"energy_bf_idle_sleeper", "energy_bf_monitoring_inertial", "energy_bf_subpart_sleeper",
                  "energy_bf_dicho"}


@pytest.fixture(scope="module")
def energy_module():
    from burstbuffer.cbuild import NativeUnavailable
    from burstbuffer.simulator import energy
    try:
        energy.load_native()
    except (NativeUnavailable, OSError) as exc:
        pytest.skip(f"the simulator's energy module cannot be built: {exc}")


def batsched_cmd(tmp: Path, algo: str, options: dict | None = None) -> list[str]:
    """batsched's command line (`{endpoint}`: where it binds), its options written to tmp/ALGO.json."""
    path = tmp / f"{algo}.json"
    path.write_text(json.dumps(dict(options or {}, output_dir=str(tmp), trace_output_filename="llh.trace")))
    return [BATSCHED, "-v", algo, "-s", "{endpoint}", "--variant_options_filepath", str(path), "--verbosity", "quiet"]


def _energy_pair(tmp_path, algo, platform, workload):
    sched = batsched_cmd(tmp_path, algo, dict(ENERGY_MODEL, **EXTRA.get(algo, {})))
    real = B.run_one(tmp_path, "real", B.real_cmd(BATSIM, platform, workload, ["-E"]), sched)
    emb = B.run_one(tmp_path, "embedded", B.embedded_cmd(platform, workload, ["-E"]), sched)
    assert real.returncode == 0, real.stderr[-2000:]
    assert emb.returncode == 0, emb.stderr[-2000:]
    return real, emb


def _count(run, kind: str) -> int:
    return sum(1 for _, m in run.messages for e in m["events"] if e["type"] == kind)


@pytest.mark.parametrize("algo", ENERGY_ALGOS)
def test_energy_algorithm(tmp_path, energy_module, algo):
    """The 9 jobs of tests/data/energy-jobs.json on energy4.xml: every message identical, `_jobs.csv`
    identical (consumed_energy included). With the algorithms whose reply to the t=0 submission changes
    machine states (SWITCH_AT_ZERO: switch-offs of idle machines, or job starts), the embedded simulator handles
    that reply's events 1e-10 s earlier than Batsim (there two 1-byte messages on the master's loopback share
    it at once), so the first rows of `_machine_states.csv` / `_pstate_changes.csv` are 1e-10 s apart
    (printed 4e-10 vs 3e-10) and switch-offs started then draw their watts 1e-10 s longer: the platform's
    energy sums move by about 1e-8 J and the sixth decimal of a few printed totals flips (bound 2e-6 J);
    every job's energy is identical. The others: every output cell identical."""
    real, emb = _energy_pair(tmp_path, algo, DATA / "energy4.xml", DATA / "energy-jobs.json")
    assert B.compare_exchanges(real, emb) == []
    assert B.compare_jobs(real, emb) == []
    assert [r["consumed_energy"] for r in real.jobs] == [r["consumed_energy"] for r in emb.jobs]
    assert len(real.jobs) == 9
    if algo in SWITCH_AT_ZERO:
        assert compare_energy_outputs(real.prefix, emb.prefix, energy_tol=2e-6, time_tol=1e-9) == []
    else:
        assert compare_energy_outputs(real.prefix, emb.prefix) == []
    if algo != "energy_bf_dicho":  # dicho only ever chooses DVFS-free schedules here: no switch at all
        assert _count(real, "RESOURCE_STATE_CHANGED") >= 2


def _kth_cut(tmp: Path, n_hosts: int, n: int) -> Path:
    """The first `n` KTH jobs that fit `n_hosts`, submissions shifted to start at 0."""
    w = json.loads((B.REPO / "workloads" / "kth-1000.json").read_text())
    jobs = [j for j in w["jobs"][:400] if j["res"] <= n_hosts][:n]
    t0 = jobs[0]["subtime"]
    jobs = [dict(j, subtime=j["subtime"] - t0) for j in jobs]
    path = tmp / f"kth{n}.json"
    path.write_text(json.dumps({"nb_res": n_hosts, "jobs": jobs,
                                "profiles": {j["profile"]: w["profiles"][j["profile"]] for j in jobs}}))
    return path


# (job energy, platform total) bounds [J] on 16 hosts; see the test's docstring
KTH16_TOL = {"energy_bf": (2e-6, 1e-5), "sleeper": (2e-6, 1e-5), "energy_bf_idle_sleeper": (2e-4, 5e-4)}


@pytest.mark.slow
@pytest.mark.parametrize("algo", sorted(KTH16_TOL))
def test_energy_algorithm_kth_on_16_hosts(tmp_path, energy_module, algo):
    """100 KTH jobs on 16 energy4-like hosts: every message identical, `_jobs.csv` identical but
    consumed_energy, machine states and pstate changes identical but for test_energy_algorithm's 1e-10 s at
    t=0. Energies agree to rounding, within KTH16_TOL: a job's (up to ~2e8 J) and the platform's totals
    (~5e8 J) in `_consumed_energy.csv` and `_schedule.csv`; `_consumed_energy.csv`'s epower within 0.01 W
    where two rows are 2e-5 s apart (a job end and the next start, one link latency; a quotient of energy
    differences of a few ulps over 2e-5 s, seen 1520.000928 vs 1519.999118 W); `_schedule.csv`'s time_*
    sums within 1e-5 s. energy_bf and sleeper: the last printed digit of some figures (2e-6 J).
    energy_bf_idle_sleeper (called back every 10 s over ~2.7e5 s of simulated time): up to 1.0e-4 J on a
    job and 1.7e-4 J on a total, at most 1.5e-12 relative — SimGrid's energy plugin adds power x elapsed
    time at every update of a host, and the two simulators update the hosts' energy at different instants
    over the run (each update rounds the host's running sum, ~1e8 J, to its ulp); the protocol's figures
    and every decision are unaffected."""
    job_tol, total_tol = KTH16_TOL[algo]
    plat = energy_platform(tmp_path / "energy16.xml", 16)
    real, emb = _energy_pair(tmp_path, algo, plat, _kth_cut(tmp_path, 16, 100))
    assert B.compare_exchanges(real, emb) == []
    assert B.compare_jobs(real, emb) == []
    assert len(real.jobs) == 100
    ea, eb = ([float(r["consumed_energy"]) for r in run.jobs] for run in (real, emb))
    assert max(abs(x - y) for x, y in zip(ea, eb)) <= job_tol
    rest = [d for d in compare_energy_outputs(real.prefix, emb.prefix, 50, energy_tol=total_tol, time_tol=1e-9,
                                              epower_tol=0.01) if not d.startswith(("_jobs.csv", "_schedule.csv"))]
    assert rest == []
    sa, sb = (dict(zip(*B.csv.reader(open(run.prefix + "_schedule.csv")))) for run in (real, emb))
    for k in ("consumed_joules", "time_computing", "time_idle", "time_sleeping", "time_switching_off",
              "time_switching_on"):
        assert abs(float(sa[k]) - float(sb[k])) <= (total_tol if k == "consumed_joules" else 1e-5), k
    for k in ("nb_machine_switches", "nb_grouped_switches", "nb_jobs", "nb_jobs_success", "makespan"):
        assert sa[k] == sb[k], k


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["easy_bf", "conservative_bf", "filler", "fcfs_fast", "easy_bf_fast", "fcfs"])
def test_batsched_kth300(tmp_path, algo):
    """batsched's non-energy algorithms on 300 KTH jobs on the 96-host cluster: every message identical."""
    wl = B.kth_subset(tmp_path / "kth300.json", 300)
    real = B.run_one(tmp_path, "real", B.real_cmd(BATSIM, B.CLUSTER, wl), batsched_cmd(tmp_path, algo))
    emb = B.run_one(tmp_path, "embedded", B.embedded_cmd(B.CLUSTER, wl), batsched_cmd(tmp_path, algo))
    assert real.returncode == 0 and emb.returncode == 0, (real.stderr[-1000:], emb.stderr[-1000:])
    assert B.compare_exchanges(real, emb) == []
    assert B.compare_jobs(real, emb) == []
    assert len(real.jobs) == 300
