"""User policies (docs/writing-a-policy.md): the tutorial's policy run end to end through `burstbuffer run
--policy FILE.py:CLASS`, `MODULE:CLASS` specs, the ``burstbuffer.policies`` entry-point group, `burstbuffer
policies`, and one-line errors (exit 2) for every bad spec on run, serve and reproduce."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
from collections import defaultdict

import pytest
from procset import ProcSet

from .sim_sched import REPO

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

EXAMPLE = "examples/bb_capped_backfill.py:BBCappedBackfill"
TOTAL_BB = 12 * 40 * 10 ** 9       # platforms/dragonfly96.xml: 12 BB nodes of 40 GB
CAPACITY = 40 * 10 ** 9


def _cli(*args, env_path=(), cwd=REPO, timeout=300):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), *map(str, env_path)]))
    return subprocess.run([sys.executable, "-m", "burstbuffer", *args], cwd=str(cwd), env=env,
                          capture_output=True, text=True, timeout=timeout)


def _first_jobs(tmp_path, n):
    w = json.loads((REPO / "workloads" / "kth-1000.json").read_text())
    w["jobs"] = w["jobs"][:n]
    p = tmp_path / f"kth{n}.json"
    p.write_text(json.dumps(w))
    return p


def _jobs(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _no_over_allocation(rows):
    """No processor held by two jobs at once, no BB node above its capacity at any time."""
    ran = [r for r in rows if r["starting_time"]]
    events = []
    for r in ran:
        s, e = float(r["starting_time"]), float(r["finish_time"])
        bb = {int(k): int(v) for k, v in (x.split(":") for x in r["bb_allocation"].split())}
        events += [(s, 1, ProcSet.from_str(r["allocated_resources"]), bb), (e, 0, ProcSet.from_str(r["allocated_resources"]), bb)]
    busy, used = ProcSet(), defaultdict(int)
    for t, kind, procs, bb in sorted(events, key=lambda x: (x[0], x[1])):   # ends before starts at one time
        if kind == 0:
            busy -= procs
            for k, v in bb.items():
                used[k] -= v
        else:
            assert not (busy & procs), f"processors {busy & procs} allocated twice at t={t}"
            busy |= procs
            for k, v in bb.items():
                used[k] += v
                assert used[k] <= CAPACITY, f"BB node {k} over capacity at t={t}"


def _bb_in_use_max(rows):
    ev = []
    for r in rows:
        if r["starting_time"]:
            b = int(r["bb_per_node"]) * int(r["requested_number_of_resources"])
            ev += [(float(r["starting_time"]), 1, b), (float(r["finish_time"]), 0, -b)]
    cur = peak = 0
    for _, _, b in sorted(ev):
        cur += b
        peak = max(peak, cur)
    return peak


def test_tutorial_policy_end_to_end(tmp_path):
    """The tutorial's promise: the BB in use never exceeds bb_share of the capacity, jobs asking more are
    rejected (and only those), every other job completes, and nothing is over-allocated."""
    wl = _first_jobs(tmp_path, 50)
    out = tmp_path / "out"
    share = 0.3
    r = _cli("run", "--policy", EXAMPLE, "--policy-option", f"bb_share={share}", "--workload", str(wl),
             "--output", str(out), "-q")
    assert r.returncode == 0, r.stderr
    assert "policy bb-capped" in r.stdout
    rows = _jobs(out / "jobs.csv")
    assert len(rows) == 50
    cap = share * TOTAL_BB
    asks = {r["job_id"]: int(r["bb_per_node"]) * int(r["requested_number_of_resources"]) for r in rows}
    rejected = {r["job_id"] for r in rows if r["final_state"] == "REJECTED"}
    assert rejected == {j for j, b in asks.items() if b > cap}
    assert rejected, "the cap must bite on this workload (else the test shows nothing)"
    assert all(r["final_state"] == "COMPLETED_SUCCESSFULLY" for r in rows if r["job_id"] not in rejected)
    assert _bb_in_use_max(rows) <= cap
    _no_over_allocation(rows)
    # the cap changes the schedule: without it (bb_share=1) the peak BB use is above 0.3 of the capacity
    r1 = _cli("run", "--policy", EXAMPLE, "--policy-option", "bb_share=1", "--workload", str(wl),
              "--output", str(tmp_path / "out1"), "-q")
    assert r1.returncode == 0, r1.stderr
    assert _bb_in_use_max(_jobs(tmp_path / "out1" / "jobs.csv")) > cap


POLICY_MODULE = '''
from burstbuffer.schedulers import Policy


class Greedy(Policy):
    """Start every job that fits, widest first (test policy)."""

    def __init__(self, platform, *, seed=0, reverse=True):
        super().__init__(platform, seed=seed)
        self.reverse = reverse

    def schedule(self, now, queue, profile, rng):
        out = []
        for job in sorted(queue, key=lambda j: j.res, reverse=self.reverse):
            fit = self.fit_now(job)
            if fit is not None:
                out.append(self.start(job, fit))
        return out


class NotAPolicy:
    pass
'''


@pytest.fixture
def user_pkg(tmp_path):
    """A package `userpols` on a folder, and an installed distribution offering `greedy-wide` in the
    burstbuffer.policies entry-point group (a dist-info folder, as pip writes it)."""
    site = tmp_path / "site"
    (site / "userpols").mkdir(parents=True)
    (site / "userpols" / "__init__.py").write_text("")
    (site / "userpols" / "greedy.py").write_text(POLICY_MODULE)
    di = site / "userpols-1.0.dist-info"
    di.mkdir()
    (di / "METADATA").write_text("Metadata-Version: 2.1\nName: userpols\nVersion: 1.0\n")
    (di / "entry_points.txt").write_text("[burstbuffer.policies]\ngreedy-wide = userpols.greedy:Greedy\n"
                                         "broken = userpols.nothere:X\n")
    return site


def test_policies_lists_builtins_and_entry_points(user_pkg):
    r = _cli("policies", env_path=[user_pkg])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    names = [ln.split()[0] for ln in lines if ln and not ln.startswith(" ")]
    from burstbuffer.schedulers import POLICIES
    assert set(POLICIES) <= set(names) and "greedy-wide" in names
    i = names.index("greedy-wide")
    row = [ln for ln in lines if ln.startswith("greedy-wide")][0]
    assert "Start every job that fits, widest first" in row and "entry point of userpols" in row
    opts = lines[lines.index(row) + 1: lines.index(row) + 5]
    assert [ln.strip() for ln in opts] == ["shared options: period, staging", "its own options:",
                                           "reverse: bool, default true", "(its docstring does not say)"], opts
    plan1 = lines[lines.index([ln for ln in lines if ln.startswith("plan-1 ")][0]):]
    plan1 = plan1[:next(k for k, ln in enumerate(plan1) if not ln)]
    assert plan1[1] == "    = PlanScheduler with alpha=1 (burstbuffer.schedulers.plan)"   # its preset sets α
    assert "cooling_rate" in plan1[2] and not any("alpha" in ln for ln in plan1[2:])     # shared: said once, above
    assert "    cooling_rate: float in (0, 1], default 0.9" in lines[:lines.index(plan1[0])]
    # the broken entry point: one line on stderr, the listing still complete
    assert r.stderr.count("\n") == 1 and "broken" in r.stderr and "nothere" in r.stderr
    assert names[i + 1:] == [], "entry points come after the built-in policies"


@pytest.mark.parametrize("spec", ["greedy-wide", "userpols.greedy:Greedy"])
def test_entry_point_and_module_spec_run(tmp_path, user_pkg, spec):
    wl = _first_jobs(tmp_path, 20)
    r = _cli("run", "--policy", spec, "--model", "alloc-only", "--workload", str(wl), "--output",
             str(tmp_path / "o"), "-q", "--policy-option", "reverse=false", env_path=[user_pkg])
    assert r.returncode == 0, r.stderr
    rows = _jobs(tmp_path / "o" / "jobs.csv")
    assert len(rows) == 20 and all(x["final_state"] in ("COMPLETED_SUCCESSFULLY", "REJECTED") for x in rows)
    _no_over_allocation(rows)


def _bad_files(tmp_path):
    (tmp_path / "syntax.py").write_text("def broken(:\n")
    (tmp_path / "importerr.py").write_text("import no_such_module_xyz\n")
    (tmp_path / "raises.py").write_text("raise RuntimeError('boom at import')\n")
    (tmp_path / "ok.py").write_text(POLICY_MODULE)
    return {
        f"{tmp_path}/missing.py:X": "not found",
        f"{tmp_path}/ok.py:Nope": "has no class Nope",
        f"{tmp_path}/ok.py:NotAPolicy": "not a subclass",
        f"{tmp_path}/syntax.py:X": "SyntaxError",
        f"{tmp_path}/importerr.py:X": "no_such_module_xyz",
        f"{tmp_path}/raises.py:X": "boom at import",
        "no_such_pkg_xyz.mod:X": "no module named",
        "os:path": "not a subclass",
        "no-such-policy": "unknown policy",
    }


def test_bad_specs_are_one_line_errors(tmp_path, capsys):
    from burstbuffer.cli import main
    for spec, why in _bad_files(tmp_path).items():
        for argv in (["run", "--policy", spec, "-q"], ["serve", "--policy", spec, "--timeout", "1"],
                     ["policies", spec]):
            assert main(argv) == 2, argv
            err = capsys.readouterr().err.strip()
            assert err.count("\n") == 0 and why in err and err.startswith("burstbuffer: --policy: "), (argv, err)
    # the same through the command, as a user sees it: one line, no traceback
    r = _cli("run", "--policy", f"{tmp_path}/syntax.py:X", "-q", timeout=60)
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "SyntaxError" in r.stderr, r.stderr
    # reproduce --policies: a spec that cannot be resolved stops before any run
    spec = f"{tmp_path}/ok.py:NotAPolicy"
    r = _cli("reproduce", "--policies", f"sjf-bb,{spec}", "--jobs", "1000", "--output", str(tmp_path / "rep"), "-q")
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "not a subclass" in r.stderr, r.stderr


def test_reproduce_plans_a_file_policy(tmp_path):
    from types import SimpleNamespace

    from burstbuffer.reproduce.runs import plan_runs
    from burstbuffer.reproduce.study import get_study
    from burstbuffer.schedulers import POLICIES

    (tmp_path / "ok.py").write_text(POLICY_MODULE)
    spec = f"{tmp_path}/ok.py:Greedy"
    args = SimpleNamespace(policies=f"sjf-bb,{spec}", model="io-aware", gantt_jobs=0, jobs="1000", workload=None,
                           parts=False, parts_from=None, split=None)
    plan = plan_runs(get_study("kopanski2021"), args, tmp_path / "rep", POLICIES, log=lambda m: None)
    assert plan.policies == ["sjf-bb", spec]
    folders = [os.path.basename(s.out) for s in plan.specs]
    assert folders == ["sjf-bb", "Greedy"]


def test_policy_contract_is_enforced():
    """A start that does not fit is refused (no over-allocation); schedule() must return its starts."""
    from burstbuffer.schedulers import Job, Policy
    from burstbuffer.platforms.model import Platform

    plat = Platform(compute=ProcSet((0, 3)), names={i: f"n{i}" for i in range(5)}, bb_capacity={4: 100})

    class Twice(Policy):
        def schedule(self, now, queue, profile, rng):
            fit = self.fit_now(queue[0])
            first = self.start(queue[0], fit)
            self.start(queue[1], fit)          # same processors again
            return [first]

    class Forgets(Policy):
        def schedule(self, now, queue, profile, rng):
            self.start(queue[0], self.fit_now(queue[0]))
            return []

    for cls, err in ((Twice, ValueError), (Forgets, RuntimeError)):
        s = cls(plat)
        s.submit(Job("w!1", 0, 10, 2, 10), 0)
        s.submit(Job("w!2", 0, 10, 2, 10), 0)
        with pytest.raises(err):
            s.decide(0)


def test_tutorial_text_is_the_tested_file():
    """The code shown in docs/writing-a-policy.md is the file the end-to-end test runs."""
    doc = (REPO / "docs" / "writing-a-policy.md").read_text()
    block = doc.split("```python\n", 2)[2].split("```", 1)[0]
    assert "class BBCappedBackfill(Policy)" in block
    assert block.strip() in (REPO / EXAMPLE.split(":")[0]).read_text()
