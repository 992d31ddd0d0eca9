"""`make docker-check`: the containers beside a real Batsim, run for real, compared with `burstbuffer run`.

Steps (docs/deployment.md §2 lists them as commands):

1. A Batsim 4.2.1 binary: ``$BATSIM_BIN`` or ``~/.cache/batsim-4.2.1/build/batsim`` (built by
   ``../shared/batsim-4.2.1/build/build-batsim.sh``, which `.ci/run` runs first). None → SKIPPED (exit 0).
2. A container engine: Docker when ``docker info`` answers, else Podman (``podman``, ``podman-compose``,
   ``runc``, ``debootstrap`` installed from Debian's packages if missing; if they cannot be → SKIPPED).
3. Base images: the registry's ``python:3.11-slim-bookworm`` / ``debian:bookworm-slim`` when they can be
   pulled, else one Debian bookworm base made here (``debootstrap --variant=minbase`` with the packages the two
   images need, imported with ``podman import``; kept as ``localhost/burstbuffer-base:bookworm-<hash>``).
4. Podman in a nested container: if a container cannot start with the defaults, the settings that work there
   (``runtime = "runc"``, ``cgroup_manager = "cgroupfs"``, ulimits nofile=20000:20000 nproc=32768:32768) go to
   a ``containers.conf`` given by ``CONTAINERS_CONF`` to every later podman call.
5. Python packages: a wheelhouse made on the host (``pip download -c constraints.txt``, cached under
   ``~/.cache/burstbuffer/docker-check/``, keyed by constraints.txt and setup.cfg), bound into the build
   (``docker/wheelhouse/``, ``--build-arg PIP_WHEELHOUSE=1``): the image build needs no index.
6. Images: ``burstbuffer-scheduler`` from docker/Dockerfile, ``localhost/batsim:4.2.1-local`` from
   docker/Dockerfile.batsim and the local binary.
7. The platform: ``burstbuffer platform dragonfly --groups 3 --chassis 4 --routers 3 --nodes-per-router 3
   --output dragonfly96.so`` (the generator's C++ plugin, `burstbuffer.platforms.sg_cpp`, compiled against the
   host's SimGrid 3.32 = the image's Debian libsimgrid3.32), with dragonfly96.xml beside it.
8. ``compose -p burstbuffer-check -f docker/compose.yaml up`` on the bundled 1000 jobs, then ``down`` (the
   containers, the network and the pod it made are removed whatever happened).
9. ``burstbuffer run`` with the same policy, model and seed on the bundled platform (the embedded simulator),
   and the two jobs.csv compared: ``jobs.csv identical (1000 jobs)`` (exit 0) or the first differing cells
   (exit 1).

Default policy and model: fcfs-bb, alloc-only, for which Batsim 4.2.1 and the embedded simulator give the same
schedule on the 1000 jobs; POLICY / MODEL / SEED choose others (io-aware runs differ in a few cells between the
two simulators, docs/batsim-fidelity.md §4 — containers or not). Exit status: 0 identical or skipped, 1 a
difference or a failed step, 2 bad input.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "burstbuffer-check"
SCHEDULER_IMAGE = "localhost/burstbuffer-scheduler:check"
BATSIM_IMAGE = "localhost/batsim:4.2.1-local"
REGISTRY_SCHEDULER_BASE = "docker.io/library/python:3.11-slim-bookworm"
REGISTRY_BATSIM_BASE = "docker.io/library/debian:bookworm-slim"
#: Debian packages of the local base: the scheduler's (Python, venv, and the C compiler and Python's headers: the
#: image builds the policies' C engines when it installs the package, setup.py) and the Batsim binary's shared
#: libraries (`ldd batsim` on bookworm).
BASE_PACKAGES = ("python3", "python3-venv", "python3-dev", "gcc", "libc6-dev", "ca-certificates",
                 "libsimgrid3.32", "libzmq5", "libdocopt0", "libpugixml1v5")
DEBIAN_MIRROR = "http://deb.debian.org/debian"
HOST_PACKAGES = ("podman", "podman-compose", "runc", "debootstrap", "uidmap", "slirp4netns", "fuse-overlayfs",
                 "netavark", "aardvark-dns", "iptables")
NESTED_CONF = """# written by docker/check.py: podman inside a container (a CI runner in a container)
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"

[network]
network_backend = "netavark"
"""
STORAGE = "node_0,node_9,node_18,node_27,node_36,node_45,node_54,node_63,node_72,node_81,node_90,node_99"


def cache_root() -> Path:
    base = os.environ.get("BURSTBUFFER_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "burstbuffer")
    return Path(base) / "docker-check"


def say(msg: str) -> None:
    print(f"docker-check: {msg}", flush=True)


class Failed(Exception):
    """A step failed: the message is printed and the exit status is 1."""


class Skipped(Exception):
    """Something this check needs is not on this machine: printed as SKIPPED, exit status 0."""


def run(cmd, *, env=None, timeout=1800, check=True, quiet=False, input=None, cwd=None):
    """Run `cmd`; its output is returned (and shown when it fails). Failed on a non-zero exit if `check`."""
    cmd = [str(c) for c in cmd]
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, input=input, cwd=cwd)
    except subprocess.TimeoutExpired:
        raise Failed(f"{' '.join(cmd[:4])} …: no end after {timeout} s") from None
    except OSError as exc:
        raise Failed(f"{cmd[0]}: {exc}") from None
    if check and r.returncode != 0:
        tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-25:])
        raise Failed(f"{' '.join(cmd[:6])} … exited {r.returncode}:\n{tail}")
    if not quiet and r.returncode == 0 and os.environ.get("DOCKER_CHECK_VERBOSE"):
        print(r.stdout + r.stderr)
    return r


# --- comparison ----------------------------------------------------------------------------------------------
def compare_jobs_csv(a: Path, b: Path, limit: int = 10) -> tuple[int, list[str]]:
    """(number of rows of `a`, the first `limit` differences between two jobs.csv files as lines ``job J:
    COLUMN: A vs B``, plus row-count and header differences). Empty list: identical content."""
    with open(a, newline="") as f:
        ra = list(csv.reader(f))
    with open(b, newline="") as f:
        rb = list(csv.reader(f))
    diffs: list[str] = []
    if not ra or not rb:
        return 0, ["one of the files is empty"]
    head_a, head_b = ra[0], rb[0]
    if head_a != head_b:
        diffs.append(f"columns differ: {sorted(set(head_a) ^ set(head_b)) or 'same set, another order'}")
    if len(ra) != len(rb):
        diffs.append(f"{len(ra) - 1} rows vs {len(rb) - 1}")
    idx = head_a.index("job_id") if "job_id" in head_a else 0
    common = [c for c in head_a if c in head_b]
    pos_b = {c: head_b.index(c) for c in common}
    total = 0
    for row_a, row_b in zip(ra[1:], rb[1:]):
        for i, col in enumerate(head_a):
            if col in pos_b and row_a[i] != row_b[pos_b[col]]:
                total += 1
                if total <= limit:
                    diffs.append(f"job {row_a[idx]}: {col}: {row_a[i]} vs {row_b[pos_b[col]]}")
    if total > limit:
        diffs.append(f"… {total} differing cells in all")
    return len(ra) - 1, diffs


# --- the engine ----------------------------------------------------------------------------------------------
class Engine:
    """The container engine's commands: `cli` (docker or podman), `compose` (a list), and the environment every
    call gets (CONTAINERS_CONF for podman in a nested container)."""

    def __init__(self, cli: str, compose: list[str]):
        self.cli, self.compose = cli, compose
        self.env = dict(os.environ)

    def __call__(self, *args, **kw):
        return run([self.cli, *args], env=self.env, **kw)

    def has_image(self, ref: str) -> bool:
        return self("image", "exists" if self.cli == "podman" else "inspect", ref, check=False, quiet=True).returncode == 0


def _apt_install(packages) -> None:
    missing = [p for p in packages if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
    if not missing:
        return
    if shutil.which("apt-get") is None:
        raise Skipped(f"no apt-get to install {' '.join(missing)}")
    sudo = [] if os.geteuid() == 0 else (["sudo", "-n"] if shutil.which("sudo") else None)
    if sudo is None:
        raise Skipped(f"not root and no sudo to install {' '.join(missing)}")
    say(f"installing Debian packages: {' '.join(missing)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in ([*sudo, "apt-get", "update", "-qq"],
                [*sudo, "apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing]):
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
        if r.returncode != 0:
            raise Skipped(f"cannot install {' '.join(missing)} ({' '.join(cmd[len(sudo):3 + len(sudo)])} exited "
                          f"{r.returncode}: {(r.stderr or r.stdout).strip().splitlines()[-1:] or ''})")


def find_engine() -> Engine:
    """Docker with its compose plugin when its daemon answers, else Podman (installed if missing)."""
    if shutil.which("docker") and subprocess.run(["docker", "info"], capture_output=True).returncode == 0 \
            and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return Engine("docker", ["docker", "compose"])
    _apt_install(HOST_PACKAGES)
    for tool in ("podman", "podman-compose"):
        if shutil.which(tool) is None:
            raise Skipped(f"{tool} not found after installing {' '.join(HOST_PACKAGES)}")
    return Engine("podman", ["podman-compose"])


def ensure_runnable(eng: Engine, image: str, scratch: Path) -> None:
    """A container of `image` starts (`true`); for podman, with the nested-container settings if the defaults
    fail. Failed if it cannot start either way."""
    if eng("run", "--rm", image, "true", check=False, quiet=True, timeout=300).returncode == 0:
        return
    if eng.cli != "podman":
        r = eng("run", "--rm", image, "true", check=False, timeout=300)
        raise Failed(f"a container does not start: {(r.stderr or r.stdout).strip()[-500:]}")
    conf = scratch / "containers.conf"
    conf.write_text(NESTED_CONF)
    eng.env["CONTAINERS_CONF"] = str(conf)
    r = eng("run", "--rm", image, "true", check=False, timeout=300)
    if r.returncode != 0:
        raise Failed("a container does not start, with the defaults nor with runc/cgroupfs/ulimits "
                     f"({conf}): {(r.stderr or r.stdout).strip()[-500:]}")
    say(f"nested container: podman uses runtime runc, cgroupfs, explicit ulimits (CONTAINERS_CONF={conf})")


# --- images --------------------------------------------------------------------------------------------------
def local_base(eng: Engine, scratch: Path) -> str:
    """The local Debian bookworm base (debootstrap, minbase + BASE_PACKAGES), built once and kept."""
    key = hashlib.sha256(("bookworm\n" + "\n".join(BASE_PACKAGES)).encode()).hexdigest()[:12]
    tag = f"localhost/burstbuffer-base:bookworm-{key}"
    if eng.has_image(tag):
        say(f"base image {tag} (kept from an earlier run)")
        return tag
    if eng.cli == "podman":
        _apt_install(["debootstrap"])
    elif shutil.which("debootstrap") is None:
        _apt_install(["debootstrap"])
    root = scratch / "rootfs"
    say(f"bootstrapping Debian bookworm (minbase + {', '.join(BASE_PACKAGES)}) from {DEBIAN_MIRROR}")
    t0 = time.monotonic()
    run(["debootstrap", "--variant=minbase", "--include=" + ",".join(BASE_PACKAGES), "bookworm", root,
         DEBIAN_MIRROR], timeout=2400)
    run(["chroot", root, "apt-get", "clean"], check=False)
    for junk in ("var/lib/apt/lists", "var/cache/apt/archives"):
        for p in (root / junk).glob("*"):
            if p.is_file():
                p.unlink()
    tar = subprocess.Popen(["tar", "--numeric-owner", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
    r = subprocess.run([eng.cli, "import", "--change", "CMD [\"/bin/bash\"]", "-", tag], stdin=tar.stdout,
                       env=eng.env, capture_output=True, text=True, timeout=1200)
    tar.stdout.close()
    tar.wait()
    if r.returncode != 0 or tar.returncode != 0:
        raise Failed(f"{eng.cli} import of the bootstrapped root failed: {r.stderr.strip()[-500:]}")
    shutil.rmtree(root, ignore_errors=True)
    say(f"base image {tag} made in {time.monotonic() - t0:.0f} s")
    return tag


def base_images(eng: Engine, scratch: Path) -> tuple[str, str]:
    """(scheduler base, Batsim base): the registry's images if they can be pulled, else the local base."""
    if os.environ.get("BASE_IMAGE"):
        return os.environ["BASE_IMAGE"], os.environ["BASE_IMAGE"]
    pulled = []
    for ref in (REGISTRY_SCHEDULER_BASE, REGISTRY_BATSIM_BASE):
        if eng.has_image(ref) or eng("pull", "-q", ref, check=False, quiet=True, timeout=120).returncode == 0:
            pulled.append(ref)
    if len(pulled) == 2:
        say("base images pulled from the registry")
        return pulled[0], pulled[1]
    say("the registry's base images cannot be pulled: a local Debian bookworm base")
    base = local_base(eng, scratch)
    return base, base


def wheelhouse() -> Path:
    """docker/wheelhouse/ filled with the wheels of constraints.txt (+ setuptools, wheel for the build), from
    a cache keyed by constraints.txt and setup.cfg."""
    key = hashlib.sha256((ROOT / "constraints.txt").read_bytes() + (ROOT / "setup.cfg").read_bytes()).hexdigest()[:12]
    cached = cache_root() / f"wheelhouse-{key}"
    if not (cached / ".complete").is_file():
        say(f"downloading the wheels of constraints.txt into {cached}")
        shutil.rmtree(cached, ignore_errors=True)
        cached.mkdir(parents=True)
        run([sys.executable, "-m", "pip", "download", "-q", "-c", ROOT / "constraints.txt",
             "-d", cached, "setuptools>=61", "wheel", *install_requires()], timeout=1800)
        (cached / ".complete").write_text("")
        for old in cached.parent.glob("wheelhouse-*"):      # those of former constraints: not needed any more
            if old != cached:
                shutil.rmtree(old, ignore_errors=True)
    dest = ROOT / "docker" / "wheelhouse"
    have = {p.name for p in dest.glob("*.whl")}
    want = {p.name for p in cached.glob("*.whl")}
    for name in have - want:
        (dest / name).unlink()
    for name in want - have:
        try:
            os.link(cached / name, dest / name)
        except OSError:
            shutil.copy2(cached / name, dest / name)
    return dest


def install_requires() -> list[str]:
    """The package's requirements (setup.cfg [options] install_requires)."""
    import configparser
    cp = configparser.ConfigParser()
    cp.read(ROOT / "setup.cfg")
    return [ln.strip() for ln in cp["options"]["install_requires"].splitlines() if ln.strip()]


def image_id(eng: Engine, ref: str) -> str | None:
    r = eng("image", "inspect", "--format", "{{.Id}}", ref, check=False, quiet=True)
    return r.stdout.strip() or None if r.returncode == 0 else None


def replaced(eng: Engine, ref: str, before: str | None) -> None:
    """Remove the image `ref` named before a rebuild (now untagged), if the rebuild made another one."""
    if before is not None and image_id(eng, ref) not in (None, before):
        eng("rmi", before, check=False, quiet=True)


def build_images(eng: Engine, sched_base: str, batsim_base: str, batsim_bin: Path, scratch: Path) -> None:
    wheelhouse()
    say(f"building {SCHEDULER_IMAGE} (docker/Dockerfile, FROM {sched_base}, wheels from docker/wheelhouse/)")
    t0 = time.monotonic()
    before = image_id(eng, SCHEDULER_IMAGE)
    eng("build", "-q", "-f", ROOT / "docker" / "Dockerfile", "--build-arg", f"BASE_IMAGE={sched_base}",
        "--build-arg", "PIP_WHEELHOUSE=1", "-t", SCHEDULER_IMAGE, ROOT, timeout=1800)
    replaced(eng, SCHEDULER_IMAGE, before)
    say(f"  done in {time.monotonic() - t0:.0f} s")
    ctx = scratch / "batsim-context"
    ctx.mkdir()
    shutil.copy2(batsim_bin, ctx / "batsim")
    shutil.copy2(ROOT / "docker" / "Dockerfile.batsim", ctx / "Dockerfile")
    say(f"building {BATSIM_IMAGE} (docker/Dockerfile.batsim, FROM {batsim_base}, binary {batsim_bin})")
    t0 = time.monotonic()
    before = image_id(eng, BATSIM_IMAGE)
    eng("build", "-q", "-f", ctx / "Dockerfile", "--build-arg", f"BASE_IMAGE={batsim_base}", "-t", BATSIM_IMAGE,
        ctx, timeout=1800)
    replaced(eng, BATSIM_IMAGE, before)
    say(f"  done in {time.monotonic() - t0:.0f} s")


# --- the run -------------------------------------------------------------------------------------------------
def burstbuffer_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "burstbuffer"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "burstbuffer"]


def compose_run(eng: Engine, env: dict[str, str]) -> None:
    """compose up (foreground, until both containers end), then down whatever happened."""
    args = [*eng.compose, "-p", PROJECT, "-f", str(ROOT / "docker" / "compose.yaml")]
    full = dict(eng.env, **env)
    try:
        say(f"{' '.join(args[:1])} up: the scheduler ({env['POLICY']}, {env['MODEL']}) and Batsim 4.2.1")
        t0 = time.monotonic()
        r = run([*args, "up", "--no-build"], env=full, check=False, timeout=1800)
        say(f"  both containers ended after {time.monotonic() - t0:.0f} s")
        codes = exit_codes(eng)
        if r.returncode != 0 or any(c != 0 for c in codes.values()):
            tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-30:])
            raise Failed(f"compose up: exit {r.returncode}, containers {codes}:\n{tail}")
    finally:
        run([*args, "down"], env=full, check=False, timeout=600)
        left = eng("ps", "-a", "--filter", f"label=com.docker.compose.project={PROJECT}", "-q", check=False,
                   quiet=True).stdout.split()
        left += eng("ps", "-a", "--filter", f"label=io.podman.compose.project={PROJECT}", "-q", check=False,
                    quiet=True).stdout.split() if eng.cli == "podman" else []
        if left:
            eng("rm", "-f", *set(left), check=False)
        # podman-compose 1.0.3's down leaves the project's network: remove it (and only it)
        nets = set()
        for label in ("com.docker.compose.project", "io.podman.compose.project"):
            nets.update(eng("network", "ls", "--filter", f"label={label}={PROJECT}", "-q", check=False,
                            quiet=True).stdout.split())
        if nets:
            eng("network", "rm", *nets, check=False)


def exit_codes(eng: Engine) -> dict[str, int]:
    out = {}
    for label in ("com.docker.compose.project", "io.podman.compose.project"):
        r = eng("ps", "-a", "--filter", f"label={label}={PROJECT}", "--format", "{{.Names}} {{.ExitCode}}",
                check=False, quiet=True)
        for line in r.stdout.splitlines():
            name, _, code = line.rpartition(" ")
            if name and code.lstrip("-").isdigit():
                out[name] = int(code)
    return out


def batsim_binary() -> Path:
    b = Path(os.environ.get("BATSIM_BIN") or Path.home() / ".cache" / "batsim-4.2.1" / "build" / "batsim")
    if not b.is_file() or not os.access(b, os.X_OK):
        raise Skipped(f"no Batsim 4.2.1 binary at {b} (build it with ../shared/batsim-4.2.1/build/build-batsim.sh "
                      "or set BATSIM_BIN)")
    r = run([b, "--version"], check=False, quiet=True)
    if r.returncode != 0 or r.stdout.strip() != "4.2.1":
        raise Skipped(f"{b} does not run as Batsim 4.2.1 (--version: {(r.stdout + r.stderr).strip()[:80]!r})")
    return b


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policy", default=os.environ.get("POLICY", "fcfs-bb"))
    ap.add_argument("--model", default=os.environ.get("MODEL", "alloc-only"))
    ap.add_argument("--seed", default=os.environ.get("SEED", "0"))
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (outputs, logs)")
    args = ap.parse_args(argv)
    t_start = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="docker-check-"))
    try:
        batsim_bin = batsim_binary()
        eng = find_engine()
        say(f"engine: {eng.cli} ({' '.join(eng.compose)}); Batsim: {batsim_bin}")
        sched_base, batsim_base = base_images(eng, scratch)
        ensure_runnable(eng, sched_base, scratch)
        build_images(eng, sched_base, batsim_base, batsim_bin, scratch)

        platforms, out = scratch / "platforms", scratch / "out"
        platforms.mkdir()
        out.mkdir()
        shutil.copy2(ROOT / "platforms" / "dragonfly96.xml", platforms / "dragonfly96.xml")
        say("the platform plugin: burstbuffer platform dragonfly --groups 3 --chassis 4 --routers 3 "
            "--nodes-per-router 3 --output dragonfly96.so")
        run([*burstbuffer_cmd(), "platform", "dragonfly", "--groups", "3", "--chassis", "4", "--routers", "3",
             "--nodes-per-router", "3", "--output", platforms / "dragonfly96.so"], timeout=600)
        env = {"POLICY": args.policy, "MODEL": args.model, "SEED": str(args.seed),
               "BATSIM_REPOSITORY": BATSIM_IMAGE.rsplit(":", 1)[0], "BATSIM_VERSION": BATSIM_IMAGE.rsplit(":", 1)[1],
               "SCHEDULER_IMAGE": SCHEDULER_IMAGE,
               "PLATFORMS_DIR": str(platforms), "PLATFORM_FILE": "dragonfly96.so",
               "WORKLOADS_DIR": str(ROOT / "workloads"), "WORKLOAD_FILE": "kth-1000.json",
               "OUTPUT_DIR": str(out), "HOST_UID": str(os.getuid()), "HOST_GID": str(os.getgid())}
        compose_run(eng, env)
        got = out / args.policy / "jobs.csv"
        if not got.is_file():
            raise Failed(f"the scheduler container wrote no {got}")

        say(f"burstbuffer run --policy {args.policy} --model {args.model} --seed {args.seed} (embedded simulator, "
            "platforms/dragonfly96.xml)")
        ref = scratch / "run"
        run([*burstbuffer_cmd(), "run", "--policy", args.policy, "--model", args.model, "--seed", args.seed,
             "--output", ref, "-q"], timeout=1800)
        n, diffs = compare_jobs_csv(got, ref / "jobs.csv")
        say(f"total {time.monotonic() - t_start:.0f} s")
        if diffs:
            print(f"jobs.csv differs ({n} jobs; container {got} vs burstbuffer run {ref / 'jobs.csv'}):")
            for d in diffs:
                print("  " + d)
            args.keep = True
            return 1
        print(f"jobs.csv identical ({n} jobs)")
        return 0
    except Skipped as exc:
        print(f"docker-check: SKIPPED: {exc}")
        return 0
    except Failed as exc:
        print(f"docker-check: FAILED: {exc}")
        args.keep = True
        return 1
    finally:
        if args.keep:
            say(f"outputs and logs kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
