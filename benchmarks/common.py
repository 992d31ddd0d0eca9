"""Shared by the benchmark scripts: a one-line description of the machine they ran on."""
from __future__ import annotations

import os
import platform


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def machine() -> str:
    """e.g. "2 cores, AMD EPYC, Python 3.11.2"."""
    return f"{os.cpu_count()} cores, {cpu_model()}, Python {platform.python_version()}"


def load_average() -> str:
    """The machine's 1, 5 and 15 min load averages, as printed beside a benchmark's figures."""
    import os
    return " ".join(f"{x:.2f}" for x in os.getloadavg())
