"""The C plan engine mirrors the single Python placement rule (`schedulers.placement`).

Generated cases: Dragonfly platforms of random shape (1-3 groups, 1-3 chassis, 1-2 routers, 1-12
nodes per router, so compute ids cross the 64-bit word boundary), a random subset of hosts as BB
nodes of random capacities (hence random chassis → group → any preference indexes), profiles with
random holds (random starts and ends, some without end, so random breakpoints), random decision
times and jobs (processors, walltime, BB per node, including jobs that never fit). Checked:

- one job: the C engine, its oracle (the Python engine of tests/oracles/plan_engine.py) and
  `AvailabilityProfile.earliest_fit` give the same
  start, processors, BB bytes per node and compute → BB map; `fit_at` agrees with
  `earliest_fit` (fits at its start, not at any earlier candidate);
- plans: for random permutations, through apply/revert, the C engine and its oracle give
  identical scores (bit for bit) and placements.
And the import graph of the placement modules has no cycle.
"""
from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import examples
from procset import ProcSet

from burstbuffer.platforms.model import Dragonfly, Platform
from burstbuffer.schedulers import Job
from burstbuffer.schedulers.placement import mask_of
from burstbuffer.schedulers.plan_engine import make_engine
from burstbuffer.schedulers.profile import AvailabilityProfile

from .oracles.plan_engine import PlanEngine

GB = 10**9
PROPS = settings(max_examples=examples(1.5), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def cases(draw):
    g, c, r, n = (draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 2)),
                  draw(st.integers(1, 12)))
    shape = Dragonfly(g, c, r, n)
    hosts = list(range(g * c * r * n))
    if len(hosts) < 2:
        hosts = [0, 1]
    nbb = draw(st.integers(1, max(1, min(6, len(hosts) - 1))))
    bbs = sorted(draw(st.sets(st.sampled_from(hosts), min_size=nbb, max_size=nbb)))
    compute = [h for h in hosts if h not in bbs]
    if not compute:
        compute, bbs = bbs[:1], bbs[1:]
    caps = {b: draw(st.integers(1, 12)) * GB // 2 for b in bbs}
    plat = Platform(ProcSet(*compute), {h: f"node_{h}" for h in hosts}, caps, None,
                    {h: shape.coordinates(h) for h in hosts})
    p = AvailabilityProfile(plat, origin=0.0)
    for _ in range(draw(st.integers(0, 10))):
        s = float(draw(st.integers(0, 20)))
        e = draw(st.sampled_from([math.inf, s + 0.5] + [s + float(x) for x in range(1, 15)]))
        free, fb = p.free_at(s)
        if not len(free):
            continue
        ids = sorted(free)
        procs = ProcSet(*draw(st.sets(st.sampled_from(ids), min_size=1, max_size=min(len(ids), 40))))
        bb = {b: draw(st.integers(0, 4)) * fb[b] // 4 for b in p.bb_ids}
        try:
            p.reserve(s, e, procs, bb)
        except ValueError:
            pass  # not free over the whole window: skip this hold
    now = draw(st.sampled_from([0.0, 3.0, 7.5, float(draw(st.integers(0, 25)))]))
    p.advance(now if draw(st.booleans()) else 0.0)
    jobs = []
    for i in range(draw(st.integers(1, 7))):
        res = draw(st.integers(1, len(compute) + 1))        # + 1: may never fit
        need = draw(st.sampled_from([0, 0, GB // 4, GB // 2, GB, 2 * GB, 3 * GB, 7 * GB]))
        wall = draw(st.sampled_from([float(draw(st.integers(1, 20))), 0.5, 7.25, math.inf]))
        jobs.append(Job(f"j{i}", -float(draw(st.integers(0, 9))), wall, res, need))
    perms = [draw(st.permutations(range(len(jobs)))) for _ in range(3)]
    return p, now, jobs, perms, draw(st.sampled_from([1.0, 2.0, 0.7]))


def _view(engine, jobs, bb_ids):
    out = []
    for k, pl in engine.placements():
        if pl is None:
            out.append((k, None))
        else:
            out.append((k, pl.start, pl.procs, pl.bb_free if jobs[k].bb else None, pl.bb_used,
                        engine.bb_of_node(pl, jobs[k].bb, bb_ids)))
    return out


def _engines(p, jobs, now, alpha):
    return [PlanEngine(p, jobs, now, alpha), make_engine(p, jobs, now, alpha)]


@PROPS
@given(cases())
def test_one_job_fit_is_the_same_everywhere(case):
    p, now, jobs, _, alpha = case
    before = list(p.breakpoints())
    for job in jobs:
        fit = p.earliest_fit(job, now)
        want = None
        if fit is not None:
            use = fit.bb_per_storage(job.bb)
            want = (fit.start, mask_of(fit.procs), tuple(use.get(b, 0) for b in p.bb_ids), fit.bb_of_node)
            assert p.fit_at(job, fit.start) == fit
            earlier = [now] + [t for t, _, _ in p.breakpoints() if now < t < fit.start]
            assert all(p.fit_at(job, t) is None for t in earlier if t < fit.start)
        for e in _engines(p, [job], now, alpha):
            e.apply([0])
            [(k, pl)] = e.placements()
            got = None if pl is None else (pl.start, pl.procs, pl.bb_used,
                                           e.bb_of_node(pl, job.bb, p.bb_ids))
            assert got == want, (e.native, job)
    assert list(p.breakpoints()) == before


@PROPS
def assert_engines_agree(py, c, perms, jobs, bb_ids) -> None:
    """Apply each plan of `perms` to both engines: same scores and processor/BB views, and each revert
    returns both to the previous plan (also used by tests/test_staged_plan.py)."""
    prev = None
    for perm in perms:
        s = py.apply(perm)
        assert c.apply(perm) == s
        view = _view(py, jobs, bb_ids)
        assert _view(c, jobs, bb_ids) == view
        if prev is not None:
            assert py.revert() == c.revert() == prev[0]
            assert _view(py, jobs, bb_ids) == _view(c, jobs, bb_ids) == prev[1]
            assert py.apply(perm) == c.apply(perm) == s
        prev = (s, view)


@given(cases())
def test_native_plans_mirror_the_python_rule(case):
    p, now, jobs, perms, alpha = case
    py, c = _engines(p, jobs, now, alpha)
    assert py.horizon == c.horizon
    assert_engines_agree(py, c, perms, jobs, p.bb_ids)


def test_placement_modules_import_without_a_cycle():
    """Module-level and function-level imports among the scheduler modules of the placement rule
    form no cycle; `_plan_native` and `plan_engine` never import each other both ways."""
    root = Path(__file__).resolve().parents[1] / "burstbuffer" / "schedulers"
    mods = ["placement", "profile", "_plan_base", "plan_engine", "_plan_native"]
    graph = {}
    for m in mods:
        tree = ast.parse((root / f"{m}.py").read_text())
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    deps.add(node.module)
                else:
                    deps.update(a.name for a in node.names)
        graph[m] = deps & set(mods)
    assert "plan_engine" not in graph["_plan_native"]
    state: dict[str, int] = {}

    def visit(m, path):
        assert state.get(m) != 1, f"import cycle: {' -> '.join(path + [m])}"
        if state.get(m) == 2:
            return
        state[m] = 1
        for d in graph[m]:
            visit(d, path + [m])
        state[m] = 2

    for m in mods:
        visit(m, [])
