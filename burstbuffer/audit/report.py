"""The audit's verdict (`burstbuffer.audit`): the checks' names and tolerances, a violation, the report of a
run (`AuditReport`) and how its table is built.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path


#: The checks, in the order of the table.
CHECKS = ("processors", "burst-buffer", "accounted", "submission", "walltime", "easy-reservation")


#: Slack [s] of the time comparisons: jobs.csv writes times with 6 decimals; two times at most EPS apart are
#: equal (`OVER`: the margin above it, for the binary rounding of the parsed decimals, e.g. 481.08701 - 481.087).
EPS = 1e-5


OVER = EPS + 1e-9


#: What a job may overrun its walltime by [s] without being killed (the simulator kills at the walltime; the
#: times are rounded to microseconds and a phase's sub-jobs each get the walltime left).
GRACE = 1e-3


#: Final states of a job that ran (Batsim's) and of one that was rejected.
RAN_STATES = ("COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED")


KILLED_STATES = ("COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED")


REJECTED = "REJECTED"


#: run.json's key for the verdict (`record_verdict`).
RUN_JSON_KEY = "audit"


@dataclass
class Violation:
    """One breach: `check` (a `CHECKS` name), `job` (the job that caused it), `time` [s], `resource` (a processor
    id, "bb <id> (<name>)", or "" for a job-level check), `amount` (processors: jobs on it; BB: bytes held vs the
    capacity; walltime: seconds), `holders` (the jobs holding the resource at `time`), `detail` (one line)."""

    check: str
    job: str
    time: float
    resource: str = ""
    amount: str = ""
    holders: tuple[str, ...] = ()
    detail: str = ""

    def line(self) -> str:
        where = f" on {self.resource}" if self.resource else ""
        held = f"; held by jobs {', '.join(self.holders)}" if self.holders else ""
        t = "" if math.isnan(self.time) else f" at t={self.time:.6f}"
        amount = f": {self.amount}" if self.amount else ""
        return f"{self.check}: job {self.job}{t}{where}{amount}{held}{f' ({self.detail})' if self.detail else ''}"


@dataclass
class AuditReport:
    """The audit of one run: `checks` (a pandas DataFrame: check, status "ok" | "FAIL" | "skipped", violations
    (count of instants, or jobs for job-level checks), note), `violations` (the first `Violation`s of each
    failed check, in time order). `ok`: no check failed."""

    run_dir: Path
    checks: object
    violations: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.checks["status"] == "FAIL").any()

    def table(self) -> str:
        rows = [(r.check, r.status, str(r.violations), r.note) for r in self.checks.itertuples()]
        w = [max(len(x[i]) for x in rows + [("check", "status", "violations", "")]) for i in range(3)]
        head = f"{'check':<{w[0]}}  {'status':<{w[1]}}  {'violations':>{w[2]}}  note"
        return "\n".join([head] + [f"{a:<{w[0]}}  {b:<{w[1]}}  {c:>{w[2]}}  {d}" for a, b, c, d in rows])

    def verdict(self) -> str:
        """One line: "feasible (N checks)" or "INFEASIBLE: K violation(s) (check: n, ...)"."""
        ran = self.checks[self.checks["status"] != "skipped"]
        if self.ok:
            return f"feasible ({len(ran)} checks passed: {', '.join(ran['check'])})"
        bad = self.checks[self.checks["status"] == "FAIL"]
        return "INFEASIBLE: " + ", ".join(f"{r.check} {r.violations}" for r in bad.itertuples())

    def to_dict(self, first: int = 10) -> dict:
        """run.json's ``audit`` value: ok, verdict, the table's rows and the `first` violations."""
        return {"ok": bool(self.ok), "verdict": self.verdict(),
                "checks": [{"check": r.check, "status": r.status, "violations": int(r.violations), "note": r.note}
                           for r in self.checks.itertuples()],
                "violations": [v.line() for v in self.violations[:first]]}


class AuditError(ValueError):
    """The run folder cannot be audited (jobs.csv missing or malformed): a one-line reason."""


def adder(rows: list, viol: list):
    """add(check, result, note): append a check's row (result None: skipped; else (count, violations, ...))."""
    def add(check, result, note=""):
        if result is None:
            rows.append((check, "skipped", 0, note))
            return
        rows.append((check, "FAIL" if result[0] else "ok", int(result[0]), note))
        viol.extend(result[1])
    return add


def report_of(target: Path, rows: list, viol: list) -> AuditReport:
    import pandas as pd
    checks = pd.DataFrame(rows, columns=["check", "status", "violations", "note"])
    viol.sort(key=lambda x: (CHECKS.index(x.check), 0.0 if math.isnan(x.time) else x.time))
    return AuditReport(target, checks, viol)
