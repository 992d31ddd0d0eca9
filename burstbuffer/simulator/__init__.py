"""The embedded Batsim-compatible simulator (docs/protocol.md, docs/platform.md): the Batsim side of protocol v4 on
SimGrid 3.32, run as its own process.

Start the scheduler first (it binds a ZeroMQ REP socket), then the simulator, which connects to it::

    python -m burstbuffer.simulator -p platforms/dragonfly96.xml -w workloads/kth-1000.json \
        -e out/run --enable-dynamic-jobs --enable-profile-reuse -s tcp://127.0.0.1:28000 -q

From Python, `command(...)` builds that command line and `spawn(...)` starts it (subprocess.Popen).
Modules: `cli` (options); `server` (`Simulator`: reads the inputs, starts SimGrid, runs, writes the outputs)
around one `state.SimState` shared by `loop` (the event loop and the exchange with the scheduler), `handlers`
(the scheduler's requests) and `execution` (the jobs as SimGrid activities); `platform_loader` (a platform
read by `burstbuffer.platforms.simgrid_xml` → SimGrid), `workload` (jobs and profiles), `protocol` (wire
format), `outputs` (jobs.csv, schedule.csv), `events` (Batsim's external events), `batexec` (``--no-sched``),
`energy` (``-E``). The simulator imports `burstbuffer.platforms`, never the reverse.
This package imports SimGrid only when a simulation runs.
"""
from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence

# socket and subprocess are imported where used: ``python -m burstbuffer.simulator`` imports this package
# and needs neither (docs/startup.md)


def command(platform: str, workloads: str | Sequence[str], *, export_prefix: str = "out",
            socket_endpoint: str = "tcp://localhost:28000", roles: Iterable[str] = (),
            dynamic_jobs: bool = False, profile_reuse: bool = False, ack_dynamic_jobs: bool = False,
            forward_profiles: bool = False, quiet: bool = True, timeout: float | None = None,
            python: str | None = None, network_model: str = "exact", core: str | None = None,
            energy: bool = False, schedule_trace: bool = False, audit: bool = True) -> list[str]:
    """The argv that runs the simulator as a subprocess (``python -m burstbuffer.simulator ...``).

    `roles`: ``"HOSTS:ROLE"`` strings (Batsim's -r); `timeout`: seconds to wait for each scheduler answer
    (None: forever, like Batsim); `python`: interpreter (default: this one); `network_model`: ``--network-model``
    (given only when not "exact", docs/io-model.md §5); `core`: ``--core`` (auto, actors, bridged;
    docs/simulator-core.md), not given when None; `energy`: ``-E`` (Batsim's energy, docs/batsim.md);
    `schedule_trace`: write Batsim's Pajé trace PREFIX_schedule.trace (else ``--disable-schedule-tracing``);
    `audit`: audit PREFIX_jobs.csv after the run (else ``--no-audit``; docs/audit.md).
    """
    argv = [python or sys.executable, "-m", "burstbuffer.simulator", "-p", str(platform)]
    for w in [workloads] if isinstance(workloads, str) else list(workloads):
        argv += ["-w", str(w)]
    argv += ["-e", str(export_prefix), "-s", socket_endpoint]
    for r in roles:
        argv += ["-r", r]
    if dynamic_jobs:
        argv.append("--enable-dynamic-jobs")
    if profile_reuse:
        argv.append("--enable-profile-reuse")
    if ack_dynamic_jobs:
        argv.append("--acknowledge-dynamic-jobs")
    if forward_profiles:
        argv.append("--forward-profiles-on-submission")
    if timeout is not None:
        argv += ["--timeout", repr(float(timeout))]
    if network_model != "exact":
        argv += ["--network-model", network_model]
    if core is not None:
        argv += ["--core", core]
    if energy:
        argv.append("-E")
    if not schedule_trace:
        argv.append("--disable-schedule-tracing")
    if not audit:
        argv.append("--no-audit")
    if quiet:
        argv.append("-q")
    return argv


def spawn(platform: str, workloads: str | Sequence[str], **kwargs) -> "subprocess.Popen":
    """Start the simulator (`command` keywords; other keywords go to subprocess.Popen, e.g. stderr=PIPE).
    The scheduler must already listen on `socket_endpoint`. Exit status: 0 done, 2 bad input, 1 protocol
    violation or deadlock (one line on stderr)."""
    import subprocess  # noqa: PLC0415

    popen_keys = {"stdout", "stderr", "cwd", "env", "text"}
    popen = {k: kwargs.pop(k) for k in list(kwargs) if k in popen_keys}
    return subprocess.Popen(command(platform, workloads, **kwargs), **popen)


def free_tcp_endpoint(host: str = "127.0.0.1") -> str:
    """A ``tcp://HOST:PORT`` endpoint on a port that was free a moment ago (for a scheduler to bind)."""
    import socket  # noqa: PLC0415

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return f"tcp://{host}:{s.getsockname()[1]}"
