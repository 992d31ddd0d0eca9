"""The project's compiled code: the policies' C engines (plan-α's plan engine, the BBSched GA's loop), built when the
package is installed, and the simulator's modules, built on first use.

*The policies' engines* (`ENGINES`: a package's ``native/*.c``) are Python extension modules
``burstbuffer.schedulers.native.NAME`` that ``setup.py`` builds at install time with `ENGINE_CFLAGS` (a platform
wheel carries them; ``pip install -e .``, as ``make setup`` runs it, builds them in place). `NativeLibrary` loads
one's file with ctypes; a missing one (a broken install) is an `InputError` naming the fix, reinstalling: each
engine is the package's one implementation of its algorithm, with no fallback.

*The simulator's modules* (C++, they need SimGrid's headers): the source compiled with the system's compiler
(`compile_file_cached`) into a shared library cached under ``$BURSTBUFFER_CACHE_DIR``,
``$XDG_CACHE_HOME/burstbuffer`` or ``~/.cache/burstbuffer``, keyed by the source, the compiler, the flags and the
machine. ``BURSTBUFFER_NATIVE=0`` disables them (the simulator then runs its actor core and pyzmq's link).

``BURSTBUFFER_SANITIZE=address`` (or ``undefined``, or both, comma-separated) builds every compiled module with that
GCC/Clang sanitizer instead, the policies' engines included (compiled from their sources at first use, the one
test-time path that compiles them), into a cache folder of its own (`build_dir`); a process loading them needs the
sanitizer's runtime first (docs/testing.md, "AddressSanitizer").

The simulator loads its compiled modules through `compile_file_cached` at every start: what only a build
needs (hashlib, subprocess, tempfile, shutil, ctypes) is imported by the functions that build, not here
(docs/startup.md)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

#: the compiler flags of the policies' C engines (no fused multiply-add: the same results as their oracles, the
#: Python twins under tests/oracles/, bit for bit); setup.py builds the extension modules with them
ENGINE_CFLAGS = ("-O2", "-std=c99", "-ffp-contract=off")
#: the flags of a shared library built from one C source (`compile_cached`): `ENGINE_CFLAGS` and the linker's
CFLAGS = (*ENGINE_CFLAGS, "-shared", "-fPIC")
#: the policies' C engines: the name of each (its source ``burstbuffer/schedulers/native/NAME.c``, its extension
#: module ``burstbuffer.schedulers.native.NAME``) and the libraries it links (``-lNAME``); setup.py builds them
ENGINES = {"plan_engine": ("m",), "ga": ()}
#: the package holding the engines' sources and extension modules (its ``native/`` folder)
ENGINE_PACKAGE = "burstbuffer.schedulers"


class NativeUnavailable(Exception):
    """The engine cannot be built or is disabled; ``str(exc)`` says why in one line."""


#: Environment variable naming the sanitizers every compiled module is built with (comma-separated `SANITIZERS`)
SANITIZE_ENV = "BURSTBUFFER_SANITIZE"
#: the sanitizers `SANITIZE_ENV` may name, and the compiler flags each adds (GCC's and Clang's -fsanitize=)
SANITIZERS = {
    "address": ("-fsanitize=address",),
    "undefined": ("-fsanitize=undefined", "-fno-sanitize-recover=undefined"),
}


def sanitizers() -> tuple[str, ...]:
    """The sanitizers ``$BURSTBUFFER_SANITIZE`` names, sorted (empty: none). Raises NativeUnavailable on a name
    not in `SANITIZERS`."""
    names = sorted({n.strip().lower() for n in os.environ.get(SANITIZE_ENV, "").split(",") if n.strip()})
    bad = [n for n in names if n not in SANITIZERS]
    if bad:
        raise NativeUnavailable(f"{SANITIZE_ENV}={bad[0]}: unknown sanitizer (choose from {', '.join(SANITIZERS)})")
    return tuple(names)


def sanitize_flags() -> tuple[str, ...]:
    """The compiler flags `sanitizers` add to every build: theirs, plus frame pointers and debug lines (their
    reports' stacks name our source lines). Empty without ``$BURSTBUFFER_SANITIZE``."""
    names = sanitizers()
    if not names:
        return ()
    return (*(f for n in names for f in SANITIZERS[n]), "-fno-omit-frame-pointer", "-g")


def build_dir() -> Path:
    """Where the compiled modules are cached: `cache_dir`, or its ``sanitize-NAMES`` subfolder when
    ``$BURSTBUFFER_SANITIZE`` names sanitizers (NAMES joined by ``+``), so that a sanitized build never
    replaces, nor is taken for, the ordinary one. Raises NativeUnavailable as `sanitizers`."""
    names = sanitizers()
    d = cache_dir()
    if names:
        d = d / f"sanitize-{'+'.join(names)}"
        d.mkdir(exist_ok=True)
    return d


def _cache_candidates():
    yield os.environ.get("BURSTBUFFER_CACHE_DIR")
    yield os.path.join(os.environ["XDG_CACHE_HOME"], "burstbuffer") if os.environ.get("XDG_CACHE_HOME") else None
    yield os.path.join(os.path.expanduser("~"), ".cache", "burstbuffer")
    import tempfile  # noqa: PLC0415  (the last resort only)
    yield os.path.join(tempfile.gettempdir(), f"burstbuffer-{os.getuid() if hasattr(os, 'getuid') else 0}")


def cache_dir() -> Path:
    for cand in _cache_candidates():
        if not cand:
            continue
        try:
            os.makedirs(cand, exist_ok=True)
            if os.access(cand, os.W_OK):
                return Path(cand)
        except OSError:
            continue
    raise OSError("no writable cache directory")


def disabled() -> bool:
    """True when ``BURSTBUFFER_NATIVE`` disables the simulator's compiled modules (`compile_file_cached`; the
    policies' engines, built at install time, have no switch)."""
    return os.environ.get("BURSTBUFFER_NATIVE", "1").strip().lower() in ("0", "no", "false", "off")


def compile_cached(source: str, stem: str, *, compiler: str, flags: tuple[str, ...], key: tuple[str, ...] = (),
                   src_suffix: str = ".c", suffix: str = ".so", args=lambda name: (), libs: tuple[str, ...] = (),
                   timeout: float = 120, error_line=None) -> tuple[Path, str]:
    """The file compiled from `source` with `compiler` and `flags` (the simulator's C++ modules; the policies' C
    engines under a sanitizer, `sanitized_engine`), cached as ``STEM_<tag>SUFFIX`` in
    `build_dir`, tag = hash of the source, the compiler, the flags (`sanitize_flags` added), `key` and the
    machine. `args(name)`: more
    arguments before the output (given the library's name, ``STEM_<tag>``); `libs`: after the source.
    Returns (path, name). Raises NativeUnavailable without the compiler or when compilation
    fails (one line: `error_line(stderr)` or its last line)."""
    import hashlib  # noqa: PLC0415
    import platform  # noqa: PLC0415
    import shutil  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    flags = (*flags, *sanitize_flags())
    tag = hashlib.sha256("\0".join([source, compiler, *flags, *key, platform.machine()]).encode()).hexdigest()[:16]
    name = f"{stem}_{tag}"
    d = build_dir()
    so = d / f"{name}{suffix}"
    if not so.exists():
        if shutil.which(compiler) is None:
            raise NativeUnavailable(f"no {'C++' if src_suffix == '.cpp' else 'C'} compiler ({compiler!r} not found)")
        fd, src = tempfile.mkstemp(suffix=src_suffix, dir=d)
        with os.fdopen(fd, "w") as f:
            f.write(source)
        tmp = src[:-len(src_suffix)] + suffix
        try:
            r = subprocess.run([compiler, *flags, *args(name), "-o", tmp, src, *libs], capture_output=True,
                               text=True, timeout=timeout)
            if r.returncode != 0:
                why = error_line(r.stderr) if error_line else (r.stderr.strip().splitlines()[-1:] or r.returncode)
                raise NativeUnavailable(f"compilation failed: {why}")
            os.replace(tmp, so)
        finally:
            for x in (src, tmp):
                try:
                    os.unlink(x)
                except OSError:
                    pass
    return so, name


def compile_file_cached(path: str, stem: str, *, compiler: str, flags: tuple[str, ...], key=lambda: (),
                        src_suffix: str = ".c", suffix: str = ".so", args=lambda name: (),
                        libs: tuple[str, ...] = (), timeout: float = 120, error_line=None) -> tuple[Path, str]:
    """`compile_cached` of the source file `path`, remembered by a stamp so that a start whose source has not
    changed neither reads nor hashes it (nor imports what that takes).

    The stamp, ``STEM.<crc32 of the path>.stamp`` in `build_dir`, holds the source's path, size and
    modification time [ns], `compiler`, `flags`, `libs`, `suffix`, the interpreter's version and the
    machine, and the name `compile_cached` gave the library. While all of these are unchanged and the
    library exists, it is returned as is; otherwise the source is read and `compile_cached` called (with
    key ``key()``, a callable so that what only a build needs, e.g. include paths, is computed then) and the
    stamp rewritten. A changed source (its size or modification time) is therefore rebuilt at its next
    load. Returns (path, name). Raises NativeUnavailable as `compile_cached`; OSError if `path` cannot be
    read."""
    if disabled():
        raise NativeUnavailable("disabled by BURSTBUFFER_NATIVE")
    import zlib  # noqa: PLC0415

    path = os.path.abspath(path)
    st = os.stat(path)
    machine = os.uname().machine if hasattr(os, "uname") else sys.platform
    ident = "\0".join([path, str(st.st_size), str(st.st_mtime_ns), compiler, *flags, *sanitize_flags(), *libs,
                       suffix, sys.version, machine])
    d = build_dir()
    stamp = d / f"{stem}.{zlib.crc32(path.encode()):08x}.stamp"
    try:
        with open(stamp, encoding="utf-8") as f:
            seen, _, name = f.read().rpartition("\n")
        if seen == ident and name and (d / f"{name}{suffix}").exists():
            return d / f"{name}{suffix}", name
    except (OSError, UnicodeDecodeError):
        pass
    with open(path, encoding="utf-8") as f:
        source = f.read()
    so, name = compile_cached(source, stem, compiler=compiler, flags=flags, key=tuple(key()), src_suffix=src_suffix,
                              suffix=suffix, args=args, libs=libs, timeout=timeout, error_line=error_line)
    tmp = f"{stamp}.{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(f"{ident}\n{name}")
        os.replace(tmp, stamp)
    except OSError:
        pass
    return so, name


def engine_path(name: str) -> Path:
    """The file of the policies' C engine `name` (`ENGINES`), the extension module built at install time. Raises
    InputError (one line naming the fix: reinstalling) when it is missing."""
    import importlib.util  # noqa: PLC0415

    from .errors import InputError  # noqa: PLC0415

    module = f"{ENGINE_PACKAGE}.native.{name}"
    try:
        spec = importlib.util.find_spec(module)
    except ImportError:
        spec = None
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        raise InputError(module, "compiled engine", "missing: the package's C engines are built when it is "
                         "installed; reinstall burstbuffer with a C compiler and Python's headers "
                         "(pip install --force-reinstall burstbuffer, or make setup in a checkout; "
                         "docs/installation.md)")
    return Path(spec.origin)


def sanitized_engine(name: str) -> Path:
    """The policies' C engine `name` compiled from its source (package data) with `CFLAGS` and `sanitize_flags`
    into the sanitizer's cache folder (`build_dir`): the build that ``$BURSTBUFFER_SANITIZE`` asks for. Raises
    NativeUnavailable without a compiler or when compilation fails."""
    from importlib.resources import files  # noqa: PLC0415

    source = files(ENGINE_PACKAGE).joinpath("native", f"{name}.c").read_text()
    so, _ = compile_cached(source, f"{name}_native", compiler=os.environ.get("CC", "cc"), flags=CFLAGS,
                           libs=tuple(f"-l{x}" for x in ENGINES[name]))
    return so


class NativeLibrary:
    """One of the policies' C engines (`ENGINES`), loaded with ctypes on its first use, once per process.

    `name`: the engine's name in `ENGINES`; `declare(lib)`: sets the functions' ctypes signatures. `get()` returns
    the loaded library: the extension module built at install time (`engine_path`), or with
    ``$BURSTBUFFER_SANITIZE`` the sanitized build (`sanitized_engine`). Raises InputError (one line) when the
    extension is missing (a broken install) or the sanitized build fails."""

    def __init__(self, name: str, declare=None):
        if name not in ENGINES:
            raise ValueError(f"unknown engine {name!r} (choose from {', '.join(ENGINES)})")
        self.name, self.declare = name, declare
        self.lib: ctypes.CDLL | None = None

    def get(self) -> ctypes.CDLL:
        if self.lib is None:
            import ctypes  # noqa: PLC0415

            try:
                so = sanitized_engine(self.name) if sanitizers() else engine_path(self.name)
            except NativeUnavailable as exc:
                from .errors import InputError  # noqa: PLC0415

                raise InputError(f"{ENGINE_PACKAGE}.native.{self.name}", SANITIZE_ENV, str(exc)) from None
            lib = ctypes.CDLL(str(so))
            if self.declare is not None:
                self.declare(lib)
            self.lib = lib
        return self.lib
