"""Execution: run a plan's simulations through a pluggable `Executor`, resumably.

`execute(specs, executor, settings)` keeps every run whose ``summary.json`` marker is there (written
last by `run_one`, so its presence means the run finished and matches the spec) and hands the others to
the executor. `run_one(spec, settings)` is the unit of work any executor calls (in a process of its
own: it starts a scheduler and a simulator process); `LocalPoolExecutor` runs them in a local pool of
spawned worker processes, one CPU core each. Another engine (e.g. Dask) implements
`Executor.run` by submitting `run_one` for each spec and calling `on_done` with its result.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import resource
import shutil
import signal
import threading
import time
import traceback
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable, Protocol, Sequence

from ..signals import Interrupted
from .runs import PlannedRun

MARKER = "summary.json"

#: Progress callback of one run: (jobs started or rejected so far, total jobs or None).
Progress = Callable[[int, "int | None"], None]


@dataclass(frozen=True)
class RunSettings:
    """What every run of a plan shares: the SimGrid `platform` file, the policies' `seed`, `timeout`
    [s] of simulator silence before a run fails, `cpu`: the CPU core to pin a run's scheduler and
    simulator to (None: no pinning; a local executor sets it per worker), `network_model`: the
    simulator's (docs/io-model.md §5). `timeout` also bounds each decision of the policy, `run_timeout`
    [s] (None: no limit) each run's wall-clock time: a run over either fails, the others go on
    (docs/reliability.md)."""

    platform: str
    seed: int = 0
    timeout: float = 600.0
    cpu: int | None = None
    network_model: str = "exact"
    run_timeout: float | None = None


#: what shapes a schedule besides a run's inputs: the code of these parts of the package (paths relative to it)
SCHEDULE_CODE = ("schedulers", "io_model", "simulator", "batsim", "runner.py", "session.py", "colocated",
                 "app.py", "spec.py", "records.py", "platforms", "workloads/batsim_json.py")
_SOURCES = (".py", ".c", ".h", ".cc", ".cpp", ".hpp", ".pyx")


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """SHA-256 (hex, 16 digits) of the source files of `SCHEDULE_CODE` (path and content, in path order):
    the version of the code that shapes a schedule. Any change there makes every run key new."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for name in SCHEDULE_CODE:
        p = root / name
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.suffix in _SOURCES and f.is_file())
        for f in files:
            h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


_digests: dict[tuple, str] = {}


def file_digest(path: str | Path) -> str:
    """SHA-256 (hex) of a file's content, remembered per (path, size, mtime) in this process; "" for "" or a
    missing file."""
    if not path:
        return ""
    p = Path(path)
    try:
        st = p.stat()
    except OSError:
        return ""
    k = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    if k not in _digests:
        h = hashlib.sha256()
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        _digests[k] = h.hexdigest()
    return _digests[k]


def _policy_source(policy: str) -> str:
    """The digest of the file a ``FILE.py:CLASS`` or ``MODULE:CLASS`` policy comes from ("" for a registry name)."""
    if ":" not in policy:
        return ""
    where = policy.rsplit(":", 1)[0]
    if where.endswith(".py"):
        return file_digest(where)
    import importlib.util
    try:
        found = importlib.util.find_spec(where)
    except (ImportError, ValueError):
        return ""
    return file_digest(found.origin) if found is not None and found.origin else ""


def input_key(spec: PlannedRun, settings: RunSettings) -> str:
    """The content key of one run (docs/verdicts.md, "Runs are cached"): SHA-256 (hex) of the policy spec, its
    options and source file, the job model, the policy's seed, the workload's and the platform's content, the
    network model and `code_version()`. Two runs with the same key give the same schedule."""
    doc = {"policy": spec.policy, "source": _policy_source(spec.policy), "options": spec.options,
           "model": spec.model, "seed": settings.seed if spec.seed is None else spec.seed,
           "workload": file_digest(spec.workload), "platform": file_digest(spec.platform or settings.platform),
           "network_model": settings.network_model, "code": code_version()}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def read_marker(spec: PlannedRun, settings: RunSettings | None = None) -> dict | None:
    """The finished run's marker (`run_one`'s dict), or None if the run is not done (no marker, an
    unreadable one, no jobs.csv, or a marker made from another workload, model, policy or job count; with
    `settings`, also one whose ``inputs`` is not the run's `input_key`: another workload or platform
    content, seed, or version of the code that shapes the schedule)."""
    p = Path(spec.out) / MARKER
    try:
        info = json.loads(p.read_text())
    except (OSError, ValueError):
        return None
    if (info.get("policy"), info.get("model"), info.get("workload"), info.get("jobs"), info.get("options", ""),
            info.get("platform", "")) != (spec.policy, spec.model, spec.workload, spec.jobs, spec.options,
                                          spec.platform):
        return None
    if settings is not None and info.get("inputs") != input_key(spec, settings):
        return None
    return info if (Path(spec.out) / "jobs.csv").is_file() else None


def _adopt(src: Path, spec: PlannedRun, info: dict) -> dict:
    """Copy the finished run folder `src` (marker `info`) into ``spec.out`` as `spec`'s run (its marker
    rewritten with `spec`'s key and scope, written last); return that marker."""
    out = Path(spec.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).unlink(missing_ok=True)
    for f in src.iterdir():
        if f.is_file() and f.name != MARKER:
            shutil.copy2(f, out / f.name)
    mine = {**info, "key": spec.key, "scope": spec.scope, "workload": spec.workload, "reused": str(src)}
    tmp = out / (MARKER + ".tmp")
    tmp.write_text(json.dumps(mine, indent=1))
    os.replace(tmp, out / MARKER)
    return mine


def _store(cache: Path, key: str, spec: PlannedRun, info: dict) -> None:
    """Copy the finished run of `spec` into `cache`/`key` (through a temporary folder renamed into place)."""
    dst = cache / key
    if (dst / MARKER).is_file():
        return
    tmp = cache / f".{key}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(spec.out, tmp)
    try:
        os.replace(tmp, dst)
    except OSError:          # another process stored it first
        shutil.rmtree(tmp, ignore_errors=True)


def _cpu_since(ru0) -> dict[str, float]:
    """CPU seconds (user + system) since `ru0` of this process (the scheduler) and of its finished
    children (the simulator): on a shared machine they tell what the run costs, whatever the load."""
    cpu = lambda r: r.ru_utime + r.ru_stime  # noqa: E731
    return {"scheduler": round(cpu(resource.getrusage(resource.RUSAGE_SELF)) - cpu(ru0[0]), 2),
            "simulator": round(cpu(resource.getrusage(resource.RUSAGE_CHILDREN)) - cpu(ru0[1]), 2)}


def run_one(spec: PlannedRun, settings: RunSettings, on_progress: Progress | None = None) -> dict:
    """Simulate one run into ``spec.out`` (`burstbuffer.runner.run`) and write its marker last
    (atomically); return the marker's content: key, scope, policy, model, workload, jobs, seed,
    wall_time [s], messages, summary (`runner` summary fields), cpu_time [s] (scheduler, simulator),
    finished (local time). Any failure is caught, written to ``spec.out``/error.txt and returned as
    ``{"key", "error"}``: the other runs go on. During the run Ctrl-C interrupts it (SIGINT ignored again
    afterwards, as in an idle pool worker)."""
    from ..runner import run
    out = Path(spec.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).unlink(missing_ok=True)
    t0 = time.perf_counter()
    ru0 = (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    # during a run Ctrl-C interrupts it, and its simulator (which inherits the disposition) dies with it;
    # only the main thread may set handlers (a Dask worker runs tasks in threads of its own)
    main = threading.current_thread() is threading.main_thread()
    if main:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    seed = settings.seed if spec.seed is None else spec.seed
    try:
        policy = spec.policy if spec.scheduler is None else replace(spec.scheduler, seed=seed)   # built in the parent
        res = run(policy, Path(spec.workload), Path(spec.platform or settings.platform), out, model=spec.model,
                  seed=seed, progress=False, on_progress=on_progress, timeout=settings.timeout,
                  cpu=settings.cpu, policy_options=json.loads(spec.options) if spec.options else None,
                  network_model=settings.network_model, run_timeout=settings.run_timeout)
    except BaseException as exc:   # noqa: BLE001 - reported, the other runs go on
        if isinstance(exc, (KeyboardInterrupt, Interrupted)):
            msg = f"interrupted ({exc})" if str(exc) else "interrupted"
            (out / "error.txt").write_text(msg + "\n")
            return {"key": spec.key, "error": msg, "interrupted": True}
        msg = f"{type(exc).__name__}: {exc}"
        (out / "error.txt").write_text(msg + "\n\n" + traceback.format_exc())
        return {"key": spec.key, "error": msg}
    finally:
        if main:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    info = {"key": spec.key, "scope": spec.scope, "policy": spec.policy, "model": spec.model,
            "workload": spec.workload, "jobs": spec.jobs, "seed": seed, "options": spec.options,
            "inputs": input_key(spec, settings),
            **({"platform": spec.platform} if spec.platform else {}),
            "network_model": settings.network_model,
            "wall_time": time.perf_counter() - t0, "messages": res.messages, "summary": asdict(res.summary),
            "cpu_time": _cpu_since(ru0), "finished": time.strftime("%Y-%m-%dT%H:%M:%S")}
    (out / "error.txt").unlink(missing_ok=True)
    tmp = out / (MARKER + ".tmp")
    tmp.write_text(json.dumps(info, indent=1))
    os.replace(tmp, out / MARKER)
    return info


def report_failed(failed: Sequence[str], file=None) -> int:
    """Print, on stderr, the one line naming the failed runs (`failed`: their keys) and how to retry them;
    return the command's exit status: 1 when some failed, else 0 (nothing printed)."""
    import sys
    if not failed:
        return 0
    print(f"{len(failed)} run(s) failed: {', '.join(failed)}; rerun the same command to retry them",
          file=file or sys.stderr)
    return 1


def interrupted(exc: Interrupted, command: str, written: Path, total: int, file=None) -> int:
    """After a signal stopped a campaign: print on stderr the one line saying so (the signal, how many of
    the `total` runs are done, the file `written` with what finished); return the exit status, 128 +
    the signal's number (130 SIGINT, 143 SIGTERM, 129 SIGHUP)."""
    import sys
    done = sum("error" not in r for r in (exc.result or {}).values())
    print(f"burstbuffer: {command} interrupted by {exc}: {done} of {total} runs done, the others are marked "
          f"interrupted in {written}; rerun the same command to finish them", file=file or sys.stderr)
    return exc.status


def describe(spec: PlannedRun, info: dict) -> str:
    """One line on a finished (or failed) run, for the console."""
    if "error" in info:
        return f"FAILED {spec.key}: {info['error']} (see {spec.out}/error.txt)"
    from ..metrics.summary import value_or_na
    sm = info["summary"]
    return (f"done {spec.key}: {sm['submitted']} jobs, mean waiting time "
            f"{value_or_na(sm['mean_waiting_h'], '.3f', ' h')}, mean bounded slowdown "
            f"{value_or_na(sm['mean_bounded_slowdown'], '.3f')}, wall {info['wall_time']:.0f} s")


class Executor(Protocol):
    """An execution engine. `run` executes every spec of `todo` (none of them finished), calling
    `on_done(spec, info)` once per spec with `run_one`'s result (or ``{"key", "error"}`` when the worker
    died), in completion order; `total` and `kept` (the plan's size and its runs finished before) are
    for progress display. It returns when every spec is done; KeyboardInterrupt stops the runs and
    propagates."""

    def run(self, todo: Sequence[PlannedRun], settings: RunSettings,
            on_done: Callable[[PlannedRun, dict], None], *, total: int, kept: int) -> None: ...


def execute(specs: Sequence[PlannedRun], executor: Executor, settings: RunSettings, *, log=print,
            cache: Path | None = None) -> dict[str, dict]:
    """Run every spec whose marker is missing (or made from other inputs: `read_marker` with `settings`)
    through `executor`; return key → marker (kept or new) or ``{"key", "error"}``. Runs are keyed by the
    content of their inputs (`input_key`): specs of one plan with the same key run once, the others get a
    copy; with `cache` (a folder), a run whose key is stored there is copied instead of simulated, and every
    run finished here is stored there (docs/verdicts.md, "Runs are cached"). Logs the number of runs kept
    when resuming and one line per run done. A signal (`signals.Interrupted`, or KeyboardInterrupt,
    re-raised as Interrupted(SIGINT)) stops the executor; the Interrupted raised carries in `result` the
    key → marker dict of the runs finished so far (interrupted runs: ``{"key", "error", "interrupted": True}``)."""
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict] = {}
    todo: list[PlannedRun] = []
    twins: dict[str, list[PlannedRun]] = {}     # input key → the later specs of the plan with that key
    first: dict[str, PlannedRun] = {}
    reused = 0
    for s in specs:
        info = read_marker(s, settings)
        if info is not None:
            results[s.key] = info
            continue
        k = input_key(s, settings)
        if cache is not None and read_marker_at(cache / k) is not None:
            results[s.key] = _adopt(cache / k, s, read_marker_at(cache / k))
            reused += 1
        elif k in first:
            twins.setdefault(k, []).append(s)
        else:
            first[k] = s
            todo.append(s)
    if results:
        log(f"resuming: {len(results) - reused} finished run(s) kept, "
            + (f"{reused} copied from the cache, " if cache is not None else "") + f"{len(todo)} to do")
    if twins:
        log(f"{sum(map(len, twins.values()))} run(s) share their inputs with another of the plan: run once, copied")

    def on_done(spec: PlannedRun, info: dict) -> None:
        results[spec.key] = info
        k = info.get("inputs") or input_key(spec, settings)
        if "error" in info:
            for t in twins.pop(k, []):
                results[t.key] = {**info, "key": t.key}
            return
        if cache is not None:
            _store(cache, k, spec, info)
        for t in twins.pop(k, []):
            results[t.key] = _adopt(Path(spec.out), t, info)

    if not todo:
        return results
    try:
        executor.run(sorted(todo, key=lambda s: -s.cost()), settings, on_done, total=len(specs),
                     kept=len(results))
    except (KeyboardInterrupt, Interrupted) as exc:
        # the caller writes what finished: `Interrupted.result` holds the results so far
        if isinstance(exc, KeyboardInterrupt):
            exc = Interrupted(signal.SIGINT)
        exc.result = results
        raise exc from None
    return results


def read_marker_at(folder: Path) -> dict | None:
    """The marker of the finished run in `folder` (a cache entry), or None."""
    try:
        info = json.loads((folder / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return info if (folder / "jobs.csv").is_file() else None
