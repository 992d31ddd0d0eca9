"""An independent audit of a run's schedule (docs/audit.md): `audit_run(run_dir) -> AuditReport`.

The auditor reads a run's outputs alone — ``jobs.csv``, ``run.json`` (the processors and burst-buffer capacities
the run saw, the workload and platform it ran), ``bb_holds.csv`` when the job model has phases — and checks the
schedule they describe with its own sweep lines (numpy/pandas). It shares no code with the schedulers (no
availability profile, no policy, no ledger): a policy that miscounts cannot make its own audit agree.

Checks (`CHECKS`, docs/audit.md gives their exact semantics):

- ``processors``: no processor held by two jobs at one instant (a job holds ``allocated_resources`` from
  ``starting_time`` to ``finish_time``; under three-phase from ``nodes_start`` to ``nodes_end``);
- ``burst-buffer``: no BB node holding more bytes than its capacity (run.json) at any instant, every byte on a BB
  node (a job holds ``bb_allocation`` from ``starting_time`` to ``finish_time``, or by phase as bb_holds.csv says);
- ``accounted``: every job of the workload has exactly one row, in a final state (completed, failed, killed,
  walltime reached, or rejected with its reason), and no row names a job the workload lacks;
- ``submission``: no job started before its submission;
- ``walltime``: no job that was not killed held its nodes longer than its walltime + `GRACE`;
- ``easy-reservation``: for a policy that writes ``reservations.csv`` (EASY's head-job reservations), the head
  job never started after the reservation it held when it became head (+ `GRACE`).

The package: `report` (the verdict's types), `read` (a run's outputs), `sweeps` (processors, burst buffers),
`job_checks` (each job's checks), `simulation` (the audit of ``burstbuffer simulate``'s outputs); here, the
audit of a run and its record in run.json.
"""
from __future__ import annotations

from pathlib import Path

from .job_checks import check_accounted, check_reservations, check_submission, check_walltime, workload_of
from .read import load_holds, load_jobs, load_run_json, read_jobs_csv  # noqa: F401
from .report import (CHECKS, EPS, GRACE, KILLED_STATES, OVER, RAN_STATES, REJECTED, RUN_JSON_KEY,  # noqa: F401
                     AuditError, AuditReport, Violation, adder, report_of)
from .simulation import audit_simulation  # noqa: F401
from .sweeps import bb_holds, check_burst_buffer, check_processors  # noqa: F401


def audit_run(run_dir: str | Path, *, workload: str | Path | None = None, first: int = 10) -> AuditReport:
    """Audit the run in `run_dir` (module docstring; docs/audit.md). `workload`: the workload JSON the run ran
    (default: run.json's ``workload``, or the folder's workload-first-N.json). `first`: violations kept per
    check. Returns an `AuditReport`; raises AuditError if jobs.csv is missing or malformed."""
    run_dir = Path(run_dir)
    try:
        return _audit(run_dir, workload, first)
    except AuditError:
        raise
    except (ValueError, KeyError, TypeError) as exc:        # a cell that is not what jobs.csv writes there
        raise AuditError(f"{run_dir}: malformed run outputs ({type(exc).__name__}: {exc})") from None


def _audit(run_dir: Path, workload, first: int) -> AuditReport:
    jobs = load_jobs(run_dir)
    info = load_run_json(run_dir)
    holds = load_holds(run_dir)
    rows, viol = [], []
    add = adder(rows, viol)

    model = info.get("model", "")
    three = "nodes_start" in jobs
    add("processors", check_processors(jobs, first),
        "nodes_start → nodes_end (three-phase)" if three else "starting_time → finish_time")
    capacity = {int(k): int(v) for k, v in (info.get("bb_capacity") or {}).items()}
    names = {int(k): v for k, v in (info.get("names") or {}).items()}
    if capacity:
        src = ("bb_holds.csv phases" if holds is not None else
               "no bb_holds.csv: bb_allocation from stage-in to stage-out, phases unknown" if three else
               "starting_time → finish_time")
        add("burst-buffer", check_burst_buffer(jobs, holds, capacity, names, first),
            f"{len(capacity)} BB nodes (run.json); {src}")
    else:
        add("burst-buffer", None, "no BB capacity in run.json")
    wl = Path(workload) if workload is not None else workload_of(run_dir, info)
    n, v, note = check_accounted(jobs, wl, first)
    add("accounted", (n, v), note)
    add("submission", check_submission(jobs, first))
    add("walltime", check_walltime(jobs, holds, first), f"grace {GRACE:g} s" + (f", model {model}" if model else ""))
    res = check_reservations(jobs, run_dir, first)
    add("easy-reservation", res, "reservations.csv" if res is not None else "the policy records no reservation")
    return report_of(run_dir, rows, viol)


def record_verdict(run_dir: str | Path, report: AuditReport, **facts) -> None:
    """Write `report`'s verdict (`AuditReport.to_dict`) into `run_dir`/run.json under ``audit``, with `facts`
    (e.g. workload=, platform=: the run's inputs, for a later `burstbuffer check`) at the top level."""
    from ..metrics.runinfo import update_run_json
    update_run_json(Path(run_dir), **{k: str(v) for k, v in facts.items() if v is not None},
                    **{RUN_JSON_KEY: report.to_dict()})


def audited(result, output: str | Path, *, workload: str | Path, platform: str | Path):
    """The audit of every `run` (`burstbuffer.runner.run_spec` calls it once the run's outputs are written):
    audit `output`, write the verdict and the run's inputs into its run.json (`record_verdict`), set
    ``result.audit`` (an `AuditReport`) and return `result`. Raises `errors.InfeasibleSchedule` (one line: the
    verdict and the first violation) when a check fails: an infeasible schedule is never reported as a result."""
    from ..errors import InfeasibleSchedule
    report = audit_run(output, workload=workload)
    record_verdict(output, report, workload=Path(workload).resolve(), platform=Path(platform).resolve())
    result.audit = report
    if not report.ok:
        first = report.violations[0].line() if report.violations else ""
        raise InfeasibleSchedule(f"schedule audit: {report.verdict()}; first: {first} (outputs kept in {output}; "
                                 f"`burstbuffer check {output}` lists the violations, docs/audit.md)")
    return result
