"""A Dask worker plugin for simulation workers (imported by `dask_connect.connect` only, so that the CLI does not
import `distributed` for every command)."""
from __future__ import annotations

from distributed import WorkerPlugin


class NoProfiler(WorkerPlugin):
    """Stops the worker's statistical profiler, which samples the running task's stack every 10 ms under the
    GIL (a simulation's scheduler is pure Python): registered on the workers there are and those that join."""

    name = "burstbuffer-no-profiler"
    idempotent = True

    def setup(self, worker) -> None:
        for key in ("profile", "profile-cycle"):
            pc = getattr(worker, "periodic_callbacks", {}).get(key)
            if pc is not None:
                pc.stop()
