"""Factories that wrap a policy class for `burstbuffer.schedulers.registry`: ``plan-N`` (α fixed) and the
EASY family (`DepthBackfilling` when a reservation depth is given)."""
from __future__ import annotations

import inspect
from typing import Callable

from ..platforms.model import Platform
from .base import Scheduler
from .depth import DepthBackfilling
from .plan import PlanScheduler

__all__ = ["easy", "plan_alpha"]


def plan_alpha(alpha: int) -> Callable[..., Scheduler]:
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


def easy(cls) -> Callable[..., Scheduler]:
    """Factory of an EASY-family policy: `cls`, or `DepthBackfilling` when ``reservation_depth`` is given."""
    def factory(platform: Platform, *, seed: int = 0, reservation_depth=None, easy_extra_nodes: bool = False,
                **options) -> Scheduler:
        if reservation_depth is None:
            return cls(platform, seed=seed, easy_extra_nodes=easy_extra_nodes, **options)
        if easy_extra_nodes:
            raise ValueError("easy_extra_nodes applies to EASY's one reservation, not to a reservation depth")
        return DepthBackfilling(platform, seed=seed, reservation_depth=reservation_depth, reserve_bb=cls.reserve_bb,
                                sjf_backfill=cls.sjf, name=cls.name, **options)
    factory.__name__ = cls.__name__
    factory.__doc__ = cls.__doc__
    return factory
