"""The batch commands of a dask-jobqueue cluster (``--cluster slurm|pbs|…``), bounded and reclaimable.

dask-jobqueue runs each job's submit command (``sbatch SCRIPT``) and cancel command (``scancel ID``) and waits
for it without a limit; a batch system that does not answer holds the campaign for ever, and a signal then
leaves the command, what it started and the job script (``$TMPDIR/tmp*.sh``) behind. `BatchCommands` gives a
cluster's job class (`job_class`) commands that:

- end within `timeout` seconds: the command and every process it started (its own session) are killed, and
  the job fails with `SubmitFailed`, which `failure` reports once (the engine then stops with one line);
- are killed, with their job scripts removed, by `close` (the engine's shutdown, after a signal too).
"""
from __future__ import annotations

import asyncio
import logging
import os
import shlex
import signal
from contextlib import contextmanager

from ..jsonvalues import excerpt

#: [s] default limit of one submit or cancel command (the cluster file's ``submit-timeout``)
SUBMIT_TIMEOUT = 60.0


def import_dask_jobqueue():
    """``import dask_jobqueue`` with this process's SIGINT handler kept: importing it (its ``runner`` module)
    makes SIGINT a silent ``sys.exit()``, and a Ctrl-C of a campaign then ended it with status 0, unreported."""
    previous = signal.getsignal(signal.SIGINT)
    import dask_jobqueue
    if signal.getsignal(signal.SIGINT) is not previous and previous is not None:
        try:
            signal.signal(signal.SIGINT, previous)
        except ValueError:      # not the main thread: it could not have been changed either
            pass
    return dask_jobqueue


class SubmitFailed(RuntimeError):
    """A batch command failed or did not return within its limit."""


class _NoSubmitTracebacks(logging.Filter):
    """Drops the tracebacks that Tornado and Distributed log for a job whose start failed with `SubmitFailed`:
    `BatchCommands.failure` says it in one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, SubmitFailed)


_FILTER = _NoSubmitTracebacks()


class BatchCommands:
    """The submit and cancel commands of one cluster's jobs (module docstring); `timeout` [s]."""

    def __init__(self, timeout: float = SUBMIT_TIMEOUT):
        self.timeout = timeout
        self.procs: set = set()           # asyncio processes under way
        self.scripts: set[str] = set()    # job scripts written and not yet removed
        self.failures: list[str] = []
        for name in ("tornado.application", "distributed.deploy.spec", "distributed.deploy.adaptive_core",
                     "distributed.deploy.adaptive"):
            logging.getLogger(name).addFilter(_FILTER)

    async def call(self, cmd: list[str], *, shell: bool = False, **kwargs) -> str:
        """dask-jobqueue's ``Job._call``, bounded: the command's stdout; SubmitFailed on a non-zero status or
        after `timeout` s (then the command's whole session is killed)."""
        create = asyncio.create_subprocess_shell if shell else asyncio.create_subprocess_exec
        proc = await create(*cmd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                            start_new_session=True, **kwargs)
        self.procs.add(proc)
        try:
            try:
                out, err = await asyncio.wait_for(proc.communicate(), self.timeout)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                _kill(proc)
                await proc.wait()
                raise SubmitFailed(f"{shlex.join(cmd[:1])} did not return within {self.timeout:g} s "
                                   "(submit-timeout of the cluster file)") from None
        finally:
            self.procs.discard(proc)
        if proc.returncode != 0:
            why = excerpt(err.decode(errors="replace").strip() or out.decode(errors="replace").strip(), 300)
            raise SubmitFailed(f"{shlex.join(cmd[:1])} exited with status {proc.returncode}"
                               + (f": {why}" if why else ""))
        return out.decode()

    def job_class(self, base: type) -> type:
        """A subclass of dask-jobqueue job class `base` whose commands are `call`, whose scripts are tracked
        and whose failed start is recorded (`failures`) and marks the job failed, not left "created" (a
        cluster's close asserts on that)."""
        commands = self

        class BoundedJob(base):
            _call = staticmethod(commands.call)

            @contextmanager
            def job_file(self):
                with super().job_file() as fn:
                    commands.scripts.add(fn)
                    try:
                        yield fn
                    finally:
                        commands.scripts.discard(fn)

            async def start(self):
                try:
                    await super().start()
                except Exception as exc:
                    from distributed.core import Status
                    commands.failures.append(str(exc))
                    self.status = Status.failed
                    raise SubmitFailed(str(exc)) from None

        BoundedJob.__name__ = BoundedJob.__qualname__ = base.__name__
        return BoundedJob

    def failure(self) -> str | None:
        """The first failed command's one line, if any."""
        return self.failures[0] if self.failures else None

    def close(self) -> None:
        """Kill the commands under way (each with every process of its session) and remove the job scripts
        left."""
        for proc in list(self.procs):
            _kill(proc)
        for fn in list(self.scripts):
            try:
                os.unlink(fn)
            except OSError:
                pass
        self.scripts.clear()


def _kill(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
