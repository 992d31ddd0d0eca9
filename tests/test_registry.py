"""The registry of built-in policies: one class per algorithm, every name a preset (class + the options it sets),
and a new built-in policy is its module plus one registry line."""
from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
import subprocess
import sys
import textwrap

import pytest

import burstbuffer.schedulers as schedulers
from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers.base import Scheduler
from burstbuffer.schedulers.registry import POLICIES, PRESETS, Preset, classes, names_tagged, names_taking

from .conftest import ROOT


def _scheduler_classes() -> list[type]:
    out = []
    for m in pkgutil.walk_packages(schedulers.__path__, schedulers.__name__ + "."):
        mod = importlib.import_module(m.name)
        out += [c for c in vars(mod).values() if isinstance(c, type) and issubclass(c, Scheduler)
                and c.__module__ == mod.__name__]
    return out


def test_no_class_differs_from_its_parent_by_class_attributes_only():
    """Every policy class under schedulers/ defines behaviour (a method or a property) of its own: a variant that
    only sets attributes is a preset of the registry instead."""
    only_attrs = [c.__qualname__ for c in _scheduler_classes()
                  if not any(inspect.isfunction(v) or isinstance(v, (property, classmethod, staticmethod))
                             for v in vars(c).values())]
    assert only_attrs == []


def test_every_name_is_a_preset_of_one_class_per_algorithm():
    assert list(POLICIES) == list(PRESETS)
    by_class = classes()
    assert {c.__name__: n for c, n in by_class.items() if len(n) > 1} == {
        "EasyBackfilling": ["fcfs-easy", "fcfs-bb", "sjf-bb"],
        "PlanScheduler": ["plan-1", "plan-2", "plan-3", "plan"],
        "Scored": ["weighted", "weighted-cpu", "weighted-bb", "constrained-cpu", "constrained-bb"],
        "Cerberus": ["cerberus", "cerberus-fcfs-24h"]}
    plat = Platform.simple(4, [10 ** 12])
    for name, p in POLICIES.items():
        sched = p.build(plat, seed=0)
        assert type(sched) is p.policy and sched.name == name
        for k, v in p.options.items():            # the preset's options reach the instance
            assert getattr(sched, {"reservation_depth": "depth"}.get(k, k)) == v, (name, k)
        assert pickle.loads(pickle.dumps(p)) is p
    assert POLICIES["sjf-bb"].options == {"reserve_bb": True, "sjf_backfill": True}
    assert "reserve_bb" not in {o.name for o in POLICIES["fcfs-bb"].declared_options}


def test_a_preset_refuses_an_option_it_sets():
    with pytest.raises(TypeError, match="plan-2 fixes alpha = 2"):
        POLICIES["plan-2"].build(Platform.simple(2, [10 ** 12]), alpha=3)
    assert POLICIES["plan-2"].build(Platform.simple(2, [10 ** 12]), alpha=2).alpha == 2     # its own value: taken


def test_tags_select_the_presets():
    assert names_tagged("hashed") == ["fcfs", "fcfs-easy", "filler", "fcfs-bb", "sjf-bb", "plan-1", "plan-2",
                                      "plan-3", "conservative-bb"]
    assert names_tagged("family:window") == names_taking("window")
    assert set(names_tagged("paper:kopanski2021")) == {"fcfs", "fcfs-easy", "filler", "fcfs-bb", "sjf-bb",
                                                       "plan-1", "plan-2", "plan-3", "plan"}


def test_reservation_depth_keeps_the_order_a_constructor_gives():
    """A reservation depth is an option of the one backfilling class: a subclass's own default order is kept
    with it (no class is swapped in)."""
    class ShortFirst(POLICIES["fcfs-bb"].policy):
        def __init__(self, platform, *, order="sjf", **options):
            super().__init__(platform, order=order, **options)

    s = ShortFirst(Platform.simple(2, [10 ** 12]), reservation_depth=1)
    assert type(s) is ShortFirst and s.depth == 1 and s.order.name == "sjf"


NEW_POLICY = textwrap.dedent('''
    """A new built-in policy's module."""
    from burstbuffer.schedulers import EasyBackfilling


    class ShortFirst(EasyBackfilling):
        """EASY with processors + BB reservations, the queue looked at shortest walltime first by default."""

        def __init__(self, platform, *, order="sjf", **options):
            super().__init__(platform, order=order, **options)
''')

#: the one registry line the new policy takes (a line of `registry.PRESETS` has the same shape)
REGISTRY_LINE = ('POLICIES["short-first"] = Preset("short-first", ("shortfirst", "ShortFirst"), {}, '
                 '"EASY, shortest walltime first.", frozenset({"family:easy"}))')


def _cli(tmp_path, *argv):
    code = ("import sys\nfrom burstbuffer.schedulers.registry import POLICIES, Preset\n" + REGISTRY_LINE + "\n"
            "from burstbuffer.cli import main\n"
            f"sys.exit(main({list(argv)!r}))")
    import os
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=600)


@pytest.mark.slow
def test_a_new_built_in_policy_is_its_module_and_one_registry_line(tmp_path):
    """Its module and one line: `burstbuffer policies` lists it with its options (the default order its
    constructor gives), `run` runs it — the schedule of fcfs-bb under that order — and ``--order`` still
    overrides the default (fcfs-bb's own schedule)."""
    (tmp_path / "shortfirst.py").write_text(NEW_POLICY)
    r = _cli(tmp_path, "policies", "short-first")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("short-first  EASY, shortest walltime first.")
    assert "    order: " in r.stdout and "default sjf" in r.stdout.split("    order: ")[1].split("\n")[0]
    runs = {}
    for label, argv in {"new": ["--policy", "short-first"], "new-fcfs": ["--policy", "short-first", "--order", "fcfs"],
                        "sjf": ["--policy", "fcfs-bb", "--order", "sjf"], "bb": ["--policy", "fcfs-bb"]}.items():
        out = tmp_path / label
        r = _cli(tmp_path, "run", *argv, "--jobs", "120", "--output", str(out), "-q")
        assert r.returncode == 0, r.stderr
        runs[label] = (out / "jobs.csv").read_bytes()
    assert runs["new"] == runs["sjf"] and runs["new-fcfs"] == runs["bb"]
    assert runs["sjf"] != runs["bb"]          # the control: the order moves this schedule


def test_policies_lists_each_preset_with_its_class_and_options(capsys):
    from burstbuffer.cli import main
    assert main(["policies"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for name, p in POLICIES.items():
        head = next(k for k, ln in enumerate(lines) if ln.startswith(name + "  "))
        assert lines[head + 1].startswith(f"    = {p.where[1]}"), lines[head + 1]
    sjf = lines[next(k for k, ln in enumerate(lines) if ln.startswith("sjf-bb  ")) + 1]
    assert sjf == "    = EasyBackfilling with reserve_bb=true, sjf_backfill=true (burstbuffer.schedulers.easy)"
