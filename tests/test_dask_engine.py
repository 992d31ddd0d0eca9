"""The Dask engine and `burstbuffer sweep` (issue 16): a real `dask scheduler` and two `dask worker`
processes on 127.0.0.1, one killed by PID while it runs a simulation; every run must finish exactly once,
with the same jobs.csv as the local pool's; a rerun reuses every run. The dask-jobqueue job scripts for
Slurm and PBS rendered from a TOML cluster table (no batch system needed)."""
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import hiding_plan_engine

pytestmark = [pytest.mark.slow, pytest.mark.dask]   # test tier (setup.cfg markers; docs/testing.md)

pytest.importorskip("distributed")
pytest.importorskip("dask_jobqueue")

from burstbuffer.cli import main  # noqa: E402
from burstbuffer.reproduce.dask_clusters import jobqueue_cluster, read_cluster_config  # noqa: E402
from burstbuffer.errors import InputError  # noqa: E402
from burstbuffer.sweep.campaign import load_campaign
from burstbuffer.sweep.plan import plan_campaign  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

CAMPAIGN = """
[campaign]
models = ["io-aware", "alloc-only"]
timeout = 120
[[policy]]
name = "fcfs"
[[policy]]
name = "plan"
label = "plan-2"
options = {{ alpha = 2.0 }}
[[workload]]
file = "{kth}"
label = "kth-40"
jobs = 40
min-res = 40
"""


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sweep")
    f = tmp / "campaign.toml"
    f.write_text(CAMPAIGN.format(kth=ROOT / "workloads" / "kth-1000.json"))
    return f


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _wait_for(cond, what, limit=180.0):
    """Poll `cond` until true; fail (not hang) after `limit` s."""
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > limit:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.2)


def test_plan_names_runs_by_what_determines_them(campaign, tmp_path):
    c = load_campaign(campaign)
    specs = plan_campaign(c, tmp_path / "a")
    assert sorted(s.key for s in specs) == ["kth-40/fcfs/alloc-only/seed-0", "kth-40/fcfs/io-aware/seed-0",
                                            "kth-40/plan-2/alloc-only/seed-0", "kth-40/plan-2/io-aware/seed-0"]
    ids = {Path(s.out).name for s in specs}
    assert len(ids) == 4 and all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids)
    # the same campaign elsewhere: the same run ids; another option value: another id for that policy only
    assert {Path(s.out).name for s in plan_campaign(c, tmp_path / "b")} == ids
    other = tmp_path / "other.toml"
    other.write_text(campaign.read_text().replace("alpha = 2.0", "alpha = 3.0"))
    ids2 = {s.key: Path(s.out).name for s in plan_campaign(load_campaign(other), tmp_path / "c")}
    for s in specs:
        assert (ids2[s.key] == Path(s.out).name) == (s.policy == "fcfs")


def test_campaign_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[policy]]\nname = "no-such"\n[[workload]]\nfile = "x.json"\n')
    assert main(["sweep", str(bad), "--output", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "policy[0].name" in err and str(bad) in err


def test_bb_scenario_workloads_are_bbsched_transforms(campaign, tmp_path):
    """A workload with bb-scenario is the S1-S4 transform of its (cut) jobs for the campaign's platform:
    the scenario's share of jobs ask for BB, the others none; the seed decides the draw."""
    from burstbuffer.workloads import load_workload
    from burstbuffer.workloads.transform import SCENARIOS
    text = campaign.read_text()
    rows = {}
    for sc, seed in (("S2", 0), ("S2", 1), ("S3", 0)):
        f = tmp_path / f"{sc}-{seed}.toml"
        f.write_text(text.replace('jobs = 40\n', f'jobs = 40\nbb-scenario = "{sc}"\nbb-seed = {seed}\n'))
        specs = plan_campaign(load_campaign(f), tmp_path / "o")
        w = load_workload(specs[0].workload)
        rows[(sc, seed)] = [w.bb_of(j) for j in w.jobs]
        assert len(w.jobs) == 40 and min(j.res for j in w.jobs) >= 40
        assert sum(b > 0 for b in rows[(sc, seed)]) == round(SCENARIOS[sc][0] * 40)
    assert rows[("S2", 0)] != rows[("S2", 1)]
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('jobs = 40\n', 'jobs = 40\nbb-scenario = "S9"\n'))
    with pytest.raises(InputError, match="bb-scenario"):
        load_campaign(bad)


def _start(cmd, log):
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=_env(), start_new_session=True)


def test_sweep_on_a_dask_cluster_survives_a_killed_worker(campaign, tmp_path):
    local = tmp_path / "local"
    assert main(["sweep", str(campaign), "--output", str(local), "--engine", "local", "--workers", "2", "-q"]) == 0
    sfile = tmp_path / "scheduler.json"
    logs = open(tmp_path / "dask.log", "wb")
    procs = [_start([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                     "--no-dashboard", "--scheduler-file", str(sfile)], logs)]
    try:
        _wait_for(lambda: sfile.is_file() and "address" in sfile.read_text(), "the scheduler file", 60)
        address = json.loads(sfile.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        workers = [_start([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                           "--no-nanny", "--host", "127.0.0.1", "--no-dashboard"], logs) for _ in range(2)]
        procs += workers
        out = tmp_path / "dask"
        sweep = None
        sweep = subprocess.Popen([sys.executable, "-m", "burstbuffer", "sweep", str(campaign), "--output", str(out),
                                  "--scheduler-address", address, "-q"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, env=_env(), text=True)
        procs.append(sweep)
        victim = workers[0].pid
        # kill the first worker as soon as it runs a simulation (its temporary run directory appears)
        tmp_of = lambda: list((out / "runs").glob(f".*.tmp-{victim}-*")) if (out / "runs").is_dir() else []  # noqa: E731
        _wait_for(lambda: tmp_of() or sweep.poll() is not None, "a run on the first worker")
        assert sweep.poll() is None, "the campaign ended before the first worker ran anything"
        killed_run = tmp_of()[0].name.split(".tmp-")[0].lstrip(".")
        os.kill(victim, signal.SIGKILL)
        text, _ = sweep.communicate(timeout=300)
        assert sweep.returncode == 0, text
        assert "dashboard" in text
        done = re.findall(r"^done (\S+):", text, re.M)
        specs = plan_campaign(load_campaign(campaign), out)
        assert sorted(done) == sorted(s.key for s in specs)        # every run reported exactly once
        runs = out / "runs"
        assert sorted(p.name for p in runs.iterdir()) == sorted(Path(s.out).name for s in specs)  # no leftovers
        assert (runs / killed_run / "summary.json").is_file()      # the killed worker's run was resubmitted
        for s in specs:
            rid = Path(s.out).name
            assert (runs / rid / "jobs.csv").read_bytes() == (local / "runs" / rid / "jobs.csv").read_bytes(), s.key
        # a rerun (after an interruption, or not) reuses every finished run and simulates nothing
        stamps = {p.name: (p / "summary.json").stat().st_mtime_ns for p in runs.iterdir()}
        again = subprocess.run([sys.executable, "-m", "burstbuffer", "sweep", str(campaign), "--output", str(out),
                                "--scheduler-address", address, "-q"], capture_output=True, text=True, env=_env(),
                               timeout=120)
        assert again.returncode == 0 and "resuming: 4 finished run(s) kept, 0 to do" in again.stdout, again.stdout
        assert {p.name: (p / "summary.json").stat().st_mtime_ns for p in runs.iterdir()} == stamps
    finally:
        for p in procs:       # the dask processes lead sessions of their own; the sweep does not
            if p.poll() is None:
                try:
                    p.terminate() if p is sweep else os.killpg(p.pid, signal.SIGTERM)
                except OSError:
                    pass
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        logs.close()


CLUSTER = """
[cluster]
queue = "batch"
account = "proj42"
walltime = "02:00:00"
cores = 4
memory = "8GB"
job-extra = ["--constraint=haswell"]
prologue = ["source /shared/bb-venv/bin/activate"]
maximum-jobs = 25
"""


@pytest.mark.parametrize("kind", ["slurm", "pbs"])
def test_jobqueue_script_has_the_configured_resources(tmp_path, kind):
    cfg = tmp_path / "cluster.toml"
    cfg.write_text(CLUSTER)
    kwargs, scale = read_cluster_config(cfg, kind)
    assert scale == {"minimum-jobs": 0, "maximum-jobs": 25} and kwargs["processes"] == 4
    cluster, _ = jobqueue_cluster(kind, cfg)
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    lines = script.splitlines()
    if kind == "slurm":
        for want in ("#SBATCH -p batch", "#SBATCH -A proj42", "#SBATCH -t 02:00:00", "#SBATCH -n 1",
                     "#SBATCH --cpus-per-task=4", "#SBATCH --constraint=haswell"):
            assert want in lines, (want, script)
        assert "#SBATCH --mem=8G" in lines, script
    else:
        for want in ("#PBS -q batch", "#PBS -A proj42", "#PBS -l walltime=02:00:00", "#PBS --constraint=haswell"):
            assert want in lines, (want, script)
        # dask-jobqueue writes memory in MiB, rounded up: 8 GB = 8e9 B = 7629.4 MiB
        assert "#PBS -l select=1:ncpus=4:mem=7630MB" in lines, script
    assert "source /shared/bb-venv/bin/activate" in lines
    # four single-threaded workers per job
    assert re.search(r"--nthreads 1\b", script) and re.search(r"--nworkers 4\b", script), script


def test_bad_cluster_config_is_one_line(tmp_path, campaign, capsys):
    cfg = tmp_path / "cluster.toml"
    cfg.write_text('[cluster]\ncores = 4\nmemory = "8GB"\nqeue = "batch"\n')
    rc = main(["sweep", str(campaign), "--output", str(tmp_path / "o"), "--cluster", "slurm", "--cluster-config",
               str(cfg)])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "qeue" in err and "unknown key" in err


def test_worker_image_brings_simgrid_and_the_package():
    """docker/Dockerfile.worker (the Apptainer source for cluster workers) lints clean and builds a venv on top
    of Debian's python3-simgrid."""
    from .test_docker import _hadolint
    f = ROOT / "docker" / "Dockerfile.worker"
    r = subprocess.run([_hadolint(), "--no-color", str(f)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    text = re.sub(r"\\\n", " ", f.read_text())
    assert re.search(r"FROM debian:bookworm", text)
    assert re.search(r"apt-get install [^\n]*python3-simgrid", text)
    assert re.search(r"venv --system-site-packages /opt/venv [^\n]*pip install [^\n]*-c constraints.txt \.", text)
    ignore = (ROOT / "docker" / "Dockerfile.worker.dockerignore").read_text().splitlines()
    for copied in ("pyproject.toml", "setup.cfg", "setup.py", "README.md", "constraints.txt", "burstbuffer/"):
        assert f"!{copied}" in ignore


def test_a_failed_run_is_reported_and_the_others_finish(tmp_path):
    """One run of the campaign cannot finish (plan-2 on an installation whose plan engine is missing: its
    extension module hidden from the campaign's processes by a sitecustomize, an InputError at its first
    decision; a bad policy option or workload would not do, the campaign is checked when it is loaded,
    docs/policy-options.md): it is reported on one line with its directory, its error.txt is there, the other
    run finishes, the exit status is 1."""
    hide = hiding_plan_engine(tmp_path)
    camp = tmp_path / "c.toml"
    camp.write_text(f'[campaign]\ntimeout = 120\n[[policy]]\nname = "fcfs"\n[[policy]]\nname = "plan-2"\n'
                    f'label = "broken"\n[[workload]]\n'
                    f'file = "{ROOT / "workloads" / "kth-1000.json"}"\nlabel = "kth-20"\njobs = 20\n')
    out = tmp_path / "out"
    specs = {s.key: Path(s.out) for s in plan_campaign(load_campaign(camp), out)}
    bad = specs["kth-20/broken/io-aware/seed-0"]
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join([str(hide), env["PYTHONPATH"]])
    r = subprocess.run([sys.executable, "-m", "burstbuffer", "sweep", str(camp), "--output", str(out), "--workers",
                        "1", "-q"], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("FAILED "))
    assert line.startswith("FAILED kth-20/broken/io-aware/seed-0: ")
    assert str(bad / "error.txt") in line and (bad / "error.txt").is_file() and not (bad / "summary.json").exists()
    assert "burstbuffer.schedulers.native.plan_engine" in line and "reinstall" in line, line
    assert (specs["kth-20/fcfs/io-aware/seed-0"] / "summary.json").is_file()
    assert "dashboard" in r.stdout and "1 run(s) failed: kth-20/broken/io-aware/seed-0" in r.stderr


@pytest.mark.parametrize("argv, words", [
    (["--engine", "local", "--scheduler-address", "tcp://127.0.0.1:1"], ["needs --engine dask"]),
    (["--engine", "dask", "--scheduler-address", "tcp://127.0.0.1:1", "--cluster", "slurm"], ["only one of"]),
    (["--engine", "dask", "--cluster-config", "x.toml"], ["needs --cluster"]),
])
def test_contradictory_engine_options_are_one_line(tmp_path, capsys, argv, words):
    rc = main(["reproduce", "--jobs", "1000", "--output", str(tmp_path / "o"), *argv])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and all(w in err for w in words), err


def test_campaign_network_model_is_part_of_the_run(campaign, tmp_path):
    """`network-model` in [campaign] reaches the simulator of every run and names the runs apart; without it
    (or with "exact") the run ids are the ones computed before the key existed, so finished runs stay
    reusable. An unknown model is a one-line campaign error."""
    import hashlib
    from burstbuffer import __version__
    from burstbuffer.sweep.plan import sha256_file
    text = campaign.read_text().replace('models = ["io-aware", "alloc-only"]', 'models = ["io-aware"]')
    text = text.replace('[[policy]]\nname = "plan"\nlabel = "plan-2"\noptions = { alpha = 2.0 }\n', "")   # fcfs only
    exact, unc = tmp_path / "exact.toml", tmp_path / "unc.toml"
    exact.write_text(text)
    unc.write_text(text.replace("timeout = 120", 'timeout = 120\nnetwork-model = "uncontended"'))
    (s_e,), (s_u,) = plan_campaign(load_campaign(exact), tmp_path / "e"), plan_campaign(load_campaign(unc), tmp_path / "u")
    assert s_e.key == s_u.key == "kth-40/fcfs/io-aware/seed-0"
    key = json.dumps({"workload": sha256_file(Path(s_e.workload)), "platform": sha256_file(ROOT / "platforms" /
                      "dragonfly96.xml"), "policy": "fcfs", "options": "", "model": "io-aware", "seed": 0,
                      "version": __version__}, sort_keys=True)
    assert Path(s_e.out).name == hashlib.sha256(key.encode()).hexdigest()[:16] != Path(s_u.out).name
    for f, out in ((exact, tmp_path / "e"), (unc, tmp_path / "u")):
        assert main(["sweep", str(f), "--output", str(out), "--engine", "local", "--workers", "1", "-q"]) == 0
    marker = json.loads((Path(s_u.out) / "summary.json").read_text())
    assert marker["network_model"] == "uncontended"
    # 40 jobs of >= 40 nodes on 96: all-to-alls across groups, which the uncontended model times differently
    assert (Path(s_e.out) / "jobs.csv").read_bytes() != (Path(s_u.out) / "jobs.csv").read_bytes()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace("timeout = 120", 'timeout = 120\nnetwork-model = "star"'))
    with pytest.raises(InputError, match="campaign.network-model"):
        load_campaign(bad)


# A worker process that dies at once, leaving behind a child (its run's simulator) that writes into the run's
# temporary directory a moment later: what a LocalCluster's worker and its simulator do after a signal.
_LATE_WRITER = r"""
import subprocess, sys
tmp = sys.argv[1]
subprocess.Popen([sys.executable, "-c",
                  "import os, sys, time; time.sleep(1.0); os.makedirs(sys.argv[1], exist_ok=True); "
                  "open(os.path.join(sys.argv[1], 'jobs.csv'), 'w').write('job_id\\n')", tmp])
print("started", flush=True)
sys.stdin.read()                 # until the test has looked at the process tree
"""


def test_the_engine_waits_for_every_process_of_its_cluster_before_removing_temporary_runs(tmp_path):
    """`make_executor`'s close: the processes the LocalCluster started (workers and their simulators) are
    reaped before the temporary run directories are removed, so a late write leaves nothing behind; the
    survivors of the grace period are killed, so the close never hangs."""
    from burstbuffer.reproduce.dask_connect import reap as _reap, worker_processes as _worker_processes
    from burstbuffer.reproduce.dask_engine import TMP_MARK, remove_leftovers
    from types import SimpleNamespace
    spec = SimpleNamespace(out=str(tmp_path / "runs" / "abc"))      # remove_leftovers reads .out only
    tmp = tmp_path / "runs" / f".abc{TMP_MARK}1-0000"
    tmp.mkdir(parents=True)
    child = subprocess.Popen([sys.executable, "-c", _LATE_WRITER, str(tmp)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
    assert child.stdout.readline().strip() == b"started"
    import psutil
    mine = {child.pid, *(k.pid for k in psutil.Process(child.pid).children(recursive=True))}
    procs = [p for p in _worker_processes() if p.pid in mine]   # (not other tests' processes)
    assert len(procs) == len(mine) == 2                         # the worker and its simulator
    child.stdin.close()
    child.wait()                                          # the worker is gone, its simulator is not
    _reap(procs)
    remove_leftovers([spec])
    time.sleep(1.5)                                       # time for any late writer to write
    assert not list((tmp_path / "runs").iterdir())
    # a process that outlives the grace period is killed, and the close goes on
    stuck = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, "
                                                    "signal.SIG_IGN); time.sleep(60)"])
    t0 = time.monotonic()
    _reap([p for p in _worker_processes() if p.pid == stuck.pid], grace=0.5)
    took = time.monotonic() - t0
    stuck.wait(timeout=5)                 # (already reaped by _reap: Popen cannot see its status any more)
    assert 0.5 <= took < 5
    with pytest.raises(ProcessLookupError):
        os.kill(stuck.pid, 0)


HUNG_SBATCH = """#!/bin/sh
# an sbatch that never answers: it and the sleep it starts say their pids
echo $$ >> "$BB_TEST_PIDS"
sleep 1000 &
echo $! >> "$BB_TEST_PIDS"
wait
"""


def _pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _hung_sbatch_sweep(tmp_path, campaign, submit_timeout: float | None):
    """`sweep --cluster slurm` with an sbatch that never returns (`submit_timeout`: the cluster file's, None:
    the default); (process, pid file, TMPDIR)."""
    bin_dir, tmp = tmp_path / "bin", tmp_path / "t"
    bin_dir.mkdir()
    tmp.mkdir()
    (bin_dir / "sbatch").write_text(HUNG_SBATCH)
    (bin_dir / "sbatch").chmod(0o755)
    cfg = tmp_path / "cluster.toml"
    cfg.write_text('[cluster]\ncores = 1\nmemory = "1GB"\nminimum-jobs = 1\n'
                   + (f"submit-timeout = {submit_timeout}\n" if submit_timeout is not None else ""))
    pids = tmp_path / "pids"
    env = {**_env(), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "TMPDIR": str(tmp),
           "BB_TEST_PIDS": str(pids)}
    proc = subprocess.Popen([sys.executable, "-m", "burstbuffer", "sweep", str(campaign), "--output",
                             str(tmp_path / "o"), "--cluster", "slurm", "--cluster-config", str(cfg), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    return proc, pids, tmp


def _nothing_left(pids: Path, tmp: Path) -> None:
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) >= 2, started          # sbatch and its sleep ran
    deadline = time.monotonic() + 30
    while any(_pid_alive(p) for p in started) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [p for p in started if _pid_alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    assert not left, f"sbatch or its sleep outlived the command: {left}"
    assert not list(tmp.iterdir()), f"left in TMPDIR: {list(tmp.iterdir())}"


def test_a_submit_command_that_never_returns_is_bounded(tmp_path, campaign):
    """Every batch command is bounded (the cluster file's submit-timeout): a campaign whose workers cannot be
    submitted ends in one line, exit status 2, with nothing left running or written in TMPDIR."""
    proc, pids, tmp = _hung_sbatch_sweep(tmp_path, campaign, 3)
    try:
        _, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 2, stderr
    assert stderr.strip() == ("burstbuffer: --cluster: batch jobs: no worker could be started: sbatch did not "
                              "return within 3 s (submit-timeout of the cluster file)"), stderr
    _nothing_left(pids, tmp)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_a_submit_command_hangs_leaves_nothing(tmp_path, campaign, sig):
    proc, pids, tmp = _hung_sbatch_sweep(tmp_path, campaign, None)    # 60 s: the signal comes first
    try:
        _wait_for(lambda: pids.exists() and len(pids.read_text().split()) >= 2 or proc.poll() is not None,
                  "sbatch to start")
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + sig, stderr
    assert "Traceback" not in stderr and "AssertionError" not in stderr, stderr
    assert stderr.strip().startswith(f"burstbuffer: sweep interrupted by {sig.name}"), stderr
    _nothing_left(pids, tmp)
