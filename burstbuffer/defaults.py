"""The bundled default inputs of `burstbuffer run` (kept apart from `runner`, which imports the scheduler,
so that building the command-line parser stays cheap)."""
from __future__ import annotations

from pathlib import Path

#: The source tree's root (holds workloads/ and platforms/).
ROOT = Path(__file__).resolve().parents[1]
#: The 1000-job KTH workload (Batsim JSON).
DEFAULT_WORKLOAD = ROOT / "workloads" / "kth-1000.json"
#: The paper's 108-node Dragonfly with burst buffers (SimGrid XML).
DEFAULT_PLATFORM = ROOT / "platforms" / "dragonfly96.xml"
