"""Reservation depth K: the BB-aware EASY family with reservations for the first K queued jobs
(``reservation_depth``, an option of `easy.EasyBackfilling`, whose `_depth_schedule` this describes).

EASY (Kopański & Rzadca, Euro-Par 2021, Algorithm 1; Casanova's ICS 632 slides, "EASY Backfilling") reserves for one job, the head;
conservative backfilling (the same slides, "Conservative Backfilling") for every queued job. Depth K sits
between them: walking the queue in its order, every job takes its earliest fit (processors and, for
fcfs-bb / sjf-bb, BB) until K jobs hold a reservation in the future; the jobs whose fit is now are
started; the remaining jobs are backfilled (in queue order, or by ascending walltime for sjf-bb) if
they fit now around the K reservations.

Reservations persist between decisions as in `conservative-bb` (the scheduler's reservation book,
`profile_scheduler.book`): at each decision the previous
reservations are put back, then each of the first jobs, in queue order, gives up its own and takes
its earliest fit around all the others (compression: never later). So no reservation is ever delayed
by a job that did not hold one. Hence:
- K = 1 with the submission order is EASY exactly (fcfs-easy, fcfs-bb, sjf-bb): the head is the
  first job that does not fit and no other queued job ever holds a reservation;
- K ≥ number of queued jobs ("all") is conservative backfilling: `conservative-bb`'s schedule
  (tests/test_orders.py checks both on generated workloads).
With another order a job that overtakes the head is placed around the head's old reservation.
"""
from __future__ import annotations

import math

__all__ = ["parse_depth"]


def parse_depth(value) -> float:
    """K from an int ≥ 1 or "all" (→ math.inf). Raises ValueError otherwise."""
    if isinstance(value, str):
        if value.strip().lower() == "all":
            return math.inf
        try:
            value = int(value)
        except ValueError:
            raise ValueError(f"reservation depth must be a positive integer or 'all', got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 1 or (
            value != math.inf and int(value) != value):
        raise ValueError(f"reservation depth must be a positive integer or 'all', got {value!r}")
    return value
