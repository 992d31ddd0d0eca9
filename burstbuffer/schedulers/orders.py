"""Queue orders: which queued job comes first (the head job, the reservation order, the backfill order).

An order is an object with ``key(job, now, seq) -> tuple``: jobs are visited by ascending key. Every
key ends with the job's submission index `seq`, so ties are broken by submission order and every
order is a total, deterministic order. Registry: `ORDERS` (name → factory), `make_order`,
`order_names`; the queue-based policies (fcfs, fcfs-easy, filler, fcfs-bb, sjf-bb, conservative-bb)
take ``order=NAME`` (docs/orders-and-queues.md).

Orders (Casanova, ICS 632 slides "Job Scheduling": SJF/LJF/size orders; Allcock et al., Argonne, §4):
- ``fcfs``: submission order.
- ``sjf`` / ``ljf``: requested walltime ascending / descending.
- ``small`` / ``large``: processors requested ascending / descending.
- ``bb-small`` / ``bb-large``: total burst-buffer request (res × bb bytes) ascending / descending.
- ``wfp``: Cobalt's utility function (Allcock et al., "Experience and Practice of Batch Scheduling
  on Leadership Supercomputers at Argonne", §4 eq. 1, §4.3.3-4.3.4): highest priority first.
"""
from __future__ import annotations

import math
from typing import Callable

from .base import Job

__all__ = ["Order", "KeyOrder", "Wfp", "ORDERS", "make_order", "order_names"]


class Order:
    """Base of the queue orders. `name`: registry name; `dynamic`: the key depends on `now`."""

    name = "?"
    dynamic = False

    def key(self, job: Job, now: float, seq: int) -> tuple:  # pragma: no cover - abstract
        raise NotImplementedError

    def priority(self, job: Job, now: float) -> float | None:
        """The job's numeric priority at `now` (None for orders without one); reported in jobs.csv."""
        return None


class KeyOrder(Order):
    """A static order by ``f(job)`` ascending, ties by submission index."""

    def __init__(self, name: str, f: Callable[[Job], float]):
        self.name = name
        self._f = f

    def key(self, job: Job, now: float, seq: int) -> tuple:
        return (self._f(job), seq)


class Fcfs(Order):
    """Submission order (the key is the submission index)."""

    name = "fcfs"

    def key(self, job: Job, now: float, seq: int) -> tuple:
        return (seq,)


class Wfp(Order):
    """Cobalt's WFP utility (Allcock et al., Argonne, §4 eq. 1).

    At every scheduling iteration (a tick, every `period` seconds of simulated time: the global
    multiples of `period`), each queued job's priority grows by

        ((queued_time − hold_time) / unit)² / (score_wall_time / unit)³ × (size / max_size) × weight

    with queued_time − hold_time the job's eligible time at that tick [s] (no holds here: the time
    since submission), score_wall_time the requested walltime clamped to [wall_floor, wall_ceiling]
    (§4.3.4: 1 h and 12 h), size the processors requested, max_size the machine's processors, and
    weight the job's project weight (1 unless the job carries one, `Job.weight`).

    The priority at `now` is the sum of the increments of the ticks τ with subtime < τ ≤ now (the
    priority is evaluated at ticks: it is constant between two ticks, the "floor" of a continuous
    accrual). It is computed in closed form: with n ticks, first eligible time e0 and step d (in
    `unit`), Σ_{i<n} (e0 + i·d)² = n·e0² + e0·d·n(n−1) + d²·(n−1)n(2n−1)/6 — exactly the sum of the
    15-s increments, with no timer.

    Args:
        max_size: MAX_SIZE, the machine's processor count (> 0).
        period: the scheduling iteration [s] (Cobalt: 15 s).
        unit: the time unit of eq. 1 [s]. The paper does not state it; its §4.3.3 example (a 5-minute
            walltime grows superlinearly after √(5³) = 11.2 minutes) implies minutes: 60 s.
        wall_floor / wall_ceiling: the clamp of score_wall_time [s] (§4.3.4); None disables one side
            (as before §4.3.4).
    Raises ValueError on a non-positive max_size, period or unit, or floor > ceiling.
    """

    name = "wfp"
    dynamic = True

    def __init__(self, max_size: int, *, period: float = 15.0, unit: float = 60.0,
                 wall_floor: float | None = 3600.0, wall_ceiling: float | None = 43200.0):
        if not max_size > 0:
            raise ValueError(f"wfp: MAX_SIZE must be > 0, got {max_size!r}")
        if not period > 0:
            raise ValueError(f"wfp: period must be > 0 seconds, got {period!r}")
        if not unit > 0:
            raise ValueError(f"wfp: unit must be > 0 seconds, got {unit!r}")
        if wall_floor is not None and wall_ceiling is not None and wall_floor > wall_ceiling:
            raise ValueError(f"wfp: walltime floor {wall_floor} s exceeds the ceiling {wall_ceiling} s")
        self.max_size = max_size
        self.period = float(period)
        self.unit = float(unit)
        self.wall_floor = wall_floor
        self.wall_ceiling = wall_ceiling

    def score_wall_time(self, walltime: float) -> float:
        """Requested walltime [s] clamped to [wall_floor, wall_ceiling] (§4.3.4)."""
        w = walltime
        if self.wall_floor is not None:
            w = max(w, self.wall_floor)
        if self.wall_ceiling is not None:
            w = min(w, self.wall_ceiling)
        return w

    def increment(self, job: Job, eligible: float) -> float:
        """Eq. 1: the priority increment of one tick at which the job has been eligible `eligible` s."""
        sw = self.score_wall_time(job.walltime) / self.unit
        return (eligible / self.unit) ** 2 / sw ** 3 * (job.res / self.max_size) * job.weight

    def ticks(self, subtime: float, now: float) -> tuple[int, float]:
        """(number of ticks τ with subtime < τ ≤ now, eligible time at the first of them [s])."""
        p = self.period
        first = math.floor(subtime / p) + 1
        last = math.floor(now / p)
        n = last - first + 1
        if n <= 0:
            return 0, 0.0
        return n, first * p - subtime

    def priority(self, job: Job, now: float) -> float:
        """Priority at `now` (0 before the first tick after submission): the closed-form sum of eq. 1."""
        n, e0 = self.ticks(job.subtime, now)
        if n == 0:
            return 0.0
        e0 /= self.unit
        d = self.period / self.unit
        s = n * e0 * e0 + e0 * d * n * (n - 1) + d * d * (n - 1) * n * (2 * n - 1) / 6.0
        sw = self.score_wall_time(job.walltime) / self.unit
        return s / sw ** 3 * (job.res / self.max_size) * job.weight

    def key(self, job: Job, now: float, seq: int) -> tuple:
        return (-self.priority(job, now), seq)


def _static(name: str, f: Callable[[Job], float]) -> Callable[..., Order]:
    def factory(max_size: int = 0, **params) -> Order:
        if params:
            raise ValueError(f"order {name} takes no parameter ({', '.join(sorted(params))} given)")
        return KeyOrder(name, f)
    return factory


def _fcfs(max_size: int = 0, **params) -> Order:
    if params:
        raise ValueError(f"order fcfs takes no parameter ({', '.join(sorted(params))} given)")
    return Fcfs()


#: name → factory(max_size, **params) -> Order (params: only wfp's period, unit, wall_floor, wall_ceiling)
ORDERS: dict[str, Callable[..., Order]] = {
    "fcfs": _fcfs,
    "sjf": _static("sjf", lambda j: j.walltime),
    "ljf": _static("ljf", lambda j: -j.walltime),
    "small": _static("small", lambda j: j.res),
    "large": _static("large", lambda j: -j.res),
    "bb-small": _static("bb-small", lambda j: j.bb_total),
    "bb-large": _static("bb-large", lambda j: -j.bb_total),
    "wfp": lambda max_size, **params: Wfp(max_size, **params),
}


def order_names() -> list[str]:
    """Registered order names, in registry order."""
    return list(ORDERS)


def make_order(order: str | Order | None, max_size: int, **params) -> Order:
    """An `Order` from a registry name (or an `Order`, returned as is; None → fcfs).

    `max_size`: the machine's processors (wfp's MAX_SIZE). Raises ValueError naming the valid
    orders for an unknown name, or on bad parameters."""
    if isinstance(order, Order):
        return order
    name = order or "fcfs"
    try:
        factory = ORDERS[name]
    except KeyError:
        raise ValueError(f"unknown order {name!r}; valid orders: {', '.join(ORDERS)}") from None
    return factory(max_size, **params)
