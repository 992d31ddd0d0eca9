"""The wire side of Batsim's protocol v4 as the embedded simulator speaks it.

Source: Batsim's "protocol" documentation and a real Batsim 4.2.1 run (docs/protocol.md,
tests/data/batsim-4.2.1/protocol-full-run.jsonl). Batsim writes compact JSON in which every floating-point
number is printed like C's ``%f`` (``"now":1.000000``) and integers as integers; `dumps` does the same.
Resource sets are Batsim interval sets, ``"0-3 7"`` (`procset.ProcSet`'s string form).
"""
from __future__ import annotations

from ..jsonvalues import is_num as is_number  # noqa: F401  (a finite JSON number, not a boolean)

import json
import math

from procset import ProcSet

_str = json.JSONEncoder(ensure_ascii=False).encode


def dumps(obj) -> str:
    """Compact JSON with floats as ``%f`` (Batsim's writer). Non-finite floats become null."""
    out: list[str] = []
    _enc(obj, out)
    return "".join(out)


def _enc(o, out: list[str]) -> None:
    if isinstance(o, str):
        out.append(_str(o))
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif o is None:
        out.append("null")
    elif isinstance(o, int):
        out.append(str(o))
    elif isinstance(o, float):
        out.append("%f" % o if math.isfinite(o) else "null")
    elif isinstance(o, dict):
        out.append("{")
        first = True
        for k, v in o.items():
            if not first:
                out.append(",")
            first = False
            out.append(_str(str(k)))
            out.append(":")
            _enc(v, out)
        out.append("}")
    elif isinstance(o, (list, tuple)):
        out.append("[")
        for i, v in enumerate(o):
            if i:
                out.append(",")
            _enc(v, out)
        out.append("]")
    elif hasattr(o, "item"):  # numpy scalars
        _enc(o.item(), out)
    else:
        raise TypeError(f"cannot encode {type(o).__name__}")


def parse_interval_set(text) -> ProcSet:
    """Batsim interval set ``"0-3 7"`` → ProcSet. Raises ValueError (with the text) if malformed."""
    if not isinstance(text, str):
        raise ValueError(f"not a string: {text!r}")
    try:
        return ProcSet.from_str(text.strip())
    except (ValueError, TypeError):
        raise ValueError(f"invalid interval set {text!r}") from None


_ALLOCATIONS: dict[str, tuple[ProcSet, tuple[int, ...], str]] = {}


def parse_allocation(text) -> tuple[ProcSet, tuple[int, ...], str]:
    """`parse_interval_set` of an EXECUTE_JOB's ``alloc``, with its ids in increasing order and its text as
    Batsim prints it (``str`` of the set), remembered by text: the same sets come back (a job's sub-jobs, a
    burst-buffer node's stagings). The ProcSet is shared between jobs: it is never changed in place. Raises
    ValueError as `parse_interval_set`."""
    hit = _ALLOCATIONS.get(text) if type(text) is str else None
    if hit is None:
        ps = parse_interval_set(text)
        hit = (ps, tuple(ps), str(ps))
        if len(_ALLOCATIONS) >= 4096:
            _ALLOCATIONS.clear()
        _ALLOCATIONS[text] = hit
    return hit


def format_interval_set(ps: ProcSet) -> str:
    """ProcSet → Batsim's ``"0-3 7"`` (empty set → "")."""
    return str(ps)


def event(timestamp: float, etype: str, data: dict) -> dict:
    """One protocol event {timestamp, type, data}."""
    return {"timestamp": float(timestamp), "type": etype, "data": data}


def message(now: float, events: list[dict]) -> str:
    """A whole Batsim → scheduler message, serialised."""
    return dumps({"now": float(now), "events": events})
