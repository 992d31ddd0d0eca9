import csv
import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import settings

from burstbuffer.session import CHECK_PROTOCOL_ENV

# Hypothesis profiles. `ci` runs 100 examples per property (a test's own budget is a multiple of it, see
# `examples`), the budgets the suite always ran; `dev` runs a tenth of them, for the edit-test loop
# (`make test-fast`); `explore` has ci's budgets with new examples at every run, to hunt bugs. Chosen by
# HYPOTHESIS_PROFILE=dev|ci|explore, else CI=true (as CI services set it) -> ci, else dev.
# `make test` sets HYPOTHESIS_PROFILE=ci: the same examples at every run (derandomized), so that a given tree
# passes or fails, never at random.
settings.register_profile("ci", max_examples=100, deadline=None, print_blob=True, derandomize=True)
settings.register_profile("explore", max_examples=100, deadline=None, print_blob=True)
settings.register_profile("dev", max_examples=10, deadline=None)
_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
HYPOTHESIS_PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if _CI else "dev")
settings.load_profile(HYPOTHESIS_PROFILE)


def examples(weight: float) -> int:
    """A property's example budget: `weight` times the loaded profile's `max_examples` (ci: 100, dev: 10),
    at least 1. `examples(1.5)` is 150 examples under `ci` and 15 under `dev`."""
    return max(1, round(weight * settings.default.max_examples))


def pytest_report_header(config):
    return f"hypothesis profile: {HYPOTHESIS_PROFILE} (max_examples={settings.default.max_examples})"


#: the tiers of the long modules (setup.cfg markers): collected first
LONG_TIERS = ("slow", "batsim", "dask", "docker")


def pytest_collection_modifyitems(config, items):
    """The long modules (a `LONG_TIERS` marker) first, each module's tests in their order: `make test`
    hands whole modules to its workers in collection order (`--dist loadfile`), so the short ones come last
    and fill the workers' tails (the longest-first rule of list scheduling) instead of a long module
    running alone at the end."""
    items.sort(key=lambda it: not any(it.get_closest_marker(m) for m in LONG_TIERS))

ROOT = Path(__file__).resolve().parents[1]
#: inputs the tests read: a real Batsim 4.2.1 run (batsim-4.2.1/) and the paper artifact's platform (reference/)
DATA = ROOT / "tests" / "data"
CAPTURE_DIR = DATA / "batsim-4.2.1"
KTH1000 = ROOT / "workloads" / "kth-1000.json"
PLATFORM = ROOT / "platforms" / "dragonfly96.xml"


def write_subset(path: Path, n: int, *, edit=None) -> Path:
    """The first `n` jobs of the bundled KTH workload (with their profiles), optionally edited."""
    w = json.loads(KTH1000.read_text())
    jobs = w["jobs"][:n]
    w = {"nb_res": w["nb_res"], "jobs": jobs, "profiles": {j["profile"]: w["profiles"][j["profile"]] for j in jobs}}
    if edit is not None:
        edit(w)
    path.write_text(json.dumps(w))
    return path


def edit_jobs_csv(run: Path, row: int, column: str, value: str) -> Path:
    """`run`'s jobs.csv with the cell (`row`, counted from 0 below the header, `column`) set to `value`
    (a hostile output for the commands that read one back); returns `run`."""
    rows = list(csv.DictReader((run / "jobs.csv").open()))
    rows[row][column] = value
    with (run / "jobs.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return run


def hiding_plan_engine(tmp_path: Path) -> Path:
    """A folder whose sitecustomize.py hides the plan engine's extension module
    (``burstbuffer.schedulers.native.plan_engine``) from every process with the folder on PYTHONPATH: an
    installation whose engine is missing."""
    hide = tmp_path / "hide"
    hide.mkdir(exist_ok=True)
    (hide / "sitecustomize.py").write_text(
        "import importlib.util\n_real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda name, *a: (None if name == 'burstbuffer.schedulers.native.plan_engine'\n"
        "                                             else _real(name, *a))\n")
    return hide


def children(pid: int) -> list[int]:
    """The PIDs of `pid`'s children (every thread's), [] once it is gone."""
    kids: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return kids
    for task in tasks:
        try:
            kids += [int(k) for k in (task / "children").read_text().split()]
        except OSError:
            pass
    return kids


def start_run(out: Path, *extra, min_done: int = 1, **popen) -> tuple[subprocess.Popen, int, bytes]:
    """A `burstbuffer run` of the bundled 1000 KTH jobs into `out` (`extra`: more arguments; `popen`: Popen's
    keywords, stdout DEVNULL unless given), its progress bar on its stderr pipe (BURSTBUFFER_PROGRESS=always,
    `logs.progress_bar`); returns it once its simulator child runs and the bar shows at least `min_done` jobs
    done, with the child's PID and the stderr read so far (the test fails if that takes 3 minutes)."""
    env = dict(os.environ, BURSTBUFFER_PROGRESS="always")
    proc = subprocess.Popen([sys.executable, "-m", "burstbuffer", "run", "--cpu", "off", "--workload", str(KTH1000),
                             "--output", str(out), *map(str, extra)], stderr=subprocess.PIPE, cwd=ROOT,
                            env=env, **{"stdout": subprocess.DEVNULL, **popen})
    seen = b""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 0.5)
        if ready:
            chunk = os.read(proc.stderr.fileno(), 65536)
            if not chunk:
                break
            seen += chunk
            kids = children(proc.pid)
            done = [int(n) for n in re.findall(rb"\s(\d+)/1000", seen)]     # tqdm: "sjf-bb: 12%| | 120/1000"
            if kids and done and max(done) >= min_done:
                return proc, kids[0], seen
    proc.kill()
    pytest.fail("the run never got going: " + seen[-300:].decode(errors="replace"))


@pytest.fixture
def kth_subset(tmp_path):
    return lambda n, edit=None: write_subset(tmp_path / f"kth-{n}.json", n, edit=edit)


@pytest.fixture(scope="session", autouse=True)
def check_protocol():
    """Every scheduler the tests start — `runner.run` in process, `burstbuffer run` / `serve` as
    subprocesses (they inherit the environment) — checks each answer against protocol v4 before
    sending it (`burstbuffer.batsim.conformance`): a violation raises, or exits non-zero, and fails
    the test."""
    old = os.environ.get(CHECK_PROTOCOL_ENV)
    os.environ[CHECK_PROTOCOL_ENV] = "1"
    yield
    if old is None:
        os.environ.pop(CHECK_PROTOCOL_ENV, None)
    else:
        os.environ[CHECK_PROTOCOL_ENV] = old


def _run_in_worker(call: dict) -> tuple:
    """In a `ParallelRuns` worker: ("returned", RunResult), ("raised", the exception) if it survives pickling,
    else ("failed", its traceback)."""
    import pickle
    import traceback

    from burstbuffer.runner import run
    try:
        return "returned", run(**call)
    except BaseException as exc:  # noqa: BLE001 - reported to the test that waits for this run
        tb = traceback.format_exc()
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:  # noqa: BLE001 - e.g. an exception class whose __init__ takes other arguments
            return "failed", tb
        exc.add_note(f"(in a ParallelRuns worker)\n{tb}")
        return "raised", exc


class ParallelRuns:
    """`burstbuffer.runner.run` calls started ahead of the tests that check them, on the machine's second core.

    The suite runs one test at a time, and a run keeps its scheduler and simulator on one core (`--cpu auto`),
    so the other core idles. Here each of (up to) two spawned worker processes is pinned to a core of its own
    and takes the next submitted run as soon as it is free; `result(key)` waits for one run and returns its
    `RunResult` (or raises what the run raised). With fewer than two cores, `result` runs the call itself.
    The calls, their arguments and their outputs are those of an in-simulator `run`; only where they run differs.
    """

    def __init__(self):
        import queue
        import threading

        from burstbuffer.affinity import available_cpus

        self._calls: dict = {}
        self._futures: dict = {}
        self._todo = queue.Queue()
        cpus = available_cpus()
        self._lanes = [threading.Thread(target=self._lane, args=(c,), daemon=True) for c in cpus[:2]] \
            if len(cpus) >= 2 else []
        for t in self._lanes:
            t.start()

    def _lane(self, cpu: int) -> None:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn"), initializer=os.sched_setaffinity,
                                 initargs=(0, {cpu})) as pool:
            while (key := self._todo.get()) is not None:
                fut = self._futures[key]
                if not fut.set_running_or_notify_cancel():
                    continue
                try:
                    how, what = pool.submit(_run_in_worker, self._calls[key]).result()
                except BaseException as exc:  # noqa: BLE001 - the worker died: handed to the test that waits
                    fut.set_exception(exc)
                    continue
                if how == "returned":
                    fut.set_result(what)
                elif how == "raised":
                    fut.set_exception(what)
                else:
                    fut.set_exception(RuntimeError(f"run({key!r}) in a ParallelRuns worker:\n{what}"))

    def submit(self, key, **call) -> None:
        """Queue `run(**call)` under `key` (runs in submission order)."""
        from concurrent.futures import Future

        self._calls[key] = call
        self._futures[key] = Future()
        if self._lanes:
            self._todo.put(key)

    def result(self, key, timeout: float | None = None):
        if not self._lanes:
            from burstbuffer.runner import run
            return run(**self._calls[key])
        return self._futures[key].result(timeout)

    def close(self) -> None:
        """Cancel the runs not started, wait for the running ones, stop the workers."""
        for fut in self._futures.values():
            fut.cancel()
        for _ in self._lanes:
            self._todo.put(None)
        for t in self._lanes:
            t.join()


def selected_params(request, test_name: str, *names: str) -> list[tuple]:
    """The parameter values (`names`, in order) of the selected items of `test_name` in the requesting module,
    in the order they will run: what a module fixture needs to submit to `ParallelRuns`."""
    out = []
    for item in request.session.items:
        if item.module is request.module and getattr(item, "originalname", None) == test_name:
            out.append(tuple(item.callspec.params[n] for n in names))
    return out
