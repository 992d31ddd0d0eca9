"""`burstbuffer check RUN_DIR`: the audit of a run's schedule (`burstbuffer.audit`, docs/audit.md)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "audit a run's schedule from its outputs (processors, burst buffers, jobs accounted, walltimes)"


def _cmd_check(args: argparse.Namespace) -> int:
    from ..errors import InputError
    from . import AuditError, audit_run
    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        raise InputError(str(run_dir), "RUN_DIR", "not a folder")
    if args.workload is not None and not Path(args.workload).is_file():
        raise InputError(str(args.workload), "--workload", "no such file")
    try:
        report = audit_run(run_dir, workload=args.workload, first=args.first)
    except AuditError as exc:
        raise InputError(str(run_dir), "jobs.csv", str(exc)) from None
    print(report.table())
    print(f"verdict: {report.verdict()}")
    if report.ok:
        return 0
    print(f"first violations (at most {args.first} per check):", file=sys.stderr)
    for v in report.violations:
        print(f"  {v.line()}", file=sys.stderr)
    return 1


def register(subparsers) -> None:
    """Add the ``check`` command to an argparse subparsers object (sets ``func(args) -> int``)."""
    c = subparsers.add_parser(
        "check", help=HELP,
        description="Audit a run folder's schedule from its outputs alone (jobs.csv, run.json, bb_holds.csv; "
                    "docs/audit.md), independently of the scheduler: no processor held by two jobs at once, no "
                    "burst-buffer node above its capacity, every job of the workload accounted for, no job "
                    "started before its submission or past its walltime unless killed, and EASY's reservation "
                    "kept when the run recorded one. Prints a table of the checks; exits 1 listing the first "
                    "violations (job, time, resource, amount, holders), 0 when the schedule is feasible.")
    c.add_argument("run_dir", metavar="RUN_DIR", help="a run's output folder (holds jobs.csv and run.json)")
    c.add_argument("--workload", metavar="FILE",
                   help="the workload the run ran, to check every job is accounted for (default: run.json's "
                        "workload, or the folder's workload-first-N.json)")
    from ..cliargs import positive_int
    c.add_argument("--first", type=positive_int, default=10, metavar="N",
                   help="violations listed per failed check (default: 10)")
    c.set_defaults(func=_cmd_check)
