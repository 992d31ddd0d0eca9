"""``python -m burstbuffer.simulator``: same options as ``burstbuffer simulate`` (see cli.py).

The process ends with `os._exit` once `main` has returned: the simulation's files are closed and its
ZeroMQ context terminated by then, the standard streams are flushed here, and what the interpreter's own
shut-down would add — tearing down every module, a last garbage collection, the C++ libraries' static
destructors — is work for a process about to vanish (about 8 % of a one-job run's instructions,
docs/startup.md). An exception out of `main` still ends the process as usual (traceback, status 1)."""
import os
import sys

from .cli import main

status = main()
for stream in (sys.stdout, sys.stderr):
    try:
        stream.flush()
    except (OSError, ValueError):   # as the interpreter's shut-down reports an unflushable stdout
        status = status or 120
os._exit(status)
