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
