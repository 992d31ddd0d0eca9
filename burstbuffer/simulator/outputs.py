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

``PREFIX_schedule.trace`` (`PajeWriter`, Batsim's PajeTracer; ``simulate`` writes it unless
``--disable-schedule-tracing``, as Batsim): a Pajé trace of which job each machine computes — Batsim 4.2.1's
header, one container per compute and storage machine (``m<id>``), every machine waiting at the start, a
``machine_state`` line per machine when a job becomes the one it shows (a job starts on it, or the job it
showed ends and another still runs there) and a waiting line when its last job ends, kill events (``kk`` on
the killer, ``km`` per machine) for a job that reaches its walltime or whose parallel task the scheduler
kills, and the containers destroyed at the end; times ``%f``. A machine computing several jobs shows the
first created (Batsim shows the first in its set of job pointers, which follows heap addresses; jobs are
created in the order of the workload files, dynamic ones when they are registered). Batsim draws each job's
colour from 64 hues shuffled by ``std::random_device``, so two Batsim runs differ there; the colours here are
the same hues, unshuffled (every other byte is Batsim's).
"""
from __future__ import annotations

from ..fileio import open_output
from ..metrics.definitions import BATSIM_JOBS_COLUMNS, BatsimScheduleCounters
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
        self.f = open_output(path, "w", encoding="utf-8", newline="")
        self.f.write(",".join(BATSIM_JOBS_COLUMNS) + "\n")
        #: the schedule metrics (Batsim's JobsTracer), in long double as Batsim computes them
        self.counts = BatsimScheduleCounters(LD(0))

    # the counts SimResult reports
    nb_jobs = property(lambda self: self.counts.nb_jobs)
    nb_success = property(lambda self: self.counts.nb_jobs_success)
    nb_rejected = property(lambda self: self.counts.nb_jobs_rejected)
    nb_killed = property(lambda self: self.counts.nb_jobs_killed)

    def write_job(self, job) -> None:
        """Append the row of a job that just ended (completed, killed, or rejected)."""
        success = job.state == "COMPLETED_SUCCESSFULLY"
        rejected = job.state == "REJECTED"
        sub = LD(job.subtime)
        row = {
            "job_id": job.name, "workload_name": job.workload.name, "profile": job.profile.name,
            "submission_time": f6(sub), "requested_number_of_resources": str(job.res),
            "requested_time": f6(job.walltime), "success": "1" if success else "0", "final_state": job.state,
            "allocated_resources": job.alloc_text if job.allocation is not None else "",
            "metadata": f'"{job.metadata}"',
        }
        if rejected:
            self.counts.add(job.state, sub)
            for k in ("starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time",
                      "stretch", "consumed_energy"):
                row[k] = ""
        else:
            start, runtime = LD(job.starting_time), LD(job.runtime)
            wait, completion, turn, slow = self.counts.add(job.state, sub, start, runtime)
            row.update({"starting_time": f6(start), "execution_time": f6(runtime), "finish_time": f6(completion),
                        "waiting_time": f6(wait), "turnaround_time": f6(turn), "stretch": f6(slow),
                        "consumed_energy": job.consumed_energy or f6(-1.0)})
        self.f.write(",".join(row[k] for k in BATSIM_JOBS_COLUMNS) + "\n")

    def close(self) -> None:
        self.f.close()

    def schedule_row(self, *, version: str, nb_machines: int, scheduling_time: float, simulation_time: float,
                     time_in_state: dict[str, float]) -> dict[str, str]:
        """The values of ``PREFIX_schedule.csv`` (Batsim's JobsTracer::finalize)."""
        c = self.counts.fields()
        n = c["nb_jobs"]

        def g(name):   # %f, or Batsim's -nan for a mean over no job
            return f6(c[name]) if n else "-nan"
        row = {"batsim_version": version, "consumed_joules": f6(0.0), "nb_computing_machines": str(nb_machines),
               "nb_grouped_switches": "0", "nb_machine_switches": "0", "scheduling_time": f6(scheduling_time),
               "simulation_time": f6(simulation_time),
               **{k: str(c[k]) for k in ("nb_jobs", "nb_jobs_finished", "nb_jobs_killed", "nb_jobs_rejected",
                                         "nb_jobs_success")},
               **{k: f6(c[k]) for k in ("makespan", "max_slowdown", "max_turnaround_time", "max_waiting_time")},
               **{k: g(k) for k in ("mean_slowdown", "mean_turnaround_time", "mean_waiting_time", "success_rate")}}
        for state in ("computing", "idle", "sleeping", "switching_off", "switching_on", "unavailable"):
            row[f"time_{state}"] = f6(time_in_state.get(state, 0.0))
        return row

    @staticmethod
    def write_schedule(path: str, row: dict[str, str]) -> None:
        with open_output(path, "w", encoding="utf-8", newline="") as f:
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
        self.f = open_output(path, "w", encoding="utf-8", newline="")
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


#: Batsim 4.2.1's Pajé event numbers (export.hpp, PajeTracer's enum) and header (export.cpp, initialize)
_PAJE_IDS = dict(define_container_type=1, create_container=2, destroy_container=3, define_state_type=4,
                 define_entity_value=5, set_state=6, define_event_type=7, new_event=8, define_variable_type=9,
                 set_variable=10)
_PAJE_DEFS = (
    ("PajeDefineContainerType", "define_container_type", ("% Type string", "% Alias string", "% Name string"), ""),
    ("PajeCreateContainer", "create_container", ("% Time date ", "% Type string  ", "% Alias string ",
                                                  "% Name string   ", "% Container string  "), ""),
    ("PajeDestroyContainer", "destroy_container", ("% Time date", "% Name string ", "% Type string"), ""),
    ("PajeDefineStateType", "define_state_type", ("% Alias string ", "% Type string ", "% Name string "), ""),
    ("PajeDefineEntityValue", "define_entity_value", ("% Alias string  ", "% Type string  ", "% Name string  ",
                                                      "% Color color "), ""),
    ("PajeSetState", "set_state", ("% Time date  ", "% Type string  ", "% Container string  ",
                                   "% Value string  "), " "),
    ("PajeDefineEventType", "define_event_type", ("% Type string", "% Alias string", "% Name string"), ""),
    ("PajeNewEvent", "new_event", ("% Time date", "% Type string", "% Container string", "% Value string"), ""),
    ("PajeDefineVariableType", "define_variable_type", ("% Type string", "% Alias string", "% Name string",
                                                        "% Color string"), ""),
    ("PajeSetVariable", "set_variable", ("% Time date", "% Type string", "% Container string",
                                         "% Value double"), ""),
)


def _paje_colors(n: int = 64) -> list[str]:
    """Batsim's `n` job colours (PajeTracer::generate_colors: hues i·360/n at full saturation and value,
    ``"%lf %lf %lf"``), in hue order."""
    import colorsys
    return ['"%f %f %f"' % colorsys.hsv_to_rgb(i / n, 1.0, 1.0) for i in range(n)]


class PajeWriter:
    """Streams ``PREFIX_schedule.trace`` (module docstring). `machines`: (id, name) of every compute and
    storage machine in id order; `now`: the start time [s]; `jobs`: the jobs known at the start, in the order
    they were created (the workload files' order; a job not among them ranks after them, in the order it
    starts). `job_started` after the machines of a job were given it, `job_ended` after they were released
    (`mstate`: the simulator's `state.MachineState` list, whose ``jobs`` sets are then up to date),
    `job_killed` before they are released, `close` at the end."""

    def __init__(self, path: str, machines: list[tuple[int, str]], now: float = 0.0, jobs=()):
        self.path = path
        self.f = open_output(path, "w", encoding="utf-8", newline="")
        self.ids = [i for i, _ in machines]
        self.colors = _paje_colors()
        self.values: dict[str, str] = {}       # job id -> its entity value (j<id>)
        self.rank: dict[str, int] = {j.id: k for k, j in enumerate(jobs)}    # job id -> its creation order
        I = _PAJE_IDS  # noqa: E741
        w = self.f.write
        for name, key, fields, end in _PAJE_DEFS:
            w(f"%EventDef {name} {I[key]}\n" + "".join(x + "\n" for x in fields) + f"%EndEventDef{end}\n\n")
        c, e, v = I["define_container_type"], I["define_event_type"], I["define_variable_type"]
        w(f'# Container types creation\n{c} 0 root_ct "Machines"\n{c} root_ct machine_ct "Machine"\n'
          f'{c} 0 scheduler_ct "Scheduler"\n{c} scheduler_ct killer_ct "Killer"\n\n')
        w(f'# Event types creation\n{e} killer_ct kk "Job kill"\n{e} machine_ct km "Job kill"\n\n')
        w(f'# Variable types creation\n{v} scheduler_ct vu_vt "Utilization" "0.0 0.5 0.0"\n\n')
        cc, t = I["create_container"], "%f" % now
        w(f'# Containers creation\n{cc} {t} root_ct root "Machines" 0\n')
        for i, name in machines:
            w(f'{cc} {t} machine_ct m{i} "{name}" root\n')
        w(f'{cc} {t} scheduler_ct sc "Scheduler" 0\n{cc} {t} killer_ct k "Killer" sc\n\n')
        w(f'# States creation\n{I["define_state_type"]} machine_state machine_ct "Machine state"\n\n')
        dv = I["define_entity_value"]
        w(f'# Creation of the different values the machine state can be\n{dv} w machine_state "Waiting" '
          f'"0.0 0.0 0.0"\n{dv} l machine_state "Launching" "0.3 0.3 0.3"\n\n# Begin of events\n')
        for i in self.ids:
            w(f"{I['set_state']} {t} machine_state m{i} w\n")

    def _value(self, job) -> str:
        v = self.values.get(job.id)
        if v is None:
            v = self.values[job.id] = f"j{job.id}"
            self.f.write(f'{_PAJE_IDS["define_entity_value"]} {v} machine_state "{job.id}" '
                         f'{self.colors[(len(self.values) - 1) % len(self.colors)]}\n')
        return v

    def _top(self, jobs):
        return min(jobs, key=lambda j: self.rank[j.id])

    def job_started(self, now: float, alloc, mstate, job) -> None:
        self.rank.setdefault(job.id, len(self.rank))
        t = "%f" % now
        for mid in alloc:
            if self._top(mstate[mid].jobs) is job:
                self.f.write(f"{_PAJE_IDS['set_state']} {t} machine_state m{mid} {self._value(job)}\n")

    def job_ended(self, now: float, alloc, mstate, job) -> None:
        t, r = "%f" % now, self.rank[job.id]
        for mid in alloc:
            ms = mstate[mid]
            if not ms.jobs:
                if ms.state != "unavailable":
                    self.f.write(f"{_PAJE_IDS['set_state']} {t} machine_state m{mid} w\n")
            else:
                top = self._top(ms.jobs)
                if r < self.rank[top.id]:          # it was the job shown: the next one is now
                    self.f.write(f"{_PAJE_IDS['set_state']} {t} machine_state m{mid} {self._value(top)}\n")

    def job_killed(self, now: float, job) -> None:
        t, n = "%f" % now, _PAJE_IDS["new_event"]
        self.f.write(f'{n} {t} kk k "{job.id}"\n' + "".join(f'{n} {t} km m{mid} "{job.id}"\n'
                                                            for mid in job.alloc_ids))

    def close(self, now: float) -> None:
        t, d = "%f" % now, _PAJE_IDS["destroy_container"]
        self.f.write("\n# End of events, containers destruction\n" + "".join(f"{d} {t} m{i} machine_ct\n"
                                                                             for i in self.ids)
                     + f"{d} {t} root root_ct\n")
        self.f.close()
