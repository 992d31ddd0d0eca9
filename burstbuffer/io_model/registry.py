"""Job-model name → factory, as `burstbuffer.schedulers.registry` is for policies.

`make_model("io-aware")` is what `runner`, `serve` and the CLI call; `model_names()` gives the
CLI's choices. The models' rules: ``docs/io-model.md`` (Kopanski & Rzadca, Euro-Par 2021, §4.1).
"""
from __future__ import annotations

from typing import Callable

from .alloc_only import AllocOnlyModel
from .base import JobModel
from .io_aware import IOAwareModel
from .three_phase import ThreePhaseModel

__all__ = ["JOB_MODELS", "make_model", "model_names"]

#: name → factory() -> JobModel
JOB_MODELS: dict[str, Callable[[], JobModel]] = {
    "alloc-only": AllocOnlyModel,
    "io-aware": IOAwareModel,
    "three-phase": ThreePhaseModel,
}


def model_names() -> list[str]:
    """Registered job-model names, sorted."""
    return sorted(JOB_MODELS)


def make_model(name: str) -> JobModel:
    """A new job model of the given name. Raises ValueError naming the valid models if `name` is unknown."""
    try:
        factory = JOB_MODELS[name]
    except KeyError:
        raise ValueError(f"unknown job model {name!r}; valid job models: {', '.join(model_names())}") from None
    return factory()
