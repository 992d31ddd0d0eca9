"""The base of the policies on the availability profile (`ProfileScheduler`): queue, running jobs, holds.

Every policy of docs/policies.md is a few lines on top of `ProfileScheduler` (docs/README.md): the decision loop
drives `submit` / `job_ended` / `decide` (the `Scheduler` contract of `base.py`); the subclass only
implements `_schedule(now)`, calling `_fits_now`, `_start`, `_reserve` and `_unreserve`. The class has one
base (`Scheduler`) and owns one object per concern, a module each, each with its own state and a small
interface, none reading another's attributes: the queue order (`queue_order.QueueOrder`), the head job's
reservation (`reservations.Reservations`), the staged lifecycle (`staging.StagedLifecycle`), the reservation
book (`book`: the reservations kept from one decision to the next) and the wait-reason log (`wait_reasons`);
`scheduler` holds the queue, the running jobs and the decision, and passes each object what it needs.

Running jobs hold their processors and BB bytes in the profile from their start until
start + walltime (their expected end, pessimistic as in EASY); a job that ends early gives back the
rest of its hold. A job still running at its expected end (possible in the I/O-aware model, whose
drains are not bounded by the walltime) keeps its resources: at each call its hold is extended to
``now + overdue_grace``.

Why a job waits (docs/wait-reasons.md): at the end of each `decide`, `wait_reasons` maps every job still
queued to one reason. A queue limit recorded in `limit_reasons` (hook for queue / QOS limits) comes
first; else, with F0 the free processors and BB bytes now before the decision started any job:
Resources (it asks more processors than F0), BurstBufferResources (F0's processors suffice, its BB
shares do not); else Priority if jobs started by this decision before it was looked at took what it
needed; else Reservation while the EASY head job's reservation is held (the backfill window), or the
policy's `blocked_reason` otherwise. The passes note the reason of a job when they look at it
(`_note_wait`, `WaitLog.reason`); jobs they never looked at are classified after the decision. Cost: one O(log n)
profile look-up per decision plus one per job that was looked at and not started, and a few vector
operations over the queue (`wait_table`): the decision loop gets only the jobs whose reason changed.
"""
from .queue_order import ORDER_OPTIONS, QUEUE_OPTIONS, QueueOrder
from .reservations import Reservation, Reservations
from .scheduler import ProfileScheduler, Running
from .staging import StagedHold, StagedLifecycle
from .book import PlannedHold, ReservationBook
from .wait_reasons import WaitLog

__all__ = ["ORDER_OPTIONS", "ProfileScheduler", "QUEUE_OPTIONS", "QueueOrder", "Reservation", "Reservations",
           "PlannedHold", "ReservationBook", "Running", "StagedHold", "StagedLifecycle", "WaitLog"]
