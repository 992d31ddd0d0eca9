"""Fuzzing: mutated workloads, SWF traces and Batsim messages never end in a traceback.

Each case starts from a valid input and changes a few of its fields to hostile values (negative, zero, huge,
NaN-like text, wrong types, missing, duplicated). The CLI must answer with exit status 0 or 2 (a one-line
error), never an uncaught exception; the scheduler must answer a Batsim message or raise its own
`ProtocolError`/`InputError`; a run that exits 0 has every job of its workload in jobs.csv exactly once.
Budgets are multiples of the Hypothesis profile's (tests/conftest.py): about a minute under `ci`.
"""
from __future__ import annotations

import contextlib
import copy
import csv
import io
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from burstbuffer.cli import main
from burstbuffer.errors import InputError
from burstbuffer.batsim.protocol import ProtocolError

from .conftest import KTH1000, ROOT, examples

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

def fuzz(weight: float) -> settings:
    """`examples(weight)` cases (100 x weight under the ci profile), derandomized (the same cases every run),
    no deadline."""
    return settings(max_examples=examples(weight), deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
                    database=None)

#: Hostile values for a JSON field.
JSON_VALUES = st.sampled_from([None, -1, 0, 1, -1.5, 1e300, -1e300, 2 ** 70, "", "x", "12", "nan", "inf", [], {},
                               [1], {"a": 1}, True, False, "-1", 0.5])
#: Hostile texts for an SWF field.
SWF_FIELDS = st.sampled_from(["-1", "0", "1", "-5", "nan", "inf", "1e400", "x", "", "3.5", "99999999999999999999",
                              "-0", "1,5", "٣"])


def _cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    out = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            rc = main(argv)
        except SystemExit as exc:          # argparse
            rc = exc.code if isinstance(exc.code, int) else 2
    return rc, err.getvalue()


def _base_workload(n: int = 12) -> dict:
    w = json.loads(KTH1000.read_text())
    jobs = w["jobs"][:n]
    return {"nb_res": w["nb_res"], "jobs": jobs, "profiles": {j["profile"]: w["profiles"][j["profile"]] for j in jobs}}


@st.composite
def mutated_workloads(draw, n: int = 12, max_changes: int = 3) -> dict:
    w = copy.deepcopy(_base_workload(n))
    for _ in range(draw(st.integers(1, max_changes))):
        where = draw(st.sampled_from(["job", "profile", "top", "dup", "drop-profile"]))
        jobs_ok = isinstance(w.get("jobs"), list) and w["jobs"] and all(isinstance(j, dict) for j in w["jobs"])
        profiles_ok = isinstance(w.get("profiles"), dict) and w["profiles"] and all(
            isinstance(p, dict) for p in w["profiles"].values())
        if where == "job" and jobs_ok:
            job = w["jobs"][draw(st.integers(0, len(w["jobs"]) - 1))]
            key = draw(st.sampled_from(["id", "subtime", "walltime", "res", "profile", "extra"]))
            if draw(st.booleans()):
                job[key] = draw(JSON_VALUES)
            else:
                job.pop(key, None)
        elif where == "profile" and profiles_ok:
            prof = w["profiles"][draw(st.sampled_from(sorted(w["profiles"])))]
            key = draw(st.sampled_from(sorted(prof) + ["bb", "type"]))
            if draw(st.booleans()):
                prof[key] = draw(JSON_VALUES)
            else:
                prof.pop(key, None)
        elif where == "top":
            w[draw(st.sampled_from(["nb_res", "jobs", "profiles"]))] = draw(JSON_VALUES)
        elif where == "dup" and jobs_ok:
            w["jobs"].append(copy.deepcopy(w["jobs"][0]))
        elif where == "drop-profile" and profiles_ok:
            w["profiles"].pop(draw(st.sampled_from(sorted(w["profiles"]))))
    return w


@fuzz(15)
@given(mutated_workloads())
def test_mutated_workloads_are_read_or_refused_in_one_line(w):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "w.json"
        path.write_text(json.dumps(w))
        rc, err = _cli(["workload", "split", str(path), "--parts", "2", "--output", str(Path(tmp) / "parts")])
    assert rc in (0, 2), err
    assert "Traceback" not in err
    if rc == 2:
        assert err.strip().count("\n") == 0 and err.startswith("burstbuffer")


_SWF_HEAD = """; Version: 2.2
; MaxNodes: 100
"""


def _base_swf() -> list[list[str]]:
    """The first 12 records of the KTH trace's shape (fields of the SWF standard)."""
    rows = []
    for i in range(12):
        rows.append([str(i + 1), str(1000 * i), "10", str(600 + 60 * i), str(1 + i % 8), "-1", "-1", str(1 + i % 8),
                     str(3600 + 600 * i), "-1", "1", "1", "1", "-1", "-1", "-1", "-1", "-1"])
    return rows


@st.composite
def mutated_swf(draw) -> str:
    rows = _base_swf()
    for _ in range(draw(st.integers(1, 4))):
        row = rows[draw(st.integers(0, len(rows) - 1))]
        what = draw(st.sampled_from(["field", "drop", "extra", "blank"]))
        if not row:
            row.append(draw(SWF_FIELDS))
        elif what == "field":
            row[draw(st.integers(0, len(row) - 1))] = draw(SWF_FIELDS)
        elif what == "drop" and len(row) > 1:
            row.pop(draw(st.integers(0, len(row) - 1)))
        elif what == "extra":
            row.append(draw(SWF_FIELDS))
        else:
            row.clear()
    return _SWF_HEAD + "\n".join(" ".join(r) for r in rows) + "\n"


@fuzz(15)
@given(mutated_swf())
def test_mutated_swf_traces_convert_or_are_refused_in_one_line(text):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.swf"
        path.write_text(text)
        out = Path(tmp) / "w.json"
        rc, err = _cli(["workload", "from-swf", str(path), "--output", str(out)])
        assert rc in (0, 2), err
        assert "Traceback" not in err
        if rc == 0:    # what was written reads back
            rc2, err2 = _cli(["workload", "split", str(out), "--parts", "1", "--output", str(Path(tmp) / "p")])
            assert rc2 == 0, err2


def _capture() -> list[str]:
    """Batsim → scheduler messages of the captured real Batsim 4.2.1 run (io-aware, 10 jobs)."""
    p = ROOT / "tests" / "data" / "batsim-4.2.1" / "protocol-full-run.jsonl"
    return [r["raw"] for r in map(json.loads, p.read_text().splitlines()) if r["dir"] == "batsim->scheduler"]


def _replay(messages: list[str], strict: bool) -> None:
    from burstbuffer.batsim.loop import run_loop
    from burstbuffer.session import SchedulerSession
    from burstbuffer.spec import make_spec

    class Transport:
        def __init__(self):
            self.pending = list(messages)

        def recv(self) -> bytes:
            if not self.pending:
                raise ProtocolError("no more messages")
            return self.pending.pop(0).encode()

        def send(self, raw: bytes) -> None:
            pass

    with tempfile.TemporaryDirectory() as tmp:
        s = SchedulerSession(make_spec("sjf-bb"), Path(tmp), progress=False, bb_capacity="40GB")
        s.app.strict_peer = strict
        with contextlib.redirect_stderr(io.StringIO()):
            run_loop(Transport(), s.app, strict=strict)
        s.app.write_jobs_csv(str(Path(tmp) / "jobs.csv"))


@st.composite
def mutated_exchanges(draw) -> list[str]:
    msgs = [json.loads(m) for m in _capture()]
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(msgs) - 1))
        msg = msgs[i]
        what = draw(st.sampled_from(["now", "event-field", "data-field", "drop-event", "dup-event", "type"]))
        evs = msg.get("events") or []
        if what == "now" or not evs:
            msg["now"] = draw(JSON_VALUES)
            continue
        ev = evs[draw(st.integers(0, len(evs) - 1))]
        if what == "event-field":
            ev[draw(st.sampled_from(["timestamp", "type", "data"]))] = draw(JSON_VALUES)
        elif what == "data-field" and isinstance(ev.get("data"), dict) and ev["data"]:
            ev["data"][draw(st.sampled_from(sorted(ev["data"])))] = draw(JSON_VALUES)
        elif what == "drop-event":
            evs.remove(ev)
        elif what == "dup-event":
            evs.append(copy.deepcopy(ev))
        else:
            ev["type"] = draw(st.sampled_from(["JOB_COMPLETED", "JOB_SUBMITTED", "JOB_KILLED", "NOTIFY", "BOGUS"]))
    return [json.dumps(m) for m in msgs]


@fuzz(4)
@given(mutated_exchanges(), st.booleans())
def test_mutated_batsim_messages_never_crash_the_scheduler(messages, strict):
    try:
        _replay(messages, strict)
    except (ProtocolError, InputError):
        pass


def test_the_unmutated_capture_replays_with_warnings_only():
    """The capture is the paper's scheduler's exchange: our sjf-bb answers differently, so Batsim's later
    completions name sub-jobs we never started — warnings when lenient, a protocol error when strict."""
    _replay(_capture(), False)
    with pytest.raises(ProtocolError, match="not executing"):
        _replay(_capture(), True)


@fuzz(0.15)
@given(mutated_workloads(n=8, max_changes=2), st.sampled_from(["io-aware", "alloc-only"]))
def test_mutated_workloads_run_end_to_end(w, model):
    """A whole run (scheduler + simulator): exit 0 with every job once in jobs.csv, or a one-line error."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "w.json"
        path.write_text(json.dumps(w))
        out = Path(tmp) / "out"
        rc, err = _cli(["run", "-q", "--cpu", "off", "--timeout", "60", "--model", model, "--workload", str(path),
                        "--output", str(out)])
        assert rc in (0, 2), err
        assert "Traceback" not in err
        if rc == 0:
            rows = list(csv.DictReader((out / "jobs.csv").open()))
            ids = [r["job_id"] for r in rows]
            assert len(ids) == len(set(ids)) == len(w["jobs"])
        else:
            assert err.strip().count("\n") == 0


# ------------------------------------------------------------------ the CLI's other inputs (docs/reliability.md §7)
#: Hostile TOML values (every TOML type, out-of-range numbers, nesting).
TOML_VALUES = st.sampled_from(['""', '"x"', '"fcfs"', '"wfp"', "-1", "0", "1", "0.5", "1e308", "-1e308", "inf", "nan",
                               "true", "false", "[]", "[1]", '["a"]', "{}", "{a = 1}", "{a = [1]}",
                               "9223372036854775807", "[[[[[[1]]]]]]", "1979-05-27"])


def _toml(entries: list[tuple[str, str]]) -> str:
    return "".join(f"{k} = {v}\n" for k, v in entries)


def _untouched(folder: Path) -> dict:
    """{path: (size, mtime)} of everything under `folder` (to show a command wrote nothing but its output)."""
    return {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def _one_line_or_ok(rc: int, err: str, ok=(0,)) -> None:
    assert rc in (*ok, 2), err
    assert "Traceback" not in err
    if rc == 2:
        assert err.strip().count("\n") == 0 and err.startswith("burstbuffer"), err


@st.composite
def queue_files(draw) -> str:
    keys = ["name", "min_procs", "max_procs", "min_walltime", "max_walltime", "max_share", "order", "backfill",
            "route", "extra"]
    head = _toml([("order", draw(TOML_VALUES))]) if draw(st.booleans()) else ""
    tables = []
    for i in range(draw(st.integers(0, 3))):
        entries = [("name", f'"q{i}"')] + [(k, draw(TOML_VALUES))
                                           for k in draw(st.lists(st.sampled_from(keys), max_size=3, unique=True))]
        tables.append("[[queue]]\n" + _toml(entries))
    return head + "\n".join(tables)


@fuzz(0.3)
@given(queue_files())
def test_hostile_queue_files_run_or_are_refused_in_one_line(text):
    """`run --queues`: refused before the run (exit 2, one line) or run; nothing written outside --output."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        q = tmp / "q.toml"
        q.write_text(text)
        wl = tmp / "w.json"
        wl.write_text(json.dumps(_base_workload(3)))
        before = _untouched(tmp)
        rc, err = _cli(["run", "-q", "--cpu", "off", "--timeout", "60", "--policy", "fcfs-bb", "--workload", str(wl),
                        "--queues", str(q), "--output", str(tmp / "out")])
        _one_line_or_ok(rc, err)
        assert {p: v for p, v in _untouched(tmp).items() if tmp / "out" not in p.parents and p != tmp / "out"} \
            == before


@st.composite
def campaign_files(draw, workload: str) -> str:
    camp = [("models", '["alloc-only"]'), ("seeds", "[0]")]
    for k in draw(st.lists(st.sampled_from(["models", "seeds", "timeout", "run-timeout", "platform", "name",
                                            "network-model", "extra"]), max_size=2, unique=True)):
        camp = [(a, b) for a, b in camp if a != k] + [(k, draw(TOML_VALUES))]
    pol = [("name", '"fcfs"')] + [(k, draw(TOML_VALUES)) for k in draw(st.lists(
        st.sampled_from(["name", "label", "options", "extra"]), max_size=2, unique=True))]
    wl = [("file", json.dumps(workload))] + [(k, draw(TOML_VALUES)) for k in draw(st.lists(
        st.sampled_from(["label", "jobs", "min-res", "parts", "bb-scenario", "bb-seed"]), max_size=2, unique=True))]
    ex = [(k, draw(TOML_VALUES)) for k in draw(st.lists(st.sampled_from(["policy", "workload", "model", "seed"]),
                                                        max_size=2, unique=True))]
    text = "[campaign]\n" + _toml(camp) + "\n[[policy]]\n" + _toml(pol) + "\n[[workload]]\n" + _toml(wl)
    return text + ("\n[[exclude]]\n" + _toml(ex) if ex else "")


@fuzz(1)
@given(st.data())
def test_hostile_campaign_files_load_or_are_refused_in_one_line(data):
    """The campaign reader `sweep` uses: a Campaign or one InputError line, never another exception."""
    from burstbuffer.sweep.campaign import load_campaign
    with tempfile.TemporaryDirectory() as tmp:
        wl = Path(tmp) / "w.json"
        wl.write_text(json.dumps(_base_workload(3)))
        p = Path(tmp) / "c.toml"
        p.write_text(data.draw(campaign_files(str(wl))))
        try:
            load_campaign(p)
        except InputError as exc:
            assert "\n" not in str(exc)


SACCT_FIELDS = st.sampled_from(["", "x", "-1", "0", "nan", "inf", "1e400", "99999999999999999999", "UNLIMITED",
                                "99999999999999999999-00", "2026-13-45T99:99:99", "cpu=4,bb/datawarp=1e400G",
                                "bb/datawarp=99999999999999999999P", "bb/x=", "1-2:3:4:5", "٣", "|", "\x00"])


@fuzz(1)
@given(st.lists(st.tuples(st.integers(0, 9), SACCT_FIELDS), min_size=1, max_size=4))
def test_hostile_sacct_dumps_convert_or_are_refused_in_one_line(changes):
    row = ["1", "2026-01-01T00:00:00", "2026-01-01T00:01:00", "2026-01-01T01:00:00", "60", "1", "4", "COMPLETED",
           "cpu=4,bb/datawarp=1G", "cpu=4"]
    for i, v in changes:
        row[i] = v
    text = ("JobIDRaw|Submit|Start|End|TimelimitRaw|NNodes|NCPUS|State|ReqTRES|AllocTRES\n" + "|".join(row) + "\n"
            + "2|2026-01-01T00:00:00|2026-01-01T00:01:00|2026-01-01T01:00:00|60|1|4|COMPLETED|cpu=4|cpu=4\n")
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "s.txt"
        p.write_text(text)
        rc, err = _cli(["workload", "from-sacct", str(p), "-o", str(Path(tmp) / "out" / "w.json")])
        _one_line_or_ok(rc, err)
        assert {q.name for q in Path(tmp).iterdir()} <= {"s.txt", "out"}
        if rc == 0:   # a converted job's work is a real count (an End of 1e20 s once gave -2**63 flops)
            profiles = json.loads((Path(tmp) / "out" / "w.json").read_text())["profiles"].values()
            assert all(0 <= p["cpu"] < 2 ** 63 for p in profiles), list(profiles)


#: Hostile attribute values of a platform.
XML_VALUES = st.sampled_from(["", "x", "-1", "0", "nan", "inf", "1e400", "1e400B", "7", "99999999999999999999",
                              "1Gf,", ",", "1e308:1:1", "-5:1:1", "1:2", "0-x", "1e400Bps"])


@fuzz(0.2)
@given(st.lists(st.tuples(st.sampled_from(["speed", "pstate", "core", "wattage_per_state", "wattage_off",
                                           "sleep_pstates", "bandwidth", "latency", "bb"]), XML_VALUES),
                min_size=1, max_size=3, unique_by=lambda c: c[0]), st.integers(0, 150))
def test_hostile_platforms_load_or_are_refused_in_one_line(changes, depth):
    """`simulate -E --dump-platform` over the energy test platform with hostile values and nesting (a process
    each: SimGrid is set up once per process)."""
    text = (ROOT / "tests" / "data" / "energy4.xml").read_text()
    for what, v in changes:
        if what in ("speed", "pstate", "bandwidth", "latency"):
            text = re.sub(rf'{what}="[^"]*"', f'{what}="{v}"', text, count=1)
        elif what == "core":
            text = text.replace('<host id="host0"', f'<host id="host0" core="{v}"', 1)
        elif what == "bb":
            text = text.replace('<zone id="root" routing="Full">',
                                f'<zone id="root" routing="Full"><prop id="burst_buffer_capacity" value="{v}"/>', 1)
        else:
            text = re.sub(rf'(id="{what}" value=")[^"]*"', rf"\g<1>{v}\"", text, count=1)
    head, sep, tail = text.partition('<zone id="root" routing="Full">')
    text = head + '<zone id="d" routing="Full">' * depth + sep + tail.replace("</platform>",
                                                                            "</zone>" * depth + "</platform>")
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "p.xml"
        p.write_text(text)
        proc = subprocess.run([sys.executable, "-m", "burstbuffer", "simulate", "-E", "-p", str(p), "--dump-platform"],
                              capture_output=True, text=True, timeout=120)
        rc, err = proc.returncode, proc.stderr
        assert "Traceback" not in err
        assert rc in (0, 2), err
        if rc == 2:
            assert err.strip().count("\n") == 0, err


@fuzz(0.2)
@given(st.sampled_from(["order", "reservation_depth", "queues", "order_params", "walltime_factor", "period",
                        "staging", "nope"]),
       st.one_of(JSON_VALUES.map(json.dumps), st.sampled_from(["[" * 3000 + "]" * 3000, '{"queue":[{"name":5}]}',
                                                              '{"path": 5}', "1e400", "NaN", "-Infinity"])))
def test_hostile_policy_options_run_or_are_refused_in_one_line(name, value):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        wl = tmp / "w.json"
        wl.write_text(json.dumps(_base_workload(3)))
        before = _untouched(tmp)
        rc, err = _cli(["run", "-q", "--cpu", "off", "--timeout", "60", "--workload", str(wl), "--output",
                        str(tmp / "out"), "--policy-option", f"{name}={value}"])
        _one_line_or_ok(rc, err)
        assert {p: v for p, v in _untouched(tmp).items() if tmp / "out" not in p.parents and p != tmp / "out"} \
            == before
