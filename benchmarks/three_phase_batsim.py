"""Three-phase policies beside a real Batsim 4.2.1 (docs/io-model.md §3): `burstbuffer serve --model three-phase`
against the real Batsim (Dragonfly C++ plugin) and against `burstbuffer simulate` (the XML) on the first N KTH
jobs; prints, per policy, the jobs whose waiting time differs, whether the scheduler's jobs.csv files are
byte-identical, how many protocol messages differ, and the wall time of each run.

    python benchmarks/three_phase_batsim.py [--jobs 200] [--policies fcfs-easy,fcfs-bb,sjf-bb,conservative-bb,plan-2]

Needs the real Batsim (`$BATSIM_BIN`, else ~/.cache/batsim-4.2.1/build/batsim) and its Dragonfly plugin
(tests/batsim_diff.py finds them); run from the repository root.
"""
from __future__ import annotations

import argparse
import csv
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests import batsim_diff as B  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--policies", default="fcfs-easy,fcfs-bb,sjf-bb,conservative-bb,plan-2")
    a = ap.parse_args()
    batsim, plugin = B.find_batsim(), B.find_dragonfly_plugin()
    if batsim is None or plugin is None:
        print("no real Batsim 4.2.1 or Dragonfly plugin: nothing to compare")
        return 1
    extra = ["-r", B.STORAGE + ":storage", "--enable-dynamic-jobs", "--enable-profile-reuse"]
    ok = True
    for policy in a.policies.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            wl = B.kth_subset(tmp / "kth.json", a.jobs)
            cmd = B.serve_cmd(policy, "three-phase", wl)
            t0 = time.perf_counter()
            real = B.run_one(tmp, "real", B.real_cmd(batsim, plugin, wl, extra), cmd, timeout=1800)
            t1 = time.perf_counter()
            emb = B.run_one(tmp, "embedded", B.embedded_cmd(B.DRAGONFLY_XML, wl, extra), cmd, timeout=1800)
            t2 = time.perf_counter()
            if real.returncode or emb.returncode:
                print(f"{policy}: failed (real {real.returncode}, embedded {emb.returncode})")
                ok = False
                continue
            rj, ej = (list(csv.DictReader(io.StringIO(B.sched_jobs(r).decode()))) for r in (real, emb))
            diff = [x["job_id"] for x, y in zip(rj, ej) if x["waiting_time"] != y["waiting_time"]]
            msgs = B.compare_exchanges(real, emb, limit=10**6, platform_free=True)
            same = B.sched_jobs(real) == B.sched_jobs(emb)
            done = sum(r["final_state"].startswith("COMPLETED") for r in rj)
            print(f"{policy}: {len(rj)} jobs ({done} completed), waiting times differ for {len(diff)}, "
                  f"jobs.csv identical: {same}, messages differing: {len(msgs)}, "
                  f"wall real {t1 - t0:.0f} s / embedded {t2 - t1:.0f} s")
            for m in msgs[:3]:
                print("   ", m[:300])
            ok &= not diff and same
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
