"""Policy name → scheduler factory (SPEC §6 names).

`make_scheduler("fcfs-bb", platform, seed=0)` is what the CLI and the decision loop call; new
policy families (e.g. plan-α) register themselves by adding to `POLICIES`.
"""
from __future__ import annotations

from typing import Callable

from ..platforms.model import Platform
from .base import Scheduler
from .policies import Fcfs, FcfsBB, FcfsEasy, Filler, SjfBB

__all__ = ["POLICIES", "make_scheduler", "policy_names"]

#: name → factory(platform, *, seed=0, **options) -> Scheduler
POLICIES: dict[str, Callable[..., Scheduler]] = {
    "fcfs": Fcfs,
    "fcfs-easy": FcfsEasy,
    "filler": Filler,
    "fcfs-bb": FcfsBB,
    "sjf-bb": SjfBB,
}


def policy_names() -> list[str]:
    """Registered policy names, sorted."""
    return sorted(POLICIES)


def make_scheduler(name: str, platform: Platform, *, seed: int = 0, **options) -> Scheduler:
    """Build the scheduler of policy `name` for `platform`.

    `options` are passed to the factory (for the profile-based policies: ``period`` [s] and
    ``overdue_grace`` [s], see `ProfileScheduler`). Raises ValueError naming the valid policies
    if `name` is unknown; the factory raises TypeError/ValueError on bad options.
    """
    try:
        factory = POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; valid policies: {', '.join(policy_names())}") from None
    return factory(platform, seed=seed, **options)
