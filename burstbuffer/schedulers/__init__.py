"""Scheduling policies over an availability profile of processors and burst buffers (docs/policies.md).

Public API: `make_scheduler(name, platform, seed=0, **options)`, `POLICIES`, the `Scheduler`
interface (`base`), `Job`, `Start`, and `AvailabilityProfile` for policy authors; queue orders
(`orders`), named queues (`queues`) and the reservation depth (`depth`): docs/orders-and-queues.md;
`Policy` (`api`), the stable base of a user policy, and `resolve_policy` (`resolve`), which turns a name,
``MODULE:CLASS`` or ``FILE.py:CLASS`` into a factory (docs/writing-a-policy.md).
"""
from .base import Job, Scheduler, Start
from .profile import AvailabilityProfile, Fit
from .profiled import ProfileScheduler, Reservation
from .easy import EasyBackfilling, Fcfs, FcfsBB, FcfsEasy, Filler, SjfBB
from .plan import PlanScheduler
from .conservative import ConservativeBB
from .depth import DepthBackfilling
from .orders import ORDERS, Order, make_order, order_names
from .queues import Queue, QueueConfig, load_queues
from .registry import EASY_POLICIES, POLICIES, QUEUE_POLICIES, policy_names
from .api import Policy
from .resolve import PolicyError, PolicyInfo, all_policies, make_scheduler, resolve_policy

__all__ = [
    "Job", "Scheduler", "Start", "AvailabilityProfile", "Fit", "ProfileScheduler", "Reservation",
    "EasyBackfilling", "Fcfs", "FcfsBB", "FcfsEasy", "Filler", "SjfBB", "PlanScheduler", "ConservativeBB",
    "POLICIES", "make_scheduler", "policy_names", "DepthBackfilling", "ORDERS", "Order", "make_order",
    "order_names", "Queue", "QueueConfig", "load_queues", "EASY_POLICIES", "QUEUE_POLICIES",
    "Policy", "PolicyError", "PolicyInfo", "all_policies", "resolve_policy",
]
