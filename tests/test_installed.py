"""The package installed as a user installs it (docs/deployment.md §1): an sdist built from this checkout, a wheel
built from that sdist, the wheel installed into a fresh virtual environment, then the main commands run from an
empty folder — no repository beside them. The bundled inputs (workloads, platforms, queue file) must come from
the installed package (`burstbuffer.data`), and the main job must give the recorded schedule.

No network: the build uses the installed setuptools (--no-build-isolation) and the fresh venv sees SimGrid
(system site packages) and the already-installed dependencies (a .pth naming this venv's site-packages, whose
own .pth files — this checkout's editable install among them — are not processed)."""
import csv
import hashlib
import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from burstbuffer import cbuild

from .conftest import PLATFORM, ROOT

pytestmark = pytest.mark.slow

DATA_FILES = {"workloads/kth-1000.json", "workloads/mira-like-queues.toml", "workloads/KTH-SP2-1996-2.1-cln.swf.gz",
              "workloads/KTH-split/part-0.json.gz", "workloads/KTH-split/part-15.yaml", "platforms/dragonfly96.xml",
              "platforms/dragonfly9600.xml"}


def _sh(cmd, cwd, env=None, timeout=900):
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{cmd}: exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def _recorded_hash(key: str) -> str:
    import json
    return json.loads((ROOT / "benchmarks" / "schedule_hashes_1000.json").read_text())[key]


def _projected_hash(jobs_csv: Path) -> str:
    """sha256 of jobs.csv projected on the recorded columns, as benchmarks/schedule_hashes.py computes it."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("schedule_hashes", ROOT / "benchmarks" / "schedule_hashes.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return hashlib.sha256(mod.projected(jobs_csv)).hexdigest()


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv, environment, sdist, wheel): the wheel built from the sdist, installed in a fresh venv."""
    tmp = tmp_path_factory.mktemp("installed")
    dist = tmp / "dist"
    dist.mkdir()
    _sh([sys.executable, "-c", f"from setuptools import build_meta; build_meta.build_sdist({str(dist)!r})"],
        cwd=ROOT)
    (sdist,) = dist.glob("burstbuffer-*.tar.gz")
    _sh([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-index", "--no-build-isolation",
         "-w", dist, sdist], cwd=tmp)
    (wheel,) = dist.glob("burstbuffer-*.whl")
    venv = tmp / "venv"
    _sh([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv], cwd=tmp)
    py = venv / "bin" / "python"
    site = Path(_sh([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp).strip())
    (site / "dev-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _sh([sys.executable, "-m", "pip", "--python", py, "install", "-q", "--no-deps", "--no-index", wheel], cwd=tmp)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(HOME=str(tmp / "home"), XDG_CACHE_HOME=str(tmp / "home" / ".cache"), MPLBACKEND="Agg",
               PATH=os.pathsep.join([str(venv / "bin"), env.get("PATH", "")]))
    return venv, env, sdist, wheel


def test_sdist_and_wheel_carry_the_bundled_inputs(installed):
    _, _, sdist, wheel = installed
    with tarfile.open(sdist) as t:
        members = {m.name.split("/", 1)[1]: m for m in t.getmembers() if "/" in m.name}
    with zipfile.ZipFile(wheel) as z:
        in_wheel = {n: z.read(n) for n in z.namelist() if n.startswith("burstbuffer/data/")}
    for f in DATA_FILES:
        m = members[f"burstbuffer/data/{f}"]
        assert m.isfile(), f"{f} is not a regular file in the sdist"
        assert in_wheel[f"burstbuffer/data/{f}"] == (ROOT / f).read_bytes()
    assert not any(n.endswith("kth-all.json") for n in in_wheel)   # made on demand, never shipped


def test_the_wheel_carries_the_c_engines(installed):
    """The policies' C engines are built when the package is built (setup.py): the sdist has their sources and
    setup.py, the wheel is a platform wheel with their extension modules."""
    _, _, sdist, wheel = installed
    with tarfile.open(sdist) as t:
        members = {m.name.split("/", 1)[1] for m in t.getmembers() if "/" in m.name}
    with zipfile.ZipFile(wheel) as z:
        in_wheel = set(z.namelist())
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    assert "setup.py" in members and "burstbuffer/schedulers/native/pymodule.c" in members
    assert not wheel.name.endswith("-none-any.whl"), wheel.name
    for name in cbuild.ENGINES:
        assert f"burstbuffer/schedulers/native/{name}.c" in members
        assert f"burstbuffer/schedulers/native/{name}{suffix}" in in_wheel


def test_installed_package_runs_from_an_empty_folder(installed, tmp_path):
    venv, env, _, _ = installed
    work = tmp_path / "empty"
    work.mkdir()
    where = _sh([venv / "bin" / "python", "-c",
                 "import burstbuffer, burstbuffer.runner as r; print(burstbuffer.__file__); "
                 "print(r.DEFAULT_WORKLOAD); print(r.DEFAULT_PLATFORM)"], cwd=work, env=env).split()
    assert all(p.startswith(str(venv)) for p in where), where
    assert not any(p.startswith(str(ROOT)) for p in where)
    # the C engines are the wheel's, in the venv (built at install, nothing compiled now)
    engines = _sh([venv / "bin" / "python", "-c", "from burstbuffer import cbuild\n"
                   "for n in cbuild.ENGINES: print(cbuild.engine_path(n))"], cwd=work, env=env).split()
    assert len(engines) == len(cbuild.ENGINES) and all(p.startswith(str(venv)) for p in engines), engines

    # the main job, defaults only but for the policy: the recorded schedule of the bundled 1000 jobs
    _sh([venv / "bin" / "burstbuffer", "run", "--policy", "fcfs", "-q"], cwd=work, env=env)
    assert _projected_hash(work / "out" / "fcfs" / "jobs.csv") == _recorded_hash("fcfs io-aware")

    # the platform generator writes the bundled platform
    out = _sh([venv / "bin" / "burstbuffer", "platform", "dragonfly", "--groups", "3", "--chassis", "4",
               "--routers", "3", "--nodes-per-router", "3", "--output", "p.xml"], cwd=work, env=env)
    assert "108 hosts" in out
    text = (work / "p.xml").read_text()
    bundled = PLATFORM.read_text()
    assert text[text.index("<platform"):] == bundled[bundled.index("<platform"):]


def test_installed_reproduce_1000_from_an_empty_folder(installed, tmp_path):
    venv, env, _, _ = installed
    work = tmp_path / "empty"
    work.mkdir()
    # one replicate: the bundled inputs and the recorded schedule are the point here, not the noise floor
    _sh([venv / "bin" / "burstbuffer", "reproduce", "--jobs", "1000", "--policies", "fcfs", "--gantt-jobs", "0",
         "--replicates", "1", "--engine", "local", "--workers", "1", "--output", "rep", "-q"], cwd=work, env=env)
    (jobs,) = (work / "rep" / "runs").glob("*/fcfs/jobs.csv")
    assert _projected_hash(jobs) == _recorded_hash("fcfs io-aware")
    assert (work / "rep" / "report.md").is_file()
    with open(work / "rep" / "summary.csv", newline="") as f:
        assert any(row.get("policy") == "fcfs" for row in csv.DictReader(f))
