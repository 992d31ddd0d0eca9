"""SWF trace → Batsim workload with burst-buffer requests (docs/workload.md, Kopanski & Rzadca 2021, §4.1).

Field mapping, checked against the paper's reference files (every job of
``KTH-SP2-1996-2.1-cln-io-aware-1000.json`` and of the 16 ``KTH-split`` parts):

=================  ========================================================================
Batsim             SWF
=================  ========================================================================
``id``             job number (field 1), an int
``subtime``        submit time (field 2) − first kept job's submit time (s), + 1 with the artifact rule
``walltime``       requested time (field 9, s); with a walltime factor F, max(requested time, F × run time)
``res``            requested processors (field 8); the archive rule takes the allocated processors
                   (field 5) when the requested ones are missing
``profile``        ``str(job number)``, one profile per job
``cpu/com/bb``     :class:`~burstbuffer.workloads.bb_model.BBModel` from requested time, run
                   time (field 4) and requested processors
=================  ========================================================================

Jobs requesting more processors than the platform has are kept (the scheduler rejects and
counts them; docs/README.md: valid jobs are never silently dropped) unless `drop_oversized` is set.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable

import numpy as np

from ..errors import InputError
from .batsim_json import WorkloadJob, Workload
from .bb_model import BBModel
from .swf import SWFRecord, Selection, iter_swf, select_records


@dataclass
class Conversion:
    """A converted workload and what happened to the trace's records.

    Attributes:
        workload: the Batsim workload.
        selection: the SWF selection (kept records, ignored counts by reason, records scanned).
        dropped: reason → count of kept records dropped afterwards (only with `drop_oversized`).
        short_jobs: jobs with requested time ≤ the short limit (10 MB per node).
        capacity_limited: long jobs whose request was lowered by the ⌊cap/⌈N/B⌉⌋ rule.
        oversized: jobs (kept) asking for more processors than `nb_res`: they can never run.
    """

    workload: Workload
    selection: Selection
    dropped: Counter = field(default_factory=Counter)
    short_jobs: int = 0
    capacity_limited: int = 0
    oversized: int = 0
    bb_given: int = 0
    bb_over_capacity: int = 0

    def summary(self) -> str:
        """A few lines for the CLI: records kept/ignored and why, and the model's counts."""
        w = self.workload
        lines = [self.selection.summary()]
        if self.dropped:
            lines.append("dropped after selection: " + ", ".join(f"{r}: {n}" for r, n in sorted(self.dropped.items())))
        if self.bb_given:
            lines.append(f"{self.bb_given} jobs with the BB request of the trace, {len(w.jobs) - self.bb_given} "
                         "with the model's (profile field bb_source)")
        if self.bb_over_capacity:
            lines.append(f"{self.bb_over_capacity} jobs of the trace ask for more BB per node than one BB node "
                         "holds and can never run (kept: the scheduler rejects them)")
        lines.append(f"{len(w.jobs)} jobs written; {self.short_jobs} short (small walltime: 10 MB "
                     f"per node); {self.capacity_limited} with the BB request lowered to fit the BB nodes")
        if self.oversized:
            from ..platforms.generator import larger_platform_hint
            most = max(j.res for j in w.jobs)
            lines.append(f"{self.oversized} jobs request more than nb_res = {w.nb_res} processors (up to {most}) "
                         "and can never run (kept: the scheduler rejects them); "
                         + larger_platform_hint(most))
        return "\n".join(lines)


#: The profiles `convert_records` writes: the paper's model (computation, communication and BB request from the
#: run time), or Batsim's delay profiles (the recorded run time; docs/inputs.md says which job model gives which)
PROFILE_TYPES = ("parallel_homogeneous", "delay")


def delay_of(run_time: int | float, grain: float | None = None) -> int | float:
    """A delay profile's delay [s] for a recorded `run_time` [s]: the run time itself, or with `grain` G Batsim's
    converter's ``int((run_time // G + 1) * G)`` (tools/swf_to_batsim_workload_delay.py)."""
    if grain is None:
        return run_time
    return int((run_time // grain + 1) * grain)


def _drop_zero_delays(sel: Selection, grain: float | None) -> None:
    """Remove from `sel` (in place) the kept records whose delay would be 0, counted as ignored."""
    keep = [i for i, r in enumerate(sel.kept) if delay_of(r.run_time, grain) > 0]
    if len(keep) == len(sel.kept):
        return
    sel.ignored["run time 0 (a delay profile needs > 0)"] += len(sel.kept) - len(keep)
    for name in ("kept", "subtimes", "walltimes", "procs"):
        setattr(sel, name, [getattr(sel, name)[i] for i in keep])
    if sel.kept:        # the first kept job at the rule's origin again
        base = sel.kept[0].submit_time - sel.origin
        sel.subtimes = [r.submit_time - base for r in sel.kept]


def convert_records(records: Iterable[SWFRecord], *, name: str, nb_res: int = 96,
                    model: BBModel | None = None, seed: int | np.random.Generator | None = 0,
                    from_job: int = 0, max_records: int | None = None,
                    drop_oversized: bool = False, source: str = "<swf>",
                    bb_given: dict[int, int] | None = None, bb_source: dict[int, str] | None = None,
                    trace_kind: str = "swf", rule: str = "archive",
                    walltime_factor: float | None = None, profile_type: str = "parallel_homogeneous",
                    delay_grain: float | None = None) -> Conversion:
    """Select SWF records by `rule` (``"archive"``, the SWF definition, or ``"artifact"``, the paper
    artifact's filters and shift; see :func:`~burstbuffer.workloads.swf.select_records` for `rule`,
    `walltime_factor` and `from_job` / `max_records`, which count SWF records as the artifact's
    ``from_job_number`` / ``num_jobs`` do) and build the Batsim workload with the BB model drawn under `seed`.

    The description is the artifact's: "<n> jobs from swf job number <first> to <last> inclusive" (`trace_kind`
    names the trace in it).

    `bb_given` (job number → bytes per node; a trace that records requests, e.g. Slurm's bb TRES) replaces the
    model's request of those jobs, and their compute is computed from it by the same formula; every job still
    takes its draws, so the others get the values they get without `bb_given`. With `bb_given` (even empty)
    each profile records where its ``bb`` came from in ``bb_source``: ``bb_source[job]`` (default "trace") or
    "model".

    `profile_type` ``"delay"`` (`PROFILE_TYPES`) writes Batsim ``delay`` profiles instead: each job waits its
    recorded run time (field 4) exactly, ``{"type": "delay", "delay": run time, "bb": bytes per node}`` (the BB
    request of the model kept for the BB-aware policies; Batsim ignores it), as Batsim's
    ``tools/swf_to_batsim_workload_delay.py`` writes delay jobs; with `delay_grain` G, that converter's rounding
    instead: delay = (⌊run time / G⌋ + 1) × G (its ``--jobGrain``, 1 there). A record whose delay would be 0 is
    ignored and counted (Batsim refuses a delay ≤ 0).
    Raises InputError(source, "line N", …) if a job number repeats, ValueError from the model on
    impossible parameters or an unknown `profile_type`.
    """
    if profile_type not in PROFILE_TYPES:
        raise ValueError(f"unknown profile type {profile_type!r} (one of {', '.join(PROFILE_TYPES)})")
    model = model or BBModel()
    sel = select_records(records, from_job=from_job, max_records=max_records, source=source, rule=rule,
                         walltime_factor=walltime_factor)
    if profile_type == "delay":
        _drop_zero_delays(sel, delay_grain)
    kept, subtimes, walls, procs = sel.kept, sel.subtimes, sel.walltimes, sel.procs
    seen: set[int] = set()
    for rec in kept:
        if rec.job_number in seen:
            raise InputError(source, f"line {rec.line}", f"job number {rec.job_number} appears twice")
        seen.add(rec.job_number)
    dropped: Counter = Counter()
    if drop_oversized:
        keep = [i for i, p in enumerate(procs) if p <= nb_res]
        if len(keep) != len(kept):
            dropped[f"requested processors > nb_res ({nb_res})"] = len(kept) - len(keep)
            # re-shift so the first remaining job is still submitted at the rule's origin
            kept, walls, procs = [kept[i] for i in keep], [walls[i] for i in keep], [procs[i] for i in keep]
            base = kept[0].submit_time - sel.origin if kept else 0
            subtimes = [r.submit_time - base for r in kept]
    wall = np.array(walls, dtype=float)
    run = np.array([r.run_time for r in kept], dtype=float)
    res = np.array(procs, dtype=np.int64)
    bb, cpu, com, limited = model.draw(wall, run, res, seed, details=True)
    short = wall <= model.short_walltime
    given = np.zeros(len(kept), dtype=bool)
    if bb_given:
        given = np.array([r.job_number in bb_given for r in kept], dtype=bool)
        if given.any():
            bb[given] = [bb_given[r.job_number] for r, g in zip(kept, given) if g]
            cpu[given] = model.compute(run[given], bb[given], short[given])
            limited = limited & ~given
    jobs, profiles = [], {}
    for rec, sub, w, n, b, c, m, g in zip(kept, subtimes, walls, procs, bb.tolist(), cpu.tolist(), com.tolist(),
                                          given.tolist()):
        pname = str(rec.job_number)
        jobs.append(WorkloadJob(rec.job_number, sub, w, int(n), pname))
        if profile_type == "delay":
            profiles[pname] = {"type": "delay", "delay": delay_of(rec.run_time, delay_grain), "bb": b}
        else:
            profiles[pname] = {"type": "parallel_homogeneous", "cpu": c, "com": m, "bb": b}
        if bb_given is not None:
            profiles[pname]["bb_source"] = (bb_source or {}).get(rec.job_number, "trace") if g else "model"
    desc = (f"{len(jobs)} jobs from {trace_kind} job number {jobs[0].id} to {jobs[-1].id} inclusive"
            if jobs else "0 jobs")
    wl = Workload(name, desc, int(nb_res), jobs, profiles)
    return Conversion(wl, sel, dropped, int((short & ~given).sum()), int(limited.sum()),
                      int((res > nb_res).sum()), int(given.sum()), int((bb[given] > model.bb_capacity).sum()))


def scale_records(records: Iterable[SWFRecord], *, width: int = 1, speedup: float = 1.0,
                  days: float | None = None) -> Iterable[SWFRecord]:
    """A trace rescaled for a larger machine (`benchmarks/bench_platform_scale.py`): every record's
    requested and allocated processors × `width` (unknown ones, <= 0, left as they are), its submission time / `speedup`,
    and with `days` only the records submitted within that many days of the first one, after the speed-up
    (the iteration stops at the first later one). Raises ValueError for width < 1 or speedup <= 0."""
    if width < 1 or not speedup > 0:
        raise ValueError(f"width must be >= 1 and speedup > 0 (got {width}, {speedup})")
    first = None
    for rec in records:
        first = rec.submit_time if first is None else first
        if days is not None and (rec.submit_time - first) / speedup > days * 86400:
            return
        yield replace(
            rec, requested_processors=rec.requested_processors * width if rec.requested_processors > 0
            else rec.requested_processors,
            allocated_processors=rec.allocated_processors * width if rec.allocated_processors > 0
            else rec.allocated_processors,
            submit_time=rec.submit_time / speedup if speedup != 1 else rec.submit_time)


def scale_com(workload: Workload, width: int) -> None:
    """Divide every profile's `com` (bytes between each pair of hosts) by `width`, rounded, in place: a job
    made `width` times wider then sends as many bytes per node as at width 1 (its all-to-all has `width`
    times more peers)."""
    if width > 1:
        for prof in workload.profiles.values():
            if "com" in prof:
                prof["com"] = round(prof["com"] / width)


def convert_swf(path: str | Path, *, name: str | None = None, width: int = 1, speedup: float = 1.0,
                days: float | None = None, **kwargs) -> Conversion:
    """Convert the SWF file at `path` (see :func:`convert_records`; `name` defaults to the file
    name without ``.swf`` or ``.swf.gz``, as the artifact), rescaled for a larger machine when `width`,
    `speedup` or `days` say so (`scale_records`, then `scale_com`). Raises InputError for a malformed
    trace, ValueError for a bad scaling."""
    path = Path(path)
    stem = Path(path.name.removesuffix(".gz")).stem
    return convert_trace(iter_swf(path), name=name or stem, source=str(path), width=width, speedup=speedup,
                         days=days, **kwargs)


def convert_trace(records: Iterable[SWFRecord], *, name: str, width: int = 1, speedup: float = 1.0,
                  days: float | None = None, **kwargs) -> Conversion:
    """Records of any trace (SWF, Slurm accounting: `burstbuffer.workloads.sacct`) → workload: rescaled for a
    larger machine when `width`, `speedup` or `days` say so (`scale_records`), converted (`convert_records`,
    which takes the other keyword arguments), then `scale_com`. The one record → workload path of the
    readers. Raises InputError for a malformed trace, ValueError for a bad scaling."""
    if width != 1 or speedup != 1 or days is not None:
        records = scale_records(records, width=width, speedup=speedup, days=days)
    conv = convert_records(records, name=name, **kwargs)
    scale_com(conv.workload, width)
    return conv
