"""The queue order of a profile-based policy (docs/orders-and-queues.md): in which order `_ordered` lists the
queue — an order of `orders.ORDERS`, by default submission order — and, with named queues (`queues.QueueConfig`),
each job's queue, its priority and whether its queue may start it (`_eligible`). One of the four concerns of
`ProfileScheduler`; the state it reads is set by `ProfileScheduler.__init__` (`_init_orders`)."""
from __future__ import annotations

from ..base import Job
from ..options import Custom, Number, Option, order_check, order_params_check, queues_check
from ..orders import Order, make_order
from ..queues import Queue, QueueConfig, queue_config

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
    """The queue order and named queues of a `ProfileScheduler` (module docstring)."""

    def _init_orders(self, order, queues: QueueConfig | None, params: dict) -> None:
        n = self.platform.nb_compute

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
        #: queue order = submission order, one queue: `_ordered` is the queue as it is
        self._plain = queues is None and self.order.name == "fcfs"
        #: per started job: (queue name, priority at start) for jobs.csv (`job_facts`)
        self.job_facts: dict[str, tuple[str, float | None]] = {}

    @property
    def extra_job_columns(self) -> list[str]:
        """Columns this run adds to jobs.csv: ["queue", "priority"] with queues or a priority order
        (wfp), else none (jobs.csv stays as without orders; docs/orders-and-queues.md)."""
        if self.queues is not None or self.order.name == "wfp" or any(
                o.name == "wfp" for o in self._rank_order.values()):
            return ["queue", "priority"]
        return []

    def _order_key(self, job: Job, now: float) -> tuple:
        seq = self._submission[job.id]
        if self.queues is None:
            return self.order.key(job, now, seq)
        q = self._queue_of[job.id]
        return (q.rank, *self._rank_order[q.rank].key(job, now, seq))

    def _ordered(self, now: float) -> list[Job]:
        """The queued jobs in queue order at `now` (ties: submission order; backfill-queue jobs
        after every production job)."""
        if self._plain:
            return list(self._queue.values())
        return sorted(self._queue.values(), key=lambda j: self._order_key(j, now))

    def _eligible(self, job: Job, extra: dict[str, int] | None = None) -> bool:
        """False if starting `job` now would take its queue past its share of the machine
        (`extra`: processors of the queue's jobs about to start, not yet counted)."""
        if self.queues is None:
            return True
        q = self._queue_of[job.id]
        held = self._held_by_queue[q.name] + (extra.get(q.name, 0) if extra else 0)
        return held + job.res <= q.cap(self.platform.nb_compute)

    def _priority(self, job: Job, now: float) -> float | None:
        if self.queues is None:
            return self.order.priority(job, now)
        return self._rank_order[self._queue_of[job.id].rank].priority(job, now)

    def _submission_index(self, job: Job) -> int:
        return self._submission[job.id]
