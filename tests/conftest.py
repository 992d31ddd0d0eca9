import json
import os
from pathlib import Path

import pytest

from burstbuffer.runner import CHECK_PROTOCOL_ENV

ROOT = Path(__file__).resolve().parents[1]
#: inputs the tests read: a real Batsim 4.2.1 run (batsim-4.2.1/) and the paper artifact's platform (reference/)
DATA = ROOT / "tests" / "data"
CAPTURE_DIR = DATA / "batsim-4.2.1"
KTH1000 = ROOT / "workloads" / "kth-1000.json"
PLATFORM = ROOT / "platforms" / "dragonfly96.xml"


def write_subset(path: Path, n: int, *, edit=None) -> Path:
    """The first `n` jobs of the bundled KTH workload (with their profiles), optionally edited."""
    w = json.loads(KTH1000.read_text())
    jobs = w["jobs"][:n]
    w = {"nb_res": w["nb_res"], "jobs": jobs, "profiles": {j["profile"]: w["profiles"][j["profile"]] for j in jobs}}
    if edit is not None:
        edit(w)
    path.write_text(json.dumps(w))
    return path


@pytest.fixture
def kth_subset(tmp_path):
    return lambda n, edit=None: write_subset(tmp_path / f"kth-{n}.json", n, edit=edit)


@pytest.fixture(scope="session", autouse=True)
def check_protocol():
    """Every scheduler the tests start — `runner.run` in process, `burstbuffer run` / `serve` as
    subprocesses (they inherit the environment) — checks each answer against protocol v4 before
    sending it (`burstbuffer.batsim.conformance`): a violation raises, or exits non-zero, and fails
    the test."""
    old = os.environ.get(CHECK_PROTOCOL_ENV)
    os.environ[CHECK_PROTOCOL_ENV] = "1"
    yield
    if old is None:
        os.environ.pop(CHECK_PROTOCOL_ENV, None)
    else:
        os.environ[CHECK_PROTOCOL_ENV] = old
