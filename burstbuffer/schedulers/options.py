"""Policy options: how an option is declared (`Option` and its kinds), read and checked — one rule for every
reader.

A policy declares its options on its class (``declared_options``, `burstbuffer.schedulers.base.Scheduler`):
name, type and range (`Number`, `Choice`, `Bool`, `Depth`, `Custom`), meaning with its unit, and its
command-line alias if it has one; the default is its constructor's, written once. Options reach a policy by
one path, ``--policy-option NAME=VALUE`` (the value read as JSON, else as a string); the flags (``--alpha``,
``--window``, ``--order``, …) are aliases of it generated from the declarations (`burstbuffer.policyargs`).
Whoever reads options — ``run`` and ``serve`` (`burstbuffer.spec.make_spec`), a ``sweep`` campaign when it is
loaded, a ``reproduce`` study before its runs, the pybatsim launcher — checks them with `check_options`,
which raises `OptionError` (one line: ``NAME=VALUE: reason``) for

- a name the policy does not take (its declared options; a user's class adds the keyword parameters of its
  own constructor, any name if it takes ``**options``);
- a value of the wrong type or out of range (`Option.check`: numbers are finite and never booleans,
  integers are integers, choices are among the listed strings; a user's own keyword: like its default);
- a combination the policy refuses: a built-in policy states its rules across options in
  ``options_conflict`` (which its constructor applies too), so no policy is built to check them; a user's
  class is built once on a two-node probe platform and a ValueError / TypeError its constructor raises
  becomes the reason (how a user policy validates its options).

The options dict is never rewritten: what is checked is what runs (a campaign's run ids hash it).
`burstbuffer policies [NAME]` prints them (`describe`). Python callers of `make_scheduler` are checked by
the constructors only.
"""
from __future__ import annotations

import inspect
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["PERIOD_MIN", "Bool", "Choice", "Custom", "Depth", "Number", "Option", "OptionError", "build",
           "order_check", "order_params_check", "period_check", "queues_check", "check_options", "check_value", "declared", "describe", "flag_type", "option_names", "takes",
           "value_text"]


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


def order_check(v) -> str | None:
    from .orders import ORDERS, Order
    if isinstance(v, Order) or (isinstance(v, str) and v in ORDERS):
        return None
    return f"unknown order {v!r} (choose from {', '.join(ORDERS)})" if isinstance(v, str) else \
        f"expected an order name ({', '.join(ORDERS)}), got {_kind(v)}"


def queues_check(v) -> str | None:
    from pathlib import Path

    from .queues import QueueConfig, queue_config
    if not isinstance(v, (str, Path, dict, QueueConfig)):
        return f"expected a queue file (TOML path) or {{path = FILE, order = NAME}}, got {_kind(v)}"
    try:
        queue_config(v)      # InputError (file, item, reason) for a bad file: it names the file itself
    except ValueError as exc:
        return str(exc)
    return None


def order_params_check(v) -> str | None:
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


def period_check(v) -> str | None:
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


# --------------------------------------------------------------------------- one option
@dataclass(frozen=True)
class Option:
    """One option a policy declares: `name` (the keyword of the policy's constructor), `kind` (its check:
    `Number`, `Choice`, `Bool`, `Depth`, `Custom`), `meaning` (one line, with the unit in brackets),
    `nullable` (null / None is a valid value), `flag` (its command-line alias, if any) and the flag's
    `metavar`. A flag with a `flag_key` sets ``{flag_key: VALUE}`` (``--wfp-unit S``: ``order_params =
    {unit = S}``), VALUE checked by `flag_kind`.

    The default is not declared here: it is the constructor's (`defaults`), written once."""

    name: str
    kind: Any
    meaning: str
    nullable: bool = False
    flag: str | None = None
    metavar: str | None = None
    flag_key: str | None = None
    flag_kind: Any = None

    def check(self, value) -> str | None:
        """None if `value` is valid, else the reason (one line)."""
        if value is None and self.nullable:
            return None
        return self.kind.check(value)

    @property
    def type(self) -> str:
        return self.kind.type

    @property
    def type_text(self) -> str:
        """Type and range as `burstbuffer policies` prints them, e.g. ``int >= 1 (or null)``."""
        rng = "" if self.kind.range in ("any", "true, false", "") else f" {self.kind.range}"
        null = " (or null)" if self.nullable and "null" not in self.type else ""
        return self.type + rng + null


# --------------------------------------------------------------------------- a policy's options
def declared(policy) -> dict[str, Option]:
    """name → `Option` of what policy class `policy` declares (its ``declared_options``, `Scheduler`'s
    contract); {} for a factory that is not a class."""
    return {o.name: o for o in getattr(policy, "declared_options", ())}


def _signature_options(factory) -> tuple[list[inspect.Parameter], bool]:
    """(keyword parameters of `factory` but platform/seed, takes any other keyword). For a class the
    parameters of its ``build`` and of each ``__init__`` up its MRO are taken while each passes
    ``**options`` on (a user `Policy` subclass forwarding ``period``, ``staging``…)."""
    def named(fn):
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            return None, True
        return ([p for p in params if p.name not in ("self", "cls", "platform", "seed")
                 and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)],
                any(p.kind is p.VAR_KEYWORD for p in params))

    if not isinstance(factory, type):
        params, open_ended = named(factory)
        return params or [], open_ended
    out: dict[str, inspect.Parameter] = {}
    build = getattr(factory, "build", None)
    if build is not None:
        for p in named(build)[0] or []:
            out.setdefault(p.name, p)
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
            out.setdefault(p.name, p)
        if not open_ended:
            break
    return list(out.values()), open_ended


def _own(cls) -> bool:
    return getattr(cls, "__module__", "").startswith("burstbuffer.")


def _class_of(policy):
    """The class of a built-in policy's `registry.Preset`; `policy` itself for a class or a factory."""
    from .registry import Preset
    return policy.policy if isinstance(policy, Preset) else policy


def _built_in(policy) -> bool:
    """A built-in policy (a `registry.Preset`, or one of the package's classes): it takes its declared options
    only, and states its rules across options (``options_conflict``) without being built."""
    from .registry import Preset
    return isinstance(policy, Preset) or (isinstance(policy, type) and _own(policy))


def takes(policy) -> tuple[dict[str, tuple[Option | None, Any]], bool]:
    """(name → (its declared `Option` or None, its default), takes any other keyword) of the options of
    policy class (or factory) `policy`: the options it declares, then the keyword parameters that a
    policy's own code adds (a user class; a built-in takes its declared options only). The default is the
    constructor's (``inspect.Parameter.empty`` if it has none)."""
    decl = declared(policy)
    params, open_ended = _signature_options(_class_of(policy))
    defaults = {p.name: p.default for p in params}
    own = {n: (o, defaults.get(n, None)) for n, o in decl.items()}
    if _built_in(policy):
        return own, False
    out: dict[str, tuple[Option | None, Any]] = {}     # a user's own keywords first, then those it inherits
    for p in params:
        if p.name not in decl and not (isinstance(policy, type) and not _user_param(policy, p.name)):
            out[p.name] = (None, p.default)
    return {**out, **own}, open_ended


def _user_param(cls: type, name: str) -> bool:
    """Whether keyword `name` comes from a class of the user's (not from a built-in base's constructor)."""
    for c in cls.__mro__:
        for fn in (c.__dict__.get("__init__"), c.__dict__.get("build")):
            if fn is None:
                continue
            fn = getattr(fn, "__func__", fn)
            try:
                if name in inspect.signature(fn).parameters:
                    return not _own(c)
            except (TypeError, ValueError):
                continue
    return True


def option_names(policy) -> list[str]:
    """The options policy class `policy` takes, in declaration order."""
    return list(takes(policy)[0])


def flag_type(opt: Option) -> Callable[[str], Any]:
    """The argparse ``type=`` of the flag alias of `opt`: the text read as the option's kind (an integer, a
    number, ``all`` or an integer, a string) and checked by the option's own rule (`flag_kind` for a
    flag that sets one key), so a flag and ``--policy-option`` refuse the same values
    (argparse.ArgumentTypeError: one line, exit 2)."""
    import argparse
    kind = opt.flag_kind or opt.kind
    if isinstance(kind, Custom):          # a file, a name looked up later: checked with the other options
        return str

    def parse(text: str):
        value: Any = text
        try:
            if isinstance(kind, Number):
                value = int(text) if kind.integer else float(text)
            elif isinstance(kind, Depth) and text != "all":
                value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not {'an integer' if getattr(kind, 'integer', True) else 'a number'}") from None
        why = kind.check(value) if opt.flag_kind else opt.check(value)
        if why:
            raise argparse.ArgumentTypeError(f"{text!r}: {why}")
        return value
    parse.__name__ = opt.name
    return parse


def check_value(opt: Option, value: Any, text: str | None = None) -> None:
    """OptionError unless `value` is valid for `opt`."""
    why = opt.check(value)
    if why:
        raise OptionError(opt.name, value, why, text)


def check_options(policy, options: dict, *, label: str | None = None, texts: dict | None = None,
                  probe: bool = True) -> None:
    """Check `options` for policy class (or factory) `policy` — or a built-in policy's name (`registry.POLICIES`;
    any spec: its `resolve.policy_info` first) — and raise `OptionError` for the first bad one (module docstring).
    `label`: the policy's name in messages; `texts`: option name → the text the user wrote. Then the rules across
    options: a built-in policy's `options_conflict` (no policy is built); a user's class is built once on a
    two-node probe platform when options are given (`probe`), its constructor's ValueError / TypeError the
    reason. Returns None; `options` is not changed."""
    if isinstance(policy, str):
        from .registry import POLICIES
        label, policy = label or policy, POLICIES[policy]
    texts = texts or {}
    label = label or getattr(policy, "name", None) or getattr(policy, "__name__", "?")
    known, open_ended = takes(policy)
    for name, value in options.items():
        if name not in known:
            if open_ended:
                continue
            raise OptionError(name, value, f"policy {label} takes no option {name!r} "
                                           f"(its options: {', '.join(known) or 'none'})", texts.get(name))
        opt, default = known[name]
        if opt is not None:
            check_value(opt, value, texts.get(name))
        else:
            why = _like_default(default, value)
            if why:
                raise OptionError(name, value, why, texts.get(name))
    if options.get("queues") is not None and "queues" in known:
        _check_queue_orders(options, texts)
    if _built_in(policy):                             # a built-in: its rules across options, no policy built
        why = policy.options_conflict({**{n: d for n, (_, d) in known.items()}, **options})
        if why:
            _raise_for(why, options, texts)
    elif probe and options:                           # a user's: its constructor is its check
        _probe(policy, options, texts)


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


def build(policy, platform, *, seed: int = 0, **options):
    """The scheduler of policy class (or factory) `policy`: ``policy.build(platform, seed=…, **options)``
    for a class (`Scheduler.build`), else ``policy(platform, seed=…, **options)``."""
    make = getattr(policy, "build", None) if isinstance(policy, type) else None
    return (make or policy)(platform, seed=seed, **options)


def _probe(policy, options: dict, texts: dict) -> None:
    """Build the policy on a small platform: its constructor's ValueError / TypeError becomes the OptionError."""
    from ..errors import InputError
    from ..platforms.model import Platform
    plat = Platform.simple(2, [10 ** 12, 10 ** 12])
    try:
        build(policy, plat, seed=0, **options)
    except InputError:
        raise
    except (TypeError, ValueError) as exc:
        _raise_for(" ".join(str(exc).split()) or exc.__class__.__name__, options, texts)


def _raise_for(msg: str, options: dict, texts: dict) -> None:
    """OptionError with reason `msg`, on the first option of `options` that `msg` names (else the first)."""
    name = next((n for n in options if n in msg), None) or next(iter(options), "")
    raise OptionError(name, options.get(name), msg, texts.get(name)) from None


_GOOGLE = re.compile(r"^(\s*)\*{0,2}(\w+)\s*(?:\([^)]*\))?:(?:\s+(.*))?$")   # name (type): text
_NUMPY = re.compile(r"^(\s*)(\w+)(?:\s+:\s*(.*))?$")                       # name : type, text below


def docstring_meanings(doc: str, names) -> dict[str, str]:
    """The meaning of each of `names` a docstring gives (name → one line of text; the first entry wins): a
    ``name: text`` line, a Google-style ``Args:`` entry (``name (type): text``), a numpydoc ``Parameters``
    entry (``name : type`` then its text indented below), each with the lines indented below it joined."""
    lines = doc.splitlines()
    out: dict[str, str] = {}

    def below(i: int, indent: int) -> list[str]:        # the lines after i indented deeper than `indent`
        more = []
        for line in lines[i + 1:]:
            if not line.strip() or len(line) - len(line.lstrip()) <= indent:
                break
            more.append(line.strip())
        return more

    for i, line in enumerate(lines):
        m = _GOOGLE.match(line)
        if m and m[2] in names and " :" not in line:
            text = " ".join(([m[3].strip()] if m[3] else []) + below(i, len(m[1])))
        else:
            m = _NUMPY.match(line)
            if not (m and m[2] in names):
                continue
            text = " ".join(below(i, len(m[1])))
        if text and m[2] not in out:
            out[m[2]] = text
    return out


def describe(policy) -> list[tuple[str, str, str, str]]:
    """(name, type and range, default, meaning) of every option policy class (or factory) `policy` takes:
    a declared option as declared (its default the constructor's); another keyword with its type from the
    annotation or the default and its meaning from a ``name: text`` line of the docstring, else ""."""
    known, open_ended = takes(policy)
    cls = _class_of(policy)
    doc = (inspect.getdoc(cls) or "") + "\n\n" + (inspect.getdoc(getattr(cls, "__init__", None)) or "")
    meanings = docstring_meanings(doc, known)
    params = {p.name: p for p in _signature_options(cls)[0]}
    out = []
    for name, (opt, default) in known.items():
        d = "(required)" if default is inspect.Parameter.empty else value_text(default)
        if opt is not None:
            out.append((name, opt.type_text, d, opt.meaning + (f" (alias {opt.flag})" if opt.flag else "")))
            continue
        p = params.get(name)
        if p is not None and p.annotation is not p.empty:
            t = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", str(p.annotation))
        elif default is not inspect.Parameter.empty and default is not None:
            t = type(default).__name__
        else:
            t = "any"
        out.append((name, t, d, meanings.get(name, "")))
    if open_ended:
        out.append(("**options", "any", "", "the constructor takes any other keyword option"))
    return out
