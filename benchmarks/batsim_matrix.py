"""Every built-in policy under every job model beside the real Batsim 4.2.1 (docs/batsim-fidelity.md): for
each (policy, job model), `burstbuffer serve` is run once against the real Batsim (the Dragonfly C++
plugin) and once against the embedded simulator (`platforms/dragonfly96.xml`), through the differential
proxy of `tests/batsim_diff.py`, on the first N bundled KTH jobs (`--jobs`, 1000; `--jobs-three-phase`, 300).

Prints one row per case: messages of each run, how many messages differ and the first that does, whether
the scheduler's jobs.csv and Batsim's `_jobs.csv` are byte-identical, and how many waiting times are
identical (with the largest difference). `--csv FILE` writes the rows too. A long run (about an hour for
the whole matrix on a 2-core machine): it is a check, not a timing; the fast differential suite
(`tests/test_differential_batsim.py`) runs the same comparison on fewer jobs.

    .venv/bin/python benchmarks/batsim_matrix.py [--policies a,b] [--models io-aware,alloc-only,three-phase]
        [--jobs 1000] [--jobs-three-phase 300] [--csv FILE]

Needs the real Batsim (``$BATSIM_BIN``, else ``~/.cache/batsim-4.2.1/build/batsim``) and its Dragonfly
plugin (``$BATSIM_DRAGONFLY_SO``, else ``~/.cache/batsim-4.2.1/platforms/dragonfly96_sg332.so``).
"""
from __future__ import annotations

import argparse
import csv
import io
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
from common import load_average, machine  # noqa: E402
from tests import batsim_diff as B  # noqa: E402

MODELS = ("alloc-only", "io-aware", "three-phase")
FIELDS = ("policy", "model", "jobs", "messages_real", "messages_embedded", "messages_differing", "first_difference",
          "scheduler_jobs_identical", "batsim_jobs_identical", "waiting_identical", "waiting_max_difference_s",
          "wall_s")


def _waits(run: B.Run) -> dict[str, float]:
    rows = csv.DictReader(io.StringIO(B.sched_jobs(run).decode()))
    return {f"{r['workload_name']}!{r['job_id']}": float(r["waiting_time"]) for r in rows if r["waiting_time"]}


def one(tmp: Path, policy: str, model: str, n: int, batsim: str, plugin: str) -> dict:
    """The comparison of one (policy, model) on the first `n` jobs (module docstring)."""
    t0 = time.perf_counter()
    wl = B.kth_subset(tmp / "kth.json", n)
    extra = ["-r", B.STORAGE + ":storage"]
    if model != "alloc-only":
        extra += ["--enable-dynamic-jobs", "--enable-profile-reuse"]
    cmd = B.serve_cmd(policy, model, wl)
    real = B.run_one(tmp, "real", B.real_cmd(batsim, plugin, wl, extra), cmd, timeout=3600)
    emb = B.run_one(tmp, "embedded", B.embedded_cmd(B.DRAGONFLY_XML, wl, extra), cmd, timeout=3600)
    row = {"policy": policy, "model": model, "jobs": n, "messages_real": len(real.messages),
           "messages_embedded": len(emb.messages), "wall_s": round(time.perf_counter() - t0, 1)}
    if real.returncode != 0 or emb.returncode != 0:
        row["first_difference"] = f"exit {real.returncode} / {emb.returncode}"
        return row
    diffs = B.compare_exchanges(real, emb, limit=10 ** 9, platform_free=True)
    row["messages_differing"] = sum(d.startswith("message ") for d in diffs)
    row["first_difference"] = diffs[0].split(":")[0] if diffs else ""
    row["scheduler_jobs_identical"] = B.sched_jobs(real) == B.sched_jobs(emb)
    row["batsim_jobs_identical"] = (Path(real.prefix + "_jobs.csv").read_bytes()
                                    == Path(emb.prefix + "_jobs.csv").read_bytes())
    wr, we = _waits(real), _waits(emb)
    common = set(wr) & set(we)
    row["waiting_identical"] = f"{sum(wr[j] == we[j] for j in common)}/{len(wr)}"
    row["waiting_max_difference_s"] = max((abs(wr[j] - we[j]) for j in common), default=0.0)
    return row


def main() -> int:
    from burstbuffer.schedulers.registry import POLICIES, needs_staged_model
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policies", default="", help="comma-separated policies (default: every built-in one)")
    ap.add_argument("--models", default=",".join(MODELS), help=f"comma-separated job models (default: {','.join(MODELS)})")
    ap.add_argument("--jobs", type=int, default=1000, help="first N KTH jobs under alloc-only and io-aware (1000)")
    ap.add_argument("--jobs-three-phase", type=int, default=300, help="first N KTH jobs under three-phase (300)")
    ap.add_argument("--csv", type=Path, help="also write the rows to this CSV file")
    a = ap.parse_args()
    batsim, plugin = B.find_batsim(), B.find_dragonfly_plugin()
    if batsim is None or plugin is None:
        print("needs the real Batsim 4.2.1 and its Dragonfly plugin (module docstring)", file=sys.stderr)
        return 2
    chosen = [p for p in a.policies.split(",") if p]
    print(f"machine: {machine()}; load average at start: {load_average()}")
    print(" | ".join(FIELDS))
    rows = []
    with tempfile.TemporaryDirectory(prefix="batsim-matrix-") as tmp:
        for model in [m for m in a.models.split(",") if m]:
            names = [n for n in POLICIES if model == "three-phase" or not needs_staged_model(n)]
            for policy in (chosen or names):
                if policy not in names:
                    continue
                n = a.jobs_three_phase if model == "three-phase" else a.jobs
                case = Path(tmp) / f"{policy}-{model}"
                case.mkdir()
                row = one(case, policy, model, n, batsim, plugin)
                rows.append(row)
                print(" | ".join(str(row.get(f, "")) for f in FIELDS), flush=True)
    print(f"load average at the end: {load_average()}")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
