"""The platforms package stands below the simulator: importing any of its modules loads no part of
`burstbuffer.simulator` (the simulator imports `burstbuffer.platforms`, never the reverse)."""
from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import burstbuffer.platforms


def test_platforms_import_no_simulator_module():
    names = [f"burstbuffer.platforms.{m.name}" for m in pkgutil.iter_modules(burstbuffer.platforms.__path__)]
    assert "burstbuffer.platforms.simgrid_xml" in names and "burstbuffer.platforms.units" in names
    code = ("import importlib, json, sys\n"
            f"for n in {names!r}: importlib.import_module(n)\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('burstbuffer.simulator'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []
