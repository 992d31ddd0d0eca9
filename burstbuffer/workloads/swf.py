"""Reader for the Standard Workload Format (SWF) of the Parallel Workloads Archive.

An SWF trace is text: header/comment lines start with ``;``; every other non-blank line is one
job record of 18 whitespace-separated numeric fields, ``-1`` meaning "unknown"
(https://www.cs.huji.ac.il/labs/parallel/workload/swf.html). docs/workload.md adds the selection the
paper's artifact applies before converting a trace to a Batsim workload: records whose job
number, submit time, requested time, run time or requested processors is ≤ 0 are ignored, and
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

#: docs/workload.md filters, in the order the artifact tests them: (field, reason counted when it is ≤ 0).
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
    for name, v in zip(SWF_FIELDS, values):
        if abs(v) > _LIMITS.get(name, 2 ** 53):
            raise InputError(source, f"line {lineno}", f"field {name} is out of range: {v!r} (at most "
                             f"{_LIMITS.get(name, 2 ** 53):g})")
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


def read_swf(path: str | Path) -> list[SWFRecord]:
    """All records of an SWF file as a list (see :func:`iter_swf`)."""
    return list(iter_swf(path))


@dataclass
class Selection:
    """Records kept by :func:`select_records` and what was ignored.

    Attributes:
        kept: the kept records, in file order.
        subtimes: per kept record, its submit time shifted so the first kept job is at t = 1
            (seconds; docs/workload.md, the artifact's ``submit_time - (first_submit_time - 1)``).
        ignored: reason → number of records ignored for it (docs/workload.md filters).
        scanned: number of records examined (kept + ignored), after `from_job`.
        skipped: number of records before `from_job` (not examined).
    """

    kept: list[SWFRecord] = field(default_factory=list)
    subtimes: list[int | float] = field(default_factory=list)
    ignored: Counter = field(default_factory=Counter)
    scanned: int = 0
    skipped: int = 0

    @property
    def nb_ignored(self) -> int:
        return sum(self.ignored.values())

    def summary(self) -> str:
        """One line: "kept K of S records (ignored I: reason n, …)"."""
        why = ", ".join(f"{r}: {n}" for r, n in sorted(self.ignored.items()))
        return (f"kept {len(self.kept)} of {self.scanned} records"
                + (f" (ignored {self.nb_ignored}: {why})" if self.ignored else " (none ignored)")
                + (f"; {self.skipped} records before the first job number asked for" if self.skipped else ""))


def ignore_reason(rec: SWFRecord) -> str | None:
    """The docs/workload.md reason to ignore `rec` (first failing filter, artifact order), or None to keep it."""
    for name, reason in FILTERS:
        if getattr(rec, name) <= 0:
            return reason
    return None


def select_records(records: Iterable[SWFRecord], *, from_job: int = 0,
                   max_records: int | None = None, source: str = "<swf>") -> Selection:
    """Apply the filters and time shift of docs/workload.md to SWF records.

    Records with job number < `from_job` are skipped. Then at most `max_records` records are
    examined (kept *or* ignored — the artifact's ``num_jobs`` counts SWF records, so
    ``from_job=K, max_records=N`` selects the records numbered K … K+N−1 of a trace whose job
    numbers are consecutive); each is ignored if its job number, submit time, requested time,
    run time or requested processors is ≤ 0 (counted by reason), else kept. Submit times are
    shifted so that the first kept record is submitted at t = 1 s. Raises InputError(source, "line N", …)
    if a kept record is submitted before the previous kept one (the SWF standard orders records by
    submit time; a shifted time would otherwise be negative).
    """
    sel = Selection()
    first_submit = None
    for rec in records:
        if rec.job_number < from_job:
            sel.skipped += 1
            continue
        if max_records is not None and sel.scanned >= max_records:
            break
        sel.scanned += 1
        why = ignore_reason(rec)
        if why is not None:
            sel.ignored[why] += 1
            continue
        if first_submit is None:
            first_submit = rec.submit_time
        elif rec.submit_time < sel.kept[-1].submit_time:
            raise InputError(source, f"line {rec.line}", f"submit_time {rec.submit_time} is earlier than the previous "
                             f"job's {sel.kept[-1].submit_time} (SWF records must be in submission order)")
        sel.kept.append(rec)
        sel.subtimes.append(rec.submit_time - first_submit + 1)
    return sel
