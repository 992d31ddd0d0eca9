"""Size limits of the exact and heuristic solvers, in a module of their own so that the options table
(`burstbuffer.schedulers.options`, read to build the command line) names them without importing the solvers
(numpy)."""
from __future__ import annotations

__all__ = ["DEFAULT_MUTATION_RATE", "EXACT_LIMIT", "GA_LIMIT", "MAX_EXHAUSTIVE"]

#: Largest window whose Pareto set / single-objective optimum is found by enumerating its 2^k selections
#: (`moo.exact_front`, `moo.best_subset`; BBSched-exact's window; 2^20 subsets, ~10-30 ms).
EXACT_LIMIT = 20
#: Largest window the GA accepts (a chromosome's key must be exact in a float64; `moo.nsga`).
GA_LIMIT = 52
#: Largest `exhaustive_limit` of plan-α: queues of at most that many jobs are planned by trying every
#: permutation (`plan.PlanScheduler`; 8! = 40,320 plans per decision).
MAX_EXHAUSTIVE = 8
#: The GA's default bit-flip probability per gene (`moo.ga_front`; Fan et al. 2019, §4.1: 0.05 %).
DEFAULT_MUTATION_RATE = 0.0005
