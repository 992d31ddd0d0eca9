"""Split a workload into non-overlapping parts of equal duration (docs/workload.md, Kopanski & Rzadca 2021, §4.2,
the artifact's ``KTH-SP2-1996-2.1-Split`` notebook).

Rule (reproduces the artifact's 16 KTH parts): with first / last the earliest / latest
submission time, the span last − first is cut into ``n`` periods of ``round(span / n)`` seconds
(Python's round, as the artifact); a job belongs to period ``min(⌊(subtime − first) / period⌋,
n − 1)``. With ``weeks`` given, ``n = ⌈span / (weeks × 7 × 86400)⌉``, the fewest equal parts no
longer than that: on KTH (span 28,763,768 s) three weeks gives n = 16 parts of 1,797,736 s
(20.8 days), the paper's "16 three-week parts". In each part job ids and profiles are kept and
submission times are shifted so that its first job is submitted at t = 1, as the artifact
(which regenerated each part from the SWF with ``from_job_number``/``num_jobs``) does.

The artifact's last part (``part-15``) also holds job 27154, the last job of part 14: its bounds
were copied by hand as (27154, 28490) while its own notebook puts 27154 in period 14 and starts
period 15 at job 27155. This splitter gives non-overlapping parts, hence part 15 without 27154.
"""
from __future__ import annotations

import math
from pathlib import Path

from .batsim_json import WorkloadJob, Workload, write_workload

WEEK = 7 * 86400


def split_bounds(subtimes: list[float], *, weeks: float | None = 3, parts: int | None = None
                 ) -> tuple[float, int, int]:
    """(first submission time, period in s, number of parts) for these submission times.

    `parts` wins over `weeks`. Raises ValueError if neither gives a positive number of parts.
    """
    if not subtimes:
        raise ValueError("cannot split an empty workload")
    first, last = min(subtimes), max(subtimes)
    span = last - first
    if parts is None:
        if not weeks or weeks <= 0:
            raise ValueError("weeks must be > 0")
        parts = max(1, math.ceil(span / (weeks * WEEK)))
    if parts <= 0:
        raise ValueError("the number of parts must be > 0")
    period = max(1, round(span / parts))
    return first, period, parts


def split_workload(workload: Workload, *, weeks: float | None = 3, parts: int | None = None
                   ) -> list[Workload]:
    """Split `workload` into consecutive parts (module docstring for the rule).

    Returns one Workload per part, in time order, possibly empty; each keeps the jobs' ids,
    walltimes, res and profiles, with subtimes re-based to 1 s, `nb_res` and `name` of the
    input, and a description naming its job range and period.
    Raises ValueError for an empty workload or a non-positive `weeks`/`parts`.
    """
    first, period, n = split_bounds([j.subtime for j in workload.jobs], weeks=weeks, parts=parts)
    buckets: list[list[WorkloadJob]] = [[] for _ in range(n)]
    for j in workload.jobs:
        buckets[min(int((j.subtime - first) // period), n - 1)].append(j)
    out = []
    for k, jobs in enumerate(buckets):
        if jobs:
            base = min(j.subtime for j in jobs) - 1
            jobs = [WorkloadJob(j.id, j.subtime - base, j.walltime, j.res, j.profile) for j in jobs]
            desc = (f"{len(jobs)} jobs from swf job number {jobs[0].id} to {jobs[-1].id} inclusive; "
                    f"part {k} of {n}: submitted in [{first + k * period}, "
                    f"{first + (k + 1) * period if k < n - 1 else 'end'}) of {workload.name or 'the workload'}")
        else:
            desc = f"0 jobs; part {k} of {n} of {workload.name or 'the workload'}"
        profiles = {j.profile: workload.profiles[j.profile] for j in jobs}
        out.append(Workload(workload.name, desc, workload.nb_res, jobs, profiles))
    return out


def write_parts(parts: list[Workload], folder: str | Path) -> list[Path]:
    """Write ``part-<k>.json`` for each part into `folder` (created), atomically; return the paths."""
    folder = Path(folder)
    return [write_workload(folder / f"part-{k}.json", p) for k, p in enumerate(parts)]


def first_jobs(src: str | Path, n: int, dst: str | Path, *, keep: bool = False) -> Path:
    """The first `n` jobs of the Batsim workload `src` (file order), with their profiles, written to `dst`
    (with `keep`, a `dst` that already holds min(n, all) jobs is kept as is); returns `dst`. The description says which jobs these
    are; submission times are unchanged. Raises InputError for an unreadable workload (`load_workload`)."""
    from .batsim_json import load_workload
    dst = Path(dst)
    if keep and dst.is_file() and len(load_workload(dst, require_bb=False).jobs) == min(
            n, len(load_workload(src, require_bb=False).jobs)):
        return dst
    w = load_workload(src, require_bb=False)
    jobs = w.jobs[:n]
    desc = f"first {len(jobs)} jobs of {Path(src).name}"
    write_workload(dst, Workload(w.name, desc, w.nb_res, jobs, {j.profile: w.profiles[j.profile] for j in jobs}))
    return dst

