"""The queue order of a profile-based policy (docs/orders-and-queues.md): in which order `_ordered` lists the
queue — an order of `orders.ORDERS`, by default submission order — and, with named queues (`queues.QueueConfig`),
each job's queue, its priority and whether its queue may start it (`_eligible`). One of the four concerns of
`ProfileScheduler`, an object it owns (``_orders``) with its own state: it is given the submission indices it
sorts by."""
from __future__ import annotations

from ..base import Job
from ..options import Custom, Number, Option, order_check, order_params_check, queues_check
from ..orders import Order, make_order
from ..queues import Queue, queue_config

__all__ = ["ORDER_OPTIONS", "QUEUE_OPTIONS", "QueueOrder"]


#: the options of a policy that orders its queue (the window policies: their base order)
ORDER_OPTIONS = (
    Option("order", Custom(order_check, "str", ""),
           "queue order (the window's base order for the window policies): fcfs, sjf, ljf, small, large, "
           "bb-small, bb-large, wfp (null: fcfs; docs/orders-and-queues.md)", nullable=True, flag="--order",
           metavar="NAME"),
    Option("order_params", Custom(order_params_check, "table", ""),
           "parameters of the wfp order [s]: period 15, unit 60 (--wfp-unit), wall_floor 3600, wall_ceiling 43200",
           nullable=True, flag="--wfp-unit", metavar="S", flag_key="unit", flag_kind=Number(0, open_low=True)),
    Option("walltime_factor", Number(1),
           "the policy sees every requested walltime × this factor (holds, reservations, orders, queue routing); "
           "jobs still run and are killed under their own walltime"),
)


#: the options of a queue-based policy: an order, named queues
QUEUE_OPTIONS = ORDER_OPTIONS + (
    Option("queues", Custom(queues_check, "path or table", ""),
           "named queues: routing, limits, per-queue order (a TOML file such as workloads/mira-like-queues.toml; "
           "docs/orders-and-queues.md; null: one queue); adds queue and priority to jobs.csv",
           nullable=True, flag="--queues", metavar="FILE"),
)


class QueueOrder:
    """The queue order and named queues of a `ProfileScheduler` (module docstring), owned as ``_orders``.

    Args:
        nb_compute: number of compute nodes (a queue's share of the machine, the wfp order's scale).
        order: an `orders.ORDERS` name or an `Order` (None: fcfs, submission order).
        queues: a `QueueConfig` or what `queues.queue_config` turns into one (None: one queue).
        params: parameters of the wfp order.

    Raises ValueError on an unknown order or bad parameters, or queues of one rank with different orders.

    Attributes: order (`Order`); queues (`QueueConfig` or None); plain (True: queue order = submission order, one
    queue); job_facts (job id → (queue name, priority at start) of every started job, for jobs.csv)."""

    def __init__(self, nb_compute: int, order, queues, params: dict) -> None:
        self.nb_compute = n = nb_compute

        def mk(o):
            name = o.name if isinstance(o, Order) else (o or "fcfs")
            return make_order(o, n, **(params if name == "wfp" else {}))

        self.order: Order = mk(order)
        queues = queue_config(queues)
        self.queues = queues
        self._queue_of: dict[str, Queue] = {}
        self._held_by_queue: dict[str, int] = {}
        self._rank_order: dict[int, Order] = {}
        if queues is not None:
            for q in queues.queues:
                self._held_by_queue[q.name] = 0
                name = queues.order_of(q, self.order.name)
                if q.rank not in self._rank_order:
                    self._rank_order[q.rank] = self.order if name == self.order.name else mk(name)
                elif self._rank_order[q.rank].name != name:
                    raise ValueError(f"queues {queues.source}: queues of one rank have different orders")
        self.plain = queues is None and self.order.name == "fcfs"
        self.job_facts: dict[str, tuple[str, float | None]] = {}

    @property
    def rank_orders(self) -> list[Order]:
        """The order of each queue rank (empty without queues)."""
        return list(self._rank_order.values())

    @property
    def extra_job_columns(self) -> list[str]:
        """Columns this run adds to jobs.csv: ["queue", "priority"] with queues or a priority order
        (wfp), else none (jobs.csv stays as without orders; docs/orders-and-queues.md)."""
        if self.queues is not None or self.order.name == "wfp" or any(
                o.name == "wfp" for o in self._rank_order.values()):
            return ["queue", "priority"]
        return []

    def route_reason(self, job: Job) -> str | None:
        """None if a queue takes `job` (always without queues), else why none does."""
        if self.queues is None:
            return None
        q, why = self.queues.route(job, self.nb_compute)
        return None if q is not None else why

    def admit(self, job: Job) -> None:
        """`job` is queued: its queue is chosen (with queues)."""
        if self.queues is not None:
            self._queue_of[job.id] = self.queues.route(job, self.nb_compute)[0]

    def queue_name(self, job: Job) -> str:
        """The name of `job`'s queue ("" without queues)."""
        return self._queue_of[job.id].name if self.queues is not None else ""

    def ordered(self, jobs, submission: dict[str, int], now: float) -> list[Job]:
        """`jobs` (in submission order) in queue order at `now` (ties: submission order, `submission`: job id →
        its index; backfill-queue jobs after every production job)."""
        if self.plain:
            return list(jobs)
        if self.queues is None:
            key = self.order.key
            return sorted(jobs, key=lambda j: key(j, now, submission[j.id]))
        return sorted(jobs, key=lambda j: (self._queue_of[j.id].rank,
                                           *self._rank_order[self._queue_of[j.id].rank].key(j, now, submission[j.id])))

    def eligible(self, job: Job, extra: dict[str, int] | None = None) -> bool:
        """False if starting `job` now would take its queue past its share of the machine
        (`extra`: processors of the queue's jobs about to start, not yet counted)."""
        if self.queues is None:
            return True
        q = self._queue_of[job.id]
        held = self._held_by_queue[q.name] + (extra.get(q.name, 0) if extra else 0)
        return held + job.res <= q.cap(self.nb_compute)

    def priority(self, job: Job, now: float) -> float | None:
        """`job`'s priority at `now` under its queue's order (None: an order without priorities)."""
        if self.queues is None:
            return self.order.priority(job, now)
        return self._rank_order[self._queue_of[job.id].rank].priority(job, now)

    def started(self, job: Job, now: float) -> None:
        """`job` starts now: its queue holds its processors; its queue and priority go to `job_facts`."""
        if self.queues is not None:
            q = self._queue_of[job.id]
            self._held_by_queue[q.name] += job.res
            self.job_facts[job.id] = (q.name, self.priority(job, now))
        elif not self.plain:
            self.job_facts[job.id] = ("", self.priority(job, now))

    def left(self, job_id: str, res: int | None) -> None:
        """`job_id` left: a queued job (`res` None) or a started one, whose queue gets back its `res` processors."""
        q = self._queue_of.pop(job_id, None)
        if q is not None and res is not None:
            self._held_by_queue[q.name] -= res
