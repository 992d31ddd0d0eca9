"""PREFIX_schedule.trace, Batsim 4.2.1's Pajé trace (`burstbuffer.simulator.outputs.PajeWriter`): written by
`simulate` as Batsim writes it, unless --disable-schedule-tracing; not by `run`. The differential tests
(test_batsim_testmatrix, test_differential_batsim) compare it with a real Batsim's on every run they make."""
from __future__ import annotations

from pathlib import Path

from . import batsim_diff as B
from .sim_sched import run_simulation

DATA = B.REPO / "tests" / "data" / "batsim-4.2.1"
KILLS = ("fcfs", "--kill", "w0!3@5", "--kill", "w0!4@5")


def _lines(path: Path) -> list[str]:
    return B.paje_lines(B.Run([], str(path).removesuffix("_schedule.trace"), 0, ""))


def test_the_trace_of_a_recorded_batsim_run(tmp_path):
    """Kills and walltimes as Batsim traces them: a kill event (``kk`` on the killer, ``km`` on each machine)
    for the job reaching its walltime in a delay (w0!2), for the one reaching it in a parallel task (w0!5) and
    for the parallel task the scheduler kills (w0!3); none for the delay it kills (w0!4), whose actor dies."""
    res = run_simulation(tmp_path, DATA / "kill-walltime.json", platform=B.CLUSTER, scheduler=KILLS)
    assert res.returncode == 0, res.stderr
    got, want = _lines(Path(res.prefix + "_schedule.trace")), _lines(DATA / "kill-walltime_schedule.trace")
    assert got == want
    killed = [line.split()[-1] for line in got if line.startswith("8 ") and " kk " in line]
    assert killed == ['"w0!3"', '"w0!2"', '"w0!5"']
    # every machine ends waiting
    last = {}
    for line in got:
        if line.startswith("6 "):
            last[line.split()[3]] = line.split()[4]
    assert set(last.values()) == {"w"} and len(last) == 96


def test_disabled_as_in_batsim_and_not_written_by_run(tmp_path):
    res = run_simulation(tmp_path, DATA / "kill-walltime.json", platform=B.CLUSTER, scheduler=KILLS,
                         sim_args=("--disable-schedule-tracing",))
    assert res.returncode == 0, res.stderr
    assert not Path(res.prefix + "_schedule.trace").exists() and Path(res.prefix + "_jobs.csv").exists()
    from burstbuffer.simulator import command
    argv = command("p.xml", "w.json")
    assert "--disable-schedule-tracing" in argv and "--disable-schedule-tracing" not in command(
        "p.xml", "w.json", schedule_trace=True)
