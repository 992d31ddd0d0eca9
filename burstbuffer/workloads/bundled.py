"""Workloads produced on demand from the reference trace (docs/workload.md): the whole KTH trace.

``ensure_kth_workload()`` returns ``workloads/kth-all.json`` (in a checkout; ``~/.cache/burstbuffer/workloads/``
for an installed package), converting the bundled ``workloads/KTH-SP2-1996-2.1-cln.swf.gz`` first if the file is
missing, by the paper artifact's rule (docs/workload.md §2). The conversion is deterministic: the same seed gives the same bytes. It keeps every selected
record — 28,467 jobs, of which 14 ask for more than the paper's 96 compute nodes and are rejected (and
counted) at run time (docs/README.md: valid jobs are never silently dropped). With ``drop_oversized=True`` it
gives the paper's 28,453 jobs; the BB and communication draws then differ from the 14th-dropped job on, as
they follow job positions (burstbuffer.workloads.bb_model).
"""
from __future__ import annotations

import os
from pathlib import Path

from ..data import bundled, generated_dir
from ..errors import InputError
from .batsim_json import write_workload
from .bb_model import BBModel
from .convert import convert_swf

#: The Parallel Workloads Archive's cleaned KTH SP2 trace, as the paper used it (docs/workload.md); bundled.
KTH_SWF = bundled("workloads", "KTH-SP2-1996-2.1-cln.swf.gz")
#: Where the whole converted trace lives, produced on demand: the checkout's workloads/ (git-ignored), or the
#: user's cache for an installed package (`burstbuffer.data.generated_dir`).
KTH_ALL = generated_dir() / "kth-all.json"
#: Jobs of the whole trace after the filters of docs/workload.md §2, and without the 14 that ask for > 96 nodes.
KTH_ALL_JOBS = 28_467
KTH_ALL_JOBS_FITTING = 28_453


def ensure_kth_workload(path: str | Path = KTH_ALL, seed: int = 0, *, swf: str | Path | None = None,
                        drop_oversized: bool = False) -> Path:
    """The whole KTH trace as a Batsim workload for the paper's platform (96 compute nodes, 12 BB nodes of
    40 GB; docs/platform.md, docs/workload.md), converted under `seed` if `path` does not exist yet; returns `path`.

    An existing file is returned as is (delete it to convert again). `swf` defaults to
    `KTH_SWF` (the environment variable ``BURSTBUFFER_KTH_SWF`` overrides it). The file is written
    atomically, so concurrent callers and interrupted runs never leave a partial file.
    Raises InputError(swf, "KTH trace", …) if the trace is missing, and InputError for a malformed trace.
    """
    path = Path(path)
    if path.is_file():
        return path
    swf = Path(swf or os.environ.get("BURSTBUFFER_KTH_SWF") or KTH_SWF)
    if not swf.is_file():
        raise InputError(str(swf), "KTH trace",
                         f"not found; {path.name} is converted from it (the Parallel Workloads Archive's "
                         "KTH-SP2-1996-2.1-cln.swf, shipped as workloads/KTH-SP2-1996-2.1-cln.swf.gz, "
                         "or named by BURSTBUFFER_KTH_SWF)")
    conv = convert_swf(swf, nb_res=96, model=BBModel(), seed=seed, drop_oversized=drop_oversized, rule="artifact")
    write_workload(path, conv.workload)
    return path
