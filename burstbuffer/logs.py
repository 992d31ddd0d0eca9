"""The log level of every command (``burstbuffer --log-level LEVEL`` / ``-v`` / ``-vv``), kept in the environment
so that the processes a command starts (a run's simulating child, a campaign's workers) log at the same level.

At ``info`` and ``debug`` the ``burstbuffer`` logger writes to stderr (the console; in a run's child, stderr is
``simulator.log``) and SimGrid's own log threshold is ``info`` instead of ``warning``; at ``debug`` the scheduler
logs each job's submission, start and end. Standard library only.
"""
from __future__ import annotations

import logging
import os
import sys

#: The environment variable that draws progress bars when stderr is not a terminal too (``always``).
PROGRESS_ENV = "BURSTBUFFER_PROGRESS"


def progress_bar(wanted: bool) -> bool:
    """Whether to draw a progress bar a command wants (`wanted`, i.e. not ``-q``): only on a terminal, so that
    a log file gets no carriage returns, unless ``$BURSTBUFFER_PROGRESS`` is ``always`` (a terminal emulated
    by a test, a log meant to show it)."""
    return bool(wanted) and (sys.stderr.isatty() or os.environ.get(PROGRESS_ENV, "").strip().lower() == "always")


#: The environment variable holding the level for child processes.
LEVEL_ENV = "BURSTBUFFER_LOG_LEVEL"
#: The levels, most verbose first.
LEVELS = ("debug", "info", "warning", "error")


def level() -> str:
    """The level in force: ``$BURSTBUFFER_LOG_LEVEL`` when it names one of `LEVELS`, else ``warning``."""
    v = os.environ.get(LEVEL_ENV, "").strip().lower()
    return v if v in LEVELS else "warning"


def setup(name: str | None = None) -> str:
    """Set the level (`name`, else the environment's) for this process and its children, and give the
    ``burstbuffer`` logger a stderr handler ("burstbuffer: LEVEL: message") when the level is below warning.
    Returns the level."""
    lv = name if name in LEVELS else level()
    os.environ[LEVEL_ENV] = lv
    log = logging.getLogger("burstbuffer")
    log.setLevel(lv.upper())
    if lv in ("debug", "info") and not any(getattr(h, "_bb_console", False) for h in log.handlers):
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(logging.Formatter("burstbuffer: %(levelname)s: %(message)s"))
        h._bb_console = True
        log.addHandler(h)
    return lv


def simgrid_threshold(quiet: bool) -> str:
    """SimGrid's ``root.thres`` for the level in force: critical when `quiet`, info at info and debug, else
    warning."""
    if quiet:
        return "critical"
    return "info" if level() in ("debug", "info") else "warning"
