"""Command-line options of the window policies (BBSched and its baselines, docs/bbsched.md), shared by
``burstbuffer run`` and ``burstbuffer serve``: ``--window``, ``--starvation-bound``, ``--generations``,
``--population``, ``--mutation-rate``, ``--record-gd``: aliases of ``--policy-option NAME=VALUE``, turned
into the policy's options and checked with the others by `burstbuffer.cli.options_from_args`
(`burstbuffer.schedulers.options`)."""
from __future__ import annotations

import argparse

from .options import flag_type


def add_window_options(p: argparse.ArgumentParser) -> None:
    """Add the window-policy options to a subcommand's parser."""
    g = p.add_argument_group("window policies (bbsched, bbsched-exact, bbsched-nsga2, bbsched-naive, weighted*, "
                             "constrained-*, bin-packing; Fan et al. 2019)")
    g.add_argument("--window", type=flag_type("window"), metavar="W", help="window: the first W queued jobs (default 20)")
    g.add_argument("--starvation-bound", type=flag_type("starvation_bound"), metavar="K",
                   help="a job in the window at more than K scheduling iterations must start (default 50)")
    g.add_argument("--generations", type=flag_type("generations"), metavar="G", help="GA generations (bbsched, bbsched-nsga2; default 500)")
    g.add_argument("--population", type=flag_type("population"), metavar="P", help="GA population (default 20)")
    g.add_argument("--mutation-rate", type=flag_type("mutation_rate"), metavar="P_M",
                   help="GA bit-flip probability per gene (default 0.0005 = 0.05 %%)")
    g.add_argument("--record-gd", action="store_true", default=None,
                   help="record per decision the generational distance of the GA's front to the true one "
                        "(decisions.csv; windows of at most 20 candidates)")
