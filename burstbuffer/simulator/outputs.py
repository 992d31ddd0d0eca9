"""Batsim's output files, written the way Batsim 4.2.1 writes them (`export.cpp`, docs/protocol.md,
tests/data/batsim-4.2.1/capture10_jobs.csv and outputs-excerpt.txt).

``PREFIX_jobs.csv``: one row per job, in the order jobs end (completion or rejection), columns
`BATSIM_JOBS_COLUMNS` (`burstbuffer.metrics.definitions`, as are the waiting and turnaround times). Times
are ``%f`` seconds; `job_id` is the name without the workload; `success` is 1 only for
COMPLETED_SUCCESSFULLY; a rejected job has empty time/allocation/energy cells; `consumed_energy` is -1
without energy, with ``-E`` the job's energy [J] (`SimJob.consumed_energy`, `energy`); `metadata` is
double-quoted. Batsim computes times in long double (`starting_time + runtime - submission_time`); so do we
(`longdouble.LD`, the x87 80-bit arithmetic) to print the same digits.

``PREFIX_schedule.csv``: one header line and one value line, keys sorted as Batsim's std::map sorts them
(`SCHEDULE_COLUMNS`); means are over all jobs (rejected ones count, with nothing added); machine times
accumulate only at state changes, as Batsim's do.

``PREFIX_machine_states.csv`` (`MachineStatesWriter`, Batsim's MachineStateTracer): header
``time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing`` (Batsim 4.2.1 has no
``nb_unavailable`` column), then one row after every job start and every job end — several rows at one time
when several jobs start or end then, as Batsim — with the number of machines in each state; time as C's
``%g``. Without energy no machine sleeps or switches: those columns are 0. As Batsim 4.2.1 counts (machines.cpp:
the idle count starts at the number of *compute* machines, and every machine's change of state moves one
between the counts), a storage machine running a job (data staging, a checkpoint) counts as computing and
lowers the idle count: nb_idle + nb_computing is the number of compute machines but for the sleeping and
switching ones (``-E``, in their own columns) and the unavailable ones (external events, in no column).
"""
from __future__ import annotations

from ..metrics.definitions import BATSIM_JOBS_COLUMNS, stretch, turnaround_time, waiting_time
from .longdouble import LD

SCHEDULE_COLUMNS = ("batsim_version", "consumed_joules", "makespan", "max_slowdown", "max_turnaround_time",
                    "max_waiting_time", "mean_slowdown", "mean_turnaround_time", "mean_waiting_time",
                    "nb_computing_machines", "nb_grouped_switches", "nb_jobs", "nb_jobs_finished",
                    "nb_jobs_killed", "nb_jobs_rejected", "nb_jobs_success", "nb_machine_switches",
                    "scheduling_time", "simulation_time", "success_rate", "time_computing", "time_idle",
                    "time_sleeping", "time_switching_off", "time_switching_on", "time_unavailable")


def f6(x) -> str:
    """C's ``std::to_string(double)``: ``%f``."""
    return "%f" % float(x)


class JobsWriter:
    """Streams ``PREFIX_jobs.csv`` and accumulates the schedule metrics (Batsim's JobsTracer)."""

    def __init__(self, path: str):
        self.path = path
        self.f = open(path, "w", encoding="utf-8", newline="")
        self.f.write(",".join(BATSIM_JOBS_COLUMNS) + "\n")
        self.nb_jobs = self.nb_finished = self.nb_success = self.nb_killed = self.nb_rejected = 0
        self.sum_wait = self.sum_turn = self.sum_slow = LD(0)
        self.makespan = self.max_wait = self.max_turn = self.max_slow = LD(0)

    def write_job(self, job) -> None:
        """Append the row of a job that just ended (completed, killed, or rejected)."""
        success = job.state == "COMPLETED_SUCCESSFULLY"
        rejected = job.state == "REJECTED"
        self.nb_jobs += 1
        sub = LD(job.subtime)
        row = {
            "job_id": job.name, "workload_name": job.workload.name, "profile": job.profile.name,
            "submission_time": f6(sub), "requested_number_of_resources": str(job.res),
            "requested_time": f6(job.walltime), "success": "1" if success else "0", "final_state": job.state,
            "allocated_resources": job.alloc_text if job.allocation is not None else "",
            "metadata": f'"{job.metadata}"',
        }
        if rejected:
            self.nb_rejected += 1
            for k in ("starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time",
                      "stretch", "consumed_energy"):
                row[k] = ""
        else:
            self.nb_finished += 1
            if success:
                self.nb_success += 1
            else:
                self.nb_killed += 1
            start, runtime = LD(job.starting_time), LD(job.runtime)
            wait = waiting_time(sub, start)
            completion = start + runtime
            turn = turnaround_time(sub, completion)
            slow = stretch(turn, runtime)
            self.sum_wait += wait
            self.sum_turn += turn
            self.sum_slow += slow
            self.makespan = max(self.makespan, completion)
            self.max_wait = max(self.max_wait, wait)
            self.max_turn = max(self.max_turn, turn)
            self.max_slow = max(self.max_slow, slow)
            row.update({"starting_time": f6(start), "execution_time": f6(runtime), "finish_time": f6(completion),
                        "waiting_time": f6(wait), "turnaround_time": f6(turn), "stretch": f6(slow),
                        "consumed_energy": job.consumed_energy or f6(-1.0)})
        self.f.write(",".join(row[k] for k in BATSIM_JOBS_COLUMNS) + "\n")

    def close(self) -> None:
        self.f.close()

    def schedule_row(self, *, version: str, nb_machines: int, scheduling_time: float, simulation_time: float,
                     time_in_state: dict[str, float]) -> dict[str, str]:
        """The values of ``PREFIX_schedule.csv`` (Batsim's JobsTracer::finalize)."""
        n = self.nb_jobs
        mean = (lambda s: f6(s / n)) if n else (lambda s: "-nan")
        row = {
            "batsim_version": version, "consumed_joules": f6(0.0), "makespan": f6(self.makespan),
            "max_slowdown": f6(self.max_slow), "max_turnaround_time": f6(self.max_turn),
            "max_waiting_time": f6(self.max_wait), "mean_slowdown": mean(self.sum_slow),
            "mean_turnaround_time": mean(self.sum_turn), "mean_waiting_time": mean(self.sum_wait),
            "nb_computing_machines": str(nb_machines), "nb_grouped_switches": "0", "nb_jobs": str(n),
            "nb_jobs_finished": str(self.nb_finished), "nb_jobs_killed": str(self.nb_killed),
            "nb_jobs_rejected": str(self.nb_rejected), "nb_jobs_success": str(self.nb_success),
            "nb_machine_switches": "0", "scheduling_time": f6(scheduling_time),
            "simulation_time": f6(simulation_time),
            "success_rate": f6(self.nb_success / n) if n else "-nan",
        }
        for state in ("computing", "idle", "sleeping", "switching_off", "switching_on", "unavailable"):
            row[f"time_{state}"] = f6(time_in_state.get(state, 0.0))
        return row

    @staticmethod
    def write_schedule(path: str, row: dict[str, str]) -> None:
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(",".join(SCHEDULE_COLUMNS) + "\n")
            f.write(",".join(row[k] for k in SCHEDULE_COLUMNS) + "\n")


#: Batsim 4.2.1's `_machine_states.csv` header (export.cpp, MachineStateTracer::set_filename).
MACHINE_STATES_COLUMNS = ("time", "nb_sleeping", "nb_switching_on", "nb_switching_off", "nb_idle", "nb_computing")


class MachineStatesWriter:
    """Streams ``PREFIX_machine_states.csv`` (module docstring): `counts` is the number of machines in each
    state, kept by the machines (`state.machine_counts`, `state.MachineState.set_state`).

    `job_started(now, alloc, mstate)` after the machines of `alloc` were given the job, `job_ended(now,
    alloc, mstate)` after they were released, and `row(now)` (energy's switches) each write one row of the
    counts, as Batsim's `update_machines_on_job_run` / `_end` do.
    """

    def __init__(self, path: str, counts: dict[str, int]):
        self.path = path
        self.f = open(path, "w", encoding="utf-8", newline="")
        self.f.write(",".join(MACHINE_STATES_COLUMNS) + "\n")
        self.counts = counts

    def row(self, now: float) -> None:
        c = self.counts
        self.f.write("%g,%d,%d,%d,%d,%d\n" % (now, c["sleeping"], c["switching_on"], c["switching_off"],
                                              c["idle"], c["computing"]))

    def job_started(self, now: float, alloc, mstate) -> None:
        self.row(now)

    def job_ended(self, now: float, alloc, mstate) -> None:
        self.row(now)

    def close(self) -> None:
        self.f.close()
