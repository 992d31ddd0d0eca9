"""The scheduler's view of the platform: compute resources, burst-buffer nodes, the PFS.

Built from Batsim's SIMULATION_BEGINS (docs/protocol.md) — never from assumed ids: Batsim numbers
resources in SimGrid's host order (names sorted as strings), so the scheduler maps by name.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from procset import ProcSet

from ..errors import InputError
from .units import parse_bytes

#: docs/platform.md: groups, chassis per group, routers per chassis, nodes per router of the paper's Dragonfly.
PAPER_DRAGONFLY = (3, 4, 3, 3)

_NODE_RE = re.compile(r"^(?P<prefix>.*?)(?P<num>\d+)(?P<suffix>\D*)$")


def is_pfs(name: str, properties: dict[str, str]) -> bool:
    """True for the storage host that is the parallel file system, not a burst-buffer node: the host named
    ``pfs``, or one with the property ``role=pfs`` or ``pfs=1``/``true`` (docs/platform.md)."""
    return name == "pfs" or properties.get("role") == "pfs" or properties.get("pfs") in ("1", "true")


def bb_capacity_text(properties: dict[str, str], zone_properties: dict[str, str]) -> str | None:
    """A storage host's ``burst_buffer_capacity`` as written (e.g. "40GB"): its own property, else its
    zone's; None when neither has one (docs/platform.md)."""
    return properties.get("burst_buffer_capacity") or zone_properties.get("burst_buffer_capacity")


class NoStorageError(InputError):
    """A platform without burst-buffer storage node. Its reason names the option giving storage roles:
    `option` (default ``-r HOSTS:storage``, Batsim's and ``simulate``'s); a command with another (``run``'s
    ``--storage HOSTS``) re-raises `for_option`."""

    def __init__(self, source: str, item: str = "storage_resources", reason: str = "",
                 option: str = "-r HOSTS:storage"):
        super().__init__(source, item, reason or f"platform has no burst-buffer storage node (give storage roles "
                                                 f"with {option})")

    def for_option(self, option: str) -> "NoStorageError":
        """The same error naming `option` (e.g. ``--storage HOSTS``)."""
        return NoStorageError(self.source, self.item, option=option)


@dataclass(frozen=True)
class Dragonfly:
    """Dragonfly shape (SimGrid `topo_parameters` "G,_;C,_;R,_;N" → G, C, R, N).

    A host numbered k (its name's radical, e.g. ``node_k``) sits in group
    ``k // (C*R*N)`` and chassis ``(k // (R*N)) % C`` (SimGrid's rank → coordinates).
    """

    groups: int
    chassis: int
    routers: int
    nodes_per_router: int

    @classmethod
    def parse(cls, text: str) -> "Dragonfly":
        """Parse "G,C,R,N" or SimGrid's "G,l;C,l;R,l;N"; raise ValueError if malformed."""
        parts = [p.split(",")[0] for p in text.replace(";", " ").split()] if ";" in text else text.split(",")
        vals = [int(p) for p in parts]
        if len(vals) != 4 or min(vals) <= 0:
            raise ValueError(f"dragonfly shape must be 4 positive integers G,C,R,N, got {text!r}")
        return cls(*vals)

    def coordinates(self, rank: int) -> tuple[int, int]:
        """(group, global chassis index) of host number `rank`."""
        per_chassis = self.routers * self.nodes_per_router
        chassis = rank // per_chassis
        return chassis // self.chassis, chassis


@dataclass
class Platform:
    """Resources as the scheduler sees them.

    Attributes:
        compute: ProcSet of compute resource ids (Batsim ids).
        names: resource id → host name, for every resource (compute and storage).
        bb_capacity: BB-node resource id → capacity in bytes (storage nodes other than the PFS).
        pfs: resource id of the parallel file system storage host, or None.
        location: resource id → (group, chassis) for Dragonfly hosts; empty if unknown.
    """

    compute: ProcSet
    names: dict[int, str]
    bb_capacity: dict[int, int]
    pfs: int | None = None
    location: dict[int, tuple[int, int]] = field(default_factory=dict)
    _pref: dict[int, tuple[int, ...]] = field(default_factory=dict, repr=False)
    _pref_by_location: dict = field(default_factory=dict, repr=False)

    @property
    def nb_compute(self) -> int:
        return len(self.compute)

    @property
    def total_bb(self) -> int:
        return sum(self.bb_capacity.values())

    def bb_preference(self, compute_id: int) -> tuple[int, ...]:
        """BB nodes in the order a compute node prefers them (docs/platform.md): its own chassis, then its
        group, then any; ties broken by resource id. Without coordinates: resource-id order.

        The order depends only on the node's (group, chassis), so nodes of one chassis share one tuple
        (computed once per chassis: at 9,600 compute nodes and 1,200 BB nodes, one sort per node took
        seconds and a tuple per node ~90 MB)."""
        pref = self._pref.get(compute_id)
        if pref is None:
            loc = self.location.get(compute_id)
            pref = self._pref_by_location.get(loc)
            if pref is None:
                bbs = sorted(self.bb_capacity)
                if loc is None:
                    pref = tuple(bbs)
                else:
                    def rank(b: int) -> tuple[int, int]:
                        lb = self.location.get(b)
                        if lb is None:
                            return (2, b)
                        if lb[1] == loc[1]:
                            return (0, b)
                        if lb[0] == loc[0]:
                            return (1, b)
                        return (2, b)
                    pref = tuple(sorted(bbs, key=rank))
                self._pref_by_location[loc] = pref
            self._pref[compute_id] = pref
        return pref

    @classmethod
    def from_simulation_begins(
        cls,
        data: dict,
        *,
        bb_capacity: int | str | None = None,
        dragonfly: Dragonfly | str | None = None,
        source: str = "SIMULATION_BEGINS",
    ) -> "Platform":
        """Build from the `data` of Batsim's SIMULATION_BEGINS event.

        BB capacity of a storage node (bytes) comes, in this order, from: its host property
        `burst_buffer_capacity` (e.g. "40GB"), its zone property of the same name, the
        `bb_capacity` argument (CLI `--bb-capacity`). The storage host named `pfs` (or with
        property `role=pfs`) is the PFS and has no BB capacity.
        Dragonfly coordinates come from `dragonfly` ("G,C,R,N"), else a zone property
        `topo_parameters`, else the paper's shape when there are exactly 108 `node_k` hosts.

        Raises InputError (one line: item and reason) if there is no compute resource, no BB
        node, or a BB node with no known capacity.
        """
        compute = [r for r in data.get("compute_resources", [])]
        storage = [r for r in data.get("storage_resources", [])]
        if not compute:
            raise InputError(source, "compute_resources", "platform has no compute resource")
        names = {int(r["id"]): r["name"] for r in compute + storage}
        try:
            default_cap = parse_bytes(bb_capacity) if bb_capacity is not None else None
        except ValueError as exc:
            raise InputError("--bb-capacity", str(bb_capacity), f"burst_buffer_capacity: {exc}") from None
        bb: dict[int, int] = {}
        pfs = None
        for r in storage:
            props = r.get("properties") or {}
            zprops = r.get("zone_properties") or {}
            rid = int(r["id"])
            if is_pfs(r["name"], props):
                pfs = rid
                continue
            cap = bb_capacity_text(props, zprops)
            if cap is not None:
                try:
                    bb[rid] = parse_bytes(cap)
                except ValueError as exc:
                    raise InputError(source, r["name"], f"burst_buffer_capacity: {exc}") from None
            elif default_cap is not None:
                bb[rid] = default_cap
            else:
                raise InputError(
                    source, r["name"],
                    "storage node has no burst_buffer_capacity (host or zone property); pass --bb-capacity")
        if not bb:
            raise NoStorageError(source)
        shape = dragonfly
        if shape is None:
            for r in compute:
                tp = (r.get("zone_properties") or {}).get("topo_parameters")
                if tp:
                    shape = tp
                    break
        location: dict[int, tuple[int, int]] = {}
        nums = {}
        for rid, name in names.items():
            m = _NODE_RE.match(name)
            if m and rid != pfs:
                nums[rid] = int(m.group("num"))
        if shape is None and len(nums) == 108 and sorted(nums.values()) == list(range(108)):
            shape = Dragonfly(*PAPER_DRAGONFLY)
        if isinstance(shape, str):
            shape = Dragonfly.parse(shape)
        if shape is not None:
            location = {rid: shape.coordinates(k) for rid, k in nums.items()}
        return cls(ProcSet(*[int(r["id"]) for r in compute]), names, bb, pfs, location)

    @classmethod
    def simple(cls, nb_compute: int, bb_nodes: dict[int, int] | list[int], pfs: bool = True) -> "Platform":
        """A small platform for tests: compute ids 0..n-1, BB nodes numbered after them
        (`bb_nodes` = list of capacities in bytes), no topology."""
        caps = list(bb_nodes.values()) if isinstance(bb_nodes, dict) else list(bb_nodes)
        names = {i: f"node_{i}" for i in range(nb_compute)}
        bb = {}
        for j, cap in enumerate(caps):
            bb[nb_compute + j] = int(cap)
            names[nb_compute + j] = f"bb_{j}"
        pfs_id = None
        if pfs:
            pfs_id = nb_compute + len(caps)
            names[pfs_id] = "pfs"
        return cls(ProcSet((0, nb_compute - 1)) if nb_compute else ProcSet(), names, bb, pfs_id)
