"""A compiled module is rebuilt when its source changes (`cbuild.compile_file_cached`, the
loader of the simulator's bridge and energy module, docs/startup.md): a one-function C library compiled
with the system's ``cc``, loaded with ctypes, edited, loaded again. Skips without a C compiler."""
from __future__ import annotations

import ctypes
import os
import shutil

import pytest

from burstbuffer import cbuild as _cbuild

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md): C compilation


def test_an_edited_source_is_compiled_again(tmp_path, monkeypatch):
    compiler = os.environ.get("CC", "cc")
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler!r})")
    monkeypatch.setenv("BURSTBUFFER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("BURSTBUFFER_NATIVE", raising=False)
    src = tmp_path / "answer.c"

    def answer(text: str, mtime_ns: int) -> int:
        src.write_text(text)
        os.utime(src, ns=(mtime_ns, mtime_ns))
        so, _ = _cbuild.compile_file_cached(str(src), "_bb_answer", compiler=compiler, flags=_cbuild.CFLAGS)
        return ctypes.CDLL(str(so)).answer()

    assert answer("int answer(void) { return 1; }\n", 1_000_000_000) == 1
    assert answer("int answer(void) { return 1; }\n", 1_000_000_000) == 1
    assert answer("int answer(void) { return 2; }\n", 2_000_000_000) == 2
    assert len(list((tmp_path / "cache").glob("_bb_answer_*.so"))) == 2


def test_a_sanitized_build_is_cached_apart(tmp_path, monkeypatch):
    """BURSTBUFFER_SANITIZE=undefined: the library is compiled with the sanitizer (its runtime's symbols in it,
    loadable without preloading anything) into the cache's ``sanitize-undefined`` folder, beside the ordinary
    build, which it neither replaces nor takes; an unknown sanitizer is refused in one line."""
    compiler = os.environ.get("CC", "cc")
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler!r})")
    cache = tmp_path / "cache"
    monkeypatch.setenv("BURSTBUFFER_CACHE_DIR", str(cache))
    monkeypatch.delenv("BURSTBUFFER_NATIVE", raising=False)
    src = tmp_path / "answer.c"
    src.write_text("int answer(int x) { return x + 1; }\n")

    def build():
        so, _ = _cbuild.compile_file_cached(str(src), "_bb_answer", compiler=compiler, flags=_cbuild.CFLAGS)
        return so

    monkeypatch.delenv(_cbuild.SANITIZE_ENV, raising=False)
    plain = build()
    monkeypatch.setenv(_cbuild.SANITIZE_ENV, "undefined")
    assert _cbuild.sanitize_flags()[:2] == ("-fsanitize=undefined", "-fno-sanitize-recover=undefined")
    sanitized = build()
    assert plain.parent == cache and sanitized.parent == cache / "sanitize-undefined"
    assert b"__ubsan_" in sanitized.read_bytes() and b"__ubsan_" not in plain.read_bytes()
    assert ctypes.CDLL(str(sanitized)).answer(41) == 42
    monkeypatch.delenv(_cbuild.SANITIZE_ENV)
    assert build() == plain                              # the ordinary build, from its stamp
    monkeypatch.setenv(_cbuild.SANITIZE_ENV, "address,thread")
    with pytest.raises(_cbuild.NativeUnavailable, match="BURSTBUFFER_SANITIZE=thread: unknown sanitizer"):
        build()


def test_bridge_refuses_headers_of_another_simgrid(tmp_path, monkeypatch):
    """The simulator's compiled modules are built for the SimGrid Python module in use: against C++ headers of
    another version (here: the module claims 99.0) the build stops with one line saying so (the simulator then
    runs its actor core), instead of loading a second libsimgrid beside the module's (docs/installation.md)."""
    from burstbuffer.simulator import _bridge
    if shutil.which(os.environ.get("CXX", "c++")) is None or not os.path.exists("/usr/include/simgrid/version.h"):
        pytest.skip("no C++ compiler or no SimGrid headers")
    monkeypatch.setenv("BURSTBUFFER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("BURSTBUFFER_NATIVE", raising=False)
    assert _bridge.simgrid_module_flags()[0].startswith("-DBB_PY_SIMGRID_MAJOR=")   # read from the module
    monkeypatch.setattr(_bridge, "simgrid_module_flags",
                        lambda: ("-DBB_PY_SIMGRID_MAJOR=99", "-DBB_PY_SIMGRID_MINOR=0"))
    with pytest.raises(_cbuild.NativeUnavailable, match="not the version of SimGrid's Python module"):
        _bridge.load_extension("simbridge.cpp", "_bb_simbridge_test")
