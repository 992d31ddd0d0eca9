"""Any burstbuffer policy under pybatsim 3.2.1's own launcher (Batsim's Python scheduler framework).

From the repository root (pybatsim loads a scheduler *file* and takes the class named after it, ``Pybatsim``)::

    pybatsim burstbuffer/pybatsim.py -s tcp://*:28000 -t 600000 -o '{"policy": "sjf-bb", "model": "alloc-only"}'

or, wherever burstbuffer is installed, ``pybatsim burstbuffer.pybatsim -o '…'`` (pybatsim reads a name with a
dot as a file name and loads the module ``burstbuffer``, class ``Burstbuffer``, which builds this class).
Then start Batsim (or ``burstbuffer simulate``) against that socket, e.g. the command ``burstbuffer serve``
prints for the same policy.

Options (the JSON object of ``-o`` / ``-O FILE``): ``policy`` (a name, ``MODULE:CLASS`` or ``FILE.py:CLASS``;
default ``sjf-bb``), ``model`` (``io-aware`` — the default — or ``alloc-only``), ``seed`` (0), ``bb_capacity``
(e.g. ``"40GB"``, for a platform whose resources do not carry it), ``policy_options`` (an object of the
policy's options), ``output`` (folder of jobs.csv, default ``out/pybatsim-POLICY``), ``timeout`` (seconds of
Batsim silence before giving up, default 600; pybatsim's own ``-t`` [ms] is how often it checks). An unknown
option or policy: one line on stderr, exit status 2.

How it works: pybatsim decodes Batsim's messages and calls this `BatsimScheduler`'s callbacks
(onSimulationBegins, onJobSubmission, onJobCompletion, onJobsKilled, onRequestedCall, onNoMoreJobsInWorkloads,
onNoMoreEvents, onSimulationEnds); each becomes the event our `burstbuffer.app.SchedulerApp` handles under
`burstbuffer serve`, and its decisions go back through pybatsim's calls (execute_job with ``storage_mapping``,
reject_jobs_by_id, kill_jobs, wake_me_up_at, register_profiles, register_job, notify_registration_finished).
So the schedule is the one `burstbuffer serve` makes with the same policy, seed and model (tested,
tests/test_pybatsim_adapter.py). What pybatsim 3.2.1 does not give: per-event timestamps (every event of a
message is taken at the message's ``now``, as Batsim sends them; a completion at its ``finish_time``), and
the raw SIMULATION_BEGINS (rebuilt from what pybatsim keeps: resources, their properties, config, profiles);
the io-aware model works because pybatsim lets a scheduler register profiles and jobs and pass a
``storage_mapping`` (docs/protocol.md); acknowledged dynamic jobs (``--ack-dynamic-jobs``) are not supported.
"""
from __future__ import annotations

import logging
import math
import sys
import time
from pathlib import Path

from batsim.batsim import BatsimScheduler

from .batsim.loop import Outbox
from .batsim.protocol import (CallMeLater, ExecuteJob, JobCompleted, JobKilled, JobSubmitted, KillJob, Notify,
                              NotifyBatsim, RegisterJob, RegisterProfile, RejectJob, RequestedCall, SetJobMetadata,
                              SimulationBegins)
from .errors import InputError

__all__ = ["Pybatsim", "OPTIONS"]

#: the options of ``-o`` and their defaults
OPTIONS = {"policy": "sjf-bb", "model": "io-aware", "seed": 0, "bb_capacity": None, "policy_options": {},
           "output": None, "timeout": 600.0}


def _fail(message: str):
    print(f"burstbuffer pybatsim: {message}", file=sys.stderr)
    sys.exit(2)


class Pybatsim(BatsimScheduler):
    """A burstbuffer policy as a pybatsim `BatsimScheduler` (see the module docstring).

    Args:
        options: pybatsim's ``-o`` JSON object (`OPTIONS`). Bad options end the process with one line on
            stderr and exit status 2 (before pybatsim binds its socket).
    """

    def __init__(self, options: dict | None = None):
        super().__init__(dict(options or {}))
        try:
            self._setup(self.options)
        except InputError as exc:
            _fail(str(exc))

    def _setup(self, opts: dict) -> None:
        from .app import SchedulerApp
        from .spec import make_spec

        if not isinstance(opts, dict):
            raise InputError("-o", str(opts), "expected a JSON object")
        unknown = sorted(set(opts) - set(OPTIONS))
        if unknown:
            raise InputError("-o", ", ".join(unknown), f"unknown option (known: {', '.join(OPTIONS)})")
        o = {**OPTIONS, **opts}
        seed, popts = o["seed"], o["policy_options"] or {}
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise InputError("-o", f"seed={seed!r}", "expected an integer >= 0")
        if not isinstance(popts, dict):
            raise InputError("-o", f"policy_options={popts!r}", "expected a JSON object")
        # the policy resolved, its options and the job model checked, once (`burstbuffer.spec`)
        self.spec = make_spec(str(o["policy"]), options=popts, job_model=str(o["model"]), seed=seed)
        try:
            self.timeout = float(o["timeout"])
        except (TypeError, ValueError):
            raise InputError("-o", f"timeout={o['timeout']!r}", "expected a number of seconds") from None
        self.output = Path(o["output"] or Path("out") / f"pybatsim-{self.spec.label}")
        self.app = SchedulerApp(self.spec.build, self.spec.make_job_model(),
                                bb_capacity=o["bb_capacity"])
        self.out: Outbox | None = None
        self.ended = False
        self._last_message = time.monotonic()

    # ------------------------------------------------------------------ pybatsim callbacks → events
    def _event(self, ev, ts: float | None = None) -> None:
        self.app.on_event(self.bs.time() if ts is None else ts, ev, self.out)

    def onBeforeEvents(self):
        self._last_message = time.monotonic()
        self.out = Outbox(self.bs.time())

    def onSimulationBegins(self):
        bs = self.bs
        data = {"nb_resources": bs.nb_resources, "nb_compute_resources": bs.nb_compute_resources,
                "nb_storage_resources": bs.nb_storage_resources,
                "compute_resources": list(bs.compute_resources.values()),
                "storage_resources": list(bs.storage_resources.values()), "config": bs.batconf,
                "profiles": bs.profiles, "workloads": bs.workloads,
                "allow_compute_sharing": bs.allow_compute_sharing, "allow_storage_sharing": bs.allow_storage_sharing}
        self._event(SimulationBegins(data))

    def onJobSubmission(self, job):
        self._event(JobSubmitted(job.id, job.json_dict, job.profile_dict))

    def onJobCompletion(self, job):
        state = job.job_state.name if job.job_state is not None else "UNKNOWN"
        self._event(JobCompleted(job.id, state, job.return_code or 0), job.finish_time)

    def onJobsKilled(self, jobs):
        self._event(JobKilled([j.id for j in jobs]))

    def onRequestedCall(self):
        self._event(RequestedCall())

    def onNoMoreJobsInWorkloads(self):
        self._event(Notify("no_more_static_job_to_submit"))

    def onNoMoreExternalEvents(self):
        pass

    def onSimulationEnds(self):
        self.ended = True
        self.output.mkdir(parents=True, exist_ok=True)
        self.app.write_jobs_csv(str(self.output / "jobs.csv"))
        print(f"burstbuffer pybatsim: policy {self.spec.label}, {len(self.app.records)} jobs; "
              f"jobs.csv in {self.output}", flush=True)

    def onDeadlock(self):
        """pybatsim's receive timed out (its ``-t``): wait on unless Batsim stayed silent `timeout` seconds."""
        if time.monotonic() - self._last_message > self.timeout:
            raise RuntimeError(f"burstbuffer pybatsim: no message from Batsim for {self.timeout:g} s")

    # ------------------------------------------------------------------ decisions → pybatsim calls
    def onNoMoreEvents(self):
        if self.ended:
            return
        bs, out = self.bs, self.out
        self.app.after_events(out.received_now, out)
        for ts, d in out.decisions():     # the sub-jobs' decisions read back from their text
            if ts > bs.time():
                bs.consume_time(ts - bs.time())
            if isinstance(d, ExecuteJob):
                job = bs.jobs[d.job_id]
                job.allocation = d.alloc
                if d.storage_mapping:
                    job.storage_mapping = d.storage_mapping
                if d.mapping:
                    job.mapping = d.mapping
                bs.execute_job(job)
            elif isinstance(d, RejectJob):
                bs.reject_jobs_by_id([d.job_id])
            elif isinstance(d, KillJob):
                bs.kill_jobs([bs.jobs[i] for i in d.job_ids])
            elif isinstance(d, CallMeLater):
                bs.wake_me_up_at(d.at)
            elif isinstance(d, RegisterProfile):
                bs.register_profiles(d.workload_name, {d.profile_name: d.profile})
            elif isinstance(d, RegisterJob):
                j = d.job
                bs.register_job(d.job_id, j["res"], j.get("walltime", -1), j["profile"], j.get("subtime"))
            elif isinstance(d, NotifyBatsim) and d.type == "registration_finished":
                bs.notify_registration_finished()
            elif isinstance(d, SetJobMetadata):
                bs.set_job_metadata(d.job_id, d.metadata)
            else:  # pragma: no cover - a decision type the app does not make today
                logging.getLogger("burstbuffer").warning("pybatsim adapter: cannot send %r", d)
        if not math.isclose(bs.time(), out.now) and out.now > bs.time():
            bs.consume_time(out.now - bs.time())
