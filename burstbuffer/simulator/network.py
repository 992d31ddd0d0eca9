"""How a parallel job's communication becomes SimGrid flows: the network models of ``--network-model``
(docs/io-model.md §5).

A ``parallel_homogeneous`` profile ``{"cpu": F, "com": B}`` on n hosts means, in Batsim (its
``task_execution.cpp``), one SimGrid parallel task whose n × n bytes matrix has B bytes from every host to
every other host: n·(n−1) host-to-host flows. Under ``ptask_L07`` all of them are one action whose
creation looks up n² routes and whose share of every link it crosses is recomputed at each event; at 1,000
hosts a single compute phase carries a million flows (issue 17). The models:

``exact`` (default)
    Batsim's all-to-all matrix, as above. The only model of a real Batsim; every output of the project
    (schedule hashes, differential tests against Batsim 4.2.1) uses it.
``ring``
    An approximation, opt-in: host k sends its whole all-to-all volume, (n−1)·B bytes, to host k+1 (mod
    n) of the allocation (in its order). n flows instead of n·(n−1). Every host sends and receives exactly
    the bytes it does in the all-to-all, so a phase bounded by its computation or by the hosts' own links
    lasts as long as in ``exact``; the traffic that the all-to-all spreads over the routers' and groups'
    links is gone, so phases bounded by those links are shorter, and other jobs meet less contention.
    For n ≤ 2 it is the all-to-all itself.
``random-ring``
    As ``ring``, but around a fixed pseudo-random cyclic order of the allocation (a shuffle seeded by n, the
    same in every run): host k sends its (n−1)·B bytes to the next host in that order. Each host still sends
    and receives exactly its all-to-all volume, and each flow's destination is spread over the other hosts
    as in the all-to-all, so every link — the routers' and the groups' links too — carries in expectation
    the bytes the all-to-all puts on it (n_a·n_b·B between two parts of n_a and n_b hosts), with n flows;
    around that expectation a link carries whole flows of (n−1)·B, so a lightly used link may carry more.

Only ``parallel_homogeneous`` (and ``parallel_homogeneous_total``) profiles are affected; explicit
``parallel`` matrices, PFS/BB transfers and data staging are sent as given.
"""
from __future__ import annotations

import functools
import random

#: ``--network-model`` choices; the first is the default.
NETWORK_MODELS = ("exact", "ring", "random-ring")


def check_model(name: str) -> str:
    """`name` if it is a network model, else ValueError naming the choices."""
    if name not in NETWORK_MODELS:
        raise ValueError(f"unknown network model {name!r} (choose from {', '.join(NETWORK_MODELS)})")
    return name


def homogeneous_bytes(n: int, com: float, model: str = "exact") -> list[float]:
    """The row-major sender × receiver bytes matrix (n² floats, [] when ``com <= 0``) of a homogeneous
    parallel task on `n` hosts with `com` bytes per ordered pair of distinct hosts, under network `model`
    (module docstring). Raises ValueError for an unknown model."""
    if com <= 0:
        return []
    if model == "exact" or n <= 2:
        check_model(model)
        return [0.0 if x == y else com for y in range(n) for x in range(n)]
    if model in ("ring", "random-ring"):
        order = cyclic_order(n) if model == "random-ring" else range(n)
        out = [0.0] * (n * n)
        total = com * (n - 1)
        for i, k in enumerate(order):
            out[k * n + order[(i + 1) % n]] = total
        return out
    raise ValueError(check_model(model))


@functools.lru_cache(maxsize=256)
def cyclic_order(n: int) -> tuple[int, ...]:
    """The ``random-ring`` order of hosts 0..n-1: a shuffle by Python's Mersenne Twister seeded with n (so
    the same in every run and on every machine)."""
    order = list(range(n))
    random.Random(n).shuffle(order)
    return tuple(order)
