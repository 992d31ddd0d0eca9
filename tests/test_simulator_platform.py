"""Platform reading for the embedded simulator (docs/protocol.md, docs/platform.md): XML parsing, Batsim's
resources, SimGrid
loading (in a subprocess: one SimGrid engine per process)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from burstbuffer.errors import InputError
from burstbuffer.platforms.simgrid_xml import parse_platform, parse_radical, parse_roles_option, resolve_machines
from burstbuffer.platforms.units import parse_bandwidth, parse_latency, parse_speed

REPO = Path(__file__).resolve().parent.parent
PLATFORM = REPO / "platforms" / "dragonfly96.xml"
REFERENCE = REPO / "tests" / "data" / "reference" / "dragonfly96.xml"     # the paper artifact's own file
CAPTURE = REPO / "tests" / "data" / "batsim-4.2.1" / "protocol-full-run.jsonl"
BB_NODES = [f"node_{9 * k}" for k in range(12)]
ROLES = [",".join(BB_NODES) + ":storage"]


def capture_begins() -> dict:
    first = json.loads(CAPTURE.read_text().splitlines()[0])
    return json.loads(first["raw"])["events"][0]["data"]


def test_units():
    assert parse_speed("1Gf") == 1e9 and parse_speed("0") == 0 and parse_speed("2.5kflops") == 2500
    assert parse_bandwidth("1250MBps") == 1.25e9 and parse_bandwidth("8Gbps") == 1e9
    assert parse_bandwidth("1KiBps") == 1024
    assert parse_latency("50us") == 50e-6 and parse_latency("100us") == 100e-6 and parse_latency("0") == 0
    assert parse_latency("2ms") == 2e-3 and parse_latency("1h") == 3600
    for bad in ("1Gx", "fast", ""):
        with pytest.raises(ValueError):
            parse_speed(bad)
    assert parse_radical("0-3,7,9-10") == [0, 1, 2, 3, 7, 9, 10]


def test_platform_file_structure():
    spec = parse_platform(str(PLATFORM))
    assert len(spec.hosts) == 110
    assert {f"node_{k}" for k in range(108)} | {"master", "pfs"} == set(spec.hosts)
    (cluster,) = spec.clusters
    assert (cluster.topology, cluster.topo_parameters, cluster.prefix) == ("DRAGONFLY", "3,1;4,1;3,1;3", "node_")
    assert (cluster.speed, cluster.bw, cluster.lat) == ("1Gf", "1250MBps", "50us")
    assert cluster.props == {"burst_buffer_capacity": "40GB", "topo_parameters": "3,1;4,1;3,1;3"}
    # the BB nodes are named once, on a zone without hosts (docs/platform.md §4)
    zone = next(z for z in spec.root.items if getattr(z, "id", None) == "storage_nodes_zone")
    assert zone.props == {"storage_nodes": ",".join(BB_NODES)} and zone.items == []
    assert spec.listed_storage_nodes() == BB_NODES
    assert spec.hosts["node_5"].zone_props == {"burst_buffer_capacity": "40GB", "topo_parameters": "3,1;4,1;3,1;3"}
    assert spec.hosts["pfs"].props == {"role": "storage"} and spec.hosts["pfs"].zone_props == {}
    assert spec.hosts["master"].props == {"role": "master"}
    # the gateway SimGrid 3.32 does not create: built through the API
    assert "node_cluster_router" in spec.api_build_reason()
    assert "node_cluster_router" in parse_platform(str(REFERENCE)).api_build_reason()
    assert parse_platform(str(REPO / "tests" / "data" / "cluster96.xml")).api_build_reason() is None


def test_resources_match_real_batsim():
    """Ids follow SimGrid's host order (names sorted as strings), storage after compute, master left out:
    the same (id, name) lists as real Batsim 4.2.1's SIMULATION_BEGINS."""
    begins = capture_begins()
    want_c = [(r["id"], r["name"]) for r in begins["compute_resources"]]
    want_s = [(r["id"], r["name"]) for r in begins["storage_resources"]]
    for roles in ([], ROLES):  # the zone property storage_nodes, or -r as given to Batsim
        m = resolve_machines(parse_platform(str(PLATFORM)), parse_roles_option(roles))
        assert [(x.id, x.name) for x in m.compute] == want_c
        assert [(x.id, x.name) for x in m.storage] == want_s
        assert m.master.name == "master"
        assert all(x.properties == {"role": ""} for x in m.compute)
        assert all(x.properties == {"role": "storage"} for x in m.storage)
    # the reference file (no zone property) with Batsim's -r gives exactly the captured resource objects
    m = resolve_machines(parse_platform(str(REFERENCE)), parse_roles_option(ROLES))
    assert [x.to_json() for x in m.compute] == begins["compute_resources"]
    assert [x.to_json() for x in m.storage] == begins["storage_resources"]


def test_storage_nodes_on_the_cluster_still_name_the_storage_nodes(tmp_path):
    """The older form, the list as a cluster property (every resource then carries it), gives the same
    resources but for the zone_properties; an unknown name in either place is a one-line error."""
    text = PLATFORM.read_text()
    listed = '<prop id="storage_nodes" value="' + ",".join(BB_NODES) + '"/>'
    zone = '<zone id="storage_nodes_zone" routing="None">\n            ' + listed + '\n        </zone>'
    assert zone in text
    old = text.replace(zone, "").replace('<prop id="topo_parameters"', listed + '<prop id="topo_parameters"')
    (tmp_path / "old.xml").write_text(old)
    a = resolve_machines(parse_platform(str(PLATFORM)))
    b = resolve_machines(parse_platform(str(tmp_path / "old.xml")))
    assert [(x.id, x.name, x.kind) for x in a.all] == [(x.id, x.name, x.kind) for x in b.all]
    assert len(a.storage) == 13 and all("storage_nodes" not in x.zone_properties for x in a.all)
    assert all(x.zone_properties["storage_nodes"] == ",".join(BB_NODES) for x in b.all if x.name != "pfs")
    (tmp_path / "bad.xml").write_text(text.replace('node_99"', 'node_999"'))
    with pytest.raises(InputError, match="storage_nodes: names host 'node_999', which is not in the platform"):
        resolve_machines(parse_platform(str(tmp_path / "bad.xml")))


def test_roles_option_overrides_storage_nodes():
    m = resolve_machines(parse_platform(str(PLATFORM)), parse_roles_option(["node_0,node_9:storage"]))
    assert [x.name for x in m.storage] == ["node_0", "node_9", "pfs"]
    assert len(m.compute) == 106
    with pytest.raises(InputError, match="unknown role"):
        parse_roles_option(["node_0:gpu"])
    with pytest.raises(InputError, match="not in the platform"):
        resolve_machines(parse_platform(str(PLATFORM)), {"node_999": "storage"})


def test_platform_errors(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        parse_platform(str(tmp_path / "missing.xml"))
    bad = tmp_path / "bad.xml"
    bad.write_text("<platform version='4.1'><zone id='r' routing='Full'>")
    with pytest.raises(InputError, match="not well-formed"):
        parse_platform(str(bad))
    unit = tmp_path / "unit.xml"
    unit.write_text("<platform version='4.1'><zone id='r' routing='Full'><host id='a' speed='1Gx'/></zone>"
                    "</platform>")
    with pytest.raises(InputError, match=r"host 'a'.*speed"):
        parse_platform(str(unit))
    nomaster = tmp_path / "nomaster.xml"
    nomaster.write_text("<platform version='4.1'><zone id='r' routing='Full'><host id='a' speed='1Gf'/></zone>"
                        "</platform>")
    with pytest.raises(InputError, match="master"):
        resolve_machines(parse_platform(str(nomaster)))


def dump(platform: Path, *routes: str) -> dict:
    cmd = [sys.executable, "-m", "burstbuffer.simulator", "-p", str(platform), "--dump-platform"]
    for r in routes:
        cmd += ["--route", r]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_simgrid_build_and_routes():
    """SimGrid 3.32 cannot load the paper's XML; the API rebuild gives its 110 hosts, PFS routes crossing
    only link_pfs, master routes only link_master, and Dragonfly routes between nodes."""
    routes = [f"pfs,node_{k}" for k in range(108)] + ["node_17,pfs", "node_1,master", "node_0,node_1",
                                                       "node_0,node_4", "node_0,node_9", "node_0,node_40"]
    d = dump(PLATFORM, *routes)
    assert d["loader"] == "api"
    assert d["hosts"] == sorted(d["hosts"]) and len(d["hosts"]) == 110
    assert len(d["compute_resources"]) == 96 and len(d["storage_resources"]) == 13
    by = {(r["src"], r["dst"]): r for r in d["routes"]}
    for k in range(108):
        r = by[("pfs", f"node_{k}")]
        assert r["links"] == ["link_pfs"] and r["latency"] == pytest.approx(100e-6)
    assert by[("node_17", "pfs")]["links"] == ["link_pfs"]
    assert by[("node_1", "master")]["links"] == ["link_master"]
    # same router: two node links; same chassis, other router: + a green link; other chassis: black;
    # other group: blue (SimGrid's Dragonfly routing), 50 us per link
    assert len(by[("node_0", "node_1")]["links"]) == 2
    assert by[("node_0", "node_1")]["latency"] == pytest.approx(100e-6)
    assert any("green" in ln for ln in by[("node_0", "node_4")]["links"])
    assert any("black" in ln for ln in by[("node_0", "node_9")]["links"])
    far = by[("node_0", "node_40")]
    assert any("blue" in ln for ln in far["links"])
    assert far["latency"] == pytest.approx(50e-6 * len(far["links"]))


def test_xml_loader_path():
    d = dump(REPO / "tests" / "data" / "cluster96.xml", "node_3,master")
    assert d["loader"] == "xml" and len(d["compute_resources"]) == 96 and d["storage_resources"] == []
    assert d["routes"][0]["links"][-1] == "link_master"


# ------------------------------------------------------------------- Batsim 4.2.1's own platforms (its test/)
BATSIM_PLATFORMS = REPO / "tests" / "data" / "batsim-4.2.1" / "platforms"


def test_batsim_master_host_lookup():
    """Batsim 4.2.1's master (batsim.cpp, machines.cpp): `-m` (default master_host) names the host given the
    master role; a host with role=master, its own or its <cluster>'s, is the master too; two masters are
    refused; -r overrides the role -m gives."""
    small = parse_platform(str(BATSIM_PLATFORMS / "small_platform.xml"))
    m = resolve_machines(small)
    assert m.master.name == "master_host"
    assert [x.name for x in m.compute] == ["Bourassa", "Fafard", "Ginette", "Jupiter"]
    m = resolve_machines(small, {}, "Jupiter")          # -m Jupiter: master_host computes
    assert m.master.name == "Jupiter" and "master_host" in [x.name for x in m.compute]
    with pytest.raises(InputError, match="several master hosts: Jupiter, master_host"):
        resolve_machines(small, parse_roles_option(["Jupiter:master"]))
    with pytest.raises(InputError, match=r"no master host \(no host named 'master_host' \(-m\)"):
        resolve_machines(small, parse_roles_option(["master_host:compute_node"]))
    assert parse_roles_option(["Jupiter,Fafard:storage", "Jupiter:compute_node"]) == {  # the last one, as Batsim
        "Jupiter": "compute_node", "Fafard": "storage"}
    with pytest.raises(InputError, match="no host named 'nowhere'"):
        resolve_machines(small, {}, "nowhere")
    # a one-host <cluster prefix="master_host" radical="0-0"> holding <prop id="role" value="master"/>
    for name in ("cluster512.xml", "cluster512_pfs.xml", "cluster_energy_128.xml"):
        spec = parse_platform(str(BATSIM_PLATFORMS / name))
        for master in ("master_host", "master"):
            m = resolve_machines(spec, {}, master)
            assert m.master.name == "master_host0" and len(m.compute) in (128, 512)
    m = resolve_machines(parse_platform(str(BATSIM_PLATFORMS / "cluster512_pfs.xml")))
    assert [(x.id, x.name) for x in m.storage] == [(512, "pfs0")]
    # a -m host beside a role=master host: two masters (Batsim: "There are two master hosts...")
    with pytest.raises(InputError, match="several master hosts: a0, master_host0"):
        resolve_machines(parse_platform(str(BATSIM_PLATFORMS / "cluster512.xml")), {}, "a0")


def test_cluster_properties_go_to_its_hosts(tmp_path):
    """SimGrid 3.32's XML loader (sg_platf.cpp) gives a <cluster>'s <prop>s to each of its hosts, and a flat
    cluster's zone has them too: `-E` reads the wattages of cluster_energy_128.xml's hosts from its cluster."""
    from burstbuffer.simulator.energy import check_platform
    spec = parse_platform(str(BATSIM_PLATFORMS / "cluster_energy_128.xml"))
    h = spec.hosts["host5"]
    assert h.props["wattage_off"] == "9.75" and h.props["sleep_pstates"] == "13:14:15"
    assert h.zone_props == h.props and "role" not in h.props
    assert spec.hosts["master_host0"].props["role"] == "master"
    machines = resolve_machines(spec)
    check_platform(spec, machines)   # raises InputError without the wattages
    assert machines.compute[0].properties["wattage_off"] == "9.75"
    # properties_example.xml: zone properties inherited, a cluster's on its hosts and its zone
    spec = parse_platform(str(BATSIM_PLATFORMS / "properties_example.xml"))
    node = spec.hosts["node-0.simgrid.org"]
    assert node.props == {"zone_name": "acme cluster"}
    assert node.zone_props == {"Foo": "bar", "zone_name": "acme cluster"}
    assert spec.hosts["host1"].props == {"Hdd": "180", "mem": "4"}
    assert spec.hosts["host1"].zone_props == {"Foo": "bar", "bla": "bli"}
    assert resolve_machines(spec).master.name == "master_host"
    # a TORUS cluster loaded by SimGrid's XML loader: its hosts get its <prop>s, its zone none
    torus = tmp_path / "torus.xml"
    torus.write_text('<?xml version="1.0"?><platform version="4.1"><zone id="z" routing="Full">'
                     '<prop id="top" value="1"/><cluster id="t" topology="TORUS" topo_parameters="2,2" '
                     'prefix="c" suffix="" radical="0-3" speed="1Gf" bw="1GBps" lat="1us">'
                     '<prop id="foo" value="bar"/></cluster></zone></platform>')
    h = parse_platform(str(torus)).hosts["c1"]
    assert (h.props, h.zone_props) == ({"foo": "bar"}, {"top": "1"})
    # the project's Dragonfly files, built through SimGrid's API as its C++ plugins build them: zone only
    h = parse_platform(str(PLATFORM)).hosts["node_5"]
    assert h.props == {} and h.zone_props["burst_buffer_capacity"] == "40GB"


def test_white_space_before_the_xml_declaration(tmp_path):
    """Several of Batsim's platforms begin with a blank line before <?xml ...?>: SimGrid reads them, so the
    simulator does (the XML standard does not allow it; xml.etree alone refuses it). Other ill-formed files
    stay one-line errors."""
    text = (BATSIM_PLATFORMS / "small_platform.xml").read_text()
    assert text.startswith("<?xml")
    for lead in ("\n", "\n\n  \t\n", "\r\n"):
        p = tmp_path / "lead.xml"
        p.write_text(lead + text)
        assert sorted(parse_platform(str(p)).hosts) == sorted(parse_platform(str(BATSIM_PLATFORMS /
                                                                                 "small_platform.xml")).hosts)
    assert (BATSIM_PLATFORMS / "cluster_energy_128.xml").read_text().startswith("\n<?xml")
    p = tmp_path / "text-first.xml"
    p.write_text("x\n" + text)
    with pytest.raises(InputError, match="not well-formed"):
        parse_platform(str(p))


def test_dump_platform_of_a_batsim_platform_with_a_blank_first_line():
    """SimGrid itself loads a platform that begins with a blank line (the simulator hands it the file)."""
    out = dump(BATSIM_PLATFORMS / "properties_example.xml")
    assert out["master"] == "master_host"
    assert out["loader"] == "xml"
    assert "node-4.simgrid.org" in out["hosts"]


@pytest.mark.parametrize("name,text", [
    ("bom", "\ufeff" + (BATSIM_PLATFORMS / "small_platform.xml").read_text()),        # SimGrid: not UTF-8 text
    ("no-doctype", (BATSIM_PLATFORMS / "small_platform.xml").read_text().replace(
        '<!DOCTYPE platform SYSTEM "http://simgrid.gforge.inria.fr/simgrid/simgrid.dtd">', "")),
    ("bad-attribute", (BATSIM_PLATFORMS / "small_platform.xml").read_text().replace(
        'sharing_policy="FATPIPE"', 'sharing_policy="WIDE"')),
    ("text-first", "x\n" + (BATSIM_PLATFORMS / "small_platform.xml").read_text()),
])
def test_a_platform_simgrid_refuses_is_one_line(tmp_path, name, text):
    """What SimGrid's XML parser refuses (Batsim then exits), the simulator refuses in one line naming the
    file, exit status 2, no traceback."""
    p = tmp_path / f"{name}.xml"
    p.write_text(text, encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "burstbuffer.simulator", "-p", str(p), "--dump-platform"],
                         cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    lines = [ln for ln in out.stderr.splitlines() if "error:" in ln]
    assert len(lines) == 1 and f"{name}.xml" in lines[0] and "Traceback" not in out.stderr
