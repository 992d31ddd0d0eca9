"""The simulator core's compiled bridge to SimGrid's C++ API (issue 30): what SimGrid 3.32's Python API
lacks to run jobs without one Python actor each — waiting on the first of several Execs and Comms
(`Activity::wait_any_for`) and learning, without a simulation call, which activities ended and when
(`Activity::on_completion`).

The bridge keeps the running jobs' activities in the order they were started (Batsim's order: its job
actors do ``exec_init`` + ``start`` one after the other), and the completions in the order SimGrid reports
them. It is a ~150-line pybind11 extension against ``libsimgrid-dev``, compiled on first use with the system's
C++ compiler (``$CXX``, else ``c++``) and cached like the plan engine (`schedulers._cbuild.cache_dir`).

`load()` returns the module or raises `NativeUnavailable` (no compiler, no SimGrid or pybind11 headers,
disabled by ``BURSTBUFFER_NATIVE=0``). Which core runs: `burstbuffer.simulator.execution.core_of`.

Source: SimGrid 3.32 ``include/simgrid/s4u/Activity.hpp`` (``wait_any_for``, ``on_completion_cb``,
``get_finish_time``), ``Exec.hpp`` (``get_remaining_ratio``), ``Comm.hpp`` (``sendto_async``).
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sysconfig

from ..schedulers._cbuild import NativeUnavailable, compile_cached


def _source(name: str) -> str:
    """The text of the C++ source `name` shipped in ``burstbuffer/simulator/native/`` (package data)."""
    from importlib.resources import files
    return files("burstbuffer.simulator").joinpath("native", name).read_text()

#: compiler flags (no fused multiply-add: the bridge computes nothing, but keep the engines' rule)
CXXFLAGS = ("-O2", "-std=c++17", "-ffp-contract=off", "-shared", "-fPIC")

#: the bridge's C++ source (burstbuffer/simulator/native/simbridge.cpp, package data)
SOURCE = _source("simbridge.cpp")


def _includes() -> list[str]:
    flags = [f"-I{sysconfig.get_paths()['include']}"]
    try:
        import pybind11  # noqa: PLC0415  (pip's pybind11, when the Debian headers are absent)
        flags.append(f"-I{pybind11.get_include()}")
    except ImportError:
        pass
    return flags


def load():
    """The compiled bridge module (built on first use, cached by `_cbuild.compile_cached`). Raises
    NativeUnavailable when it cannot be built (one line: why)."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    inc = _includes()

    def first_error(stderr: str) -> str:
        return ([ln for ln in stderr.strip().splitlines() if "error" in ln][:1] or ["?"])[0]

    so, name = compile_cached(SOURCE, "_bb_simbridge", compiler=os.environ.get("CXX", "c++"), flags=CXXFLAGS,
                              key=(*inc, suffix), src_suffix=".cpp", suffix=suffix,
                              args=lambda name: (f"-DMODNAME={name}", *inc), libs=("-lsimgrid",), timeout=600,
                              error_line=first_error)
    spec = importlib.util.spec_from_file_location(name, so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
