"""How a parallel job's communication becomes SimGrid flows: the network models of ``--network-model``
(docs/io-model.md §5).

A ``parallel_homogeneous`` profile ``{"cpu": F, "com": B}`` on n hosts means, in Batsim (its
``task_execution.cpp``), one SimGrid parallel task whose n × n bytes matrix has B bytes from every host to
every other host: n·(n−1) host-to-host flows. Under ``ptask_L07`` all of them are one action whose
creation looks up n² routes and whose share of every link it crosses is recomputed at each event; at 1,000
hosts a single compute phase carries a million flows. The models:

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

``uncontended``
    An approximation for large machines, opt-in: the phase's communication is priced once, as if the phase
    were alone on the network, and folded into its duration; the phase then occupies only its hosts' CPUs in
    SimGrid's bandwidth sharing (no link at all). The price is that of the ``random-ring`` flows alone:
    under ``ptask_L07`` a parallel task alone lasts its longest route latency plus the larger of its
    computation time and max over links of (bytes on the link / bandwidth), so the phase becomes an
    execution of ``speed × (latency + max(cpu / speed, max_l bytes_l / bandwidth_l))`` flops on each host.
    n route look-ups per job (cached), none per event. A phase alone on the network lasts what it lasts
    under ``random-ring``; what is lost is the contention between jobs and with the I/O on the links the
    phases would share (and L07's TCP-window bound, negligible at these latencies). Every link of a route
    is counted as shared: a FATPIPE link on a compute-to-compute route (none in the bundled Dragonflies)
    would be over-counted.

Only ``parallel_homogeneous`` (and ``parallel_homogeneous_total``) profiles are affected; explicit
``parallel`` matrices, PFS/BB transfers and data staging are sent as given.
"""
from __future__ import annotations

import functools
import random

#: ``--network-model`` choices; the first is the default.
NETWORK_MODELS = ("exact", "ring", "random-ring", "uncontended")


def check_model(name: str) -> str:
    """`name` if it is a network model, else ValueError naming the choices."""
    if name not in NETWORK_MODELS:
        raise ValueError(f"unknown network model {name!r} (choose from {', '.join(NETWORK_MODELS)})")
    return name


def homogeneous_bytes(n: int, com: float, model: str = "exact") -> list[float]:
    """The row-major sender × receiver bytes matrix (n² floats, [] when ``com <= 0``) of a homogeneous
    parallel task on `n` hosts with `com` bytes per ordered pair of distinct hosts, under network `model`
    (module docstring). Raises ValueError for an unknown model."""
    if com <= 0 or model == "uncontended":   # uncontended: the communication is in the flops (ptask)
        check_model(model)
        return []
    if model == "exact" or n <= 2:
        check_model(model)
        return [0.0 if x == y else com for y in range(n) for x in range(n)]
    if model in ("ring", "random-ring"):
        out = [0.0] * (n * n)
        for src, dst, nbytes in ring_flows(n, com, shuffled=model == "random-ring"):
            out[src * n + dst] = nbytes
        return out
    raise ValueError(check_model(model))


def ring_flows(n: int, com: float, *, shuffled: bool) -> list[tuple[int, int, float]]:
    """The flows (sender, receiver, bytes) of a ring model on hosts 0..n-1 with `com` bytes per ordered pair
    of distinct hosts: for n > 2 each host sends its all-to-all volume, (n−1)·com, to the next one in the
    allocation's order (`shuffled` false: ``ring``) or in `cyclic_order` (``random-ring``); for n = 2 the
    all-to-all's two flows; none for n < 2 or com <= 0."""
    if n < 2 or com <= 0:
        return []
    if n == 2:
        return [(0, 1, com), (1, 0, com)]
    order = cyclic_order(n) if shuffled else range(n)
    total = com * (n - 1)
    return [(k, order[(i + 1) % n], total) for i, k in enumerate(order)]


def ring_alone(hosts: list, com: float) -> tuple[float, float]:
    """(latency [s], transfer time [s]) of the ``random-ring`` flows of a homogeneous phase with `com` bytes
    per ordered pair of distinct hosts on the SimGrid `hosts` (in the allocation's order), alone on the
    network: the longest of their routes' latencies, and max over links of bytes on the link / its
    bandwidth (a link object is one direction of a SPLITDUPLEX link, as SimGrid routes it). (0, 0) when
    there is no communication (`com` <= 0 or fewer than 2 hosts). n route look-ups."""
    load: dict[str, float] = {}
    bandwidth: dict[str, float] = {}
    latency = 0.0
    for src, dst, nbytes in ring_flows(len(hosts), com, shuffled=True):
        links, lat = hosts[src].route_to(hosts[dst])
        latency = max(latency, lat)
        for link in links:
            name = link.name
            if name not in bandwidth:
                bandwidth[name] = link.bandwidth
            load[name] = load.get(name, 0.0) + nbytes
    return latency, max((b / bandwidth[name] for name, b in load.items()), default=0.0)


def uncontended_seconds(cpu: float, speeds: list[float], latency: float, transfer: float) -> float:
    """Duration [s] of a phase of `cpu` flops per host on hosts of `speeds` [flop/s] whose communication,
    alone on the network, has `latency` and `transfer` seconds (`ring_alone`): as ``ptask_L07`` times a
    parallel task alone, latency + max(max_i cpu / speed_i, transfer). Raises ValueError for a host without
    speed when there is computation."""
    t_cpu = 0.0
    if cpu > 0:
        if min(speeds) <= 0:
            raise ValueError("a host of the phase has no speed")
        t_cpu = max(cpu / s for s in speeds)
    return latency + max(t_cpu, transfer)


@functools.lru_cache(maxsize=256)
def cyclic_order(n: int) -> tuple[int, ...]:
    """The ``random-ring`` order of hosts 0..n-1: a shuffle by Python's Mersenne Twister seeded with n (so
    the same in every run and on every machine)."""
    order = list(range(n))
    random.Random(n).shuffle(order)
    return tuple(order)
