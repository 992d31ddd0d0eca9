"""Batsim's ``long double`` in pure Python: `LD`, the x86 80-bit extended type's arithmetic (a 64-bit
significand, every result rounded to nearest, ties to even), exactly, without numpy.

Batsim 4.2.1 keeps job start times, runtimes and its jobs.csv metrics (and the energy sums of ``-E``) in
C's ``long double``, which on x86-64 Linux is the x87 extended format; the simulator computes them the
same way so that its outputs print Batsim's digits (`outputs`, `energy`, `masters`). numpy's
``longdouble`` is that type too, but importing numpy costs more than the rest of the simulator's start
(docs/startup.md); this class gives the same results bit for bit (checked against numpy on random and
edge cases by tests/test_simulator_longdouble.py).

How: a value is held as an integer `n` of units 2**-1152 — every double, subnormals included, is one
exactly — and each operation computes the exact result in integers, then rounds it to 64 significant
bits (ties to even), as the x87 unit does. Conversions: from a float, an int or another `LD` (exact; an
int beyond 64 bits is rounded), from a decimal string (``LD("1e-5")``: correctly rounded, as C's
``strtold``); ``float(x)`` is correctly rounded to the nearest double (ties to even), as C's cast.

Limits: results smaller in magnitude than 2**-1086 (far below any time or energy) are rounded to the grid
of 2**-1152 rather than to 64 significant bits; no infinities or NaNs (a division by zero raises
ZeroDivisionError, a float inf or nan ValueError).
"""
from __future__ import annotations

import math
from math import frexp, isfinite

__all__ = ["LD"]

_K = 1152                 # a value is n * 2**-_K
_SCALE = 1 << _K
_P = 64                   # significand bits of the x87 extended format
_TWO53 = 9007199254740992.0


def _round(n: int) -> int:
    """`n` (units 2**-_K) rounded to `_P` significant bits, ties to even."""
    b = n.bit_length()
    if b <= _P:
        return n
    s = b - _P
    m = n if n >= 0 else -n
    low = m & ((1 << s) - 1)
    if not low:
        return n
    m >>= s
    half = 1 << (s - 1)
    if low > half or (low == half and m & 1):
        m += 1
    m <<= s
    return m if n >= 0 else -m


def _ratio(p: int, q: int) -> int:
    """The rational p / q (q != 0) in units 2**-_K, rounded to `_P` significant bits, ties to even."""
    if q < 0:
        p, q = -p, -q
    neg = p < 0
    if neg:
        p = -p
    quo, rem = divmod(p << _K, q)
    s = quo.bit_length() - _P
    if s <= 0:                      # below 2**(_P - _K): rounded to the grid
        if 2 * rem > q or (2 * rem == q and quo & 1):
            quo += 1
    else:
        low = quo & ((1 << s) - 1)
        quo >>= s
        half = 1 << (s - 1)
        if low > half or (low == half and (rem or quo & 1)):
            quo += 1
        quo <<= s
    return -quo if neg else quo


def _from_float(x: float) -> int:
    if not isfinite(x):
        raise ValueError(f"LD: not a finite number: {x!r}")
    m, e = frexp(x)
    return int(m * _TWO53) << (e - 53 + _K)


_new = object.__new__


def _ld(n: int) -> "LD":
    o = _new(LD)
    o.n = n
    return o


def _units(x) -> int:
    """`x` (an LD, float or int) in units 2**-_K."""
    if type(x) is LD:
        return x.n
    if type(x) is float:
        return _from_float(x)
    return LD(x).n


class LD:
    """An x87 ``long double`` value (module docstring). ``LD(x)``: x a float, int, `LD` or decimal string
    (default 0). Arithmetic ``+ - * /`` and unary ``-`` with another `LD`, a float or an int give an `LD`
    rounded as the x87 unit rounds; comparisons are exact; ``float(x)`` is the nearest double."""

    __slots__ = ("n",)

    def __init__(self, x=0.0):
        if type(x) is float:
            self.n = _from_float(x)
        elif type(x) is LD:
            self.n = x.n
        elif isinstance(x, int):
            self.n = _round(int(x) << _K)
        elif isinstance(x, str):
            from fractions import Fraction

            try:
                f = Fraction(x.strip())
            except ValueError:
                raise ValueError(f"LD: not a decimal number: {x!r}") from None
            self.n = _ratio(f.numerator, f.denominator)
        else:
            self.n = _from_float(float(x))

    # arithmetic
    def __add__(self, other):
        return _ld(_round(self.n + _units(other)))

    __radd__ = __add__

    def __sub__(self, other):
        return _ld(_round(self.n - _units(other)))

    def __rsub__(self, other):
        return _ld(_round(_units(other) - self.n))

    def __mul__(self, other):
        return _ld(_ratio(self.n * _units(other), _SCALE * _SCALE))

    __rmul__ = __mul__

    def __truediv__(self, other):
        d = _units(other)
        if not d:
            raise ZeroDivisionError("LD division by zero")
        return _ld(_ratio(self.n, d))

    def __rtruediv__(self, other):
        if not self.n:
            raise ZeroDivisionError("LD division by zero")
        return _ld(_ratio(_units(other), self.n))

    def __neg__(self):
        return _ld(-self.n)

    def __abs__(self):
        return _ld(abs(self.n))

    # conversions
    def __float__(self) -> float:
        try:
            return self.n / _SCALE  # int / int: correctly rounded (ties to even)
        except OverflowError:       # beyond the double's range: C's cast gives an infinity
            return math.inf if self.n > 0 else -math.inf

    def __bool__(self) -> bool:
        return bool(self.n)

    def __repr__(self) -> str:
        return f"LD({float(self)!r})" if LD(float(self)).n == self.n else f"LD({float(self)!r}~)"

    def __hash__(self) -> int:
        return hash(float(self))    # equal values (an LD equal to a float included) hash alike

    # comparisons (exact)
    def __eq__(self, other) -> bool:
        try:
            return self.n == _units(other)
        except (TypeError, ValueError):
            return NotImplemented

    def __ne__(self, other) -> bool:
        try:
            return self.n != _units(other)
        except (TypeError, ValueError):
            return NotImplemented

    def __lt__(self, other) -> bool:
        return self.n < _units(other)

    def __le__(self, other) -> bool:
        return self.n <= _units(other)

    def __gt__(self, other) -> bool:
        return self.n > _units(other)

    def __ge__(self, other) -> bool:
        return self.n >= _units(other)
