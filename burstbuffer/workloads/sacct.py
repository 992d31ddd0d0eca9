"""Reader of Slurm accounting dumps (``sacct --parsable2``, or CSV with a column map) → job records
(docs/inputs-traces.md).

A dump is text: a header line naming the columns, then one job per line, fields separated by ``|``
(``sacct --parsable2``) or ``,`` (another export, read with the csv module). Each job becomes an
:class:`~burstbuffer.workloads.swf.SWFRecord` — the record the SWF reader yields — so the SWF path's
selection, rescaling and conversion (`burstbuffer.workloads.convert.convert_trace`) apply unchanged:

=====================  ==========================================================================
record field           from the dump
=====================  ==========================================================================
job_number             ``JobIDRaw`` (or ``JobID``): must be an integer (an array task ``12_3`` is not:
                       use ``JobIDRaw``)
submit_time            ``Submit`` − earliest ``Submit`` of the jobs read + 1 (s)
wait_time, run_time    ``Start`` − ``Submit``, ``End`` − ``Start`` (s)
requested_time         ``Timelimit`` (``[D-]HH:MM:SS``, ``MM:SS``, ``MM``) or ``TimelimitRaw`` (minutes) × 60
requested_processors   ``NNodes`` (or ``AllocNodes``/``ReqNodes``); with `cores_per_node`,
                       ⌈``NCPUS`` (or ``AllocCPUS``/``ReqCPUS``) / cores_per_node⌉
status                 1 (COMPLETED), 0 otherwise (SWF's codes, informative only)
=====================  ==========================================================================

Times are ``YYYY-MM-DDTHH:MM:SS`` (sacct's default format, local time without zone: read as UTC, so a
daylight-saving change inside the dump shifts the jobs across it by an hour) or numbers of seconds.
Rows are sorted by submit time (stable; sacct orders by job id).

Rows dropped before the SWF filters, counted by reason: job steps (a JobID with a ``.``: use ``sacct -X``),
jobs cancelled before they started (``CANCELLED…`` with no ``Start``, or
with ``Start`` = ``End``: Slurm's record of a job cancelled while pending), jobs not ended (no ``End``: pending or
running when the dump was taken) and jobs with no time limit (``UNLIMITED``, ``Partition_Limit``).

The burst-buffer request: the ``bb/<plugin>`` TRES of ``ReqTRES`` (else ``AllocTRES``), summed over plugins.
Slurm keeps it in MB and sacct prints it with a K/M/G/T/P suffix in powers of 1024 (Slurm's
``slurmdb_make_tres_string_from_simple`` → ``convert_num_unit(count, UNIT_MEGA)``); a bare number is MB.
Per node: ⌈bytes / nodes⌉.

Every bad line raises :class:`~burstbuffer.errors.InputError` naming the file, the line and the reason.
"""
from __future__ import annotations

import csv
import io
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..errors import InputError
from .swf import SWFRecord, check_ranges

#: The command line that produces what `read_sacct` expects (docs/inputs-traces.md).
SACCT_COMMAND = ("sacct --allusers --allocations --parsable2 --starttime 2026-01-01 --endtime 2026-02-01 "
                 "--format JobIDRaw,Submit,Start,End,TimelimitRaw,NNodes,NCPUS,State,ReqTRES,AllocTRES")

#: Our name of each column → the sacct names accepted for it, first found wins.
COLUMNS = {
    "job_id": ("JobIDRaw", "JobID"),
    "submit": ("Submit",),
    "start": ("Start",),
    "end": ("End",),
    "timelimit": ("Timelimit", "TimelimitRaw"),
    "nodes": ("NNodes", "AllocNodes", "ReqNodes"),
    "cpus": ("NCPUS", "AllocCPUS", "ReqCPUS"),
    "state": ("State",),
    "req_tres": ("ReqTRES",),
    "alloc_tres": ("AllocTRES",),
}
REQUIRED = ("job_id", "submit", "start", "end", "timelimit", "state")
_NO_TIME = {"", "unknown", "none", "n/a"}
_NO_LIMIT = {"unlimited", "partition_limit", "infinite", "invalid", "none", ""}
_SUFFIX = {"": 1024 ** 2, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3, "T": 1024 ** 4, "P": 1024 ** 5,
           "E": 1024 ** 6}


@dataclass
class SacctTrace:
    """What `read_sacct` found.

    Attributes:
        records: one SWF record per kept row, sorted by submit time; `line` is the dump's line number.
        bb: job number → BB request per node [bytes] for the jobs whose TRES give one.
        bb_source: job number → the column it came from (``ReqTRES`` or ``AllocTRES``).
        dropped: reason → rows dropped before the SWF filters (steps, cancelled before start, not ended, no
            time limit).
        rows: data rows read.
    """

    records: list[SWFRecord] = field(default_factory=list)
    bb: dict[int, int] = field(default_factory=dict)
    bb_source: dict[int, str] = field(default_factory=dict)
    dropped: Counter = field(default_factory=Counter)
    rows: int = 0


def parse_column_map(text: str | None) -> dict[str, str]:
    """``key=Column,key=Column`` (keys of `COLUMNS`) → {key: column}. Raises InputError("--columns", …)."""
    out: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        key, eq, col = part.partition("=")
        key, col = key.strip(), col.strip()
        if not eq or not col:
            raise InputError("--columns", part.strip(), "expected KEY=COLUMN")
        if key not in COLUMNS:
            raise InputError("--columns", key, "unknown key; one of " + ", ".join(COLUMNS))
        out[key] = col
    return out


#: the seconds since the epoch of 0001-01-01 and 9999-12-31T23:59:59 (UTC): what sacct can print
_EPOCH_RANGE = (datetime(1, 1, 1, tzinfo=timezone.utc).timestamp(),
                datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc).timestamp())


def parse_time(text: str) -> float | None:
    """Seconds since the epoch of a sacct time (``2026-01-05T10:11:12``, read as UTC) or a number of
    seconds; None for ``Unknown``/``None``/empty. Raises ValueError otherwise (also for a number outside
    the years 1 to 9999)."""
    s = text.strip()
    if s.lower() in _NO_TIME:
        return None
    try:
        v = float(s)
    except ValueError:
        return datetime.fromisoformat(s).replace(tzinfo=timezone.utc).timestamp()
    if not _EPOCH_RANGE[0] <= v <= _EPOCH_RANGE[1]:     # nan, inf, or not a date (year 1 to 9999)
        raise ValueError(s)
    return v


def parse_duration(text: str) -> float | None:
    """Seconds of a Slurm time limit: ``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``,
    ``D-HH:MM:SS`` (Slurm's formats; a bare number is minutes, as ``TimelimitRaw``); None for
    ``UNLIMITED``/``Partition_Limit``. Raises ValueError otherwise."""
    s = text.strip()
    if s.lower() in _NO_LIMIT:
        return None
    m = re.fullmatch(r"(?:(\d+)-)?(\d+(?:\.\d+)?)(?::(\d+(?:\.\d+)?))?(?::(\d+(?:\.\d+)?))?", s)
    if not m:
        raise ValueError(s)
    days, a, b, c = m.groups()
    if days is not None and len(days) > 15:   # beyond any clock (and a float's integers)
        raise ValueError(f"{s} (out of range)")
    if days is not None:                      # D-HH[:MM[:SS]]
        h, mi, se = float(a), float(b or 0), float(c or 0)
        v = int(days) * 86400 + h * 3600 + mi * 60 + se
    elif c is not None:                       # HH:MM:SS
        v = float(a) * 3600 + float(b) * 60 + float(c)
    elif b is not None:                       # MM:SS
        v = float(a) * 60 + float(b)
    else:
        v = float(a) * 60                     # MM
    if not math.isfinite(v):
        raise ValueError(f"{s} (out of range)")
    return v


def parse_bb_tres(text: str) -> int | None:
    """Bytes of the ``bb/<plugin>=<count>`` entries of a TRES string (``cpu=4,mem=8G,bb/datawarp=100G``),
    summed; None if there is none. Counts are MB with an optional K/M/G/T/P suffix in powers of 1024.
    Raises ValueError for a bb entry that is not a number or a total of `MAX_BYTES` or more."""
    from ..platforms.units import MAX_BYTES
    total = None
    for part in text.split(","):
        name, _, count = part.strip().partition("=")
        if not name.lower().startswith("bb/"):
            continue
        m = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGTPE]?)", count.strip(), re.IGNORECASE)
        if not m:
            raise ValueError(f"{name}={count}")
        v = float(m.group(1)) * _SUFFIX[m.group(2).upper()]
        if not v < MAX_BYTES:             # also catches inf
            raise ValueError(f"{name}={count} (out of range: at most {MAX_BYTES - 1} bytes)")
        total = (total or 0) + round(v)
        if total >= MAX_BYTES:
            raise ValueError(f"{text} (out of range: at most {MAX_BYTES - 1} bytes in all)")
    return total


def _open_text(path: str | Path) -> str:
    from ..fileio import read_input
    return read_input(path, "file", errors="replace")


def read_sacct(path: str | Path, *, cores_per_node: int | None = None,
               columns: dict[str, str] | None = None) -> SacctTrace:
    """Read a ``sacct --parsable2`` dump (``|``-separated) or a CSV export (``,``, with `columns` mapping our
    keys — `COLUMNS` — to its header's names) into SWF records (module docstring).

    `cores_per_node`: nodes = ⌈CPUs / cores_per_node⌉ instead of the nodes column.
    Raises InputError(path, item, reason): an unreadable file, a header without a needed column ("header"),
    a row with the wrong number of fields or an unreadable value ("line N").
    """
    source = str(path)
    text = _open_text(path)
    lines = text.splitlines()
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None:
        raise InputError(source, "file", "empty: no header line")
    sep = "|" if "|" in lines[first] else ","
    if sep == "|":
        rows = [(i + 1, ln.split("|")) for i, ln in enumerate(lines) if ln.strip()]
    else:
        rows = []
        for i, ln in enumerate(lines):
            if ln.strip():
                rows.extend((i + 1, r) for r in csv.reader(io.StringIO(ln)))
    header_line, header = rows[0]
    header = [h.strip() for h in header]
    where = {h: k for k, h in enumerate(header)}
    colmap = dict(columns or {})
    idx: dict[str, int] = {}
    for key, names in COLUMNS.items():
        for name in ([colmap[key]] if key in colmap else names):
            if name in where:
                idx[key] = where[name]
                break
    need = list(REQUIRED) + (["cpus"] if cores_per_node else ["nodes"])
    missing = [k for k in need if k not in idx]
    if missing:
        raise InputError(source, "header", "no column for " + ", ".join(
            f"{k} ({colmap.get(k) or '/'.join(COLUMNS[k])})" for k in missing)
            + (" (with --cores-per-node the CPUs column is used)" if cores_per_node else "")
            + ("; is this sacct --parsable2 output (or give --columns)?" if len(missing) == len(need) else ""))
    out = SacctTrace()
    pending: list[tuple[float, int, dict]] = []
    seen: set[int] = set()
    for lineno, fields in rows[1:]:
        out.rows += 1
        if len(fields) != len(header):
            raise InputError(source, f"line {lineno}", f"expected {len(header)} {sep!r}-separated fields "
                             f"(as the header), found {len(fields)}")

        def get(key: str) -> str:
            return fields[idx[key]].strip() if key in idx else ""

        jid_text = get("job_id")
        if "." in jid_text:
            out.dropped["job step rows (use sacct -X)"] += 1
            continue
        if not re.fullmatch(r"\d+", jid_text):
            raise InputError(source, f"line {lineno}", f"job id {jid_text!r} is not an integer (array or "
                             "heterogeneous job: dump JobIDRaw)")
        jid = int(jid_text)
        if jid in seen:
            raise InputError(source, f"line {lineno}", f"job id {jid} appears twice")
        seen.add(jid)
        state = get("state")
        times = {}
        for key in ("submit", "start", "end"):
            try:
                times[key] = parse_time(get(key))
            except ValueError:
                raise InputError(source, f"line {lineno}", f"{key} is not a time: {get(key)!r} "
                                 "(expected YYYY-MM-DDTHH:MM:SS or seconds)") from None
        if times["submit"] is None:
            raise InputError(source, f"line {lineno}", f"job {jid} has no submit time")
        if times["start"] is None:
            out.dropped["cancelled before start" if state.upper().startswith("CANCELLED")
                        else f"not started ({state.split()[0] if state else 'no state'})"] += 1
            continue
        if state.upper().startswith("CANCELLED") and times["end"] is not None and times["end"] <= times["start"]:
            out.dropped["cancelled before start"] += 1     # Slurm sets Start = End for a job cancelled pending
            continue
        if times["end"] is None:
            out.dropped[f"not ended ({state.split()[0] if state else 'no state'})"] += 1
            continue
        if times["start"] < times["submit"] or times["end"] < times["start"]:
            raise InputError(source, f"line {lineno}", f"job {jid}: times out of order (submit {get('submit')}, "
                             f"start {get('start')}, end {get('end')})")
        try:
            limit = parse_duration(get("timelimit"))
        except ValueError:
            raise InputError(source, f"line {lineno}", f"time limit is not a Slurm duration: "
                             f"{get('timelimit')!r}") from None
        if limit is None:
            out.dropped["no time limit (UNLIMITED)"] += 1
            continue
        key = "cpus" if cores_per_node else "nodes"
        if not re.fullmatch(r"-?\d+", get(key)):
            raise InputError(source, f"line {lineno}", f"{key} is not an integer: {get(key)!r}")
        count = int(get(key))
        if count > 2 ** 31 - 1:
            raise InputError(source, f"line {lineno}", f"{key} is out of range: {count}")
        nodes = -(-count // cores_per_node) if cores_per_node and count > 0 else count
        bb, src = None, ""
        for col, name in (("req_tres", "ReqTRES"), ("alloc_tres", "AllocTRES")):
            try:
                bb = parse_bb_tres(get(col))
            except ValueError as exc:
                raise InputError(source, f"line {lineno}", f"{name}: burst-buffer TRES is not a size: {exc}") \
                    from None
            if bb is not None:
                src = name
                break
        pending.append((times["submit"], len(pending), dict(
            jid=jid, submit=times["submit"], start=times["start"], end=times["end"], limit=limit, nodes=nodes,
            status=1 if state.upper().startswith("COMPLETED") else 0, bb=bb, src=src, line=lineno)))
    pending.sort(key=lambda t: (t[0], t[1]))
    base = pending[0][0] if pending else 0.0
    for _, _, r in pending:
        rel = r["submit"] - base + 1
        rel = int(rel) if float(rel).is_integer() else rel
        run = r["end"] - r["start"]
        wait = r["start"] - r["submit"]
        run = int(run) if float(run).is_integer() else run
        wait = int(wait) if float(wait).is_integer() else wait
        limit = int(r["limit"]) if float(r["limit"]).is_integer() else r["limit"]
        fields = (r["jid"], rel, wait, run, r["nodes"], -1, -1, r["nodes"], limit, -1, r["status"], -1, -1, -1,
                  -1, -1, -1, -1)
        check_ranges(fields, source, r["line"])     # the SWF reader's bounds (the BB model's flops in int64)
        out.records.append(SWFRecord(*fields, line=r["line"]))
        if r["bb"] is not None and r["nodes"] > 0:
            out.bb[r["jid"]] = -(-r["bb"] // r["nodes"])
            out.bb_source[r["jid"]] = r["src"]
    return out
