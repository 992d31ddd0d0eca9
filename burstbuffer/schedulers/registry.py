"""Policy name → scheduler factory (docs/policies.md names).

`make_scheduler("fcfs-bb", platform, seed=0)` is what the CLI and the decision loop call; new
policy families register themselves by adding to `POLICIES`.

Plan-based policies (Kopanski & Rzadca 2021, §3.3): ``plan-1``, ``plan-2``, ``plan-3`` fix α = 1, 2, 3;
``plan`` takes any α > 0 as the option ``alpha`` (default 2), e.g.
``make_scheduler("plan", platform, alpha=1.5)``. Their other options: ``cooling_rate`` (r),
``cooling_steps`` (N), ``temperature_steps`` (M), ``exhaustive_limit``, ``native``, and on the three-phase
model ``staging`` / ``staging_bandwidth`` (see `PlanScheduler`, `holds`). ``conservative-bb`` is conservative backfilling with processor + BB reservations.

Window policies (Fan et al. 2019, BBSched, and its §4.3 baselines; `burstbuffer.schedulers.bbsched`,
docs/bbsched.md): ``bbsched``, ``bbsched-exact``, ``bbsched-nsga2``, ``bbsched-naive``, ``weighted``,
``weighted-cpu``, ``weighted-bb``, ``constrained-cpu``, ``constrained-bb``, ``bin-packing``; options
``window``, ``starvation_bound``, ``record_gd`` and, for the GA policies, ``population``,
``generations``, ``mutation_rate``.

The queue-based policies (`QUEUE_POLICIES`) also take ``order`` (a name of `orders.ORDERS`),
``queues`` (a `queues.QueueConfig`, a TOML path or ``{"path": FILE, "order": NAME}``,
`queues.queue_config`) and ``order_params`` (wfp's parameters); the window policies ``order`` (their base
order) and ``order_params``; the EASY family
(`EASY_POLICIES`) ``reservation_depth`` (K ≥ 1 or "all": `depth.DepthBackfilling`) and
``easy_extra_nodes`` (docs/orders-and-queues.md).
"""
from __future__ import annotations

import inspect
from typing import Callable

from ..platforms.model import Platform
from .base import Scheduler
from .bbsched import WINDOW_POLICIES
from .cerberus import Cerberus
from .conservative import ConservativeBB
from .depth import DepthBackfilling
from .plan import PlanScheduler
from .easy import Fcfs, FcfsBB, FcfsEasy, Filler, SjfBB
from .slurm_bb import SlurmBB

__all__ = ["POLICIES", "QUEUE_POLICIES", "EASY_POLICIES", "THREE_PHASE_POLICIES", "all_policy_names",
           "make_scheduler", "needs_three_phase", "policy_names"]

#: policies that take ``order`` / ``queues`` / ``order_params``
QUEUE_POLICIES = ("fcfs", "fcfs-easy", "filler", "fcfs-bb", "sjf-bb", "conservative-bb")
#: policies that also take ``reservation_depth`` and ``easy_extra_nodes``
EASY_POLICIES = ("fcfs-easy", "fcfs-bb", "sjf-bb")


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


def _easy(cls) -> Callable[..., Scheduler]:
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


#: name → factory(platform, *, seed=0, **options) -> Scheduler
POLICIES: dict[str, Callable[..., Scheduler]] = {
    "fcfs": Fcfs,
    "fcfs-easy": _easy(FcfsEasy),
    "filler": Filler,
    "fcfs-bb": _easy(FcfsBB),
    "sjf-bb": _easy(SjfBB),
    "plan-1": _plan_alpha(1),
    "plan-2": _plan_alpha(2),
    "plan-3": _plan_alpha(3),
    "plan": PlanScheduler,
    "conservative-bb": ConservativeBB,
    **WINDOW_POLICIES,
}

#: Policies that decide stage-ins (`StageIn`) and need the ``three-phase`` job model (docs/io-model.md §3),
#: kept apart from `POLICIES` (which run under every job model).
THREE_PHASE_POLICIES: dict[str, Callable[..., Scheduler]] = {
    "cerberus": Cerberus,
    "slurm-bb": SlurmBB,
}


def all_policy_names() -> list[str]:
    """Every registered policy name: `POLICIES` then `THREE_PHASE_POLICIES`, each sorted."""
    return policy_names() + sorted(THREE_PHASE_POLICIES)


def needs_three_phase(name: str) -> bool:
    """True if policy `name` runs only under the ``three-phase`` job model."""
    return name in THREE_PHASE_POLICIES


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
    factory = POLICIES.get(name) or THREE_PHASE_POLICIES.get(name)
    if factory is None:
        from .resolve import resolve_policy
        factory = resolve_policy(name).factory
    return factory(platform, seed=seed, **options)
