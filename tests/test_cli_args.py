"""Every number on the command line is checked at parse time: one line on stderr, exit status 2."""
from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import KTH1000, ROOT

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

BAD = [
    ("run", "--policy", "plan", "--alpha", "inf"),
    ("run", "--policy", "plan", "--alpha", "-1"),
    ("run", "--timeout", "-1"),
    ("run", "--timeout", "nan"),
    ("run", "--seed", "-3"),
    ("run", "--seed", "1.5"),
    ("run", "--cpu", "999"),
    ("run", "--workload", "/dev/null"),
    ("run", "--workload", "/tmp"),
    ("run", "--workload", "no/such/file.json"),
    ("metrics", "x.csv", "--nb-compute", "-5"),
    ("workload", "split", str(KTH1000), "--weeks", "nan", "--output", "OUT"),
    ("workload", "split", str(KTH1000), "--weeks", "0", "--output", "OUT"),
    ("workload", "split", str(KTH1000), "--parts", "5000", "--output", "OUT"),
    ("workload", "from-swf", "t.swf", "--jobs", "0", "--output", "OUT"),
    ("serve", "--policy", "fcfs", "--timeout", "inf"),
    ("serve", "--policy", "fcfs", "--seed", "x"),
    ("reproduce", "--workers", "-1", "--output", "OUT"),
    ("reproduce", "--timeout", "0", "--output", "OUT"),
]


@pytest.mark.parametrize("argv", BAD, ids=[" ".join(a[:4]) for a in BAD])
def test_bad_value_is_one_line_and_status_2(tmp_path, argv):
    argv = [a.replace("OUT", str(tmp_path / "out")) for a in argv]
    r = subprocess.run([sys.executable, "-m", "burstbuffer", *argv], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().count("\n") == 0 and r.stderr.startswith("burstbuffer"), r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())   # nothing written
