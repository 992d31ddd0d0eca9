"""The Dask executor: the runs of a plan as tasks of a `dask.distributed` cluster.

Where the workers come from (`dask_connect.connect`):

- default: a `LocalCluster` on this machine with `workers` single-threaded worker processes (one per
  core), each pinning its runs to a CPU core of its own, as the local pool does (`burstbuffer.affinity`);
- ``--scheduler-address tcp://HOST:PORT`` or ``--scheduler-file FILE``: an existing cluster (``dask
  scheduler`` / ``dask worker --nthreads 1``, dask-mpi, ...);
- ``--cluster slurm|pbs|sge|lsf|oar --cluster-config FILE.toml``: dask-jobqueue submits the workers as batch
  jobs from the file's ``[cluster]`` table (`dask_clusters.jobqueue_cluster`) and scales them adaptively.

Each task runs `run_one` into a fresh sibling directory (``.NAME.tmp-PID-UUID``) and then swaps it in
for ``spec.out`` (`swap_in`): a run whose worker died leaves at most such a temporary directory, never a
half-written run directory; Dask resubmits the task to another worker (up to the scheduler's
``allowed-failures``, then the run is reported failed). A task whose run directory already holds a valid
marker returns it without simulating again (a resubmitted task that had in fact finished).

The modules: this one (the tasks and `DaskExecutor`), `dask_connect` (`connect`), `dask_clusters` (the
batch jobs' cluster), `engines` (the engine options and `make_executor`).
"""
from __future__ import annotations

import os
import shutil
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

from ..errors import InputError
from ..logs import progress_bar
from ..signals import Interrupted
from .execute import RunSettings, describe, read_marker, run_one
from .runs import PlannedRun


TMP_MARK = ".tmp-"


def swap_in(tmp: Path, out: Path) -> None:
    """Replace directory `out` (if any) by `tmp`, by renames in `out`'s folder: `out` is always either
    the old or the new directory, never a mixture."""
    if out.exists():
        old = out.with_name(f".{out.name}{TMP_MARK}old-{uuid.uuid4().hex[:8]}")
        os.replace(out, old)
        os.replace(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, out)


def remove_leftovers(specs: Sequence[PlannedRun]) -> int:
    """Delete the temporary directories (``.NAME.tmp-*``) beside the specs' run directories that dead
    workers left; return how many. Call it only when no task of these specs is running."""
    n = 0
    for folder in {Path(s.out).parent for s in specs}:
        for p in folder.glob(f".*{TMP_MARK}*"):
            shutil.rmtree(p, ignore_errors=True)
            n += 1
    return n


def _worker_cpu(pin: bool) -> int | None:
    """Inside a Dask worker: its CPU core when `pin` (a LocalCluster worker named k: the k-th available
    core; another worker: the core it runs on), else None."""
    if not pin:
        return None
    from ..affinity import resolve_cpu
    try:
        from distributed import get_worker
        name = get_worker().name
        slot = int(name) if isinstance(name, int) or str(name).isdigit() else None
    except (ImportError, ValueError):
        slot = None
    return resolve_cpu("auto", slot=slot)


def dask_task(spec: PlannedRun, settings: RunSettings, pin: bool = False) -> dict:
    """The unit of work on a Dask worker: the finished marker of ``spec.out`` if there is one, else
    `run_one` into a temporary sibling directory swapped in for ``spec.out`` afterwards (`swap_in`;
    also for a failed run, whose error.txt is then in ``spec.out``). Returns `run_one`'s dict."""
    done = read_marker(spec, settings)
    if done is not None:
        return done
    out = Path(spec.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}{TMP_MARK}{os.getpid()}-{uuid.uuid4().hex[:8]}")
    info = run_one(replace(spec, out=str(tmp)), replace(settings, cpu=_worker_cpu(pin)))
    swap_in(tmp, out)
    return info


class DaskExecutor:
    """Runs a plan's specs as Dask tasks (`dask_task`) on `client` (see `connect`), resubmitted by Dask
    when their worker dies; one tqdm bar over the plan (done / running / failed, ETA) when `progress`,
    one line per finished run through `log` (above the bar). `pin`: runs pin to their worker's core."""

    def __init__(self, client, *, pin: bool = False, progress: bool = True, log=print, desc: str = "runs"):
        self.client = client
        self.pin = pin
        self.progress = progress
        self.log = log
        self.desc = desc
        self.todo: Sequence[PlannedRun] = ()
        #: () -> the one line of a batch command that failed, or None (`batch_jobs.BatchCommands.failure`)
        self.cluster_failure: Callable[[], str | None] | None = None

    def run(self, todo: Sequence[PlannedRun], settings: RunSettings,
            on_done: Callable[[PlannedRun, dict], None], *, total: int, kept: int) -> None:
        """See `burstbuffer.reproduce.execute.Executor.run`. A task that fails for good (its workers kept
        dying: KilledWorker) is reported as ``{"key", "error"}``."""
        client = self.client
        self.todo = todo
        futures = {}
        for s in todo:
            # pure=False and a unique key: a rerun of the campaign never reuses a stale result
            f = client.submit(dask_task, s, settings, self.pin, key=f"run-{uuid.uuid4().hex}",
                              pure=False, retries=0)
            futures[f] = s
        keys = {f.key for f in futures}
        bar = None
        if progress_bar(self.progress):   # else one line per finished run: no carriage returns in logs
            from tqdm import tqdm
            bar = tqdm(total=total, initial=kept, unit="run", desc=self.desc, dynamic_ncols=True, leave=True)
        say = (lambda m: bar.write(m)) if bar is not None else self.log
        failed = 0
        last_poll = 0.0
        try:
            pending = set(futures)
            while pending:
                done = {f for f in pending if f.done()}
                pending -= done
                if not done:
                    self._check_cluster()
                    time.sleep(0.2)
                for f in done:
                    s = futures[f]
                    try:
                        info = f.result()
                    except Exception as exc:  # noqa: BLE001 - KilledWorker and the like: this run only
                        info = {"key": s.key, "error": f"{type(exc).__name__}: {exc}"}
                    failed += "error" in info
                    on_done(s, info)
                    say(describe(s, info))
                    if bar is not None:
                        bar.update(1)
                if bar is not None and time.monotonic() - last_poll >= 1.0:
                    last_poll = time.monotonic()
                    try:
                        # processing = assigned to a worker; at most one per worker thread actually runs
                        info = client.scheduler_info(n_workers=-1)["workers"]
                        threads = sum(w.get("nthreads", 1) for w in info.values())
                        running = min(threads, sum(k in keys for ks in client.processing().values() for k in ks))
                    except Exception:  # noqa: BLE001 - a lost scheduler answer only loses the count
                        running = -1
                    bar.set_postfix_str(f"running {running if running >= 0 else '?'}, failed {failed}",
                                        refresh=True)
        except (KeyboardInterrupt, Interrupted):
            client.cancel(list(futures))
            raise
        finally:
            if bar is not None:
                bar.close()
        remove_leftovers(todo)


    def _check_cluster(self) -> None:
        """InputError once a batch command failed while no worker ever joined: the campaign would wait for
        ever (the batch system does not take the jobs, or does not answer)."""
        why = self.cluster_failure() if self.cluster_failure is not None else None
        if why and not self.client.scheduler_info().get("workers"):
            raise InputError("--cluster", "batch jobs", f"no worker could be started: {why}")
