"""The io-aware job model (docs/io-model.md) as sub-jobs: phases, checkpoint and drain sizes, ordering."""
import pytest
from procset import ProcSet

from burstbuffer.batsim.loop import Outbox
from burstbuffer.batsim.protocol import (ExecuteJob, JobCompleted, KillJob, RegisterJob, RegisterProfile,
                                         RejectJob)
from burstbuffer.io_model.io_aware import IOAwareModel, nb_phases
from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers.base import Job, Start


def test_number_of_phases_follows_spec():
    G = 1e9
    assert nb_phases(0) == 1
    assert nb_phases(1000 * G) == 1
    assert nb_phases(5399 * G) == 1 and nb_phases(5401 * G) == 2   # round(cpu / 3600 Gflop)
    assert nb_phases(3 * 3600 * G) == 3
    assert nb_phases(1e6 * G) == 10


class Driver:
    """Runs an IOAwareModel: every sub-job completes when told to."""

    def __init__(self, cpu, bb, res=4, walltime=1e6, com=1000):
        # 4 compute nodes (0-3), 2 BB nodes (4, 5), pfs = 6
        self.plat = Platform.simple(4, [10**12, 10**12])
        self.ex = IOAwareModel()
        self.ex.begin(self.plat, {"w0": {"p": {"type": "parallel_homogeneous", "cpu": cpu, "com": com, "bb": bb}}})
        self.job = Job("w0!7", 0.0, walltime, res, bb, "p")
        self.start = Start(self.job, ProcSet((0, res - 1)), {n: 4 if n < 2 else 5 for n in range(res)})
        self.profiles, self.running, self.log = {}, {}, []

    def collect(self, out):
        for ts, d in out.decisions():
            if isinstance(d, RegisterProfile):
                self.profiles[d.profile_name] = d.profile
            elif isinstance(d, RegisterJob):
                self.running[d.job_id] = dict(d.job, profile_data=self.profiles[d.job["profile"]])
            elif isinstance(d, ExecuteJob):
                self.running[d.job_id]["alloc"] = d.alloc
                self.running[d.job_id]["storage_mapping"] = d.storage_mapping
            self.log.append(d)

    def go(self, now=0.0):
        out = Outbox(now)
        self.ex.start(self.start, now, out)
        self.collect(out)

    def complete(self, sub, now, state="COMPLETED_SUCCESSFULLY", *also):
        """`sub` (and the `also` sub-jobs, same state) complete in one Batsim message."""
        out = Outbox(now)
        r = None
        for s in (sub, *also):
            r = self.ex.on_completed(JobCompleted(s, state), now, out) or r
            self.running.pop(s)
        self.ex.flush(now, out)
        self.collect(out)
        return r

    def kinds(self):
        return sorted((v["profile_data"]["type"], v["storage_mapping"] and tuple(sorted(v["storage_mapping"].items())))
                      for v in self.running.values())


def test_three_phase_job_sequence_sizes_and_drains():
    G, bb = 1e9, 2 * 10**9
    d = Driver(cpu=3 * 3600 * G, bb=bb)
    d.go()
    assert isinstance(d.log[0], RejectJob) and d.log[0].job_id == "w0!7"   # replaced by its sub-jobs
    # stage-in: one data staging per BB node, PFS (6) → BB, bytes of the 2 nodes placed there
    stage_in = dict(d.running)
    assert len(stage_in) == 2
    for sub, j in stage_in.items():
        assert j["profile_data"] == {"type": "data_staging", "nb_bytes": 2 * bb, "from": "source", "to": "destination"}
        assert j["storage_mapping"]["source"] == 6 and j["storage_mapping"]["destination"] in (4, 5)
        assert j["alloc"] == ProcSet(j["storage_mapping"]["destination"], 6) and j["res"] == 2
        assert sub.startswith("w0%7!")
    first, second = sorted(stage_in)
    assert d.complete(first, 10.0) is None
    assert len(d.running) == 1                          # compute waits for every stage-in
    assert d.complete(second, 12.0) is None
    (c1,) = d.running
    assert d.running[c1]["profile_data"] == {"type": "parallel_homogeneous", "cpu": 3600 * G, "com": 1000}
    assert d.running[c1]["alloc"] == ProcSet((0, 3)) and d.running[c1]["walltime"] == pytest.approx(1e6 - 12)
    d.complete(c1, 3612.0)
    # checkpoint: 0.5 × bb per node into its BB node, one sub-job per BB node on the nodes placed there
    ck = dict(d.running)
    assert len(ck) == 2
    for j in ck.values():
        assert j["profile_data"] == {"type": "parallel_homogeneous_pfs", "bytes_to_read": 0,
                                     "bytes_to_write": bb // 2, "storage": "burstbuffer"}
        assert j["alloc"] in (ProcSet(0, 1), ProcSet(2, 3)) and j["res"] == 2
    for sub in sorted(ck):
        d.complete(sub, 3620.0)
    # drains (BB → PFS, 0.5 × bb per node) run beside the second compute phase
    kinds = d.kinds()
    assert [k[0] for k in kinds] == ["data_staging", "data_staging", "parallel_homogeneous"]
    drains = [s for s, j in d.running.items() if j["profile_data"]["type"] == "data_staging"]
    assert all(d.running[s]["profile_data"]["nb_bytes"] == bb and d.running[s]["storage_mapping"]["destination"] == 6
               for s in drains)
    (c2,) = [s for s in d.running if s not in drains]
    for s in drains:
        d.complete(s, 3700.0)
    d.complete(c2, 7220.0)
    assert len(d.running) == 2                           # checkpoint 2
    for s in sorted(d.running):
        d.complete(s, 7230.0)
    drains = [s for s, j in d.running.items() if j["profile_data"]["type"] == "data_staging"]
    (c3,) = [s for s in d.running if s not in drains]
    d.complete(c3, 10830.0)
    # stage-out (bb per node) beside the still running drains; the job ends after all of them
    outs = [s for s in d.running if s not in drains]
    assert len(outs) == 2 and all(d.running[s]["profile_data"]["nb_bytes"] == 2 * bb for s in outs)
    for s in outs:
        assert d.complete(s, 10840.0) is None
    assert d.complete(drains[0], 10841.0) is None
    assert d.complete(drains[1], 10842.0) == ("w0!7", "COMPLETED_SUCCESSFULLY")
    assert not d.ex.busy
    # profiles are registered once per job workload and reused: staging of 2·bb (stage-in and
    # stage-out), compute, checkpoint, drain of bb → 4 profiles for 3 phases
    regs = [x for x in d.log if isinstance(x, RegisterProfile)]
    assert len(regs) == len({(r.workload_name, r.profile_name) for r in regs}) == 4
    assert {r.workload_name for r in regs} == {"w0%7"}


def test_single_phase_job_without_bb_is_one_compute_sub_job():
    d = Driver(cpu=1e9, bb=0, res=1)
    d.go()
    (c,) = d.running
    assert d.running[c]["profile_data"]["type"] == "parallel_homogeneous" and d.running[c]["res"] == 1
    assert d.complete(c, 1.0) == ("w0!7", "COMPLETED_SUCCESSFULLY")


def test_sub_job_out_of_walltime_kills_the_job_and_its_drains():
    d = Driver(cpu=2 * 3600e9, bb=10**9, walltime=5000)
    d.go()
    for s in sorted(d.running):
        d.complete(s, 5.0)
    (c1,) = d.running
    assert d.running[c1]["walltime"] == pytest.approx(4995)   # what is left of the job's walltime
    d.complete(c1, 3605.0)
    for s in sorted(d.running):
        d.complete(s, 3610.0)
    drains = sorted(s for s, j in d.running.items() if j["profile_data"]["type"] == "data_staging")
    (c2,) = [s for s in d.running if s not in drains]
    assert d.running[c2]["walltime"] == pytest.approx(1390)
    r = d.complete(c2, 5000.0, "COMPLETED_WALLTIME_REACHED")
    assert r == ("w0!7", "COMPLETED_WALLTIME_REACHED")
    kills = [x for x in d.log if isinstance(x, KillJob)]
    assert kills and sorted(kills[-1].job_ids) == drains
    # the killed drains' completions are ignored afterwards
    for s in drains:
        assert d.complete(s, 5000.0, "COMPLETED_KILLED") is None
    assert not d.ex.busy


def test_sub_jobs_ending_in_the_same_message_are_not_killed():
    # two checkpoint sub-jobs (one per BB node) reach the job's walltime at the same instant and are
    # reported in one message: killing the second would be refused by Batsim (already reported)
    d = Driver(cpu=2 * 3600e9, bb=10**9, walltime=3700)
    d.go()
    for s in sorted(d.running):
        d.complete(s, 5.0)
    (c1,) = d.running
    d.complete(c1, 3605.0)
    ck = sorted(d.running)
    assert len(ck) == 2
    r = d.complete(ck[0], 3700.0, "COMPLETED_WALLTIME_REACHED", ck[1])
    assert r == ("w0!7", "COMPLETED_WALLTIME_REACHED")
    assert not [x for x in d.log if isinstance(x, KillJob)]
    assert not d.ex.busy
