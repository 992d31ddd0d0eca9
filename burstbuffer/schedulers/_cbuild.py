"""Building the project's small C engines (plan-α's, the BBSched GA's) on first use: the C source
(``burstbuffer/schedulers/native/*.c``, read by `c_source`) compiled
with the system's ``cc`` (or ``$CC``) into a shared library cached under ``$BURSTBUFFER_CACHE_DIR``,
``$XDG_CACHE_HOME/burstbuffer`` or ``~/.cache/burstbuffer``, keyed by the source, the compiler, the flags
and the machine, then loaded with ctypes. ``BURSTBUFFER_NATIVE=0`` disables every engine (each keeps a
pure-Python path giving identical results)."""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform as _platform
import shutil
import subprocess
import tempfile
from pathlib import Path

#: the compiler flags of every engine (no fused multiply-add: the same results as the Python paths)
CFLAGS = ("-O2", "-std=c99", "-ffp-contract=off", "-shared", "-fPIC")


def c_source(name: str) -> str:
    """The text of the C source `name` shipped in ``burstbuffer/schedulers/native/`` (package data)."""
    from importlib.resources import files
    return files("burstbuffer.schedulers").joinpath("native", name).read_text()


class NativeUnavailable(Exception):
    """The engine cannot be built or is disabled; ``str(exc)`` says why in one line."""


def cache_dir() -> Path:
    for cand in (os.environ.get("BURSTBUFFER_CACHE_DIR"),
                 os.path.join(os.environ["XDG_CACHE_HOME"], "burstbuffer") if os.environ.get("XDG_CACHE_HOME") else None,
                 os.path.join(os.path.expanduser("~"), ".cache", "burstbuffer"),
                 os.path.join(tempfile.gettempdir(), f"burstbuffer-{os.getuid() if hasattr(os, 'getuid') else 0}")):
        if not cand:
            continue
        try:
            os.makedirs(cand, exist_ok=True)
            if os.access(cand, os.W_OK):
                return Path(cand)
        except OSError:
            continue
    raise OSError("no writable cache directory")


def build(source: str, stem: str, libs: tuple[str, ...] = ()) -> ctypes.CDLL:
    """The library compiled from C `source` (cached as ``STEM_<tag>.so``; `libs`: linker arguments after the
    source, e.g. ``("-lm",)``), loaded. Raises NativeUnavailable when disabled by ``BURSTBUFFER_NATIVE``,
    without a compiler or when compilation fails; OSError / SubprocessError from the file system or
    the compiler run propagate."""
    if os.environ.get("BURSTBUFFER_NATIVE", "1").strip().lower() in ("0", "no", "false", "off"):
        raise NativeUnavailable("disabled by BURSTBUFFER_NATIVE")
    cc = os.environ.get("CC", "cc")
    tag = hashlib.sha256("\0".join([source, cc, *CFLAGS, _platform.machine()]).encode()).hexdigest()[:16]
    d = cache_dir()
    so = d / f"{stem}_{tag}.so"
    if not so.exists():
        if shutil.which(cc) is None:
            raise NativeUnavailable(f"no C compiler ({cc!r} not found)")
        fd, src = tempfile.mkstemp(suffix=".c", dir=d)
        with os.fdopen(fd, "w") as f:
            f.write(source)
        tmp = src[:-2] + ".so"
        try:
            r = subprocess.run([cc, *CFLAGS, "-o", tmp, src, *libs], capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                raise NativeUnavailable(f"compilation failed: {r.stderr.strip().splitlines()[-1:] or r.returncode}")
            os.replace(tmp, so)
        finally:
            for x in (src, tmp):
                try:
                    os.unlink(x)
                except OSError:
                    pass
    return ctypes.CDLL(str(so))
