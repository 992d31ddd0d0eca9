"""Batsim workload JSON: write one atomically, read and validate one (docs/protocol.md, docs/workload.md).

Format (Batsim's "input-workload" page, plus this project's `bb` profile field)::

    {"name": str, "description": str, "nb_res": int,
     "jobs": [{"id": int|str, "subtime": s, "walltime": s, "res": int, "profile": str}, ...],
     "profiles": {name: {"type": "parallel_homogeneous", "cpu": flops per host,
                         "com": bytes between each pair of hosts, "bb": bytes per node}, ...}}

Any missing or mistyped field raises InputError(file, "job <id>" / "profile <name>" / "workload",
reason), whose str() is one line.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..fileio import atomic_write_text


@dataclass(frozen=True, slots=True)
class Job:
    """A static job: `id` as written in the file (int or str; Batsim calls it ``w0!<id>``),
    `subtime` and `walltime` in seconds (walltime −1 = none), `res` requested processors,
    `profile` the profile name."""

    id: int | str
    subtime: float
    walltime: float
    res: int
    profile: str


@dataclass
class Workload:
    """A Batsim workload.

    Attributes:
        name, description: free text (the workload's name is not Batsim's `w0`).
        nb_res: number of compute resources the workload was made for.
        jobs: static jobs, in file order.
        profiles: profile name → profile dict as in the file (for `parallel_homogeneous`:
            `cpu` flops per node, `com` bytes, `bb` bytes per node).
        source: the file it was read from ("" if built in memory).
    """

    name: str
    description: str
    nb_res: int
    jobs: list[Job]
    profiles: dict[str, dict[str, Any]]
    source: str = ""
    _by_id: dict = field(default_factory=dict, repr=False, compare=False)

    def profile_of(self, job: Job) -> dict[str, Any]:
        """The profile dict of `job`."""
        return self.profiles[job.profile]

    def bb_of(self, job: Job) -> int:
        """Per-node BB request of `job` in bytes (0 if its profile has no `bb`)."""
        return int(self.profiles[job.profile].get("bb", 0))

    def job(self, job_id: int | str) -> Job:
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
def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf")


def _is_int(v: Any) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())


def _kind(v: Any) -> str:
    return {bool: "a boolean", str: "a string", list: "a list", dict: "an object",
            type(None): "null"}.get(type(v), type(v).__name__)


#: Profile type → required numeric fields (Batsim input-workload page; `bb` is this project's).
PROFILE_FIELDS = {
    "parallel_homogeneous": ("cpu", "com"),
    "parallel_homogeneous_total": ("cpu", "com"),
    "delay": ("delay",),
    "parallel_homogeneous_pfs": ("bytes_to_read", "bytes_to_write"),
    "data_staging": ("nb_bytes",),
}


def validate_profile(source: str, name: str, prof: Any, *, require_bb: bool = True) -> None:
    """Check one profile; raise InputError(source, "profile <name>", reason) if it is bad.

    Every profile needs a string `type`; known types need their numeric fields ≥ 0
    (PROFILE_FIELDS); `parallel_homogeneous` profiles need an integer `bb` ≥ 0 (bytes per node)
    when `require_bb`.
    """
    item = f"profile {name}"
    if not isinstance(prof, dict):
        raise InputError(source, item, f"must be an object, not {_kind(prof)}")
    typ = prof.get("type")
    if not isinstance(typ, str):
        raise InputError(source, item, "missing field 'type'" if typ is None else
                         f"field 'type' must be a string, not {_kind(typ)}")
    for f in PROFILE_FIELDS.get(typ, ()):
        if f not in prof:
            raise InputError(source, item, f"missing field {f!r} ({typ} profile)")
        if not _is_num(prof[f]) or prof[f] < 0:
            raise InputError(source, item, f"field {f!r} must be a number >= 0, not {prof[f]!r}")
    if typ == "parallel_homogeneous" and require_bb:
        if "bb" not in prof:
            raise InputError(source, item, "missing field 'bb' (burst-buffer bytes per node)")
    if "bb" in prof and (not _is_int(prof["bb"]) or not _is_num(prof["bb"]) or prof["bb"] < 0):
        raise InputError(source, item, f"field 'bb' must be an integer number of bytes >= 0, not {prof['bb']!r}")


def workload_from_dict(doc: Any, source: str = "<workload>", *, require_bb: bool = True) -> Workload:
    """Validate a parsed workload document and build a :class:`Workload`.

    Checks: top level is an object with `nb_res` (int > 0), `jobs` (list) and `profiles`
    (object); every job has `id` (int or str, unique), `subtime` (number ≥ 0), `walltime`
    (number > 0, or −1 for none), `res` (int > 0) and `profile` (the name of a profile of the
    file); every profile passes :func:`validate_profile`. `name` and `description` are
    optional strings. Raises InputError(source, item, reason) at the first problem.
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
        validate_profile(source, pname, prof, require_bb=require_bb)
    jobs: list[Job] = []
    seen: set = set()
    for k, jd in enumerate(jobs_doc):
        if not isinstance(jd, dict):
            raise InputError(source, f"job #{k}", f"must be an object, not {_kind(jd)}")
        jid = jd.get("id")
        if jid is None:
            raise InputError(source, f"job #{k}", "missing field 'id'")
        if not (isinstance(jid, str) or (isinstance(jid, int) and not isinstance(jid, bool))):
            raise InputError(source, f"job #{k}", f"field 'id' must be an integer or a string, not {jid!r}")
        item = f"job {jid}"
        if jid in seen:
            raise InputError(source, item, "duplicate job id")
        seen.add(jid)
        for f in ("subtime", "walltime", "res", "profile"):
            if f not in jd:
                raise InputError(source, item, f"missing field {f!r}")
        sub, wall, res, prof = jd["subtime"], jd["walltime"], jd["res"], jd["profile"]
        if not _is_num(sub) or sub < 0:
            raise InputError(source, item, f"field 'subtime' must be a number >= 0, not {sub!r}")
        if not _is_num(wall) or not (wall > 0 or wall == -1):
            raise InputError(source, item, f"field 'walltime' must be a number > 0 (or -1), not {wall!r}")
        if not _is_int(res) or res <= 0:
            raise InputError(source, item, f"field 'res' must be a positive integer, not {res!r}")
        if not isinstance(prof, str):
            raise InputError(source, item, f"field 'profile' must be a string, not {prof!r}")
        if prof not in profs:
            raise InputError(source, item, f"profile {prof!r} is not defined in 'profiles'")
        jobs.append(Job(jid, sub, wall, int(res), prof))
    return Workload(doc.get("name", ""), doc.get("description", ""), int(nb_res), jobs, profs, source)


def load_workload(path: str | Path, *, require_bb: bool = True) -> Workload:
    """Read and validate the Batsim workload JSON at `path` (see :func:`workload_from_dict`).

    Raises InputError(path, item, reason): unreadable file, invalid JSON (with line/column),
    or a missing/mistyped field of the workload, a job or a profile.
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(source, "file", exc.strerror or str(exc)) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(source, f"line {exc.lineno} column {exc.colno}", f"invalid JSON: {exc.msg}") from None
    return workload_from_dict(doc, source, require_bb=require_bb)
