"""Scheduling policies over an availability profile of processors and burst buffers (docs/policies.md).

Public API: `make_scheduler(name, platform, seed=0, **options)`, `POLICIES`, the `Scheduler`
interface (`base`), `Job`, `Start`, and `AvailabilityProfile` for policy authors.
"""
from .base import Job, Scheduler, Start
from .profile import AvailabilityProfile, Fit
from .profiled import ProfileScheduler, Reservation
from .policies import EasyBackfilling, Fcfs, FcfsBB, FcfsEasy, Filler, SjfBB
from .plan import PlanScheduler
from .conservative import ConservativeBB
from .registry import POLICIES, make_scheduler, policy_names

__all__ = [
    "Job", "Scheduler", "Start", "AvailabilityProfile", "Fit", "ProfileScheduler", "Reservation",
    "EasyBackfilling", "Fcfs", "FcfsBB", "FcfsEasy", "Filler", "SjfBB", "PlanScheduler", "ConservativeBB",
    "POLICIES", "make_scheduler", "policy_names",
]
