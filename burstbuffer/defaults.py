"""The bundled default inputs of `burstbuffer run` (kept apart from `runner`, which imports the scheduler,
so that building the command-line parser stays cheap)."""
from __future__ import annotations

from .data import bundled

#: The bundled defaults (package data, `burstbuffer.data`; in a checkout the repository's workloads/,
#: platforms/): the 1000-job KTH workload (Batsim JSON) and the paper's 108-node Dragonfly (SimGrid XML).
DEFAULT_WORKLOAD = bundled("workloads", "kth-1000.json")
DEFAULT_PLATFORM = bundled("platforms", "dragonfly96.xml")
