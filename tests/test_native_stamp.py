"""The compiled modules' stamp (`cbuild.compile_file_cached`, docs/startup.md): a start whose
source did not change takes the cached library from the stamp, without reading or hashing the source;
a changed source, compiler, flag or a missing library goes through `compile_cached` again.

`compile_cached` is replaced by a recorder that writes an empty "library" named after the source's text,
so no compiler runs here (the real build: tests/test_native_rebuild.py)."""
from __future__ import annotations

import builtins
import os

import pytest

from burstbuffer import cbuild as _cbuild


@pytest.fixture
def recorder(tmp_path, monkeypatch):
    """(cache dir, calls): each call of the fake compile_cached is recorded as (source text, flags, key)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("BURSTBUFFER_CACHE_DIR", str(cache))
    monkeypatch.delenv("BURSTBUFFER_NATIVE", raising=False)
    calls = []

    def fake(source, stem, *, compiler, flags, key=(), suffix=".so", **kw):
        calls.append((source, flags, key))
        name = f"{stem}_{abs(hash((source, compiler, flags, key))) % 10**8:08d}"
        so = _cbuild.cache_dir() / f"{name}{suffix}"
        so.write_bytes(b"")
        return so, name

    monkeypatch.setattr(_cbuild, "compile_cached", fake)
    return cache, calls


def _src(tmp_path, text: str, mtime_ns: int):
    p = tmp_path / "mod.cpp"
    p.write_text(text)
    os.utime(p, ns=(mtime_ns, mtime_ns))
    return str(p)


def _load(path, flags=("-O2",), key=lambda: ("-Iinc",)):
    return _cbuild.compile_file_cached(path, "_bb_test", compiler="c++", flags=flags, key=key, suffix=".so")


def test_an_unchanged_source_is_taken_from_the_stamp(tmp_path, recorder, monkeypatch):
    _, calls = recorder
    src = _src(tmp_path, "int f() { return 1; }\n", 1_000_000_000)
    first = _load(src)
    assert calls == [("int f() { return 1; }\n", ("-O2",), ("-Iinc",))]

    def no_key():
        raise AssertionError("the key is computed for a build only")

    opened = []
    real_open = builtins.open
    monkeypatch.setattr(builtins, "open", lambda f, *a, **kw: opened.append(str(f)) or real_open(f, *a, **kw))
    assert _load(src, key=no_key) == first
    monkeypatch.setattr(builtins, "open", real_open)
    assert src not in opened and any(f.endswith(".stamp") for f in opened)   # the source is not even read
    assert len(calls) == 1


def test_a_changed_source_is_rebuilt(tmp_path, recorder):
    _, calls = recorder
    src = _src(tmp_path, "int f() { return 1; }\n", 1_000_000_000)
    first = _load(src)
    # same size, another text and time: a new library; then the stamp answers for it
    src = _src(tmp_path, "int f() { return 2; }\n", 2_000_000_000)
    second = _load(src)
    assert [c[0] for c in calls] == ["int f() { return 1; }\n", "int f() { return 2; }\n"]
    assert second != first and second[0].exists()
    assert _load(src) == second and len(calls) == 2
    # the same text, touched: compile_cached is asked again (and finds the same library)
    src = _src(tmp_path, "int f() { return 2; }\n", 3_000_000_000)
    assert _load(src) == second and len(calls) == 3


def test_other_flags_a_missing_library_or_a_missing_stamp_rebuild(tmp_path, recorder):
    cache, calls = recorder
    src = _src(tmp_path, "int f() { return 1; }\n", 1_000_000_000)
    so, _ = _load(src)
    _load(src, flags=("-O3",))
    assert len(calls) == 2
    _load(src)              # the stamp now records -O3: -O2 goes through compile_cached again
    assert len(calls) == 3
    so.unlink()
    _load(src)
    assert len(calls) == 4 and so.exists()
    for stamp in cache.glob("*.stamp"):
        stamp.write_text("garbage")
    _load(src)
    assert len(calls) == 5
    assert _load(src) and len(calls) == 5


def test_disabled_engines_are_refused_even_with_a_stamp(tmp_path, recorder, monkeypatch):
    src = _src(tmp_path, "int f() { return 1; }\n", 1_000_000_000)
    _load(src)
    monkeypatch.setenv("BURSTBUFFER_NATIVE", "0")
    with pytest.raises(_cbuild.NativeUnavailable, match="BURSTBUFFER_NATIVE"):
        _load(src)


def test_a_missing_source_is_an_oserror(tmp_path, recorder):
    with pytest.raises(OSError):
        _load(str(tmp_path / "nothing.cpp"))


def test_the_simulators_modules_are_loaded_through_the_stamp(monkeypatch):
    """The bridge and the energy module name their sources in the package (package data)."""
    from burstbuffer.simulator import _bridge

    seen = []

    def fake(path, stem, **kw):
        seen.append((os.path.basename(path), stem, os.path.isfile(path)))
        raise _cbuild.NativeUnavailable("recorded")

    monkeypatch.setattr(_bridge, "compile_file_cached", fake)
    from burstbuffer.simulator import energy
    for load in (_bridge.load, energy.load_native):
        with pytest.raises(_cbuild.NativeUnavailable):
            load()
    assert seen == [("simbridge.cpp", "_bb_simbridge", True), ("simenergy.cpp", "_bb_simenergy", True)]
