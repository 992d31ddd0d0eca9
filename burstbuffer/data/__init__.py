"""The bundled inputs, found through `importlib.resources` (docs/deployment.md §1).

The package ships the repository's ``workloads/`` (the KTH trace, its 1000-job cut ``kth-1000.json``, the
paper's 16 parts ``KTH-split/``, ``mira-like-queues.toml``) and ``platforms/`` (the Dragonfly XMLs) as package
data: in a source checkout ``burstbuffer/data/workloads`` and ``burstbuffer/data/platforms`` are symbolic links
to those folders (so the repository keeps one copy), in a wheel or an sdist they are the files themselves.

``bundled("workloads", "kth-1000.json")`` is the absolute path of a bundled file (symbolic links resolved, so in
a checkout it is ``<repository>/workloads/kth-1000.json`` as before). Files made on demand from the bundled ones
(the whole KTH trace converted to JSON) go to `generated_dir`: the repository's ``workloads/`` in a checkout,
else ``$BURSTBUFFER_CACHE_DIR`` or ``$XDG_CACHE_HOME/burstbuffer`` (default ``~/.cache/burstbuffer``) — never
into an installed package.
"""
from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

__all__ = ["bundled", "checkout", "cache_dir", "generated_dir", "input_path"]


def bundled(*parts: str) -> Path:
    """Absolute path (symbolic links resolved) of the bundled file or folder ``parts`` (e.g. ``("platforms",
    "dragonfly96.xml")``). The path is returned even if it does not exist (callers report missing inputs with
    their own message); the package is always installed as plain files (a wheel unpacked by pip), never zipped."""
    res = files(__name__).joinpath(*parts)
    return Path(os.fspath(res)).resolve()


def checkout() -> Path | None:
    """The source checkout this package runs from (the folder holding ``pyproject.toml`` and ``workloads/``
    beside ``burstbuffer/``), or None for an installed package."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file() and (root / "workloads").is_dir() and (root / "burstbuffer").is_dir():
        return root
    return None


def cache_dir(sub: str = "") -> Path:
    """``$BURSTBUFFER_CACHE_DIR`` or ``$XDG_CACHE_HOME/burstbuffer`` (default ``~/.cache/burstbuffer``), joined
    with `sub` (not created)."""
    base = os.environ.get("BURSTBUFFER_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "burstbuffer")
    return Path(base) / sub if sub else Path(base)


def generated_dir() -> Path:
    """Where workloads made from the bundled trace are kept: ``<checkout>/workloads`` in a source checkout,
    else ``cache_dir("workloads")`` (not created)."""
    root = checkout()
    return root / "workloads" if root is not None else cache_dir("workloads")


def input_path(path: str | Path, what: str) -> Path:
    """`path` as a readable file (`burstbuffer.cliargs.input_file`: InputError naming why not), where a bare file
    name that is not in the current folder but is one of the bundled inputs (``workloads/``, ``platforms/``) is
    that bundled file: ``KTH-SP2-1996-2.1-cln.swf.gz`` or ``kth-1000.json`` need no site-packages path."""
    from ..cliargs import input_file
    p = Path(path)
    if not p.exists() and p.name == str(path):
        for folder in ("workloads", "platforms"):
            if bundled(folder, p.name).is_file():
                return bundled(folder, p.name)
    return input_file(p, what)

