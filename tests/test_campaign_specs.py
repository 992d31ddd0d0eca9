"""Campaigns plan `SchedulerSpec`s: the policy of every run is resolved and its options checked once, in the
parent (`reproduce.runs.with_schedulers`); a run builds its policy from the spec it carries."""
from __future__ import annotations

import pickle
import textwrap

import pytest

from burstbuffer.reproduce import RunSettings
from burstbuffer.reproduce.execute import run_one
from burstbuffer.reproduce.runs import PlannedRun, with_schedulers
from burstbuffer.runner import DEFAULT_PLATFORM
from burstbuffer.schedulers.registry import POLICIES
from burstbuffer.spec import SchedulerSpec

pytestmark = pytest.mark.slow   # two small simulations

POLICY = textwrap.dedent('''
    from burstbuffer.schedulers import Policy


    class Widest(Policy):
        """Start what fits, widest first."""

        def schedule(self, now, queue, profile, rng):
            out = []
            for job in sorted(queue, key=lambda j: -j.res):
                fit = self.fit_now(job)
                if fit is not None:
                    out.append(self.start(job, fit))
            return out
''')


def _specs(tmp_path, wl, f):
    return [PlannedRun("whole", "sjf-bb", str(wl), "io-aware", str(tmp_path / "a"), 12, options='{"order":"wfp"}'),
            PlannedRun("whole", "sjf-bb", str(wl), "io-aware", str(tmp_path / "b"), 12, seed=3, options='{"order":"wfp"}'),
            PlannedRun("whole", f"{f}:Widest", str(wl), "alloc-only", str(tmp_path / "c"), 12),
            PlannedRun("whole", "cerberus", str(wl), "io-aware", str(tmp_path / "d"), 12)]


def test_the_plan_carries_one_spec_per_policy_options_and_model(tmp_path, kth_subset):
    f = tmp_path / "widest.py"
    f.write_text(POLICY)
    specs = with_schedulers(_specs(tmp_path, kth_subset(12), f))
    a, b, c, d = (s.scheduler for s in specs)
    assert isinstance(a, SchedulerSpec) and a is b and a.policy is POLICIES["sjf-bb"] and a.options == {"order": "wfp"}
    assert c.label == "Widest" and c.job_model == "alloc-only"
    assert d is None                                 # cerberus needs three-phase: its worker reports it, as before
    again = pickle.loads(pickle.dumps(specs[2]))
    assert again == specs[2] and again.scheduler.policy is c.policy   # the file is imported once per process


def test_a_run_builds_its_policy_from_the_spec_without_resolving(tmp_path, kth_subset, monkeypatch):
    f = tmp_path / "widest.py"
    f.write_text(POLICY)
    wl = kth_subset(12)
    planned = with_schedulers(_specs(tmp_path, wl, f))
    settings = RunSettings(str(DEFAULT_PLATFORM), seed=0, cpu=None)
    by_name = run_one(_specs(tmp_path / "n", wl, f)[2], settings)        # resolved in the run, as before
    assert "error" not in by_name, by_name
    import burstbuffer.schedulers.resolve as resolve

    def refuse(*a, **k):
        raise AssertionError("a planned run resolved its policy again")
    monkeypatch.setattr(resolve, "resolve_policy", refuse)
    infos = [run_one(s, settings) for s in planned[1:3]]
    assert all("error" not in i for i in infos), infos
    assert infos[0]["seed"] == 3 and infos[0]["options"] == '{"order":"wfp"}'       # the run's own seed
    assert (tmp_path / "c" / "jobs.csv").read_bytes() == (tmp_path / "n" / "c" / "jobs.csv").read_bytes()
