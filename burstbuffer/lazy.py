"""`lazy("pandas")`: a stand-in for a heavy module, imported on its first attribute access — so that modules
needed to build the command line (a study's description, its options) can name pandas or numpy at their
top without every `burstbuffer` command paying their import (docs/startup.md)."""
from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Proxy of the module `name`: ``proxy.attr`` imports it (once) and returns its ``attr``.

    ``isinstance(x, proxy.DataFrame)`` and the like work; the proxy itself is not the module (do not put it
    in ``sys.modules`` or compare it with ``is``)."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_module", None)

    def __getattr__(self, attr: str) -> Any:
        mod = self._module
        if mod is None:
            mod = importlib.import_module(self._name)
            object.__setattr__(self, "_module", mod)
        return getattr(mod, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}{' (imported)' if self._module is not None else ''}>"


def lazy(name: str) -> Any:
    """A `LazyModule` for `name` (typed Any so that ``pd.DataFrame`` annotations and calls type-check)."""
    return LazyModule(name)


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
