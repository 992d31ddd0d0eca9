"""Write an SWF trace's records as a Slurm accounting dump (``sacct --parsable2``), for the tests of
``burstbuffer workload from-sacct`` (docs/inputs-traces.md) and for trying the command without a Slurm site.

    python tests/data/swf_to_sacct.py workloads/KTH-SP2-1996-2.1-cln.swf.gz --jobs 200 --output kth.sacct \\
        [--bb-every 5] [--steps]

Columns: those of the documented command (``--format JobIDRaw,Submit,Start,End,TimelimitRaw,NNodes,NCPUS,State,
ReqTRES,AllocTRES``). Per SWF record: Submit = 1996-09-23T00:00:00 (KTH's log began in September 1996) + submit
time, Start = Submit + wait time, End = Start + run time, TimelimitRaw = ⌈requested time / 60⌉ minutes (Slurm's
limits are whole minutes), NNodes = requested processors (the SP2 had one processor per node), NCPUS = NNodes × 2.
A record with run time ≤ 0 becomes a job CANCELLED while pending (Start = End = the cancel time, as Slurm
records it), one with requested processors ≤ 0 keeps that count. Every `bb_every`-th job (0: none) carries a
``bb/datawarp`` TRES of (job number mod 7 + 1) GiB per node (× NNodes) in ReqTRES, written ``<n>G`` as sacct does; the others
only cpu/mem/node. With `steps`, each job is followed by its ``.batch`` step row, as sacct prints without -X.

Deterministic: the same trace and options give the same bytes.
"""
from __future__ import annotations

import argparse
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from burstbuffer.workloads.swf import iter_swf  # noqa: E402

HEADER = "JobIDRaw|Submit|Start|End|TimelimitRaw|NNodes|NCPUS|State|ReqTRES|AllocTRES"
BASE = datetime(1996, 9, 23, tzinfo=timezone.utc)


def _t(seconds: float) -> str:
    return (BASE + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")


def bb_gib(job_number: int) -> int:
    """GiB per node of the bb/datawarp TRES given to a job that gets one."""
    return job_number % 7 + 1


def sacct_lines(swf: str | Path, *, jobs: int | None = None, bb_every: int = 5, steps: bool = False) -> list[str]:
    """The dump's lines (header first) for the first `jobs` records of `swf`."""
    out = [HEADER]
    for k, rec in enumerate(iter_swf(swf)):
        if jobs is not None and k >= jobs:
            break
        sub = rec.submit_time
        start = sub + max(rec.wait_time, 0)
        nodes = int(rec.requested_processors)
        limit = -(-int(rec.requested_time) // 60) if rec.requested_time > 0 else "UNLIMITED"
        tres = f"cpu={max(nodes, 0) * 2},mem={max(nodes, 0) * 128}M,node={max(nodes, 0)}"
        if rec.run_time <= 0:
            end, state = start, "CANCELLED by 0"
        else:
            end, state = start + rec.run_time, "COMPLETED"
        req = tres + (f",bb/datawarp={bb_gib(rec.job_number) * max(nodes, 0)}G" if bb_every and rec.job_number % bb_every == 0
                      else "")
        alloc = tres if state == "COMPLETED" else ""
        out.append("|".join(str(x) for x in (rec.job_number, _t(sub), _t(start), _t(end), limit, nodes, nodes * 2,
                                             state, req, alloc)))
        if steps and state == "COMPLETED":
            out.append("|".join(str(x) for x in (f"{rec.job_number}.batch", _t(sub), _t(start), _t(end), "", 1, 2,
                                                 state, "", tres)))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("swf")
    p.add_argument("--jobs", type=int)
    p.add_argument("--bb-every", type=int, default=5)
    p.add_argument("--steps", action="store_true")
    p.add_argument("--output", "-o", required=True)
    a = p.parse_args(argv)
    lines = sacct_lines(a.swf, jobs=a.jobs, bb_every=a.bb_every, steps=a.steps)
    Path(a.output).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {a.output}: {len(lines) - 1} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
