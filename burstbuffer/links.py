"""`burstbuffer run`'s links between the scheduler and the simulator: their names (`LINKS`), their former
spellings (`LINK_ALIASES`) and the ``--link`` value's check (`link`)."""
from __future__ import annotations

import argparse


#: The links `run` can give the scheduler and the simulator (docs/performance.md), each named by where the
#: scheduler runs: "in-simulator", in the simulator's process (a child of `run`; `burstbuffer.colocated`), a
#: function call per message; "pipes", in a process of its own, the simulator in a child of it, the protocol's
#: messages over a pipe each way (`burstbuffer.pipelink`). The same messages, the same outputs.
LINKS = ("in-simulator", "pipes")
#: Former spellings of the links, still accepted (``--link in-process`` is ``--link in-simulator``).
LINK_ALIASES = {"in-process": "in-simulator"}


class UnknownLink(argparse.ArgumentTypeError, ValueError):
    """A link name neither in `LINKS` nor in `LINK_ALIASES`: `text` and the `reason` (argparse prints both)."""

    def __init__(self, text: str):
        self.text = text
        self.reason = (f"unknown link (choose from {', '.join(LINKS)}; "
                       f"{', '.join(f'{a} is {b}' for a, b in LINK_ALIASES.items())})")
        super().__init__(f"{text!r}: {self.reason}")


def link(text: str) -> str:
    """The link named `text` (`LINKS`, or a former spelling in `LINK_ALIASES`), as its name in `LINKS`;
    `UnknownLink` (a ValueError) naming the links otherwise."""
    name = LINK_ALIASES.get(text, text)
    if name not in LINKS:
        raise UnknownLink(text)
    return name
