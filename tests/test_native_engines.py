"""The policies' C engines are extension modules built when the package is installed (`burstbuffer.cbuild`,
setup.py; docs/installation.md): each is an importable module in the package's ``native/`` folder, compiled with the
engines' flags, and the one the policies load; a missing one (a broken install) is a one-line error naming the fix,
never a fallback. (Their results against their Python oracles: tests/test_placement_mirror.py, test_plan.py,
test_staged_plan.py, test_ga_native.py.)"""
from __future__ import annotations

import importlib
import importlib.util
import re
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from .conftest import hiding_plan_engine

from burstbuffer import cbuild
from burstbuffer.errors import InputError
from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers import _ga_native, _plan_native, moo
from burstbuffer.schedulers.plan_engine import make_engine
from burstbuffer.schedulers.profile import AvailabilityProfile

NATIVE_DIR = Path(importlib.util.find_spec("burstbuffer.schedulers").origin).parent / "native"


@pytest.fixture
def unsanitized(monkeypatch):
    monkeypatch.delenv(cbuild.SANITIZE_ENV, raising=False)


@pytest.mark.parametrize("name", list(cbuild.ENGINES))
def test_each_engine_is_an_installed_extension_module(name, unsanitized):
    """The engine's file is the extension module beside its source (this interpreter's suffix), importable, and
    the file `NativeLibrary` loads."""
    path = cbuild.engine_path(name)
    assert path.parent == NATIVE_DIR and path.name == name + sysconfig.get_config_var("EXT_SUFFIX")
    assert (NATIVE_DIR / f"{name}.c").is_file()
    module = importlib.import_module(f"burstbuffer.schedulers.native.{name}")
    assert Path(module.__file__) == path
    lib = cbuild.NativeLibrary(name).get()
    assert Path(lib._name) == path


@pytest.mark.parametrize("name", list(cbuild.ENGINES))
def test_each_engine_is_built_with_the_engine_flags(name, unsanitized):
    """The compiler's record in the module's debug information (GCC's DW_AT_producer) has the engines' flags
    (`cbuild.ENGINE_CFLAGS`: -std=c99, no fused multiply-add) and -O2 as the last optimisation level."""
    data = cbuild.engine_path(name).read_bytes()
    producers = [m.decode() for m in re.findall(rb"GNU C[0-9]* [0-9.]+ [^\x00]*", data)]
    if not producers:
        pytest.skip("the module carries no compiler record (built without -g or stripped)")
    for p in producers:
        flags = p.split()
        assert "-std=c99" in flags and "-ffp-contract=off" in flags, p
        assert [f for f in flags if re.fullmatch(r"-O[0-9sgz]?", f)][-1] == "-O2", p


def _hide(monkeypatch, name: str) -> None:
    """As if the engine `name`'s extension module were not installed."""
    real = importlib.util.find_spec
    module = f"burstbuffer.schedulers.native.{name}"
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == module else real(n, *a))


@pytest.mark.parametrize("name", list(cbuild.ENGINES))
def test_a_missing_engine_is_one_line_naming_the_fix(name, unsanitized, monkeypatch):
    _hide(monkeypatch, name)
    with pytest.raises(InputError) as err:
        cbuild.NativeLibrary(name).get()
    text = str(err.value)
    assert "\n" not in text and f"burstbuffer.schedulers.native.{name}" in text and "reinstall" in text, text


def test_no_fallback_when_an_engine_is_missing(unsanitized, monkeypatch):
    """plan-α's engine and the GA, their extension missing: the error, not another implementation."""
    for name, glue in (("plan_engine", _plan_native), ("ga", _ga_native)):
        _hide(monkeypatch, name)
        monkeypatch.setattr(glue.LIBRARY, "lib", None)
    with pytest.raises(InputError, match="reinstall"):
        make_engine(AvailabilityProfile(Platform.simple(2, [10**9])), [], 0.0, 2.0)
    with pytest.raises(InputError, match="reinstall"):
        moo.ga_front([1, 2], [0, 0], 2, 0, np.random.default_rng(0))


def test_an_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="unknown engine"):
        cbuild.NativeLibrary("nope")


@pytest.mark.slow                                   # a subprocess (docs/testing.md, the tiers)
def test_run_with_a_missing_engine_is_one_line_exit_2(tmp_path):
    """`burstbuffer run --policy plan-2` on an installation whose plan engine is missing (its module hidden from
    the run's processes by a sitecustomize): one line naming the module and the fix, exit 2."""
    import os
    import subprocess
    import sys
    hide = hiding_plan_engine(tmp_path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(x for x in (str(hide), os.environ.get("PYTHONPATH")) if x))
    env.pop(cbuild.SANITIZE_ENV, None)
    r = subprocess.run([sys.executable, "-m", "burstbuffer", "run", "--policy", "plan-2", "--jobs", "10", "-q",
                        "--output", str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=600)
    err = r.stderr.strip()
    assert r.returncode == 2 and len(err.splitlines()) == 1, (r.returncode, err)
    assert "burstbuffer.schedulers.native.plan_engine" in err and "reinstall" in err, err


def test_a_failed_sanitized_build_is_one_line(monkeypatch):
    """Under ``$BURSTBUFFER_SANITIZE`` the engine is compiled from its source: an unknown sanitizer (or a failed
    build) is one line naming the engine and the variable."""
    monkeypatch.setenv(cbuild.SANITIZE_ENV, "thread")
    with pytest.raises(InputError, match=r"burstbuffer\.schedulers\.native\.ga: BURSTBUFFER_SANITIZE: .*unknown"):
        cbuild.NativeLibrary("ga").get()
