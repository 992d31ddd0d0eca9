"""The checks of a campaign file's values (`burstbuffer.sweep.campaign`): unknown keys, labels, integers,
lists, a policy's options; each raises InputError (file, item, reason)."""
from __future__ import annotations

import re
from pathlib import Path

from ..errors import InputError
from ..jsonvalues import is_int


def unknown_keys(path: Path, where: str, table: dict, known: set) -> None:
    for k in table:
        if k not in known:
            raise InputError(str(path), f"{where}.{k}", f"unknown key (known: {', '.join(sorted(known))})")


#: A label (policy or workload): it names runs and, for a transformed workload, a file of DIR/workloads/, so
#: it is a plain name: letters, digits and ``. _ + = -``, not starting with a dot, at most 100 characters.
LABEL_RE = re.compile(r"[A-Za-z0-9_+=-][A-Za-z0-9._+=-]{0,99}")


def label_of(path: Path, item: str, value, default: str) -> str:
    """`value` (a label given in the file) checked against `LABEL_RE`, or `default` (e.g. a file's stem)
    with every other character replaced by "_" when none is given."""
    if value is None:
        safe = re.sub(r"[^A-Za-z0-9._+=-]", "_", default)[:100].lstrip(".") or "workload"
        return safe
    if not isinstance(value, str) or not LABEL_RE.fullmatch(value):
        raise InputError(str(path), item, f"{quoted(value)} is not a plain name (letters, digits, . _ + = -, "
                                          "not starting with a dot, at most 100 characters)")
    return value


def quoted(value, limit: int = 60) -> str:
    """repr of `value`, cut to `limit` characters: what an error message quotes of a bad value."""
    r = repr(value)
    return r if len(r) <= limit else r[:limit - 1] + "…"


def int_in(path: Path, item: str, value, lo: int, hi: int | None = None) -> int:
    """`value` if an integer (not a boolean) in [lo, hi), else InputError (file, item, reason)."""
    if not is_int(value) or value < lo or (hi is not None and value >= hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {'2^32' if hi == 2**32 else hi})"
        raise InputError(str(path), item, f"expected an integer {rng}, not {quoted(value)}")
    return value


def nonempty_list(path: Path, item: str, value) -> list:
    if not isinstance(value, list) or not value:
        raise InputError(str(path), item, f"expected a non-empty list, not {quoted(value)}")
    return value


def check_campaign_options(path: Path, item: str, policy: str, options: dict):
    """The policy options of a campaign (or study) row, checked as ``--policy-option`` checks them
    (`burstbuffer.schedulers.options.check_options`): InputError ``FILE: ITEM: NAME=VALUE: REASON``. Returns the
    policy's `PolicyInfo` (resolved here, once: the campaign's specs are made from it)."""
    from ..schedulers.options import OptionError, check_options
    from ..schedulers.resolve import policy_info
    info = policy_info(policy)
    try:
        check_options(info.policy, options, label=policy)
    except OptionError as exc:
        raise InputError(str(path), item, str(exc)) from None
    return info
