"""How many compute phases a job has under the I/O-aware model (docs/io-model.md; Kopanski & Rzadca 2021, §4.1,
Fig. 4): a fact of the workload that both the io-aware job model (`burstbuffer.io_model.io_aware`) and the
Darshan reader (`darshan_io`, which spreads a log's checkpoint bytes over the phases) read, kept at the inputs'
layer so that no reader imports a job model."""
from __future__ import annotations

__all__ = ["FLOPS_PER_PHASE", "MAX_PHASES", "nb_phases"]

#: docs/io-model.md: one compute phase per 3600 Gflop per node, between 1 and 10 phases.
FLOPS_PER_PHASE = 3600e9
MAX_PHASES = 10


def nb_phases(cpu_per_node: float) -> int:
    """Number of compute phases (1 to `MAX_PHASES`) of a job with `cpu_per_node` flops per node."""
    return min(max(round(cpu_per_node / FLOPS_PER_PHASE), 1), MAX_PHASES)
