"""Generate SimGrid Dragonfly platforms like the paper's, at any size (docs/platform.md).

``dragonfly_xml(DragonflyParams(3, 4, 3, 3))`` is the paper's platform, ``platforms/dragonfly96.xml``:
equal to it once the leading comment is removed (tests/test_platform_generator.py). A platform is

* one SimGrid ``DRAGONFLY`` cluster ``cluster`` with ``topo_parameters="G,1;C,1;R,1;K"``: G groups × C
  chassis × R routers × K nodes per router = N hosts ``node_0 … node_{N-1}`` (1 Gflop/s, links of
  ``--link-bandwidth`` and 50 µs, loopback 1000 MB/s). SimGrid numbers hosts group by group, chassis by
  chassis, so chassis c (0 ≤ c < G·C) holds ``node_{c·R·K} … node_{(c+1)·R·K − 1}``;
* burst-buffer (BB) storage nodes: the first B nodes of every chassis (the paper: B = 1, ``node_0, node_9,
  …``), each of ``burst_buffer_capacity`` bytes (a cluster property), listed in the property
  ``storage_nodes`` of a zone of their own without hosts, ``storage_nodes_zone``: Batsim forwards a zone's
  properties with every resource of the zone (``zone_properties``, its ``machines.cpp``), so on the cluster
  the list would be repeated by every resource — O(hosts × BB nodes) bytes in SIMULATION_BEGINS (131 MB at
  10,800 hosts) —; in a host-less zone it reaches no resource (docs/platform.md §4). The cluster also
  carries ``topo_parameters`` for the scheduler (its chassis → group → any BB preference);
* a ``pfs`` host (speed 0, ``role=storage``) joined to the cluster by one shared link ``link_pfs``
  (``--pfs-bandwidth``, 100 µs) and a ``master`` host (speed 0, ``role=master``) joined by ``link_master``
  (FATPIPE, the link bandwidth, 100 µs), each in its own zone, routed to the cluster's implicit router
  ``node_cluster_router``.

SimGrid versions (the file says so too): SimGrid ≤ 3.27 (3.25 in Batsim 4.0.0's image) loads the file as is;
SimGrid ≥ 3.28 does not create ``node_cluster_router`` for a Dragonfly, so under SimGrid 3.32 (this
project's) ``burstbuffer simulate`` and ``run`` rebuild it through SimGrid's API (their platform loader);
real Batsim 4.2.1 on SimGrid 3.32 needs the C++ equivalent (``batsim-4.2.1/dragonfly96_sg332.cpp``).

Constraints checked (InputError, one line): every count ≥ 1; B < R·K (a chassis keeps a compute node);
G ≤ R, because SimGrid's minimal Dragonfly routing (``DragonflyZone::get_local_route``, 3.25 … 3.32) leaves
a group through its router number *target group* of the chassis and enters through router number *source
group*: with more groups than routers per chassis SimGrid 3.32 reads past its link table and crashes
(segmentation fault); at most ``MAX_HOSTS`` hosts; positive, parseable sizes and bandwidths.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..fileio import atomic_write_text
from .units import parse_bandwidth, parse_bytes

#: Safety bound on the number of hosts (a typo such as --groups 1000000 should not hang SimGrid).
MAX_HOSTS = 1_000_000

#: Fixed characteristics of the paper's platform (docs/platform.md).
NODE_SPEED = "1Gf"
LINK_LATENCY = "50us"
LOOPBACK_BW = "1000MBps"
LOOPBACK_LAT = "0"
GATEWAY_LATENCY = "100us"

#: SimGrid versions the generated XML targets (see the module docstring).
SIMGRID_TARGETS = ("SimGrid <= 3.27 (XML loader, e.g. 3.25 in Batsim 4.0.0's image); SimGrid 3.32 through "
                   "burstbuffer's simulate and run commands, which rebuild the Dragonfly and node_cluster_router "
                   "with SimGrid's API")


def format_bandwidth(bps: float) -> str:
    """SimGrid text of a bandwidth in bytes/s: whole MB/s as ``"5000MBps"`` (as the paper's file), else
    ``"<bytes>Bps"``."""
    mb = bps / 1e6
    if mb == int(mb) and mb >= 1:
        return f"{int(mb)}MBps"
    return f"{int(bps)}Bps" if bps == int(bps) else f"{bps!r}Bps"


def format_bytes(n: int) -> str:
    """SimGrid text of a size in bytes: ``"40GB"``, ``"500MB"`` or ``"123B"`` (decimal units, docs/README.md)."""
    for unit, factor in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= factor and n % factor == 0:
            return f"{n // factor}{unit}"
    return f"{n}B"


@dataclass(frozen=True)
class DragonflyParams:
    """A Dragonfly platform to generate (module docstring). Counts are ints ≥ 1; `bb_capacity` bytes
    per BB node; `pfs_bandwidth`, `link_bandwidth` bytes/s. `check()` raises InputError."""

    groups: int
    chassis: int
    routers: int
    nodes_per_router: int
    bb_nodes_per_chassis: int = 1
    bb_capacity: int = 40 * 10**9
    pfs_bandwidth: float = 5e9
    link_bandwidth: float = 1.25e9

    @property
    def nodes_per_chassis(self) -> int:
        return self.routers * self.nodes_per_router

    @property
    def nb_chassis(self) -> int:
        return self.groups * self.chassis

    @property
    def nb_hosts(self) -> int:
        """Hosts of the Dragonfly cluster (compute + BB nodes; `pfs` and `master` not counted)."""
        return self.nb_chassis * self.nodes_per_chassis

    @property
    def nb_bb_nodes(self) -> int:
        return self.nb_chassis * self.bb_nodes_per_chassis

    @property
    def nb_compute(self) -> int:
        return self.nb_hosts - self.nb_bb_nodes

    @property
    def topo_parameters(self) -> str:
        """SimGrid's ``G,1;C,1;R,1;K`` (one link per blue/black/green connection, as the paper)."""
        return f"{self.groups},1;{self.chassis},1;{self.routers},1;{self.nodes_per_router}"

    def storage_ranks(self) -> list[int]:
        """Host numbers of the BB nodes: the first B of each chassis, chassis by chassis."""
        per = self.nodes_per_chassis
        return [c * per + j for c in range(self.nb_chassis) for j in range(self.bb_nodes_per_chassis)]

    def storage_nodes(self) -> list[str]:
        return [f"node_{k}" for k in self.storage_ranks()]

    def check(self) -> "DragonflyParams":
        """Raise InputError (item = the CLI option) if the platform is impossible; return self."""
        for opt, value in (("--groups", self.groups), ("--chassis", self.chassis), ("--routers", self.routers),
                           ("--nodes-per-router", self.nodes_per_router),
                           ("--bb-nodes-per-chassis", self.bb_nodes_per_chassis)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise InputError(opt, str(value), "must be a positive integer")
        if self.bb_nodes_per_chassis >= self.nodes_per_chassis:
            raise InputError("--bb-nodes-per-chassis", str(self.bb_nodes_per_chassis),
                             f"a chassis has {self.nodes_per_chassis} nodes (routers x nodes per router), so "
                             f"at most {self.nodes_per_chassis - 1} can be BB nodes (compute nodes must remain)")
        if self.groups > self.routers:
            raise InputError("--groups", str(self.groups),
                             f"more groups than routers per chassis ({self.routers}): SimGrid's Dragonfly "
                             "routing joins group i to group j through router j of a chassis, so it needs "
                             "groups <= routers (SimGrid 3.32 crashes otherwise)")
        if self.nb_hosts > MAX_HOSTS:
            raise InputError("platform", f"{self.topo_parameters}",
                             f"{self.nb_hosts} hosts, more than the {MAX_HOSTS} this generator allows")
        for opt, value in (("--bb-capacity", self.bb_capacity), ("--pfs-bandwidth", self.pfs_bandwidth),
                           ("--link-bandwidth", self.link_bandwidth)):
            if not value > 0 or value == float("inf"):
                raise InputError(opt, str(value), "must be positive and finite")
        return self

    @classmethod
    def from_options(cls, groups: int | str, chassis: int | str, routers: int | str, nodes_per_router: int | str,
                     bb_nodes_per_chassis: int | str = 1, bb_capacity: str | int = "40GB",
                     pfs_bandwidth: str | float = "5GBps", link_bandwidth: str | float = "1250MBps"
                     ) -> "DragonflyParams":
        """Parse the CLI's texts (counts such as "3", sizes "40GB", bandwidths "5GBps", "10Gbps", …) and
        `check()`. Raises InputError naming the option."""
        counts = []
        for opt, value in (("--groups", groups), ("--chassis", chassis), ("--routers", routers),
                           ("--nodes-per-router", nodes_per_router),
                           ("--bb-nodes-per-chassis", bb_nodes_per_chassis)):
            try:
                counts.append(int(str(value).strip()))
            except ValueError:
                raise InputError(opt, str(value), "must be a positive integer") from None
        try:
            cap = parse_bytes(bb_capacity)
        except ValueError as exc:
            raise InputError("--bb-capacity", str(bb_capacity), str(exc)) from None
        bws = []
        for opt, text in (("--pfs-bandwidth", pfs_bandwidth), ("--link-bandwidth", link_bandwidth)):
            try:
                bws.append(float(text) if isinstance(text, (int, float)) else parse_bandwidth(text))
            except ValueError as exc:
                raise InputError(opt, str(text), f"{exc} (expected e.g. 5GBps or 1250MBps)") from None
            if not 0 < bws[-1] < float("inf"):
                raise InputError(opt, str(text), "must be positive and finite")
        if cap <= 0:
            raise InputError("--bb-capacity", str(bb_capacity), "must be positive")
        return cls(*counts, cap, *bws).check()


_COMMENT = """<!-- Generated by `burstbuffer platform dragonfly` (burstbuffer.platforms.generator; docs/platform.md):
     {options}.
     A SimGrid Dragonfly of {g} groups x {c} chassis x {r} routers x {k} nodes = {n} hosts node_0 .. node_{last}
     (1 Gflop/s, links {link} and 50 us): {nbb} burst-buffer (BB) nodes of {cap} (the first {b} node(s) of
     each chassis) and {ncomp} compute nodes; a `pfs` storage host joined by one shared {pfs} link, and a
     `master` host in its own zone. Cluster properties (Batsim forwards them with every resource, as
     `zone_properties`):
       burst_buffer_capacity  capacity of one BB node,
       topo_parameters        a copy of the Dragonfly shape, for the scheduler.
     The zone `storage_nodes_zone` holds no host, only the property
       storage_nodes          the BB nodes (burstbuffer simulate / run give them the storage role unless
                              `-r HOSTS:storage` is given; for real Batsim pass the same list with -r),
     so that the list is written once and forwarded with no resource (on the cluster, every resource
     would carry all BB node names).
     SimGrid versions: loads as is in SimGrid <= 3.27 (e.g. 3.25, Batsim 4.0.0's image). SimGrid >= 3.28
     creates no `node_cluster_router` for a DRAGONFLY cluster, so SimGrid 3.32's XML loader refuses this file;
     burstbuffer simulate / run (burstbuffer's Batsim-compatible engine) build it through SimGrid 3.32's API
     instead, like batsim-4.2.1/dragonfly96_sg332.cpp. SimGrid's Dragonfly routing needs groups <= routers. -->
"""

_BODY = """<platform version="4.1">
    <zone id="root" routing="Full">
        <cluster id="cluster" topology="DRAGONFLY" topo_parameters="{topo}"
                 prefix="node_" radical="0-{last}" suffix=""
                 speed="{speed}" bw="{link}" lat="{lat}"
                 loopback_bw="{lbw}" loopback_lat="{llat}">
            <prop id="burst_buffer_capacity" value="{cap}"/>
            <prop id="topo_parameters" value="{topo}"/>
        </cluster>

        <zone id="storage_nodes_zone" routing="None">
            <prop id="storage_nodes" value="{storage}"/>
        </zone>

        <zone id="master_zone" routing="None">
            <host id="master" speed="0">
                <prop id="role" value="master"/>
            </host>
        </zone>

        <zone id="pfs_zone" routing="None">
            <host id="pfs" speed="0">
                <prop id="role" value="storage"/>
            </host>
        </zone>

        <link id="link_master" bandwidth="{link}" latency="{gwlat}" sharing_policy="FATPIPE"/>
        <link id="link_pfs" bandwidth="{pfs}" latency="{gwlat}"/>

        <zoneRoute src="master_zone" dst="cluster" gw_src="master" gw_dst="node_cluster_router">
            <link_ctn id="link_master"/>
        </zoneRoute>

        <zoneRoute src="pfs_zone" dst="cluster" gw_src="pfs" gw_dst="node_cluster_router">
            <link_ctn id="link_pfs"/>
        </zoneRoute>
    </zone>
</platform>
"""


def describe(p: DragonflyParams) -> str:
    """The generator's parameters of `p` in words (an XML comment may not contain "--", so no options)."""
    return (f"groups {p.groups}, chassis {p.chassis}, routers {p.routers}, nodes per router {p.nodes_per_router},"
            f"\n     BB nodes per chassis {p.bb_nodes_per_chassis}, BB capacity {format_bytes(p.bb_capacity)}, "
            f"PFS bandwidth {format_bandwidth(p.pfs_bandwidth)}, link bandwidth {format_bandwidth(p.link_bandwidth)}")


def dragonfly_xml(p: DragonflyParams, *, comment: bool = True) -> str:
    """The platform XML of `p` (checked first; InputError if impossible). Without `comment`, the file
    minus its leading comment, for comparisons."""
    p.check()
    link, pfs, cap = format_bandwidth(p.link_bandwidth), format_bandwidth(p.pfs_bandwidth), format_bytes(p.bb_capacity)
    head = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    text = _COMMENT.format(options=describe(p), g=p.groups, c=p.chassis, r=p.routers, k=p.nodes_per_router,
                           n=p.nb_hosts, last=p.nb_hosts - 1, link=link, nbb=p.nb_bb_nodes,
                           b=p.bb_nodes_per_chassis, cap=cap, ncomp=p.nb_compute, pfs=pfs) if comment else ""
    assert "--" not in text[4:-4], "an XML comment may not contain '--'"
    body = _BODY.format(topo=p.topo_parameters, last=p.nb_hosts - 1, speed=NODE_SPEED, link=link, lat=LINK_LATENCY,
                        lbw=LOOPBACK_BW, llat=LOOPBACK_LAT, cap=cap, storage=",".join(p.storage_nodes()),
                        pfs=pfs, gwlat=GATEWAY_LATENCY)
    return head + text + body


def write_platform(p: DragonflyParams, path: str | Path) -> Path:
    """Write `dragonfly_xml(p)` to `path` atomically (a temporary file in the same folder, then rename):
    nothing is written if `p` is impossible or the write fails. Raises InputError."""
    text = dragonfly_xml(p)  # checks p before touching the disk
    path = Path(path)
    return atomic_write_text(path, text)


def larger_platform_hint(nodes: int) -> str:
    """What to run for a platform of the paper's shape (3 groups × 4 chassis × 3 routers, one BB node per chassis,
    docs/platform.md) with at least `nodes` compute nodes: K nodes per router give 36 K − 12 compute nodes."""
    k = max(3, -(-(nodes + 12) // 36))
    return (f"for a platform with {36 * k - 12} compute nodes: burstbuffer platform dragonfly --groups 3 --chassis 4 "
            f"--routers 3 --nodes-per-router {k} --output big.xml, then give --platform big.xml")

