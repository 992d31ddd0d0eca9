"""Every built-in policy under every job model it runs under, through the auditor (`burstbuffer.audit`,
docs/audit.md): prints one line per run — policy, model, violations per check (0 everywhere for a feasible
schedule), the violations a jobs.csv-only audit finds (bb_holds.csv set aside: a job's BB counted as
bb_allocation from starting_time to finish_time), and the audit's wall time [s].

    .venv/bin/python benchmarks/audit_matrix.py --jobs 300
    .venv/bin/python benchmarks/audit_matrix.py --time-only RUN_DIR    # the audit's time on an existing run
    .venv/bin/python benchmarks/audit_matrix.py --time-only RUN_DIR --scale 28   # ... on 28 copies of it, one
                                                 # after the other (the whole KTH trace's size from 1000 jobs)
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


def _one(args):
    policy, model, jobs = args
    from burstbuffer.audit import audit_run
    from burstbuffer.errors import InfeasibleSchedule
    from burstbuffer.runner import DEFAULT_PLATFORM, DEFAULT_WORKLOAD, run
    with tempfile.TemporaryDirectory() as tmp:
        workload = Path(DEFAULT_WORKLOAD)
        if jobs is not None:
            data = json.loads(workload.read_text())
            data["jobs"] = data["jobs"][:jobs]
            workload = Path(tmp) / "w.json"
            workload.write_text(json.dumps(data))
        out = Path(tmp) / "out"
        try:
            run(policy, workload, DEFAULT_PLATFORM, out, model=model, progress=False, timeout=3600, cpu=None)
        except InfeasibleSchedule:
            pass
        except Exception as exc:  # noqa: BLE001 - reported on its line
            return policy, model, f"run failed: {type(exc).__name__}: {str(exc)[:120]}", "", 0.0
        t0 = time.perf_counter()
        rep = audit_run(out, workload=workload)
        dt = time.perf_counter() - t0
        fails = {r.check: r.violations for r in rep.checks.itertuples() if r.status == "FAIL"}
        holds = out / "bb_holds.csv"
        naive = ""
        if holds.is_file():
            shutil.move(holds, out / "bb_holds.aside")
            naive = audit_run(out, workload=workload).checks.set_index("check").loc["burst-buffer", "violations"]
        return policy, model, fails or "ok", naive, dt


def _scaled(run_dir: Path, k: int, out: Path) -> Path:
    """`run_dir`'s jobs.csv (and bb_holds.csv, reservations.csv) repeated `k` times, copy i shifted by i times the
    run's last end and its job ids suffixed, with run.json (no workload: the rows alone are accounted)."""
    import pandas as pd
    times = ["submission_time", "starting_time", "finish_time", "stage_in_end", "nodes_start", "nodes_end", "time",
             "reserved_start"]
    jobs = pd.read_csv(run_dir / "jobs.csv", dtype=str, keep_default_na=False)
    span = pd.to_numeric(jobs["finish_time"], errors="coerce").max() + 1.0
    for name in ("jobs.csv", "bb_holds.csv", "reservations.csv"):
        if not (run_dir / name).is_file():
            continue
        t = pd.read_csv(run_dir / name, dtype=str, keep_default_na=False)
        parts = []
        for i in range(k):
            c = t.copy()
            c["job_id"] = c["job_id"] + f"_{i}"
            for col in times:
                if col in c:
                    v = pd.to_numeric(c[col], errors="coerce") + i * span
                    c[col] = v.map(lambda x: "" if pd.isna(x) else f"{x:.6f}")
            parts.append(c)
        pd.concat(parts).to_csv(out / name, index=False)
    info = json.loads((run_dir / "run.json").read_text())
    info.pop("workload", None)
    (out / "run.json").write_text(json.dumps(info))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=300, help="first N jobs of the bundled workload (0: all)")
    ap.add_argument("--policies", help="comma-separated (default: every built-in policy)")
    ap.add_argument("--models", help="comma-separated (default: every job model)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--time-only", type=Path, metavar="RUN_DIR", help="time the audit of RUN_DIR and exit")
    ap.add_argument("--scale", type=int, default=1, metavar="K",
                    help="with --time-only: audit K copies of the run, each shifted past the previous one's end")
    args = ap.parse_args()
    if args.time_only:
        from burstbuffer.audit import audit_run
        run_dir = args.time_only
        if args.scale > 1:
            run_dir = _scaled(run_dir, args.scale, Path(tempfile.mkdtemp()))
        import pandas  # noqa: F401 - imported before the clock starts, as `run` has it
        t0, c0 = time.perf_counter(), time.process_time()
        rep = audit_run(run_dir)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(rep.table())
        print(f"audit of {args.time_only} x{args.scale}: {wall:.2f} s wall, {cpu:.2f} s CPU; {rep.verdict()}")
        return 0
    from burstbuffer.io_model.registry import model_names
    from burstbuffer.schedulers.registry import needs_staged_model, policy_names
    models = args.models.split(",") if args.models else model_names()
    policies = args.policies.split(",") if args.policies else policy_names()
    todo = [(p, m, args.jobs or None) for p in policies for m in models
            if m == "three-phase" or not needs_staged_model(p)]
    bad = 0
    print(f"{'policy':18} {'model':12} {'violations':40} {'jobs.csv-only BB':>16} {'audit [s]':>9}")
    with ProcessPoolExecutor(args.workers) as pool:
        for policy, model, fails, naive, dt in pool.map(_one, todo):
            bad += fails != "ok"
            print(f"{policy:18} {model:12} {str(fails):40} {str(naive):>16} {dt:9.2f}", flush=True)
    print(f"{len(todo) - bad} of {len(todo)} runs feasible")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
