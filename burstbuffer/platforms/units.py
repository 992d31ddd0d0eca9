"""Quantities with units as SimGrid writes them: sizes ("40GB", "4GiB"), speeds ("1Gf"), bandwidths
("1250MBps", "10Gbps") and latencies ("50us"), read as SimGrid 3.32 reads them.

Source: SimGrid's platform documentation (units of `speed`, `bandwidth`, `latency`). Sizes are bytes, speeds
flop/s, bandwidths bytes/s (a `bps` suffix means bits/s, divided by 8), latencies seconds. A bare number is
taken in the base unit (SimGrid warns but accepts it). Every parser raises ValueError naming the bad text,
also for a value that is not finite (``1e400B``) or a size of `MAX_BYTES` or more.
"""
from __future__ import annotations

import math
import re

_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")
_BYTES = {"": 1, "b": 1, "B": 1, "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15,
          "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


#: Sizes must be below 2^63 bytes (8 EiB; a signed 64-bit integer, as SimGrid and Batsim hold them).
MAX_BYTES = 2 ** 63


def _size(v: float, text) -> int:
    if not math.isfinite(v) or not v < MAX_BYTES:
        raise ValueError(f"size {text!r} is out of range (at most {MAX_BYTES - 1} bytes)")
    return int(v)


def parse_bytes(value: int | float | str) -> int:
    """Bytes from a number or a SimGrid-style size ("40GB" = 40·10^9, "4GiB" = 4·2^30).

    Raises ValueError with the offending text if the value or the unit is not understood, or if it is
    negative, not finite or not below `MAX_BYTES`.
    """
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError(f"negative size {value!r}")
        return _size(value, value)
    m = _SIZE.match(str(value))
    if not m or m.group(2) not in _BYTES:
        raise ValueError(f"not a size in bytes: {value!r} (expected e.g. 40GB)")
    return _size(float(m.group(1)) * _BYTES[m.group(2)], value)


_NUM = re.compile(r"^\s*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")

_DEC = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18, "Z": 1e21, "Y": 1e24}
_BIN = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60}

_TIME = {"": 1.0, "s": 1.0, "w": 7 * 86400.0, "d": 86400.0, "h": 3600.0, "m": 60.0}
#: sub-second units are divisors, so that "100us" gives the double nearest to 1e-4 (as a C literal 100e-6).
_TIME_DIV = {"ms": 1e3, "us": 1e6, "ns": 1e9, "ps": 1e12}


def _split(text: str, what: str) -> tuple[float, str]:
    m = _NUM.match(str(text))
    if not m:
        raise ValueError(f"not a {what}: {text!r}")
    value = float(m.group(1))
    if not math.isfinite(value):
        raise ValueError(f"{what} {text!r} is out of range (not a finite number)")
    return value, m.group(2)


def _scaled(value: float, unit: str, base_units: tuple[str, ...], bits: tuple[str, ...], text: str,
            what: str) -> float:
    if unit == "":
        return value
    for base in base_units + bits:
        if unit.endswith(base):
            prefix = unit[: -len(base)]
            if prefix in _BIN:
                factor = _BIN[prefix]
            elif prefix in _DEC:
                factor = _DEC[prefix]
            else:
                break
            scaled = value * factor / (8.0 if base in bits else 1.0)
            if not math.isfinite(scaled):
                raise ValueError(f"{what} {text!r} is out of range (not a finite number)")
            return scaled
    raise ValueError(f"unknown unit in {what} {text!r}")


def parse_speed(text: str) -> float:
    """Computing speed in flop/s from "1Gf", "100Mf", "1e9", "2.5kflops". Raises ValueError."""
    value, unit = _split(text, "speed")
    return _scaled(value, unit, ("flops", "f"), (), text, "speed")


def parse_bandwidth(text: str) -> float:
    """Bandwidth in bytes/s from "1250MBps", "10Gbps" (bits), "1GiBps", "1e9". Raises ValueError."""
    value, unit = _split(text, "bandwidth")
    return _scaled(value, unit, ("Bps",), ("bps",), text, "bandwidth")


def parse_latency(text: str) -> float:
    """Latency (a time) in seconds from "50us", "0", "1.5ms", "2h". Raises ValueError."""
    value, unit = _split(text, "latency")
    if unit in _TIME_DIV:
        return value / _TIME_DIV[unit]
    if unit not in _TIME:
        raise ValueError(f"unknown unit in latency {text!r}")
    return value * _TIME[unit]
