"""The child's reports to its parent (`burstbuffer.colocated`): the report pipe (`Reporter`), the rows of
jobs.csv (`JobsMirror`), the ``burstbuffer`` logger's records (`Relay`)."""
from __future__ import annotations

import itertools
import logging
import pickle
import time

from .. import pipelink
from .frames import ALIVE_PERIOD, MIRROR_PERIOD, PROGRESS_PERIOD, REPORT_PERIOD


class Reporter:
    """The child's side of the report pipe (`burstbuffer.colocated`)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.sent_at = time.monotonic()
        self.progress_at = 0.0
        self.pending: tuple | None = None

    def send(self, *frame) -> None:
        try:
            pipelink.write_frame(self.fd, pickle.dumps(frame))
        except BrokenPipeError:          # the parent is gone: the run's outputs are still written
            pass
        self.sent_at = time.monotonic()

    def progress(self, done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - self.progress_at >= PROGRESS_PERIOD:
            self.progress_at = now
            self.pending = None
            self.send("progress", done, total)
        else:
            self.pending = ("progress", done, total)

    def tick(self) -> None:
        """At every message: a frame if none was sent for `ALIVE_PERIOD` s."""
        if time.monotonic() - self.sent_at >= ALIVE_PERIOD:
            if self.pending is not None:
                self.send(*self.pending)
                self.pending = None
            else:
                self.send("alive")

    def flush(self) -> None:
        if self.pending is not None:
            self.send(*self.pending)
            self.pending = None


class JobsMirror:
    """The child's side of the parent's copy of jobs.csv: `frame()` is the ``jobs`` frame of the records of
    `session`'s application changed since the last one, or None if nothing changed. Every record is looked at
    once the last full frame is `MIRROR_PERIOD` s old (or with `force`); in between, at most every
    `REPORT_PERIOD` s, only the jobs submitted, started (`SchedulerApp.last_started`) or ended
    (`SchedulerApp.ended_ids`) since: the parent has every job seen, and every finished one, within
    `REPORT_PERIOD` s, whenever the child dies."""

    def __init__(self, session):
        self.session, self.app = session, session.app
        self.seen: dict[str, tuple] = {}
        self.at = 0.0
        self.info = None
        self.n_ended = self.n_records = 0     # app.ended_ids and app.records already reported
        self.started = None                   # app.last_started already reported
        self.partial_at = 0.0

    def _changed(self, jid: str, rec, rows: list) -> None:
        key = (rec.start, rec.end, rec.state, rec.reason, rec.wait_reason, rec.nodes_start, rec.nodes_end,
               rec.staged_at)
        if self.seen.get(jid) != key:
            self.seen[jid] = key
            rows.append(((rec.job.subtime, jid), self.app.job_row(rec, True)))

    def frame(self, force: bool = False) -> tuple | None:
        now = time.monotonic()
        app, rows = self.app, []
        ended = app.ended_ids
        records = app.records
        if not force and now - self.at < MIRROR_PERIOD:
            started = app.last_started
            if self.info is None or now - self.partial_at < REPORT_PERIOD or (
                    len(ended) == self.n_ended and len(records) == self.n_records and started is self.started):
                return None
            self.partial_at = now
            for jid in ended[self.n_ended:]:
                self._changed(jid, records[jid], rows)
            for jid in itertools.islice(records, self.n_records, None):
                self._changed(jid, records[jid], rows)
            if started is not self.started:
                for jid in started:
                    if jid in records:
                        self._changed(jid, records[jid], rows)
            self.n_ended, self.n_records, self.started = len(ended), len(records), started
            return ("jobs", app.jobs_csv_columns(), rows, None, self.session.sizes()) if rows else None
        self.at = now
        self.n_ended, self.n_records, self.started = len(ended), len(records), app.last_started
        for jid, rec in app.records.items():
            self._changed(jid, rec, rows)
        info = None
        if self.info is None and app.platform is not None:
            from ..metrics.runinfo import run_info  # noqa: PLC0415
            info = self.info = run_info(app.platform, self.session.spec.text, self.session.spec.job_model)
        if not rows and info is None:
            return None
        return ("jobs", app.jobs_csv_columns(), rows, info, self.session.sizes())


class Relay(logging.Handler):
    """The ``burstbuffer`` logger's records, sent to the parent."""

    def __init__(self, reporter: Reporter):
        super().__init__()
        self.reporter = reporter

    def emit(self, record: logging.LogRecord) -> None:
        self.reporter.send("log", record.levelno, record.getMessage())
