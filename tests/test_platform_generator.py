"""`burstbuffer platform dragonfly` (burstbuffer.platforms.generator; docs/platform.md), larger platforms in the
embedded simulator, and the on-demand whole-KTH workload (burstbuffer.workloads.bundled; docs/workload.md)."""
from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

from burstbuffer.cli import main as cli_main
from burstbuffer.errors import InputError
from burstbuffer.platforms.generator import DragonflyParams, dragonfly_xml, write_platform
from burstbuffer.platforms.model import Dragonfly, Platform
from burstbuffer.runner import run
from burstbuffer.platforms.simgrid_xml import parse_platform, resolve_machines
from burstbuffer.workloads import bundled
from burstbuffer.workloads.batsim_json import load_workload, write_workload
from burstbuffer.workloads.bb_model import BBModel
from burstbuffer.workloads.convert import convert_records
from burstbuffer.workloads.swf import iter_swf

from .conftest import PLATFORM, ROOT

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

GB = 10**9
PAPER = ["--groups", "3", "--chassis", "4", "--routers", "3", "--nodes-per-router", "3"]
#: the two larger sizes committed in platforms/ (benchmarks/bench_platform_scale.py), with their options
LARGER = {
    "dragonfly960.xml": ["--groups", "6", "--chassis", "5", "--routers", "6", "--nodes-per-router", "6",
                         "--bb-nodes-per-chassis", "4", "--pfs-bandwidth", "50GBps"],
    "dragonfly9600.xml": ["--groups", "10", "--chassis", "12", "--routers", "10", "--nodes-per-router", "9",
                          "--bb-nodes-per-chassis", "10", "--pfs-bandwidth", "500GBps"],
    # Theta-sized (docs/performance.md, "Large machines"; benchmarks/bench_platform_scale.py THETA)
    "theta4392.xml": ["--groups", "12", "--chassis", "6", "--routers", "16", "--nodes-per-router", "4",
                      "--bb-nodes-per-chassis", "3", "--bb-capacity", "5833GB", "--pfs-bandwidth", "228750MBps"],
    # the BBSched study's paper regime (docs/bbsched-study.md): 96 nodes with Cori's / Theta's BB per node
    "cori-like96.xml": [*PAPER, "--bb-capacity", "1192GB"],
    "theta-like96.xml": [*PAPER, "--bb-capacity", "3934GB"],
}


def without_comments(text: str) -> str:
    return re.sub(r"<!--.*?-->\n", "", text, flags=re.S)


def generate(tmp_path: Path, args: list[str], name: str = "p.xml") -> Path:
    out = tmp_path / name
    assert cli_main(["platform", "dragonfly", *args, "--output", str(out)]) == 0
    return out


def begins(path: Path) -> dict:
    """SIMULATION_BEGINS's resources of a platform file, as the embedded simulator announces them."""
    m = resolve_machines(parse_platform(str(path)))
    return {"compute_resources": [x.to_json() for x in m.compute],
            "storage_resources": [x.to_json() for x in m.storage]}


def dump(platform: Path, *routes: str) -> dict:
    """The simulator's SimGrid view of `platform` (a subprocess: one SimGrid engine per process)."""
    cmd = [sys.executable, "-m", "burstbuffer.simulator", "-p", str(platform), "--dump-platform"]
    for r in routes:
        cmd += ["--route", r]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


# ------------------------------------------------------------------------------------ the paper's platform

def test_paper_platform_is_platforms_dragonfly96(tmp_path, capsys):
    """--groups 3 --chassis 4 --routers 3 --nodes-per-router 3 (defaults otherwise) writes
    platforms/dragonfly96.xml: byte-identical but for the leading comment."""
    out = generate(tmp_path, PAPER)
    assert "108 hosts" in capsys.readouterr().out
    text = out.read_text()
    assert without_comments(text) == without_comments(PLATFORM.read_text())
    assert text == dragonfly_xml(DragonflyParams(3, 4, 3, 3))
    ET.fromstring(text.encode())  # the comment keeps the file well-formed ("--" is not allowed in it)
    # the comment says which SimGrid versions the file targets
    assert "SimGrid <= 3.27" in text and "3.32" in text


def test_paper_platform_same_hosts_roles_capacities(tmp_path):
    out = generate(tmp_path, PAPER)
    a, b = parse_platform(str(out)), parse_platform(str(PLATFORM))
    assert set(a.hosts) == set(b.hosts) == {f"node_{k}" for k in range(108)} | {"master", "pfs"}
    assert begins(out) == begins(PLATFORM)
    plat = Platform.from_simulation_begins(begins(out))
    assert plat.nb_compute == 96 and len(plat.bb_capacity) == 12
    assert set(plat.bb_capacity.values()) == {40 * GB} and plat.total_bb == 480 * GB
    assert {plat.names[i] for i in plat.bb_capacity} == {f"node_{9 * k}" for k in range(12)}
    assert plat.names[plat.pfs] == "pfs"


def test_paper_platform_same_routes_in_simgrid(tmp_path):
    """Through the simulator's platform builder (SimGrid 3.32 API), both files give the same hosts and the
    same links and latencies between a few pairs: PFS, master, same router/chassis/group, other group."""
    out = generate(tmp_path, PAPER)
    pairs = ["pfs,node_5", "node_17,pfs", "node_1,master", "node_0,node_1", "node_0,node_4", "node_0,node_9",
             "node_0,node_40", "node_107,node_3", "node_50,node_99"]
    got, want = dump(out, *pairs), dump(PLATFORM, *pairs)
    assert got["loader"] == want["loader"] == "api"
    assert got["hosts"] == want["hosts"] and len(got["hosts"]) == 110
    assert got["routes"] == want["routes"]
    by = {(r["src"], r["dst"]): r for r in got["routes"]}
    assert by[("pfs", "node_5")]["links"] == ["link_pfs"]
    assert any("blue" in ln for ln in by[("node_0", "node_40")]["links"])


# ----------------------------------------------------------------------------------------- other sizes

@pytest.mark.parametrize("name", sorted(LARGER))
def test_committed_larger_platforms_are_generated(tmp_path, name):
    out = generate(tmp_path, LARGER[name])
    assert out.read_text() == (ROOT / "platforms" / name).read_text()


def test_storage_layout_and_coordinates(tmp_path):
    """B BB nodes per chassis = the first B nodes of each chassis; the scheduler's Dragonfly coordinates
    (from the topo_parameters property) put each in its chassis, and a compute node prefers its own
    chassis's BB nodes, then its group's."""
    p = DragonflyParams.from_options(4, 2, 4, 3, 2, "10GB", "20GBps", "10Gbps")
    assert (p.nb_hosts, p.nb_bb_nodes, p.nb_compute) == (96, 16, 80)
    assert p.storage_nodes()[:4] == ["node_0", "node_1", "node_12", "node_13"]
    assert p.link_bandwidth == 1.25e9
    out = write_platform(p, tmp_path / "p.xml")
    spec = parse_platform(str(out))
    (cluster,) = spec.clusters
    assert (cluster.topo_parameters, cluster.bw) == ("4,1;2,1;4,1;3", "1250MBps")
    plat = Platform.from_simulation_begins(begins(out))
    assert plat.nb_compute == 80 and set(plat.bb_capacity.values()) == {10 * GB}
    shape = Dragonfly.parse(cluster.props["topo_parameters"])
    ids = {name: i for i, name in plat.names.items()}
    for k, name in enumerate(p.storage_nodes()):
        assert shape.coordinates(int(name[5:]))[1] == k // 2     # BB node k is in chassis k // B
    pref = plat.bb_preference(ids["node_14"])                   # chassis 1, group 0
    assert [plat.names[b] for b in pref[:2]] == ["node_12", "node_13"]
    assert {plat.names[b] for b in pref[2:4]} == {"node_0", "node_1"}
    # nodes of one chassis share one preference tuple (computed once per chassis)
    assert plat.bb_preference(ids["node_15"]) is pref


def test_10800_host_platform_resources():
    """platforms/dragonfly9600.xml: 9,600 compute and 1,200 BB nodes in Batsim's order (parsing only; the
    SimGrid load and a run are in benchmarks/bench_platform_scale.py)."""
    m = resolve_machines(parse_platform(str(ROOT / "platforms" / "dragonfly9600.xml")))
    assert len(m.compute) == 9600 and len(m.storage) == 1201 and m.storage[-1].name == "pfs"
    assert [x.id for x in m.compute + m.storage] == list(range(10801))


def test_simulation_begins_is_linear_in_hosts():
    """Generated platforms name their BB nodes once, on a zone without hosts, so no resource of
    SIMULATION_BEGINS carries the list (Batsim forwards a zone's properties with each of its resources):
    the resources' JSON per resource does not grow with the machine (docs/platform.md §4)."""
    per_resource = {}
    for name in ("dragonfly960.xml", "theta4392.xml", "dragonfly9600.xml"):
        data = begins(ROOT / "platforms" / name)
        res = data["compute_resources"] + data["storage_resources"]
        for r in res:
            assert set(r["zone_properties"]) <= {"burst_buffer_capacity", "topo_parameters"}
        per_resource[name] = len(json.dumps(data)) / len(res)
    assert max(per_resource.values()) < 1.1 * min(per_resource.values())
    assert max(per_resource.values()) < 200   # bytes: id, name, state, role, capacity, shape
    theta = resolve_machines(parse_platform(str(ROOT / "platforms" / "theta4392.xml")))
    assert (len(theta.compute), len(theta.storage)) == (4392, 217)
    plat = Platform.from_simulation_begins(begins(ROOT / "platforms" / "theta4392.xml"))
    assert plat.total_bb == 216 * 5833 * GB and abs(plat.total_bb - 1.26e15) < 0.001e15


def test_1080_host_platform_runs_kth_jobs(tmp_path):
    """A ~1,000-node generated platform loads in SimGrid 3.32 and a KTH-derived workload runs on it under
    sjf-bb with the io-aware model (runner.run), jobs scaled 10x wider so they need more than 96 nodes."""
    plat = ROOT / "platforms" / "dragonfly960.xml"
    wider = (dataclasses.replace(r, requested_processors=r.requested_processors * 10)
             for r in iter_swf(bundled.KTH_SWF))
    conv = convert_records(wider, name="kth-x10", nb_res=960, model=BBModel(bb_capacity=40 * GB, bb_nodes=120),
                           seed=0, max_records=12)
    w = conv.workload
    for prof in w.profiles.values():
        prof["com"] = 0.0   # all-to-all traffic between hundreds of nodes: slow, and not what is tested here
    wl = write_workload(tmp_path / "w.json", w)
    res = run("sjf-bb", wl, plat, tmp_path / "out", progress=False, timeout=300)
    jobs = pd.read_csv(res.jobs_csv)
    assert len(jobs) == 12 and res.summary.rejected == 0
    assert (jobs.final_state == "COMPLETED_SUCCESSFULLY").sum() >= 10
    assert jobs.requested_number_of_resources.max() > 96
    d = dump(plat, "pfs,node_1079", "node_0,node_1079")
    assert d["loader"] == "api" and len(d["hosts"]) == 1082
    assert len(d["compute_resources"]) == 960 and len(d["storage_resources"]) == 121


# ------------------------------------------------------------------------------------------- bad input

BAD = [
    ({"--groups": "0"}, "--groups: 0: must be a positive integer"),
    ({"--chassis": "-4"}, "--chassis: -4: must be a positive integer"),
    ({"--routers": "x"}, "--routers: x: must be a positive integer"),
    ({"--nodes-per-router": "0"}, "--nodes-per-router: 0"),
    ({"--bb-nodes-per-chassis": "0"}, "--bb-nodes-per-chassis: 0"),
    ({"--bb-nodes-per-chassis": "10"}, "a chassis has 9 nodes"),
    ({"--bb-nodes-per-chassis": "9"}, "at most 8 can be BB nodes"),
    ({"--groups": "4"}, "groups <= routers"),
    ({"--bb-capacity": "lots"}, "--bb-capacity: lots: not a size"),
    ({"--bb-capacity": "0GB"}, "--bb-capacity: 0GB: must be positive"),
    ({"--pfs-bandwidth": "5GBx"}, "--pfs-bandwidth: 5GBx"),
    ({"--link-bandwidth": "-1MBps"}, "--link-bandwidth: -1MBps: must be positive"),
    ({"--link-bandwidth": "fast"}, "--link-bandwidth: fast"),
]


def _args(override: dict[str, str]) -> list[str]:
    """The paper's options with `override`, as --option=VALUE (so that negative values are values)."""
    opts = dict(zip(PAPER[::2], PAPER[1::2]))
    opts.update(override)
    return [f"{k}={v}" for k, v in opts.items()]


@pytest.mark.parametrize("override,message", BAD)
def test_bad_parameters_one_line_exit_2_nothing_written(tmp_path, capsys, override, message):
    out = tmp_path / "p.xml"
    assert cli_main(["platform", "dragonfly", *_args(override), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("burstbuffer: ") and message in lines[0], err
    assert list(tmp_path.iterdir()) == []   # nothing written, no temporary file left


def test_bad_parameters_from_the_command_line(tmp_path):
    out = tmp_path / "p.xml"
    proc = subprocess.run([sys.executable, "-m", "burstbuffer.cli", "platform", "dragonfly",
                           *_args({"--bb-nodes-per-chassis": "12"}), "--output", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("burstbuffer: --bb-nodes-per-chassis: 12: a chassis has 9 nodes (routers x "
                                   "nodes per router), so at most 8 can be BB nodes (compute nodes must remain)")
    assert list(tmp_path.iterdir()) == []


def test_simulator_refuses_more_groups_than_routers(tmp_path):
    """A hand-written Dragonfly with more groups than routers per chassis: a one-line error from the
    simulator rather than SimGrid 3.32's segmentation fault on the first route between groups."""
    bad = tmp_path / "bad.xml"
    bad.write_text(PLATFORM.read_text().replace("3,1;4,1;3,1;3", "5,1;4,1;3,1;3").replace("0-107", "0-179"))
    proc = subprocess.run([sys.executable, "-m", "burstbuffer.simulator", "-p", str(bad), "--dump-platform",
                           "--route", "node_0,node_170"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "5 groups but 3 routers per chassis" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_bad_parameters_leave_an_existing_file_alone(tmp_path):
    out = tmp_path / "p.xml"
    out.write_text("old")
    assert cli_main(["platform", "dragonfly", *_args({"--groups": "0"}), "--output", str(out)]) == 2
    assert out.read_text() == "old" and list(tmp_path.iterdir()) == [out]


def test_failed_write_leaves_no_partial_file(tmp_path, monkeypatch, capsys):
    """A full disk is not bad input: the OSError goes through, and the command line says it in one line with
    exit 74 (errors.EXIT_DISK_FULL, docs/faults.md); no temporary or partial file is left either way."""
    import burstbuffer.fileio as fileio
    from burstbuffer.errors import EXIT_DISK_FULL, is_disk_full

    def boom(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(fileio.os, "replace", boom)
    with pytest.raises(OSError, match="No space left") as err:
        write_platform(DragonflyParams(3, 4, 3, 3), tmp_path / "p.xml")
    assert is_disk_full(err.value) and not isinstance(err.value, InputError)
    assert list(tmp_path.iterdir()) == []
    capsys.readouterr()
    assert cli_main(["platform", "dragonfly", *_args({}), "--output", str(tmp_path / "q.xml")]) == EXIT_DISK_FULL == 74
    err_lines = capsys.readouterr().err.splitlines()
    assert len(err_lines) == 1 and "cannot write the outputs: No space left on device" in err_lines[0]
    assert list(tmp_path.iterdir()) == []


def test_params_check_and_sizes():
    with pytest.raises(InputError, match="more than the 1000000"):
        DragonflyParams.from_options(100, 100, 100, 100)
    with pytest.raises(InputError, match="positive integer"):
        DragonflyParams(3, 4, 3, 3, bb_nodes_per_chassis=True).check()
    p = DragonflyParams.from_options("3", "4", "3", "3", "1", "40GB", "5GBps", "1250MBps")
    assert p == DragonflyParams(3, 4, 3, 3)
    assert (p.nb_hosts, p.nb_compute, p.nb_bb_nodes, p.topo_parameters) == (108, 96, 12, "3,1;4,1;3,1;3")


# ------------------------------------------------------------------------------- the whole KTH workload

def test_ensure_kth_workload_is_deterministic(tmp_path):
    """The whole trace: 28,467 jobs (kept: the 14 asking for more than 96 nodes are rejected at run time),
    the same bytes on every conversion; an existing file is returned untouched."""
    a = bundled.ensure_kth_workload(tmp_path / "a" / "kth-all.json")
    b = bundled.ensure_kth_workload(tmp_path / "b.json", seed=0)
    assert a.read_bytes() == b.read_bytes()
    w = load_workload(a)
    assert len(w.jobs) == bundled.KTH_ALL_JOBS == 28_467
    assert w.nb_res == 96 and sum(j.res > 96 for j in w.jobs) == 14
    assert w.jobs[0].subtime == 1
    c = tmp_path / "c.json"
    c.write_text("kept")
    assert bundled.ensure_kth_workload(c).read_text() == "kept"


def test_ensure_kth_workload_drop_oversized(tmp_path):
    w = load_workload(bundled.ensure_kth_workload(tmp_path / "fit.json", drop_oversized=True))
    assert len(w.jobs) == bundled.KTH_ALL_JOBS_FITTING == 28_453 and max(j.res for j in w.jobs) <= 96


def test_ensure_kth_workload_without_trace(tmp_path, monkeypatch):
    monkeypatch.delenv("BURSTBUFFER_KTH_SWF", raising=False)
    with pytest.raises(InputError, match=r"missing\.swf: KTH trace: not found"):
        bundled.ensure_kth_workload(tmp_path / "w.json", swf=tmp_path / "missing.swf")
    assert not (tmp_path / "w.json").exists()
    assert bundled.KTH_SWF == ROOT / "workloads" / "KTH-SP2-1996-2.1-cln.swf.gz" and bundled.KTH_SWF.is_file()
    assert bundled.KTH_ALL == ROOT / "workloads" / "kth-all.json"
