"""Job-model name → factory, as `burstbuffer.schedulers.registry` is for policies.

`make_model("io-aware")` is what `runner`, `serve` and the CLI call; `model_names()` gives the
CLI's choices. The models' rules: ``docs/io-model.md`` (Kopanski & Rzadca, Euro-Par 2021, §4.1).
A model's module is imported when the model is first asked for (it imports the scheduler side, numpy):
listing the names imports nothing.
"""
from __future__ import annotations

import importlib
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Callable, Iterator

if TYPE_CHECKING:
    from .base import JobModel

__all__ = ["JOB_MODELS", "make_model", "model_names"]

#: name → (module, class) of each registered job model
_WHERE = {
    "alloc-only": ("burstbuffer.io_model.alloc_only", "AllocOnlyModel"),
    "io-aware": ("burstbuffer.io_model.io_aware", "IOAwareModel"),
    "three-phase": ("burstbuffer.io_model.three_phase", "ThreePhaseModel"),
}


class _Models(MutableMapping):
    """name → factory() -> JobModel: the built-in factories imported on first look-up, and any factory
    registered by assignment (``JOB_MODELS["my-model"] = MyModel``, docs/architecture.md)."""

    def __init__(self) -> None:
        self._added: dict[str, Callable[[], "JobModel"]] = {}
        self._removed: set[str] = set()

    def __getitem__(self, name: str) -> Callable[[], "JobModel"]:
        if name in self._added:
            return self._added[name]
        if name in self._removed:
            raise KeyError(name)
        mod, cls = _WHERE[name]
        return getattr(importlib.import_module(mod), cls)

    def __setitem__(self, name: str, factory: Callable[[], "JobModel"]) -> None:
        self._added[name] = factory
        self._removed.discard(name)

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._added.pop(name, None)
        if name in _WHERE:
            self._removed.add(name)

    def __iter__(self) -> Iterator[str]:
        yield from (n for n in _WHERE if n not in self._removed and n not in self._added)
        yield from self._added

    def __len__(self) -> int:
        return sum(1 for _ in self)


#: name → factory() -> JobModel
JOB_MODELS: MutableMapping[str, Callable[[], "JobModel"]] = _Models()


def model_names() -> list[str]:
    """Registered job-model names, sorted."""
    return sorted(JOB_MODELS)


def make_model(name: str) -> "JobModel":
    """A new job model of the given name. Raises ValueError naming the valid models if `name` is unknown."""
    try:
        factory = JOB_MODELS[name]
    except KeyError:
        raise ValueError(f"unknown job model {name!r}; valid job models: {', '.join(model_names())}") from None
    return factory()
