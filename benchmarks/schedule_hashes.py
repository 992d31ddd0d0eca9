"""Schedules that must not move by accident: sha256 of `jobs.csv` per policy and job model.

Runs `burstbuffer run --policy P --model M --seed 0` on the bundled workload (workloads/kth-1000.json, or its
first N jobs with --jobs N) and the bundled platform, for every registered policy and both job models, and
prints one line per run: `policy model sha256` (of jobs.csv projected on `HASHED_COLUMNS`). With --record FILE the hashes are written as JSON; with
--check FILE they are compared with a recorded file and the script exits 1 on any difference.

`--models` picks the job models (three-phase too); `--all-columns` hashes jobs.csv as written, every column
(the wait-reason and three-phase columns that the projection leaves out), for files recorded the same way:

    .venv/bin/python benchmarks/schedule_hashes.py --jobs 200 --models io-aware,alloc-only,three-phase \
        --all-columns --check benchmarks/schedule_hashes_full_200.json

    .venv/bin/python benchmarks/schedule_hashes.py --record benchmarks/schedule_hashes_1000.json
    .venv/bin/python benchmarks/schedule_hashes.py --check benchmarks/schedule_hashes_1000.json
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from burstbuffer.schedulers.registry import names_tagged, needs_staged_model  # noqa: E402

#: the registry's presets tagged ``hashed`` (`burstbuffer.schedulers.registry.PRESETS`)
POLICIES = names_tagged("hashed")
MODELS = ["io-aware", "alloc-only"]
#: Policies that run only under the three-phase model (they decide stage-ins: every ``family:cerberus`` preset):
#: added to the default policies when it is in --models.
THREE_PHASE_ONLY = [n for n in names_tagged("family:cerberus") if needs_staged_model(n)]
#: The jobs.csv columns the recorded hashes cover (`JOBS_CSV_COLUMNS` when they were recorded). jobs.csv is
#: hashed projected on these, in this order, so that columns added later do not change the hashes;
#: the projection of a file with exactly these columns is the file itself, byte for byte.
HASHED_COLUMNS = ("job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
                  "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
                  "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy",
                  "metadata", "bb_per_node", "bb_allocation", "bounded_slowdown")


def projected(jobs_csv: Path) -> bytes:
    """jobs.csv rewritten with only `HASHED_COLUMNS` (as `csv.DictWriter` wrote it: CRLF, minimal quoting).
    Raises KeyError if a hashed column is missing."""
    with open(jobs_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=HASHED_COLUMNS, extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue().encode()


def _one(args: tuple[str, str, int | None, bool]) -> tuple[str, str, str]:
    policy, model, jobs, all_columns = args
    from burstbuffer.runner import DEFAULT_PLATFORM, DEFAULT_WORKLOAD, run

    with tempfile.TemporaryDirectory() as tmp:
        workload = DEFAULT_WORKLOAD
        if jobs is not None:
            data = json.loads(Path(DEFAULT_WORKLOAD).read_text())
            data["jobs"] = data["jobs"][:jobs]
            workload = Path(tmp) / "w.json"
            workload.write_text(json.dumps(data))
        out = Path(tmp) / "out"
        run(policy, workload, DEFAULT_PLATFORM, out, model=model, progress=False, timeout=3600, seed=0, cpu=None)
        data = (out / "jobs.csv").read_bytes() if all_columns else projected(out / "jobs.csv")
        digest = hashlib.sha256(data).hexdigest()
    return policy, model, digest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=None, help="first N jobs of the bundled workload (default: all)")
    ap.add_argument("--policies", default=None,
                    help=f"comma-separated (default: {','.join(POLICIES)}, and {','.join(THREE_PHASE_ONLY)} "
                         "under three-phase)")
    ap.add_argument("--tag", default=None, help="the registry's presets with this tag instead (e.g. family:window, "
                    "for schedule_hashes_window_*.json)")
    ap.add_argument("--models", default=",".join(MODELS),
                    help=f"comma-separated job models (default: {','.join(MODELS)}; also three-phase)")
    ap.add_argument("--all-columns", action="store_true",
                    help="hash jobs.csv as written (every column) instead of its projection on HASHED_COLUMNS")
    ap.add_argument("--workers", type=int, default=2)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--record", type=Path)
    g.add_argument("--check", type=Path)
    args = ap.parse_args()
    models = args.models.split(",")
    if args.tag:
        args.policies = ",".join(names_tagged(args.tag))
    todo = [(p, m, args.jobs, args.all_columns) for p in (args.policies or ",".join(POLICIES)).split(",")
            for m in models]
    if args.policies is None and "three-phase" in models:
        todo += [(p, "three-phase", args.jobs, args.all_columns) for p in THREE_PHASE_ONLY]
    got: dict[str, str] = {}
    with ProcessPoolExecutor(args.workers) as pool:
        for policy, model, digest in pool.map(_one, todo):
            got[f"{policy} {model}"] = digest
            print(f"{policy:16} {model:10} {digest}", flush=True)
    if args.record:
        args.record.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    if args.check:
        want = json.loads(args.check.read_text())
        bad = [k for k in got if want.get(k) != got[k]]
        for k in bad:
            print(f"CHANGED: {k}: {want.get(k)} -> {got[k]}")
        print(f"{len(got) - len(bad)} of {len(got)} schedules unchanged")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
