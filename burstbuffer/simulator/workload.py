"""Batsim workloads as the embedded simulator holds them: profiles, the state of each job, workloads.

Reading and validation are not here: workload files are read by the project's one reader
(`burstbuffer.workloads.batsim_json.load_workload`) and every job or profile object, from a file or
registered by the scheduler at run time, is checked by `burstbuffer.workloads.batsim_rules` (the rules,
from Batsim 4.x's "input-workload" documentation: docs/workload.md). This module builds the simulator's
objects from checked definitions.

Errors in a file raise `InputError` (file, item, reason); errors in what a scheduler registers raise
`DefinitionError` (item, reason), which the simulator reports as a protocol error.
"""
from __future__ import annotations

import os

from ..errors import InputError
from ..records import Record
from . import jsonnumbers
from ..workloads.batsim_json import load_workload as read_workload_file
from ..workloads.batsim_rules import DefinitionError, check_job, check_profile, split_job_id

JOB_STATES = ("NOT_SUBMITTED", "SUBMITTED", "RUNNING", "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED",
              "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED", "REJECTED")
COMPLETE_STATES = frozenset(("COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED",
                             "COMPLETED_KILLED", "REJECTED"))


# Record classes (`records.Record`: repr, ==), not data classes: this module is on the simulator's start-up
# path (docs/startup.md).

class Profile(Record):
    """A profile: `data` is its JSON object as given (key order kept), `type` its type, `ret` its return
    code. `collected`: Batsim garbage-collected it (a job using it ended while profile reuse was off):
    jobs that hold it still run it, but no new job may name it."""

    _fields = ("name", "type", "data", "ret", "collected")

    def __init__(self, name: str, type: str, data: dict, ret: int = 0, collected: bool = False):  # noqa: A002
        self.name = name
        self.type = type
        self.data = data
        self.ret = ret
        self.collected = collected


def parse_profile(name: str, desc, known: dict | None = None) -> Profile:
    """Check one profile object (`batsim_rules.check_profile`, types the simulator runs only) and build
    it. `known`: the workload's other profiles, to check the names a ``composed`` profile uses (None:
    not checked). Raises DefinitionError."""
    ptype = check_profile(name, desc, known, simulated=True)
    return Profile(name, ptype, desc, desc.get("ret", 0))


class SimJob(Record):
    """The simulator's state of one job (not a job request: the scheduler's typed request is
    `burstbuffer.schedulers.base.Job`, a workload file's entry `burstbuffer.workloads.WorkloadJob`).

    `id` is Batsim's full id ``WORKLOAD!NAME``; `walltime` -1 means unlimited; `description` is its JSON
    object with ``id`` replaced by the full id (what JOB_SUBMITTED carries).

    Run-time fields (set by the simulator): `state` (JOB_STATES), `starting_time` and `runtime` [s]
    (`longdouble.LD`, long doubles as Batsim computes them), `allocation` (ProcSet of resource ids),
    `alloc_ids` (its ids in increasing order) and `alloc_text` (as Batsim prints it), `return_code`,
    `metadata`. Equal only to itself (hashed by identity: jobs are kept in sets)."""

    __slots__ = ("id", "workload", "name", "subtime", "walltime", "res", "profile", "description", "state",
                 "metadata", "starting_time", "runtime", "allocation", "alloc_ids", "alloc_text", "return_code",
                 "kill_requested", "actor", "activity", "activity_kind", "activity_start", "activity_amount",
                 "current_profile", "composed_stack", "mapping", "storage_mapping", "bkey", "orphan",
                 "consumed_energy", "program")
    _fields = __slots__
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __init__(self, id: str, workload: Workload, name: str, subtime: float, walltime: float,  # noqa: A002
                 res: int, profile: Profile, description: dict):
        self.id = id
        self.workload = workload
        self.name = name
        self.subtime = subtime
        self.walltime = walltime
        self.res = res
        self.profile = profile
        self.description = description
        self.state = "NOT_SUBMITTED"
        self.metadata = ""
        self.starting_time = None       # LD
        self.runtime = None             # LD
        self.allocation = None          # ProcSet
        self.alloc_ids: tuple = ()
        self.alloc_text = ""
        self.return_code = -1
        self.kill_requested = False
        # execution bookkeeping
        self.actor = None
        self.activity = None
        self.activity_kind = ""
        self.activity_start = 0.0
        self.activity_amount = 0.0
        self.current_profile: Profile | None = None
        self.program: list | None = None    # the bridged core's program: (profile, error) per node
        self.composed_stack: list = []
        self.mapping: list | None = None
        self.storage_mapping: dict = {}
        self.bkey = -1                  # bridged core: the key of its actor in the bridge
        self.orphan = None              # its task left running at its walltime, until the server has its message
        self.consumed_energy: str | None = None  # with energy (-E): its jobs.csv cell, C's %Lf of joules (energy.py)

    @property
    def is_complete(self) -> bool:
        return self.state in COMPLETE_STATES


class Workload(Record):
    """A workload: `name` (``w0``, ``w1``... for files, the scheduler's name for dynamic ones), `file`
    (absolute path, "" if dynamic), `profiles` and `jobs` (by job name, file order); `met`: the names of
    every job ever defined in this workload (`jobs` drops the ones that ended and were reported)."""

    _fields = ("name", "file", "profiles", "jobs", "nb_res", "met")

    def __init__(self, name: str, file: str, profiles: dict[str, Profile] | None = None,
                 jobs: dict[str, SimJob] | None = None, nb_res: int | None = None, met: set[str] | None = None):
        self.name = name
        self.file = file
        self.profiles = {} if profiles is None else profiles
        self.jobs = {} if jobs is None else jobs
        self.nb_res = nb_res
        self.met = set() if met is None else met

    @property
    def is_static(self) -> bool:
        return bool(self.file)


def _new_job(desc: dict, jid, subtime, walltime, res: int, pname: str, workload: Workload,
             expected_id: str | None) -> SimJob:
    """The SimJob of a checked job object of `workload` (see `parse_job`)."""
    jid = str(jid)
    if "!" in jid:
        wl, name = split_job_id(jid)
        if wl != workload.name:
            raise DefinitionError(f"job {jid}", f"belongs to workload {wl!r}, not {workload.name!r}")
    else:
        name = jid
    full = f"{workload.name}!{name}"
    item = f"job {full}"
    if expected_id is not None and full != expected_id:
        raise DefinitionError(item, f"its 'id' does not match the registered job_id {expected_id!r}")
    prof = workload.profiles.get(pname)
    if prof is None:
        raise DefinitionError(item, f"uses profile {pname!r}, which does not exist in workload {workload.name!r}")
    if prof.collected:
        raise DefinitionError(item, f"uses profile {pname!r}, which existed some time ago but is no longer "
                                    "accessible (garbage-collected: reuse needs --enable-profile-reuse)")
    description = dict(desc)
    description["id"] = full
    return SimJob(full, workload, name, float(subtime), float(walltime), res, prof, description)


def parse_job(desc, workload: Workload, expected_id: str | None = None) -> SimJob:
    """Check one job object of `workload` (`batsim_rules.check_job`; its profile must be one of the
    workload's, not garbage-collected) and build its SimJob. An id ``WORKLOAD!NAME`` must name this
    workload; `expected_id`: the full id a REGISTER_JOB announced. Raises DefinitionError."""
    jid, sub, wall, res, pname = check_job(desc)
    return _new_job(desc, jid, sub, wall, res, pname, workload, expected_id)


def load_workload(path: str, name: str) -> Workload:
    """Read workload file `path` with the project's reader (`batsim_json.load_workload`, profile types
    the simulator runs only) and build it as workload `name` (``w0``...).

    Raises InputError(file, item, reason): missing file, malformed JSON, a missing or mistyped field,
    an unknown or unsupported profile type, a duplicate job id...
    """
    doc = read_workload_file(path, require_bb=False, simulated=True, loads=jsonnumbers.loads)  # Batsim's numbers
    wl = Workload(name, os.path.abspath(path), nb_res=doc.nb_res)
    for pname, pdesc in doc.profiles.items():
        wl.profiles[pname] = Profile(pname, pdesc["type"], pdesc, pdesc.get("ret", 0))
    try:
        for entry, desc in zip(doc.jobs, doc.job_objects):
            job = _new_job(desc, entry.id, entry.subtime, entry.walltime, entry.res, entry.profile, wl, None)
            if job.name in wl.jobs:
                raise DefinitionError(f"job {entry.id}", "duplicate job id")
            wl.jobs[job.name] = job
            wl.met.add(job.name)
    except DefinitionError as exc:
        raise InputError(str(path), exc.item, exc.reason) from None
    return wl
