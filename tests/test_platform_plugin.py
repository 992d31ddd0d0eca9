"""Which platform form `burstbuffer serve` prints for a Batsim (docs/platform.md §5): the Dragonfly XML for a
Batsim on SimGrid <= 3.27, its C++ plugin (compiled on demand) for SimGrid >= 3.28, decided by asking the
binary `batsim --simgrid-version`. Fake Batsim binaries stand for the versions."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from burstbuffer.platforms.sg_cpp import batsim_simgrid_version, params_from_xml
from burstbuffer.serve import platform_for_batsim

from .sim_sched import REPO

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

XML = str(REPO / "platforms" / "dragonfly96.xml")


def _fake_batsim(tmp_path: Path, version: str) -> str:
    p = tmp_path / f"batsim-{version}"
    p.write_text(f"#!/bin/sh\n[ \"$1\" = --simgrid-version ] && echo {version} && exit 0\nexit 1\n")
    p.chmod(0o755)
    return str(p)


def test_params_read_back_from_the_generated_xml():
    p = params_from_xml(XML)
    assert (p.groups, p.chassis, p.routers, p.nodes_per_router, p.bb_nodes_per_chassis) == (3, 4, 3, 3, 1)
    assert p.bb_capacity == 40 * 10**9 and p.pfs_bandwidth == 5e9
    assert params_from_xml(REPO / "tests" / "data" / "cluster96.xml") is None   # not a Dragonfly


def test_old_simgrid_gets_the_xml(tmp_path):
    b = _fake_batsim(tmp_path, "3.25.0")
    assert batsim_simgrid_version(b) == (3, 25, 0)
    arg, note = platform_for_batsim(XML, b)
    assert arg == XML and "SimGrid 3.25.0 loads" in note


def test_unknown_batsim_gets_the_xml_and_a_note(tmp_path):
    arg, note = platform_for_batsim(XML, str(tmp_path / "no-such-batsim"))
    assert arg == XML and "--batsim PATH or --simgrid-plugin" in note


@pytest.mark.skipif(not (shutil.which("g++") and Path("/usr/include/simgrid/s4u.hpp").exists()),
                    reason="no g++ or SimGrid headers to compile the plugin")
def test_new_simgrid_gets_the_plugin(tmp_path):
    b = _fake_batsim(tmp_path, "3.32.0")
    arg, note = platform_for_batsim(XML, b)
    assert arg.endswith(".so") and Path(arg).is_file() and "compiled for" in note
    assert platform_for_batsim(XML, None, force_plugin=True)[0] == arg      # cached: the same file
    other = str(REPO / "tests" / "data" / "cluster96.xml")                 # not a Dragonfly: unchanged
    assert platform_for_batsim(other, b)[0] == other
