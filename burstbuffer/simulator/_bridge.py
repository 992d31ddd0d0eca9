"""The simulator's compiled bridge (docs/simulator-core.md): the bridged core's actors, in C++. Python
SimGrid actors cannot share SimGrid's cheap raw contexts (a second one aborts there), C++ actors can: each
running job gets a C++ actor that makes the SimGrid calls of the actor core's Python job actor
(`execution.job_body`) — ``exec_init`` + ``wait_for(walltime)``; ``cancel`` on timeout; the server's
mailbox by name, then the 1-byte put into it — and records the end (key,
clock, return code) for the server to apply (`execution.absorb`); the master host's submitters,
request-reply sends, waiters and killers' reports are C++ actors too, twins of `masters`' Python ones.

A ~230-line pybind11 extension against ``libsimgrid-dev`` (``native/simbridge.cpp``), compiled on first use
with the system's C++ compiler (``$CXX``, else ``c++``) and cached like the plan engine
(`cbuild.compile_file_cached`; `load_extension` also builds the energy module, `energy`).

`load()` returns the module or raises `NativeUnavailable` (no compiler, no SimGrid or pybind11 headers,
disabled by ``BURSTBUFFER_NATIVE=0``). Which core runs: `burstbuffer.simulator.server.select_core`.

Source: SimGrid 3.32 ``include/simgrid/s4u/Actor.hpp`` (``Actor::create``, ``this_actor::exec_init``),
``Activity.hpp`` (``wait_for``, ``cancel``), ``Exec.hpp`` (``get_remaining_ratio``), ``Mailbox.hpp``
(``by_name``, ``put``); Batsim 4.2.1 ``src/jobs_execution.cpp``,
``job_submitter.cpp``, ``protocol.cpp``, ``ipp.cpp``.
"""
from __future__ import annotations

import functools
import os
import sys

from ..cbuild import NativeUnavailable, compile_file_cached

#: the C++ sources of the simulator's compiled modules (package data: burstbuffer/simulator/native/)
NATIVE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "native")

#: compiler flags (no fused multiply-add: the bridge computes nothing, but keep the engines' rule)
CXXFLAGS = ("-O2", "-std=c++17", "-ffp-contract=off", "-shared", "-fPIC")


@functools.lru_cache(maxsize=None)
def _includes() -> tuple[str, ...]:
    """The include flags of a build: Python's headers, and pip's pybind11 when installed (the Debian
    headers need none). Imported and computed only for a build (`load_extension`)."""
    import sysconfig  # noqa: PLC0415

    flags = [f"-I{sysconfig.get_paths()['include']}"]
    try:
        import pybind11  # noqa: PLC0415  (pip's pybind11, when the Debian headers are absent)
        flags.append(f"-I{pybind11.get_include()}")
    except ImportError:
        pass
    return tuple(flags)


def lazily_bound(load):
    """``load()``, the shared libraries it loads bound lazily (``RTLD_LAZY``, as the dynamic loader binds an
    executable's libraries) instead of with CPython's ``RTLD_NOW``: SimGrid's Python module and the
    compiled modules link libsimgrid and through it ns-3 and Boost, whose function symbols are then
    resolved at their first call, not all at load (about a sixth of the simulator's start-up: docs/startup.md).
    Libraries linked with ``BIND_NOW`` (libsimgrid itself) and data relocations are resolved at load either
    way. The interpreter's flags are restored afterwards."""
    if not hasattr(sys, "setdlopenflags"):
        return load()
    flags = sys.getdlopenflags()
    sys.setdlopenflags((flags & ~os.RTLD_NOW) | os.RTLD_LAZY)
    try:
        return load()
    finally:
        sys.setdlopenflags(flags)


def _first_error(stderr: str) -> str:
    return ([ln for ln in stderr.strip().splitlines() if "error" in ln][:1] or ["?"])[0]


def simgrid_module_flags() -> tuple[str, ...]:
    """``-DBB_PY_SIMGRID_MAJOR=M -DBB_PY_SIMGRID_MINOR=N``: the version of the SimGrid Python module this process
    uses (``simgrid.simgrid_version``; imported here if not yet: the simulator has imported it already). The
    compiled modules refuse to build against C++ headers of another version (``#error``; they would load a
    second libsimgrid beside the module's: e.g. Debian's 3.32 headers with PyPI's SimGrid 4.1), and a module
    built for another SimGrid is rebuilt (the flags are part of its cache stamp). () when the module or its
    version cannot be read."""
    try:
        import simgrid  # noqa: PLC0415
        major, minor = (int(x) for x in str(simgrid.simgrid_version).split(".")[:2])
    except (ImportError, AttributeError, ValueError):
        return ()
    return (f"-DBB_PY_SIMGRID_MAJOR={major}", f"-DBB_PY_SIMGRID_MINOR={minor}")


def load_extension(source: str, stem: str, libs: tuple[str, ...] = ("-lsimgrid",)):
    """The pybind11 module compiled from ``native/SOURCE`` (linked with `libs`; built on its first use,
    cached as ``STEM_<tag>`` by `cbuild.compile_file_cached`, which a start whose source did not change
    answers from a stamp, without reading the source), imported. Raises NativeUnavailable when it cannot
    be built (one line: why), OSError when the source is missing."""
    import importlib.machinery  # noqa: PLC0415
    import importlib.util  # noqa: PLC0415

    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    so, name = compile_file_cached(os.path.join(NATIVE_DIR, source), stem, compiler=os.environ.get("CXX", "c++"),
                                   flags=CXXFLAGS + simgrid_module_flags(), key=lambda: (*_includes(), suffix),
                                   src_suffix=".cpp",
                                   suffix=suffix, args=lambda name: (f"-DMODNAME={name}", *_includes()),
                                   libs=libs, timeout=600, error_line=_first_error)
    spec = importlib.util.spec_from_file_location(name, so)

    def exec_module():
        mod = importlib.util.module_from_spec(spec)   # dlopen here
        spec.loader.exec_module(mod)
        return mod

    return lazily_bound(exec_module)


def load():
    """The compiled bridge module (``native/simbridge.cpp``, `load_extension`). Raises NativeUnavailable
    when it cannot be built (one line: why)."""
    return load_extension("simbridge.cpp", "_bb_simbridge")
