"""The policy's part of a command line (``run``, ``serve``): ``--policy``, ``--policy-option NAME=VALUE`` and
the flag aliases of the options, generated from what the built-in policies declare
(`burstbuffer.schedulers.base.Scheduler.declared_options`: an option with a ``flag`` gets that flag, its type
checked by the option's own rule, its help made of its meaning, the policies that take it and their default);
and `spec_from_args`, the one place where a command line becomes a `burstbuffer.spec.SchedulerSpec`.

Building the flags imports the policy classes but none of their solvers (no numpy: `tests/test_cli_startup.py`).
"""
from __future__ import annotations

import argparse
import inspect
import json

from .errors import InputError, TimedOut

__all__ = ["POLICY_HELP", "add_policy_arguments", "flag_options", "spec_from_args"]

#: help text of every --policy option
POLICY_HELP = ("scheduling policy: a name (`burstbuffer policies` lists them), MODULE:CLASS or FILE.py:CLASS "
               "(a burstbuffer.schedulers.Scheduler subclass, docs/writing-a-policy.md)")


class PolicyLoadTimedOut(InputError, TimedOut):
    """Loading (importing, building with its options) a user's policy outlived ``--timeout``: one line, exit
    124 (`errors.EXIT_TIMEOUT`)."""


def flag_options() -> list[tuple[object, list[str], object]]:
    """(option, the built-in policies that take it, their default) of every option declared with a
    command-line flag, in registry order; an option several policies declare is listed once."""
    from .schedulers.options import takes
    from .schedulers.registry import POLICIES
    seen: dict[str, tuple[object, list[str], object]] = {}
    for name, cls in POLICIES.items():
        known, _ = takes(cls)
        for opt_name, (opt, default) in known.items():
            if opt is None or not opt.flag:
                continue
            if opt_name not in seen:
                seen[opt_name] = (opt, [], default)
            seen[opt_name][1].append(name)
    return list(seen.values())


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _help(opt, names: list[str], default) -> str:
    from .schedulers.options import value_text
    who = ", ".join(names)
    if opt.flag_key:
        return f"{opt.name}'s {opt.flag_key}: {opt.meaning} ({who})"
    shown = "" if default in (None, False, inspect.Parameter.empty) else f"; default {value_text(default)}"
    return f"{opt.meaning} ({who}{shown})".replace("%", "%%")


def add_policy_arguments(p: argparse.ArgumentParser, *, default: str | None = None) -> None:
    """Add ``--policy`` (`default`, else required), ``--policy-option`` and every generated flag alias."""
    from .schedulers.options import Bool, flag_type
    p.add_argument("--policy", default=default, required=default is None, metavar="NAME",
                   help=POLICY_HELP + (f" (default: {default})" if default else ""))
    p.add_argument("--policy-option", action="append", metavar="NAME=VALUE",
                   help="an option of the policy (repeatable; VALUE read as JSON, else a string): the one way to "
                        "give any option, the flags below are aliases; `burstbuffer policies NAME` lists each "
                        "policy's options with type, default and meaning")
    g = p.add_argument_group("policy options", "aliases of --policy-option NAME=VALUE, declared by the policies "
                                               "that take them (docs/policy-options.md)")
    for opt, names, dflt in flag_options():
        if isinstance(opt.kind, Bool) and not opt.flag_key:
            g.add_argument(opt.flag, action="store_true", default=None, help=_help(opt, names, dflt))
        else:
            g.add_argument(opt.flag, type=flag_type(opt), metavar=opt.metavar or opt.name.upper(),
                           help=_help(opt, names, dflt))


def spec_from_args(args: argparse.Namespace, *, job_model: str, seed: int, timeout: float | None = None):
    """The run's `SchedulerSpec` from ``--policy`` (resolved here, once), the flag aliases (those the parser
    has, `add_policy_arguments`) and ``--policy-option NAME=VALUE`` (repeatable; VALUE read as JSON, else a
    string): the one place where command-line options become a policy's options (`burstbuffer.spec.make_spec`
    checks them). InputError (one line, exit 2): ``--policy-option: NAME=VALUE: REASON`` or ``--FLAG: VALUE:
    REASON``, for a pair without ``=``, an option given twice, a name the policy does not take or a bad value;
    ``--policy: SPEC: REASON`` for a policy that cannot be resolved or needs another job model, or whose import
    and construction on the probe platform take longer than `timeout` s (None: no limit; under the watchdog,
    `guards.bounded`: the process ends with that line if they are stuck in C code, docs/reliability.md §2)."""
    from .schedulers.options import value_text
    from .spec import make_spec
    flags: dict = {}
    options: dict = {}
    sources: dict[str, tuple[str, str]] = {}     # option → (flag or --policy-option, the text to quote)

    def put(into, name, value, where, text):
        if name in flags or name in options:
            raise InputError(where, text, f"option {name} given twice ({sources[name][0]} and {where})")
        into[name] = value
        sources[name] = (where, text)

    for opt, _, _ in flag_options():
        value = getattr(args, _dest(opt.flag), None)
        if value is None or value is False:
            continue
        put(flags, opt.name, {opt.flag_key: value} if opt.flag_key else value, opt.flag, value_text(value))
    for pair in getattr(args, "policy_option", None) or []:
        name, sep, text = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            raise InputError("--policy-option", pair, "expected NAME=VALUE")
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        except RecursionError:
            raise InputError("--policy-option", name, "the value is nested too deeply") from None
        put(options, name, value, "--policy-option", f"{name}={text}")
    from .guards import DecisionTimeout, bounded
    slow = PolicyLoadTimedOut("--policy", args.policy, f"loading and building the policy took longer than {timeout:g} s "
                                               "(--timeout)") if timeout is not None else None
    try:       # the user's file is imported and built here (docs/reliability.md §2)
        with bounded(timeout, str(slow)):
            return make_spec(args.policy, options=options, flag_options=flags, job_model=job_model, seed=seed,
                             sources=sources)
    except DecisionTimeout:
        raise slow from None


#: the lines of docs/policy-options.md between which `options_page` stands
PAGE_BEGIN, PAGE_END = "<!-- generated by `python -m burstbuffer.policyargs`: begin -->", "<!-- generated: end -->"


def options_page() -> str:
    """The docs' table of every option of the built-in policies (markdown), made from their declarations:
    option, type and range, default (the constructor's), flag, the policies that take it, meaning."""
    from .schedulers.options import takes, value_text
    from .schedulers.registry import POLICIES
    rows: dict[str, list] = {}
    for name, cls in POLICIES.items():
        for opt_name, (opt, default) in takes(cls)[0].items():
            row = rows.setdefault(opt_name, [opt, set(), []])
            row[1].add(value_text(default))
            row[2].append(name)
    out = ["| option | type and range | default | flag | policies | meaning |", "| --- | --- | --- | --- | --- | --- |"]
    for name, (opt, defaults, names) in rows.items():
        default = ", ".join(f"`{d}`" for d in sorted(defaults))
        flag = f"`{opt.flag}`" if opt.flag else ""
        who = "every policy but " + ", ".join(sorted(set(POLICIES) - set(names))) \
            if len(names) > len(POLICIES) / 2 else ", ".join(names)
        cells = [f"`{name}`", opt.type_text, default, flag, who, opt.meaning]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(out) + "\n"


def write_options_page(path: str) -> bool:
    """Put `options_page` between `PAGE_BEGIN` and `PAGE_END` in the file `path`; True if it changed."""
    from pathlib import Path
    p = Path(path)
    text = p.read_text()
    head, _, rest = text.partition(PAGE_BEGIN + "\n")
    _, _, tail = rest.partition(PAGE_END)
    new = head + PAGE_BEGIN + "\n" + options_page() + PAGE_END + tail
    if new != text:
        p.write_text(new)
    return new != text


if __name__ == "__main__":
    import sys
    page = sys.argv[1] if len(sys.argv) > 1 else "docs/policy-options.md"
    print(f"{page}: {'rewritten' if write_options_page(page) else 'up to date'}")
