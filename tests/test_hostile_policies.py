"""Misbehaving user policies, hostile workloads and hostile output folders: one line and a non-zero status (or
the right result), the jobs seen in jobs.csv whatever ends the run, nothing written outside --output, nothing
left running (docs/reliability.md §2, §5-§7, docs/faults.md).

A "policy that does X" does X on its third call of `schedule` (a W8 run calls it more often), run with
``--policy FILE.py:CLASS``. Each test is a case that once exited 0 with nothing written, printed a traceback,
wrote through a symbolic link or left a process running.
"""
from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from burstbuffer.colocated import REPORT_PERIOD

from .conftest import PLATFORM, write_subset

ROOT = Path(__file__).resolve().parents[1]

POLICIES = '''
import ctypes, os, posix, signal, sys, time
from procset import ProcSet
from burstbuffer.schedulers import Policy, Scheduler
from burstbuffer.schedulers.base import Job, Start


def _easy(self, queue):
    return [self.start(j, f) for j in list(queue) if (f := self.fit_now(j))]


class Third(Policy):
    """Acts (`act`) at its third call."""
    def schedule(self, now, queue, profile, rng):
        self._n = getattr(self, "_n", 0) + 1
        if self._n == 3:
            self.act()
        return _easy(self, queue)


class PosixExit(Third):
    def act(self): posix._exit(0)
class LibcExit(Third):
    def act(self): ctypes.CDLL(None)._exit(0)
class Segv(Third):
    def act(self): ctypes.string_at(0)
class Abort(Third):
    def act(self): os.abort()
class Base(Third):
    def act(self): raise BaseException("boom")
class GenExit(Third):
    def act(self): raise GeneratorExit("gen")
class Forks(Third):
    def act(self):
        pid = os.fork()
        if pid == 0:
            time.sleep(300)
            os._exit(0)
        with open(os.environ["FORKED_PID"], "w") as f:
            f.write(str(pid))


class InitRaises(Policy):
    def __init__(self, platform, seed=0, **kw):
        raise ValueError("bad init")
    def schedule(self, now, queue, profile, rng): return []


class FitRaises(Policy):
    def can_ever_fit(self, job): raise ValueError("bad fit")
    def schedule(self, now, queue, profile, rng): return _easy(self, queue)


class KilledAfterEnds(Policy):
    """Once two jobs ended: waits a while (the ends reach the run's parent), then SIGKILLs its process at
    the next call; the ids it saw end are in the file $ENDED."""
    def job_ended(self, job_id, now):
        self.ended = getattr(self, "ended", []) + [job_id]
        super().job_ended(job_id, now)
    def schedule(self, now, queue, profile, rng):
        ended = getattr(self, "ended", [])
        if getattr(self, "slept", False):
            os.kill(os.getpid(), signal.SIGKILL)
        if len(ended) >= 2:
            with open(os.environ["ENDED"], "w") as f:
                json.dump(ended, f)
            time.sleep(float(os.environ["WAIT"]))
            self.slept = True
        return _easy(self, queue)


class Ghost(Scheduler):
    """A low-level scheduler that starts a job it was never given."""
    def __init__(self, platform, seed=0):
        self._q = []
    @property
    def queue(self): return self._q
    def submit(self, job, now): self._q.append(job)
    def job_ended(self, job_id, now): pass
    def can_ever_fit(self, job): return None
    def decide(self, now):
        return [Start(Job("w0!ghost", 0.0, 10.0, 1, 0), ProcSet(0))]


# a class made with type(): its name is not where the module holds it (it cannot be pickled)
Dyn = type("Dynamic", (Policy,), {"schedule": lambda self, now, queue, profile, rng: _easy(self, queue)})
'''.replace("import ctypes,", "import json, ctypes,")


@pytest.fixture
def pol(tmp_path) -> Path:
    p = tmp_path / "hostile.py"
    p.write_text(POLICIES)
    return p


@pytest.fixture
def w8(tmp_path) -> Path:
    return write_subset(tmp_path / "w8.json", 8)


def burstbuffer(*argv, timeout: float = 300, env: dict | None = None) -> tuple[int, list[str], str]:
    """(exit status, the lines of stderr starting with "burstbuffer", all of stderr) of ``burstbuffer ARGV``."""
    p = subprocess.run([sys.executable, "-m", "burstbuffer", *map(str, argv)], capture_output=True, text=True,
                       cwd=ROOT, timeout=timeout, env={**os.environ, **(env or {})})
    err = p.stderr.replace("\r", "\n")
    return p.returncode, [ln for ln in err.splitlines() if ln.startswith("burstbuffer")], err


def run(w8, out, policy, *extra, env=None) -> tuple[int, list[str], str]:
    return burstbuffer("run", "--workload", w8, "--output", out, "-q", "--cpu", "off", "--timeout", "30",
                       "--policy", policy, *extra, env=env)


def rows(out: Path) -> list[dict]:
    return list(csv.DictReader((out / "jobs.csv").open()))


def one_line(rc_err, status: int, *needles) -> str:
    rc, lines, err = rc_err
    assert rc == status and len(lines) == 1 and "Traceback" not in err, err[-2000:]
    for n in needles:
        assert n in lines[0], lines
    return lines[0]


# ----------------------------------------------------------------------------------- exits and crashes
def test_sys_exit_at_a_policy_files_import_is_one_line(tmp_path, w8):
    """sys.exit(0) at import once made run, serve and policies exit 0, printing and writing nothing."""
    p = tmp_path / "exits.py"
    p.write_text("import sys\nsys.exit(0)\n")
    for argv in (["run", "--workload", w8, "--output", tmp_path / "o", "-q"],
                 ["serve", "--output", tmp_path / "sv", "--socket", f"ipc://{tmp_path}/s"], ["policies"]):
        spec = f"{p}:P"
        line = one_line(burstbuffer(*argv, *([spec] if argv == ["policies"] else ["--policy", spec]), timeout=120),
                        2, "exits.py, line 2", "sys.exit(0)")
        assert "cannot go on" in line
    assert not (tmp_path / "o" / "jobs.csv").exists()


@pytest.mark.slow
@pytest.mark.parametrize("link", ["pipes", "in-simulator"])
@pytest.mark.parametrize("cls, why", [("PosixExit", "called os._exit(0)"),
                                      ("LibcExit", "ended (status 0) without finishing the run"),
                                      ("Segv", "killed by SIGSEGV"), ("Abort", "killed by SIGABRT")])
def test_a_policy_that_exits_or_crashes_fails_with_the_jobs_seen(tmp_path, w8, pol, link, cls, why):
    """posix._exit, libc's _exit, a segfault or an abort in a policy once ended `run --link pipes` with 0 or 139,
    no message and no jobs.csv."""
    out = tmp_path / "o"
    one_line(run(w8, out, f"{pol}:{cls}", "--link", link), 1, why)
    seen = rows(out)
    assert seen and {r["final_state"] for r in seen} <= {"COMPLETED_SUCCESSFULLY", "RUNNING", "PENDING"}
    assert len({r["job_id"] for r in seen}) == len(seen)
    assert json.loads((out / "run.json").read_text())["compute"]


@pytest.mark.slow
def test_a_child_killed_mid_run_leaves_the_jobs_that_ended(tmp_path, w8, pol):
    """An in-simulator child SIGKILLed mid-run once left jobs.csv without the jobs that had already ended: the
    parent had their rows only every 0.5 s."""
    out, ended = tmp_path / "o", tmp_path / "ended.json"
    one_line(run(w8, out, f"{pol}:KilledAfterEnds", env={"ENDED": str(ended), "WAIT": str(2 * REPORT_PERIOD)}),
             1, "killed by SIGKILL")
    done = {r["job_id"] for r in rows(out) if r["final_state"] == "COMPLETED_SUCCESSFULLY"}
    seen = {jid.split("!", 1)[1] for jid in json.loads(ended.read_text())}    # w0!15: job 15 of workload w0
    assert len(seen) >= 2 and seen <= done


@pytest.mark.slow
@pytest.mark.parametrize("link", ["pipes", "in-simulator"])
def test_a_policys_forked_process_ends_with_the_run(tmp_path, w8, pol, link):
    """A policy's fork once outlived `run` (exit 0) by 300 s."""
    out, forked = tmp_path / "o", tmp_path / "forked"
    rc, _, err = run(w8, out, f"{pol}:Forks", "--link", link, env={"FORKED_PID": str(forked)})
    assert rc == 0 and len(rows(out)) == 8, err
    pid = int(forked.read_text())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            break                  # gone
        if state in ("Z", "X"):    # dead, not reaped yet by its new parent
            break
        time.sleep(0.5)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail(f"the policy's forked process {pid} outlived the run")


# ------------------------------------------------------------------------------------------ one line
@pytest.mark.slow
@pytest.mark.parametrize("cls, why", [
    ("Base", "decide raised BaseException: boom"), ("GenExit", "decide raised GeneratorExit: gen"),
    ("InitRaises", "ValueError: bad init in __init__ (line"), ("FitRaises", "ValueError: bad fit in can_ever_fit"),
    ("Ghost", "decision for w0!ghost, not a job of this run")])
def test_a_policy_raising_anything_is_one_line(tmp_path, w8, pol, cls, why):
    """BaseException, GeneratorExit, a raise in __init__ or can_ever_fit were 19-56-line tracebacks; a Start of an
    unknown job an UnboundLocalError inside the decision check."""
    out = tmp_path / "o"
    one_line(run(w8, out, f"{pol}:{cls}"), 1, f"policy {cls} at t=", why)
    assert "jobs.csv" in {p.name for p in out.iterdir()}


@pytest.mark.slow
def test_a_policy_class_made_with_type_runs(tmp_path, w8, pol):
    """A class made with type() cannot be pickled: the in-simulator child once failed with a PicklingError."""
    out = tmp_path / "o"
    rc, lines, err = run(w8, out, f"{pol}:Dyn")
    assert rc == 0 and not lines, err
    assert [r["final_state"] for r in rows(out)] == ["COMPLETED_SUCCESSFULLY"] * 8


# ------------------------------------------------------------------------------------ output folders
OUTPUTS = ["run.json", "jobs.csv", "jobs.csv.tmp", "simulator.log", "batsim_jobs.csv", "batsim_subjobs.csv",
           "batsim_schedule.csv", "batsim_machine_states.csv", "bb_occupancy.csv"]


@pytest.mark.parametrize("name", OUTPUTS)
def test_nothing_is_written_through_a_link_in_the_output_folder(tmp_path, w8, name):
    """A symbolic link in --output was followed: the file it pointed to, outside, was overwritten."""
    victim, out = tmp_path / "victim", tmp_path / "o"
    victim.write_text("keep")
    out.mkdir()
    (out / name).symlink_to(victim)
    one_line(burstbuffer("run", "--workload", w8, "--output", out, "-q", "--cpu", "off"), 2, name,
             "is a symbolic link")
    assert victim.read_text() == "keep"


def test_output_files_are_opened_without_following_links(tmp_path):
    """Every output the simulator streams is opened with O_NOFOLLOW: a link made after any check is refused."""
    from burstbuffer.errors import InputError
    from burstbuffer.fileio import open_output
    from burstbuffer.simulator.outputs import JobsWriter
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / "x_jobs.csv").symlink_to(victim)
    with pytest.raises(InputError, match="is a symbolic link"):
        JobsWriter(str(tmp_path / "x_jobs.csv"))
    with pytest.raises(InputError, match="is a symbolic link"):
        open_output(tmp_path / "x_jobs.csv", "wb")
    assert victim.read_text() == "keep"


def test_simulate_never_writes_through_a_link(tmp_path, w8):
    victim, out = tmp_path / "victim", tmp_path / "s"
    victim.write_text("keep")
    out.mkdir()
    (out / "x_jobs.csv").symlink_to(victim)
    rc, _, err = burstbuffer("simulate", "-p", PLATFORM, "-w", w8, "-e", out / "x", "-s", f"ipc://{tmp_path}/n",
                             timeout=120)
    assert rc == 2 and "is a symbolic link" in err and err.count("\n") == 1, err
    assert victim.read_text() == "keep"


@pytest.mark.parametrize("command", [["run", "-q"], ["serve", "--policy", "fcfs"], ["sweep", "{campaign}"]])
def test_an_output_name_too_long_is_one_line(tmp_path, w8, command):
    """--output DIR/<256 x b> was an OSError traceback."""
    campaign = tmp_path / "c.toml"
    campaign.write_text(f'[campaign]\nmodels = ["alloc-only"]\n\n[[policy]]\nname = "fcfs"\n\n'
                        f'[[workload]]\nfile = "{w8}"\n')
    argv = [a.format(campaign=campaign) for a in command]
    extra = ["--workload", w8] if command[0] == "run" else []
    line = one_line(burstbuffer(*argv, *extra, "--output", tmp_path / ("b" * 256), timeout=120), 2,
                    "--output", "File name too long")
    assert len(line) < 400


@pytest.fixture
def full_disk(tmp_path):
    """A 16 KB tmpfs (root only): a file system that fills up during a run."""
    mnt = tmp_path / "full"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(mnt)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.slow
@pytest.mark.parametrize("link", ["in-simulator", "pipes"])
def test_a_full_disk_is_its_own_one_line_and_status(full_disk, w8, link):
    """A 4-64 KB --output once ended with exit 2 (bad input), jobs.csv.tmp and a header-only jobs.csv left."""
    from burstbuffer.errors import EXIT_DISK_FULL
    one_line(burstbuffer("run", "--workload", w8, "--output", full_disk, "-q", "--cpu", "off", "--link", link),
             EXIT_DISK_FULL, "No space left on device", str(full_disk))
    left = {p.name for p in full_disk.iterdir()}
    assert not {n for n in left if n.endswith(".tmp")} and "jobs.csv" not in left, left


# --------------------------------------------------------------------------------------------- inputs
def _workload(tmp_path, w8, edit) -> Path:
    w = json.loads(w8.read_text())
    edit(w)
    p = tmp_path / "edited.json"
    p.write_text(json.dumps(w))
    return p


def _composed(seqs: dict, repeat: int = 1):
    def edit(w):
        base = w["jobs"][0]["profile"]
        for name, seq in seqs.items():
            w["profiles"][name] = {"type": "composed", "seq": [base if s == "BASE" else s for s in seq],
                                   "repeat": repeat}
        w["jobs"][0]["profile"] = next(iter(seqs))
    return edit


@pytest.mark.parametrize("seqs, repeat, why", [
    ({"c": ["BASE"]}, 10**12, "field 'repeat' must be an integer from 1 to 2147483647"),
    ({"c": ["c"]}, 1, "composed profiles contain one another: c -> c"),
    ({"c": ["BASE", "d"], "d": ["e"], "e": ["c"]}, 1, "composed profiles contain one another: c -> d -> e -> c"),
])
def test_simulate_refuses_a_composed_profile_at_load(tmp_path, w8, seqs, repeat, why):
    """repeat 10**12 was an internal TypeError; a composed profile containing itself was refused during the run
    (exit 1; Batsim 4.2.1 segfaults)."""
    wl = _workload(tmp_path, w8, _composed(seqs, repeat))
    rc, _, err = burstbuffer("simulate", "-p", PLATFORM, "-w", wl, "-e", tmp_path / "s" / "x",
                             "-s", f"ipc://{tmp_path}/n", timeout=120)
    assert rc == 2 and f"{wl}: profile c: {why}" in err and err.count("\n") == 1, err


def test_a_huge_job_id_is_one_short_line(tmp_path, w8):
    """A 100 MB job id was an internal IndexError (a shared page's slice)."""
    wl = _workload(tmp_path, w8, lambda w: w["jobs"][0].update(id="x" * (2 << 20)))
    line = one_line(burstbuffer("run", "--workload", wl, "--output", tmp_path / "o", "-q"), 2,
                    "its id is longer than 1000 characters (2097152)")
    assert len(line) < 400


def test_the_started_page_keeps_whole_ids():
    from burstbuffer.colocated import PAGE, StartedPage
    page = StartedPage.create()
    try:
        page.write(["y" * (2 * PAGE)])
        assert page.read() == []
        page.write(["a", "b" * PAGE, "c"])
        assert page.read() == ["a"]
    finally:
        page.close()


# ----------------------------------------------------------------------------------- simulate's signals
@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_simulate_stopped_by_a_signal_writes_what_it_has(tmp_path, w8, sig):
    """SIGTERM/SIGHUP killed `simulate` with no message and no _schedule.csv (as Batsim)."""
    prefix = tmp_path / "s" / "x"
    proc = subprocess.Popen([sys.executable, "-m", "burstbuffer", "simulate", "-p", str(PLATFORM), "-w", str(w8),
                             "-e", str(prefix), "-s", f"ipc://{tmp_path}/nobody"], cwd=ROOT, text=True,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120            # the first message is sent (nobody answers it) once it runs
    while not Path(f"{prefix}_jobs.csv").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig, err
    assert err.count("\n") == 1 and f"interrupted by {signal.Signals(sig).name}" in err, err
    assert "outputs so far written" in err
    schedule = list(csv.DictReader(open(f"{prefix}_schedule.csv")))
    assert len(schedule) == 1 and schedule[0]["nb_jobs"] == "0"


# ------------------------------------------------------------------------------------ policies' options
def test_option_meanings_come_from_args_and_numpydoc_sections():
    from burstbuffer.schedulers.options import docstring_meanings
    google = "Thing.\n\nArgs:\n    share (float): the share\n        of the BB.\n    x: y\n"
    numpy = "Thing.\n\nParameters\n----------\nshare : float\n    The share of\n    the BB.\nx\n    plain\n"
    assert docstring_meanings(google, {"share", "x"}) == {"share": "the share of the BB.", "x": "y"}
    assert docstring_meanings(numpy, {"share", "x"}) == {"share": "The share of the BB.", "x": "plain"}
    assert docstring_meanings("share: one line", {"share"}) == {"share": "one line"}


def test_the_tutorials_option_is_described():
    p = subprocess.run([sys.executable, "-m", "burstbuffer", "policies", "examples/bb_capped_backfill.py:BBCappedBackfill"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    out = p.stdout
    assert p.returncode == 0, p.stderr
    block = out.split("bb_share:", 1)[1].split("\n")[1]
    assert "largest share of the platform's burst-buffer capacity" in block
    assert "(its docstring does not say)" not in out.split("period:", 1)[0]


def test_the_mirror_reports_an_ended_job_within_the_report_period(monkeypatch):
    """The child's rows of ended jobs reach the parent within `REPORT_PERIOD` s, not at the next full report
    (every `MIRROR_PERIOD` s), and rows not changed are not sent again."""
    from types import SimpleNamespace

    from burstbuffer import colocated
    from burstbuffer.colocated import reporting
    clock = SimpleNamespace(t=100.0)
    monkeypatch.setattr(reporting, "time", SimpleNamespace(monotonic=lambda: clock.t))

    def rec(jid):
        return SimpleNamespace(job=SimpleNamespace(subtime=0.0), start=None, end=None, state=None, reason=None,
                               wait_reason=None, nodes_start=None, nodes_end=None, staged_at=None, jid=jid)
    records = {"w0!1": rec("w0!1"), "w0!2": rec("w0!2")}
    app = SimpleNamespace(records=records, ended_ids=[], last_started=[], platform=None,
                          jobs_csv_columns=lambda: ["job_id", "end"], job_row=lambda r, _: {"job_id": r.jid, "end": r.end})
    session = SimpleNamespace(app=app, sizes=lambda: (None, None), spec=SimpleNamespace(text="p", job_model="m"))
    monkeypatch.setattr("burstbuffer.metrics.runinfo.run_info", lambda *a: {"compute": 4})
    app.platform = object()
    mirror = colocated.JobsMirror(session)
    first = mirror.frame()
    assert [k for k, _ in first[2]] == [(0.0, "w0!1"), (0.0, "w0!2")] and first[3] == {"compute": 4}
    clock.t += colocated.REPORT_PERIOD / 2              # far from MIRROR_PERIOD
    records["w0!2"].end = 5.0
    app.ended_ids.append("w0!2")
    frame = mirror.frame()
    assert frame is not None and frame[2] == [((0.0, "w0!2"), {"job_id": "w0!2", "end": 5.0})]
    clock.t += colocated.REPORT_PERIOD / 2
    records["w0!1"].end = 6.0
    app.ended_ids.append("w0!1")
    assert mirror.frame() is None                       # within REPORT_PERIOD of the last report
    clock.t += colocated.REPORT_PERIOD
    assert clock.t - 100.0 < colocated.MIRROR_PERIOD
    frame = mirror.frame()
    assert frame is not None and frame[2] == [((0.0, "w0!1"), {"job_id": "w0!1", "end": 6.0})]
    clock.t += colocated.REPORT_PERIOD
    assert mirror.frame() is None                       # nothing new
