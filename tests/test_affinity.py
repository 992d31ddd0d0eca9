"""Pinning a run to one CPU core (burstbuffer.affinity)."""
from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from burstbuffer.affinity import available_cpus, current_cpu, pinned, resolve_cpu
from burstbuffer.errors import InputError

CPUS = available_cpus()
needs_two = pytest.mark.skipif(len(CPUS) < 2, reason="needs CPU affinity and at least 2 CPUs")


def test_off_and_none_mean_no_pinning():
    assert resolve_cpu("off") is None
    assert resolve_cpu(None) is None


@needs_two
def test_auto_cycles_through_the_cpus_by_worker_slot():
    got = [resolve_cpu("auto", slot=k) for k in range(2 * len(CPUS))]
    assert got == CPUS + CPUS


@needs_two
def test_auto_without_slot_is_the_current_cpu():
    assert resolve_cpu("auto") in CPUS
    assert current_cpu() in CPUS


@needs_two
@pytest.mark.parametrize("bad, reason", [("x", "expected auto, off or a CPU number"),
                                         (str(max(CPUS) + 100), "not a CPU this process may use")])
def test_bad_cpu_is_a_one_line_input_error(bad, reason):
    with pytest.raises(InputError) as err:
        resolve_cpu(bad)
    assert reason in str(err.value) and "--cpu" in str(err.value)


@needs_two
def test_pinned_covers_threads_and_children_then_restores():
    before = os.sched_getaffinity(0)
    target = CPUS[-1]
    seen = {}
    with pinned(target):
        assert os.sched_getaffinity(0) == {target}
        t = threading.Thread(target=lambda: seen.update(thread=os.sched_getaffinity(0)))
        t.start()
        t.join()
        child = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                               capture_output=True, text=True, check=True)
        seen["child"] = child.stdout.strip()
    assert seen["thread"] == {target}
    assert seen["child"] == f"[{target}]"
    assert os.sched_getaffinity(0) == before


def test_pinned_none_changes_nothing():
    before = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    with pinned(None):
        if before is not None:
            assert os.sched_getaffinity(0) == before
