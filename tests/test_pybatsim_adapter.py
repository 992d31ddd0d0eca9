"""burstbuffer policies under pybatsim 3.2.1's own launcher (`burstbuffer/pybatsim.py`), and the platform a real
Batsim on SimGrid >= 3.28 loads (`burstbuffer.platforms.sg_cpp`, docs/platform.md §5).

Each comparison runs the same workload twice against the same simulator — once with `burstbuffer serve`, once
with ``pybatsim burstbuffer/pybatsim.py -o '{"policy": …}'`` — and asserts the two jobs.csv are identical
(start times, allocations, BB placements, final states). The simulator is the embedded one (`burstbuffer
simulate`) or the real Batsim 4.2.1 binary (skipped when it is not built here), which gets the command line
`burstbuffer serve --batsim …` prints, as printed.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from burstbuffer.simulator import free_tcp_endpoint

from .sim_sched import REPO

pytestmark = [pytest.mark.slow, pytest.mark.batsim]   # test tier (setup.cfg markers; docs/testing.md)

pytest.importorskip("batsim.batsim", reason="pybatsim 3.2.1 is not installed (test extra)")
pytest.importorskip("docopt", reason="docopt (a pybatsim requirement) is not installed")

BATSIM = Path(os.environ.get("BATSIM_BIN", "/root/.cache/batsim-4.2.1/build/batsim"))
STORAGE = ",".join(f"node_{9 * i}" for i in range(12))
ENV = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _dense_workload(tmp_path: Path, n: int = 40) -> Path:
    """The first `n` KTH jobs submitted 20 times faster: jobs wait, so the policies' choices show."""
    w = json.loads((REPO / "workloads" / "kth-1000.json").read_text())
    w["jobs"] = w["jobs"][:n]
    for j in w["jobs"]:
        j["subtime"] = round(j["subtime"] / 20, 3)
    p = tmp_path / "dense.json"
    p.write_text(json.dumps(w))
    return p


def _scheduler(argv: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(argv, cwd=str(REPO), env=ENV, stdout=open(log, "w"), stderr=subprocess.STDOUT, text=True)


def _finish(sched: subprocess.Popen, sim: subprocess.CompletedProcess, log: Path) -> None:
    try:
        sched.wait(timeout=60)
    except subprocess.TimeoutExpired:
        sched.kill()
        sched.wait()
    assert sim.returncode == 0, sim.stderr[-2000:] + sim.stdout[-2000:]
    assert sched.returncode == 0, log.read_text()[-2000:]


def _embedded(endpoint: str, wl: Path, prefix: Path, dynamic: bool) -> subprocess.CompletedProcess:
    extra = ["--enable-dynamic-jobs", "--enable-profile-reuse"] if dynamic else []
    return subprocess.run([sys.executable, "-m", "burstbuffer", "simulate", "-p", str(REPO / "platforms" / "dragonfly96.xml"),
                           "-w", str(wl), "-e", str(prefix), "-s", endpoint, "-q", "--timeout", "120", *extra],
                          cwd=str(REPO), env=ENV, capture_output=True, text=True, timeout=600)


def _pybatsim(tmp_path: Path, name: str, policy: str, model: str, form: str, run_sim) -> str:
    endpoint = free_tcp_endpoint()
    out = tmp_path / name
    target = "burstbuffer/pybatsim.py" if form == "file" else "burstbuffer.pybatsim"
    opts = json.dumps({"policy": policy, "model": model, "output": str(out)})
    log = tmp_path / f"{name}.log"
    sched = _scheduler([sys.executable, "-m", "batsim.cmds.launcher", target, "-s", endpoint, "-t", "5000",
                        "-v", "warning", "-o", opts], log)
    time.sleep(1.0)
    sim = run_sim(endpoint, out)
    _finish(sched, sim, log)
    assert "Scheduler: Pybatsim" in log.read_text()
    return (out / "jobs.csv").read_text()


def _serve(tmp_path: Path, name: str, policy: str, model: str, run_sim) -> str:
    endpoint = free_tcp_endpoint()
    out = tmp_path / name
    log = tmp_path / f"{name}.log"
    sched = _scheduler([sys.executable, "-m", "burstbuffer", "serve", "--policy", policy, "--model", model,
                        "--socket", endpoint, "--output", str(out), "-q", "--timeout", "300"], log)
    time.sleep(1.0)
    sim = run_sim(endpoint, out)
    _finish(sched, sim, log)
    return (out / "jobs.csv").read_text()


def _waited(csv_text: str) -> int:
    rows = [ln.split(",") for ln in csv_text.splitlines()[1:]]
    return sum(1 for r in rows if r[11] and float(r[11]) > 0)


@pytest.mark.parametrize("policy,model,form", [("sjf-bb", "alloc-only", "file"),
                                                ("conservative-bb", "io-aware", "module")])
def test_pybatsim_launcher_same_schedule_as_serve_embedded(tmp_path, policy, model, form):
    wl = _dense_workload(tmp_path)
    dyn = model == "io-aware"
    run_sim = lambda ep, out: _embedded(ep, wl, out / "sim", dyn)   # noqa: E731
    a = _pybatsim(tmp_path, "pyb", policy, model, form, run_sim)
    b = _serve(tmp_path, "serve", policy, model, run_sim)
    assert len(a.splitlines()) == 41
    assert _waited(a) >= 5, "the workload must make jobs wait, else every policy gives the same schedule"
    assert a == b


def test_pybatsim_bad_option_is_one_line(tmp_path):
    for opts, why in (('{"policy": "nope"}', "unknown policy"), ('{"polcy": "sjf-bb"}', "unknown option"),
                      ('{"model": "x"}', "unknown job model")):
        r = subprocess.run([sys.executable, "-m", "batsim.cmds.launcher", "burstbuffer/pybatsim.py", "-s",
                            free_tcp_endpoint(), "-o", opts], cwd=str(REPO), env=ENV, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 2 and why in r.stderr and r.stderr.strip().count("\n") == 0, r.stderr


needs_batsim = pytest.mark.skipif(not BATSIM.is_file() or not os.access(BATSIM, os.X_OK),
                                  reason=f"no real Batsim 4.2.1 binary at {BATSIM}")
needs_cxx = pytest.mark.skipif(not (shutil.which("g++") and Path("/usr/include/simgrid/s4u.hpp").exists()),
                               reason="no g++ or SimGrid headers (libsimgrid-dev) to compile the platform plugin")


def _printed_batsim_command(tmp_path: Path, wl: Path, model: str) -> list[str]:
    """What `burstbuffer serve --batsim BATSIM` prints for Batsim, as argv (the serve process is stopped)."""
    endpoint = free_tcp_endpoint()
    log = tmp_path / "printed.log"
    sched = _scheduler([sys.executable, "-m", "burstbuffer", "serve", "--policy", "sjf-bb", "--model", model,
                        "--socket", endpoint, "--workload", str(wl), "--batsim", str(BATSIM), "-q", "--timeout",
                        "300", "--output", str(tmp_path / "printed")], log)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and str(BATSIM) + " -p" not in log.read_text():
        assert sched.poll() is None, log.read_text()
        time.sleep(0.5)
    sched.terminate()
    sched.wait(timeout=60)
    line = next(ln for ln in log.read_text().splitlines() if ln.strip().startswith(str(BATSIM)))
    assert "C++ plugin of the XML compiled for" in log.read_text()
    return shlex.split(line)


@needs_batsim
@needs_cxx
@pytest.mark.parametrize("model", ["io-aware", "alloc-only"])
def test_real_batsim_runs_the_printed_command_and_pybatsim_matches_serve(tmp_path, model):
    wl = _dense_workload(tmp_path, 30)
    argv = _printed_batsim_command(tmp_path, wl, model)
    assert argv[argv.index("-p") + 1].endswith(".so") and "--bb-capacity" not in argv

    def run_sim(endpoint, out):
        cmd = list(argv)
        cmd[cmd.index("-s") + 1] = endpoint
        cmd[cmd.index("-e") + 1] = str(out / "batsim")
        out.mkdir(parents=True, exist_ok=True)   # Batsim writes there at once, maybe before the scheduler is up
        return subprocess.run(cmd, cwd=str(REPO), capture_output=True, text=True, timeout=600)

    a = _serve(tmp_path, "serve", "sjf-bb", model, run_sim)
    b = _pybatsim(tmp_path, "pyb", "sjf-bb", model, "file", run_sim)
    assert a == b
    rows = a.splitlines()[1:]
    assert len(rows) == 30 and all(",COMPLETED_SUCCESSFULLY," in r for r in rows)
    assert _waited(a) >= 3
    # the embedded simulator on the XML gives the same schedule as real Batsim on the plugin
    c = _serve(tmp_path, "serve-embedded", "sjf-bb", model,
               lambda ep, out: _embedded(ep, wl, out / "sim", model == "io-aware"))
    assert c == a


_ROUTES = r"""
import sys, simgrid
e = simgrid.Engine(["x"])
path = sys.argv[1]
if path.endswith(".so"):
    e.load_platform(path)
else:
    from burstbuffer.platforms.simgrid_xml import parse_platform
    from burstbuffer.simulator.platform_loader import load_into_engine
    load_into_engine(e, parse_platform(path))
hosts = sorted(h.name for h in e.all_hosts)
print(len(hosts))
for a in ("pfs", "master", "node_0", "node_5", "node_17"):
    for b in ("pfs", "node_1", "node_9", "node_30", "node_47"):
        if a != b and {a, b} != {"master", "pfs"}:   # no route between those two zones
            links, lat = e.host_by_name(a).route_to(e.host_by_name(b))
            print(a, b, round(lat, 9), [(l.name, l.bandwidth) for l in links])
"""


@needs_cxx
def test_platform_plugin_has_the_routes_of_the_xml(tmp_path):
    """`burstbuffer platform dragonfly --format so` and the XML of the same shape (as burstbuffer's simulator
    builds it on SimGrid 3.32): same hosts, and the same links, bandwidths and latency on every route checked."""
    shape = ["--groups", "2", "--chassis", "2", "--routers", "3", "--nodes-per-router", "4", "--bb-nodes-per-chassis", "2"]
    outs = {}
    for ext in ("xml", "so", "cpp"):
        r = subprocess.run([sys.executable, "-m", "burstbuffer", "platform", "dragonfly", *shape, "--output",
                            str(tmp_path / f"p.{ext}")], cwd=str(REPO), env=ENV, capture_output=True, text=True,
                           timeout=600)
        assert r.returncode == 0, r.stderr
    assert "create_dragonfly_zone" in (tmp_path / "p.cpp").read_text()
    for ext in ("xml", "so"):
        r = subprocess.run([sys.executable, "-c", _ROUTES, str(tmp_path / f"p.{ext}")], cwd=str(REPO), env=ENV,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        outs[ext] = r.stdout
    assert outs["xml"].splitlines()[0] == "50"          # 48 nodes + pfs + master
    assert outs["xml"] == outs["so"]
