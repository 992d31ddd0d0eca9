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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import InputError
from ..metrics.claims import Claim, RegimeCheck
from ..lazy import lazy

pd = lazy("pandas")  # imported on first use (burstbuffer.lazy)

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
class Variant:
    """One column of a study's tables: `label` (its name in every table, figure and run folder), the
    registry `policy` it runs with `options` (keyword options of the policy's factory, JSON values, e.g.
    ``{"order": "wfp"}``; ``queues`` may be a TOML path) under job `model` (None: ``--model``); `scopes`:
    the only scopes it runs on (e.g. ``("S4",)`` for a sensitivity study on one workload; empty: all)."""

    label: str
    policy: str
    options: dict = field(default_factory=dict)
    model: str | None = None
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExtraWorkload:
    """A workload a study derives from the selected one (e.g. BBSched's S1-S4 from KTH): its runs form
    the scope `scope` beside ``whole``; `path` is the Batsim file made, `note` one line for the report.
    Optional, for a scope run in another setting than the command line's: `platform` (a SimGrid file),
    `model` (job model), `seed` (the policies' seed) and `options` (policy options added to every
    variant's on this scope, e.g. ``{"order": "wfp"}``; a variant's own options win)."""

    scope: str
    path: Path
    note: str
    platform: Path | None = None
    model: str | None = None
    seed: int | None = None
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class StudyData:
    """What a study's own report sections see (`Study.sections`): the `report` (a
    `burstbuffer.metrics.report.Report`) to append to, the tidy per-job table `jobs` (columns scope,
    policy = variant label, then `tidy.job_metrics`'s), the summary table `summary`
    (`metrics.tables.summary_table`), the runs (`specs`, `results`: key → marker or error), the output
    folder `out` and its `figures` folder; `manifest`: the invocation's settings (`analysis.analyse`: model,
    platform, seed, …) — what a regime check reads of the runs beside `specs`."""

    report: object
    jobs: pd.DataFrame
    summary: pd.DataFrame
    specs: list
    results: dict
    out: Path
    figures: Path
    manifest: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Study:
    """One study.

    name: the ``--study`` value; title: the report's title; description: one line for ``--help``;
    policies: the default ``--policies`` (registry names, report order); reference: the policy the part
    means are normalised by (`tables.part_means`); claims: the claims table
    (`burstbuffer.metrics.claims.evaluate`, on the per-job table of the runs); gantt: the extra Gantt run or None;
    whole_figures(per-job metrics of the whole scope, figures folder) → figures;
    part_figures(part means, figures folder) → (figures, a note when they are left out or None);
    whole_scope_note(manifest) → a caveat paragraph before the claims, or None;
    variants: when not empty, the study's columns (`Variant`: a policy with options and maybe its own job
    model) instead of `policies`; ``--policies`` then selects variants by label (a plain policy name
    not among them becomes a variant without options);
    workloads(whole workload, work folder, seed, platform file) → [`ExtraWorkload`]: more scopes run like
    ``whole``
    (claims then see the summary rows of every such scope, column ``scope``);
    sections(`StudyData`) → figures: the study's own report sections, after the summary tables;
    paper: the paper named in the claims table's header;
    replicates: the default ``--replicates`` R (docs/verdicts.md: at least 2 for a noise floor; 3 gives a
    Student's t interval with 2 degrees of freedom); replicates_reason: why that R (report text);
    regime(`StudyData`) → [`burstbuffer.metrics.claims.RegimeCheck`]: the checks that the runs are in the
    paper's regime (one failed: every claim ``out of regime``, docs/verdicts.md); None: no checks."""

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
    variants: tuple[Variant, ...] = ()
    workloads: Callable[[Path, Path, int, Path], list[ExtraWorkload]] | None = None
    sections: Callable[[StudyData], list[Figure]] | None = None
    paper: str = "Kopanski & Rzadca 2021"
    regime: Callable[[StudyData], list[RegimeCheck]] | None = None
    replicates: int = 3
    replicates_reason: str = ("the fewest independent workload draws and policy seeds whose Student's t interval "
                              "has the width of the spread between draws (2 degrees of freedom)")

    def columns(self, asked: str | None) -> list[Variant]:
        """The variants to run for ``--policies`` `asked` (None: all of the study's): `variants` selected by
        label, or, for a study without variants, one plain variant per policy name (in the asked order)."""
        names = [p.strip() for p in (asked or ",".join(self.labels())).split(",") if p.strip()]
        by_label = {v.label: v for v in self.variants}
        return [by_label.get(n, Variant(n, n)) for n in names]

    def labels(self) -> tuple[str, ...]:
        """The study's default column labels: its variants' labels, else its policies."""
        return tuple(v.label for v in self.variants) if self.variants else self.policies


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
