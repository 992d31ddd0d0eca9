"""The app's guards around a policy's decisions (issue 26, items 4, 5, 7; docs/reliability.md): a decision
that over-fills a burst-buffer node is refused whichever scheduler API made it, a policy that raises or
gets stuck becomes one line naming the policy and the decision time (outputs kept, exit 1), and a campaign
records such a run as failed and goes on."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from procset import ProcSet

from burstbuffer.guards import BBLedger, DecisionGuard, SchedulerFault
from burstbuffer.schedulers.base import Job, Start, StageIn

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

ROOT = Path(__file__).resolve().parents[1]
KTH = ROOT / "workloads" / "kth-1000.json"

POLICIES = textwrap.dedent('''
    import time
    from burstbuffer.schedulers import EasyBackfilling as FcfsBB   # fcfs-bb: its defaults


    class OneBBNode(FcfsBB):
        """fcfs-bb, but every compute node's BB goes to the first BB node (a low-level Scheduler bug)."""
        def decide(self, now):
            starts = super().decide(now)
            first = min(self.platform.bb_capacity)
            for s in starts:
                s.bb_of_node = {n: first for n in s.bb_of_node}
            return starts


    class Raises(FcfsBB):
        def decide(self, now):
            if now > 0:
                raise ValueError("my policy\\nbroke")
            return super().decide(now)


    class Stuck(FcfsBB):
        def decide(self, now):
            if now > 0:
                while True:
                    time.sleep(0.01)
            return super().decide(now)
''')


@pytest.fixture()
def policies(tmp_path):
    (tmp_path / "mypolicies.py").write_text(POLICIES)
    w = json.loads(KTH.read_text())
    w["jobs"] = w["jobs"][:40]
    (tmp_path / "kth40.json").write_text(json.dumps(w))
    return tmp_path


def _run(tmp_path, policy, *extra):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path)]))
    return subprocess.run([sys.executable, "-m", "burstbuffer", "run", "--policy", f"mypolicies:{policy}",
                           "--workload", str(tmp_path / "kth40.json"), "--output", str(tmp_path / "out"),
                           "--cpu", "off", "-q", *extra], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


def test_bb_overfill_by_a_low_level_scheduler_is_refused(policies):
    r = _run(policies, "OneBBNode")
    assert r.returncode == 1, r.stderr
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and "over-filled" in err[0] and "BB node" in err[0] and "policy " in err[0], r.stderr
    rows = list(csv.DictReader((policies / "out" / "jobs.csv").open()))
    assert rows, "jobs.csv kept"
    # nothing in jobs.csv ever holds more than a BB node's 40 GB
    held: dict[str, int] = {}
    for row in rows:
        if row["final_state"] in ("RUNNING",):
            for k, v in (x.split(":") for x in row["bb_allocation"].split()):
                held[k] = held.get(k, 0) + int(v)
    assert all(v <= 40 * 10**9 for v in held.values()), held


def test_policy_that_raises_is_one_line_with_its_name_and_time(policies):
    r = _run(policies, "Raises")
    assert r.returncode == 1, r.stderr
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "Raises" in err[0] and "at t=" in err[0] and "ValueError: my policy broke" in err[0], err
    assert (policies / "out" / "jobs.csv").is_file()


def test_stuck_policy_is_stopped_by_the_decision_timeout(policies):
    r = _run(policies, "Stuck", "--timeout", "3")
    assert r.returncode == 124, r.stderr          # a time limit ended the run: as timeout(1)
    err = r.stderr.strip().splitlines()
    assert len(err) == 1 and "Stuck" in err[0] and "decision timeout" in err[0], r.stderr
    assert (policies / "out" / "jobs.csv").is_file()


def test_campaign_records_a_stuck_run_and_moves_on(policies):
    c = policies / "c.toml"
    c.write_text(textwrap.dedent(f'''
        [campaign]
        timeout = 3
        models = ["alloc-only"]
        [[policy]]
        name = "fcfs"
        [[workload]]
        file = "{policies / 'kth40.json'}"
    '''))
    # the registry knows built-in names only: a stuck built-in is simulated by a tiny run timeout instead
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(policies)]))
    c2 = policies / "c2.toml"
    c2.write_text(c.read_text().replace("timeout = 3", "timeout = 3\nrun-timeout = 0.001"))
    r = subprocess.run([sys.executable, "-m", "burstbuffer", "sweep", str(c2), "--output", str(policies / "o"),
                        "--engine", "local", "--workers", "1", "--cpu", "off", "-q"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stderr
    rows = list(csv.DictReader((policies / "o" / "campaign.csv").open()))
    assert [x["status"] for x in rows] == ["failed"] and "run timeout" in rows[0]["error"], rows


def _platform(cap=100):
    class P:
        bb_capacity = {10: cap, 11: cap}
        names = {10: "bb0", 11: "bb1"}
    return P()


class _Rec:
    end = None


def test_ledger_holds_bytes_until_the_job_ends():
    led = BBLedger({10: 100})
    a, b = _Rec(), _Rec()
    assert led.take("a", a, {10: 60}) is None
    assert "over-filled" in led.take("b", b, {10: 60})
    a.end = 5.0
    assert led.take("b", b, {10: 60}) is None
    # a Start after its StageIn replaces the holding, not adds to it
    assert led.take("b", b, {10: 100}) is None
    assert "not a burst-buffer node" in BBLedger({10: 1}).take("c", _Rec(), {3: 1})


def test_guard_checks_stage_ins_and_starts_alike():
    job = Job("w0!1", 0.0, 10.0, 2, 60)
    g = DecisionGuard(_platform(), "p")

    class S:
        def __init__(self, d):
            self.d = d

        def decide(self, now):
            return self.d

    recs = {"w0!1": _Rec(), "w0!2": _Rec()}
    g.decide(S([StageIn(job, (10, 11))]), 0.0, recs)
    g.decide(S([Start(job, ProcSet(0, 1), {0: 10, 1: 11})]), 1.0, recs)
    other = Job("w0!2", 0.0, 10.0, 1, 60)
    with pytest.raises(SchedulerFault, match=r"policy p at t=2: job w0!2 would put 60 B on BB node 10 \(bb0\)"):
        g.decide(S([Start(other, ProcSet(2), {2: 10})]), 2.0, recs)


def test_user_policy_raising_in_schedule_is_one_line(tmp_path):
    """The stable user API (`Policy.schedule`, docs/writing-a-policy.md) goes through the same guard."""
    (tmp_path / "boom.py").write_text(textwrap.dedent('''
        from burstbuffer.schedulers import Policy


        class Boom(Policy):
            name = "boom"

            def schedule(self, now, queue, profile, rng):
                if now > 0:
                    raise RuntimeError("kaboom")
                return []
    '''))
    w = json.loads(KTH.read_text())
    w["jobs"] = w["jobs"][:20]
    (tmp_path / "w.json").write_text(json.dumps(w))
    r = subprocess.run([sys.executable, "-m", "burstbuffer", "run", "--policy", f"{tmp_path / 'boom.py'}:Boom",
                        "--workload", str(tmp_path / "w.json"), "--output", str(tmp_path / "out"), "--cpu", "off",
                        "-q"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("burstbuffer: policy boom at t=") \
        and "RuntimeError: kaboom" in lines[0], r.stderr
    assert (tmp_path / "out" / "jobs.csv").is_file() and (tmp_path / "out" / "run.json").is_file()
