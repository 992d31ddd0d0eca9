"""The shape of the policy layer, read from the source (`ast`): variants are presets, not classes; nothing swaps a
policy's class; `ProfileScheduler` is composed (at most 2 bases, its machinery in objects it owns, none reading
another's attributes); no class in the package is over 350 lines. (A user policy's own attribute names:
tests/test_policy_names.py; a new built-in policy as its module plus one registry line: tests/test_registry.py.)"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers.profile_scheduler import ProfileScheduler
from burstbuffer.schedulers.registry import POLICIES, PRESETS

from .conftest import ROOT

PACKAGE = ROOT / "burstbuffer"
SCHEDULERS = PACKAGE / "schedulers"
MACHINERY = SCHEDULERS / "profile_scheduler"
MAX_CLASS_LINES = 350


def _classes(folder: Path):
    """(path, ClassDef) of every class defined under `folder`."""
    for p in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(), str(p))):
            if isinstance(node, ast.ClassDef):
                yield p, node


def _base_names(c: ast.ClassDef) -> list[str]:
    return [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "?" for b in c.bases]


def _only_attributes(c: ast.ClassDef) -> bool:
    """Whether `c`'s body is a docstring and class attributes only (no method, no property)."""
    for s in c.body:
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.Pass)):
            continue
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            continue
        return False
    return True


def test_no_class_under_schedulers_differs_from_its_parent_by_class_attributes_only():
    """A class deriving from one of the project's classes adds behaviour; a variant setting only attributes is a
    registry preset (`registry.PRESETS`)."""
    ours = {c.name for _, c in _classes(SCHEDULERS)}
    offenders = [f"{p.relative_to(ROOT)}:{c.name}" for p, c in _classes(SCHEDULERS)
                 if set(_base_names(c)) & ours and _only_attributes(c)]
    assert offenders == []


def test_the_check_finds_a_class_that_only_sets_attributes():
    """The control: the rule above flags a variant made by class attributes, and not one with a method."""
    variant = ast.parse("class A(Base):\n    '''doc'''\n    name = 'x'\n    depth: int = 2\n").body[0]
    method = ast.parse("class B(Base):\n    name = 'x'\n    def f(self):\n        pass\n").body[0]
    assert _only_attributes(variant) and not _only_attributes(method)


def test_nothing_swaps_a_class():
    """No ``obj.__class__ = …`` anywhere in the package; every preset builds its own class (`Preset.build`), and a
    flag's variant (`Preset.for_flags`) is a preset of the same class."""
    swaps = [f"{p.relative_to(ROOT)}:{n.lineno}" for p in sorted(PACKAGE.rglob("*.py"))
             for n in ast.walk(ast.parse(p.read_text()))
             if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
             for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
             if isinstance(t, ast.Attribute) and t.attr == "__class__"]
    assert swaps == []
    plat = Platform.simple(4, [10 ** 12])
    variants = 0
    for name, p in POLICIES.items():
        assert type(p.build(plat, seed=0)) is p.policy, name
        if p.flag_variant is not None:
            other, template = p.flag_variant
            chosen, label = p.for_flags({"alpha": 2.5})
            assert chosen is PRESETS[other] and chosen.policy is p.policy and label == "plan-2.5"
            variants += 1
    assert variants >= 1


def test_profile_scheduler_has_at_most_two_bases():
    (node,) = [c for _, c in _classes(MACHINERY) if c.name == "ProfileScheduler"]
    assert len(node.bases) <= 2
    assert len(ProfileScheduler.__bases__) <= 2


def _self_names(c: ast.ClassDef) -> tuple[set[str], set[str]]:
    """(the ``self.X`` names `c` reads, the names it defines: attributes it assigns, methods, class attributes)."""
    read, defined = set(), set()
    for s in c.body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined.add(s.name)
        elif isinstance(s, ast.Assign):
            defined |= {t.id for t in s.targets if isinstance(t, ast.Name)}
        elif isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
            defined.add(s.target.id)
    for n in ast.walk(c):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self":
            (defined if isinstance(n.ctx, ast.Store) else read).add(n.attr)
    return read, defined


def test_the_machinery_objects_read_only_their_own_attributes():
    """Each object `ProfileScheduler` owns (queue order, reservations, staged lifecycle, reservation book, wait log)
    has one base at most (no mixin) and reads through ``self`` only what it defines itself: the scheduler passes
    it the rest (the profile, a job's hold shape, the submission indices)."""
    owned = {"QueueOrder": "queue_order.py", "Reservations": "reservations.py", "StagedLifecycle": "staging.py",
             "ReservationBook": "book.py", "WaitLog": "wait_reasons.py"}
    found = {}
    for p, c in _classes(MACHINERY):
        if c.name in owned:
            assert p.name == owned[c.name]
            assert c.bases == [], c.name
            read, defined = _self_names(c)
            found[c.name] = sorted(read - defined)
    assert found == {name: [] for name in owned}


def test_the_attribute_check_sees_a_foreign_read():
    """The control of the rule above: a class reading an attribute another object sets is flagged."""
    c = ast.parse("class M:\n    def __init__(self):\n        self.a = 1\n    def f(self):\n"
                  "        return self.a + self.profile\n").body[0]
    read, defined = _self_names(c)
    assert read - defined == {"profile"}


def test_no_class_in_the_package_is_over_350_lines():
    sizes = {f"{p.relative_to(ROOT)}:{c.name}": c.end_lineno - c.lineno + 1 for p, c in _classes(PACKAGE)}
    assert {k: n for k, n in sizes.items() if n > MAX_CLASS_LINES} == {}
    assert max(sizes.values()) > 100          # the count sees the classes (a control on the walk)


@pytest.mark.parametrize("name", ["sjf-bb", "conservative-bb", "plan-2"])
def test_a_policy_calls_the_machinery_through_the_owned_objects(name):
    """The built policies hold their machinery in the owned objects: no attribute of the former mixins' state is
    the scheduler's own."""
    sched = POLICIES[name].build(Platform.simple(4, [10 ** 12]), seed=0)
    own = vars(sched)
    assert {"_orders", "_res", "_staging", "_book", "_waits"} <= own.keys()
    assert not {"holds", "_held", "_pending", "_kept", "_wake", "_shape_model", "order", "queues", "_queue_of",
                "_rank_order", "job_facts", "staged", "last_reservation"} & own.keys()
