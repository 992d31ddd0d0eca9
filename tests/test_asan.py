"""The compiled modules under AddressSanitizer (``make test-asan``; docs/testing.md, "AddressSanitizer").

Each test starts ``burstbuffer`` in a child process with ``BURSTBUFFER_SANITIZE=address`` (`burstbuffer.cbuild`:
every compiled module built with ``-fsanitize=address`` into a cache folder of its own) and the sanitizer's runtime
preloaded (``LD_PRELOAD``: libasan first, then libstdc++, whose exceptions SimGrid throws and whose ``__cxa_throw``
ASan must find when the interpreter itself does not link it; leaks not reported: the interpreter keeps its objects
at exit). What runs under it: the simulator's C++ bridge in ``run``'s in-simulator link, the energy module
(``run -E``), the ZeroMQ link's module (loaded), and the policies' C engines (plan-α's: plan-2; BBSched's GA:
bbsched; built at install time, compiled here from their sources with the sanitizer) on Batsim 4.2.1's platforms
and the paper's. A run passes when it exits 0 with no
AddressSanitizer report, and writes the same jobs.csv as without the sanitizer.

Skips when the compiler has no AddressSanitizer runtime (``cc -print-file-name=libasan.so`` names no file) or the
compiled modules cannot be built.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.asan, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
BATSIM = ROOT / "tests" / "data" / "batsim-4.2.1"
KTH = ROOT / "workloads" / "kth-1000.json"


def _runtime(compiler: str, name: str) -> str | None:
    """The path of the runtime library `name` of `compiler` (``-print-file-name``), None when it has none."""
    if shutil.which(compiler) is None:
        return None
    out = subprocess.run([compiler, f"-print-file-name={name}"], capture_output=True, text=True).stdout.strip()
    return out if os.path.isabs(out) and os.path.exists(out) else None


def asan_env() -> dict[str, str]:
    """The environment of a child under AddressSanitizer (module docstring)."""
    cc = os.environ.get("CC", "cc")
    asan, cxx = _runtime(cc, "libasan.so"), _runtime(cc, "libstdc++.so")
    if asan is None or cxx is None:
        pytest.skip(f"{cc} has no AddressSanitizer runtime (libasan.so) or no libstdc++.so")
    return dict(os.environ, BURSTBUFFER_SANITIZE="address", LD_PRELOAD=f"{asan} {cxx}",
                ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:detect_stack_use_after_return=0")


def no_report(*texts: str) -> None:
    """No AddressSanitizer error in `texts` (its warnings about the stacks SimGrid switches to are not errors)."""
    for t in texts:
        assert "ERROR: AddressSanitizer" not in t and "AddressSanitizer: CHECK failed" not in t, t[-3000:]


LOAD_ALL = r"""
import sys
from burstbuffer import cbuild
from burstbuffer.simulator import _bridge, energy, transport
from burstbuffer.schedulers import _ga_native, _plan_native
out = [_bridge.load().__file__, energy.load_native().__file__, transport.load_native().__file__]
for m in (_plan_native, _ga_native):
    out.append(m.LIBRARY.get()._name)
print(cbuild.build_dir())
print("\n".join(out))
"""


@pytest.fixture(scope="module")
def env():
    """The sanitized environment, once every compiled module is built and loads under it (the build, minutes
    the first time, is cached)."""
    e = asan_env()
    p = subprocess.run([sys.executable, "-c", LOAD_ALL], capture_output=True, text=True, env=e, timeout=3600)
    no_report(p.stdout, p.stderr)
    if p.returncode != 0:
        pytest.skip(f"the compiled modules cannot be built or loaded under AddressSanitizer: {p.stderr[-500:]}")
    return e


def test_every_module_is_the_sanitized_build(env):
    """Five modules, each from the sanitized cache folder and compiled with the sanitizer (its symbols in it)."""
    p = subprocess.run([sys.executable, "-c", LOAD_ALL], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    folder, *files = p.stdout.split("\n")[:6]
    assert Path(folder).name == "sanitize-address" and len(files) == 5
    for f in files:
        assert Path(f).parent == Path(folder), f
        assert b"__asan_" in Path(f).read_bytes(), f


CASES = {
    # the corruption's case: Batsim's platform asking 16 KiB stacks, the in-simulator link, the bridge
    "energy128notopo-fcfs": ("alloc-only", "fcfs", BATSIM / "platforms" / "energy_platform_homogeneous_no_net_128.xml",
                             "host127", KTH, ("--jobs", "50")),
    # every profile type the bridge runs as a program (parallel, composed, delay) on Batsim's cluster
    "cluster512-mixed-fcfs-easy": ("alloc-only", "fcfs-easy", BATSIM / "platforms" / "cluster512.xml", "a511",
                                   BATSIM / "workloads" / "test_various_profile_types.json", ()),
    # the paper's platform and job model, the policies' C engines (and EASY, in Python)
    "paper-fcfs-easy": ("io-aware", "fcfs-easy", None, None, KTH, ("--jobs", "60")),
    "paper-plan-2": ("io-aware", "plan-2", None, None, KTH, ("--jobs", "30")),
    "paper-bbsched": ("alloc-only", "bbsched", None, None, KTH, ("--jobs", "60", "--generations", "50")),
    # the energy module: Batsim's energy platform with -E (the actor core, Python actors on the raised stacks)
    "energy128notopo-E": ("alloc-only", "filler", BATSIM / "platforms" / "energy_platform_homogeneous_no_net_128.xml",
                          "host127", BATSIM / "workloads" / "test_energy_minimal_load50.json", ("-E",)),
}


def run_cli(out: Path, case: str, env: dict | None) -> subprocess.CompletedProcess:
    model, policy, platform, storage, workload, more = CASES[case]
    args = [sys.executable, "-m", "burstbuffer", "run", "--model", model, "--policy", policy, "--workload",
            str(workload), "--output", str(out), "-q", *more]
    if platform is not None:
        args += ["--platform", str(platform), "--storage", storage, "--bb-capacity", "40GB"]
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=1800)


@pytest.mark.parametrize("case", list(CASES))
def test_run_under_asan(tmp_path, env, case):
    """``run`` (the in-simulator link) with every compiled module sanitized: exit 0, no report, and the jobs.csv of
    the same run without the sanitizer."""
    p = run_cli(tmp_path / "asan", case, env)
    log = (tmp_path / "asan" / "simulator.log").read_text(errors="replace")
    no_report(p.stderr, log)
    assert p.returncode == 0, p.stderr[-2000:] + log[-2000:]
    plain = run_cli(tmp_path / "plain", case, None)
    assert plain.returncode == 0, plain.stderr[-2000:]
    assert (tmp_path / "asan" / "jobs.csv").read_bytes() == (tmp_path / "plain" / "jobs.csv").read_bytes()
