"""The paper's 1000-job KTH workload, io-aware model, under the first five policies of docs/policies.md
(about 10 s per policy and core; two runs at a time, `conftest.ParallelRuns`)."""
import pandas as pd
import pytest

from burstbuffer.schedulers.registry import names_tagged

from .conftest import KTH1000, PLATFORM, ParallelRuns

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

POLICIES = names_tagged("family:easy")      # fcfs, fcfs-easy, filler, fcfs-bb, sjf-bb (the registry's presets)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("kth1000")
    pool = ParallelRuns()
    for p in POLICIES:
        pool.submit(p, policy=p, workload=KTH1000, platform=PLATFORM, output=out / p, model="io-aware",
                    progress=False, timeout=300)
    yield pool
    pool.close()


@pytest.mark.parametrize("policy", POLICIES)
def test_every_job_ends(runs, policy):
    r = runs.result(policy)
    jobs = pd.read_csv(r.jobs_csv)
    assert len(jobs) == 1000
    s = r.summary
    assert s.unfinished == 0 and s.rejected == 0
    assert s.completed + s.killed == 1000
    # only jobs whose walltime is too tight for their I/O or communication are killed
    assert s.killed < 20
    assert (jobs.waiting_time >= -1e-6).all()


def test_fcfs_easy_waits_far_longer_than_sjf_bb(runs):
    # Kopanski & Rzadca 2021, §4.2: without BB reservations EASY lets large-BB jobs block the machine.
    # Beside a real Batsim 4.2.1 the paper's scheduler gives 10.15 h vs 2.66 h on these jobs.
    easy, sjf = runs.result("fcfs-easy").summary, runs.result("sjf-bb").summary
    assert easy.mean_waiting_h >= 2 * sjf.mean_waiting_h
    assert runs.result("fcfs").summary.mean_waiting_h > sjf.mean_waiting_h
