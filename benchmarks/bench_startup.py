"""Start-up time of the `burstbuffer` command: the median wall time of N runs of each of several commands
that do (almost) nothing but build the parser (`--help`, `--version`, each subcommand's `--help`), beside
the bare interpreter (`python -c pass`), so the difference is what `burstbuffer` adds. Target: < 0.2 s
each (issue 30, docs/startup.md). Also lists the heavy libraries each command imported (they should be
none for `--help`).

    .venv/bin/python benchmarks/bench_startup.py [--runs N] [--cpu C] [--source DIR]

Each command runs as ``python -m burstbuffer ...`` from the source tree `--source` (default: this one), so
that another checkout (e.g. ``git archive main | tar -x -C /tmp/base``) can be timed the same way for a
before/after. `--cpu C` pins every run to core C (taskset); time on an otherwise idle machine.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import load_average, machine  # noqa: E402

COMMANDS = [["--help"], ["--version"], ["run", "--help"], ["simulate", "--help"], ["serve", "--help"],
            ["workload", "--help"], ["platform", "--help"], ["reproduce", "--help"], ["sweep", "--help"],
            ["plot", "--help"], ["metrics", "--help"], ["policies", "--help"]]
HEAVY = ("numpy", "scipy", "pandas", "matplotlib", "zmq", "simgrid", "dask", "distributed")
_PROBE = ("import sys, io, contextlib\nfrom burstbuffer.cli import main\n"
          "with contextlib.redirect_stdout(io.StringIO()):\n    main(sys.argv[1:])\n"
          "print(' '.join(sorted({m.split('.')[0] for m in sys.modules} & set(%r))))" % (HEAVY,))


#: the environment of every timed run: byte-code written and read as on a user's machine (a shell with
#: PYTHONDONTWRITEBYTECODE set would otherwise time the compilation of every module at every start)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str], cpu: int | None, cwd: Path | None = None) -> tuple[float, float]:
    """(wall time, CPU time user + system) of one run of `argv` [s]."""
    cmd = (["taskset", "-c", str(cpu)] if cpu is not None and shutil.which("taskset") else []) + argv
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, cwd=cwd, env=ENV)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def medians(argv: list[str], runs: int, cpu: int | None, cwd: Path | None = None) -> tuple[float, float]:
    """Median wall time and median CPU time of `runs` runs of `argv`."""
    got = [timed(argv, cpu, cwd) for _ in range(runs)]
    return statistics.median(w for w, _ in got), statistics.median(c for _, c in got)


def heavy_imports(args: list[str], cwd: Path) -> str:
    out = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, cwd=cwd, env=ENV)
    return out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="runs per command (default 7)")
    ap.add_argument("--cpu", type=int, default=None, help="pin each run to this core (taskset)")
    ap.add_argument("--source", type=Path, default=Path(__file__).resolve().parents[1],
                    help="source tree whose burstbuffer package to time (default: this one)")
    a = ap.parse_args()
    src = a.source.resolve()
    base = [sys.executable, "-m", "burstbuffer"]
    print(f"source: {src}")
    print(f"machine: {machine()}; {a.runs} runs per command, median wall time"
          + (f", pinned to core {a.cpu}" if a.cpu is not None else ""))
    print(f"load average at start: {load_average()}")
    print("byte-code: written on a first run of each command, then read (PYTHONDONTWRITEBYTECODE unset)")
    print("(wall: the target's measure, on an idle machine; CPU = user + system: steadier on a busy one)")
    bare, bare_cpu = medians([sys.executable, "-c", "pass"], a.runs, a.cpu)
    print(f"{'python -c pass':<28} wall {bare:6.3f} s   CPU {bare_cpu:6.3f} s")
    for c in COMMANDS:
        timed(base + c, a.cpu, src)  # warm the byte-code cache
        med, cpu = medians(base + c, a.runs, a.cpu, src)
        heavy = heavy_imports(c, src)
        print(f"{'burstbuffer ' + ' '.join(c):<28} wall {med:6.3f} s   CPU {cpu:6.3f} s  (+{cpu - bare_cpu:.3f} s)"
              f"{'  imports ' + heavy if heavy else ''}")
    print(f"load average at the end: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
