"""Reader for the Standard Workload Format (SWF) of the Parallel Workloads Archive.

An SWF trace is text: header/comment lines start with ``;``; every other non-blank line is one
job record of 18 whitespace-separated numeric fields, ``-1`` meaning "unknown"
(https://www.cs.huji.ac.il/labs/parallel/workload/swf.html). Two rules turn records into jobs
(docs/workload.md §2):

- ``"archive"`` (the default): the format's definition. 0 is a time (the first job of most archive traces is
  submitted at t = 0), −1 is "missing". A record is ignored only when a field the job needs is missing: the
  submit time, the run time, the processors (the requested processors, else the allocated ones) or the
  walltime (the requested time; with a walltime factor F, max(requested time, F × run time) as Batsim's
  ``swf_to_batsim_workload_compute_only.py``). Submit times are shifted so that the first kept job is
  submitted at t = 0.
- ``"artifact"``: the paper artifact's converter, which the studies and the bundled workloads use: records
  whose job number, submit time, requested time, run time or requested processors is ≤ 0 are ignored, and
  submit times are shifted so that the first kept job is submitted at t = 1.

Every bad line raises :class:`~burstbuffer.errors.InputError` naming the file and the line.
"""
from __future__ import annotations

import gzip
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from ..errors import InputError

#: The 18 SWF fields, in file order (SWF definition, Parallel Workloads Archive).
SWF_FIELDS = (
    "job_number", "submit_time", "wait_time", "run_time", "allocated_processors",
    "average_cpu_time", "used_memory", "requested_processors", "requested_time",
    "requested_memory", "status", "user_id", "group_id", "executable", "queue", "partition",
    "preceding_job", "think_time",
)

#: The ways records become jobs (module docstring): the SWF definition's, and the paper artifact's.
RULES = ("archive", "artifact")

#: The artifact rule's filters, in the order the artifact tests them: (field, reason counted when it is ≤ 0).
FILTERS = (
    ("job_number", "job number <= 0"),
    ("submit_time", "submit time <= 0"),
    ("requested_time", "requested time <= 0"),
    ("run_time", "run time <= 0"),
    ("requested_processors", "requested processors <= 0"),
)


@dataclass(frozen=True, slots=True)
class SWFRecord:
    """One SWF job record. Times in seconds, memory in KB per processor (SWF units), -1 = unknown.

    Numbers are ints when written as integers in the file, floats otherwise. `line` is the
    1-based line number in the source file (0 if the record was not read from a file).
    """

    job_number: int
    submit_time: int | float
    wait_time: int | float
    run_time: int | float
    allocated_processors: int | float
    average_cpu_time: int | float
    used_memory: int | float
    requested_processors: int | float
    requested_time: int | float
    requested_memory: int | float
    status: int | float
    user_id: int | float
    group_id: int | float
    executable: int | float
    queue: int | float
    partition: int | float
    preceding_job: int | float
    think_time: int | float
    line: int = 0


#: Largest magnitude per SWF field: times up to 1e9 s (31 years: the BB model's flop counts stay in int64),
#: processor counts up to 2**31 - 1; any other field up to 2**53 (exact in a double).
_LIMITS = {**{f: 1e9 for f in ("submit_time", "wait_time", "run_time", "average_cpu_time", "requested_time",
                               "think_time")},
           **{f: 2 ** 31 - 1 for f in ("allocated_processors", "requested_processors")}}


def check_ranges(values, source: str, lineno: int) -> None:
    """Raise InputError(source, "line N", …) naming the first of `values` (an SWF record's 18 fields, in
    SWF_FIELDS order) whose magnitude exceeds its `_LIMITS` bound (every reader of records: SWF, sacct)."""
    for name, v in zip(SWF_FIELDS, values):
        if abs(v) > _LIMITS.get(name, 2 ** 53):
            raise InputError(source, f"line {lineno}", f"field {name} is out of range: {v!r} (at most "
                             f"{_LIMITS.get(name, 2 ** 53):g})")


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        v = float(text)          # raises ValueError for non-numeric text
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError(text) from None
        return v


def parse_swf_line(text: str, source: str = "<swf>", lineno: int = 0) -> SWFRecord | None:
    """Parse one line of an SWF file.

    Returns None for a blank line or a ``;`` header/comment line, else an :class:`SWFRecord`.
    Raises InputError(source, "line N", reason) if the line does not have exactly 18 fields or a
    field is not a number.
    """
    s = text.strip()
    if not s or s.startswith(";"):
        return None
    parts = s.split()
    if len(parts) != len(SWF_FIELDS):
        raise InputError(source, f"line {lineno}",
                         f"expected {len(SWF_FIELDS)} whitespace-separated SWF fields, found {len(parts)}")
    values = []
    for name, p in zip(SWF_FIELDS, parts):
        try:
            values.append(_number(p))
        except ValueError:
            raise InputError(source, f"line {lineno}", f"field {name} is not a number: {p!r}") from None
    check_ranges(values, source, lineno)
    if not isinstance(values[0], int):     # the job number names the job: an integer (SWF standard)
        raise InputError(source, f"line {lineno}", f"field {SWF_FIELDS[0]} is not an integer: {parts[0]!r}")
    return SWFRecord(*values, line=lineno)


def iter_swf(path: str | Path) -> Iterator[SWFRecord]:
    """Yield the records of the SWF file at `path`, in file order (header lines skipped).

    A name ending in ``.gz`` is read through gzip (the repository ships the KTH trace compressed).
    Raises InputError for an unreadable or corrupt file or a malformed line (file and line number named).
    """
    import io
    from ..fileio import open_input
    source = str(path)
    raw = open_input(path, "file")
    f = io.TextIOWrapper(gzip.GzipFile(fileobj=raw) if source.endswith(".gz") else raw, encoding="utf-8",
                         errors="replace")
    with f:
        lineno = 0
        try:
            for lineno, text in enumerate(f, 1):
                rec = parse_swf_line(text, source, lineno)
                if rec is not None:
                    yield rec
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(source, f"line {lineno + 1}", f"cannot decompress: {exc}") from None


#: The SWF header fields giving the machine's size, in the order `machine_size` prefers them: MaxProcs counts
#: processors, the unit of the records' processor fields (5 and 8); MaxNodes counts nodes.
SIZE_HEADERS = ("MaxProcs", "MaxNodes")


def swf_header(path: str | Path) -> dict[str, str]:
    """The header fields of the SWF file at `path`: its leading ``; Key: value`` comment lines (SWF definition,
    "header comments"), {Key: value} (text as written; the first of a repeated key). Reading stops at the first
    record. Raises InputError as `iter_swf` for an unreadable file."""
    import io
    from ..fileio import open_input
    source = str(path)
    raw = open_input(path, "file")
    f = io.TextIOWrapper(gzip.GzipFile(fileobj=raw) if source.endswith(".gz") else raw, encoding="utf-8",
                         errors="replace")
    out: dict[str, str] = {}
    with f:
        try:
            for text in f:
                s = text.strip()
                if not s:
                    continue
                if not s.startswith(";"):
                    break
                key, sep, value = s.lstrip(";").partition(":")
                if sep and key.strip() and " " not in key.strip():
                    out.setdefault(key.strip(), value.strip())
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(source, "header", f"cannot decompress: {exc}") from None
    return out


def machine_size(header: dict[str, str]) -> tuple[int, str] | None:
    """(size, the header field giving it) from an SWF header (`swf_header`): the first of `SIZE_HEADERS` that is
    a positive integer; None if none is."""
    for key in SIZE_HEADERS:
        try:
            n = int(header.get(key, ""))
        except ValueError:
            continue
        if n > 0:
            return n, key
    return None


def read_swf(path: str | Path) -> list[SWFRecord]:
    """All records of an SWF file as a list (see :func:`iter_swf`)."""
    return list(iter_swf(path))


@dataclass
class Selection:
    """Records kept by :func:`select_records` and what was ignored.

    Attributes:
        kept: the kept records, in file order.
        subtimes: per kept record, its submit time shifted so the first kept job is at t = `origin`
            (seconds; the artifact's ``submit_time - (first_submit_time - 1)`` with origin 1).
        walltimes: per kept record, its walltime (s): the requested time, or what the walltime factor gives.
        procs: per kept record, its processors: the requested ones, or (archive rule, requested missing) the
            allocated ones.
        ignored: reason → number of records ignored for it.
        filled: what → number of kept records with a field filled from another (e.g. processors from the
            allocated ones).
        scanned: number of records examined (kept + ignored), after `from_job`.
        skipped: number of records before `from_job` (not examined).
        origin: the first kept job's submit time (0 archive rule, 1 artifact rule).
        rule: the rule applied (`RULES`).
        hint: what to do when records were ignored for a missing field an option can supply ("" if none).
    """

    kept: list[SWFRecord] = field(default_factory=list)
    subtimes: list[int | float] = field(default_factory=list)
    walltimes: list[int | float] = field(default_factory=list)
    procs: list[int] = field(default_factory=list)
    ignored: Counter = field(default_factory=Counter)
    filled: Counter = field(default_factory=Counter)
    scanned: int = 0
    skipped: int = 0
    origin: int = 0
    rule: str = "archive"
    hint: str = ""
    #: kept records submitted before the kept record above them in the file (then all were sorted: `select_records`)
    out_of_order: int = 0

    @property
    def nb_ignored(self) -> int:
        return sum(self.ignored.values())

    def summary(self) -> str:
        """One line: "kept K of S records (ignored I: reason n, …)"."""
        why = ", ".join(f"{r}: {n}" for r, n in sorted(self.ignored.items()))
        filled = ", ".join(f"{r}: {n}" for r, n in sorted(self.filled.items()))
        return (f"kept {len(self.kept)} of {self.scanned} records"
                + (f" (ignored {self.nb_ignored}: {why})" if self.ignored else " (none ignored)")
                + (f"; {filled}" if filled else "")
                + (f"; {self.skipped} records before the first job number asked for" if self.skipped else "")
                + (f"; not in submit order ({self.out_of_order} records submitted before the one above them): "
                   "sorted by submit time, stably" if self.out_of_order else "")
                + (f"; {self.hint}" if self.hint else ""))


def ignore_reason(rec: SWFRecord) -> str | None:
    """The artifact rule's reason to ignore `rec` (first failing filter, artifact order), or None to keep it."""
    for name, reason in FILTERS:
        if getattr(rec, name) <= 0:
            return reason
    return None


#: The hint given when records lack a requested time and no walltime factor was given.
WALLTIME_HINT = ("give --walltime-factor F for walltime = max(requested time, F x run time), "
                 "F = 2 in Batsim's converter")


def archive_job(rec: SWFRecord, walltime_factor: float | None = None
                ) -> tuple[str | None, int | float, int, tuple[str, ...]]:
    """A record read by the SWF definition: (reason to ignore it or None, walltime s, processors, fields filled).

    −1 is "missing" and 0 a value (SWF definition, Parallel Workloads Archive). Ignored when the submit time or
    the run time is missing, when neither the requested (field 8) nor the allocated processors (field 5) are
    > 0, or when no walltime > 0 results: the requested time (field 9), or with `walltime_factor` F
    max(requested time, F × run time) (Batsim's ``swf_to_batsim_workload_compute_only.py``, its
    ``--job_walltime_factor``). `filled` names the fields taken from another (empty if none).
    """
    if rec.job_number < 0:
        return "job number missing", 0, 0, ()
    if rec.submit_time < 0:
        return "submit time missing", 0, 0, ()
    if rec.run_time < 0:
        return "run time missing", 0, 0, ()
    filled = []
    procs = rec.requested_processors
    if procs <= 0:
        if rec.allocated_processors <= 0:
            return "processors missing (requested and allocated)", 0, 0, ()
        procs = rec.allocated_processors
        filled.append("processors from the allocated ones (requested missing)")
    if int(procs) != procs:
        return "processors not an integer", 0, 0, ()
    wall = rec.requested_time if rec.requested_time > 0 else 0
    if walltime_factor is not None:
        wall = max(wall, walltime_factor * rec.run_time)
        if wall != rec.requested_time:
            filled.append("walltime from the walltime factor (requested time missing or shorter)")
    if isinstance(wall, float) and wall.is_integer():
        wall = int(wall)
    if wall <= 0:
        return ("requested time missing" if walltime_factor is None else "walltime <= 0 (no requested time, "
                "run time 0)"), 0, 0, ()
    return None, wall, int(procs), tuple(filled)


def select_records(records: Iterable[SWFRecord], *, from_job: int = 0,
                   max_records: int | None = None, source: str = "<swf>", rule: str = "archive",
                   walltime_factor: float | None = None) -> Selection:
    """Turn SWF records into jobs by `rule` (module docstring; docs/workload.md §2).

    Records with job number < `from_job` are skipped. Then at most `max_records` records are
    examined (kept *or* ignored — the artifact's ``num_jobs`` counts SWF records, so
    ``from_job=K, max_records=N`` selects the records numbered K … K+N−1 of a trace whose job
    numbers are consecutive). Rule ``"archive"``: a record is ignored when a field the job needs is missing
    (:func:`archive_job`; `walltime_factor` F gives walltime = max(requested time, F × run time)); the first
    kept record is submitted at t = 0 s. Rule ``"artifact"``: ignored if its job number, submit time, requested
    time, run time or requested processors is ≤ 0 (counted by reason); the first kept record is submitted at
    t = 1 s. The SWF standard orders records by submit time; kept records that are not (e.g. evalys'
    tests/easy_mediumWL_smallPF.swf) are sorted by submit time, stably (records submitted at the same time keep
    their file order), and `Selection.out_of_order` counts those found before the one above them. Raises
    ValueError for an unknown rule, a walltime factor ≤ 0 or one given with the artifact rule.
    """
    if rule not in RULES:
        raise ValueError(f"unknown SWF rule {rule!r} (one of {', '.join(RULES)})")
    if walltime_factor is not None and (rule == "artifact" or not walltime_factor > 0):
        raise ValueError("a walltime factor must be > 0 and goes with the archive rule, not the artifact's")
    sel = Selection(origin=1 if rule == "artifact" else 0, rule=rule)
    for rec in records:
        if rec.job_number < from_job:
            sel.skipped += 1
            continue
        if max_records is not None and sel.scanned >= max_records:
            break
        sel.scanned += 1
        if rule == "artifact":
            why, wall, procs, filled = ignore_reason(rec), rec.requested_time, rec.requested_processors, ()
        else:
            why, wall, procs, filled = archive_job(rec, walltime_factor)
        if why is not None:
            sel.ignored[why] += 1
            continue
        sel.filled.update(filled)
        if sel.kept and rec.submit_time < sel.kept[-1].submit_time:
            sel.out_of_order += 1
        sel.kept.append(rec)
        sel.walltimes.append(wall)
        sel.procs.append(int(procs))
    if sel.out_of_order:
        order = sorted(range(len(sel.kept)), key=lambda i: sel.kept[i].submit_time)   # stable
        sel.kept = [sel.kept[i] for i in order]
        sel.walltimes = [sel.walltimes[i] for i in order]
        sel.procs = [sel.procs[i] for i in order]
    first_submit = sel.kept[0].submit_time if sel.kept else 0
    sel.subtimes = [rec.submit_time - first_submit + sel.origin for rec in sel.kept]
    if sel.ignored.get("requested time missing"):
        sel.hint = WALLTIME_HINT
    return sel
