"""The ``walltime_factor`` option (Casanova, ICS 632 "Job Scheduling" slides 31-32: inflated estimates help
backfilling): a hand-checked EASY schedule where doubling the estimates lets a job backfill, the decisions
carry the job as submitted, and the option's checks."""
from __future__ import annotations

import pytest

from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers import Job, make_scheduler
from burstbuffer.schedulers.options import OptionError, check_options

from .test_policies import simulate


def _jobs():
    """4 processors, no BB. A: 2 procs, walltime = run time 10, at t=0; B: 4 procs, walltime 10, at t=1
    (the head: reserved at A's estimated end); C: 2 procs, walltime = run time 9, at t=2."""
    jobs = [Job("A", 0.0, 10.0, 2), Job("B", 1.0, 10.0, 4), Job("C", 2.0, 9.0, 2)]
    return jobs, {"A": 10.0, "B": 10.0, "C": 9.0}


@pytest.mark.parametrize("policy", ["fcfs-easy", "fcfs-bb"])
def test_doubled_estimates_let_a_job_backfill(policy):
    plat = Platform.simple(4, [])
    jobs, run = _jobs()
    # factor 1: B is reserved at t=10 (A's end); C (2 + 9 = 11 > 10, on B's processors) cannot backfill:
    # A ends at 10, B runs 10-20, C 20-29
    tr = simulate(make_scheduler(policy, plat), jobs, run)
    assert tr.start == {"A": 0.0, "B": 10.0, "C": 20.0}
    assert (1.0, "B", 10.0) in tr.reservations
    # factor 2: A is held until 0 + 20, B reserved at t=20; C's inflated end 2 + 18 = 20 ≤ 20 backfills at
    # t=2; A ends at 10, C at 11, and B starts at 11
    tr = simulate(make_scheduler(policy, plat, walltime_factor=2), jobs, run)
    assert tr.start == {"A": 0.0, "C": 2.0, "B": 11.0}
    assert (1.0, "B", 20.0) in tr.reservations


def test_decisions_carry_the_job_as_submitted():
    plat = Platform.simple(4, [])
    s = make_scheduler("fcfs-bb", plat, walltime_factor=3)
    a = Job("A", 0.0, 10.0, 2)
    s.submit(a, 0.0)
    (start,) = s.decide(0.0)
    assert start.job is a and start.job.walltime == 10.0        # the job model runs it under its own walltime
    assert s.running["A"].hold_end == 30.0                          # the policy holds it for 3 × 10 s
    s.job_ended("A", 10.0)
    assert not s._as_submitted


def test_factor_one_is_the_default_and_below_one_is_refused():
    plat = Platform.simple(4, [])
    assert make_scheduler("sjf-bb", plat).walltime_factor == 1.0
    check_options("fcfs-bb", {"walltime_factor": 2.5})
    check_options("bbsched-naive", {"walltime_factor": 2})
    for bad in (0.5, 0, float("nan"), True, "2"):
        with pytest.raises(OptionError):
            check_options("fcfs-bb", {"walltime_factor": bad})
    with pytest.raises(ValueError, match="walltime_factor"):
        make_scheduler("fcfs-bb", plat, walltime_factor=0.9)
    with pytest.raises(OptionError):
        check_options("cerberus", {"walltime_factor": 2})


def test_queue_limits_judge_the_inflated_estimate(tmp_path):
    """A queue with a walltime limit: a job whose inflated estimate passes it is refused before submission
    (a one-line reason), never accepted and then failed."""
    q = tmp_path / "q.toml"
    q.write_text('[[queue]]\nname = "short"\nmax_walltime = 3600\n')
    plat = Platform.simple(4, [])
    s = make_scheduler("fcfs-bb", plat, queues=str(q), walltime_factor=2)
    assert "above 3600" in s.can_ever_fit(Job("A", 0.0, 2000.0, 1))       # 2 × 2000 s > 1 h
    assert s.can_ever_fit(Job("B", 0.0, 1800.0, 1)) is None
    s.submit(Job("B", 0.0, 1800.0, 1), 0.0)
    (start,) = s.decide(0.0)
    assert start.job.walltime == 1800.0
    with pytest.raises(ValueError, match="can never run"):
        s.submit(Job("A", 0.0, 2000.0, 1), 0.0)
    assert "A" not in s._as_submitted
