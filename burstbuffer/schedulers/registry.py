"""Policy name → scheduler factory (docs/policies.md names): data only, and lookups.

`POLICIES` and `THREE_PHASE_POLICIES` map a name to ``factory(platform, *, seed=0, **options)``; new
policy families register themselves by adding to `POLICIES`. Building a scheduler from a name (or from a
``MODULE:CLASS`` spec) is `burstbuffer.schedulers.resolve.make_scheduler`; the factories that wrap a class
(plan-N, the EASY family) are in `burstbuffer.schedulers.factories`; the options each policy takes are
declared once in `burstbuffer.schedulers.options` (docs/policy-options.md).

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

from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Callable

from ..lazy import LazyRegistry

if TYPE_CHECKING:
    from .base import Scheduler

__all__ = ["POLICIES", "QUEUE_POLICIES", "EASY_POLICIES", "THREE_PHASE_POLICIES", "WINDOW_POLICIES",
           "all_policy_names", "needs_three_phase", "policy_names"]

#: policies that take ``order`` / ``queues`` / ``order_params``
QUEUE_POLICIES = ("fcfs", "fcfs-easy", "filler", "fcfs-bb", "sjf-bb", "conservative-bb")
#: policies that also take ``reservation_depth`` and ``easy_extra_nodes``
EASY_POLICIES = ("fcfs-easy", "fcfs-bb", "sjf-bb")

_S = "burstbuffer.schedulers."
#: the window policies (Fan et al. 2019 and its §4.3 baselines): name → class in `bbsched`
_WINDOW = {"bbsched": "BBSched", "bbsched-exact": "BBSchedExact", "bbsched-nsga2": "BBSchedNSGA2",
           "bbsched-naive": "Naive", "weighted": "Weighted", "weighted-cpu": "WeightedCPU",
           "weighted-bb": "WeightedBB", "constrained-cpu": "Constrained", "constrained-bb": "ConstrainedBB",
           "bin-packing": "BinPacking"}
#: the window policies' names (options they take: `burstbuffer.schedulers.options`)
WINDOW_POLICIES = tuple(_WINDOW)


def _easy(cls: str) -> Callable[[], Callable[..., "Scheduler"]]:
    def load():
        from . import easy
        from .factories import easy as wrap
        return wrap(getattr(easy, cls))
    return load


def _plan(alpha: int) -> Callable[[], Callable[..., "Scheduler"]]:
    def load():
        from .factories import plan_alpha
        return plan_alpha(alpha)
    return load


#: name → factory(platform, *, seed=0, **options) -> Scheduler; each built-in imported on first look-up
#: (`burstbuffer.lazy.LazyRegistry`: listing the names imports no policy module, nor numpy)
POLICIES: MutableMapping[str, Callable[..., "Scheduler"]] = LazyRegistry({
    "fcfs": (_S + "easy", "Fcfs"),
    "fcfs-easy": _easy("FcfsEasy"),
    "filler": (_S + "easy", "Filler"),
    "fcfs-bb": _easy("FcfsBB"),
    "sjf-bb": _easy("SjfBB"),
    "plan-1": _plan(1),
    "plan-2": _plan(2),
    "plan-3": _plan(3),
    "plan": (_S + "plan", "PlanScheduler"),
    "conservative-bb": (_S + "conservative", "ConservativeBB"),
    **{name: (_S + "bbsched", cls) for name, cls in _WINDOW.items()},
})

#: Policies that decide stage-ins (`StageIn`) and need the ``three-phase`` job model (docs/io-model.md §3),
#: kept apart from `POLICIES` (which run under every job model).
THREE_PHASE_POLICIES: MutableMapping[str, Callable[..., "Scheduler"]] = LazyRegistry({
    "cerberus": (_S + "cerberus", "Cerberus"),
    "cerberus-fcfs-24h": (_S + "cerberus", "CerberusFcfs24h"),
    "slurm-bb": (_S + "slurm_bb", "SlurmBB"),
})


def all_policy_names() -> list[str]:
    """Every registered policy name: `POLICIES` then `THREE_PHASE_POLICIES`, each sorted."""
    return policy_names() + sorted(THREE_PHASE_POLICIES)


def needs_three_phase(name: str) -> bool:
    """True if policy `name` runs only under the ``three-phase`` job model."""
    return name in THREE_PHASE_POLICIES


def policy_names() -> list[str]:
    """Registered policy names, sorted."""
    return sorted(POLICIES)
