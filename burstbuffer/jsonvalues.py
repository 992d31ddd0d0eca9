"""Type checks of decoded JSON values, shared by every reader of JSON input (workload files, protocol
messages): one definition of "a number" and "an integer" for all of them."""
from __future__ import annotations

import math
from typing import Any


def is_num(v: Any) -> bool:
    """True for a finite int or float (bool, NaN and ±inf are not numbers here)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def is_int(v: Any) -> bool:
    """True for an int (not a bool)."""
    return isinstance(v, int) and not isinstance(v, bool)


def is_integral(v: Any) -> bool:
    """True for an int (not a bool) or a float with an integer value (e.g. ``3.0``)."""
    return is_int(v) or (isinstance(v, float) and v.is_integer())


def kind(v: Any) -> str:
    """Name of a JSON value's kind for error messages: "a string", "a list", "null", ..."""
    return {bool: "a boolean", str: "a string", list: "a list", dict: "an object",
            type(None): "null"}.get(type(v), type(v).__name__)


def excerpt(value: Any, limit: int = 120) -> str:
    """At most `limit` printable characters of `value` (a str, bytes decoded as UTF-8 with replacement, or
    anything else's repr) for an error message: control and other non-printable characters escaped
    (``\\x1b``), and ``… (N characters)`` when cut. Peer data (protocol messages) and input values are
    quoted through it, so an error line stays short and harmless on a terminal."""
    if isinstance(value, (bytes, bytearray)):
        text = bytes(value[:limit * 4]).decode("utf-8", "replace")
        n = len(value)
    else:
        text = value if isinstance(value, str) else repr(value)
        n = len(text)
    out = []
    size = 0
    for c in text:
        e = c if c.isprintable() else (f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
                                       if ord(c) < 0x10000 else f"\\U{ord(c):08x}")
        if size + len(e) > limit:
            return "".join(out) + f"… ({n} {'bytes' if isinstance(value, (bytes, bytearray)) else 'characters'})"
        out.append(e)
        size += len(e)
    return "".join(out)
