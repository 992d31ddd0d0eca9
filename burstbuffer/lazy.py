"""`lazy("pandas")`: a stand-in for a heavy module, imported on its first attribute access — so that modules
needed to build the command line (a study's description, its options) can name pandas or numpy at their
top without every `burstbuffer` command paying their import (docs/startup.md)."""
from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any


class LazyModule:
    """Proxy of the module `name`: ``proxy.attr`` imports it (once) and returns its ``attr``.

    ``isinstance(x, proxy.DataFrame)`` and the like work; the proxy itself is not the module (do not put it
    in ``sys.modules`` or compare it with ``is``)."""

    __slots__ = ("_name", "_module", "_bind")

    def __init__(self, name: str, bind: tuple[dict, str] | None = None):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_module", None)
        object.__setattr__(self, "_bind", bind)

    def __getattr__(self, attr: str) -> Any:
        mod = self._module
        if mod is None:
            mod = importlib.import_module(self._name)
            object.__setattr__(self, "_module", mod)
            if self._bind is not None:          # the module's global now names the module itself
                namespace, alias = self._bind
                namespace[alias] = mod
        return getattr(mod, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}{' (imported)' if self._module is not None else ''}>"


def lazy(name: str, namespace: dict | None = None, alias: str | None = None) -> Any:
    """A `LazyModule` for `name` (typed Any so that ``pd.DataFrame`` annotations and calls type-check). With
    `namespace` (a module's ``globals()``) and `alias` (the global that holds the proxy), the first access puts
    the module itself in that global, so that the module's later look-ups (a hot loop's) cost nothing more."""
    return LazyModule(name, None if namespace is None else (namespace, alias))


def lazy_exports(package: str, where: dict[str, str], namespace: dict, names: list[str]):
    """(``__getattr__``, ``__dir__``) for `package`'s ``__init__``: a name of `where` (name → submodule) is
    imported from ``package.submodule`` on first access and kept in `namespace` (the package's globals);
    `names` is its ``__all__``. AttributeError for any other name (PEP 562)."""
    def __getattr__(name: str):
        mod = where.get(name)
        if mod is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{mod}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__


class LazyRegistry(MutableMapping):
    """name → object, for a registry whose built-in entries live in heavy modules: each built-in entry is
    ``(module, attribute)`` or a zero-argument loader, resolved on its first look-up (once, then kept), so
    that listing the names imports nothing. Entries added by assignment (``REGISTRY["mine"] = factory``) come
    after the built-ins in iteration order; ``del`` hides a built-in. KeyError for an unknown name.

    Used by `burstbuffer.schedulers.registry.POLICIES` and `burstbuffer.io_model.registry.JOB_MODELS`."""

    def __init__(self, where: dict[str, tuple[str, str] | Callable[[], Any]]):
        self._where = dict(where)
        self._loaded: dict[str, Any] = {}
        self._added: dict[str, Any] = {}
        self._removed: set[str] = set()

    def __getitem__(self, name: str) -> Any:
        if name in self._added:
            return self._added[name]
        if name in self._removed or name not in self._where:
            raise KeyError(name)
        if name not in self._loaded:
            spec = self._where[name]
            self._loaded[name] = spec() if callable(spec) else getattr(importlib.import_module(spec[0]), spec[1])
        return self._loaded[name]

    def __setitem__(self, name: str, value: Any) -> None:
        self._added[name] = value
        self._removed.discard(name)

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._added.pop(name, None)
        if name in self._where:
            self._removed.add(name)

    def __contains__(self, name: object) -> bool:
        return name in self._added or (name in self._where and name not in self._removed)

    def __iter__(self) -> Iterator[str]:
        yield from (n for n in self._where if n not in self._removed and n not in self._added)
        yield from self._added

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"<lazy registry of {', '.join(self)}>"
