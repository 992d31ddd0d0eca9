"""Dask workers started as batch jobs (``--cluster``, dask-jobqueue): the ``[cluster]`` table of
``--cluster-config`` read and checked (`read_cluster_config`) and the cluster made from it (`jobqueue_cluster`);
`burstbuffer.reproduce.dask_engine`.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..fileio import read_toml


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
