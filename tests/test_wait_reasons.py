"""Why each job waited (docs/wait-reasons.md): the reasons a policy records at each decision, integrated by
the decision loop (SchedulerApp) into the per-reason columns of jobs.csv."""
from __future__ import annotations

import heapq
import math

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from burstbuffer.app import SchedulerApp
from burstbuffer.batsim.loop import Outbox
from burstbuffer.batsim.protocol import JobCompleted, JobSubmitted, SimulationBegins
from burstbuffer.io_model.alloc_only import AllocOnlyModel
from burstbuffer.metrics.definitions import WAIT_COLUMNS, WAIT_REASONS, wait_reason_category
from burstbuffer.metrics.waits import wait_lines, wait_table
from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers import Job, make_scheduler
from burstbuffer.schedulers.registry import any_model_names
from tests.test_policies import PROPS, TABLE1, TB, workloads


def drive(policy: str, plat: Platform, jobs: list[Job], runtime: dict[str, float], monkeypatch):
    """Event-driven run of SchedulerApp (alloc-only): submissions at subtime, a job completes at start +
    runtime; one `after_events` per event time, job ends before submissions. Returns the app."""
    monkeypatch.setattr(Platform, "from_simulation_begins", classmethod(lambda cls, data, **kw: plat))
    app = SchedulerApp(lambda p: make_scheduler(policy, p, seed=3), AllocOnlyModel())
    profiles = {f"p{j.id}": {"type": "delay", "delay": runtime[j.id], "bb": j.bb} for j in jobs}
    app.on_event(0.0, SimulationBegins({"profiles": {"w0": profiles}}), Outbox(0.0))
    subs = sorted(jobs, key=lambda j: j.subtime)
    ends: list[tuple[float, str]] = []
    i = 0
    while i < len(subs) or ends:
        t = min(([subs[i].subtime] if i < len(subs) else []) + ([ends[0][0]] if ends else []))
        out = Outbox(t)
        while ends and ends[0][0] == t:
            _, jid = heapq.heappop(ends)
            app.on_event(t, JobCompleted(jid, "COMPLETED_SUCCESSFULLY"), out)
        while i < len(subs) and subs[i].subtime == t:
            j = subs[i]
            i += 1
            app.on_event(t, JobSubmitted(j.id, {"id": j.id, "subtime": j.subtime, "walltime": j.walltime,
                                                "res": j.res, "profile": f"p{j.id}"}), out)
        before = {k for k, r in app.records.items() if r.start is not None}
        app.after_events(t, out)
        for k, r in app.records.items():
            if r.start is not None and k not in before:
                heapq.heappush(ends, (t + runtime[k], k))
    return app


def table1_jobs():
    plat = Platform.simple(4, [10 * TB])
    jobs = [Job(f"w0!{i}", float(sub), float(run), cpu, bb * TB // cpu) for i, sub, run, cpu, bb in TABLE1]
    return plat, jobs, {j.id: j.walltime for j in jobs}


def waits(app) -> dict[str, dict[str, float]]:
    return {k.split("!")[1]: {r: v for r, v in rec.waits.items() if v} for k, rec in app.records.items()}


# Hand derivations on the paper's Table 1 (minutes; 4 CPUs, one 10 TB BB node), decisions at the event
# times only. F0 = free CPUs / BB before the decision's starts. docs/wait-reasons.md gives the rules.
# fcfs-easy (processor-only reservation):
#  t=1  3 (3 CPU) head, F0 = 2 CPU → Resources; reservation {1,2,3} at [4,5).
#  t=2  4 (2 CPU, 4 TB) fits F0 but its window [2,5) meets the reservation → Reservation.
#  t=3  4 Reservation; 5 (3 CPU) > F0 = 2 → Resources; 6 backfilled (ends at the shadow time 4).
#  t=4  2, 6 end: F0 = 3 CPU / 6 TB. 3 needs 3 × 2.67 TB: 2 shares only → BurstBufferResources. Its
#       reservation takes every free CPU now → backfilling stops: 4, 5, 7, 8 fit F0 → Reservation.
#  t=10 1 ends; 3 starts; head 4: 1 CPU left after 3 → Priority; 5 (3 CPU) → Priority; 7 backfilled;
#       8: no CPU left after 3 and 7 → Priority.
#  t=11 4 starts; head 5 → Priority; 8 → Priority. t=14 5 starts, 8 → Priority. t=15 8 starts.
FCFS_EASY_WAITS = {"1": {}, "2": {}, "6": {},
                   "3": {"Resources": 3, "BurstBufferResources": 6},
                   "4": {"Reservation": 8, "Priority": 1},
                   "5": {"Resources": 1, "Reservation": 6, "Priority": 4},
                   "7": {"Reservation": 6},
                   "8": {"Reservation": 6, "Priority": 5}}          # 46 minutes in all
# fcfs-bb (processor + BB reservation for the head job 3 at 10):
#  3: Resources from 1 until 9 (no 3 CPUs free), then 6 TB free for 8 TB → BurstBufferResources [9,10).
#  5: Resources [3,9) (3 CPUs free only at 9, where it is backfilled). 6: Resources [3,5).
#  8: Resources [4,5) (1 CPU); at 5 F0 = 2 CPU / 4 TB fits it but job 6, looked at first, takes them
#     → Priority [5,6).
FCFS_BB_WAITS = {"1": {}, "2": {}, "4": {}, "7": {},
                 "3": {"Resources": 8, "BurstBufferResources": 1},
                 "5": {"Resources": 6}, "6": {"Resources": 2},
                 "8": {"Resources": 1, "Priority": 1}}               # 19 minutes in all
# fcfs: 3 Resources [1,4), BurstBufferResources [4,10); every other job fits F0 (or the CPUs left
# after the jobs ahead) but stays behind the first job that does not start → Priority; job 5 asks 3
# CPUs while 2 are free at 3 → Resources [3,4).
FCFS_WAITS = {"1": {}, "2": {},
              "3": {"Resources": 3, "BurstBufferResources": 6},
              "4": {"Priority": 9}, "5": {"Resources": 1, "Priority": 10},
              "6": {"Priority": 12}, "7": {"Priority": 11}, "8": {"Priority": 12}}   # 64 minutes


@pytest.mark.parametrize("policy, expected", [("fcfs-easy", FCFS_EASY_WAITS), ("fcfs-bb", FCFS_BB_WAITS),
                                              ("fcfs", FCFS_WAITS)])
def test_table1_wait_reasons(policy, expected, monkeypatch, tmp_path):
    plat, jobs, runtime = table1_jobs()
    app = drive(policy, plat, jobs, runtime, monkeypatch)
    assert waits(app) == expected
    app.write_jobs_csv(str(tmp_path / "jobs.csv"))
    df = pd.read_csv(tmp_path / "jobs.csv", dtype={"job_id": str}).set_index("job_id")
    for jid, per in expected.items():
        assert df.loc[jid, "waiting_time"] == sum(per.values())
        assert df.loc[jid, list(WAIT_COLUMNS)].sum() == df.loc[jid, "waiting_time"]
        for reason, col in WAIT_REASONS.items():
            assert df.loc[jid, col] == per.get(reason, 0)
    t = wait_table(df.reset_index())
    assert t["total_h"].sum() * 3600 == pytest.approx(df["waiting_time"].sum())
    assert any(line.strip().startswith("waiting for Resources:") for line in wait_lines(df.reset_index()))


def test_limit_reasons_hook(monkeypatch):
    """A queue limit noted in `limit_reasons` wins over every other reason and counts as QueueLimit."""
    plat, jobs, runtime = table1_jobs()
    orig = make_scheduler

    def limited(policy, p, **kw):
        s = orig(policy, p, **kw)
        s.limit_reasons["w0!8"] = "QOSMaxJobsPerUserLimit"
        return s

    monkeypatch.setattr("tests.test_wait_reasons.make_scheduler", limited)
    app = drive("fcfs-bb", plat, jobs, runtime, monkeypatch)
    assert waits(app)["8"] == {"QueueLimit": 2}          # 4 → 6, as Resources + Priority before
    assert wait_reason_category("QOSMaxJobsPerUserLimit") == "QueueLimit"
    assert wait_reason_category("Whatever") == "Unknown"


@PROPS
@given(workloads(), st.sampled_from(sorted(any_model_names())))
def test_reasons_sum_to_the_waiting_time(wl, policy):
    """Invariant on generated workloads: for every started job the per-reason times are ≥ 0, come from
    the known reasons and sum to start − submission; a job that never waited has none."""
    plat, jobs, runtime = wl
    mp = pytest.MonkeyPatch()
    try:
        app = drive(policy, plat, jobs, runtime, mp)
    finally:
        mp.undo()
    for rec in app.records.values():
        if rec.start is None:
            assert rec.state == "REJECTED" and not rec.waits
            continue
        wait = rec.start - rec.job.subtime
        assert set(rec.waits) <= set(WAIT_REASONS) - {"Unknown", "QueueLimit"}
        assert all(v > 0 for v in rec.waits.values())
        assert math.isclose(sum(rec.waits.values()), wait, rel_tol=1e-12, abs_tol=1e-9)
        row = rec.row()
        assert abs(sum(float(row[c]) for c in WAIT_COLUMNS) - float(row["waiting_time"])) < 1e-5
