"""Command-line values checked at parse time: finite, in range, or a one-line error and exit status 2.

Every number a `burstbuffer` subcommand takes goes through one of these argparse `type=` functions, so that
``--alpha inf``, ``--weeks nan`` or ``--nb-compute -5`` end with ``burstbuffer run: error: argument --alpha:
…`` on one line (see `Parser`) instead of a traceback or a silently absurd result.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import NoReturn

from .errors import InputError


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (``PROG: error: MESSAGE``), exit status 2. Subparsers
    made with `add_subparsers` are of the same class.

    An unknown option, an invalid choice or a missing argument adds what to do: the close matches among the
    command's options or choices (``did you mean --jobs?``) on the error line, and a second line with the
    usage of the command the words name (its first usage line and where its options are listed)."""

    def parse_known_args(self, args=None, namespace=None):
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def _command(self) -> argparse.ArgumentParser:
        """The (sub)command parser the words given to `parse_args` select (self when they name none)."""
        p = self
        for word in getattr(self, "_argv", ()):
            subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
            if subs and word in subs[0].choices:
                p = subs[0].choices[word]
        return p

    def error(self, message: str) -> NoReturn:
        cmd = self._command()
        hint, usage = suggest(message, cmd), ""
        if message.startswith(("unrecognized arguments", "argument COMMAND", "argument ACTION",
                               "the following arguments are required")) or "invalid choice" in message:
            first = cmd.format_usage().splitlines()[0].rstrip()
            more = " ..." if len(cmd.format_usage().strip().splitlines()) > 1 else ""
            usage = f"{first}{more}  ({cmd.prog} --help lists every option)\n"
        self.exit(2, f"{self.prog}: error: {message}{hint}\n{usage}")


def suggest(message: str, parser: argparse.ArgumentParser) -> str:
    """"; did you mean X?" for an argparse `message` about an unknown option (close matches among `parser`'s
    option strings) or an invalid choice (close matches among the choices it lists); "" when none is close."""
    import difflib
    import re
    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if m:
        word, pool = m.group(1), [c.strip().strip("'") for c in m.group(2).split(",")]
        close = difflib.get_close_matches(word, pool, n=2, cutoff=0.6)
    elif message.startswith("unrecognized arguments:"):
        pool = [o for a in parser._actions for o in a.option_strings]
        close = []
        for word in message.split(":", 1)[1].split():
            if word.startswith("-"):
                name = word.split("=", 1)[0]
                close += [c for c in difflib.get_close_matches(name, pool, n=2, cutoff=0.6) if c not in close]
    else:
        return ""
    return f"; did you mean {' or '.join(close)}?" if close else ""


def _number(text: str, kind: type) -> float:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _at_least(text: str, kind: type, low: float, strict: bool, what: str):
    v = _number(text, kind)
    if v < low or (strict and v == low):
        raise argparse.ArgumentTypeError(f"{text!r} must be {what}")
    return v


def positive_float(text: str) -> float:
    """A finite number > 0 (e.g. --alpha, --weeks, a run's --timeout)."""
    return _at_least(text, float, 0, True, "positive (> 0)")


def nonneg_float(text: str) -> float:
    """A finite number >= 0 (e.g. serve's --timeout, where 0 means no limit)."""
    return _at_least(text, float, 0, False, ">= 0")


def positive_int(text: str) -> int:
    """An integer >= 1 (e.g. --nb-compute, --parts, --jobs)."""
    return _at_least(text, int, 1, False, "a positive integer")


def nonneg_int(text: str) -> int:
    """An integer >= 0 (e.g. --from-job, --workers where 0 means one per core)."""
    return _at_least(text, int, 0, False, ">= 0")


def fraction(text: str) -> float:
    """A finite number in [0, 1] (a probability, a share)."""
    v = _number(text, float)
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be in [0, 1]")
    return v


def seed(text: str) -> int:
    """A seed: an integer in [0, 2**32) (what numpy's and Python's generators both take)."""
    v = _number(text, int)
    if not 0 <= v < 2 ** 32:
        raise argparse.ArgumentTypeError(f"{text!r} must be in [0, 2**32)")
    return v


def cpu(text: str) -> str | int:
    """``auto``, ``off`` or the number of an online CPU core (see `burstbuffer.affinity`)."""
    if text in ("auto", "off"):
        return text
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    try:
        v = int(text)
    except ValueError:
        v = None
    if v not in allowed:
        raise argparse.ArgumentTypeError(f"{text!r} is not auto, off or a usable core ({', '.join(map(str, allowed))})")
    return v


def input_file(path: str | Path, what: str) -> Path:
    """`path` as a Path if it is a readable regular file, else InputError naming why (not found, a folder,
    not a regular file such as /dev/null, unreadable, too large): `burstbuffer.fileio.check_input`.
    `burstbuffer.data.input_path` also finds a bundled input by its bare name."""
    from .fileio import check_input
    return check_input(path, what)
