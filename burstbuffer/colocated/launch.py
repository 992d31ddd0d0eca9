"""The child of `burstbuffer run` started and ended (`burstbuffer.colocated`): its command line with the
run's spec (`child_command`, `load_spec`), its stop, its failure reported in one line (`simulator_failed`)."""
from __future__ import annotations

import base64
import pickle
import signal
import sys

from ..batsim.loop import BatsimDied


def spec_blob(spec) -> bytes:
    """`spec` pickled; a spec whose policy class cannot be pickled (a class made with ``type()``, whose name is
    not where its module holds it) travels as the ``--policy`` text it was resolved from and its other fields,
    and the child resolves the text again (`load_spec`)."""
    try:
        return pickle.dumps(spec)
    except Exception:  # noqa: BLE001 (pickle raises PicklingError, AttributeError, TypeError...)
        from dataclasses import astuple  # noqa: PLC0415
        return pickle.dumps(("resolve", spec.text, *astuple(spec)[1:]))


def load_spec(blob: bytes):
    """The child's `SchedulerSpec` from `spec_blob`'s bytes."""
    spec = pickle.loads(blob)
    if isinstance(spec, tuple) and spec[:1] == ("resolve",):
        from ..schedulers.resolve import policy_info  # noqa: PLC0415
        from ..spec import SchedulerSpec  # noqa: PLC0415
        spec = SchedulerSpec(policy_info(spec[1]).policy, *spec[2:])
    return spec


def child_command(session_args: dict, simulator_argv: list[str], report_fd: int, page_fd: int) -> list[str]:
    """The child's argv: ``python -m burstbuffer.colocated`` with `session_args` (`SchedulerSession`'s arguments:
    spec, output and its keyword arguments, plus check_protocol, timeout, run_timeout and sys_path, the parent's module search path) and the
    simulator's options (`simulator_argv`, as `simulator.command` gives them past ``python -m
    burstbuffer.simulator``). Raises pickle's error if an argument cannot be pickled."""
    # the spec pickled apart: its policy class may live in a module of the parent's search path, which the child
    # adds before it unpickles the spec
    args = {**session_args, "spec": spec_blob(session_args["spec"])}
    blob = base64.b64encode(pickle.dumps(args)).decode()
    return [sys.executable, "-m", "burstbuffer.colocated", "--report-fd", str(report_fd), "--page-fd",
            str(page_fd), "--session", blob, "--", *simulator_argv]


def stop_process(proc) -> None:
    """SIGTERM to `proc`, SIGKILL if it has not ended 10 s later."""
    import subprocess  # noqa: PLC0415
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def simulator_failed(rc: int, log_path, started: list[str] | None = None, who: str = "simulator") -> None:
    """Raise the simulator's own one-line error: InputError for bad input (status 2), else BatsimDied.

    A simulator killed by a signal (negative `rc`, e.g. SimGrid's abort on an error of its own) is reported
    with SimGrid's CRITICAL line from `log_path` and the jobs `started` by the scheduler's last answer (the
    ones SimGrid was setting up), instead of the last line of a C++ backtrace."""
    lines = [ln for ln in log_path.read_text(errors="replace").strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else "(no output)"
    if rc == 2:
        from ..errors import InputError  # noqa: PLC0415
        msg = last.split("error: ", 1)[1] if "error: " in last else last
        parts = msg.split(": ", 2)
        raise InputError(*parts) if len(parts) == 3 else InputError("simulator", "input", msg)
    if rc < 0:
        critical = next((ln for ln in lines if "/CRITICAL]" in ln), None)
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        jobs = f" while executing {', '.join(started)}" if started else ""
        if critical is None:
            raise BatsimDied(f"{who} was killed by {name}{jobs}: the run cannot go on (a crash in native code, "
                             "or a kill from outside); the jobs seen are in jobs.csv")
        what = critical.split("/CRITICAL]", 1)[1].strip()
        when = critical.split("]", 1)[0].lstrip("[") if critical.startswith("[") else "?"
        raise BatsimDied(f"simulator aborted ({name}) at t={when}{jobs}: SimGrid: {what}")
    raise BatsimDied(f"simulator exited with status {rc}: {last}")
