"""Errors quote a bounded, printable excerpt of peer data, and input readers bound nesting depth (issue 26,
items 6 and 7): one short line, never a traceback, whatever the peer or the file holds."""
from __future__ import annotations

import json

import pytest

from burstbuffer.batsim.protocol import ProtocolError, decode
from burstbuffer.cli import main
from burstbuffer.jsonvalues import excerpt
from burstbuffer.simulator.loop import queue_reply
from burstbuffer.simulator.state import SimulationError


def test_excerpt_is_bounded_and_printable():
    e = excerpt("\x1b[31m" + "x" * 10**6, 50)
    assert len(e) < 80 and "\x1b" not in e and "\\x1b" in e and "(1000005 characters)" in e
    assert excerpt(b"\xff\x00ok") == "\ufffd\\x00ok"


def test_malformed_message_error_is_short_and_printable():
    raw = b'{"now": 1, "events": [{"timestamp": "' + b"\x1b" * 10**6 + b'"}]}'
    with pytest.raises(ProtocolError) as err:
        decode(raw)
    msg = str(err.value)
    assert len(msg) < 700 and "\x1b" not in msg, msg[:300]


def test_deeply_nested_message_is_a_protocol_error():
    with pytest.raises(ProtocolError, match="nested too deeply"):
        decode(b"[" * 100000)


def test_simulator_quotes_a_bounded_unknown_type():
    reply = json.dumps({"now": 1.0, "events": [{"timestamp": 1.0, "type": "\x07" + "T" * 10**6, "data": {}}]})
    with pytest.raises(SimulationError) as err:
        queue_reply(None, reply)
    msg = str(err.value)
    assert len(msg) < 400 and "\x07" not in msg and "unknown 'type'" in msg
    with pytest.raises(SimulationError, match="nested too deeply"):
        queue_reply(None, "[" * 100000)


@pytest.mark.parametrize("cmd", [["run", "--output", "{tmp}/o", "-q", "--workload"],
                                 ["simulate", "-p", "platforms/dragonfly96.xml", "-w"]])
def test_deeply_nested_workload_is_one_line(tmp_path, capsys, cmd, monkeypatch):
    from pathlib import Path
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in cmd] + [str(deep)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "nested too deeply" in err, err[:500]


def test_deeply_nested_campaign_is_one_line(tmp_path, capsys):
    f = tmp_path / "c.toml"
    f.write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    assert main(["sweep", str(f), "--output", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "nested too deeply" in err, err[:500]


def test_cli_error_line_is_bounded(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    bad = tmp_path / "w.json"
    huge = "\x1b" + "y" * 100000
    bad.write_text(json.dumps({"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p",
                                                      "walltime": huge}],
                               "profiles": {"p": {"type": "delay", "delay": 1, "bb": 0}}}))
    r = subprocess.run([sys.executable, "-m", "burstbuffer", "run", "--workload", str(bad), "--output",
                        str(tmp_path / "o"), "-q", "--cpu", "off"], cwd=Path(__file__).resolve().parents[1],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr[:300]
    assert len(r.stderr) < 2500 and "\x1b" not in r.stderr and r.stderr.count("\n") == 1, r.stderr[:300]
