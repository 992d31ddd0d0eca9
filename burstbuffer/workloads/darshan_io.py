"""Per-job I/O volumes from Darshan logs → the io-aware model's stage-in / checkpoint / stage-out volumes
(``burstbuffer workload io-from-darshan``, docs/inputs-traces.md §2).

Reading (PyDarshan, ``pip install darshan``; its wheel bundles libdarshan-util): per log, the job id
(``metadata["job"]["jobid"]``, the batch system's id, e.g. Slurm's ``SLURM_JOB_ID``) and the bytes read and
written by the application, summed over its records:

    read    = max(POSIX_BYTES_READ, MPIIO_BYTES_READ) + STDIO_BYTES_READ
    written = max(POSIX_BYTES_WRITTEN, MPIIO_BYTES_WRITTEN) + STDIO_BYTES_WRITTEN

MPI-IO calls reach the file system through POSIX calls, which Darshan also records, so the two are not added
(the larger one is taken: a file system driver of MPI-IO that bypasses POSIX leaves MPI-IO larger); STDIO
(fopen/fwrite streams) is a separate layer and is added. Several logs of one job id (one per ``srun`` step)
are summed.

The model choice (per matched job of the workload, `n` = its compute nodes ``res``, `p` = its number of
compute phases, `phases.nb_phases`):

    io_stage_in   = read / n                          (the input is staged in before the job runs)
    io_checkpoint = written / (n · p)                 (each of the p − 1 checkpoints, and its drain ...)
    io_stage_out  = written / (n · p)                 (... and the stage-out carry an equal share)

so the job moves through the BB the bytes Darshan saw it read and write. These are floats of bytes per compute
node (the model rounds each transfer to whole bytes). ``bb``, the space the policies reserve, and the compute are
left as they are; jobs without a log keep the defaults (bb, 0.5 × bb, bb). Each changed profile gets
``io_source: "darshan"``; a profile that other jobs share is copied for the job (``<name>_io_<job id>``).

A corrupt log can make libdarshan-util abort the process: logs are read in a child process (`read_logs`),
and a log it cannot read, or that kills it, is a one-line InputError naming the log.
"""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError

#: (layer, counter prefix) of the Darshan modules read; MPI-IO's counters are named MPIIO_*.
LAYERS = (("POSIX", "POSIX"), ("MPI-IO", "MPIIO"), ("STDIO", "STDIO"))


@dataclass
class LogIO:
    """What one Darshan log says: job id (str), processes, bytes read and written per layer
    (``{"POSIX": (read, written), ...}``, only the layers present)."""

    path: str
    jobid: str
    nprocs: int
    layers: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def bytes_read(self) -> int:
        """max(POSIX, MPI-IO) + STDIO bytes read (module docstring)."""
        return self._total(0)

    @property
    def bytes_written(self) -> int:
        """max(POSIX, MPI-IO) + STDIO bytes written (module docstring)."""
        return self._total(1)

    def _total(self, k: int) -> int:
        get = lambda name: self.layers.get(name, (0, 0))[k]   # noqa: E731
        return max(get("POSIX"), get("MPI-IO")) + get("STDIO")


def _read_one(path: str) -> dict:
    """One log, in the child: {"path", "jobid", "nprocs", "layers"} (raises on a Python-level failure)."""
    import darshan
    rep = darshan.DarshanReport(path, read_all=False)
    job = rep.metadata["job"]
    layers = {}
    for name, prefix in LAYERS:
        if name not in rep.modules:
            continue
        rep.mod_read_all_records(name)
        recs = rep.records[name]
        if not len(recs):
            raise ValueError(f"no {name} record could be read (truncated or corrupt log)")
        frames = recs.to_df()["counters"]
        layers[name] = (int(frames[f"{prefix}_BYTES_READ"].clip(lower=0).sum()),
                        int(frames[f"{prefix}_BYTES_WRITTEN"].clip(lower=0).sum()))
    return {"path": path, "jobid": str(job["jobid"]), "nprocs": int(job.get("nprocs", 0)), "layers": layers}


def _child(paths: list[str]) -> int:
    """Child process: one JSON line per log on stdout, in order; {"path", "error"} for a Python-level failure."""
    for p in paths:
        try:
            doc = _read_one(p)
        except Exception as exc:  # noqa: BLE001 (reported by the parent as the log's one-line error)
            doc = {"path": p, "error": f"{type(exc).__name__}: {exc}".strip()}
        print(json.dumps(doc), flush=True)
    return 0


def read_logs(paths: list[str | Path], *, timeout: float = 600) -> list[LogIO]:
    """Read Darshan logs (module docstring) in a child process. Raises InputError(log, "log", reason) for a
    missing, unreadable or corrupt log (the first one), InputError("darshan", "import", …) without PyDarshan."""
    paths = [str(p) for p in paths]
    for p in paths:
        if not Path(p).is_file():        # libdarshan-util asserts (aborts) when closing a log it could not open
            raise InputError(p, "log", "file not found")
    try:
        import darshan  # noqa: F401
    except ImportError:
        raise InputError("darshan", "import", "PyDarshan is not installed: pip install 'burstbuffer[darshan]' "
                                              "(or pip install darshan)") from None
    proc = subprocess.run([sys.executable, "-m", "burstbuffer.workloads.darshan_io", *paths], capture_output=True,
                          text=True, timeout=timeout)
    out: list[LogIO] = []
    for line in proc.stdout.splitlines():
        doc = json.loads(line)
        if "error" in doc:
            raise InputError(doc["path"], "log", f"PyDarshan cannot read it ({doc['error']})")
        out.append(LogIO(doc["path"], doc["jobid"], doc["nprocs"], {k: tuple(v) for k, v in doc["layers"].items()}))
    if len(out) < len(paths):
        said = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip().startswith("Error")]
        why = f"libdarshan-util stopped the reader (status {proc.returncode})" + (f": {said[-1]}" if said else "")
        raise InputError(paths[len(out)], "log", f"corrupt or truncated log: {why}")
    return out


@dataclass
class DarshanResult:
    """`apply_darshan`'s outcome: jobs given volumes, logs whose job id is not in the workload, jobs left
    with the defaults."""

    matched: dict[str, dict[str, float]] = field(default_factory=dict)   # job id → {io_* field: bytes per node}
    unmatched_logs: list[str] = field(default_factory=list)
    jobs_without_log: int = 0

    def summary(self) -> str:
        return (f"{len(self.matched)} jobs given Darshan's volumes; {self.jobs_without_log} jobs without a log keep "
                f"the model's defaults" + (f"; {len(self.unmatched_logs)} logs match no job of the workload: "
                                           + ", ".join(self.unmatched_logs[:5])
                                           + (" ..." if len(self.unmatched_logs) > 5 else "")
                                           if self.unmatched_logs else ""))


def apply_darshan(doc: dict, logs: list[LogIO]) -> DarshanResult:
    """Set the io_* fields of the profiles of `doc` (a validated workload document, changed in place) for the jobs
    whose id (as a string) a log names (module docstring)."""
    from .phases import nb_phases
    per_job: dict[str, list[LogIO]] = {}
    for log in logs:
        per_job.setdefault(log.jobid, []).append(log)
    res = DarshanResult()
    jobs = doc["jobs"]
    users: dict[str, int] = {}
    for j in jobs:
        users[j["profile"]] = users.get(j["profile"], 0) + 1
    ids = {str(j["id"]) for j in jobs}
    res.unmatched_logs = [log.path for log in logs if log.jobid not in ids]
    for j in jobs:
        found = per_job.get(str(j["id"]))
        if not found:
            res.jobs_without_log += 1
            continue
        prof = doc["profiles"][j["profile"]]
        if users[j["profile"]] > 1:           # shared: give this job a copy of its own
            name = f"{j['profile']}_io_{j['id']}"
            prof = dict(prof)
            doc["profiles"][name] = prof
            j["profile"] = name
        n = int(j["res"])
        phases = nb_phases(float(prof.get("cpu", 0.0)))
        read = sum(log.bytes_read for log in found)
        written = sum(log.bytes_written for log in found)
        vols = {"io_stage_in": read / n, "io_checkpoint": written / (n * phases),
                "io_stage_out": written / (n * phases)}
        prof.update(vols)
        prof["io_source"] = "darshan"
        res.matched[str(j["id"])] = vols
    return res


def io_from_darshan(workload: str | Path, logs: list[str | Path], output: str | Path) -> DarshanResult:
    """Read `workload`, give its jobs the volumes of `logs` (`read_logs`, `apply_darshan`), write `output`.
    Raises InputError for a bad workload or log."""
    from .batsim_json import load_workload, write_workload
    w = load_workload(workload, require_bb=False)
    doc = json.loads(Path(workload).read_text(encoding="utf-8"))
    found = read_logs(logs)
    res = apply_darshan(doc, found)
    doc.setdefault("nb_res", w.nb_res)
    write_workload(output, doc)
    return res


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
