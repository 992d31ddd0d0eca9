"""Batsim workloads as the embedded simulator holds them: jobs, profiles, and their validation.

Source: Batsim 4.x `jobs.cpp` / `profiles.cpp` / `workload.cpp` and the "input-workload" documentation.
A workload file is ``{"nb_res": N, "jobs": [...], "profiles": {name: profile}}``; a job has ``id``
(string or integer), ``subtime`` [s], ``res`` (integer), ``profile`` (a name of this workload), and an
optional ``walltime`` [s] (-1 or absent: unlimited); extra fields (e.g. this project's ``bb``) are kept
and forwarded. Profile types executed here (Batsim 4 names): ``delay`` {delay [s]},
``parallel`` {cpu [flop] list of n, com [byte] list of n×n, row = sender}, ``parallel_homogeneous``
{cpu [flop] per host, com [byte] per ordered pair of distinct hosts}, ``parallel_homogeneous_total``
{cpu, com: totals spread over the hosts}, ``composed`` {seq: profile names, repeat},
``parallel_homogeneous_pfs`` {bytes_to_read, bytes_to_write [byte] per host, storage label
(default "pfs")}, ``data_staging`` {nb_bytes [byte], from, to: storage labels}; every profile may carry
``ret`` (return code on normal completion, default 0).

Errors in a file raise `InputError` (file, item, reason); errors in what a scheduler registers raise
`DefinitionError` (item, reason), which the simulator reports as a protocol error.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from ..errors import InputError

#: Profile types the embedded simulator executes.
PROFILE_TYPES = ("delay", "parallel", "parallel_homogeneous", "parallel_homogeneous_total", "composed",
                 "parallel_homogeneous_pfs", "data_staging")
#: Batsim 4 profile types that exist but are not simulated here.
UNSUPPORTED_TYPES = ("smpi", "usage_trace", "scheduler_send", "scheduler_recv",
                     "parallel_homogeneous_pfs_tiers", "data_staging_tiers", "send", "recv")

JOB_STATES = ("NOT_SUBMITTED", "SUBMITTED", "RUNNING", "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED",
              "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED", "REJECTED")
COMPLETE_STATES = frozenset(("COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED",
                             "COMPLETED_KILLED", "REJECTED"))


class DefinitionError(Exception):
    """A job or profile definition is invalid: `item` names it, `reason` says why."""

    def __init__(self, item: str, reason: str):
        self.item, self.reason = item, reason
        super().__init__(f"{item}: {reason}")


def _is_num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass
class Profile:
    """A profile: `data` is its JSON object as given (key order kept), `type` its type, `ret` its return
    code. `collected`: Batsim garbage-collected it (a job using it ended while profile reuse was off):
    jobs that hold it still run it, but no new job may name it."""

    name: str
    type: str
    data: dict
    ret: int = 0
    collected: bool = False


def parse_profile(name: str, desc, known: dict | None = None) -> Profile:
    """Validate one profile description (module docstring). `known`: the workload's other profiles, to
    check the names a ``composed`` profile uses (None: not checked). Raises DefinitionError."""
    item = f"profile {name!r}"
    if not isinstance(desc, dict):
        raise DefinitionError(item, "must be a JSON object")
    ptype = desc.get("type")
    if not isinstance(ptype, str):
        raise DefinitionError(item, "has no string 'type' field")
    ret = desc.get("ret", 0)
    if not _is_int(ret):
        raise DefinitionError(item, "'ret' must be an integer")

    def num(key, minimum=0.0, required=True, strict=False):
        if key not in desc:
            if required:
                raise DefinitionError(item, f"has no '{key}' field")
            return None
        v = desc[key]
        if not _is_num(v):
            raise DefinitionError(item, f"has a non-number '{key}' field")
        if v < minimum or (strict and v <= minimum):
            raise DefinitionError(item, f"'{key}' must be {'>' if strict else '>='} {minimum:g} (got {v})")
        return v

    def string(key, default=None):
        v = desc.get(key, default)
        if not isinstance(v, str):
            raise DefinitionError(item, f"has no string '{key}' field")
        return v

    if ptype == "delay":
        num("delay", strict=True)
    elif ptype == "parallel":
        cpu, com = desc.get("cpu"), desc.get("com")
        if not isinstance(cpu, list) or not cpu:
            raise DefinitionError(item, "'cpu' must be a non-empty array of flop amounts")
        if not isinstance(com, list) or len(com) != len(cpu) ** 2:
            raise DefinitionError(item, f"'com' must be an array of {len(cpu) ** 2} byte amounts "
                                        f"(n x n for n = {len(cpu)} hosts)")
        if not all(_is_num(x) and x >= 0 for x in cpu) or not all(_is_num(x) and x >= 0 for x in com):
            raise DefinitionError(item, "'cpu' and 'com' elements must be non-negative numbers")
    elif ptype in ("parallel_homogeneous", "parallel_homogeneous_total"):
        num("cpu")
        num("com")
    elif ptype == "composed":
        seq = desc.get("seq")
        if not isinstance(seq, list) or not seq or not all(isinstance(s, str) for s in seq):
            raise DefinitionError(item, "'seq' must be a non-empty array of profile names")
        rep = desc.get("repeat", 1)
        if not _is_int(rep) or rep < 1:
            raise DefinitionError(item, "'repeat' must be a positive integer")
        if known is not None:
            for s in seq:
                if s not in known:
                    raise DefinitionError(item, f"uses unknown profile {s!r}")
    elif ptype == "parallel_homogeneous_pfs":
        if "bytes_to_read" not in desc and "bytes_to_write" not in desc:
            raise DefinitionError(item, "has no 'bytes_to_read' nor 'bytes_to_write' field")
        num("bytes_to_read", required=False)
        num("bytes_to_write", required=False)
        string("storage", "pfs")
    elif ptype == "data_staging":
        num("nb_bytes")
        string("from")
        string("to")
    elif ptype in UNSUPPORTED_TYPES:
        raise DefinitionError(item, f"profile type {ptype!r} is not supported by the embedded simulator")
    else:
        raise DefinitionError(item, f"unknown profile type {ptype!r} (known: {', '.join(PROFILE_TYPES)})")
    return Profile(name, ptype, desc, ret)


@dataclass(eq=False)
class Job:
    """A job. `id` is Batsim's full id ``WORKLOAD!NAME``; `walltime` -1 means unlimited; `description`
    is its JSON object with ``id`` replaced by the full id (what JOB_SUBMITTED carries).

    Run-time fields (set by the simulator): `state` (JOB_STATES), `starting_time` and `runtime` [s]
    (numpy long doubles, as Batsim computes them), `allocation` (ProcSet of resource ids),
    `return_code`, `metadata`."""

    id: str
    workload: "Workload"
    name: str
    subtime: float
    walltime: float
    res: int
    profile: Profile
    description: dict
    state: str = "NOT_SUBMITTED"
    metadata: str = ""
    starting_time: object = None
    runtime: object = None
    allocation: object = None
    return_code: int = -1
    kill_requested: bool = False
    # execution bookkeeping
    actor: object = None
    activity: object = None
    activity_kind: str = ""
    activity_start: float = 0.0
    activity_amount: float = 0.0
    current_profile: Profile | None = None
    composed_stack: list = field(default_factory=list)
    mapping: list | None = None
    storage_mapping: dict = field(default_factory=dict)

    @property
    def is_complete(self) -> bool:
        return self.state in COMPLETE_STATES


@dataclass
class Workload:
    """A workload: `name` (``w0``, ``w1``... for files, the scheduler's name for dynamic ones), `file`
    (absolute path, "" if dynamic), `profiles` and `jobs` (by job name, file order)."""

    name: str
    file: str
    profiles: dict[str, Profile] = field(default_factory=dict)
    jobs: dict[str, Job] = field(default_factory=dict)
    nb_res: int | None = None
    #: names of every job ever defined in this workload (`jobs` drops the ones that ended and were reported)
    met: set[str] = field(default_factory=set)

    @property
    def is_static(self) -> bool:
        return bool(self.file)


def split_job_id(full_id: str) -> tuple[str, str]:
    """``"w0!15"`` → ("w0", "15"). Raises DefinitionError if there is no '!'."""
    if not isinstance(full_id, str) or "!" not in full_id:
        raise DefinitionError(f"job id {full_id!r}", "must be WORKLOAD!NAME")
    wl, name = full_id.split("!", 1)
    if not wl or not name:
        raise DefinitionError(f"job id {full_id!r}", "must be WORKLOAD!NAME")
    return wl, name


def parse_job(desc, workload: Workload, expected_id: str | None = None) -> Job:
    """Validate one job description of `workload` (module docstring). `expected_id`: the full id a
    REGISTER_JOB announced. Raises DefinitionError."""
    if not isinstance(desc, dict):
        raise DefinitionError("job", "must be a JSON object")
    jid = desc.get("id")
    if not (isinstance(jid, str) or _is_int(jid)):
        raise DefinitionError("job", "has no 'id' field (string or integer)")
    jid = str(jid)
    if "!" in jid:
        wl, name = split_job_id(jid)
        if wl != workload.name:
            raise DefinitionError(f"job {jid!r}", f"belongs to workload {wl!r}, not {workload.name!r}")
    else:
        name = jid
    full = f"{workload.name}!{name}"
    item = f"job {full!r}"
    if expected_id is not None and full != expected_id:
        raise DefinitionError(item, f"its 'id' does not match the registered job_id {expected_id!r}")
    if "subtime" not in desc:
        raise DefinitionError(item, "has no 'subtime' field")
    if not _is_num(desc["subtime"]):
        raise DefinitionError(item, "has a non-number 'subtime' field")
    walltime = desc.get("walltime", -1)
    if not _is_num(walltime):
        raise DefinitionError(item, "has a non-number 'walltime' field")
    if not (walltime == -1 or walltime > 0):
        raise DefinitionError(item, f"has an invalid walltime ({walltime}): -1 (none) or > 0")
    if "res" not in desc:
        raise DefinitionError(item, "has no 'res' field")
    if not _is_int(desc["res"]) or desc["res"] < 1:
        raise DefinitionError(item, "'res' must be a positive integer")
    if "profile" not in desc:
        raise DefinitionError(item, "has no 'profile' field")
    pname = desc["profile"]
    if not isinstance(pname, str):
        raise DefinitionError(item, "has a non-string 'profile' field")
    prof = workload.profiles.get(pname)
    if prof is None:
        raise DefinitionError(item, f"uses profile {pname!r}, which does not exist in workload {workload.name!r}")
    if prof.collected:
        raise DefinitionError(item, f"uses profile {pname!r}, which existed some time ago but is no longer "
                                    "accessible (garbage-collected: reuse needs --enable-profile-reuse)")
    description = dict(desc)
    description["id"] = full
    return Job(full, workload, name, float(desc["subtime"]), float(walltime), desc["res"], prof, description)


def load_workload(path: str, name: str) -> Workload:
    """Load and validate a Batsim workload file as workload `name` (``w0``...).

    Raises InputError naming the file, the job or profile, and the reason: missing file, malformed JSON,
    missing 'jobs'/'profiles'/'nb_res', a job missing a field, an unknown profile type, duplicates...
    """
    path = str(path)
    if not os.path.isfile(path):
        raise InputError(path, "workload", "file not found")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"line {exc.lineno} column {exc.colno}", f"malformed JSON ({exc.msg})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, "workload", f"cannot read ({exc})") from None
    if not isinstance(doc, dict):
        raise InputError(path, "workload", "the top level must be a JSON object")
    wl = Workload(name, os.path.abspath(path))
    nb_res = doc.get("nb_res")
    if nb_res is None:
        raise InputError(path, "nb_res", "missing (number of resources the workload was made for)")
    if not _is_int(nb_res) or nb_res < 1:
        raise InputError(path, "nb_res", "must be a positive integer")
    wl.nb_res = nb_res
    profiles = doc.get("profiles")
    if not isinstance(profiles, dict):
        raise InputError(path, "profiles", "missing, or not a JSON object")
    jobs = doc.get("jobs")
    if not isinstance(jobs, list):
        raise InputError(path, "jobs", "missing, or not a JSON array")
    try:
        for pname, pdesc in profiles.items():
            wl.profiles[pname] = parse_profile(pname, pdesc, profiles)
        for i, jdesc in enumerate(jobs):
            try:
                job = parse_job(jdesc, wl)
            except DefinitionError as exc:
                if exc.item == "job":
                    exc.item = f"job #{i}"
                raise
            if job.name in wl.jobs:
                raise DefinitionError(f"job {job.id!r}", "id defined twice")
            wl.jobs[job.name] = job
            wl.met.add(job.name)
    except DefinitionError as exc:
        raise InputError(path, exc.item, exc.reason) from None
    return wl
