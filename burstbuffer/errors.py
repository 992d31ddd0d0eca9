"""The one error type the user sees: a one-line message naming the file, the item and the reason."""


#: exit status of a run ended by one of its time limits (as coreutils' ``timeout``; docs/reliability.md)
EXIT_TIMEOUT = 124


#: exit status of a command whose outputs could not be written because their file system is full or over quota
#: (sysexits.h's EX_IOERR; docs/reliability.md)
EXIT_DISK_FULL = 74
#: the errno values of a full file system (`is_disk_full`)
_FULL = (28, 122)          # ENOSPC, EDQUOT (Linux)


def is_disk_full(exc: BaseException) -> bool:
    """True if `exc` is an OSError saying the file system is full (ENOSPC) or the user over quota (EDQUOT)."""
    return isinstance(exc, OSError) and exc.errno in _FULL


class TimedOut(Exception):
    """Mixed into the errors of a run ended by a time limit (a decision, the simulator's silence, the run's
    wall clock, the loading of a policy): the CLI prints the one line and exits with `EXIT_TIMEOUT`."""


class InputError(Exception):
    """Bad input (workload, platform, option).

    str(err) is one line: ``FILE: ITEM: REASON``. The CLI prints it and exits with status 2.
    """

    def __init__(self, source: str, item: str, reason: str):
        self.source, self.item, self.reason = str(source), str(item), str(reason)
        super().__init__(f"{self.source}: {self.item}: {self.reason}")

    def __reduce__(self):   # pickled by its three parts (a run's child reports it to the parent)
        return (type(self), (self.source, self.item, self.reason))


def simgrid_missing() -> InputError:
    """The error of a simulation asked of a Python that cannot import SimGrid's bindings (module ``simgrid``):
    one line naming this Python and the fix (docs/deployment.md §1: Debian's ``python3-simgrid`` and a virtual
    environment made from Debian's Python with its packages)."""
    import sys
    return InputError(sys.executable, "simgrid",
                      "SimGrid's Python bindings are not importable from this Python: install Debian's "
                      "python3-simgrid (apt install python3-simgrid) and make the virtual environment from "
                      "Debian's Python with its packages: /usr/bin/python3 -m venv --system-site-packages .venv "
                      "(docs/deployment.md)")


def require_simgrid() -> None:
    """Raise `simgrid_missing` unless module ``simgrid`` can be found (looked up, not imported: called before a
    run makes any output)."""
    import importlib.util
    if importlib.util.find_spec("simgrid") is None:
        raise simgrid_missing()


class InfeasibleSchedule(Exception):
    """A run's schedule failed its audit (`burstbuffer.audit`, docs/audit.md): its outputs are written, its
    result is not reported. str(err) is one line; the CLI prints it and exits with status 1."""
