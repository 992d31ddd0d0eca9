"""Loading a parsed SimGrid platform (`burstbuffer.platforms.simgrid_xml.PlatformFile`) into SimGrid 3.32.

`load_into_engine(engine, platform)` uses ``engine.load_platform(path)`` when SimGrid 3.32 can read the file;
otherwise — a TORUS / FAT_TREE / DRAGONFLY ``<cluster>`` whose implicit router ``<prefix><id>_router<suffix>``
(created by SimGrid 3.25, no longer by >= 3.28) is used as a route gateway, like the paper's platform — it
rebuilds the platform through SimGrid's Python API exactly as ``batsim-4.2.1/dragonfly96_sg332.cpp`` does
(docs/platform.md): the cluster zone plus an explicit router whose routes inside the cluster are empty, Full zones in
place of ``routing="None"`` ones. Errors are `InputError` (one line: file, item, reason).
"""
from __future__ import annotations

from ..errors import InputError
from ..platforms.simgrid_xml import (ROUTERLESS_TOPOLOGIES, ClusterElement, HostElement, LinkElement, PlatformFile,
                                     RouterElement, RouteElement, ZoneElement)
from ..platforms.units import parse_bandwidth, parse_latency, parse_speed


def load_into_engine(engine, platform: PlatformFile) -> str:
    """Load `platform` into the SimGrid `engine` (module docstring).

    Returns "xml" (SimGrid's own loader) or "api" (rebuilt through the Python API). Raises InputError if
    SimGrid refuses the file or the API builder meets an element it does not support.
    """
    if platform.api_build_reason() is None:
        try:
            engine.load_platform(platform.path)
        except Exception as exc:  # SimGrid raises RuntimeError("Parse error at FILE:LINE: ...")
            # (an empty message when SimGrid's text is not UTF-8, e.g. its parser quoting a byte-order mark)
            lines = str(exc).splitlines()
            raise InputError(platform.path, "SimGrid", lines[0] if lines else "SimGrid's XML parser refuses the "
                             "file (a byte-order mark, or a character that is not UTF-8?)") from None
        return "xml"
    _ApiBuilder(engine, platform).build()
    return "api"


class _ApiBuilder:
    """Builds a `PlatformFile` with SimGrid 3.32's Python API (see `dragonfly96_sg332.cpp`)."""

    def __init__(self, engine, platform: PlatformFile):
        import simgrid  # noqa: PLC0415 (SimGrid is imported only where a simulation runs)

        self.sg = simgrid
        self.engine = engine
        self.platform = platform
        self.zones: dict[str, object] = {}
        self.links: dict[str, object] = {}
        self.duplex: set[str] = set()
        self.netpoints: dict[str, object] = {}

    def fail(self, item: str, reason: str):
        raise InputError(self.platform.path, item, reason)

    def policy(self, name: str, item: str):
        pol = self.sg.Link.SharingPolicy.__members__.get(name.upper())
        if pol is None:
            self.fail(item, f"unknown sharing_policy {name!r}")
        return pol

    def build(self) -> None:
        self.zone(self.platform.root, None)

    def new_zone(self, z: ZoneElement):
        NZ = self.sg.NetZone
        routing = z.routing
        makers = {"Full": NZ.create_full_zone, "None": NZ.create_full_zone, "Floyd": NZ.create_floyd_zone,
                  "Dijkstra": NZ.create_dijkstra_zone, "DijkstraCache": NZ.create_dijkstra_zone,
                  "Star": NZ.create_star_zone, "Vivaldi": NZ.create_vivaldi_zone}
        if routing not in makers:
            self.fail(f"zone {z.id!r}", f"routing {routing!r} is not supported when the platform must be "
                                        "built through SimGrid's API")
        return makers[routing](z.id)

    def zone(self, z: ZoneElement, parent) -> None:
        nz = self.new_zone(z)
        if parent is not None:
            nz.set_parent(parent)
        for k, v in z.props.items():
            nz.set_property(k, v)
        self.zones[z.id] = nz
        for item in z.items:
            if isinstance(item, ZoneElement):
                self.zone(item, nz)
            elif isinstance(item, ClusterElement):
                self.cluster(item, nz)
            elif isinstance(item, HostElement):
                self.host(nz, item)
            elif isinstance(item, RouterElement):
                self.netpoints[item.id] = nz.create_router(item.id)
            elif isinstance(item, LinkElement):
                self.link(nz, item)
            elif isinstance(item, RouteElement):
                self.route(nz, item)
            else:
                self.fail(f"<{item[1]}> in zone {z.id!r}",
                          "element not supported when the platform must be built through SimGrid's API")
        nz.seal()

    def host(self, zone, h: HostElement):
        speeds = h.speed.split(",")
        host = zone.create_host(h.name, [parse_speed(s) for s in speeds] if len(speeds) > 1
                                else parse_speed(speeds[0]))
        if h.core != 1:
            host.core_count = h.core
        host.seal()
        self.netpoints[h.name] = host.netpoint
        return host

    def link(self, zone, platform: LinkElement) -> None:
        item = f"link {platform.id!r}"
        if platform.sharing_policy.upper() == "SPLITDUPLEX":
            link = zone.create_split_duplex_link(platform.id, parse_bandwidth(platform.bandwidth))
            self.duplex.add(platform.id)
        else:
            link = zone.create_link(platform.id, parse_bandwidth(platform.bandwidth))
            if platform.sharing_policy.upper() != "SHARED":
                link.set_sharing_policy(self.policy(platform.sharing_policy, item), None)
        link.set_latency(parse_latency(platform.latency))
        link.seal()
        self.links[platform.id] = link

    def route(self, zone, r: RouteElement) -> None:
        item = f"<{r.kind}> {r.src} -> {r.dst}"
        LIR = self.sg.LinkInRoute
        in_route = []
        for lid, direction in r.links:
            if lid not in self.links:
                self.fail(item, f"unknown link {lid!r}")
            d = direction.upper()
            if lid in self.duplex:
                if d not in ("UP", "DOWN"):
                    self.fail(item, f"split-duplex link {lid!r} needs direction UP or DOWN")
                in_route.append(LIR(self.links[lid], getattr(LIR.Direction, d)))
            else:
                in_route.append(LIR(self.links[lid]))
        if r.kind == "zoneRoute":
            for name in (r.src, r.dst):
                if name not in self.zones:
                    self.fail(item, f"unknown zone {name!r}")
            gws = []
            for gw in (r.gw_src, r.gw_dst):
                if gw is None or gw not in self.netpoints:
                    self.fail(item, f"unknown gateway {gw!r}")
                gws.append(self.netpoints[gw])
            zone.add_route(self.zones[r.src].netpoint, self.zones[r.dst].netpoint, gws[0], gws[1],
                           in_route, r.symmetrical)
        else:
            for name in (r.src, r.dst):
                if name not in self.netpoints:
                    self.fail(item, f"unknown host or router {name!r}")
            zone.add_route(self.netpoints[r.src], self.netpoints[r.dst], None, None, in_route, r.symmetrical)

    def cluster(self, c: ClusterElement, parent) -> None:
        sg = self.sg
        item = f"cluster {c.id!r}"
        if c.topology not in ROUTERLESS_TOPOLOGIES:
            self.fail(item, f"topology {c.topology} is not supported when the platform must be built through "
                            "SimGrid's API")
        try:
            if c.topology == "DRAGONFLY":
                parts = [p.split(",") for p in c.topo_parameters.split(";")]
                if len(parts) != 4 or any(len(p) != 2 for p in parts[:3]) or len(parts[3]) != 1:
                    raise ValueError("expected 'G,g;C,c;R,r;N'")
                nums = [[int(x) for x in p] for p in parts]
                if nums[0][0] > nums[2][0]:
                    # DragonflyZone::get_local_route leaves group i for group j through router j of a chassis:
                    # with more groups than routers, SimGrid 3.32 reads past its link table (segfault)
                    raise ValueError(f"{nums[0][0]} groups but {nums[2][0]} routers per chassis; SimGrid's "
                                     "Dragonfly routing needs groups <= routers")
                params = sg.DragonflyParams(tuple(nums[0]), tuple(nums[1]), tuple(nums[2]), nums[3][0])
                count = nums[0][0] * nums[1][0] * nums[2][0] * nums[3][0]
            elif c.topology == "TORUS":
                dims = [int(x) for x in c.topo_parameters.split(",")]
                params, count = dims, 1
                for d in dims:
                    count *= d
            else:  # FAT_TREE "levels;down,...;up,...;count,..."
                parts = c.topo_parameters.split(";")
                if len(parts) != 4:
                    raise ValueError("expected 'levels;downs;ups;counts'")
                levels = int(parts[0])
                lists = [[int(x) for x in p.split(",")] for p in parts[1:]]
                params = sg.FatTreeParams(levels, *lists)
                count = 1
                for d in lists[0]:
                    count *= d
        except ValueError as exc:
            self.fail(item, f"topo_parameters {c.topo_parameters!r}: {exc}")
        if count != len(c.radical):
            self.fail(item, f"topology has {count} nodes but radical {len(c.radical)}")
        names = [h.name for h in c.hosts]
        policy = self.policy(c.sharing_policy, item)
        built_hosts = []
        speed = parse_speed(c.speed)

        def set_host(zone, _coords, rank):
            host = zone.create_host(names[rank], speed)
            if c.core != 1:
                host.core_count = c.core
            host.seal()
            built_hosts.append(host)
            return (host.netpoint, None)

        set_loopback = None
        if c.loopback_bw is not None or c.loopback_lat is not None:
            lbw = parse_bandwidth(c.loopback_bw or c.bw)
            llat = parse_latency(c.loopback_lat or "0")

            def set_loopback(zone, _coords, rank):
                return (zone.create_link(f"{c.id}_link_{rank}_loopback", lbw)
                        .set_sharing_policy(sg.Link.SharingPolicy.FATPIPE, None).set_latency(llat).seal())

        set_limiter = None
        if c.limiter_link is not None:
            def set_limiter(zone, _coords, rank):
                return (zone.create_link(f"{c.id}_link_{rank}_limiter", parse_bandwidth(c.limiter_link))
                        .set_latency(0.0).seal())

        cb = sg.ClusterCallbacks(set_host, set_loopback, set_limiter)
        bw, lat = parse_bandwidth(c.bw), parse_latency(c.lat)
        if c.topology == "DRAGONFLY":
            zone = sg.NetZone.create_dragonfly_zone(c.id, parent, params, cb, bw, lat, policy)
        elif c.topology == "TORUS":
            zone = sg.NetZone.create_torus_zone(c.id, parent, params, cb, bw, lat, policy)
        else:
            zone = sg.NetZone.create_fatTree_zone(c.id, parent, params, cb, bw, lat, policy)
        for k, v in c.props.items():
            zone.set_property(k, v)
        for h in built_hosts:
            self.netpoints[h.name] = h.netpoint
        # SimGrid 3.25 created this router after the hosts; routes to/from it inside the cluster are empty.
        self.netpoints[c.implicit_router] = zone.create_router(c.implicit_router)
        zone.seal()
        self.zones[c.id] = zone


def route(engine, src: str, dst: str) -> tuple[list[str], float]:
    """Names of the links from host `src` to host `dst` and the route latency [s] (SimGrid's view)."""
    links, lat = engine.host_by_name(src).route_to(engine.host_by_name(dst))
    return [ln.name for ln in links], lat
