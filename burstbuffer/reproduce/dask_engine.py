"""The Dask executor: the runs of a plan as tasks of a `dask.distributed` cluster (issue 16).

Where the workers come from (`connect`):

- default: a `LocalCluster` on this machine with `workers` single-threaded worker processes (one per
  core), each pinning its runs to a CPU core of its own, as the local pool does (`burstbuffer.affinity`);
- ``--scheduler-address tcp://HOST:PORT`` or ``--scheduler-file FILE``: an existing cluster (``dask
  scheduler`` / ``dask worker --nthreads 1``, dask-mpi, ...);
- ``--cluster slurm|pbs|sge|lsf|oar --cluster-config FILE.toml``: dask-jobqueue submits the workers as batch
  jobs from the file's ``[cluster]`` table (`jobqueue_cluster`) and scales them adaptively.

Each task runs `run_one` into a fresh sibling directory (``.NAME.tmp-PID-UUID``) and then swaps it in
for ``spec.out`` (`swap_in`): a run whose worker died leaves at most such a temporary directory, never a
half-written run directory; Dask resubmits the task to another worker (up to the scheduler's
``allowed-failures``, then the run is reported failed). A task whose run directory already holds a valid
marker returns it without simulating again (a resubmitted task that had in fact finished).
"""
from __future__ import annotations

import os
import re
import shutil
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

from ..errors import InputError
from ..fileio import read_toml
from ..logs import progress_bar
from ..signals import Interrupted, deferred
from .execute import RunSettings, describe, read_marker, run_one
from .runs import PlannedRun

#: batch systems of dask-jobqueue (``--cluster`` values) → their cluster class names
CLUSTERS = {"slurm": "SLURMCluster", "pbs": "PBSCluster", "sge": "SGECluster", "lsf": "LSFCluster",
            "oar": "OARCluster"}
#: keys of the ``[cluster]`` table → dask-jobqueue keyword arguments
_CLUSTER_KEYS = {"queue": "queue", "account": "account", "walltime": "walltime", "cores": "cores",
                 "memory": "memory", "processes": "processes", "job-extra": "job_extra_directives",
                 "prologue": "job_script_prologue", "python": "python", "interface": "interface",
                 "local-directory": "local_directory", "log-directory": "log_directory",
                 "worker-extra-args": "worker_extra_args", "job-name": "job_name"}
_SCALE_KEYS = ("minimum-jobs", "maximum-jobs")
#: keys of the ``[cluster]`` table whose value is one string
_TEXT_KEYS = ("queue", "account", "walltime", "memory", "python", "interface", "local-directory", "log-directory",
              "job-name")
#: the command each batch system submits its jobs with (``--cluster`` refuses to start without it)
SUBMIT_COMMANDS = {"slurm": "sbatch", "pbs": "qsub", "sge": "qsub", "lsf": "bsub", "oar": "oarsub"}
TMP_MARK = ".tmp-"
#: a Dask scheduler address: [PROTOCOL://]HOST:PORT (HOST a name, an IPv4 address or [IPv6])
_ADDRESS = re.compile(r"(?:(?:tcp|tls|ucx|ws|wss)://)?(?:[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]):[0-9]{1,5}")


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


# --- clusters -------------------------------------------------------------------------------------------
def read_cluster_config(path: str | Path, kind: str) -> tuple[dict, dict]:
    """(dask-jobqueue keyword arguments, scaling) from the TOML file `path`: its ``[cluster]`` table (or
    ``[KIND]``, e.g. ``[slurm]``) with keys queue, account, walltime, cores, memory, processes (default:
    `cores`, i.e. single-threaded workers), job-extra (list of extra batch directives), prologue (list of
    shell lines run before the worker, e.g. ``source /shared/venv/bin/activate``), python, interface,
    local-directory, log-directory, worker-extra-args, job-name, minimum-jobs, maximum-jobs (adaptive
    scaling bounds, default 0 and 1), submit-timeout (seconds a submit or cancel command may take, default
    `batch_jobs.SUBMIT_TIMEOUT`; in the scaling dict when given). InputError (file, key, reason) for a missing
    file, bad TOML, an unknown key or a missing cores/memory."""
    p = Path(path)
    data = read_toml(p, "cluster config")
    table = data.get(kind, data.get("cluster"))
    if not isinstance(table, dict):
        raise InputError(str(p), "cluster config", f"no [cluster] or [{kind}] table")
    kwargs: dict = {}
    scale = {"minimum-jobs": 0, "maximum-jobs": 1}
    for k, v in table.items():
        if k == "submit-timeout":
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not 0 < v < 1e6:
                raise InputError(str(p), k, "expected a number of seconds > 0")
            scale[k] = float(v)
        elif k in _SCALE_KEYS:
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise InputError(str(p), k, "expected an integer >= 0")
            scale[k] = v
        elif k in _CLUSTER_KEYS:
            kwargs[_CLUSTER_KEYS[k]] = v
        else:
            raise InputError(str(p), k, "unknown key (known: "
                                        f"{', '.join(sorted([*_CLUSTER_KEYS, *_SCALE_KEYS, 'submit-timeout']))})")
    for need in ("cores", "memory"):
        if _CLUSTER_KEYS[need] not in kwargs:
            raise InputError(str(p), need, "required")
    if not isinstance(kwargs["cores"], int) or isinstance(kwargs["cores"], bool) or kwargs["cores"] < 1:
        raise InputError(str(p), "cores", "expected an integer >= 1")
    for k in _TEXT_KEYS:
        if _CLUSTER_KEYS[k] in kwargs and not isinstance(kwargs[_CLUSTER_KEYS[k]], str):
            raise InputError(str(p), k, "expected a string (e.g. memory = \"4GB\")")
    procs = kwargs.get("processes")
    if procs is not None and (not isinstance(procs, int) or isinstance(procs, bool) or procs < 1):
        raise InputError(str(p), "processes", "expected an integer >= 1")
    kwargs.setdefault("processes", kwargs["cores"])      # one single-threaded worker per core
    for k in ("job_extra_directives", "job_script_prologue", "worker_extra_args"):
        if k in kwargs and not (isinstance(kwargs[k], list) and all(isinstance(x, str) for x in kwargs[k])):
            raise InputError(str(p), k.replace("_directives", "").replace("_", "-"), "expected a list of strings")
    if scale["maximum-jobs"] < scale["minimum-jobs"]:
        raise InputError(str(p), "maximum-jobs", "must be >= minimum-jobs")
    return kwargs, scale


def jobqueue_cluster(kind: str, config: str | Path, *, check_submit: bool = False):
    """A dask-jobqueue cluster of batch system `kind` (a key of `CLUSTERS`) from the TOML file `config`
    (`read_cluster_config`), not yet scaled; and its scaling bounds. Its ``job_script()`` is the batch
    script each worker job runs; its jobs' batch commands are bounded (`batch_jobs.BatchCommands`, the
    cluster's ``burstbuffer_commands``). `check_submit`: InputError unless the batch system's submit command
    (`SUBMIT_COMMANDS`) is on the PATH (without it, the cluster would wait for workers for ever)."""
    import shutil

    from .batch_jobs import SUBMIT_TIMEOUT, BatchCommands, import_dask_jobqueue
    dask_jobqueue = import_dask_jobqueue()
    kwargs, scale = read_cluster_config(config, kind)
    submit = SUBMIT_COMMANDS.get(kind)
    if check_submit and submit is not None and shutil.which(submit) is None:
        raise InputError("--cluster", kind, f"{submit} is not on this host's PATH: run from a node that can "
                                            "submit batch jobs")
    cls = getattr(dask_jobqueue, CLUSTERS[kind])
    commands = BatchCommands(scale.get("submit-timeout", SUBMIT_TIMEOUT))
    cluster = cls(job_cls=commands.job_class(cls.job_cls), **kwargs)
    cluster.burstbuffer_commands = commands
    return cluster, scale


def _quiet(client):
    """`client`, with the workers' profiler stopped (`dask_plugin.NoProfiler`)."""
    from .dask_plugin import NoProfiler
    client.register_plugin(NoProfiler())
    return client


def read_scheduler_file(path: str | Path) -> str:
    """The scheduler address in a Dask scheduler file (the JSON that ``dask scheduler --scheduler-file``
    writes, its ``address``). InputError(path, "scheduler file", reason) for a file that cannot be read
    (`fileio.read_input`) or is not one."""
    import json
    from ..fileio import MAX_CONFIG_BYTES, read_input
    text = read_input(path, "scheduler file", limit=MAX_CONFIG_BYTES)
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        doc = None
    address = doc.get("address") if isinstance(doc, dict) else None
    if not isinstance(address, str) or not _ADDRESS.fullmatch(address):
        raise InputError(str(path), "scheduler file", "not a Dask scheduler file (a JSON object with the "
                                                      "scheduler's \"address\", e.g. tcp://HOST:PORT)")
    return address


def connect(*, address: str | None = None, scheduler_file: str | None = None, cluster: str | None = None,
            cluster_config: str | None = None, workers: int = 1):
    """(distributed.Client, cluster we own or None, pin) for the engine options: an existing scheduler
    (`address` or `scheduler_file`), a dask-jobqueue `cluster` (adaptive, between the config's
    ``minimum-jobs`` and ``maximum-jobs`` batch jobs), else a LocalCluster of `workers`
    single-threaded processes. `pin`: whether runs pin themselves to a core (the LocalCluster only).
    InputError for an unreachable scheduler or a missing scheduler file."""
    from distributed import Client, LocalCluster
    if scheduler_file is not None:
        address = read_scheduler_file(scheduler_file)
    if address is not None:
        try:
            client = Client(address, timeout="30s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(str(address or scheduler_file), "scheduler", f"cannot connect: {exc}") from None
        return _quiet(client), None, False
    if cluster is not None and not cluster_config:
        raise InputError("--cluster", cluster, "needs --cluster-config FILE.toml")
    import dask
    import tempfile
    # every file of the cluster (dask-scratch-space, TMPDIR of the workers) goes
    # to one private folder, removed with the cluster (`make_executor`'s close), even after a signal
    scratch = tempfile.mkdtemp(prefix="burstbuffer-dask-")
    lc = client = None
    try:
        dask.config.set({"temporary-directory": scratch})    # this process's scheduler too, for its lifetime
        if cluster is not None:       # the batch jobs' cluster: its scheduler runs here
            with deferred():
                lc, scale = jobqueue_cluster(cluster, cluster_config, check_submit=True)
                lc.burstbuffer_scratch = scratch
                lc.adapt(minimum_jobs=scale["minimum-jobs"], maximum_jobs=max(scale["maximum-jobs"], 1))
                client = _quiet(Client(lc))
            return client, lc, False
        # a signal while the cluster starts is raised once it is up (`signals.deferred`): a cluster
        # interrupted half-way goes on starting in its event loop, out of reach of the clean-up below
        with deferred(), dask.config.set({"distributed.worker.profile.enabled": False}):
            lc = LocalCluster(n_workers=max(1, workers), threads_per_worker=1, processes=True,
                              dashboard_address=":0", silence_logs=40, local_directory=scratch,
                              env={"TMPDIR": scratch})
            lc.burstbuffer_scratch = scratch
            client = _quiet(Client(lc))
        return client, lc, True
    except BaseException:
        # a signal (`signals.Interrupted`) or a failure while the cluster starts: the processes started so
        # far and the scratch folder go with it
        _discard_cluster(client, lc, scratch)
        raise


def _discard_cluster(client, lc, scratch: str) -> None:
    """Close `client` and cluster `lc` (None: not made yet), end every process the cluster started (its
    batch commands too) and remove its `scratch` folder."""
    procs = _worker_processes()
    commands = getattr(lc, "burstbuffer_commands", None)
    if commands is not None:
        commands.close()
    if client is not None:
        try:
            client.close()
        except Exception:  # noqa: BLE001 - the cluster is closed next anyway
            pass
    if lc is not None:
        try:
            lc.close(timeout=10)
        except Exception:  # noqa: BLE001 - a half-started cluster: its processes are reaped below
            pass
    _reap(procs, grace=5.0)
    shutil.rmtree(scratch, ignore_errors=True)


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


def add_engine_arguments(p, *, default_engine: str) -> None:
    """The engine options of `reproduce` and `sweep` on argparse parser `p`."""
    p.add_argument("--engine", choices=("local", "dask"), default=default_engine,
                   help=f"local: a process pool on this machine; dask: Dask tasks (a LocalCluster unless "
                        f"--scheduler-address/--scheduler-file/--cluster says otherwise) (default: {default_engine})")
    p.add_argument("--scheduler-address", metavar="tcp://HOST:PORT",
                   help="with --engine dask: an existing Dask scheduler (dask scheduler / dask worker --nthreads 1)")
    p.add_argument("--scheduler-file", metavar="FILE", help="with --engine dask: an existing scheduler's file")
    p.add_argument("--cluster", choices=sorted(CLUSTERS),
                   help="with --engine dask: start the workers as batch jobs (dask-jobqueue, adaptive)")
    p.add_argument("--cluster-config", metavar="FILE.toml",
                   help="with --cluster: a TOML file whose [cluster] table has queue, account, walltime, cores, "
                        "memory, job-extra, prologue, minimum-jobs, maximum-jobs")


def check_engine_arguments(args) -> None:
    """InputError for contradictory engine options."""
    chosen = [o for o, v in (("--scheduler-address", args.scheduler_address), ("--scheduler-file", args.scheduler_file),
                             ("--cluster", args.cluster)) if v]
    if len(chosen) > 1:
        raise InputError(chosen[0], chosen[1], "give only one of --scheduler-address, --scheduler-file, --cluster")
    if chosen and args.engine != "dask":
        raise InputError(chosen[0], "--engine", "needs --engine dask")
    if args.scheduler_address and not _ADDRESS.fullmatch(args.scheduler_address):
        raise InputError("--scheduler-address", args.scheduler_address[:100],
                         "expected a Dask scheduler address, e.g. tcp://HOST:PORT")
    if args.cluster_config and not args.cluster:
        raise InputError("--cluster-config", args.cluster_config, "needs --cluster")


def _worker_processes() -> list:
    """Every descendant of this process but multiprocessing's resource tracker (psutil.Process list): a
    LocalCluster's worker processes and the simulators they run."""
    import psutil
    try:
        kids = psutil.Process().children(recursive=True)
    except psutil.Error:
        return []
    out = []
    for k in kids:
        try:
            if "resource_tracker" not in " ".join(k.cmdline()):
                out.append(k)
        except psutil.ZombieProcess:
            out.append(k)            # ended, not yet waited for: waiting reaps it
        except psutil.Error:
            pass
    return out


def _reap(procs: list, grace: float = 20.0) -> None:
    """Wait up to `grace` seconds for the processes `procs` (psutil) to end, then kill the survivors and
    wait for them: afterwards none of them writes anything."""
    import psutil
    _, alive = psutil.wait_procs(procs, timeout=grace)
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=5)


def make_executor(args, workers: int, *, pin: bool, progress: bool, desc: str, log=print):
    """(executor, close) for the parsed engine options `args`: a `LocalPoolExecutor` or a `DaskExecutor`
    (prints the Dask dashboard address); `close()` shuts down what was started here."""
    check_engine_arguments(args)
    if args.engine == "local":
        from .local import LocalPoolExecutor
        return LocalPoolExecutor(workers, pin=pin, progress=progress, log=log, desc=desc), lambda: None
    client, cluster, local = connect(address=args.scheduler_address, scheduler_file=args.scheduler_file,
                                     cluster=args.cluster, cluster_config=args.cluster_config,
                                     workers=workers)
    executor = DaskExecutor(client, pin=pin and local, progress=progress, log=log, desc=desc)
    commands = getattr(cluster, "burstbuffer_commands", None)
    if commands is not None:
        executor.cluster_failure = commands.failure

    def close():
        """Shut down the client and the cluster we started; with our LocalCluster, also its scratch folder
        and the temporary run directories its killed workers left (no task of ours runs any more). A signal
        arriving meanwhile waits until this is done (`signals.deferred`)."""
        with deferred():
            workers = _worker_processes() if getattr(cluster, "burstbuffer_scratch", None) else []
            if commands is not None:
                commands.close()     # a submit command under way: killed (its job fails, its script removed)
            try:
                client.close()
            finally:
                if cluster is not None:
                    try:
                        cluster.close()
                    except Exception:  # noqa: BLE001 - a job that never started: its processes reaped below
                        if commands is None:
                            raise
                    _reap(workers)       # a worker still winding down a run would write into its directory
                    scratch = getattr(cluster, "burstbuffer_scratch", None)
                    if scratch:
                        shutil.rmtree(scratch, ignore_errors=True)
                    if executor.todo:
                        remove_leftovers(executor.todo)
    try:
        n = len(client.scheduler_info().get("workers", {}))
        log(f"dask: scheduler {client.scheduler.address}, {n} worker(s) now, dashboard {client.dashboard_link}")
    except BaseException:        # a signal before the caller holds `close`
        close()
        raise
    return executor, close
