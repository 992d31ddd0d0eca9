"""Policy name → policy class (docs/policies.md names): the one registry of the built-in policies.

`POLICIES` maps a name to a `burstbuffer.schedulers.base.Scheduler` subclass; each class declares what the
rest of the project reads about it: its options (``declared_options``: type, range, meaning, command-line
alias; the default is its constructor's), its capabilities (``needs_staged_model``: it decides stage-ins, so it
needs a job model that stages separately) and how it is built (``build``). The registry holds no list of
names by option or by job model: `names_taking` and `needs_staged_model` ask the classes. A new built-in
policy is one class and one line here; a policy of one's own needs no line anywhere
(``--policy FILE.py:CLASS``, or an entry point of ``burstbuffer.policies``: `burstbuffer.schedulers.resolve`).

Plan-based policies (Kopanski & Rzadca 2021, §3.3): ``plan-1``, ``plan-2``, ``plan-3`` fix α = 1, 2, 3;
``plan`` takes any α > 0 (option ``alpha``). Window policies (Fan et al. 2019, BBSched, and its §4.3
baselines; docs/bbsched.md). ``cerberus`` and ``slurm-bb`` decide stage-ins (docs/io-model.md §3).
"""
from __future__ import annotations

from collections.abc import MutableMapping
from typing import TYPE_CHECKING

from ..lazy import LazyRegistry

if TYPE_CHECKING:
    from .base import Scheduler

__all__ = ["POLICIES", "any_model_names", "names_taking", "needs_staged_model", "policy_names"]

_S = "burstbuffer.schedulers."

#: name → policy class; each imported on its first look-up (`burstbuffer.lazy.LazyRegistry`: listing the
#: names imports no policy module)
POLICIES: MutableMapping[str, type[Scheduler]] = LazyRegistry({
    "fcfs": (_S + "easy", "Fcfs"),
    "fcfs-easy": (_S + "easy", "FcfsEasy"),
    "filler": (_S + "easy", "Filler"),
    "fcfs-bb": (_S + "easy", "FcfsBB"),
    "sjf-bb": (_S + "easy", "SjfBB"),
    "plan-1": (_S + "plan", "Plan1"),
    "plan-2": (_S + "plan", "Plan2"),
    "plan-3": (_S + "plan", "Plan3"),
    "plan": (_S + "plan", "PlanScheduler"),
    "conservative-bb": (_S + "conservative", "ConservativeBB"),
    "bbsched": (_S + "bbsched", "BBSched"),
    "bbsched-exact": (_S + "bbsched", "BBSchedExact"),
    "bbsched-nsga2": (_S + "bbsched", "BBSchedNSGA2"),
    "bbsched-naive": (_S + "bbsched", "Naive"),
    "weighted": (_S + "bbsched", "Weighted"),
    "weighted-cpu": (_S + "bbsched", "WeightedCPU"),
    "weighted-bb": (_S + "bbsched", "WeightedBB"),
    "constrained-cpu": (_S + "bbsched", "Constrained"),
    "constrained-bb": (_S + "bbsched", "ConstrainedBB"),
    "bin-packing": (_S + "bbsched", "BinPacking"),
    "cerberus": (_S + "cerberus", "Cerberus"),
    "cerberus-fcfs-24h": (_S + "cerberus", "CerberusFcfs24h"),
    "slurm-bb": (_S + "slurm_bb", "SlurmBB"),
})


def policy_names() -> list[str]:
    """Registered policy names, sorted."""
    return sorted(POLICIES)


def needs_staged_model(name: str) -> bool:
    """True if built-in policy `name` decides stage-ins and so runs only under a job model that stages
    separately (its class's ``needs_staged_model``)."""
    return POLICIES[name].needs_staged_model


def any_model_names() -> list[str]:
    """The built-in policies that run under every job model (those without ``needs_staged_model``), in
    registry order (imports every policy class)."""
    return [n for n, cls in POLICIES.items() if not cls.needs_staged_model]


def names_taking(option: str) -> list[str]:
    """The built-in policies that declare `option`, in registry order (imports every policy class)."""
    return [n for n, cls in POLICIES.items() if any(o.name == option for o in cls.declared_options)]
