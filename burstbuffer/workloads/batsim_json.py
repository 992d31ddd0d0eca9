"""Batsim workload JSON: write one atomically, read and validate one — the project's one workload reader
(docs/workload.md; the rules of a job and a job profile are in `batsim_rules`).

Format (Batsim's "input-workload" page, plus this project's `bb` job profile field)::

    {"name": str, "description": str, "nb_res": int,
     "jobs": [{"id": int|str, "subtime": s, "walltime": s, "res": int, "profile": str}, ...],
     "profiles": {name: {"type": "parallel_homogeneous", "cpu": flops per host,
                         "com": bytes between each pair of hosts, "bb": bytes per node}, ...}}

Any missing or mistyped field raises InputError(file, "job <id>" / "profile <name>" / "workload",
reason), whose str() is one line.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..fileio import atomic_write_text
from ..jsonvalues import is_int as _is_int
from ..jsonvalues import excerpt
from ..jsonvalues import kind as _kind
from ..records import Record
from .batsim_rules import DefinitionError, check_job, check_profile, composed_cycle


# Record classes (`records.Record`), not data classes: the embedded simulator reads its workloads here, and
# this module is on its start-up path (docs/startup.md).

class WorkloadJob(Record):
    """A job entry of a workload file (not the scheduler's request `burstbuffer.schedulers.base.Job`,
    which Batsim's JOB_SUBMITTED becomes): `id` as written in the file (int or str; Batsim calls it ``w0!<id>``),
    `subtime` and `walltime` in seconds (walltime −1 = none), `res` requested processors,
    `profile` the profile name.

    Immutable (assigning a field raises AttributeError), hashed and compared by its fields."""

    __slots__ = ("id", "subtime", "walltime", "res", "profile")
    _fields = __slots__

    def __init__(self, id: int | str, subtime: float, walltime: float, res: int, profile: str):  # noqa: A002
        init = object.__setattr__
        init(self, "id", id)
        init(self, "subtime", subtime)
        init(self, "walltime", walltime)
        init(self, "res", res)
        init(self, "profile", profile)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r}")

    def __hash__(self) -> int:
        return hash((self.id, self.subtime, self.walltime, self.res, self.profile))

    def __reduce__(self):
        return WorkloadJob, (self.id, self.subtime, self.walltime, self.res, self.profile)


class Workload(Record):
    """A Batsim workload.

    Attributes:
        name, description: free text (the workload's name is not Batsim's `w0`).
        nb_res: number of compute resources the workload was made for.
        jobs: static jobs, in file order.
        profiles: profile name → profile dict as in the file (for `parallel_homogeneous`:
            `cpu` flops per node, `com` bytes, `bb` bytes per node).
        source: the file it was read from ("" if built in memory).
        job_objects: the job objects as in the file, in file order, with their extra fields (what
            the simulator forwards in JOB_SUBMITTED); empty if built in memory.
    """

    #: compared by == and shown by repr (not `job_objects`, nor the look-up table of `job`)
    _fields = ("name", "description", "nb_res", "jobs", "profiles", "source")

    def __init__(self, name: str, description: str, nb_res: int, jobs: list[WorkloadJob],
                 profiles: dict[str, dict[str, Any]], source: str = "",
                 job_objects: list[dict[str, Any]] | None = None, _by_id: dict | None = None):
        self.name = name
        self.description = description
        self.nb_res = nb_res
        self.jobs = jobs
        self.profiles = profiles
        self.source = source
        self.job_objects = [] if job_objects is None else job_objects
        self._by_id = {} if _by_id is None else _by_id

    def profile_of(self, job: WorkloadJob) -> dict[str, Any]:
        """The profile dict of `job`."""
        return self.profiles[job.profile]

    def bb_of(self, job: WorkloadJob) -> int:
        """Per-node BB request of `job` in bytes (0 if its profile has no `bb`)."""
        return int(self.profiles[job.profile].get("bb", 0))

    def job(self, job_id: int | str) -> WorkloadJob:
        """The job with this id (KeyError if none)."""
        if not self._by_id:
            self._by_id.update((j.id, j) for j in self.jobs)
        return self._by_id[job_id]

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (only the profiles some job uses, in job order)."""
        used: dict[str, dict[str, Any]] = {}
        for j in self.jobs:
            if j.profile not in used:
                used[j.profile] = self.profiles[j.profile]
        return {
            "name": self.name,
            "description": self.description,
            "nb_res": self.nb_res,
            "jobs": [{"id": j.id, "subtime": j.subtime, "walltime": j.walltime, "res": j.res,
                      "profile": j.profile} for j in self.jobs],
            "profiles": used,
        }


def _dumps(doc: dict[str, Any]) -> str:
    """Compact JSON with one job / one profile per line (diff-friendly, ~40 % of indent=2)."""
    head = {k: v for k, v in doc.items() if k not in ("jobs", "profiles")}
    out = ["{"]
    for k, v in head.items():
        out.append(f"{json.dumps(k)}: {json.dumps(v)},")
    jobs = doc.get("jobs", [])
    out.append('"jobs": [')
    out.append(",\n".join("  " + json.dumps(j, separators=(", ", ": ")) for j in jobs))
    out.append("],")
    profiles = doc.get("profiles", {})
    out.append('"profiles": {')
    out.append(",\n".join(f"  {json.dumps(str(k))}: {json.dumps(v, separators=(', ', ': '))}"
                          for k, v in profiles.items()))
    out.append("}")
    out.append("}")
    return "\n".join(line for line in out if line) + "\n"


def write_workload(path: str | Path, workload: Workload | dict[str, Any]) -> Path:
    """Write `workload` (a Workload or its dict) to `path` atomically: a temporary file in the
    same folder, fsync, then rename over `path`. Creates the folder. Returns the path.
    Raises InputError(path, "file", reason) if it cannot be written."""
    path = Path(path)
    doc = workload.to_dict() if isinstance(workload, Workload) else workload
    text = _dumps(doc)
    return atomic_write_text(path, text)


# --- reading and validation ---------------------------------------------------------------------
def validate_profile(source: str, name: str, prof: Any, *, require_bb: bool = True, simulated: bool = False,
                     known: dict | None = None) -> None:
    """Check one profile (`batsim_rules.check_profile`; `require_bb`: a ``parallel_homogeneous`` profile
    needs an integer ``bb`` ≥ 0, bytes per node). Raises InputError(source, "profile <name>", reason)."""
    try:
        check_profile(name, prof, known, simulated=simulated, require_bb=require_bb)
    except DefinitionError as exc:
        raise InputError(source, exc.item, exc.reason) from None


def workload_from_dict(doc: Any, source: str = "<workload>", *, require_bb: bool = True,
                       simulated: bool = False) -> Workload:
    """Validate a parsed workload document and build a :class:`Workload` (docs/workload.md).

    Checks: top level is an object with `nb_res` (int > 0), `jobs` (list) and `profiles`
    (object); `name` and `description`, if present, are strings; every profile passes
    `batsim_rules.check_profile` (`require_bb`, `simulated`: see there; ``composed`` profiles name
    profiles of the file, and none contains itself, directly or through others: `batsim_rules.composed_cycle`);
    every job passes `batsim_rules.check_job`, names a profile of the file and
    has an id no other job has (ids compared as Batsim does, as strings).
    Raises InputError(source, item, reason) at the first problem, item "workload", "profile <name>",
    "job <id>" or "job #<index>" (a job without a usable id).
    """
    if not isinstance(doc, dict):
        raise InputError(source, "workload", f"must be a JSON object, not {_kind(doc)}")
    for key in ("nb_res", "jobs", "profiles"):
        if key not in doc:
            raise InputError(source, "workload", f"missing field {key!r}")
    nb_res = doc["nb_res"]
    if not _is_int(nb_res) or nb_res <= 0:
        raise InputError(source, "workload", f"field 'nb_res' must be a positive integer, not {nb_res!r}")
    jobs_doc, profs = doc["jobs"], doc["profiles"]
    if not isinstance(jobs_doc, list):
        raise InputError(source, "workload", f"field 'jobs' must be a list, not {_kind(jobs_doc)}")
    if not isinstance(profs, dict):
        raise InputError(source, "workload", f"field 'profiles' must be an object, not {_kind(profs)}")
    for key in ("name", "description"):
        if key in doc and not isinstance(doc[key], str):
            raise InputError(source, "workload", f"field {key!r} must be a string, not {_kind(doc[key])}")
    for pname, prof in profs.items():
        validate_profile(source, pname, prof, require_bb=require_bb, simulated=simulated, known=profs)
    cycle = composed_cycle(profs)
    if cycle is not None:
        raise InputError(source, f"profile {excerpt(cycle[0], 60)}",
                         "composed profiles contain one another: " + " -> ".join(excerpt(n, 40) for n in cycle))
    jobs: list[WorkloadJob] = []
    seen: set[str] = set()
    try:
        for k, jd in enumerate(jobs_doc):
            jid, sub, wall, res, prof = check_job(jd, f"job #{k}")
            item = f"job {excerpt(jid, 60)}"
            if str(jid) in seen:
                raise DefinitionError(item, "duplicate job id")
            seen.add(str(jid))
            if prof not in profs:
                raise DefinitionError(item, f"profile {prof!r} is not defined in 'profiles'")
            jobs.append(WorkloadJob(jid, sub, wall, res, prof))
    except DefinitionError as exc:
        raise InputError(source, exc.item, exc.reason) from None
    return Workload(doc.get("name", ""), doc.get("description", ""), int(nb_res), jobs, profs, source,
                    job_objects=jobs_doc)


def load_workload(path: str | Path, *, require_bb: bool = True, simulated: bool = False,
                  loads=json.loads) -> Workload:
    """Read and validate the Batsim workload JSON at `path` (see :func:`workload_from_dict`): the one
    reader of workload files, for the CLI, the scheduler side and the embedded simulator. `loads`: the JSON
    reader (the embedded simulator gives its own, which reads numbers as Batsim does).

    Raises InputError(path, item, reason): a missing file ("workload", "file not found"), an
    unreadable one ("file"), invalid JSON ("line L column C"), or a missing/mistyped field of the
    workload, a job or a profile.
    """
    source = str(path)
    from ..fileio import read_input
    text = read_input(path, "workload")
    try:
        doc = loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(source, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}") from None
    except ValueError as exc:  # a number the reader rejects (too big)
        raise InputError(source, "workload", f"invalid JSON: {exc}") from None
    except RecursionError:
        raise InputError(source, "workload", "invalid JSON: nested too deeply") from None
    return workload_from_dict(doc, source, require_bb=require_bb, simulated=simulated)
