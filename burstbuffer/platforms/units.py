"""Quantities with units as SimGrid writes them ("40GB", "1250MBps", "50us", "1Gf")."""
from __future__ import annotations

import re

_NUM = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")
_BYTES = {"": 1, "b": 1, "B": 1, "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15,
          "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def parse_bytes(value: int | float | str) -> int:
    """Bytes from a number or a SimGrid-style size ("40GB" = 40·10^9, "4GiB" = 4·2^30).

    Raises ValueError with the offending text if the value or the unit is not understood.
    """
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError(f"negative size {value!r}")
        return int(value)
    m = _NUM.match(str(value))
    if not m or m.group(2) not in _BYTES:
        raise ValueError(f"not a size in bytes: {value!r} (expected e.g. 40GB)")
    return int(float(m.group(1)) * _BYTES[m.group(2)])
