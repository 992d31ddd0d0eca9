"""The child of `burstbuffer run`, ``python -m burstbuffer.colocated`` (`burstbuffer.colocated`): the scheduler
and the simulator in this process (the in-simulator link), or the scheduler here and the simulator over pipes."""
from __future__ import annotations

import argparse
import base64
import logging
import pickle
import signal
import sys
import time

from ..signals import SIGNALS
from .call import CallTransport
from .frames import Outcome, StartedPage, portable
from .launch import load_spec
from .pipes import pipes_main
from .reporting import JobsMirror, Relay, Reporter


def main(argv: list[str] | None = None) -> int:
    """The child (`burstbuffer.colocated`). Exit status: the simulator's (0, 2 bad input, 1 stopped), 1 if the
    scheduler ended the simulation."""
    ap = argparse.ArgumentParser(prog="python -m burstbuffer.colocated",
                                 description="The child of `burstbuffer run`: the scheduler beside the simulator.")
    ap.add_argument("--report-fd", type=int, required=True)
    ap.add_argument("--page-fd", type=int, required=True)
    ap.add_argument("--session", required=True)
    ap.add_argument("simulator", nargs=argparse.REMAINDER)
    ns = ap.parse_args(argv)
    signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)     # looked for at every message (CallTransport)
    reporter = Reporter(ns.report_fd)
    log = logging.getLogger("burstbuffer")
    log.addHandler(Relay(reporter))
    log.propagate = False
    from ..logs import setup  # noqa: PLC0415
    setup()                   # the parent's --log-level: records also in simulator.log (this process's stderr)
    args = pickle.loads(base64.b64decode(ns.session))
    check_protocol, timeout, run_timeout = args.pop("check_protocol"), args.pop("timeout"), args.pop("run_timeout")
    link = args.pop("link", "in-simulator")
    sys.path += [p for p in args.pop("sys_path") if p not in sys.path]   # the parent's: its policies' modules
    if link == "pipes":
        return pipes_main(args, ns.simulator, reporter, StartedPage(ns.page_fd), check_protocol=check_protocol,
                           timeout=timeout, run_timeout=run_timeout)
    from ..affinity import one_blas_thread  # noqa: PLC0415
    from ..session import SchedulerSession  # noqa: PLC0415
    from ..simulator import cli  # noqa: PLC0415

    one_blas_thread()
    outcome = Outcome()
    page = StartedPage(ns.page_fd)
    rc = 1
    try:
        args["spec"] = load_spec(args["spec"])
        session = SchedulerSession(**args, progress=False, on_progress=reporter.progress)
        session.app.decision_timeout = timeout
        deadline = None if run_timeout is None else time.monotonic() + run_timeout
        mirror = JobsMirror(session)
        transport = CallTransport(session, check_protocol=check_protocol, deadline=deadline,
                                  run_timeout=run_timeout, reporter=reporter, page=page, mirror=mirror)

        def stuck(line: str) -> None:      # the watchdog's thread; the main one is stuck in the policy's C code
            frame = mirror.frame(force=True)
            if frame is not None:
                reporter.send(*frame)
            reporter.send("stuck", line)

        from ..guards import on_stuck  # noqa: PLC0415
        on_stuck(stuck)
        sim_args = ns.simulator[1:] if ns.simulator[:1] == ["--"] else ns.simulator
        try:
            rc = cli.run_args(cli.parse_args(sim_args), transport=transport)
        finally:
            outcome.messages, outcome.scheduler_cpu = transport.exchange.n, transport.cpu
            outcome.error = transport.failure
            session.finish(tables=False)        # bb_occupancy.csv and the summary: the parent's (pandas)
            reporter.flush()
            outcome.sizes, outcome.written = session.sizes(), True
    except BaseException as exc:  # noqa: BLE001 (reported to the parent, which raises it)
        outcome.error = outcome.error or exc
    if outcome.error is not None:
        outcome.error = portable(outcome.error)
        rc = rc or 1
    reporter.send("end", outcome)
    return rc
