"""JSON numbers as Batsim 4.2.1 reads them.

Batsim parses every JSON text it is given (the scheduler's messages, the workload files) with RapidJSON
1.1.0's ``Document::Parse`` and its default flags, i.e. *without* ``kParseFullPrecisionFlag``. That parser
is exact for up to 15 significant digits and a decimal exponent within ±22, but for longer numbers it
accumulates the digits past the 53-bit range in a double (``d * 10 + digit``) and scales by a power of ten
once: about one 17-digit number in ten comes out 1 ulp away from the correctly rounded value Python's `json`
gives.

A job or a profile that the scheduler registers (REGISTER_JOB's ``job``, REGISTER_PROFILE's ``profile``)
goes through one more step: Batsim writes the parsed object back to text with its own RapidJSON ``Writer``,
which prints every double as C's ``%f`` (six decimals; Batsim's ``protocol.hpp``), and parses that text
again (``Job::from_json``, ``Profile::from_json``). A profile's ``"cpu": 4147750706549.3335`` thus becomes
``4147750706549.333496`` and then, read imprecisely, ``0x1.e2dc9a8ebaaacp+41`` — 1 ulp above the value the
scheduler meant, and the flops of the parallel task Batsim runs.

`read_float` is RapidJSON 1.1.0's ``Reader::ParseNumber`` (``reader.h``) and ``StrtodNormalPrecision``
(``internal/strtod.h``) written again in Python, digit for digit; `loads` reads a JSON text with it and
`rewritten` applies Batsim's write-and-read-again to a registered object. Checked against the real RapidJSON
in ``tests/test_jsonnumbers.py`` when its headers and a C++ compiler are present.
"""
from __future__ import annotations

import json

__all__ = ["read_float", "read_int", "loads", "rewritten"]

#: RapidJSON's ``internal::Pow10`` table: the doubles nearest to 1e0 … 1e308
_POW10 = [float(f"1e{k}") for k in range(309)]
_U53 = (1 << 53) - 1          # the fast path's significand bound
_U64_DIV10 = 0x1999999999999999  # 2^64 - 1 = 18446744073709551615
_I64_DIV10 = 0x0CCCCCCCCCCCCCCC  # 2^63 = 9223372036854775808


def _fast(d: float, e: int) -> float:
    if e < -308:
        return 0.0
    return d * _POW10[e] if e >= 0 else d / _POW10[-e]


def _parse(s: str):
    """RapidJSON's ParseNumber on the JSON number literal `s`: an int when RapidJSON keeps an integer,
    else a float. ValueError on text that is not a JSON number or that RapidJSON rejects (too big)."""
    n = len(s)
    i = 0
    minus = n > 0 and s[0] == "-"
    if minus:
        i = 1
    if i >= n or not ("0" <= s[i] <= "9"):
        raise ValueError(f"not a JSON number: {s!r}")
    v = 0          # RapidJSON's `i` then `i64` (Python ints hold both)
    use64 = False
    sig = 0        # significandDigit
    d = 0.0
    use_double = False
    if s[i] == "0":
        i += 1
    else:
        v = ord(s[i]) - 48
        i += 1
        # RapidJSON's 32-bit then 64-bit integer loops: each stops before the digit that would overflow it
        for lim, last in ((214748364, "8"), (_I64_DIV10, "8")) if minus else ((429496729, "5"), (_U64_DIV10, "5")):
            while i < n and "0" <= s[i] <= "9" and not (v >= lim and (v != lim or s[i] > last)):
                v = v * 10 + ord(s[i]) - 48
                sig += 1
                i += 1
            if not (i < n and "0" <= s[i] <= "9"):
                break
            use64 = True  # an overflow of the 32-bit loop; one of the 64-bit loop: a double from here on
        else:
            d = float(v)
            use_double = True
    if use_double:
        while i < n and "0" <= s[i] <= "9":
            if d >= 1.7976931348623157e307:
                raise ValueError(f"number too big: {s!r}")
            d = d * 10 + (ord(s[i]) - 48)
            i += 1
    exp_frac = 0
    if i < n and s[i] == ".":
        i += 1
        if i >= n or not ("0" <= s[i] <= "9"):
            raise ValueError(f"missing fraction: {s!r}")
        if not use_double:
            while i < n and "0" <= s[i] <= "9":
                if v > _U53:
                    break
                v = v * 10 + ord(s[i]) - 48
                exp_frac -= 1
                if v != 0:
                    sig += 1
                i += 1
            d = float(v)
            use_double = True
        while i < n and "0" <= s[i] <= "9":
            if sig < 17:
                d = d * 10.0 + (ord(s[i]) - 48)
                exp_frac -= 1
                if d > 0.0:
                    sig += 1
            i += 1
    exp = 0
    if i < n and s[i] in "eE":
        i += 1
        if not use_double:
            d = float(v)
            use_double = True
        exp_minus = False
        if i < n and s[i] in "+-":
            exp_minus = s[i] == "-"
            i += 1
        if i >= n or not ("0" <= s[i] <= "9"):
            raise ValueError(f"missing exponent: {s!r}")
        exp = ord(s[i]) - 48
        i += 1
        max_exp = 308 - exp_frac
        while i < n and "0" <= s[i] <= "9":
            exp = exp * 10 + ord(s[i]) - 48
            i += 1
            if exp_minus:
                if exp >= 214748364:
                    while i < n and "0" <= s[i] <= "9":
                        i += 1
            elif exp > max_exp:
                raise ValueError(f"number too big: {s!r}")
        if exp_minus:
            exp = -exp
    if i != n:
        raise ValueError(f"not a JSON number: {s!r}")
    if use_double:
        p = exp + exp_frac
        if p < -308:
            d = _fast(_fast(d, -308), p + 308)
        else:
            d = _fast(d, p)
        return -d if minus else d
    return -v if minus else v


def read_float(s: str) -> float:
    """The double RapidJSON's default parse makes of the JSON number literal `s` (a str such as
    ``"0.1"``, ``"-2.5e-3"``). Exact (Python's `float`) for up to 15 significant digits and a decimal
    exponent within ±22, where RapidJSON is exact too; else RapidJSON's own arithmetic. ValueError as
    `_parse`."""
    mant, _, e = s.replace("E", "e").partition("e")
    whole, _, frac = mant.lstrip("-").partition(".")
    digits = (whole + frac).lstrip("0")
    p = (int(e) if e else 0) - len(frac)
    if len(digits) <= 15 and -22 <= p <= 22 and len(e) < 6:
        return float(s)
    return float(_parse(s))


def read_int(s: str):
    """A JSON integer literal as RapidJSON keeps it: an int within 64 bits (signed when negative), else the
    double its default parse makes (`_parse`)."""
    if len(s) <= 18:
        return int(s)
    return _parse(s)


def loads(text: str):
    """`json.loads` with Batsim's numbers (`read_float`, `read_int`). Errors as `json.loads`."""
    return json.loads(text, parse_float=read_float, parse_int=read_int)


def rewritten(obj):
    """`obj` (a registered job or profile object, as `loads` returns it) after Batsim's write-and-read-again:
    every float printed as ``%f`` and read by `read_float`; ints, strings and the structure unchanged.
    Non-finite floats are kept (Batsim's writer would print ``inf``/``nan``, which it cannot read back)."""
    if isinstance(obj, float):
        return read_float("%f" % obj) if obj == obj and abs(obj) != float("inf") else obj
    if isinstance(obj, dict):
        return {k: rewritten(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [rewritten(v) for v in obj]
    return obj
