"""`run`'s links are named by where the scheduler runs (``in-simulator``, ``pipes``); the former spelling
``in-process`` is still accepted, on the command line and in `runner.run`, as ``in-simulator``."""
from __future__ import annotations

import subprocess
import sys

import pytest

from burstbuffer import links
from burstbuffer.cli import build_parser
from burstbuffer.runner import run

from .conftest import PLATFORM


@pytest.mark.parametrize("text, name", [("in-simulator", "in-simulator"), ("pipes", "pipes"),
                                        ("in-process", "in-simulator")])
def test_a_link_and_its_former_spelling_name_one_link(text, name):
    assert links.link(text) == name
    argv = ["run", "--policy", "fcfs", "--workload", "w.json", "--output", "o", "--link", text]
    assert build_parser(argv).parse_args(argv).link == name


def test_the_default_link_is_in_simulator():
    argv = ["run", "--policy", "fcfs", "--workload", "w.json", "--output", "o"]
    assert build_parser(argv).parse_args(argv).link == "in-simulator"


def test_an_unknown_link_is_one_line_and_exit_2(tmp_path):
    r = subprocess.run([sys.executable, "-m", "burstbuffer", "run", "--policy", "fcfs", "--workload", "w.json",
                        "--output", str(tmp_path / "o"), "--link", "socket"], capture_output=True, text=True)
    assert r.returncode == 2
    assert "--link: 'socket': unknown link (choose from in-simulator, pipes; in-process is in-simulator)" in r.stderr
    assert not (tmp_path / "o").exists()


def test_the_former_spelling_runs_the_scheduler_in_the_simulator(kth_subset, tmp_path):
    """Only the in-simulator link measures the CPU of the answers (`RunResult.scheduler_cpu`)."""
    wl = kth_subset(10)
    old = run("fcfs-bb", wl, PLATFORM, tmp_path / "old", progress=False, cpu=None, link="in-process")
    new = run("fcfs-bb", wl, PLATFORM, tmp_path / "new", progress=False, cpu=None, link="in-simulator")
    assert old.scheduler_cpu is not None and new.scheduler_cpu is not None
    assert (tmp_path / "old" / "jobs.csv").read_bytes() == (tmp_path / "new" / "jobs.csv").read_bytes()
