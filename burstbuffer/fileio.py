"""Writing output files without ever leaving one half-written."""
from __future__ import annotations

import os
from pathlib import Path

from .errors import InputError


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write `text` to `path` atomically: a temporary file in the same folder (usual permissions),
    fsync, then rename over `path`. Creates the folder. Returns the path.

    Raises InputError(path, "file", reason) if it cannot be written; no temporary file is left.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        import tempfile  # noqa: PLC0415  (not at import: the simulator reads workloads through this package)

        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise InputError(str(path), "file", exc.strerror or str(exc)) from None
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)       # mkstemp makes 0600; give the usual permissions
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise InputError(str(path), "file", exc.strerror or str(exc)) from None
        raise
    return path


def read_toml(path: str | Path, item: str) -> dict:
    """The TOML file `path` as a dict. Raises InputError(path, `item`, reason) when it cannot be read
    ("file not found", the OS's reason) or is not TOML ("bad TOML: …")."""
    import tomllib
    p = Path(path)
    try:
        return tomllib.loads(p.read_text())
    except OSError as exc:
        raise InputError(str(p), item, exc.strerror or "cannot read") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(str(p), item, f"bad TOML: {exc}") from None
    except RecursionError:
        raise InputError(str(p), item, "bad TOML: nested too deeply") from None


def output_dir(path: str | Path, item: str = "--output") -> Path:
    """The folder `path`, created if missing (with its parents). Raises InputError(path, `item`, reason)
    when it cannot be: an existing file there ("exists and is not a folder"), or the OS's reason."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InputError(str(p), item, "exists and is not a folder")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(str(p), item, f"cannot create the folder ({exc.strerror or exc})") from None
    return p
