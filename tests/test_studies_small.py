"""Every study ends with a report at any `reproduce --jobs N`, N >= 1 (or a one-line error): each study end to
end at a small size drawn at random (one example per study; the ci profile draws the same one every time), where
most claims have nothing to compare (no job waits, groups of jobs are empty). The report then says "n/a" with the
reason, never nan, and no claim is judged on NaN."""
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from burstbuffer.reproduce.study import all_studies

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers): every run of every study, at 1-4 jobs

NAN = re.compile(r"(?<![A-Za-z])[+-]?nan(?![A-Za-z])")


@pytest.mark.parametrize("study", sorted(all_studies()))
@settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck))
@given(jobs=st.integers(1, 4))
def test_every_study_reports_at_small_sizes(study, jobs):
    with tempfile.TemporaryDirectory(prefix="bb-study-") as tmp:
        out = Path(tmp) / "o"
        r = subprocess.run([sys.executable, "-m", "burstbuffer", "reproduce", "--study", study, "--jobs", str(jobs),
                            "--output", str(out), "--engine", "local", "--workers", "2", "-q"],
                           capture_output=True, text=True)
        if r.returncode == 2:       # refused: one line saying why
            assert len(r.stderr.strip().splitlines()) == 1, r.stderr
            return
        assert r.returncode == 0, r.stderr[-3000:]
        assert "Traceback" not in r.stderr
        report = (out / "report.md").read_text()
        assert not NAN.search(report), [ln for ln in report.splitlines() if NAN.search(ln)][:3]
        verdicts = json.loads((out / "verdicts.json").read_text())
        assert verdicts and all(not NAN.search(v["measured"]) for v in verdicts)
        # a claim not measurable here says why, and is not judged
        for v in verdicts:
            if v["measured"].startswith("n/a"):
                assert v["verdict"] == "not measured" and "--jobs N" in v["measured"]
