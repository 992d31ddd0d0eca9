"""Command-line options of the window policies (BBSched and its baselines, docs/bbsched.md), shared by
``burstbuffer run`` and ``burstbuffer serve``: ``--window``, ``--starvation-bound``, ``--generations``,
``--population``, ``--mutation-rate``, ``--record-gd``. Given options become policy options; an option
the chosen policy does not take is bad input (InputError, exit status 2)."""
from __future__ import annotations

import argparse

from .. import cliargs
from ..errors import InputError

_FLAGS = {"window": "--window", "starvation_bound": "--starvation-bound", "generations": "--generations",
          "population": "--population", "mutation_rate": "--mutation-rate", "record_gd": "--record-gd"}


def add_window_options(p: argparse.ArgumentParser) -> None:
    """Add the window-policy options to a subcommand's parser."""
    g = p.add_argument_group("window policies (bbsched, bbsched-exact, bbsched-nsga2, bbsched-naive, weighted*, "
                             "constrained-*, bin-packing; Fan et al. 2019)")
    g.add_argument("--window", type=cliargs.positive_int, metavar="W", help="window: the first W queued jobs (default 20)")
    g.add_argument("--starvation-bound", type=cliargs.positive_int, metavar="K",
                   help="a job in the window at more than K scheduling iterations must start (default 50)")
    g.add_argument("--generations", type=cliargs.positive_int, metavar="G", help="GA generations (bbsched, bbsched-nsga2; default 500)")
    g.add_argument("--population", type=cliargs.positive_int, metavar="P", help="GA population (default 20)")
    g.add_argument("--mutation-rate", type=cliargs.fraction, metavar="P_M",
                   help="GA bit-flip probability per gene (default 0.0005 = 0.05 %%)")
    g.add_argument("--record-gd", action="store_true", default=None,
                   help="record per decision the generational distance of the GA's front to the true one "
                        "(decisions.csv; windows of at most 20 candidates)")


def window_options(policy: str, args: argparse.Namespace) -> dict:
    """The policy options given on the command line, checked against `policy` (InputError if one does
    not apply or has a bad value)."""
    opts = {k: getattr(args, k, None) for k in _FLAGS}
    opts = {k: v for k, v in opts.items() if v is not None}
    if not opts:
        return {}
    from .bbsched import GA_OPTIONS, WINDOW_OPTIONS, WINDOW_POLICIES, BBSched
    cls = WINDOW_POLICIES.get(policy)
    for k, v in opts.items():
        if cls is None or k not in WINDOW_OPTIONS + (GA_OPTIONS if issubclass(cls, BBSched) else ()):
            raise InputError(_FLAGS[k], str(v), f"policy {policy} does not take this option")
    try:
        cls(_probe_platform(), **opts)
    except ValueError as exc:
        flag = next((f for k, f in _FLAGS.items() if k in str(exc)), "option")
        raise InputError(flag, "value", str(exc)) from None
    return opts


def _probe_platform():
    from ..platforms.model import Platform
    return Platform.simple(1, [1])
