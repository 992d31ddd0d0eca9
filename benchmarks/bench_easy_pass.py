"""EASY's decision in C (``native/easy_pass.c``) against the same decision in Python, on whole runs.

The EASY family's passes (FCFS, the head's reservation, backfilling) exist in Python (every case: queues, limits,
the three-phase model's staged holds) and in C (the plain case only: two-phase holds, no queues, no limits, no extra
nodes). This benchmark says what the C pass saves on whole runs: each case runs `burstbuffer.runner.run` (the
default in-process link) in a fresh process, alternately with the built-in policy (the C pass) and with the same
class whose C pass is switched off (`PythonPass` below, loaded as ``FILE.py:CLASS``: the Python pass), and prints
per case the medians of the wall time, of the scheduler's CPU (its answers, `RunResult.scheduler_cpu`) and of the
simulator's CPU, with the machine and its load average. Each pair of runs must write the same jobs.csv (checked).

    .venv/bin/python benchmarks/bench_easy_pass.py [--repeat 3] [--policies fcfs-easy,sjf-bb] [--jobs 1000,4000]

``--jobs``: 1000 = the bundled workloads/kth-1000.json, any other N = the first N jobs of the whole KTH trace
(workloads/kth-all.json, made on demand).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import load_average, machine  # noqa: E402

#: the built-in class with the C pass switched off (a policy file: `run` loads it in its child)
PYTHON_PASS = '''
from burstbuffer.schedulers.easy import EasyBackfilling


class PythonPass(EasyBackfilling):
    """EasyBackfilling deciding with its Python passes only."""

    def _native_usable(self) -> bool:
        return False
'''

#: the options of each preset measured (`registry.PRESETS`), given to `PythonPass`
PRESET_OPTIONS = {"fcfs-easy": {"reserve_bb": False, "sjf_backfill": False},
                  "fcfs-bb": {"reserve_bb": True, "sjf_backfill": False},
                  "sjf-bb": {"reserve_bb": True, "sjf_backfill": True}}

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from burstbuffer.runner import run, DEFAULT_PLATFORM
policy, options, workload, out = sys.argv[1:5]
t0 = time.perf_counter()
res = run(policy, Path(workload), DEFAULT_PLATFORM, Path(out), model="io-aware", progress=False, timeout=3600,
          policy_options=json.loads(options) or None)
wall = time.perf_counter() - t0
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "sched_cpu": res.scheduler_cpu,
                  "sim_cpu": kids.ru_utime + kids.ru_stime - res.scheduler_cpu}))
"""


def workload_of(jobs: int, folder: Path) -> Path:
    """The bundled 1000 KTH jobs, or the first `jobs` jobs of the whole trace."""
    if jobs == 1000:
        return ROOT / "workloads" / "kth-1000.json"
    from burstbuffer.workloads.bundled import ensure_kth_workload
    data = json.loads(Path(ensure_kth_workload()).read_text())
    data["jobs"] = data["jobs"][:jobs]
    path = folder / f"kth-first-{jobs}.json"
    path.write_text(json.dumps(data))
    return path


def one_run(policy: str, options: dict, workload: Path, out: Path) -> dict:
    text = subprocess.run([sys.executable, "-c", CHILD, policy, json.dumps(options), str(workload), str(out)],
                          cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return json.loads(text.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--policies", default="fcfs-easy,sjf-bb")
    ap.add_argument("--jobs", default="1000,4000", help="comma-separated job counts (module docstring)")
    args = ap.parse_args()
    print(f"machine: {machine()}; load average {load_average()}")
    print(f"io-aware, the paper's platform, in-process link; median of {args.repeat} alternated pairs")
    print(f"{'case':24} {'pass':7} {'wall [s]':>9} {'sched CPU [s]':>14} {'sim CPU [s]':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        policy_file = tmp / "python_pass.py"
        policy_file.write_text(PYTHON_PASS)
        for jobs in (int(x) for x in args.jobs.split(",")):
            workload = workload_of(jobs, tmp)
            for policy in args.policies.split(","):
                rows: dict[str, list[dict]] = {"C": [], "Python": []}
                for i in range(args.repeat):
                    for label, name, opts in (("C", policy, {}),
                                              ("Python", f"{policy_file}:PythonPass", PRESET_OPTIONS[policy])):
                        out = tmp / f"{label}-{i}"
                        rows[label].append(one_run(name, opts, workload, out))
                    a, b = ((tmp / f"{x}-{i}" / "jobs.csv").read_bytes() for x in ("C", "Python"))
                    if a != b:
                        sys.exit(f"bench_easy_pass: {policy} on {jobs} jobs: the two passes wrote different jobs.csv")
                    for x in ("C", "Python"):
                        subprocess.run(["rm", "-rf", str(tmp / f"{x}-{i}")], check=True)
                med = {k: {c: statistics.median(r[c] for r in v) for c in ("wall", "sched_cpu", "sim_cpu")}
                       for k, v in rows.items()}
                for k in ("C", "Python"):
                    m = med[k]
                    print(f"{policy + ' ' + str(jobs) + ' jobs':24} {k:7} {m['wall']:9.1f} {m['sched_cpu']:14.2f} "
                          f"{m['sim_cpu']:12.2f}", flush=True)
                c, p = med["C"], med["Python"]
                print(f"{'':24} {'saved':7} {100 * (1 - c['wall'] / p['wall']):8.0f}% "
                      f"{100 * (1 - c['sched_cpu'] / p['sched_cpu']):13.0f}%   (load average {load_average()})",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
