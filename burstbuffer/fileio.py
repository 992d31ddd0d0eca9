"""Reading input files within bounds, writing output files without ever leaving one half-written.

Every input file the commands read goes through `open_input` / `read_input` (docs/reliability.md §5): a
regular file only (a FIFO, a device such as /dev/zero, a folder is refused before a byte is read), at most
`MAX_INPUT_BYTES` (or the caller's smaller limit).
"""
from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat
from pathlib import Path

from .errors import InputError, is_disk_full
from .jsonvalues import excerpt


#: The largest input file read [bytes] (a workload, a trace, a platform): 1 GiB.
MAX_INPUT_BYTES = 1 << 30
#: The largest small configuration file read (a queue file, a campaign, a cluster config) [bytes]: 16 MiB.
MAX_CONFIG_BYTES = 1 << 24


def open_input(path: str | Path, item: str, *, limit: int = MAX_INPUT_BYTES):
    """`path` opened for reading (binary, a file object) once it is known to be a readable regular file of
    at most `limit` bytes. The file is opened without blocking (a FIFO does not hang the open) and checked
    on the open descriptor, so what is checked is what is read.

    Raises InputError(path, `item`, reason): "file not found", "is a folder, not a file", "not a regular
    file", "larger than N bytes", or the OS's reason (e.g. "Permission denied").
    """
    p = str(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError(p, item, "file not found") from None
    except IsADirectoryError:
        raise InputError(p, item, "is a folder, not a file") from None
    except OSError as exc:
        raise InputError(p, item, exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(p, item, "is a folder, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise InputError(p, item, "not a regular file")
        if st.st_size > limit:
            raise InputError(p, item, f"larger than {limit} bytes ({st.st_size} bytes)")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def check_input(path: str | Path, item: str, *, limit: int = MAX_INPUT_BYTES) -> Path:
    """`path` as a Path if `open_input` would open it (the same InputError otherwise); nothing is read."""
    open_input(path, item, limit=limit).close()
    return Path(path)


def read_input(path: str | Path, item: str, *, limit: int = MAX_INPUT_BYTES, text: bool = True,
               errors: str = "strict") -> str | bytes:
    """The whole content of the input file `path` (checked by `open_input`, at most `limit` bytes even if
    it grows while read): a str (UTF-8, `errors` as for `bytes.decode`) or, with `text=False`, bytes.
    Raises InputError(path, `item`, reason), also for text that is not UTF-8 ("not UTF-8 text: …")."""
    with open_input(path, item, limit=limit) as f:
        try:
            data = f.read(limit + 1)
        except OSError as exc:
            raise InputError(str(path), item, exc.strerror or str(exc)) from None
    if len(data) > limit:
        raise InputError(str(path), item, f"larger than {limit} bytes")
    if not text:
        return data
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        raise InputError(str(path), item, f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None


def check_ipc_endpoint(endpoint: str, item: str) -> None:
    """Refuse a ZeroMQ ``ipc://PATH`` endpoint whose PATH exists and is not a Unix socket (binding there
    would delete that file and put a socket in its place; ZeroMQ does so without asking). Any other
    endpoint, or a PATH that is absent or a socket (left by an earlier run), passes. Raises
    InputError(`item`, endpoint, "PATH exists and is not a socket: …")."""
    if not endpoint.startswith("ipc://"):
        return
    path = endpoint[len("ipc://"):]
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(item, endpoint, f"cannot check {path} ({exc.strerror or exc})") from None
    if not stat.S_ISSOCK(st.st_mode):
        raise InputError(item, endpoint, f"{path} exists and is not a socket: refusing to replace it "
                                         "(give a path that does not exist)")


def open_output(path: str | Path, mode: str = "w", **kwargs):
    """`path` opened for writing (`mode` "w" or "wb", `kwargs` as for `open`), created or truncated, never
    through a symbolic link (O_NOFOLLOW: a link there is refused, whatever it points to; docs/reliability.md
    §5). Raises InputError(path, "output file", "is a symbolic link: …") for a link, OSError otherwise."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(str(path), "output file", LINK_REFUSED) from None
        raise
    return os.fdopen(fd, mode, **kwargs)


@contextlib.contextmanager
def removing_on_error(path: str | Path):
    """Within the block, the file `path` (a temporary output) is removed if anything is raised (a full
    disk, an interruption): no half-written temporary file is left behind."""
    try:
        yield
    except BaseException:
        try:
            os.unlink(path)
        except OSError:
            pass
        raise


#: why an output is not written through a symbolic link
LINK_REFUSED = ("is a symbolic link: outputs are never written through one (remove it, or give another "
                "--output)")


def refuse_links(folder: str | Path, item: str = "--output") -> None:
    """Refuse an output folder holding a symbolic link: a run writes its files there (jobs.csv, run.json,
    simulator.log, batsim_*.csv, a policy's own files, their temporary files) and never through a link, which
    could point anywhere. Raises InputError(link, `item`, `LINK_REFUSED`) for the first link found."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.is_symlink():
            raise InputError(excerpt(entry.path, 200), item, LINK_REFUSED)


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write `text` to `path` atomically: a temporary file in the same folder (usual permissions),
    fsync, then rename over `path`. Creates the folder. Returns the path.

    Raises InputError(path, "file", reason) if it cannot be written; no temporary file is left.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        import tempfile  # noqa: PLC0415  (not at import: the simulator reads workloads through this package)

        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise InputError(str(path), "file", exc.strerror or str(exc)) from None
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)       # mkstemp makes 0600; give the usual permissions
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError) and not is_disk_full(exc):     # a full disk is not bad input (EXIT_DISK_FULL)
            raise InputError(str(path), "file", exc.strerror or str(exc)) from None
        raise
    return path


def read_toml(path: str | Path, item: str) -> dict:
    """The TOML file `path` as a dict (read by `read_input`, at most `MAX_CONFIG_BYTES`). Raises
    InputError(path, `item`, reason) when it cannot be read (`open_input`'s reasons) or is not TOML
    ("bad TOML: …")."""
    import tomllib
    p = Path(path)
    try:
        return tomllib.loads(read_input(p, item, limit=MAX_CONFIG_BYTES))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(str(p), item, f"bad TOML: {exc}") from None
    except RecursionError:
        raise InputError(str(p), item, "bad TOML: nested too deeply") from None


class OutputLock:
    """One writer per output folder: an exclusive `flock` on the folder itself (no lock file is created;
    the lock goes with the process, even killed outright). A context manager: `OutputLock(path)` is entered
    once `output_dir` made the folder. Raises InputError(path, `item`, "in use by another run …") when
    another process holds it."""

    def __init__(self, path: str | Path, item: str = "--output"):
        self.path, self.item, self.fd = Path(path), item, None

    def __enter__(self) -> OutputLock:
        import fcntl  # noqa: PLC0415
        fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise InputError(str(self.path), self.item, "in use by another run (one run per output folder at "
                                                        "a time: wait for it, or give another --output)") from None
        except OSError:
            os.close(fd)
            raise
        self.fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)          # releases the lock
            self.fd = None

    __del__ = __exit__


def holding_output_lock(command):
    """`command(args)` (a subcommand writing into ``args.output``) run while this process holds `OutputLock` on
    that folder (made by `output_dir`): a second command on the same folder is one line, exit 2, before it
    writes anything (docs/reliability.md §5). The command's own call of `output_dir` finds the folder made."""
    @functools.wraps(command)
    def locked(args):
        with OutputLock(output_dir(args.output)):
            return command(args)
    return locked


def output_dir(path: str | Path, item: str = "--output") -> Path:
    """The folder `path`, created if missing (with its parents), and known to be writable (a file is
    created in it and removed: a read-only folder or file system is found before a run, not after).
    Raises InputError(path, `item`, reason) when it cannot be: an existing file there ("exists and is not
    a folder"), "cannot create the folder (…)", "cannot write in the folder (…)"."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        st = None
    except OSError as exc:           # e.g. a name longer than the file system's limit (ENAMETOOLONG)
        raise InputError(excerpt(str(p), 200), item, f"cannot use the folder ({exc.strerror or exc})") from None
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise InputError(str(p), item, "exists and is not a folder")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(excerpt(str(p), 200), item, f"cannot create the folder ({exc.strerror or exc})") from None
    try:
        import tempfile  # noqa: PLC0415
        fd, probe = tempfile.mkstemp(prefix=".write-probe.", dir=p)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(str(p), item, f"cannot write in the folder ({exc.strerror or exc})") from None
    return p
