"""SimGrid platform files (XML v4.x) read without SimGrid: the platform's zones, clusters, hosts, links
and routes, and Batsim's resources.

Two steps, neither needs a SimGrid engine:

1. `parse_platform(path)` reads the XML with xml.etree into a `PlatformFile` (zones, clusters, hosts with
   their `<prop>`s, links, routes); every host gets the zone properties of its zone and of the zones above
   it, as Batsim forwards them (`zone_properties`). A `<cluster>`'s `<prop>`s are given as SimGrid 3.32's XML
   loader gives them: to each of its hosts, and to its zone for a flat cluster only; in a file built through
   SimGrid's API (`PlatformFile.api_build_reason`), to the cluster's zone only, as this project's C++ platform
   plugins set them (`burstbuffer.platforms.sg_cpp`).
2. `resolve_machines(platform, roles)` gives Batsim's view (docs/protocol.md, Batsim `machines.cpp`): hosts in
   SimGrid's order (names sorted as strings); the master (role ``master``) is left out; compute resources
   get ids 0..C-1, storage resources ids C..C+S-1. Storage roles come from `-r HOSTS:storage`, else from
   the ``storage_nodes`` property of any zone or cluster (this project's extension, see
   platforms/dragonfly96.xml and docs/platform.md §4), and a
   host property ``role=storage`` (the PFS) always counts.

Loading a `PlatformFile` into SimGrid 3.32 (`api_build_reason` says when SimGrid's own XML loader cannot)
is the Batsim-compatible engine's business (``burstbuffer simulate``), not this module's.

Errors are `InputError` (one line: file, item, reason).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

from ..errors import InputError
from ..records import Record
from .units import parse_bandwidth, parse_latency, parse_speed

#: Cluster topologies for which SimGrid >= 3.28 no longer creates the implicit router.
ROUTERLESS_TOPOLOGIES = ("TORUS", "FAT_TREE", "DRAGONFLY")


# The elements are `records.Record`s (repr and == over `_fields`), not data classes: this module is on the
# simulator's start-up path (docs/startup.md).

class HostElement(Record):
    """A host: `speed` as written (SimGrid units, comma-separated pstates), `props` its own `<prop>`s,
    `zone_props` the merged properties of its enclosing zones (outermost first, inner ones win)."""

    _fields = ("name", "speed", "core", "props", "zone_props", "zone")

    def __init__(self, name: str, speed: str, core: int = 1, props: dict[str, str] | None = None,
                 zone_props: dict[str, str] | None = None, zone: str = ""):
        self.name = name
        self.speed = speed
        self.core = core
        self.props = {} if props is None else props
        self.zone_props = {} if zone_props is None else zone_props
        self.zone = zone


class LinkElement(Record):
    _fields = ("id", "bandwidth", "latency", "sharing_policy")

    def __init__(self, id: str, bandwidth: str, latency: str = "0", sharing_policy: str = "SHARED"):  # noqa: A002
        self.id = id
        self.bandwidth = bandwidth
        self.latency = latency
        self.sharing_policy = sharing_policy


class RouterElement(Record):
    _fields = ("id",)

    def __init__(self, id: str):  # noqa: A002
        self.id = id


class RouteElement(Record):
    """A `<zoneRoute>` (src/dst are zones, gw_* netpoints) or a `<route>` (src/dst are hosts/routers).
    `links` holds (link id, direction in {"NONE", "UP", "DOWN"})."""

    _fields = ("kind", "src", "dst", "gw_src", "gw_dst", "links", "symmetrical")

    def __init__(self, kind: str, src: str, dst: str, gw_src: str | None, gw_dst: str | None,
                 links: list[tuple[str, str]], symmetrical: bool = True):
        self.kind = kind
        self.src = src
        self.dst = dst
        self.gw_src = gw_src
        self.gw_dst = gw_dst
        self.links = links
        self.symmetrical = symmetrical


class ClusterElement(Record):
    """A `<cluster>`; `radical` is the expanded list of host numbers, `hosts` the generated hosts."""

    _fields = ("id", "topology", "topo_parameters", "prefix", "suffix", "radical", "speed", "bw", "lat",
               "loopback_bw", "loopback_lat", "limiter_link", "sharing_policy", "core", "props", "router_id",
               "hosts")

    def __init__(self, id: str, topology: str, topo_parameters: str, prefix: str, suffix: str,  # noqa: A002
                 radical: list[int], speed: str, bw: str, lat: str, loopback_bw: str | None,
                 loopback_lat: str | None, limiter_link: str | None, sharing_policy: str, core: int,
                 props: dict[str, str], router_id: str | None, hosts: list[HostElement] | None = None):
        self.id = id
        self.topology = topology
        self.topo_parameters = topo_parameters
        self.prefix = prefix
        self.suffix = suffix
        self.radical = radical
        self.speed = speed
        self.bw = bw
        self.lat = lat
        self.loopback_bw = loopback_bw
        self.loopback_lat = loopback_lat
        self.limiter_link = limiter_link
        self.sharing_policy = sharing_policy
        self.core = core
        self.props = props
        self.router_id = router_id
        self.hosts = [] if hosts is None else hosts

    @property
    def implicit_router(self) -> str:
        """Name SimGrid 3.25 gave the cluster's router: ``<prefix><id>_router<suffix>`` (or `router_id`)."""
        return self.router_id or f"{self.prefix}{self.id}_router{self.suffix}"


class ZoneElement(Record):
    """A `<zone>` (or `<AS>`): children in document order (zones, clusters, hosts, routers, links, routes)."""

    _fields = ("id", "routing", "props", "items")

    def __init__(self, id: str, routing: str, props: dict[str, str] | None = None,  # noqa: A002
                 items: list | None = None):
        self.id = id
        self.routing = routing
        self.props = {} if props is None else props
        self.items = [] if items is None else items


class PlatformFile(Record):
    """A parsed platform file. `hosts`: every host by name (cluster hosts included); `config`: the SimGrid
    configuration options its ``<config>`` elements set (name → value, the last one's value when set twice:
    SimGrid 3.32 applies them in document order, each unless the command line already set it)."""

    _fields = ("path", "root", "hosts", "routers", "clusters", "config")

    def __init__(self, path: str, root: ZoneElement, hosts: dict[str, HostElement], routers: set[str],
                 clusters: list[ClusterElement], config: dict[str, str] | None = None):
        self.path = path
        self.root = root
        self.hosts = hosts
        self.routers = routers
        self.clusters = clusters
        self.config = {} if config is None else config

    def listed_storage_nodes(self) -> list[str]:
        """Host names listed in a ``storage_nodes`` property of any zone or cluster, in document order,
        each once. The list may sit on the cluster itself (Batsim then forwards it with every resource's
        ``zone_properties``) or, as the generator writes it, on a zone without hosts (forwarded with no
        resource: docs/platform.md §4)."""
        out: dict[str, None] = {}
        for props in [z.props for z in _walk_zones(self.root)] + [c.props for c in self.clusters]:
            for name in (props.get("storage_nodes") or "").split(","):
                if name.strip():
                    out[name.strip()] = None
        return list(out)

    def api_build_reason(self) -> str | None:
        """Why SimGrid 3.32's XML loader would fail on this file and the Python API must build it
        (a route uses the implicit router of a TORUS/FAT_TREE/DRAGONFLY cluster), or None."""
        used = set()
        for zone in _walk_zones(self.root):
            for item in zone.items:
                if isinstance(item, RouteElement):
                    used.update(x for x in (item.src, item.dst, item.gw_src, item.gw_dst) if x)
        for c in self.clusters:
            if c.topology in ROUTERLESS_TOPOLOGIES and c.router_id is None:
                name = c.implicit_router
                if name in used and name not in self.hosts and name not in self.routers:
                    return (f"route gateway {name!r} is the implicit router of {c.topology} cluster {c.id!r}, "
                            f"which SimGrid >= 3.28 does not create")
        return None


# ----------------------------------------------------------------------------------------------- parsing

def _walk_zones(zone: ZoneElement):
    yield zone
    for item in zone.items:
        if isinstance(item, ZoneElement):
            yield from _walk_zones(item)


def _props(elem: ET.Element, path: str, where: str) -> dict[str, str]:
    out = {}
    for p in elem.findall("prop"):
        key, value = p.get("id"), p.get("value")
        if key is None or value is None:
            raise InputError(path, where, "<prop> needs both id and value")
        out[key] = value
    return out


def parse_radical(text: str) -> list[int]:
    """Expand a cluster radical ("0-107", "0-3,8,10-11") into host numbers. Raises ValueError."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            lo, hi = int(a), int(b)
            if hi < lo:
                raise ValueError(f"empty range {part!r}")
            out.extend(range(lo, hi + 1))
        else:
            out.append(int(part))
    if not out:
        raise ValueError("empty radical")
    return out


def _check_units(path: str, where: str, **values) -> None:
    checks = {"speed": parse_speed, "bw": parse_bandwidth, "bandwidth": parse_bandwidth,
              "lat": parse_latency, "latency": parse_latency, "loopback_bw": parse_bandwidth,
              "loopback_lat": parse_latency, "limiter_link": parse_bandwidth}
    for key, value in values.items():
        if value is None:
            continue
        parts = value.split(",") if key == "speed" else [value]
        for v in parts:
            try:
                checks[key](v)
            except ValueError as exc:
                raise InputError(path, where, f"{key}: {exc}") from None


#: The deepest element nesting a platform may have (a real one has a handful of levels; the readers recurse).
MAX_XML_DEPTH = 100


def check_xml_depth(top: ET.Element, path: str) -> None:
    """InputError if an element of `top` is nested deeper than `MAX_XML_DEPTH` (walked without recursion)."""
    stack = [(top, 1)]
    while stack:
        el, depth = stack.pop()
        if depth > MAX_XML_DEPTH:
            raise InputError(path, f"<{el.tag}>", f"nested too deeply (more than {MAX_XML_DEPTH} levels)")
        stack.extend((c, depth + 1) for c in el)


def xml_text(data: bytes) -> bytes:
    """`data` as SimGrid's XML reader (FleXML) takes it: white space before the ``<?xml ...?>`` declaration
    is skipped (several of Batsim 4.2.1's own platforms begin with a blank line; the XML standard, and
    xml.etree, refuse a declaration that is not at the very start). A UTF-8 byte-order mark is kept first."""
    bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    body = data[len(bom):]
    stripped = body.lstrip(b" \t\r\n")
    if len(stripped) < len(body) and stripped.startswith(b"<?xml"):
        return bom + stripped
    return data


def parse_platform(path: str) -> PlatformFile:
    """Read a SimGrid platform XML (version 4.x) into a `PlatformFile`.

    Raises InputError if the file is missing, not XML, or malformed (missing id, bad unit, bad radical,
    duplicate host name, unknown gateway...).
    """
    from ..fileio import read_input
    path = str(path)
    data = read_input(path, "platform", text=False)
    try:
        top = ET.fromstring(xml_text(data))
    except ET.ParseError as exc:
        raise InputError(path, "XML", f"not well-formed ({exc})") from None
    check_xml_depth(top, path)
    if top.tag != "platform":
        raise InputError(path, f"<{top.tag}>", "the root element must be <platform>")
    zones = [e for e in top if e.tag in ("zone", "AS")]
    if len(zones) != 1:
        raise InputError(path, "<platform>", f"expected exactly one top-level <zone>, found {len(zones)}")
    hosts: dict[str, HostElement] = {}
    routers: set[str] = set()
    clusters: list[ClusterElement] = []

    def add_host(h: HostElement) -> None:
        if h.name in hosts or h.name in routers:
            raise InputError(path, f"host {h.name!r}", "name defined twice")
        hosts[h.name] = h

    def parse_zone(elem: ET.Element, parent_props: dict[str, str]) -> ZoneElement:
        zid = elem.get("id")
        if not zid:
            raise InputError(path, f"<{elem.tag}>", "missing id")
        zone = ZoneElement(zid, elem.get("routing", "Full"), _props(elem, path, f"zone {zid!r}"))
        merged = {**parent_props, **zone.props}
        for child in elem:
            tag = child.tag
            if tag == "prop":
                continue
            if tag in ("zone", "AS"):
                zone.items.append(parse_zone(child, merged))
            elif tag == "host":
                name = child.get("id")
                if not name:
                    raise InputError(path, f"zone {zid!r}", "<host> without id")
                speed = child.get("speed")
                if speed is None:
                    raise InputError(path, f"host {name!r}", "missing speed")
                _check_units(path, f"host {name!r}", speed=speed)
                n_pstates = len(speed.split(","))
                pstate = child.get("pstate", "0").strip()
                if not pstate.isdigit() or int(pstate) >= n_pstates:   # SimGrid aborts on it
                    raise InputError(path, f"host {name!r}", f"pstate={pstate!r}: not one of its {n_pstates} "
                                                             f"pstates (0 to {n_pstates - 1})")
                core = child.get("core", "1").strip()
                if not core.isdigit() or int(core) < 1:
                    raise InputError(path, f"host {name!r}", f"core={core!r}: expected an integer >= 1")
                h = HostElement(name, speed, int(core), _props(child, path, f"host {name!r}"),
                             dict(merged), zid)
                add_host(h)
                zone.items.append(h)
            elif tag == "cluster":
                zone.items.append(parse_cluster(child, merged))
            elif tag == "router":
                rid = child.get("id")
                if not rid:
                    raise InputError(path, f"zone {zid!r}", "<router> without id")
                routers.add(rid)
                zone.items.append(RouterElement(rid))
            elif tag == "link":
                lid = child.get("id")
                if not lid or child.get("bandwidth") is None:
                    raise InputError(path, f"zone {zid!r}", "<link> needs id and bandwidth")
                link = LinkElement(lid, child.get("bandwidth"), child.get("latency", "0"),
                                child.get("sharing_policy", "SHARED"))
                _check_units(path, f"link {lid!r}", bandwidth=link.bandwidth, latency=link.latency)
                zone.items.append(link)
            elif tag in ("zoneRoute", "ASroute", "route"):
                kind = "route" if tag == "route" else "zoneRoute"
                links = [(c.get("id"), c.get("direction", "NONE")) for c in child.findall("link_ctn")]
                if any(lid is None for lid, _ in links):
                    raise InputError(path, f"<{tag}> in zone {zid!r}", "<link_ctn> without id")
                src, dst = child.get("src"), child.get("dst")
                if not src or not dst:
                    raise InputError(path, f"<{tag}> in zone {zid!r}", "needs src and dst")
                zone.items.append(RouteElement(kind, src, dst, child.get("gw_src"), child.get("gw_dst"), links,
                                            child.get("symmetrical", "YES").upper() in ("YES", "TRUE", "1")))
            else:
                zone.items.append(("unsupported", tag))
        return zone

    def parse_cluster(elem: ET.Element, parent_props: dict[str, str]) -> ClusterElement:
        cid = elem.get("id")
        if not cid:
            raise InputError(path, "<cluster>", "missing id")
        where = f"cluster {cid!r}"
        for attr in ("prefix", "suffix", "radical", "speed", "bw", "lat"):
            if elem.get(attr) is None:
                raise InputError(path, where, f"missing attribute {attr!r}")
        try:
            radical = parse_radical(elem.get("radical"))
        except ValueError as exc:
            raise InputError(path, where, f"radical: {exc}") from None
        c = ClusterElement(
            id=cid, topology=elem.get("topology", "FLAT").upper(), topo_parameters=elem.get("topo_parameters", ""),
            prefix=elem.get("prefix"), suffix=elem.get("suffix"), radical=radical, speed=elem.get("speed"),
            bw=elem.get("bw"), lat=elem.get("lat"), loopback_bw=elem.get("loopback_bw"),
            loopback_lat=elem.get("loopback_lat"), limiter_link=elem.get("limiter_link"),
            sharing_policy=elem.get("sharing_policy", "SPLITDUPLEX").upper(), core=int(elem.get("core", "1")),
            props=_props(elem, path, where), router_id=elem.get("router_id"))
        _check_units(path, where, speed=c.speed, bw=c.bw, lat=c.lat, loopback_bw=c.loopback_bw,
                     loopback_lat=c.loopback_lat, limiter_link=c.limiter_link)
        # SimGrid 3.32's XML loader (sg_platf.cpp) gives the cluster's <prop>s to each of its hosts, and to the
        # cluster's zone only for a flat cluster (a TORUS/FAT_TREE/DRAGONFLY zone gets none)
        zone_props = {**parent_props, **c.props} if c.topology not in ROUTERLESS_TOPOLOGIES else dict(parent_props)
        for k in radical:
            h = HostElement(f"{c.prefix}{k}{c.suffix}", c.speed, c.core, dict(c.props), dict(zone_props), cid)
            add_host(h)
            c.hosts.append(h)
        if c.topology == "FLAT" or c.router_id:
            routers.add(c.implicit_router)
        clusters.append(c)
        return c

    root = parse_zone(zones[0], {})
    config: dict[str, str] = {}
    for e in top:
        if e.tag == "config":
            config.update(_props(e, path, "<config>"))
    platform = PlatformFile(path, root, hosts, routers, clusters, config)
    if platform.api_build_reason() is not None:
        # built through SimGrid's API (`burstbuffer.simulator.platform_loader`) as this project's C++ platform
        # plugins build it for a real Batsim (`sg_cpp`): a cluster's properties are its zone's, not its hosts'
        for c in clusters:
            for h in c.hosts:
                h.props, h.zone_props = {}, {**h.zone_props, **c.props}
    return platform


# ------------------------------------------------------------------------------------- Batsim machines

class Machine(Record):
    """One Batsim resource. `kind` in {"compute", "storage", "master"}; `id` is Batsim's resource id
    (-1 for the master); `properties` are the host's own properties plus ``role`` (always present, ""
    for a compute node, as Batsim sends them); `speed` in flop/s (first pstate)."""

    _fields = ("id", "name", "kind", "properties", "zone_properties", "speed")

    def __init__(self, id: int, name: str, kind: str, properties: dict[str, str],  # noqa: A002
                 zone_properties: dict[str, str], speed: float):
        self.id = id
        self.name = name
        self.kind = kind
        self.properties = properties
        self.zone_properties = zone_properties
        self.speed = speed

    def to_json(self) -> dict:
        """The resource as SIMULATION_BEGINS carries it: {id, name, state, properties, zone_properties}."""
        return {"id": self.id, "name": self.name, "state": "idle",
                "properties": dict(sorted(self.properties.items())),
                "zone_properties": dict(sorted(self.zone_properties.items()))}


class Machines(Record):
    """Batsim's resources: `compute` (ids 0..C-1) then `storage` (ids C..), `master` apart.
    `all[i]` is the machine of id i."""

    _fields = ("compute", "storage", "master")

    def __init__(self, compute: list[Machine], storage: list[Machine], master: Machine):
        self.compute = compute
        self.storage = storage
        self.master = master

    @property
    def all(self) -> list[Machine]:
        return self.compute + self.storage

    def by_name(self) -> dict[str, Machine]:
        return {m.name: m for m in self.all + [self.master]}


_KNOWN_ROLES = {"", "master", "storage", "compute_node"}


def parse_roles_option(values: list[str] | None, source: str = "-r") -> dict[str, str]:
    """Batsim's ``-r HOSTS:ROLE`` (repeatable; HOSTS comma-separated) → {host name: role}; a host named
    twice keeps the last role, as in Batsim's role map (``batsim.cpp``).

    Raises InputError if an item has no ':' or an unknown role (Batsim's roles: master, storage,
    compute_node)."""
    out: dict[str, str] = {}
    for value in values or []:
        if ":" not in value:
            raise InputError(source, value, "expected HOSTS:ROLE, e.g. node_0,node_9:storage")
        hosts_part, role = value.rsplit(":", 1)
        if role not in _KNOWN_ROLES - {""}:
            raise InputError(source, value, f"unknown role {role!r} (known: master, storage, compute_node)")
        for h in hosts_part.split(","):
            h = h.strip()
            if h:
                out[h] = role
    return out


#: Batsim 4.2.1's default master host (``batsim --master-host``, ``-m``)
DEFAULT_MASTER_HOST = "master_host"


def resolve_machines(platform: PlatformFile, roles: dict[str, str] | None = None,
                     master_name: str = DEFAULT_MASTER_HOST) -> Machines:
    """Batsim's resources of `platform` (module docstring, step 2).

    `roles`: host → role from ``-r`` (an empty/None map means: take the ``storage_nodes`` properties,
    `PlatformFile.listed_storage_nodes`).
    The master, as Batsim 4.2.1 finds it (``batsim.cpp``, ``machines.cpp``): the host named `master_name`
    (``-m``) is given the role ``master`` (unless ``-r`` gives it another role: Batsim's role map keeps the
    last one), appended to its own ``role`` property; the master is then the one host whose role is
    ``master``: the ``-m`` host, or a host with the ``role=master`` property — its own or its cluster's (a
    ``<cluster prefix="master_host" radical="0-0">`` holding ``<prop id="role" value="master"/>`` makes host
    ``master_host0`` the master when no host is named as ``-m`` says); both are two masters, an error. A
    `master_name` that names no host is ignored, as Batsim ignores it.
    Raises InputError for an unknown host in `roles`, an unknown role, no or several masters, or a
    compute node of speed 0 (Batsim refuses those too).
    """
    roles = dict(roles or {})
    for h in roles:
        if h not in platform.hosts:
            raise InputError(platform.path, f"host {h!r}", "given a role (-r) but not in the platform")
    if not roles:
        # the storage_nodes lists of every zone and cluster, each split once (docs/platform.md §4)
        for h in platform.listed_storage_nodes():
            if h not in platform.hosts:
                raise InputError(platform.path, "storage_nodes", f"names host {h!r}, which is not in the platform")
            roles[h] = "storage"
    if master_name in platform.hosts:
        roles.setdefault(master_name, "master")
    compute, storage, masters = [], [], []
    for name in sorted(platform.hosts):
        h = platform.hosts[name]
        props = dict(h.props)
        role = props.get("role", "")
        if name in roles:
            role = f"{role},{roles[name]}" if role else roles[name]
        props["role"] = role
        parts = {r.strip() for r in role.split(",")}
        unknown = parts - _KNOWN_ROLES
        if unknown:
            raise InputError(platform.path, f"host {name!r}", f"unknown role {sorted(unknown)[0]!r}")
        speed = parse_speed(h.speed.split(",")[0])
        m = Machine(-1, name, "compute", props, dict(h.zone_props), speed)
        if "master" in parts:
            m.kind = "master"
            masters.append(m)
        elif "storage" in parts:
            m.kind = "storage"
            storage.append(m)
        else:
            compute.append(m)
    if not masters:
        raise InputError(platform.path, "master", f"no master host (no host named {master_name!r} (-m) and no host "
                                              "with role=master)")
    if len(masters) > 1:
        raise InputError(platform.path, "master", f"several master hosts: {', '.join(m.name for m in masters)}")
    for m in compute:
        if m.speed <= 0:
            raise InputError(platform.path, f"host {m.name!r}", "a compute node needs a positive speed")
    if not compute:
        raise InputError(platform.path, "hosts", "no compute resource")
    for i, m in enumerate(compute + storage):
        m.id = i
    return Machines(compute, storage, masters[0])
