"""Policy name → scheduler factory (docs/policies.md names).

`make_scheduler("fcfs-bb", platform, seed=0)` is what the CLI and the decision loop call; new
policy families register themselves by adding to `POLICIES`.

Plan-based policies (Kopanski & Rzadca 2021, §3.3): ``plan-1``, ``plan-2``, ``plan-3`` fix α = 1, 2, 3;
``plan`` takes any α > 0 as the option ``alpha`` (default 2), e.g.
``make_scheduler("plan", platform, alpha=1.5)``. Their other options: ``cooling_rate`` (r),
``cooling_steps`` (N), ``temperature_steps`` (M), ``exhaustive_limit``, ``native`` (see
`PlanScheduler`). ``conservative-bb`` is conservative backfilling with processor + BB reservations.
"""
from __future__ import annotations

import inspect
from typing import Callable

from ..platforms.model import Platform
from .base import Scheduler
from .conservative import ConservativeBB
from .plan import PlanScheduler
from .policies import Fcfs, FcfsBB, FcfsEasy, Filler, SjfBB

__all__ = ["POLICIES", "make_scheduler", "policy_names"]


def _plan_alpha(alpha: int) -> Callable[..., Scheduler]:
    """Factory of `plan-<alpha>`: a `PlanScheduler` whose α is fixed (TypeError if another α is
    passed as an option)."""
    def factory(platform: Platform, *, seed: int = 0, **options) -> PlanScheduler:
        a = options.pop("alpha", alpha)
        if a != alpha:
            raise TypeError(f"plan-{alpha} fixes alpha = {alpha}; use policy 'plan' with alpha={a!r}")
        s = PlanScheduler(platform, seed=seed, alpha=alpha, **options)
        s.name = f"plan-{alpha}"
        return s
    factory.__name__ = f"plan_{alpha}"
    sig = inspect.signature(PlanScheduler)   # its options but alpha, for `burstbuffer policies`
    factory.__signature__ = sig.replace(parameters=[p for n, p in sig.parameters.items() if n != "alpha"])
    factory.__doc__ = f"`plan-{alpha}`: plan-based scheduling with α = {alpha} (Kopanski & Rzadca 2021, §3.3)."
    return factory


#: name → factory(platform, *, seed=0, **options) -> Scheduler
POLICIES: dict[str, Callable[..., Scheduler]] = {
    "fcfs": Fcfs,
    "fcfs-easy": FcfsEasy,
    "filler": Filler,
    "fcfs-bb": FcfsBB,
    "sjf-bb": SjfBB,
    "plan-1": _plan_alpha(1),
    "plan-2": _plan_alpha(2),
    "plan-3": _plan_alpha(3),
    "plan": PlanScheduler,
    "conservative-bb": ConservativeBB,
}


def policy_names() -> list[str]:
    """Registered policy names, sorted."""
    return sorted(POLICIES)


def make_scheduler(name: str, platform: Platform, *, seed: int = 0, **options) -> Scheduler:
    """Build the scheduler of policy `name` for `platform`.

    `options` are passed to the factory (for the profile-based policies: ``period`` [s] and
    ``overdue_grace`` [s], see `ProfileScheduler`; for the plan policies also ``alpha``,
    ``cooling_rate``, ``cooling_steps``, ``temperature_steps``, ``exhaustive_limit``, ``native``,
    see `PlanScheduler`). `seed` seeds the policy's private `random.Random` (the only source of
    randomness). `name` may also be an entry point of ``burstbuffer.policies``, ``MODULE:CLASS`` or
    ``FILE.py:CLASS`` (`burstbuffer.schedulers.resolve`). Raises `resolve.PolicyError` (a ValueError,
    one line) if `name` cannot be resolved; the factory raises TypeError/ValueError on bad options.
    """
    factory = POLICIES.get(name)
    if factory is None:
        from .resolve import resolve_policy
        factory = resolve_policy(name).factory
    return factory(platform, seed=seed, **options)
