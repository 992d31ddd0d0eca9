"""`make slurm-check`: `burstbuffer sweep --cluster slurm` on a real single-node Slurm, compared with the local engine.

Steps (docs/deployment.md §4):

1. Debian's ``slurm-wlm`` (22.05: slurmctld, slurmd, the client commands) and ``munge``, installed if missing;
   if they cannot be → SKIPPED (exit 0).
2. Everything in a scratch folder, nothing in /etc: a munge key, ``munged --force -F`` with its socket, pid,
   seed and log files there; ``slurm.conf`` there (``SLURM_CONF`` names it for every Slurm command, and for
   dask-jobqueue's sbatch/squeue/scancel): ``AuthInfo=socket=<that socket>``, ``SlurmctldHost=<hostname>(127.0.0.1)``,
   the node as ``slurmd -C`` describes it with ``NodeAddr=127.0.0.1``, ``ProctrackType=proctrack/linuxproc``,
   ``TaskPlugin=task/none``, ``SelectType=select/cons_tres`` with ``CR_Core_Memory``, no accounting, free ports.
3. ``slurmctld -D`` and ``slurmd -D`` started (foreground processes of this script), until ``sinfo`` says the
   node is idle.
4. A small campaign (2 policies x the first 30 bundled jobs, io-aware = 2 runs), run by
   ``burstbuffer sweep --engine local`` and by ``burstbuffer sweep --engine dask --cluster slurm`` (dask-jobqueue's
   SLURMCluster: the Dask workers are batch jobs submitted with sbatch, on ``interface = "lo"``).
5. Checks: the same runs (ids) with the same status, summaries and jobs.csv byte for byte, and the workers were
   Slurm jobs (slurmctld allocated them; their batch logs are there).
6. Stops what it started (scancel of the remaining jobs, slurmd, slurmctld, munged) and removes the folder.

Exit status: 0 equal (``campaign identical (N runs, workers as Slurm jobs ...)``) or skipped, 1 otherwise.
"""
from __future__ import annotations

import csv
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("slurm-wlm", "munge")
CAMPAIGN = """[campaign]
models = ["io-aware"]
seeds = [0]
timeout = 600

[[policy]]
name = "fcfs-bb"

[[policy]]
name = "sjf-bb"

[[workload]]
file = "{workload}"
label = "kth-30"
jobs = 30
"""


def say(msg: str) -> None:
    print(f"slurm-check: {msg}", flush=True)


class Failed(Exception):
    pass


class Skipped(Exception):
    pass


def _install() -> None:
    need = [p for p in PACKAGES if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
    if not need:
        return
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        raise Skipped(f"{' '.join(need)} not installed, and no apt-get as root to install them")
    say(f"installing Debian packages: {' '.join(need)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *need]):
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
        if r.returncode != 0:
            raise Skipped(f"cannot install {' '.join(need)}: {' '.join(cmd[:2])} exited {r.returncode} "
                          f"({(r.stderr or r.stdout).strip().splitlines()[-1:]})")
    for tool in ("munged", "slurmctld", "slurmd", "sbatch", "sinfo"):
        if shutil.which(tool) is None and not Path("/usr/sbin", tool).exists():
            raise Skipped(f"{tool} not found after installing {' '.join(need)}")


def _tool(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin") / name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_line(env: dict) -> str:
    """The node's line of slurm.conf from ``slurmd -C`` (UpTime dropped), with NodeAddr=127.0.0.1."""
    r = subprocess.run([_tool("slurmd"), "-C"], env=env, capture_output=True, text=True, timeout=60)
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("NodeName=")), None)
    if r.returncode != 0 or line is None:
        raise Failed(f"slurmd -C: {(r.stderr or r.stdout).strip()[:300]}")
    line = re.sub(r"\s*UpTime=\S+", "", line)
    return f"{line} NodeAddr=127.0.0.1 State=UNKNOWN"


def slurm_conf(d: Path, env: dict, host: str) -> str:
    ctld, slurmd = _free_port(), _free_port()
    return f"""# written by slurm/check.py: a single-node Slurm in {d}
ClusterName=bbcheck
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
{node_line(env)}
PartitionName=check Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


class Cluster:
    """munged, slurmctld and slurmd of a scratch folder; `stop` ends what was started."""

    def __init__(self, d: Path):
        self.d = d
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.env = dict(os.environ, SLURM_CONF=str(d / "slurm.conf"))

    def _start(self, name: str, cmd: list[str]) -> None:
        log = open(self.d / f"{name}.out", "w")
        self.procs.append((name, subprocess.Popen(cmd, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                                  start_new_session=True)))

    def start(self) -> None:
        d = self.d
        for sub in ("state", "spool", "logs"):
            (d / sub).mkdir()
        key = d / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self._start("munged", [_tool("munged"), "-F", "--force", f"--key-file={key}", f"--socket={d}/munge.sock",
                               f"--pid-file={d}/munged.pid", f"--seed-file={d}/munge.seed",
                               f"--log-file={d}/munged.log"])
        self._wait(lambda: (d / "munge.sock").exists(), 20, "munged's socket")
        (d / "slurm.conf").write_text(slurm_conf(d, self.env, socket.gethostname()))
        self._start("slurmctld", [_tool("slurmctld"), "-D", "-i", "-f", str(d / "slurm.conf")])
        self._start("slurmd", [_tool("slurmd"), "-D", "-f", str(d / "slurm.conf")])
        self._wait(self._idle, 60, "an idle node in sinfo")

    def _idle(self) -> bool:
        r = subprocess.run(["sinfo", "-h", "-o", "%T"], env=self.env, capture_output=True, text=True, timeout=30)
        return r.returncode == 0 and r.stdout.strip() == "idle"

    def _wait(self, ok, seconds: float, what: str) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for name, p in self.procs:
                if p.poll() is not None:
                    raise Failed(f"{name} ended (exit {p.returncode}) while waiting for {what}: "
                                 f"{self._tail(name)}")
            if ok():
                return
            time.sleep(0.5)
        raise Failed(f"no {what} after {seconds:.0f} s: {self._tail('slurmctld')} {self._tail('slurmd')}")

    def _tail(self, name: str) -> str:
        text = ""
        for f in (self.d / f"{name}.log", self.d / f"{name}.out"):
            if f.is_file():
                text += f.read_text(errors="replace")
        return " | ".join(text.strip().splitlines()[-5:])

    def stop(self) -> None:
        if any(n == "slurmctld" and p.poll() is None for n, p in self.procs):
            subprocess.run(["scancel", "--full", "--partition=check"], env=self.env, capture_output=True, timeout=60)
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs.clear()


def burstbuffer_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "burstbuffer"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "burstbuffer"]


#: campaign.csv columns that may differ between two equal campaigns: the run's folder (under each output
#: folder; its name, the run id, is compared) and the wall time
_UNCOMPARED = {"dir", "wall_time_s"}


def campaign_rows(out: Path) -> dict[str, dict]:
    """campaign.csv of a sweep output folder, by run key."""
    with open(out / "campaign.csv", newline="") as f:
        return {row["key"]: row for row in csv.DictReader(f)}


def compare(local: Path, slurm: Path) -> list[str]:
    """Differences between two sweep output folders: the runs (keys), each row of campaign.csv (but the folder
    and wall time; the folder's name, the run id, is compared), each run's jobs.csv byte for byte."""
    a, b = campaign_rows(local), campaign_rows(slurm)
    diffs = []
    if set(a) != set(b):
        diffs.append(f"runs differ: only local {sorted(set(a) - set(b))}, only slurm {sorted(set(b) - set(a))}")
    for key in sorted(set(a) & set(b)):
        ra, rb = a[key], b[key]
        for k in ra:
            if k not in _UNCOMPARED and ra[k] != rb.get(k):
                diffs.append(f"run {key}: {k}: {ra[k]} vs {rb.get(k)}")
        da, db = Path(ra["dir"]), Path(rb["dir"])
        if da.name != db.name:
            diffs.append(f"run {key}: run id {da.name} vs {db.name}")
        if ra["status"] != "done" or rb["status"] != "done":
            diffs.append(f"run {key}: status {ra['status']} / {rb['status']} (error: {ra['error'] or rb['error']})")
        ja, jb = da / "jobs.csv", db / "jobs.csv"
        if not ja.is_file() or not jb.is_file() or ja.read_bytes() != jb.read_bytes():
            diffs.append(f"run {key}: jobs.csv differs (or is missing)")
    return diffs


def main() -> int:
    t0 = time.monotonic()
    d = Path(tempfile.mkdtemp(prefix="slurm-check-"))
    d.chmod(0o755)
    keep = False
    cluster = None
    try:
        _install()
        cluster = Cluster(d)
        cluster.start()
        say(f"single-node Slurm up in {time.monotonic() - t0:.0f} s (SLURM_CONF={d / 'slurm.conf'})")
        camp = d / "campaign.toml"
        camp.write_text(CAMPAIGN.format(workload=ROOT / "workloads" / "kth-1000.json"))
        (d / "cluster.toml").write_text(f"""[cluster]
cores = 1
memory = "2GB"
walltime = "00:30:00"
interface = "lo"
python = "{sys.executable}"
local-directory = "{d / 'dask'}"
log-directory = "{d / 'logs'}"
job-name = "bb-check-worker"
minimum-jobs = 1
maximum-jobs = 2
""")
        t1 = time.monotonic()
        say("burstbuffer sweep --engine local (2 runs)")
        r = subprocess.run([*burstbuffer_cmd(), "sweep", camp, "--output", d / "local", "--engine", "local",
                            "--workers", "1", "-q"], capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            raise Failed(f"local sweep exited {r.returncode}: {(r.stdout + r.stderr).strip()[-1500:]}")
        say(f"  {time.monotonic() - t1:.0f} s")
        t1 = time.monotonic()
        say("burstbuffer sweep --engine dask --cluster slurm (workers submitted with sbatch)")
        r = subprocess.run([*burstbuffer_cmd(), "sweep", camp, "--output", d / "slurm", "--engine", "dask",
                            "--cluster", "slurm", "--cluster-config", d / "cluster.toml", "-q"],
                           env=cluster.env, capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            raise Failed(f"slurm sweep exited {r.returncode}: {(r.stdout + r.stderr).strip()[-1500:]}")
        say(f"  {time.monotonic() - t1:.0f} s")
        ctld_log = (d / "slurmctld.log").read_text(errors="replace")
        jobs = sorted(set(re.findall(r"(?:Allocate|Started) JobId=(\d+)", ctld_log)), key=int)
        logs = sorted((d / "logs").glob("*.err")) + sorted((d / "logs").glob("*.out"))
        if not jobs or not logs:
            raise Failed(f"no worker ran as a Slurm job (slurmctld allocated {jobs}; batch logs {logs})")
        diffs = compare(d / "local", d / "slurm")
        n = len(campaign_rows(d / "local"))
        say(f"total {time.monotonic() - t0:.0f} s")
        if diffs:
            keep = True
            print(f"campaign differs ({n} runs):")
            for line in diffs[:20]:
                print("  " + line)
            return 1
        print(f"campaign identical ({n} runs, workers as Slurm jobs {', '.join(jobs)})")
        return 0
    except Skipped as exc:
        print(f"slurm-check: SKIPPED: {exc}")
        return 0
    except Failed as exc:
        keep = True
        print(f"slurm-check: FAILED: {exc}")
        return 1
    finally:
        if cluster is not None:
            cluster.stop()
        if keep:
            say(f"logs kept in {d}")
        else:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
