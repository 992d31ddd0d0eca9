"""Named queues: routing by processors and walltime, per-queue limits and order (docs/orders-and-queues.md).

Modelled on Mira's queues under Cobalt (Allcock et al., "Experience and Practice of Batch Scheduling
on Leadership Supercomputers at Argonne", §3: prod-short, prod-long confined to a third of the
machine, prod-capability, backfill whose jobs never outrank production jobs).

A queue file is TOML::

    order = "wfp"                 # optional: the order of queues that name none (default: the policy's)

    [[queue]]
    name = "prod-long"            # required, unique
    min_procs = 1                 # routing and limit: processors requested in [min_procs, max_procs]
    max_procs = 19                #   (default: 1 .. the machine)
    min_walltime = 21600          # routing: walltime > min_walltime [s] (default 0)
    max_walltime = 86400          # routing and limit: walltime <= max_walltime [s] (default: none)
    max_share = 0.3333            # the queue's running jobs hold at most floor(max_share × processors)
    order = "wfp"                 # this queue's order (default: the file's, else the policy's)
    backfill = false              # true: its jobs never outrank a production (non-backfill) job
    route = true                  # false: only jobs that ask for it by name (Job.queue) enter

Routing: a job that names a queue (``Job.queue``) goes there if it meets that queue's limits; any
other job goes to the first queue, in file order, with ``route = true`` whose limits it meets. A job
that no queue accepts is rejected with a one-line reason (never dropped).
"""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from .base import Job

__all__ = ["Queue", "QueueConfig", "load_queues", "queue_config"]

_KEYS = {"name", "min_procs", "max_procs", "min_walltime", "max_walltime", "max_share", "order", "backfill",
         "route"}


@dataclass(frozen=True)
class Queue:
    """One queue. Walltimes in seconds; `max_share` a fraction of the machine's processors in (0, 1]."""

    name: str
    min_procs: int = 1
    max_procs: int | None = None
    min_walltime: float = 0.0
    max_walltime: float | None = None
    max_share: float = 1.0
    order: str | None = None
    backfill: bool = False
    route: bool = True

    @property
    def rank(self) -> int:
        """0 for a production queue, 1 for a backfill queue (ranked after every production job)."""
        return 1 if self.backfill else 0

    def cap(self, nb_procs: int) -> int:
        """Processors its running jobs may hold at once on a machine of `nb_procs` processors."""
        return math.floor(self.max_share * nb_procs + 1e-6)

    def refuses(self, job: Job, nb_procs: int) -> str | None:
        """None if `job` meets the queue's limits, else the reason (one line)."""
        hi = self.max_procs if self.max_procs is not None else nb_procs
        if not self.min_procs <= job.res <= hi:
            return f"{job.res} processors outside [{self.min_procs}, {hi}]"
        if not job.walltime > self.min_walltime:
            return f"walltime {job.walltime:g} s not above {self.min_walltime:g} s"
        if self.max_walltime is not None and job.walltime > self.max_walltime:
            return f"walltime {job.walltime:g} s above {self.max_walltime:g} s"
        if job.res > self.cap(nb_procs):
            return f"{job.res} processors above the queue's share ({self.cap(nb_procs)} processors)"
        return None


@dataclass(frozen=True)
class QueueConfig:
    """The queues of one file, in file order; `order`: the file's default order (None: the policy's)."""

    queues: tuple[Queue, ...]
    order: str | None = None
    source: str = "queues"

    def by_name(self, name: str) -> Queue | None:
        for q in self.queues:
            if q.name == name:
                return q
        return None

    def route(self, job: Job, nb_procs: int) -> tuple[Queue | None, str]:
        """(the queue of `job`, "") or (None, the one-line reason no queue accepts it)."""
        if job.queue:
            q = self.by_name(job.queue)
            if q is None:
                return None, f"asks for queue {job.queue!r}, which {self.source} does not define"
            why = q.refuses(job, nb_procs)
            return (q, "") if why is None else (None, f"queue {q.name}: {why}")
        reasons = []
        for q in self.queues:
            if not q.route:
                continue
            why = q.refuses(job, nb_procs)
            if why is None:
                return q, ""
            reasons.append(f"{q.name}: {why}")
        return None, "no queue accepts it (" + "; ".join(reasons) + ")"

    def order_of(self, q: Queue, default: str) -> str:
        """The order name of queue `q` given the policy's order `default`."""
        return q.order or self.order or default

    def check_orders(self, default: str) -> None:
        """Raise InputError if two queues of the same rank (production / backfill) resolve to different
        orders: their jobs are ranked in one list, so their keys must be comparable."""
        seen: dict[int, tuple[str, str]] = {}
        for q in self.queues:
            o = self.order_of(q, default)
            if q.rank in seen and seen[q.rank][1] != o:
                kind = "backfill" if q.rank else "production"
                raise InputError(self.source, f"queue {q.name}",
                                 f"order {o} differs from {seen[q.rank][1]} of {kind} queue {seen[q.rank][0]}; "
                                 f"{kind} queues share one order")
            seen.setdefault(q.rank, (q.name, o))


def _num(src: str, item: str, v, *, integer: bool = False, positive: bool = True):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and not isinstance(v, int)):
        raise InputError(src, item, f"expected {'an integer' if integer else 'a number'}, got {v!r}")
    if v != v:
        raise InputError(src, item, "expected a number, got nan")
    if positive and not v > 0:
        raise InputError(src, item, f"must be > 0, got {v!r}")
    return v


def load_queues(path: str | Path, order_names: list[str] | None = None) -> QueueConfig:
    """Read a queue file (format: module docstring). Raises InputError (file, item, reason) on a
    missing file, bad TOML, an unknown key or order, a bad value or a duplicate queue name."""
    from .orders import ORDERS
    src = str(path)
    valid = order_names if order_names is not None else list(ORDERS)
    from ..fileio import MAX_CONFIG_BYTES, read_input
    text = read_input(path, "queues", limit=MAX_CONFIG_BYTES)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(src, "TOML", str(exc)) from None
    except RecursionError:
        raise InputError(src, "TOML", "nested too deeply") from None
    extra = set(data) - {"order", "queue"}
    if extra:
        raise InputError(src, sorted(extra)[0], "unknown key (expected order, [[queue]])")
    default = data.get("order")
    if default is not None and default not in valid:
        raise InputError(src, "order", f"unknown order {default!r}; valid orders: {', '.join(valid)}")
    raw = data.get("queue")
    if not isinstance(raw, list) or not raw:
        raise InputError(src, "queue", "no [[queue]] table")
    queues: list[Queue] = []
    for i, t in enumerate(raw):
        if not isinstance(t, dict):
            raise InputError(src, f"queue #{i + 1}", f"expected a table ([[queue]]), got {type(t).__name__}")
        name = t.get("name")
        item = f"queue {name}" if isinstance(name, str) and name else f"queue #{i + 1}"
        if not isinstance(name, str) or not name:
            raise InputError(src, item, "needs a name")
        bad = set(t) - _KEYS
        if bad:
            raise InputError(src, item, f"unknown key {sorted(bad)[0]!r} (expected {', '.join(sorted(_KEYS))})")
        if any(q.name == name for q in queues):
            raise InputError(src, item, "defined twice")
        kw: dict = {"name": name}
        for k in ("min_procs", "max_procs"):
            if k in t:
                kw[k] = _num(src, f"{item}: {k}", t[k], integer=True)
        for k in ("max_walltime",):
            if k in t:
                kw[k] = float(_num(src, f"{item}: {k}", t[k]))
        if "min_walltime" in t:
            kw["min_walltime"] = float(_num(src, f"{item}: min_walltime", t["min_walltime"], positive=False))
            if not 0 <= kw["min_walltime"] < float("inf"):
                raise InputError(src, f"{item}: min_walltime", f"must be a finite number of seconds >= 0, got "
                                                               f"{kw['min_walltime']!r}")
        if "max_share" in t:
            s = _num(src, f"{item}: max_share", t["max_share"])
            if s > 1:
                raise InputError(src, f"{item}: max_share", f"a fraction of the machine in (0, 1], got {s!r}")
            kw["max_share"] = float(s)
        if "order" in t:
            if t["order"] not in valid:
                raise InputError(src, f"{item}: order", f"unknown order {t['order']!r}; valid orders: {', '.join(valid)}")
            kw["order"] = t["order"]
        for k in ("backfill", "route"):
            if k in t:
                if not isinstance(t[k], bool):
                    raise InputError(src, f"{item}: {k}", f"expected true or false, got {t[k]!r}")
                kw[k] = t[k]
        q = Queue(**kw)
        if q.max_procs is not None and q.max_procs < q.min_procs:
            raise InputError(src, item, f"max_procs {q.max_procs} < min_procs {q.min_procs}")
        if q.max_walltime is not None and q.max_walltime <= q.min_walltime:
            raise InputError(src, item, f"max_walltime {q.max_walltime:g} <= min_walltime {q.min_walltime:g}")
        queues.append(q)
    return QueueConfig(tuple(queues), default, src)


def queue_config(value) -> QueueConfig | None:
    """A `QueueConfig` from what a policy's ``queues`` option may hold (run options are JSON, so a study or a
    campaign names a file): None; a `QueueConfig` (returned as is); a TOML path (str or Path, `load_queues`);
    or an object ``{"path": FILE, "order": NAME}`` whose ``order`` replaces the file's default order (the
    order of its queues that name none; null: none, so the policy's ``order`` applies to them — used by
    ``reproduce --study orders`` to run the Mira-like queues under every order). Raises InputError for a
    bad file or order (`load_queues`), ValueError for any other value."""
    if value is None or isinstance(value, QueueConfig):
        return value
    if isinstance(value, (str, Path)):
        return load_queues(value)
    if isinstance(value, dict):
        extra = set(value) - {"path", "order"}
        if "path" not in value or extra:
            raise ValueError(f"queues: expected {{'path': FILE, 'order': NAME}}, got keys {sorted(value)}")
        cfg = load_queues(value["path"])
        if "order" in value:
            from dataclasses import replace

            from .orders import ORDERS
            o = value["order"]
            if o is not None and o not in ORDERS:
                raise InputError(cfg.source, "order", f"unknown order {o!r}; valid orders: {', '.join(ORDERS)}")
            cfg = replace(cfg, order=o)
        return cfg
    raise ValueError(f"queues: expected a queue file path or a QueueConfig, got {value!r}")
