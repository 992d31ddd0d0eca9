"""The rules a Batsim job or job profile object must follow: one definition for the workload reader
(`batsim_json`, hence the CLI and the scheduler side) and for the embedded simulator (workload files and
what a scheduler registers at run time).

Source: Batsim 4.x "input-workload" documentation (and its `jobs.cpp` / `profiles.cpp`), plus this
project's ``bb`` profile field (burst-buffer bytes per compute node); summarised in ``docs/workload.md``.

A job object has ``id`` (string or integer), ``subtime`` [s] ≥ 0, ``res`` (integer ≥ 1), ``profile`` (a
profile name), an optional ``walltime`` [s] (> 0, or −1 / absent: none) and this project's optional phase
amounts ``bb_in``, ``bb_run``, ``bb_out`` (integer bytes per compute node ≥ 0; Yan et al., Cerberus, §3;
`PHASE_FIELDS`); extra fields are kept. Profile
types (Batsim 4 names) and their fields: ``delay`` {delay [s] > 0}, ``parallel`` {cpu [flop] list of n,
com [byte] list of n×n, row = sender}, ``parallel_homogeneous`` {cpu [flop] per host, com [byte] per
ordered pair of distinct hosts}, ``parallel_homogeneous_total`` {cpu, com: totals spread over the hosts},
``composed`` {seq: profile names, repeat ≥ 1}, ``parallel_homogeneous_pfs`` {bytes_to_read and/or
bytes_to_write [byte] per host, storage label (default "pfs")}, ``data_staging`` {nb_bytes [byte], from,
to: storage labels}; any profile may carry ``ret`` (integer return code), ``bb`` (integer bytes ≥ 0) and
``io_stage_in`` / ``io_checkpoint`` / ``io_stage_out`` (bytes per host ≥ 0, the io-aware model's volumes).
Batsim's other types (`UNSUPPORTED_TYPES`) are valid input but the embedded simulator does not run them.

Every check raises `DefinitionError(item, reason)`; readers of files turn it into
`InputError(file, item, reason)`, the simulator into a protocol error.
"""
from __future__ import annotations

from typing import Any

from ..jsonvalues import excerpt, is_int, is_num, kind

#: Profile types the embedded simulator executes.
PROFILE_TYPES = ("delay", "parallel", "parallel_homogeneous", "parallel_homogeneous_total", "composed",
                 "parallel_homogeneous_pfs", "data_staging")
#: Batsim 4 profile types that exist but are not simulated here.
UNSUPPORTED_TYPES = ("smpi", "usage_trace", "scheduler_send", "scheduler_recv",
                     "parallel_homogeneous_pfs_tiers", "data_staging_tiers", "send", "recv")


#: The longest job id or profile name accepted [characters]: an id travels in every message about its job and in
#: every output row (a 100 MB id once made one message of each); Batsim sets no limit.
MAX_NAME_CHARS = 1000
#: The largest ``repeat`` of a ``composed`` profile: Batsim reads it as a C ``int`` (and the embedded simulator's
#: native loop as one too).
MAX_REPEAT = 2**31 - 1


#: The job fields of the three phases' BB space, bytes per compute node (docs/workload.md "Phase amounts").
PHASE_FIELDS = ("bb_in", "bb_run", "bb_out")


class DefinitionError(Exception):
    """A job or profile definition is invalid: `item` names it (e.g. ``job 5``), `reason` says why."""

    def __init__(self, item: str, reason: str):
        self.item, self.reason = item, reason
        super().__init__(f"{item}: {reason}")


def check_profile(name: str, desc: Any, known: dict | None = None, *, simulated: bool = False,
                  require_bb: bool = False) -> str:
    """Check one profile object (module docstring); return its type.

    `known`: the workload's profiles, to check the names a ``composed`` profile uses (None: not
    checked). `simulated`: also reject the types the embedded simulator cannot run. `require_bb`:
    a ``parallel_homogeneous`` profile must have ``bb`` (workloads of this project's BB model).
    Raises DefinitionError("profile <name>", reason).
    """
    item = f"profile {excerpt(name, 60)}"
    if len(name) > MAX_NAME_CHARS:
        raise DefinitionError(item, f"its name is longer than {MAX_NAME_CHARS} characters ({len(name)})")
    if not isinstance(desc, dict):
        raise DefinitionError(item, f"must be an object, not {kind(desc)}")
    ptype = desc.get("type")
    if not isinstance(ptype, str):
        raise DefinitionError(item, "missing field 'type'" if ptype is None else
                              f"field 'type' must be a string, not {kind(ptype)}")
    if "ret" in desc and not is_int(desc["ret"]):
        raise DefinitionError(item, f"field 'ret' must be an integer, not {desc['ret']!r}")

    def num(key: str, *, required: bool = True, positive: bool = False) -> None:
        if key not in desc:
            if required:
                raise DefinitionError(item, f"missing field {key!r} ({ptype} profile)")
            return
        v = desc[key]
        if not is_num(v) or v < 0 or (positive and v == 0):
            raise DefinitionError(item, f"field {key!r} must be a number {'>' if positive else '>='} 0, not {v!r}")

    def string(key: str, default: str | None = None) -> None:
        v = desc.get(key, default)
        if not isinstance(v, str):
            raise DefinitionError(item, f"missing field {key!r} ({ptype} profile)" if v is None else
                                  f"field {key!r} must be a string, not {kind(v)}")

    for key in ("io_stage_in", "io_checkpoint", "io_stage_out"):   # this project's I/O volumes (io_model.io_aware)
        num(key, required=False)
    if ptype == "delay":
        num("delay", positive=True)
    elif ptype == "parallel":
        cpu, com = desc.get("cpu"), desc.get("com")
        if not isinstance(cpu, list) or not cpu:
            raise DefinitionError(item, "field 'cpu' must be a non-empty list of flop amounts")
        if not isinstance(com, list) or len(com) != len(cpu) ** 2:
            raise DefinitionError(item, f"field 'com' must be a list of {len(cpu) ** 2} byte amounts "
                                        f"(n x n for n = {len(cpu)} hosts)")
        if not all(is_num(x) and x >= 0 for x in cpu) or not all(is_num(x) and x >= 0 for x in com):
            raise DefinitionError(item, "the elements of 'cpu' and 'com' must be numbers >= 0")
    elif ptype in ("parallel_homogeneous", "parallel_homogeneous_total"):
        num("cpu")
        num("com")
    elif ptype == "composed":
        seq = desc.get("seq")
        if not isinstance(seq, list) or not seq or not all(isinstance(s, str) for s in seq):
            raise DefinitionError(item, "field 'seq' must be a non-empty list of profile names")
        rep = desc.get("repeat", 1)
        if not is_int(rep) or not 1 <= rep <= MAX_REPEAT:
            raise DefinitionError(item, f"field 'repeat' must be an integer from 1 to {MAX_REPEAT} (Batsim's int), "
                                        f"not {excerpt(rep, 40)}")
        if known is not None:
            for s in seq:
                if s not in known:
                    raise DefinitionError(item, f"uses unknown profile {excerpt(s, 60)!r}")
    elif ptype == "parallel_homogeneous_pfs":
        if "bytes_to_read" not in desc and "bytes_to_write" not in desc:
            raise DefinitionError(item, "missing field 'bytes_to_read' or 'bytes_to_write'")
        num("bytes_to_read", required=False)
        num("bytes_to_write", required=False)
        string("storage", "pfs")
    elif ptype == "data_staging":
        num("nb_bytes")
        string("from")
        string("to")
    elif ptype in UNSUPPORTED_TYPES:
        if simulated:
            raise DefinitionError(item, f"profile type {ptype!r} is not supported by the embedded simulator")
    else:
        raise DefinitionError(item, f"unknown profile type {ptype!r} (known: {', '.join(PROFILE_TYPES)})")
    if ptype == "parallel_homogeneous" and require_bb and "bb" not in desc:
        raise DefinitionError(item, "missing field 'bb' (burst-buffer bytes per node)")
    if "bb" in desc:
        bb = desc["bb"]
        if not is_num(bb) or bb < 0 or not float(bb).is_integer():
            raise DefinitionError(item, f"field 'bb' must be an integer number of bytes >= 0, not {bb!r}")
    return ptype


def composed_cycle(profiles: dict) -> list[str] | None:
    """A cycle of ``composed`` profiles of `profiles` (name → checked profile object) that contain one another
    (``a`` → ``b`` → ``a``; a profile in its own ``seq`` is one), as the list of names from the first back to
    it; None if there is none. A cycle would run for ever (Batsim 4.2.1 crashes on it)."""
    state: dict[str, int] = {}          # 1: on the current path, 2: done
    for root in profiles:
        if state.get(root):
            continue
        path, stack = [root], [iter(_members(profiles, root))]
        state[root] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt) and nxt in profiles:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(_members(profiles, nxt)))
    return None


def _members(profiles: dict, name: str) -> list[str]:
    desc = profiles.get(name)
    return list(desc.get("seq") or []) if isinstance(desc, dict) and desc.get("type") == "composed" else []


def check_job(desc: Any, item: str = "job") -> tuple[int | str, float, float, int, str]:
    """Check one job object (module docstring); return (id as written, subtime [s], walltime [s]
    (−1 = none), res, profile name). The profile's existence is the caller's check (a file's
    ``profiles``, or a simulator workload). Raises DefinitionError(`item` until the id is known,
    then "job <id>", reason)."""
    if not isinstance(desc, dict):
        raise DefinitionError(item, f"must be an object, not {kind(desc)}")
    jid = desc.get("id")
    if jid is None:
        raise DefinitionError(item, "missing field 'id'")
    if not (isinstance(jid, str) or is_int(jid)):
        raise DefinitionError(item, f"field 'id' must be an integer or a string, not {jid!r}")
    item = f"job {excerpt(jid, 60)}"
    if len(str(jid)) > MAX_NAME_CHARS:
        raise DefinitionError(item, f"its id is longer than {MAX_NAME_CHARS} characters ({len(str(jid))})")
    for f in ("subtime", "res", "profile"):
        if f not in desc:
            raise DefinitionError(item, f"missing field {f!r}")
    sub, wall, res, prof = desc["subtime"], desc.get("walltime", -1), desc["res"], desc["profile"]
    if not is_num(sub) or sub < 0:
        raise DefinitionError(item, f"field 'subtime' must be a number >= 0, not {sub!r}")
    if not is_num(wall) or not (wall > 0 or wall == -1):
        raise DefinitionError(item, f"field 'walltime' must be a number > 0 (or -1: none), not {wall!r}")
    if not is_int(res) or res < 1:
        raise DefinitionError(item, f"field 'res' must be a positive integer, not {res!r}")
    if not isinstance(prof, str):
        raise DefinitionError(item, f"field 'profile' must be a string, not {prof!r}")
    check_phase_bb(desc, item)
    return jid, sub, wall, res, prof


def check_phase_bb(desc: dict, item: str) -> dict[str, int]:
    """The phase amounts a job object gives (`PHASE_FIELDS` → bytes per compute node; absent ones left out).
    Raises DefinitionError(`item`, reason) for one that is not an integer number of bytes ≥ 0."""
    out: dict[str, int] = {}
    for key in PHASE_FIELDS:
        if key in desc:
            v = desc[key]
            if not is_num(v) or v < 0 or not float(v).is_integer():
                raise DefinitionError(item, f"field {key!r} must be an integer number of bytes >= 0, not {v!r}")
            out[key] = int(v)
    return out


def split_job_id(full_id: Any) -> tuple[str, str]:
    """``"w0!15"`` → ("w0", "15"). Raises DefinitionError if it is not a string WORKLOAD!NAME."""
    if not isinstance(full_id, str) or "!" not in full_id:
        raise DefinitionError(f"job id {full_id!r}", "must be WORKLOAD!NAME")
    wl, name = full_id.split("!", 1)
    if not wl or not name:
        raise DefinitionError(f"job id {full_id!r}", "must be WORKLOAD!NAME")
    return wl, name
