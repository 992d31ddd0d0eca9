"""Job-model name → factory, as `burstbuffer.schedulers.registry` is for policies.

`make_model("io-aware")` is what `runner`, `serve` and the CLI call; `model_names()` gives the
CLI's choices. The models' rules: ``docs/io-model.md`` (Kopanski & Rzadca, Euro-Par 2021, §4.1).
A model's module is imported when the model is first asked for (it imports the scheduler side, numpy):
listing the names imports nothing.
"""
from __future__ import annotations

from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Callable

from ..lazy import LazyRegistry

if TYPE_CHECKING:
    from .base import JobModel

__all__ = ["JOB_MODELS", "make_model", "model_names"]

#: name → (module, class) of each registered job model
_WHERE = {
    "alloc-only": ("burstbuffer.io_model.alloc_only", "AllocOnlyModel"),
    "io-aware": ("burstbuffer.io_model.io_aware", "IOAwareModel"),
    "three-phase": ("burstbuffer.io_model.three_phase", "ThreePhaseModel"),
}


#: name → factory() -> JobModel
#: (the built-in factories imported on first look-up; any factory registered by assignment,
#: ``JOB_MODELS["my-model"] = MyModel``, docs/architecture.md)
JOB_MODELS: MutableMapping[str, Callable[[], "JobModel"]] = LazyRegistry(_WHERE)


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
