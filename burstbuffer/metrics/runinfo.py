"""`run.json`: what a run's folder records of the run beside jobs.csv (the policy, the job model and the platform as
the scheduler saw it), for `burstbuffer plot` (`burstbuffer.metrics.runplot.load_run` reads it). Standard library
only: the run's simulating process writes it without importing the analysis stack.
"""
from __future__ import annotations

import json
from pathlib import Path

#: The files a run writes beside jobs.csv for its audit (`burstbuffer.audit`, docs/audit.md) when its job model or
#: policy has them to say: each job's BB by phase (three-phase), EASY's head reservations (fcfs-bb, sjf-bb). A run
#: removes a previous run's from its folder first (`session.RunFolder`), so that its audit never reads them.
BB_HOLDS_CSV, RESERVATIONS_CSV = "bb_holds.csv", "reservations.csv"
AUDIT_FILES = (BB_HOLDS_CSV, RESERVATIONS_CSV)


def run_info(platform, policy: str, model: str) -> dict:
    """What `run.json` holds: policy, model and the platform (`Platform`) as the scheduler saw it (JSON values)."""
    return {"policy": policy, "model": model, "compute": str(platform.compute),
            "bb_capacity": {str(k): int(v) for k, v in sorted(platform.bb_capacity.items())},
            "names": {str(k): v for k, v in sorted(platform.names.items())
                      if k in platform.bb_capacity}}


def write_run_json(path: Path, platform, policy: str, model: str, *, info: dict | None = None) -> None:
    """`run.json` for `plot`: `run_info(platform, policy, model)`, or `info` as it gave it (then `platform` is
    not used: `run`'s parent writes what its child reported)."""
    doc = info if info is not None else run_info(platform, policy, model)
    Path(path).write_text(json.dumps(doc, indent=1) + "\n")


def sha256_of(path) -> str:
    """SHA-256 (hex) of a file's content."""
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def record_inputs(run_dir: Path, workload, platform, seed: int) -> None:
    """Add to `run_dir`/run.json (made if absent) what identifies the run's inputs: ``workload_sha256`` and
    ``platform_sha256`` (the files' content) and the policy's ``seed``. `burstbuffer compare` pairs runs by
    ``workload_sha256`` (docs/compare.md)."""
    update_run_json(run_dir, workload_sha256=sha256_of(workload), platform_sha256=sha256_of(platform),
                    seed=int(seed))


def update_run_json(run_dir: Path, **fields) -> None:
    """Set `fields` (JSON values) at the top level of `run_dir`/run.json (made if absent or unreadable), written
    atomically and never through a link (`fileio.atomic_write_text`)."""
    p = Path(run_dir) / "run.json"
    try:
        doc = json.loads(p.read_text())
    except (OSError, ValueError):
        doc = {}
    if not isinstance(doc, dict):
        doc = {}
    doc.update(fields)
    from ..fileio import atomic_write_text
    atomic_write_text(p, json.dumps(doc, indent=1) + "\n")


def platform_size(run_dir: Path) -> tuple[int, int] | None:
    """(compute nodes, total BB bytes) of the platform a run saw, from `run_dir`/run.json; None when the file is
    absent or unreadable (a Batsim output folder has none)."""
    from procset import ProcSet
    try:
        doc = json.loads((Path(run_dir) / "run.json").read_text())
        return len(ProcSet.from_str(doc["compute"])), sum(int(v) for v in doc["bb_capacity"].values())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
