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
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from ..metrics.runinfo import BB_HOLDS_CSV, RESERVATIONS_CSV

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


# ---------------------------------------------------------------------------------------------- reading
def _pairs(texts, sep: str):
    """Explode space-separated "A<sep>B" items of the strings `texts` (a pandas Series, index kept): a DataFrame
    indexed by the row each item came from, with integer columns a and b (b = a when an item has no `sep`):
    "0-3 7" → (0, 3), (7, 7) for a procset; "96:100 97:5" → (96, 100), (97, 5) for a BB allocation."""
    import pandas as pd
    items = texts[texts != ""].str.split().explode().dropna()
    if not len(items):
        return pd.DataFrame({"a": pd.Series([], dtype="int64"), "b": pd.Series([], dtype="int64")})
    parts = items.str.partition(sep)
    a = parts[0].astype("int64")
    b = parts[2].where(parts[2] != "", parts[0]).astype("int64")
    return pd.DataFrame({"a": a, "b": b})


def _num(col):
    import pandas as pd
    return pd.to_numeric(col, errors="coerce").to_numpy(float)


def load_jobs(run_dir: Path):
    """jobs.csv of `run_dir` as a DataFrame of strings (AuditError if missing or not a jobs.csv)."""
    return read_jobs_csv(Path(run_dir) / "jobs.csv")


def read_jobs_csv(path: Path):
    """A jobs.csv (or Batsim's PREFIX_jobs.csv) at `path` as a DataFrame of strings (AuditError if missing or
    without Batsim's columns)."""
    import pandas as pd
    try:
        jobs = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as exc:
        raise AuditError(f"{path}: cannot read it ({exc})") from None
    need = {"job_id", "submission_time", "requested_time", "final_state", "starting_time", "finish_time",
            "allocated_resources"}
    missing = need - set(jobs.columns)
    if missing:
        raise AuditError(f"{path}: not a jobs.csv (no column {sorted(missing)[0]})")
    return jobs


def load_run_json(run_dir: Path) -> dict:
    try:
        return json.loads((Path(run_dir) / "run.json").read_text())
    except (OSError, ValueError):
        return {}


# ---------------------------------------------------------------------------------------------- sweeps
def _holders(ids, res, a, b, resource: int, t: float) -> tuple[str, ...]:
    m = (res == resource) & (a <= t + EPS) & (b > t + EPS)
    return tuple(sorted(set(ids[m].tolist()), key=_job_key))


def _job_key(j: str):
    return (0, int(j), "") if str(j).isdigit() else (1, 0, str(j))


def check_processors(jobs, first: int, only=None):
    """(instants, violations): processors held by two jobs at once (module docstring). `only`: the resource ids
    to check (a sequence of int; None: every one of ``allocated_resources``)."""
    import numpy as np
    import pandas as pd
    a = _num(jobs["starting_time"])
    b = _num(jobs["finish_time"])
    if "nodes_start" in jobs:          # three-phase: the nodes from their start to their release
        ns, ne = _num(jobs["nodes_start"]), _num(jobs["nodes_end"])
        a, b = ns, np.where(np.isnan(ne), b, ne)
    b = np.where(np.isnan(b), np.inf, b)          # still running when the run stopped
    ids = jobs["job_id"].to_numpy()
    held = jobs["allocated_resources"].reset_index(drop=True)
    ranges = _pairs(held[~np.isnan(a)], "-")
    if not len(ranges):
        return 0, []
    rows_j, lo, hi = ranges.index.to_numpy(), ranges["a"].to_numpy(), ranges["b"].to_numpy()
    n = hi - lo + 1
    job = np.repeat(rows_j, n)
    proc = np.repeat(lo, n) + (np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n))
    if only is not None:
        keep = np.isin(proc, np.asarray(list(only), dtype=np.int64))
        job, proc = job[keep], proc[keep]
        if not len(job):                   # every hold on resources not checked (e.g. storage hosts only)
            return 0, []
    s, e = a[job], b[job]
    order = np.lexsort((s, proc))
    proc, s, e, job = proc[order], s[order], e[order], job[order]
    # the latest end among the earlier holds of the same processor
    new = np.r_[True, proc[1:] != proc[:-1]]
    grp = np.cumsum(new)
    run_max = pd.Series(e).groupby(grp).cummax().to_numpy(float)
    prev = np.r_[-np.inf, run_max[:-1]]
    prev[new] = -np.inf
    bad = np.nonzero((s < prev - OVER) & (e > s))[0]
    if not len(bad):
        return 0, []
    instants = len({(float(s[i]), int(proc[i])) for i in bad})
    out = []
    for i in sorted(bad, key=lambda i: (s[i], proc[i]))[:first]:
        hold = _holders(ids[job], proc, s, e, int(proc[i]), float(s[i]))
        out.append(Violation("processors", str(ids[job[i]]), float(s[i]), f"processor {int(proc[i])}",
                             f"{len(hold)} jobs", hold))
    return instants, out


def load_holds(run_dir: Path):
    """bb_holds.csv of `run_dir` (strings, plus its time as float column ``t``), or None without one."""
    import pandas as pd
    path = Path(run_dir) / BB_HOLDS_CSV
    if not path.is_file():
        return None
    try:
        h = pd.read_csv(path, dtype=str, keep_default_na=False)
        h["t"] = _num(h["time"])
        return h[["job_id", "t", "phase", "bb_allocation"]]
    except (OSError, ValueError, KeyError) as exc:
        raise AuditError(f"{path}: not a bb_holds.csv ({exc})") from None


def bb_holds(jobs, holds):
    """The BB holds of the run: arrays (job id, BB node, bytes, from [s], to [s]) — from jobs.csv's bb_allocation
    (starting_time → finish_time), replaced by `holds`' phases (`load_holds`) for the jobs it lists."""
    import numpy as np
    import pandas as pd
    start, end = _num(jobs["starting_time"]), _num(jobs["finish_time"])
    end = np.where(np.isnan(end), np.inf, end)
    ids = jobs["job_id"].reset_index(drop=True)
    alloc = (jobs["bb_allocation"] if "bb_allocation" in jobs else pd.Series([""] * len(jobs))).reset_index(drop=True)
    listed = ids.isin(holds["job_id"]) if holds is not None else pd.Series(False, index=ids.index)
    plain = ~np.isnan(start) & ~listed.to_numpy()
    seg = pd.DataFrame({"job": ids[plain], "t0": start[plain], "t1": end[plain], "alloc": alloc[plain]})
    if holds is not None and len(holds):
        finish = pd.Series(end, index=ids)
        finish = finish[~finish.index.duplicated()]
        nxt = holds.groupby("job_id", sort=False)["t"].shift(-1)
        t1 = nxt.fillna(holds["job_id"].map(finish)).fillna(np.inf)
        seg = pd.concat([seg, pd.DataFrame({"job": holds["job_id"], "t0": holds["t"], "t1": t1,
                                            "alloc": holds["bb_allocation"]})], ignore_index=True)
    seg = seg[(seg["t1"] > seg["t0"]) & (seg["alloc"] != "")].reset_index(drop=True)
    pairs = _pairs(seg["alloc"], ":")
    pairs = pairs[pairs["b"] != 0]
    rows = pairs.index.to_numpy()
    return (seg["job"].to_numpy(object)[rows], pairs["a"].to_numpy(np.int64), pairs["b"].to_numpy(np.int64),
            seg["t0"].to_numpy(float)[rows], seg["t1"].to_numpy(float)[rows])


def check_burst_buffer(jobs, holds, capacity: dict[int, int], names: dict[int, str], first: int):
    """(instants, violations): BB nodes above capacity (module docstring); `holds`: `load_holds`'s."""
    import numpy as np
    J, N, B, S, E = bb_holds(jobs, holds)
    out, instants = [], 0
    unknown = ~np.isin(N, np.array(sorted(capacity), dtype=np.int64)) if capacity else np.ones(len(N), bool)
    if unknown.any():
        for i in np.nonzero(unknown)[0][:first]:
            out.append(Violation("burst-buffer", str(J[i]), float(S[i]), f"resource {int(N[i])}", f"{int(B[i])} B",
                                 (), "not a burst-buffer node of the platform"))
        instants += int(unknown.sum())
    keep = ~unknown
    J, N, B, S, E = J[keep], N[keep], B[keep], S[keep], E[keep]
    if not len(N):
        return instants, out
    # events: +bytes at the start, -bytes at the end; at one instant the releases come first
    node = np.r_[N, N]
    t = np.r_[S, E]
    d = np.r_[B, -B]
    finite = np.isfinite(t)
    node, t, d = node[finite], t[finite], d[finite]
    order = np.lexsort((d, t, node))
    node, t, d = node[order], t[order], d[order]
    level = np.cumsum(d)
    new = np.r_[True, node[1:] != node[:-1]]
    base = np.maximum.accumulate(np.where(new, np.arange(len(node)), 0))
    level = level - np.r_[0, level][base]            # the cumulative sum restarted on each node
    # the level after every event of one (node, instant)
    last = np.r_[(node[1:] != node[:-1]) | (t[1:] != t[:-1]), True]
    table = np.zeros(int(max(capacity)) + 1, dtype=np.int64)
    table[np.array(list(capacity), dtype=np.int64)] = list(capacity.values())
    cap = table[node]
    over = np.nonzero(last & (level > cap))[0]
    instants += len(over)
    for i in sorted(over, key=lambda i: (t[i], node[i]))[:first]:
        n, ti = int(node[i]), float(t[i])
        m = (N == n) & (S <= ti) & (E > ti)
        held = tuple(sorted(set(J[m].tolist()), key=_job_key))
        came = (N == n) & (S == ti)
        job = str(J[came][0]) if came.any() else held[0]
        name = names.get(n, "")
        out.append(Violation("burst-buffer", job, ti, f"bb {n}" + (f" ({name})" if name else ""),
                             f"{int(level[i]) / 1e9:.2f} GB > {cap[i] / 1e9:.2f} GB "
                             f"({level[i] / cap[i]:.2f}x)", held))
    return instants, out


# ---------------------------------------------------------------------------------------------- job checks
def _workload_ids(path: Path) -> list[str] | None:
    try:
        doc = json.loads(Path(path).read_text())
        return [str(j["id"]).split("!", 1)[-1] for j in doc["jobs"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def workload_of(run_dir: Path, info: dict) -> Path | None:
    """The workload a run ran: run.json's ``workload`` (relative to the run folder if not absolute), else the
    one ``run --jobs N`` wrote in the folder (workload-first-N.json); None if unknown."""
    w = info.get("workload")
    if w:
        p = Path(w)
        return p if p.is_absolute() else Path(run_dir) / p
    found = sorted(Path(run_dir).glob("workload-first-*.json"))
    return found[0] if len(found) == 1 else None


def check_accounted(jobs, workload: Path | None, first: int, *, wanted: tuple[list[str], str] | None = None,
                    need_reason: bool = True):
    """(jobs, violations, note): the ``accounted`` check (module docstring) against the job ids of `workload`,
    or against `wanted` (ids, what they are: the note) when given. `need_reason`: a rejected job must give its
    reason in ``metadata`` (Batsim's REJECT_JOB carries none: False for its outputs)."""
    out = []
    ids = jobs["job_id"].tolist()
    state = jobs["final_state"].tolist()
    reason = jobs["metadata"].tolist() if "metadata" in jobs else [""] * len(ids)
    for j, s, r, t0, t1 in zip(ids, state, reason, jobs["starting_time"], jobs["finish_time"]):
        if s == REJECTED:
            if need_reason and not r.strip():
                out.append(Violation("accounted", j, math.nan, "", "", (), "rejected without a reason"))
        elif s not in RAN_STATES:
            out.append(Violation("accounted", j, math.nan, "", "", (),
                                 f"final state {s or '(none)'}: neither completed, killed nor rejected"))
        elif not t0 or not t1:
            out.append(Violation("accounted", j, math.nan, "", "", (), f"{s} without a start and an end"))
    seen: dict[str, int] = {}
    for j in ids:
        seen[j] = seen.get(j, 0) + 1
    for j, n in seen.items():
        if n > 1:
            out.append(Violation("accounted", j, math.nan, "", "", (), f"{n} rows in jobs.csv"))
    note = "workload unknown: rows' states only"
    if wanted is not None:
        wanted, note = wanted
    elif workload is not None:
        wanted = _workload_ids(workload)
        note = (f"workload {workload} unreadable: rows' states only" if wanted is None else
                f"{len(wanted)} jobs of {Path(workload).name}")
    if wanted is not None:
        known = set(wanted)
        for j in wanted:
            if j not in seen:
                out.append(Violation("accounted", j, math.nan, "", "", (), "submitted, missing from jobs.csv"))
        for j in seen:
            if j not in known:
                out.append(Violation("accounted", j, math.nan, "", "", (), "in jobs.csv, not in the workload"))
    return len(out), out[:first], note


def check_submission(jobs, first: int):
    import numpy as np
    sub, start = _num(jobs["submission_time"]), _num(jobs["starting_time"])
    bad = np.nonzero(start < sub - OVER)[0]
    ids = jobs["job_id"].to_numpy()
    return len(bad), [Violation("submission", str(ids[i]), float(start[i]), "", f"{sub[i] - start[i]:.6f} s early",
                                (), f"submitted at {sub[i]:.6f}") for i in bad[:first]]


def check_walltime(jobs, holds, first: int):
    """Jobs not killed whose time on their nodes, as the walltime counts it, exceeds walltime + GRACE: two-phase
    models from starting_time to finish_time; three-phase from nodes_start to the end of the output step
    (bb_holds.csv's "released", else nodes_end), less a wait for a policy's stage-out decision (bb_holds.csv:
    "computed" to "stage-out"): the walltime counts neither that wait nor the stage-out."""
    import numpy as np
    wall = _num(jobs["requested_time"])
    a, b = _num(jobs["starting_time"]), _num(jobs["finish_time"])
    if "nodes_start" in jobs:
        a, ne = _num(jobs["nodes_start"]), _num(jobs["nodes_end"])
        b = np.where(np.isnan(ne), b, ne)
    used = b - a
    if "nodes_start" in jobs and holds is not None:
        h = holds
        at = lambda phase: h[h["phase"] == phase].groupby("job_id")["t"].first()   # noqa: E731
        released = jobs["job_id"].map(at("released")).to_numpy(float)
        b = np.where(np.isnan(released), b, released)      # the stage-out is not bounded by the walltime
        waited = (at("stage-out") - at("computed")).dropna()
        used = b - a - jobs["job_id"].map(waited).fillna(0.0).to_numpy(float)
    killed = jobs["final_state"].isin(KILLED_STATES).to_numpy()
    bad = np.nonzero((wall > 0) & ~killed & (used > wall + GRACE))[0]
    ids = jobs["job_id"].to_numpy()
    return len(bad), [Violation("walltime", str(ids[i]), float(b[i]), "", f"{used[i] - wall[i]:.6f} s over",
                                (), f"walltime {wall[i]:.0f} s, ran {used[i]:.6f} s, not killed")
                      for i in bad[:first]]


def check_reservations(jobs, run_dir: Path, first: int):
    """EASY's guarantee (module docstring), or None when the run wrote no reservations.csv."""
    import numpy as np
    import pandas as pd
    path = Path(run_dir) / RESERVATIONS_CSV
    if not path.is_file():
        return None
    r = pd.read_csv(path, dtype=str, keep_default_na=False)
    if not len(r):
        return 0, []
    r["reserved"] = _num(r["reserved_start"])
    r["t"] = _num(r["time"])
    head = r.sort_values("t").groupby("job_id").first()          # the reservation it got on becoming head
    start = pd.Series(_num(jobs["starting_time"]), index=jobs["job_id"])     # its first hold (a stage-in's too)
    s = start.reindex(head.index).to_numpy(float)
    late = s - head["reserved"].to_numpy(float)
    bad = np.nonzero(late > GRACE)[0]
    ids = head.index.to_numpy()
    return len(bad), [Violation("easy-reservation", str(ids[i]), float(s[i]), "", f"{late[i]:.6f} s late", (),
                                f"head at t={head['t'].iloc[i]:.6f} with a reservation at "
                                f"{head['reserved'].iloc[i]:.6f}") for i in bad[:first]]


# ---------------------------------------------------------------------------------------------- entry
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


def _adder(rows: list, viol: list):
    """add(check, result, note): append a check's row (result None: skipped; else (count, violations, ...))."""
    def add(check, result, note=""):
        if result is None:
            rows.append((check, "skipped", 0, note))
            return
        rows.append((check, "FAIL" if result[0] else "ok", int(result[0]), note))
        viol.extend(result[1])
    return add


def _report(target: Path, rows: list, viol: list) -> AuditReport:
    import pandas as pd
    checks = pd.DataFrame(rows, columns=["check", "status", "violations", "note"])
    viol.sort(key=lambda x: (CHECKS.index(x.check), 0.0 if math.isnan(x.time) else x.time))
    return AuditReport(target, checks, viol)


def _audit(run_dir: Path, workload, first: int) -> AuditReport:
    jobs = load_jobs(run_dir)
    info = load_run_json(run_dir)
    holds = load_holds(run_dir)
    rows, viol = [], []
    add = _adder(rows, viol)

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
    return _report(run_dir, rows, viol)


def audit_simulation(prefix: str | Path, workloads, compute, *, bb_capacity: dict[int, int] | None = None,
                     compute_sharing: bool = False, first: int = 10) -> AuditReport:
    """Audit what Batsim's outputs of a simulation (``burstbuffer simulate``, docs/audit.md) let one check:
    ``PREFIX_jobs.csv`` read alone, jobs named ``WORKLOAD!ID`` (its workload_name and job_id).

    `workloads`: the static workloads' (name, JSON path) pairs in order (w0, w1, ...): each of their jobs must
    have a row (rows of other workloads, the scheduler's dynamic jobs, are accepted); `compute`: the compute
    machines' resource ids (the platform's compute role), the only ones the ``processors`` check sweeps: a
    storage host is legitimately shared by the I/O sub-jobs of several jobs; `bb_capacity`: BB node id →
    capacity [bytes] the platform declares (None or empty: none); checked only if the outputs carry a per-job
    ``bb_allocation``, which Batsim's columns do not. `compute_sharing` (``--enable-compute-sharing``): jobs may
    share compute hosts, ``processors`` is skipped. Returns an `AuditReport` (``run_dir``: the prefix); raises
    AuditError if PREFIX_jobs.csv is missing or malformed."""
    path = Path(f"{prefix}_jobs.csv")
    try:
        jobs = read_jobs_csv(path)
        if "workload_name" in jobs:
            jobs["job_id"] = jobs["workload_name"] + "!" + jobs["job_id"]
        rows, viol = [], []
        add = _adder(rows, viol)
        compute = sorted(int(c) for c in compute)
        if compute_sharing:
            add("processors", None, "not checked: --enable-compute-sharing lets jobs share compute hosts")
        else:
            add("processors", check_processors(jobs, first, only=compute),
                f"{len(compute)} compute hosts, starting_time → finish_time (storage hosts are shared by I/O)")
        if not bb_capacity:
            add("burst-buffer", None, "not checked: the platform declares no BB capacity")
        elif "bb_allocation" not in jobs:
            add("burst-buffer", None, f"not checked: the platform declares {len(bb_capacity)} BB capacities, but "
                                      f"{path.name} carries no per-job BB amount (Batsim's columns)")
        else:
            add("burst-buffer", check_burst_buffer(jobs, None, bb_capacity, {}, first),
                f"{len(bb_capacity)} BB nodes (platform); starting_time → finish_time")
        static = [name for name, _ in workloads]
        wanted, unread = [], []
        for name, wl in workloads:
            ids = _workload_ids(wl)
            if ids is None:
                unread.append(str(wl))
            else:
                wanted += [f"{name}!{j}" for j in ids]
        if unread:
            n, v, note = check_accounted(jobs, None, first, need_reason=False)
            note = f"workload {unread[0]} unreadable: rows' states only"
        else:
            dynamic = jobs["job_id"][~jobs["workload_name"].isin(static)].tolist() if "workload_name" in jobs else []
            n, v, note = check_accounted(jobs, None, first, need_reason=False, wanted=(
                wanted + dynamic, f"{len(wanted)} jobs of {len(static)} workload(s)"
                                  + (f", {len(dynamic)} dynamic" if dynamic else "")))
        add("accounted", (n, v), note)
        add("submission", check_submission(jobs, first))
        add("walltime", check_walltime(jobs, None, first), f"grace {GRACE:g} s")
        add("easy-reservation", None, "not checked: Batsim's outputs record no reservation")
    except AuditError:
        raise
    except (ValueError, KeyError, TypeError) as exc:
        raise AuditError(f"{path}: malformed ({type(exc).__name__}: {exc})") from None
    return _report(Path(prefix), rows, viol)


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
