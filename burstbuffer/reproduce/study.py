"""A study as data: which runs (its policies, the reference of its part means, an extra Gantt run), its
claims table and its figures. `burstbuffer reproduce --study NAME` plans, executes and analyses it.

The registry: every module of `burstbuffer.reproduce.studies` that defines ``STUDY`` (a `Study`) is a
study, under ``STUDY.name``; adding a study is adding such a module. `get_study(name)` raises
`InputError` for an unknown name. The default study is ``kopanski2021`` (Kopanski & Rzadca,
"Plan-based Job Scheduling for Supercomputers with Shared Burst Buffers", Euro-Par 2021, §4.2).
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from ..errors import InputError
from ..metrics.claims import Claim

DEFAULT_STUDY = "kopanski2021"

#: (PNG and SVG paths, caption) of one figure of the report
Figure = tuple[list[Path], str]


@dataclass(frozen=True)
class GanttRun:
    """An extra run drawn as a Gantt chart: `policy` under job model `model` on the first N jobs of the
    whole workload (``--gantt-jobs N``), saved as figures/`figure`.png/.svg, captioned with `label`."""

    policy: str
    model: str
    figure: str
    label: str


@dataclass(frozen=True)
class Study:
    """One study.

    name: the ``--study`` value; title: the report's title; description: one line for ``--help``;
    policies: the default ``--policies`` (registry names, report order); reference: the policy the part
    means are normalised by (`tables.part_means`); claims: the claims table
    (`burstbuffer.metrics.claims.evaluate`); gantt: the extra Gantt run or None;
    whole_figures(per-job metrics of the whole scope, figures folder) → figures;
    part_figures(part means, figures folder) → (figures, a note when they are left out or None);
    whole_scope_note(manifest) → a caveat paragraph before the claims, or None."""

    name: str
    title: str
    description: str
    policies: tuple[str, ...]
    reference: str
    claims: tuple[Claim, ...]
    gantt: GanttRun | None = None
    whole_figures: Callable[[pd.DataFrame, Path], list[Figure]] | None = None
    part_figures: Callable[[pd.DataFrame, Path], tuple[list[Figure], str | None]] | None = None
    whole_scope_note: Callable[[dict], str | None] | None = None


def all_studies() -> dict[str, Study]:
    """Every registered study by name (the modules of `burstbuffer.reproduce.studies` with a ``STUDY``)."""
    pkg = importlib.import_module(__package__ + ".studies")
    found = {}
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
        st = getattr(mod, "STUDY", None)
        if isinstance(st, Study):
            found[st.name] = st
    return found


def get_study(name: str) -> Study:
    """The study registered as `name`; InputError (``--study``, name, the known names) otherwise."""
    known = all_studies()
    if name not in known:
        raise InputError("--study", name, f"unknown study (known: {', '.join(sorted(known))})")
    return known[name]
