"""Burst-buffer request model and compute/communication model of a converted job (docs/workload.md,
Kopanski & Rzadca 2021, §4.1, the paper's artifact).

Per job, from its SWF requested time (walltime, s), run time (s) and requested processors N:

* BB request per node (bytes, int): ``X × 1024`` with X ~ scipy ``lognorm(s, loc, scale)``
  (KiB per processor, fitted on METACENTRUM-2013-3 requested memory), clipped to
  [100 MB, BB node capacity] and rounded; if the N per-node requests cannot be packed on the BB
  nodes — N > ⌊capacity / request⌋ × (number of BB nodes) — the request becomes
  ⌊capacity / ⌈N / number of BB nodes⌉⌋ (with 12 BB nodes: ⌊capacity/⌈N/12⌉⌋).
  Short jobs (requested time ≤ 120 s) ask for 10 MB per node.
* Compute per node (flops, int): ``round(speed × max(run_time − 40 × bb / bandwidth,
  0.05 × run_time))``, bandwidth 1250 MB/s; short jobs: ``speed × run_time``. The 40 × bb /
  bandwidth seconds leave room for the job's I/O phases without changing its walltime.
* Communication (bytes between each pair of hosts, int): ``round(Gaussian(0.1 GB, sd 0.02 GB))``
  (never below 0), and 0 for one-node jobs.

These reproduce the artifact's numbers exactly where they are not random (the compute of every
reference job matches to the flop given its `bb`). Random draws come from a numpy Generator
seeded by the caller: one log-normal draw and one Gaussian draw per job, in job order, from two
independent streams, so a job's values depend only on the seed and its position.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

#: docs/workload.md: log-normal fit of the BB request per processor, in KiB (scipy parameters).
LOGNORM_PARAMS = dict(s=1.0972516604048774, loc=-150361.59523836235, scale=2714115.5724594607)
KiB = 1024
MB = 10**6
GB = 10**9


@dataclass(frozen=True)
class BBModel:
    """Parameters of the docs/workload.md model (defaults: the paper's platform and workload).

    Attributes:
        bb_capacity: capacity of one BB node, bytes (40 GB; docs/platform.md).
        bb_nodes: number of BB nodes (12; docs/platform.md).
        speed: compute speed of a node, flops/s (1 Gflop/s).
        bandwidth: link bandwidth used to shorten the compute, bytes/s (1250 MB/s).
        runtime_factor: seconds of I/O budgeted per (bb / bandwidth) (40; artifact
            ``multiply_factor_runtime``).
        min_compute_fraction: compute never shrinks below this fraction of the run time (0.05).
        min_bb: lower clip of the per-node request, bytes (100 MB).
        short_walltime: jobs with requested time ≤ this are short, s (120).
        short_bb: per-node request of short jobs, bytes (10 MB).
        com_mean, com_sd: Gaussian communication, bytes (0.1 GB, sd 0.02 GB).
        distinct_bb: reproduce the artifact's "storage interval" correction: while another job
            already has the same (walltime, bb), lower bb by 1 byte (applied after the compute is
            computed). Off by default (docs/workload.md §3): this project needs it not.
    """

    bb_capacity: int = 40 * GB
    bb_nodes: int = 12
    speed: float = 1 * GB
    bandwidth: float = 1250 * MB
    runtime_factor: float = 40
    min_compute_fraction: float = 0.05
    min_bb: int = 100 * MB
    short_walltime: float = 120
    short_bb: int = 10 * MB
    com_mean: float = 0.1 * GB
    com_sd: float = 0.02 * GB
    distinct_bb: bool = False

    def __post_init__(self) -> None:
        if self.bb_capacity <= 0 or self.bb_nodes <= 0:
            raise ValueError("BB capacity and number of BB nodes must be positive")
        if self.speed <= 0 or self.bandwidth <= 0:
            raise ValueError("speed and bandwidth must be positive")

    # --- deterministic parts -------------------------------------------------------------
    def per_node_bb(self, kib: np.ndarray, res: np.ndarray, *, limited: list | None = None) -> np.ndarray:
        """Per-node BB request (bytes, int64) of long jobs from draws `kib` (KiB per processor)
        and requested processors `res` (arrays of one shape): clip ``kib × 1024`` to
        [min_bb, bb_capacity], round (half to even, as Python's round), then apply the capacity
        rule N > ⌊cap/bb⌋ × bb_nodes ⇒ bb = ⌊cap / ⌈N / bb_nodes⌉⌋ (docs/workload.md, artifact).
        If `limited` is a list, the boolean mask of the jobs lowered by the rule is appended to it.
        Raises ValueError if a job has so many processors that its request would be 0 bytes.
        """
        cap = int(self.bb_capacity)
        res = np.asarray(res, dtype=np.int64)
        bb = np.rint(np.maximum(np.minimum(np.asarray(kib, dtype=float) * KiB, cap), self.min_bb)).astype(np.int64)
        per_bb_node = cap // bb                       # how many such requests one BB node holds
        too_big = res > per_bb_node * self.bb_nodes
        if np.any(too_big):
            share = -(-res[too_big] // self.bb_nodes)  # ⌈N / bb_nodes⌉ compute nodes per BB node
            bb[too_big] = cap // share
        if limited is not None:
            limited.append(too_big)
        if np.any(bb <= 0):
            raise ValueError("a job requests more processors than bytes of BB capacity")
        return bb

    def compute(self, run_time: np.ndarray, bb: np.ndarray, short: np.ndarray) -> np.ndarray:
        """Flops per node (int64): ``round(speed × max(run − factor × bb / bandwidth,
        fraction × run))`` for long jobs, ``round(speed × run)`` for short ones (docs/workload.md; the
        same float operations as the artifact, so the reference's numbers match to the flop)."""
        run = np.asarray(run_time, dtype=float)
        bb = np.asarray(bb, dtype=float)
        long_ = np.maximum(run - self.runtime_factor * bb / self.bandwidth, run * self.min_compute_fraction)
        return np.rint(self.speed * np.where(short, run, long_)).astype(np.int64)

    # --- the whole model ------------------------------------------------------------------
    def draw(self, walltime, run_time, res, seed: int | np.random.Generator | None = 0, *,
             details: bool = False) -> tuple[np.ndarray, ...]:
        """(bb, cpu, com) per job, int64 arrays of the input length; with `details`, a fourth
        boolean array: the long jobs whose request the capacity rule lowered.

        Inputs are per-job sequences: requested time (walltime, s), run time (s), requested
        processors. `seed` is an int (or a numpy Generator, used as is): the same seed gives
        the same values. Raises ValueError on non-positive processors or capacity overflow.
        """
        wall = np.asarray(walltime, dtype=float)
        run = np.asarray(run_time, dtype=float)
        res = np.asarray(res, dtype=np.int64)
        n = len(wall)
        if not (len(run) == len(res) == n):
            raise ValueError("walltime, run_time and res must have the same length")
        if n and res.min() <= 0:
            raise ValueError("requested processors must be positive")
        if isinstance(seed, np.random.Generator):
            rng_bb = rng_com = seed
        else:
            rng_bb, rng_com = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
        kib = stats.lognorm(**LOGNORM_PARAMS).rvs(size=n, random_state=rng_bb) if n else np.empty(0)
        com = np.maximum(np.rint(rng_com.normal(self.com_mean, self.com_sd, size=n)), 0).astype(np.int64)
        com[res == 1] = 0
        short = wall <= self.short_walltime
        lim: list = []
        bb = self.per_node_bb(kib, res, limited=lim)
        bb[short] = self.short_bb
        cpu = self.compute(run, bb, short)
        if self.distinct_bb:
            bb = _distinct(wall, bb)
        if details:
            return bb, cpu, com, lim[0] & ~short
        return bb, cpu, com


def _distinct(walltime: np.ndarray, bb: np.ndarray) -> np.ndarray:
    """The artifact's correction: in job order, lower bb by 1 byte while (walltime, bb) is taken."""
    out = bb.copy()
    seen: set[tuple[float, int]] = set()
    for i in range(len(out)):
        w, b = float(walltime[i]), int(out[i])
        while (w, b) in seen:
            b -= 1
        seen.add((w, b))
        out[i] = b
    return out
