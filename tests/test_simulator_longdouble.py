"""The simulator's pure-Python long double (`burstbuffer.simulator.longdouble.LD`) gives numpy's x87
``longdouble`` results bit for bit: the operations Batsim's outputs make (a difference of two doubles, a
sum, a quotient, a sum of many, the conversion to double, ``strtold``), on random doubles of every
magnitude, on values built to round at a tie, and at the edges (zero, negatives, subnormals)."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from burstbuffer.simulator.longdouble import LD

from .conftest import examples

NP = np.longdouble

if np.finfo(NP).nmant != 63:   # numpy's longdouble is the x87 80-bit type on x86-64 Linux only
    pytest.skip("numpy's longdouble is not the x87 extended type here", allow_module_level=True)


def same(ours: LD, ref) -> bool:
    """Bit for bit: the same exact value, and the same nearest double."""
    p, q = ref.as_integer_ratio()
    return ours.n * q == p << 1152 and float(ours) == float(ref)


def doubles(rng: random.Random, n: int) -> list[float]:
    """Doubles of every kind: full 53-bit significands over a wide range of exponents, short significands
    (whose sums and differences often round at a tie), times in seconds, and a few edge values."""
    out = [0.0, -0.0, 1e-5, 0.1, 1.0, 2.0 ** 64, 2.0 ** 64 + 2.0 ** 12, 5e-324, 2.0 ** -1022, 1e300, -7.5]
    for _ in range(n):
        kind = rng.randrange(4)
        if kind == 0:
            x = math.ldexp(rng.random() + 0.5, rng.randint(-60, 70))
        elif kind == 1:
            x = math.ldexp(rng.randrange(1, 1 << rng.randint(1, 12)), rng.randint(-40, 80))
        elif kind == 2:
            x = round(rng.uniform(0, 3e7), rng.randint(0, 9))
        else:
            x = rng.uniform(-1e6, 1e6)
        out.append(-x if rng.random() < 0.2 else x)
    return out


def test_arithmetic_matches_numpy_on_random_doubles():
    rng = random.Random(30)
    xs = doubles(rng, 1500)
    for _ in range(20000):
        a, b = rng.choice(xs), rng.choice(xs)
        la, lb, na, nb = LD(a), LD(b), NP(a), NP(b)
        assert float(la) == a
        assert same(la - lb, na - nb), (a, b)
        assert same(la + lb, na + nb), (a, b)
        if b != 0 and (a == 0 or abs(na / nb) > 2.0 ** -1000):   # LD's documented range
            assert same(la / lb, na / nb), (a, b)
        assert (la < lb) == (na < nb) and (la == lb) == (na == nb)


def test_chains_match_numpy():
    """Batsim's jobs.csv arithmetic on long doubles that are not doubles: runtime = end - start,
    completion = start + runtime, turnaround = completion - submission, stretch = turnaround / runtime,
    the sums over jobs."""
    rng = random.Random(4)
    xs = doubles(rng, 300)
    tot, ntot = LD(0), NP(0)
    for _ in range(5000):
        sub, start, end = sorted(abs(rng.choice(xs)) for _ in range(3))
        run, nrun = LD(end) - LD(start), NP(end) - NP(start)
        comp, ncomp = LD(start) + run, NP(start) + nrun
        turn, nturn = comp - LD(sub), ncomp - NP(sub)
        assert same(run, nrun) and same(comp, ncomp) and same(turn, nturn), (sub, start, end)
        if run != 0:
            assert same(turn / run, nturn / nrun), (sub, start, end)
            tot, ntot = tot + turn / run, ntot + nturn / nrun
            assert same(tot, ntot)
        assert same(max(LD(0), turn), max(NP(0), nturn))


def test_ties_round_to_even():
    big = 2.0 ** 64
    for k in range(1, 40):
        for tail in (0.5, 1.5, 2.5, 1.0, 3.0, 0.25):
            a, b = big * k, tail
            assert same(LD(a) + LD(b), NP(a) + NP(b)), (a, b)
            assert same(LD(a) - LD(b), NP(a) - NP(b)), (a, b)


def test_conversions():
    for text in ("1e-5", "0.1", "3", "123456789.123456789", "-2.5e-3", "1e-300"):
        assert same(LD(text), NP(text)), text
    assert same(LD(2 ** 70 + 1), NP(2 ** 70 + 1))
    assert float(LD(-1)) == -1.0 and LD(-1) < 0 and LD(0) == 0 and not LD(0.0) and LD(1e-5)
    assert hash(LD(2.5)) == hash(2.5) and LD(2.5) == 2.5
    assert "%f" % float(LD("1e-5")) == "0.000010"
    with pytest.raises(ZeroDivisionError):
        LD(1) / LD(0)
    with pytest.raises(ValueError):
        LD(float("inf"))
    with pytest.raises(ValueError):
        LD("ten")


@settings(max_examples=examples(5))
@given(st.floats(allow_nan=False, allow_infinity=False, width=64),
       st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_property_difference_sum_quotient(a, b):
    if max(abs(a), abs(b)) > 1e290:       # numpy's long double goes on past the double's range; so does LD
        a, b = a / 1e20, b / 1e20
    assert same(LD(a) - LD(b), NP(a) - NP(b))
    assert same(LD(a) + LD(b), NP(a) + NP(b))
    if b != 0 and (a == 0 or abs(NP(a) / NP(b)) > 2.0 ** -1000):   # LD's documented range
        assert same(LD(a) / LD(b), NP(a) / NP(b))
