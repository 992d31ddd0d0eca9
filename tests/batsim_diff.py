"""Differential runs: one scheduler against a real Batsim 4.2.1 and against the embedded simulator, with the
same inputs, every protocol message logged both ways by a small ZeroMQ proxy (a thread between the
simulator's REQ socket and the scheduler's REP socket).

    find_batsim() -> path or None          (env BATSIM_BIN, else ~/.cache/batsim-4.2.1/build/batsim)
    run_pair(tmp, platform, workload, scheduler_cmd, ...) -> (Run real, Run embedded)
    compare_exchanges(a, b) -> list of differences (strings), empty when the exchanges are the same

A `Run` holds the messages (``("B2S"|"S2B", parsed JSON)``, in order) and the `_jobs.csv` rows. The
SIMULATION_BEGINS event is compared but for the fields that name the run (workload path, export prefix).
Also usable by hand: ``python tests/batsim_diff.py SCHEDULER N`` (pybatsim scheduler on N KTH jobs).
"""
from __future__ import annotations

import atexit
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import zmq

REPO = Path(__file__).resolve().parent.parent
CLUSTER = REPO / "tests" / "data" / "cluster96.xml"
DEFAULT_BATSIM = Path.home() / ".cache" / "batsim-4.2.1" / "build" / "batsim"


def find_batsim() -> str | None:
    """The real Batsim binary: $BATSIM_BIN, else ~/.cache/batsim-4.2.1/build/batsim; None if absent."""
    p = os.environ.get("BATSIM_BIN") or str(DEFAULT_BATSIM)
    return p if os.path.isfile(p) and os.access(p, os.X_OK) else None


_FOLDERS: list[str] = []


def free_endpoint() -> str:
    """An ipc endpoint nobody else can take: a socket in a fresh private folder under /tmp (a TCP port found
    free could be taken by a parallel test before the scheduler binds it). The path has the same length every
    time, so the messages that carry it (SIMULATION_BEGINS) have the same length in both runs of a pair. The
    folders are removed when the tests end."""
    if not _FOLDERS:
        atexit.register(lambda: [shutil.rmtree(d, ignore_errors=True) for d in _FOLDERS])
    folder = tempfile.mkdtemp(prefix="bbdiff-", dir="/tmp")
    _FOLDERS.append(folder)
    return f"ipc://{folder}/s"


class Run:
    def __init__(self, messages, prefix, returncode, stderr):
        self.messages, self.prefix, self.returncode, self.stderr = messages, prefix, returncode, stderr
        self.jobs = []
        if os.path.exists(f"{prefix}_jobs.csv"):
            with open(f"{prefix}_jobs.csv", newline="") as f:
                self.jobs = list(csv.DictReader(f))


def _proxy(front: str, back: str, log: list, ready: threading.Event, stop: threading.Event) -> None:
    ctx = zmq.Context()
    rep = ctx.socket(zmq.REP)
    rep.setsockopt(zmq.LINGER, 0)
    rep.bind(front)
    req = ctx.socket(zmq.REQ)
    req.setsockopt(zmq.LINGER, 0)
    req.connect(back)
    ready.set()
    try:
        while not stop.is_set():
            if not rep.poll(200):
                continue
            m = rep.recv_string()
            log.append(("B2S", m))
            req.send_string(m)
            while not req.poll(200):
                if stop.is_set():
                    return
            r = req.recv_string()
            log.append(("S2B", r))
            rep.send_string(r)
            if '"SIMULATION_ENDS"' in m:
                return
    finally:
        rep.close(0)
        req.close(0)
        ctx.term()


def run_one(tmp: Path, name: str, sim_cmd: list[str], scheduler_cmd: list[str], timeout: float = 300) -> Run:
    """Start the scheduler (`{endpoint}` in its command = where it binds), the proxy, then the simulator
    (`{socket}` and `{prefix}` in its command); wait for both. Returns the logged exchange."""
    back, front = free_endpoint(), free_endpoint()
    # Both runs use the same paths (moved to tmp/NAME afterwards): the messages then carry the same bytes,
    # and a scheduler whose choices depend on object addresses (pybatsim's fillerSched iterates over a set
    # of jobs) makes the same choices when it receives the same bytes.
    work = tmp / "run"
    work.mkdir()
    prefix = str(work / "out")
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONHASHSEED="0")
    sched = subprocess.Popen([c.format(endpoint=back) for c in scheduler_cmd], cwd=str(work), env=env,
                             stdout=subprocess.DEVNULL, stderr=open(work / "scheduler.err", "w"))
    log: list = []
    ready, stop = threading.Event(), threading.Event()
    th = threading.Thread(target=_proxy, args=(front, back, log, ready, stop), daemon=True)
    th.start()
    ready.wait(10)
    sim = None
    try:
        sim = subprocess.run([c.format(socket=front, prefix=prefix) for c in sim_cmd], cwd=str(work), env=env,
                             capture_output=True, text=True, timeout=timeout)
    finally:
        stop.set()
        th.join(5)
        if sim is None or sim.returncode != 0:  # the scheduler would wait for a message that never comes
            sched.kill()
        try:
            sched.wait(timeout=20)
        except subprocess.TimeoutExpired:
            sched.kill()
            sched.wait()
    msgs = [(d, json.loads(raw)) for d, raw in log]
    work.rename(tmp / name)
    run = Run(msgs, str(tmp / name / "out"), sim.returncode, sim.stderr)
    run.raw = log
    return run


def real_cmd(batsim: str, platform, workload, extra=()) -> list[str]:
    return [batsim, "-p", str(platform), "-w", str(workload), "-e", "{prefix}", "-s", "{socket}", "-q", *extra]


def embedded_cmd(platform, workload, extra=()) -> list[str]:
    return [sys.executable, "-m", "burstbuffer.simulator", "-p", str(platform), "-w", str(workload),
            "-e", "{prefix}", "-s", "{socket}", "-q", "--timeout", "120", *extra]


def same_command_pair(tmp: Path, argv, scheduler_cmd, batsim=None):
    """(real Batsim run, embedded simulator run) of one command line: ``batsim ARGV`` and ``python -m
    burstbuffer.simulator ARGV``, the same ARGV (``{prefix}`` and ``{socket}`` in it filled in), as a user
    swapping one for the other runs them."""
    batsim = batsim or find_batsim()
    argv = [str(a) for a in argv]
    real = run_one(tmp, "real", [batsim, *argv], scheduler_cmd)
    emb = run_one(tmp, "embedded", [sys.executable, "-m", "burstbuffer.simulator", *argv], scheduler_cmd)
    return real, emb


def run_pair(tmp: Path, platform, workload, scheduler_cmd, real_extra=(), embedded_extra=(), batsim=None):
    """(real Batsim run, embedded simulator run) of the same scheduler command on the same inputs."""
    batsim = batsim or find_batsim()
    real = run_one(tmp, "real", real_cmd(batsim, platform, workload, real_extra), scheduler_cmd)
    emb = run_one(tmp, "embedded", embedded_cmd(platform, workload, embedded_extra), scheduler_cmd)
    return real, emb


def _normalize(msg: dict, platform_free: bool = False) -> dict:
    """A message without what names the run (SIMULATION_BEGINS: workload paths, export prefix, ...);
    `platform_free`: also without the resources' properties (the runs used two descriptions of one
    platform, e.g. the Dragonfly C++ plugin for real Batsim and its XML for the embedded simulator)."""
    m = json.loads(json.dumps(msg))
    for ev in m.get("events", []):
        if ev.get("type") == "SIMULATION_BEGINS":
            d = ev["data"]
            for w in (d.get("workloads") or {}):
                d["workloads"][w] = "<path>"
            cfg = d.get("config") or {}
            for k in ("export-prefix", "export_prefix", "socket-endpoint", "platform", "workloads"):
                cfg.pop(k, None)
            if platform_free:  # different files of one platform: only ids, names and states must agree
                for key in ("compute_resources", "storage_resources"):
                    d[key] = [{k: r[k] for k in ("id", "name", "state")} for r in d.get(key, [])]
    return m


def compare_exchanges(a: Run, b: Run, limit: int = 10, platform_free: bool = False) -> list[str]:
    """Differences between two logged exchanges, message by message (direction, `now`, every event with
    its timestamp, type and data), at most `limit` of them."""
    out = []
    for i, (x, y) in enumerate(zip(a.messages, b.messages)):
        if x[0] != y[0] or _normalize(x[1], platform_free) != _normalize(y[1], platform_free):
            out.append(f"message {i} ({x[0]}): {json.dumps(x[1])[:600]} != {json.dumps(y[1])[:600]}")
            if len(out) >= limit:
                return out
    if len(a.messages) != len(b.messages):
        out.append(f"{len(a.messages)} messages != {len(b.messages)}")
    return out


JOB_FIELDS = ("job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
              "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
              "waiting_time", "turnaround_time", "stretch", "allocated_resources")


def compare_jobs(a: Run, b: Run) -> list[str]:
    """Job ids whose `_jobs.csv` rows differ (on the fields both simulators write), plus missing ones."""
    ra = {r["job_id"]: r for r in a.jobs}
    rb = {r["job_id"]: r for r in b.jobs}
    diff = sorted(set(ra) ^ set(rb))
    for j in sorted(set(ra) & set(rb)):
        if any(ra[j].get(k) != rb[j].get(k) for k in JOB_FIELDS):
            diff.append(j)
    return diff


def shared_machines(run: Run) -> set[int]:
    """The machines on which two jobs of `run`'s `_jobs.csv` ran at the same time (data staging on a storage
    node, ``--no-sched``): which of them Batsim's Pajé trace shows there depends on its heap addresses."""
    spans: dict[int, list[tuple[float, float]]] = {}
    for r in run.jobs:
        if not r.get("allocated_resources"):
            continue
        start, end = float(r["starting_time"]), float(r["finish_time"])
        for part in r["allocated_resources"].split():
            lo, _, hi = part.partition("-")
            for m in range(int(lo), int(hi or lo) + 1):
                spans.setdefault(m, []).append((start, end))
    shared = set()
    for m, iv in spans.items():
        iv.sort()
        if any(b[0] < a[1] for a, b in zip(iv, iv[1:])):
            shared.add(m)
    return shared


def paje_lines(run: Run, skip: set[int] = frozenset()) -> list[str]:
    """`run`'s ``_schedule.trace``, its lines but the job colours (Batsim shuffles them with
    std::random_device) and the machine-state lines of the machines in `skip` (`shared_machines`)."""
    out = []
    for line in Path(run.prefix + "_schedule.trace").read_text().splitlines():
        if line.startswith("5 j"):
            line = re.sub(r'"[0-9.]+ [0-9.]+ [0-9.]+"$', '"colour"', line)
        m = re.match(r"6 \S+ machine_state m(\d+) ", line)
        if not (m and int(m.group(1)) in skip):
            out.append(line)
    return out


def pybatsim_cmd(scheduler: str, options: dict | None = None) -> list[str]:
    cmd = [sys.executable, str(REPO / "tests" / "pybatsim_det.py"), scheduler, "-s", "{endpoint}", "-t",
           "600000", "-v", "warning"]
    if options:
        cmd += ["-o", json.dumps(options)]
    return cmd


def kth_subset(path: Path, n: int) -> Path:
    w = json.loads((REPO / "workloads" / "kth-1000.json").read_text())
    jobs = w["jobs"][:n]
    w = {"nb_res": w["nb_res"], "jobs": jobs, "profiles": {j["profile"]: w["profiles"][j["profile"]] for j in jobs}}
    path.write_text(json.dumps(w))
    return path


if __name__ == "__main__":  # python tests/batsim_diff.py SCHEDULER N [DIR]
    import tempfile

    sched, n = sys.argv[1], int(sys.argv[2])
    tmp = Path(sys.argv[3]) if len(sys.argv) > 3 else Path(tempfile.mkdtemp())
    tmp.mkdir(parents=True, exist_ok=True)
    wl = kth_subset(tmp / f"kth{n}.json", n)
    real, emb = run_pair(tmp, CLUSTER, wl, pybatsim_cmd(sched))
    print("returncodes", real.returncode, emb.returncode, real.stderr[-500:], emb.stderr[-500:])
    print("messages", len(real.messages), len(emb.messages))
    for d in compare_exchanges(real, emb, 5):
        print(d)
    dj = compare_jobs(real, emb)
    print(f"jobs differing: {len(dj)} of {len(real.jobs)}", dj[:10])
    with open(tmp / "real.log", "w") as f:
        f.writelines(f"{d} {json.dumps(m)}\n" for d, m in real.messages)
    with open(tmp / "embedded.log", "w") as f:
        f.writelines(f"{d} {json.dumps(m)}\n" for d, m in emb.messages)
    print(tmp)


# ------------------------------------------------------------------ the project's own scheduler, on Dragonfly
DRAGONFLY_XML = REPO / "platforms" / "dragonfly96.xml"
DRAGONFLY_SO = DEFAULT_BATSIM.parent.parent / "platforms" / "dragonfly96_sg332.so"
STORAGE = "node_0,node_9,node_18,node_27,node_36,node_45,node_54,node_63,node_72,node_81,node_90,node_99"


def find_dragonfly_plugin() -> str | None:
    """The C++ Dragonfly platform for real Batsim on SimGrid 3.32 (docs/protocol.md): $BATSIM_DRAGONFLY_SO, else
    ~/.cache/batsim-4.2.1/platforms/dragonfly96_sg332.so; None if absent."""
    p = os.environ.get("BATSIM_DRAGONFLY_SO") or str(DRAGONFLY_SO)
    return p if os.path.isfile(p) else None


def serve_cmd(policy: str, model: str, workload) -> list[str]:
    """`burstbuffer serve` (the project's scheduler), writing its jobs.csv to ./sched/ in the run folder."""
    return [sys.executable, "-m", "burstbuffer", "serve", "--policy", policy, "--model", model, "--socket",
            "{endpoint}", "--workload", str(workload), "--output", "sched", "--bb-capacity", "40GB",
            "--timeout", "120", "-q"]


def run_pair_own(tmp: Path, policy: str, model: str, workload, batsim=None, plugin=None):
    """(real, embedded) runs of `burstbuffer serve --policy POLICY --model MODEL` on the paper's Dragonfly
    (real Batsim: the C++ plugin; embedded: platforms/dragonfly96.xml), storage roles given with -r."""
    batsim, plugin = batsim or find_batsim(), plugin or find_dragonfly_plugin()
    extra = ["-r", STORAGE + ":storage"]
    if model == "io-aware":
        extra += ["--enable-dynamic-jobs", "--enable-profile-reuse"]
    cmd = serve_cmd(policy, model, workload)
    real = run_one(tmp, "real", real_cmd(batsim, plugin, workload, extra), cmd)
    emb = run_one(tmp, "embedded", embedded_cmd(DRAGONFLY_XML, workload, extra), cmd)
    return real, emb


def sched_jobs(run: Run) -> bytes:
    """The scheduler's own jobs.csv (burstbuffer serve --output sched) of a run, as bytes."""
    return (Path(run.prefix).parent / "sched" / "jobs.csv").read_bytes()
