"""The engine options of `reproduce` and `sweep` (``--engine local|dask``, the Dask cluster's) and the
executor they choose (`make_executor`: the local pool or `dask_engine.DaskExecutor`).
"""
from __future__ import annotations

import shutil

from ..errors import InputError
from ..signals import deferred
from .dask_clusters import CLUSTERS
from .dask_connect import SCHEDULER_ADDRESS, reap, worker_processes, connect
from .dask_engine import DaskExecutor, remove_leftovers


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
    if args.scheduler_address and not SCHEDULER_ADDRESS.fullmatch(args.scheduler_address):
        raise InputError("--scheduler-address", args.scheduler_address[:100],
                         "expected a Dask scheduler address, e.g. tcp://HOST:PORT")
    if args.cluster_config and not args.cluster:
        raise InputError("--cluster-config", args.cluster_config, "needs --cluster")


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
            workers = worker_processes() if getattr(cluster, "burstbuffer_scratch", None) else []
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
                    reap(workers)       # a worker still winding down a run would write into its directory
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
