"""Every policy option, declared once: its name, type, default, range or choices, meaning, the built-in
policies that take it and its command-line alias; and the one check every reader applies.

Options reach a policy by one path, ``--policy-option NAME=VALUE`` (the value read as JSON, else as a
string); the older per-option flags (``--alpha``, ``--window``, ``--order``, …) are aliases of it,
listed in `FLAGS` and turned into the same options dict by `burstbuffer.cli.options_from_args`. Whoever
reads options — ``run`` and ``serve`` (flags and ``--policy-option``), a ``sweep`` campaign when it is
loaded, a ``reproduce`` study before its runs — checks them with `check_options`, which raises
`OptionError` (one line: ``NAME=VALUE: reason``) for

- a name the policy does not take (built-in policies: `OPTIONS`; a user policy: the keyword parameters
  of its constructor, any name if it takes ``**options``);
- a value of the wrong type or out of range (`Option.check`: numbers are finite and never booleans,
  integers are integers, choices are among the listed strings);
- a combination the policy's constructor refuses: the policy is built once on a two-node probe platform
  and a ValueError / TypeError it raises becomes the reason (how a user policy validates its options).

The options dict is never rewritten: what is checked is what runs (a campaign's run ids hash it).
`burstbuffer policies [NAME]` prints the table (`describe`). Python callers of `make_scheduler` are
checked by the constructors only.
"""
from __future__ import annotations

import inspect
import json
import math
from dataclasses import dataclass
from typing import Any, Callable

from .cerberus import PHASES, STARVATION
from .holds import STAGING_BANDWIDTH, STAGINGS
from .knapsack import METHODS as KNAPSACK_METHODS
from .limits import EXACT_LIMIT, GA_LIMIT, MAX_EXHAUSTIVE
from .registry import EASY_POLICIES, POLICIES, QUEUE_POLICIES, THREE_PHASE_POLICIES, WINDOW_POLICIES

__all__ = ["FLAGS", "OPTIONS", "PERIOD_MIN", "Option", "OptionError", "check_options", "check_value", "describe",
           "flag_type", "is_built_in", "option_names", "value_text"]


class OptionError(ValueError):
    """A bad policy option; str() is one line ``NAME=VALUE: REASON`` (VALUE as the user wrote it if known)."""

    def __init__(self, name: str, value: Any, reason: str, text: str | None = None):
        self.name, self.value, self.reason = name, value, reason
        self.text = value_text(value) if text is None else text
        super().__init__(f"{name}={self.text}: {reason}")


def value_text(value: Any) -> str:
    """`value` as it would be written in ``--policy-option NAME=VALUE`` (JSON; a string unquoted)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


# --------------------------------------------------------------------------- value kinds
def _is_number(v) -> bool:
    import numbers
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _is_int(v) -> bool:
    import numbers
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


@dataclass(frozen=True)
class Number:
    """A finite real (``integer=True``: an integer) in [low, high]; `open_low`: low itself excluded."""

    low: float | None = None
    high: float | None = None
    open_low: bool = False
    integer: bool = False

    def check(self, v) -> str | None:
        if not (_is_int(v) if self.integer else _is_number(v)):
            return f"expected {'an integer' if self.integer else 'a number'}, got {_kind(v)}"
        if not math.isfinite(v):
            return "expected a finite number"
        if self.low is not None and (v < self.low or (self.open_low and v == self.low)):
            return f"must be {self.range}"
        if self.high is not None and v > self.high:
            return f"must be {self.range}"
        return None

    @property
    def type(self) -> str:
        return "int" if self.integer else "float"

    @property
    def range(self) -> str:
        lo = None if self.low is None else f"{'>' if self.open_low else '>='} {self.low:g}"
        if self.high is None:
            return lo or "any"
        if self.low is None:
            return f"<= {self.high:g}"
        return f"in {'(' if self.open_low else '['}{self.low:g}, {self.high:g}]"


@dataclass(frozen=True)
class Choice:
    """One of `values` (strings)."""

    values: tuple[str, ...]

    def check(self, v) -> str | None:
        if not isinstance(v, str) or v not in self.values:
            return f"expected one of {', '.join(self.values)}, got {_kind(v) if not isinstance(v, str) else repr(v)}"
        return None

    type = "str"

    @property
    def range(self) -> str:
        return "(" + " | ".join(self.values) + ")"


@dataclass(frozen=True)
class Bool:
    """true or false (JSON/TOML booleans only: not 0 / 1, not strings)."""

    def check(self, v) -> str | None:
        return None if isinstance(v, bool) else f"expected true or false, got {_kind(v)}"

    type = "bool"
    range = "true, false"


@dataclass(frozen=True)
class Depth:
    """An integer >= 1 or the string ``all`` (EASY's reservation depth)."""

    def check(self, v) -> str | None:
        if v == "all" and isinstance(v, str):
            return None
        if not _is_int(v) or v < 1:
            return f"expected an integer >= 1 or 'all', got {_kind(v) if not _is_int(v) else v}"
        return None

    type = "int"
    range = ">= 1 or all"


@dataclass(frozen=True)
class Custom:
    """A value checked by `fn` (returns None or a reason); `type` and `range` for the listing."""

    fn: Callable[[Any], str | None]
    type: str
    range: str

    def check(self, v) -> str | None:
        return self.fn(v)


def _kind(v) -> str:
    if isinstance(v, bool):
        return f"a boolean ({str(v).lower()})"
    if isinstance(v, str):
        return f"a string ({v!r})"
    if v is None:
        return "null"
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, (list, tuple)):
        return "a list"
    return f"{v!r}"


def _order(v) -> str | None:
    from .orders import ORDERS, Order
    if isinstance(v, Order) or (isinstance(v, str) and v in ORDERS):
        return None
    return f"unknown order {v!r} (choose from {', '.join(ORDERS)})" if isinstance(v, str) else \
        f"expected an order name ({', '.join(ORDERS)}), got {_kind(v)}"


def _queues(v) -> str | None:
    from pathlib import Path

    from .queues import QueueConfig, queue_config
    if not isinstance(v, (str, Path, dict, QueueConfig)):
        return f"expected a queue file (TOML path) or {{path = FILE, order = NAME}}, got {_kind(v)}"
    try:
        queue_config(v)      # InputError (file, item, reason) for a bad file: it names the file itself
    except ValueError as exc:
        return str(exc)
    return None


def _order_params(v) -> str | None:
    from .orders import Wfp
    if not isinstance(v, dict):
        return f"expected a table of wfp parameters (period, unit, wall_floor, wall_ceiling), got {_kind(v)}"
    known = [n for n in inspect.signature(Wfp).parameters if n != "max_size"]
    for k, x in v.items():
        if k not in known:
            return f"unknown wfp parameter {k!r} (known: {', '.join(known)})"
        if x is None and k.startswith("wall_"):
            continue
        why = Number(0, open_low=True).check(x)
        if why:
            return f"{k}: {why}"
    try:
        Wfp(1, **v)
    except (TypeError, ValueError) as exc:
        return str(exc)
    return None


def _native(v) -> str | None:
    return None if v is None or isinstance(v, bool) else f"expected true, false or null, got {_kind(v)}"


def _period(v) -> str | None:
    if v is None:
        return None
    why = Number(PERIOD_MIN).check(v)
    if why and _is_number(v) and math.isfinite(v):
        return (f"must be >= {PERIOD_MIN:g} s (or null: no periodic call); a shorter period asks for wake-ups "
                "closer than the simulator's clock can tell apart (docs/policy-options.md)")
    return why


#: the smallest ``period`` [s]: a shorter one asks the simulator for wake-ups closer together than its
#: clock's precision (SimGrid times are exact to 1e-9 s, Batsim's waiter sleeps at least 1e-5 s), and
#: Batsim and the embedded simulator stop with "You asked to be awaken in the past!" (``period=4e-7``
#: on the first 200 KTH jobs stops at t = 14283 s); 1 s is also the resolution of the traces' times.
PERIOD_MIN = 1.0


# --------------------------------------------------------------------------- the table
@dataclass(frozen=True)
class Option:
    """One option: `name` (the keyword of the policy's constructor), `kind` (its check: `Number`,
    `Choice`, `Bool`, `Depth`, `Custom`), `default` (what the policy uses when the option is not given),
    `meaning` (one line, with the unit), `policies` (the built-in policies that take it), `nullable`
    (null / None is a valid value), `flag` (its command-line alias, if any)."""

    name: str
    kind: Any
    default: Any
    meaning: str
    policies: tuple[str, ...]
    nullable: bool = False
    flag: str | None = None

    def check(self, value) -> str | None:
        """None if `value` is valid, else the reason (one line)."""
        if value is None and self.nullable:
            return None
        return self.kind.check(value)

    @property
    def type(self) -> str:
        return self.kind.type


_WINDOW = WINDOW_POLICIES
_GA = ("bbsched", "bbsched-nsga2")
_PLAN = ("plan", "plan-1", "plan-2", "plan-3")
_PROFILE = QUEUE_POLICIES + _PLAN + _WINDOW            # every ProfileScheduler
_CERBERUS = ("cerberus", "cerberus-fcfs-24h")


def _orders_text() -> str:
    from .orders import ORDERS
    return ", ".join(ORDERS)


#: name → `Option`, every option of the built-in policies (docs/policies.md, docs/orders-and-queues.md,
#: docs/bbsched.md, docs/io-model.md §3).
OPTIONS: dict[str, Option] = {o.name: o for o in (
    Option("period", Custom(_period, "float", f">= {PERIOD_MIN:g}"), None,
           "[s] decide also at every multiple of PERIOD while jobs are queued (null: on events only)",
           _PROFILE, nullable=True),
    Option("overdue_grace", Number(0, open_low=True), 1.0,
           "[s] extension of the hold of a job still running past start + walltime", _PROFILE),
    Option("order", Custom(_order, "str", ""), None,
           "queue order (the window's base order for the window policies): fcfs, sjf, ljf, small, large, "
           "bb-small, bb-large, wfp (null: fcfs)", QUEUE_POLICIES + _WINDOW, nullable=True, flag="--order"),
    Option("order_params", Custom(_order_params, "table", ""), None,
           "parameters of the wfp order [s]: period 15, unit 60 (--wfp-unit), wall_floor 3600, wall_ceiling 43200",
           QUEUE_POLICIES + _WINDOW, nullable=True),
    Option("queues", Custom(_queues, "path or table", ""), None,
           "named queues: routing, limits, per-queue order (docs/orders-and-queues.md; null: one queue)",
           QUEUE_POLICIES, nullable=True, flag="--queues"),
    Option("reservation_depth", Depth(), None,
           "reservations for the first K queued jobs (1 = EASY, all = conservative backfilling; null: EASY's)",
           EASY_POLICIES, nullable=True, flag="--reservation-depth"),
    Option("walltime_factor", Number(1), 1.0,
           "the policy sees every requested walltime × this factor (holds, reservations, orders, queue routing); "
           "jobs still run and are killed under their own walltime", QUEUE_POLICIES + _WINDOW),
    Option("easy_extra_nodes", Bool(), False,
           "also backfill a job needing no more than the nodes left idle at the shadow time",
           EASY_POLICIES, flag="--easy-extra-nodes"),
    Option("staging", Choice(STAGINGS), None,
           "on a job model that separates the stagings (three-phase): bb-first plans BB over the stagings and "
           "nodes over the run, with-nodes holds the nodes from stage-in to stage-out (null: the policy's own, "
           "bb-first for the EASY family, conservative-bb and plan, with-nodes for the others)", _PROFILE,
           nullable=True),
    Option("staging_bandwidth", Number(0, open_low=True), STAGING_BANDWIDTH,
           "[B/s] bandwidth of the stage-in/out estimates on the three-phase model", _PROFILE),
    Option("alpha", Number(0, open_low=True), 2.0,
           "α of the plan score Σ wait^α (Kopanski & Rzadca 2021, Eq. 1; plan-1, plan-2, plan-3 fix it)",
           ("plan",), flag="--alpha"),
    Option("cooling_rate", Number(0, 1, open_low=True), 0.9, "simulated annealing's cooling rate r", _PLAN),
    Option("cooling_steps", Number(0, integer=True), 30, "simulated annealing's cooling steps N", _PLAN),
    Option("temperature_steps", Number(0, integer=True), 6, "moves per temperature M", _PLAN),
    Option("exhaustive_limit", Number(0, MAX_EXHAUSTIVE, integer=True), 5,
           "queues of at most this many jobs are searched over all permutations", _PLAN),
    Option("native", Custom(_native, "bool or null", ""), None,
           "plan engine: null = C if it builds, else Python; false = Python; true = C (same schedules)", _PLAN,
           nullable=True),
    Option("window", Number(1, integer=True), 20,
           f"the first W queued jobs form the window (bbsched, bbsched-nsga2: <= {GA_LIMIT}; bbsched-exact: "
           f"<= {EXACT_LIMIT})", _WINDOW,
           flag="--window"),
    Option("starvation_bound", Number(0, integer=True), 50,
           "a job in the window at more than K scheduling iterations must start", _WINDOW,
           flag="--starvation-bound"),
    Option("record_gd", Bool(), False,
           "record per decision the generational distance of the GA's front to the true one (decisions.csv)",
           _WINDOW, flag="--record-gd"),
    Option("population", Number(2, integer=True), 20, "GA population P", _GA, flag="--population"),
    Option("generations", Number(1, integer=True), 500, "GA generations G", _GA, flag="--generations"),
    Option("mutation_rate", Number(0, 1), 0.0005, "GA bit-flip probability per gene", _GA,
           flag="--mutation-rate"),
    Option("profit", Choice(("node-seconds", "nodes", "short-first")), "node-seconds",
           "profit of a job in cerberus' running-queue knapsack", _CERBERUS, flag="--profit"),
    Option("starvation_limit", Number(0, open_low=True), 86400.0,
           "[s] after which a queued job is served first (cerberus-fcfs-24h; cerberus with a starvation rule)", _CERBERUS,
           flag="--starvation-limit"),
    Option("knapsack_method", Choice(KNAPSACK_METHODS), "exact",
           "solver of cerberus' knapsacks: auto (exact up to 200 items, greedy above), exact (at every size), dp, "
           "milp, greedy", _CERBERUS),
    Option("starvation", Choice(STARVATION), "none",
           "what cerberus does for a starving job: nothing (none: the paper's), serve its queue first come first "
           "served (fcfs: the project's rule, as cerberus-fcfs-24h), reserve for it (reserve; phases=one only)",
           ("cerberus",)),
    Option("phases", Choice(PHASES), "as-written",
           "cerberus' BB amounts: one per job (one), or bb_in, bb_run, bb_out with Problem 2's BB constraint and "
           "the stage-out decision (as-written: the paper's, Yan et al., Cerberus, §3)", _CERBERUS),
)}

#: command-line flag → option name: the aliases of ``--policy-option NAME=VALUE`` (`--wfp-unit S` is
#: ``order_params = {unit = S}``; `--alpha A` also selects ``plan`` for ``plan-N``).
FLAGS: dict[str, str] = {o.flag: o.name for o in OPTIONS.values() if o.flag}
FLAGS["--wfp-unit"] = "order_params"


def flag_type(name: str) -> Callable[[str], Any]:
    """The argparse ``type=`` of the flag alias of option `name`: the text read as the option's kind (an
    integer, a number, ``all`` or an integer, a string) and checked by the option's own rule, so a flag and
    ``--policy-option`` refuse the same values (argparse.ArgumentTypeError: one line, exit 2)."""
    import argparse
    opt = OPTIONS[name]

    def parse(text: str):
        kind = opt.kind
        value: Any = text
        try:
            if isinstance(kind, Number):
                value = int(text) if kind.integer else float(text)
            elif isinstance(kind, Depth) and text != "all":
                value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if getattr(kind, 'integer', True) else 'a number'}") from None
        why = opt.check(value)
        if why:
            raise argparse.ArgumentTypeError(f"{text!r}: {why}")
        return value
    parse.__name__ = name
    return parse


def option_names(policy: str) -> list[str]:
    """The options built-in policy `policy` takes, in table order."""
    return [o.name for o in OPTIONS.values() if policy in o.policies]


def is_built_in(policy: str) -> bool:
    return policy in POLICIES or policy in THREE_PHASE_POLICIES


def _factory_of(policy: str, factory):
    if factory is not None:
        return factory
    return POLICIES.get(policy) or THREE_PHASE_POLICIES.get(policy)


#: (user class, option name) of the options a user policy inherits from a built-in base (`Policy`: period,
#: staging, staging_bandwidth): checked and described by the table
_INHERITED: set = set()


def _signature_options(factory) -> tuple[list[inspect.Parameter], bool]:
    """(keyword parameters of `factory` but platform/seed, takes any other keyword). For a class whose
    ``__init__`` takes ``**options`` the parameters of the next ``__init__`` up its MRO are added, and so
    on while each passes ``**options`` on (a user `Policy` subclass forwarding ``period``, ``staging``…)."""
    def named(fn):
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            return None, True
        return ([p for p in params if p.name not in ("self", "platform", "seed")
                 and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)],
                any(p.kind is p.VAR_KEYWORD for p in params))

    if not isinstance(factory, type):
        params, open_ended = named(factory)
        return params or [], open_ended
    out: dict[str, inspect.Parameter] = {}
    open_ended = True
    for cls in factory.__mro__:
        init = cls.__dict__.get("__init__")
        if init is None:
            continue
        if cls is object:
            break
        params, open_ended = named(init)
        if params is None:
            return list(out.values()), True
        for p in params:
            if p.name not in out:
                out[p.name] = p
                if cls.__module__.startswith("burstbuffer.") and p.name in OPTIONS:
                    _INHERITED.add((factory, p.name))
        if not open_ended:
            break
    return list(out.values()), open_ended


def check_value(name: str, value: Any, text: str | None = None) -> None:
    """OptionError unless `value` is valid for option `name` of the table (unknown names pass)."""
    opt = OPTIONS.get(name)
    if opt is not None:
        why = opt.check(value)
        if why:
            raise OptionError(name, value, why, text)


def check_options(policy: str, options: dict, *, factory=None, texts: dict | None = None,
                  probe: bool = True) -> None:
    """Check `options` for `policy` (a built-in name, or any spec with its `factory`); raise `OptionError`
    for the first bad one (module docstring). `texts`: option name → the text the user wrote (for the
    message). `probe`: also build the policy once on a two-node probe platform (skipped for a user
    policy without options). Returns None; `options` is not changed."""
    texts = texts or {}
    factory = _factory_of(policy, factory)
    if is_built_in(policy):
        known = option_names(policy)
        for name, value in options.items():
            if name not in known:
                raise OptionError(name, value, f"policy {policy} takes no option {name!r} "
                                               f"(its options: {', '.join(known) or 'none'})", texts.get(name))
            check_value(name, value, texts.get(name))
        if "queues" in options and options["queues"] is not None:
            _check_queue_orders(options, texts)
    else:
        params, open_ended = _signature_options(factory)
        known = {p.name: p for p in params}
        for name, value in options.items():
            if name not in known and not open_ended:
                raise OptionError(name, value, f"policy {policy} takes no option {name!r} "
                                               f"(its options: {', '.join(known) or 'none'})", texts.get(name))
            why = _like_default(known[name].default, value) if name in known else None
            if (factory, name) in _INHERITED:
                check_value(name, value, texts.get(name))
            elif why:
                raise OptionError(name, value, why, texts.get(name))
        if not options:
            return
    if probe and factory is not None:
        _probe(policy, factory, options, texts)


def _like_default(default, value) -> str | None:
    """A user policy's option against its default: a number for a number (never a boolean, finite), a
    boolean for a boolean; anything for another default (the constructor decides)."""
    if isinstance(default, bool):
        return None if isinstance(value, bool) else f"expected true or false, got {_kind(value)}"
    if _is_number(default):
        if not _is_number(value):
            return f"expected a number, got {_kind(value)}"
        if not math.isfinite(value):
            return "expected a finite number"
    return None


def _check_queue_orders(options: dict, texts: dict) -> None:
    from ..errors import InputError
    from .queues import queue_config
    cfg = queue_config(options["queues"])
    order = options.get("order")
    try:
        cfg.check_orders(order if isinstance(order, str) else getattr(order, "name", None) or "fcfs")
    except InputError as exc:
        raise OptionError("queues", options["queues"], str(exc), texts.get("queues")) from None


def _probe(policy: str, factory, options: dict, texts: dict) -> None:
    """Build the policy on a small platform: its constructor's ValueError / TypeError becomes the OptionError."""
    from ..errors import InputError
    from ..platforms.model import Platform
    plat = Platform.simple(2, [10 ** 12, 10 ** 12])
    try:
        factory(plat, seed=0, **options)
    except InputError:
        raise
    except (TypeError, ValueError) as exc:
        msg = " ".join(str(exc).split()) or exc.__class__.__name__
        name = next((n for n in options if n in msg), None) or next(iter(options), "")
        raise OptionError(name, options.get(name), msg, texts.get(name)) from None


def describe(policy: str, factory=None) -> list[tuple[str, str, str, str]]:
    """(name, type and range, default, meaning) of every option `policy` takes: the table for a built-in
    policy, the constructor's signature for another (type from the annotation or the default; meaning
    from an ``name: text`` line of its docstring, else "")."""
    if is_built_in(policy):
        out = []
        for name in option_names(policy):
            o = OPTIONS[name]
            default = o.default
            rng = "" if o.kind.range in ("any", "true, false", "") else f" {o.kind.range}"
            null = " (or null)" if o.nullable and "null" not in o.type else ""
            out.append((name, o.type + rng + null, value_text(default),
                        o.meaning + (f" (alias {o.flag})" if o.flag else "")))
        return out
    params, open_ended = _signature_options(_factory_of(policy, factory))
    doc = inspect.getdoc(factory) or ""
    init_doc = inspect.getdoc(getattr(factory, "__init__", None)) or ""
    meanings = {}
    for line in (doc + "\n" + init_doc).splitlines():
        head, sep, rest = line.strip().partition(":")
        if sep and head.strip() in {p.name for p in params} and rest.strip():
            meanings.setdefault(head.strip(), rest.strip())
    out = []
    for p in params:
        if (factory, p.name) in _INHERITED:
            o = OPTIONS[p.name]
            rng = "" if o.kind.range in ("any", "true, false", "") else f" {o.kind.range}"
            null = " (or null)" if o.nullable and "null" not in o.type else ""
            out.append((p.name, o.type + rng + null, value_text(p.default), o.meaning))
            continue
        if p.annotation is not p.empty:
            t = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", str(p.annotation))
        elif p.default is not p.empty and p.default is not None:
            t = type(p.default).__name__
        else:
            t = "any"
        d = "(required)" if p.default is p.empty else value_text(p.default)
        out.append((p.name, t, d, meanings.get(p.name, "")))
    if open_ended:
        out.append(("**options", "any", "", "the constructor takes any other keyword option"))
    return out
