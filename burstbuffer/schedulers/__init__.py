"""Scheduling policies over an availability profile of processors and burst buffers (docs/policies.md).

Public API: `make_scheduler(name, platform, seed=0, **options)`, `POLICIES` (name → `Preset`: an algorithm's
class with some of its options set), the `Scheduler`
interface (`base`), `Job`, `Start`, and `AvailabilityProfile` for policy authors; queue orders
(`orders`), named queues (`queues`) and the reservation depth (`depth`, an option of `EasyBackfilling`): docs/orders-and-queues.md;
`Policy` (`api`), the stable base of a user policy, and `resolve_policy` (`resolve`), which turns a name,
``MODULE:CLASS`` or ``FILE.py:CLASS`` into a policy class (docs/writing-a-policy.md).
"""
#: public name → the submodule defining it; imported on first use (PEP 562), so that importing a
#: submodule (e.g. `schedulers.options` while the command line is parsed) does not import them all.
_WHERE = {
    "Job": "base", "Scheduler": "base", "Start": "base", "AvailabilityProfile": "profile", "Fit": "profile",
    "ProfileScheduler": "profile_scheduler", "Reservation": "profile_scheduler", "EasyBackfilling": "easy",
    "FcfsPolicy": "easy", "Filler": "easy", "PlanScheduler": "plan", "ConservativeBB": "conservative",
    "Preset": "registry", "ORDERS": "orders", "Order": "orders", "make_order": "orders",
    "order_names": "orders", "Queue": "queues", "QueueConfig": "queues", "load_queues": "queues",
    "POLICIES": "registry", "names_taking": "registry",
    "make_scheduler": "resolve", "policy_names": "registry", "Policy": "api", "PolicyError": "resolve",
    "PolicyInfo": "resolve", "all_policies": "resolve", "resolve_policy": "resolve",
}

__all__ = [
    "Job", "Scheduler", "Start", "AvailabilityProfile", "Fit", "ProfileScheduler", "Reservation",
    "EasyBackfilling", "FcfsPolicy", "Filler", "PlanScheduler", "ConservativeBB",
    "POLICIES", "Preset", "make_scheduler", "policy_names", "ORDERS", "Order", "make_order",
    "order_names", "Queue", "QueueConfig", "load_queues", "names_taking",
    "Policy", "PolicyError", "PolicyInfo", "all_policies", "resolve_policy",
]


from ..lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals(), __all__)
