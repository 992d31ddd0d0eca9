"""The SimGrid job execution: what Batsim's ``execute_job_process`` does (its ``jobs_execution.cpp`` and
``task_execution.cpp``).

A running job has an actor on its first allocated host (kept between jobs and moved to the next job's
host, as creating threads is costly) that executes the job's profile as SimGrid activities — a parallel
task on the allocated hosts (a data staging is one too, on its two storage hosts, as Batsim builds it), or a
sleep — under the job's walltime, then sends a 1-byte message to the server's mailbox on ``master``. That message crosses the platform, so a
completion reaches the server one route latency after the job ended (0.0001 s on the paper's platform), and
messages are received one at a time, in the order they were posted, as Batsim's are: that is why Batsim's
completions come at +0.0001 s steps. A message posted while the server is not receiving waits in the
mailbox until its next receive, which is when SimGrid starts its transfer; the job actor waits for that,
as Batsim's does (its put is blocking), then goes back to the pool.

Walltime: a job still running ``walltime`` seconds after its start is stopped → COMPLETED_WALLTIME_REACHED
(return code -1); a ``delay`` equal to the walltime also reaches it. A killed job's actor is stopped at
once (`kill_jobs`); its progress is reported as Batsim's KILL_JOB does (`job_progress`).

Two cores (docs/simulator-core.md): the job actors are Python actors (`dispatch`, `worker_loop`,
`job_body`: the actor core) or C++ actors of the compiled bridge that make the same SimGrid calls
(`start_bridged`, `absorb`: the bridged core); a job's end is written once (`end_job`).
"""
from __future__ import annotations

from .masters import put
from .network import homogeneous_bytes, ring_alone, uncontended_seconds
from .state import LD, SimState, SimulationError
from .workload import SimJob as Job


#: Job actors kept at most before parked ones are moved to another host rather than new ones created
#: (each is a thread; a large platform would otherwise keep one per host ever used).
MAX_WORKERS = 512


class _Worker:
    """A job-executing actor and the semaphore it waits on between jobs."""

    __slots__ = ("sem", "actor", "job", "host")

    def __init__(self, sem):
        self.sem, self.actor, self.job, self.host = sem, None, None, None


def machines_release(st: SimState, job: Job, now: float | None = None) -> None:
    """Free `job`'s machines at `now` [s] (default: the clock) and set its runtime."""
    if now is None:
        now = st.now
    mstate = st.mstate
    for mid in job.alloc_ids:
        ms = mstate[mid]
        ms.jobs.discard(job)
        if not ms.jobs and ms.state != "unavailable":   # an unavailable one stays so (events)
            ms.set_state("idle", now)
    if st.states is not None:
        st.states.job_ended(now, job.alloc_ids, mstate)
    if st.paje is not None:
        st.paje.job_ended(now, job.alloc_ids, mstate, job)
    job.runtime = LD(now) - job.starting_time
    if job.runtime == 0:
        job.runtime = LD("1e-5")


#: profile types of one SimGrid activity each: the bridged core runs them with `start_exec`, the others
#: (delay, composed) as a program of such steps (`program`)
SINGLE_ACTIVITY = frozenset(("parallel_homogeneous", "parallel_homogeneous_total", "parallel",
                             "parallel_homogeneous_pfs", "data_staging"))
#: the bridged core's program nodes (`native/simbridge.cpp`)
_EXEC, _SLEEP, _SEQ, _ERROR = 0, 1, 2, 3
#: `SimJob.actor` of a job the bridged core runs (it has no actor)
BRIDGED = "bridged"


def dispatch(st: SimState, job: Job, host) -> None:
    """Run `job` in an actor on `host` (its first allocated machine), as Batsim does. Finished job
    actors are kept, parked on a semaphore, and reused: one parked on `host`, else a new one there (up to
    `MAX_WORKERS`), else one moved there. Creating a SimGrid actor (a thread) per job costs more than the
    job's own activities; moving a parked one costs a simulation call each time, a new one its creation.
    With the bridged core (`st.bridge`), no actor: `start_bridged`."""
    if st.bridge is not None:
        start_bridged(st, job, host)
        return
    idle = st.idle_workers.get(host)
    if not idle and st.nb_workers >= MAX_WORKERS:
        idle = next(iter(st.idle_workers.values()), None)
    st.nb_executing += 1
    if idle:
        w = idle.pop()
        if not idle:
            del st.idle_workers[w.host]
        w.job, w.host = job, host
        job.actor = w.actor
        w.sem.release()   # one simulation call of the server, as Batsim's creation of the job's actor
        return
    st.nb_workers += 1
    w = _Worker(st.sg.Semaphore(0))
    w.job, w.host = job, host
    # not daemonized: that would be a simulation call of the server's more than Batsim's creation of the
    # job's actor; the parked ones are let go when the server ends (`release_workers`)
    w.actor = job.actor = st.sg.Actor.create("job_executor", host, worker_loop, st, w)


def release_workers(st: SimState) -> None:
    """End the parked job actors (the server's last act: after SIMULATION_ENDS was acknowledged)."""
    for parked in st.idle_workers.values():
        for w in parked:
            w.job = None
            w.sem.release()
    st.idle_workers.clear()


def worker_loop(st: SimState, w: "_Worker") -> None:
    """A job actor: runs the job it was created for at once (as Batsim's new actor does), then parks on
    its semaphore until `dispatch` hands it the next one."""
    this_actor = st.sg.this_actor
    while True:
        job, w.job = w.job, None
        st.guarded(job_body, st, job, w.host)
        if st.end_ack:
            return
        st.idle_workers.setdefault(w.host, []).append(w)
        w.sem.acquire()
        if w.job is None:           # let go at the end of the simulation (`release_workers`)
            return
        if this_actor.get_host() != w.host:
            this_actor.set_host(w.host)


def job_body(st: SimState, job: Job, host) -> None:
    """Execute `job` from an actor on `host` (its first allocated machine), then end it (`end_job`)."""
    job.composed_stack = []
    remaining = [float(job.walltime)]
    if st.energy is not None:
        st.energy.job_started(job)
    ret = run_profile(st, job, job.profile, remaining)
    if st.cfg.no_sched:
        end_unheard(st, job, ret)
        return
    end_job(st, job, ret, st.now)


def end_unheard(st: SimState, job: Job, ret: int) -> None:
    """--no-sched (`batexec`): the end of `job` without a message (there is no server); its task cancelled if
    it was left running at its walltime (its actor ends now). After the last job, the parked job actors are
    let go and the simulation ends."""
    end_job(st, job, ret, st.now, put=False)
    if job.orphan is not None:
        job.orphan.cancel()
        job.orphan = None
    st.nb_executing -= 1
    st.batexec_left -= 1
    if st.batexec_left == 0:
        st.end_ack = True
        st.end_clock = st.now
        release_workers(st)


def end_job(st: SimState, job: Job, ret: int, t: float, put: bool = True) -> None:
    """The end of `job`, for both cores, at `t` [s] with return code `ret`: its final state, its machines
    freed, and (`put`: the actor core's job actor) its message to the server sent (`post_to_server`);
    under the bridged core the job's C++ actor sends it (`absorb`)."""
    if ret == 0:
        job.state = "COMPLETED_SUCCESSFULLY"
    elif ret > 0:
        job.state = "COMPLETED_FAILED"
    else:
        job.state = "COMPLETED_WALLTIME_REACHED"
    job.return_code = ret
    job.activity = None
    if ret < 0 and st.paje is not None:     # Batsim's executor: a kill event for -1 (walltime) and -2
        st.paje.job_killed(t, job)
    machines_release(st, job, t)
    if st.energy is not None:
        st.energy.job_ended(job)
    if put:
        post_to_server(st, job)


def post_to_server(st: SimState, item) -> None:
    """Send, from a Python actor, the 1-byte message standing for `item` (a job that ended, or a machine's
    switch, `energy`) to the server's mailbox: a blocking put, as Batsim's job actor does."""
    put(st, item)


def start_bridged(st: SimState, job: Job, host) -> None:
    """The bridged core (docs/simulator-core.md): run `job` in a C++ actor of the bridge on `host` (its first
    allocated machine) that makes the SimGrid calls of `job_body` — ``exec_init`` + ``wait_for(walltime)``
    for the job's parallel task, ``cancel`` on timeout, the message to the server's mailbox — and records
    the end, which the server applies (`absorb`). A delay or composed profile runs as a program of such
    steps (`program`), in the same order as `run_profile`."""
    prof = job.profile
    job.composed_stack = []
    job.current_profile = prof
    key = st.next_key
    st.next_key += 1
    st.keyed[key] = job
    hidx = st.host_index
    job.actor = BRIDGED
    job.bkey = key
    job.activity = key
    st.nb_executing += 1
    job.activity_kind = "exec"
    if prof.type in SINGLE_ACTIVITY:
        job.program = None
        hosts, flops, nbytes = ptask(st, job, prof)
        st.bridge.start_exec(key, hidx[host], [hidx[h] for h in hosts], flops, nbytes, float(job.walltime),
                             prof.ret, job)
    else:
        nodes = program(st, job, prof)
        st.bridge.start_program(key, hidx[host], nodes, float(job.walltime), job)
    absorb(st)


def program(st: SimState, job: Job, prof) -> list[tuple]:
    """The bridged core's program of `job` whose profile `prof` is a delay or a composed one: its nodes
    for ``start_program`` (`native/simbridge.cpp`), the root first — a parallel task (host indices, flops
    per host, bytes row-major: `ptask`), a delay [s], a composed profile (its steps' node indices, its
    ``repeat``) or an error step, each with its profile's return code. A profile used twice is one node:
    its parallel task is the same at each use (the job's allocation, mapping and storage mapping do not
    change while it runs, nor do the hosts' speeds without ``-E``). What `run_profile` raises when it
    reaches a step (a missing profile, a composed profile that contains itself, a bad parallel task)
    becomes an error step, raised when the job's actor reaches it (`absorb`). Sets `job.program`: the
    (profile, error message) of each node, for `job_progress` and `absorb`."""
    nodes: list[tuple] = []
    info: list[tuple] = []
    index: dict[str, int] = {}
    hidx = st.host_index

    def error(p, message: str) -> int:
        nodes.append((_ERROR, [], [], [], 0.0, [], 0, 0))
        info.append((p, message))
        return len(nodes) - 1

    def node(p, open_: tuple) -> int:
        if p.name in index:
            return index[p.name]
        t, d = p.type, p.data
        if t == "delay":
            nodes.append((_SLEEP, [], [], [], float(d["delay"]), [], 0, p.ret))
            info.append((p, None))
            i = index[p.name] = len(nodes) - 1
            return i
        if t == "composed":
            i = len(nodes)
            nodes.append(None)
            info.append((p, None))
            steps = []
            for name in d["seq"]:
                sub = job.workload.profiles.get(name)
                if sub is None:
                    steps.append(error(p, f"job '{job.id}': composed profile '{p.name}' uses profile "
                                          f"'{name}', which does not exist"))
                elif sub.name in open_:
                    steps.append(error(p, f"job '{job.id}': composed profile '{sub.name}' contains itself"))
                else:
                    steps.append(node(sub, open_ + (sub.name,)))
            nodes[i] = (_SEQ, [], [], [], 0.0, steps, int(d.get("repeat", 1)), p.ret)
            index[p.name] = i
            return i
        try:
            hosts, flops, nbytes = ptask(st, job, p)
        except SimulationError as exc:
            return error(p, str(exc))
        nodes.append((_EXEC, [hidx[h] for h in hosts], flops, nbytes, 0.0, [], 0, p.ret))
        info.append((p, None))
        i = index[p.name] = len(nodes) - 1
        return i

    node(prof, (prof.name,))
    job.program = info
    return nodes


def absorb(st: SimState) -> None:
    """Apply the ends the bridged core's job actors recorded during the server's last simulation call, in
    the order they ran — what the actor core's job actors do in Python at that point (`end_job`). Called
    after every simulation call of the server under the bridged core."""
    if not st.bridge.pending():
        return
    for key, t, ret, error_step in st.bridge.take():
        job = st.keyed.pop(key)
        if error_step >= 0:
            raise SimulationError(job.program[error_step][1])
        end_job(st, job, ret, t, put=False)


def run_profile(st: SimState, job: Job, prof, remaining: list[float]) -> int:
    """Execute `prof` for `job`; `remaining[0]` is the time left before the walltime (< 0: none).
    Returns the return code: the profile's `ret`, or -1 when the walltime is reached."""
    sg = st.sg
    job.current_profile = prof
    t = prof.type
    d = prof.data
    if t == "delay":
        delay = float(d["delay"])
        job.activity_kind, job.activity_start, job.activity_amount = "sleep", st.now, delay
        rem = remaining[0]
        if rem < 0 or delay < rem:
            sg.this_actor.sleep_for(delay)
            if rem > 0:
                remaining[0] = rem - delay
            return prof.ret
        sg.this_actor.sleep_for(rem)
        remaining[0] = 0.0
        return -1
    if t == "composed":
        for _ in range(d.get("repeat", 1)):
            for index, name in enumerate(d["seq"]):
                sub = job.workload.profiles.get(name)
                if sub is None:
                    raise SimulationError(f"job '{job.id}': composed profile '{prof.name}' uses profile "
                                          f"'{name}', which does not exist")
                job.composed_stack.append((prof, index))
                ret = run_profile(st, job, sub, remaining)
                job.composed_stack.pop()
                if ret != 0:
                    return ret
        return prof.ret
    # Batsim's parallel task (a data staging's too): exec_init, then wait or wait_for, which start it
    hosts, flops, nbytes = ptask(st, job, prof)
    ex = sg.this_actor.exec_init(hosts, flops, nbytes)
    job.activity, job.activity_kind = ex, "exec"
    rem = remaining[0]
    if rem < 0:
        ex.wait()
        return prof.ret
    t0 = st.now
    try:
        ex.wait_for(rem)
    except sg.TimeoutException:
        # Batsim 4.2.1 does not cancel it (task_execution.cpp): it goes on loading its hosts and links until
        # the job's actor ends, right after the server has received the job's message (`loop.handle`)
        job.orphan = ex
        remaining[0] = 0.0
        return -1
    remaining[0] = rem - (st.now - t0)
    return prof.ret


def staging_machines(st: SimState, job: Job, d: dict) -> tuple[int, int]:
    """(source, destination) machine ids of a data_staging profile, from the job's storage_mapping."""
    return (storage_machine(st, job, d["from"], "a data staging task"),
            storage_machine(st, job, d["to"], "a data staging task"))


def storage_machine(st: SimState, job: Job, label: str, what: str) -> int:
    sm = job.storage_mapping
    if label not in sm:
        raise SimulationError(f"Cannot generate {what} for job '{job.id}': Unknown storage label='{label}' "
                              "(give it in the EXECUTE_JOB's storage_mapping)")
    mid = sm[label]
    if st.mstate[mid].m.kind != "storage":
        raise SimulationError(f"Cannot generate {what} for job '{job.id}': The host(id={mid}, "
                              f"name='{st.mstate[mid].m.name}') pointed to by label='{label}' is not a "
                              "storage host")
    return mid


def ptask(st: SimState, job: Job, prof):
    """(hosts, flops per host, bytes matrix row-major sender×receiver) of a parallel profile, as Batsim's
    task_execution.cpp builds them (a homogeneous profile's matrix under the run's network model:
    `network.homogeneous_bytes`, docs/io-model.md §5)."""
    t, d = prof.type, prof.data
    alloc = list(job.alloc_ids)
    if job.mapping is not None:
        alloc = [alloc[k] for k in job.mapping]
    hosts = [st.mstate[mid].host for mid in alloc]
    n = len(hosts)
    if t in ("parallel_homogeneous", "parallel_homogeneous_total"):
        cpu, com = float(d["cpu"]), float(d["com"])
        if t == "parallel_homogeneous_total":
            cpu, com = cpu / n, com / n
        flops = [cpu] * n
        nbytes = homogeneous_bytes(n, com, st.cfg.network_model)
        if st.cfg.network_model == "uncontended" and com > 0 and n > 1:
            flops = uncontended_flops(st, alloc, hosts, cpu, com)
    elif t == "parallel":
        if len(d["cpu"]) != n:
            raise SimulationError(f"job '{job.id}': the number of resources given by the allocation ({n}) is "
                                  f"different from the number of resources given by the profile data "
                                  f"({len(d['cpu'])})")
        flops = [float(x) for x in d["cpu"]]
        nbytes = [float(x) for x in d["com"]]
    elif t == "parallel_homogeneous_pfs":
        label = d.get("storage", "pfs")
        if not job.storage_mapping:
            storages = [ms for ms in st.mstate if ms.m.kind == "storage"]
            if len(storages) != 1:
                raise SimulationError(f"Cannot generate a homogeneous parallel task with pfs for job "
                                      f"'{job.id}': No storage/host mapping given and there is no (or more "
                                      "than one) storage node available")
            mid = storages[0].m.id
        else:
            mid = storage_machine(st, job, label, "a homogeneous parallel task with pfs")
        hosts = hosts + [st.mstate[mid].host]
        read, write = float(d.get("bytes_to_read", 0)), float(d.get("bytes_to_write", 0))
        m = n + 1
        flops = [0.0] * m
        if read > 0 or write > 0:
            nbytes = []
            for row in range(m):
                for col in range(m):
                    if col == row or (col != n and row != n):
                        nbytes.append(0.0)
                    elif col == n:
                        nbytes.append(write)
                    else:
                        nbytes.append(read)
        else:
            nbytes = []
        return hosts, flops, nbytes
    elif t == "data_staging":
        src, dst = staging_machines(st, job, d)
        hosts = [st.mstate[src].host, st.mstate[dst].host]
        nb = float(d["nb_bytes"])
        return hosts, [0.0, 0.0], ([0.0, nb, 0.0, 0.0] if nb > 0 else [])
    else:  # pragma: no cover (parse_profile rejects the others)
        raise SimulationError(f"job '{job.id}': profile type {t!r} cannot be executed")
    for k, mid in enumerate(alloc):
        if abs(flops[k]) > 1e-10 and st.mstate[mid].m.kind != "compute":
            ms = st.mstate[mid]
            raise SimulationError(f"Some computation ({flops[k]:g}) is assigned to storage node (id={mid}, "
                                  f"name='{ms.m.name}') (job '{job.id}')")
    return hosts, flops, nbytes


def uncontended_flops(st: SimState, alloc: list[int], hosts: list, cpu: float, com: float) -> list[float]:
    """Flops per host of a homogeneous phase under ``--network-model uncontended`` (docs/io-model.md §5):
    each host computes for the phase's duration alone on the network (`network.uncontended_seconds`) at
    its current speed."""
    key = (tuple(alloc), com)          # a job's phases share both: n route look-ups per job
    alone = st.ring_alone.get(key)
    if alone is None:
        if len(st.ring_alone) >= 4096:
            st.ring_alone.clear()
        alone = st.ring_alone[key] = ring_alone(hosts, com)
    speeds = [h.speed for h in hosts]
    try:
        seconds = uncontended_seconds(cpu, speeds, *alone)
    except ValueError as exc:
        raise SimulationError(f"cannot time the phase under the uncontended network model: {exc}") from None
    return [s * seconds for s in speeds]


def job_progress(st: SimState, job: Job) -> tuple[dict, bool]:
    """(The progress of running `job` as JOB_KILLED reports it, Batsim's ``compute_job_progress``; whether
    the job is in a parallel task now, which Batsim's ``cancel_ptask`` would cancel)."""
    node = {"profile_name": (job.current_profile or job.profile).name}
    act = job.activity
    frac = 0.0
    in_ptask = False
    if job.actor == BRIDGED and act is not None:
        if job.program is None:                          # one parallel task (`start_exec`)
            frac = 1.0 - float(st.bridge.exec_remaining_ratio(act))
            in_ptask = True
        else:                                            # a program: where its actor is
            stack, leaf, kind, start = st.bridge.where(act)
            if leaf >= 0:
                prof = job.program[leaf][0]
                node["profile_name"] = prof.name
                if kind == _EXEC:
                    frac = 1.0 - float(st.bridge.exec_remaining_ratio(act))
                    in_ptask = True
                elif kind == _SLEEP and float(prof.data["delay"]) > 0:
                    frac = (st.now - start) / float(prof.data["delay"])
            job.composed_stack = [(job.program[i][0], k) for i, k in stack]
        absorb(st)
    elif job.activity_kind == "exec" and act is not None:
        in_ptask = True
        try:
            frac = 1.0 - float(act.remaining_ratio)
        except Exception:  # noqa: BLE001 (an activity already gone)
            frac = 0.0
    elif job.activity_kind == "sleep" and job.activity_amount > 0:
        frac = (st.now - job.activity_start) / job.activity_amount
    node["progress"] = min(max(frac, 0.0), 1.0)
    for prof, index in reversed(job.composed_stack):
        node = {"profile_name": prof.name, "current_task_index": index, "current_task": node}
    return node, in_ptask


def kill_jobs(st: SimState, to_kill: list[Job]) -> tuple[dict, list[Job]]:
    """Stop the actors of the RUNNING jobs of `to_kill` now (COMPLETED_KILLED, machines released).
    Returns (progress of each killed job by id, as KILL_JOB reports it; the killed jobs)."""
    progress, killed = {}, []
    for job in to_kill:
        if job.state != "RUNNING":
            continue
        progress[job.id], in_ptask = job_progress(st, job)
        if job.state != "RUNNING":      # it ended meanwhile (bridged core: `absorb`)
            continue
        if job.actor == BRIDGED:
            st.keyed.pop(job.bkey, None)
            st.bridge.kill(job.bkey)
            absorb(st)
        else:
            job.actor.kill()
        st.nb_executing -= 1
        job.actor = job.activity = None
        job.state = "COMPLETED_KILLED"
        # Batsim's killer_process: a running parallel task is cancelled, and the job's executor ends it with
        # -2; otherwise (a delay) the executor is killed and the job keeps its initial -1 (jobs.hpp)
        job.return_code = -2 if in_ptask else -1
        if in_ptask and st.paje is not None:    # the executor ends it (-2) and traces the kill; a killed
            st.paje.job_killed(st.now, job)     # actor (a delay) traces none
        machines_release(st, job)
        if st.energy is not None:
            st.energy.job_ended(job)
        killed.append(job)
    return progress, killed
