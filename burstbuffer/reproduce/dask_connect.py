"""Where the Dask workers come from (`connect`: a LocalCluster, an existing scheduler, or batch jobs),
`burstbuffer.reproduce.dask_engine`'s docstring.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

from ..errors import InputError
from ..signals import deferred
from .dask_clusters import jobqueue_cluster


#: a Dask scheduler address: [PROTOCOL://]HOST:PORT (HOST a name, an IPv4 address or [IPv6])
SCHEDULER_ADDRESS = re.compile(r"(?:(?:tcp|tls|ucx|ws|wss)://)?(?:[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]):[0-9]{1,5}")


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
    if not isinstance(address, str) or not SCHEDULER_ADDRESS.fullmatch(address):
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
    procs = worker_processes()
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
    reap(procs, grace=5.0)
    shutil.rmtree(scratch, ignore_errors=True)


def worker_processes() -> list:
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


def reap(procs: list, grace: float = 20.0) -> None:
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
