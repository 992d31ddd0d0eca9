"""A user policy's attribute names are its own (but the few of `api.RESERVED`): the machinery a `Policy` runs on
is an object it owns, so ``self.order``, ``self.running``, ``self.waiting``, ``self.reservations``,
``self.staging`` set by the policy change nothing."""
from __future__ import annotations

import re

import pytest

from burstbuffer.cli import main
from burstbuffer.schedulers.api import RESERVED, Policy

from .conftest import ROOT

TEMPLATE = '''
from burstbuffer.schedulers import Policy


class Named(Policy):
    """EASY with BB reservation, its bookkeeping under names of its own."""

    def __init__(self, platform, *, seed=0):
        super().__init__(platform, seed=seed)
        self.{order} = "bb-large"          # a string where the machinery keeps an Order
        self.{running} = {{}}
        self.{waiting} = []
        self.{reservations} = {{}}
        self.{staging} = "mine"

    def schedule(self, now, queue, profile, rng):
        out, head = [], None
        self.{waiting} = [j.id for j in queue]
        for job in queue:
            fit = self.fit_now(job)
            if fit is not None and (head is None or True):
                out.append(self.start(job, fit))
                self.{running}[job.id] = now
            elif head is None:
                head = job
                self.{reservations}[job.id] = self.reserve(job)
        return out
'''

PUBLIC = dict(order="order", running="running", waiting="waiting", reservations="reservations", staging="staging")
PRIVATE = {k: f"_my_{k}" for k in PUBLIC}


def _run(tmp_path, label, names, model):
    f = tmp_path / f"{label}.py"
    f.write_text(TEMPLATE.format(**names))
    out = tmp_path / f"out-{label}-{model}"
    assert main(["run", "--policy", f"{f}:Named", "--jobs", "30", "--model", model, "--output", str(out), "-q"]) == 0
    return (out / "jobs.csv").read_bytes()


@pytest.mark.parametrize("model", ["io-aware", "three-phase"])
def test_a_policy_using_the_machinerys_old_names_runs_as_with_private_ones(tmp_path, model):
    public = _run(tmp_path, "public", PUBLIC, model)
    assert public == _run(tmp_path, "private", PRIVATE, model)
    assert public.count(b"\n") == 31 and b"COMPLETED_SUCCESSFULLY" in public


def test_reserved_names_are_the_interface_and_are_documented():
    """Every reserved name is defined by `Policy` (or its `Scheduler` base), and the docs list exactly them."""
    assert all(hasattr(Policy, n) or n == "platform" for n in RESERVED)
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("**Reserved names.**", 1)[1].split("\n\n", 1)[0]
    assert sorted(re.findall(r"`([a-z_]+)`", section.split(":", 1)[1])) == sorted(RESERVED)
