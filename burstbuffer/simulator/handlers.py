"""The handlers of the scheduler's requests (Batsim's JsonProtocolReader and server handlers): EXECUTE_JOB,
REJECT_JOB, KILL_JOB, CALL_ME_LATER, REGISTER_PROFILE / REGISTER_JOB (dynamic jobs), SET_JOB_METADATA,
NOTIFY, CHANGE_JOB_STATE, TO_JOB_MSG, SET_RESOURCE_STATE and QUERY.

Each ``ev_<type>(st, i, data)`` checks event `i`'s `data` as Batsim checks it (a violation raises
`SimulationError`, one line) and applies it to the state `st`; starting and killing the job actors is
`execution`'s. `HANDLERS` maps each event type to its handler. SET_RESOURCE_STATE and QUERY are `energy`'s
with ``-E``; without it they stop the simulation, as Batsim does without energy. Machines made unavailable
by external events are `events`'.
"""
from __future__ import annotations

from . import masters
from .execution import dispatch, kill_jobs
from .jsonnumbers import rewritten
from .protocol import dumps, is_number, parse_allocation
from .state import LD, SimState, SimulationError
from .workload import DefinitionError, Workload, parse_job, parse_profile, split_job_id
from .workload import SimJob as Job


def job_of(st: SimState, i: int, etype: str, job_id) -> Job:
    if not isinstance(job_id, str):
        raise SimulationError(f"Invalid JSON message: in event {i} ({etype}): 'job_id' should be a string")
    try:
        wl, name = split_job_id(job_id)
    except DefinitionError:
        raise SimulationError(f"Invalid JSON message: in event {i} ({etype}): invalid job id '{job_id}' "
                              "(expected WORKLOAD!NAME)") from None
    w = st.workloads.get(wl)
    job = w.jobs.get(name) if w else None
    if job is None:
        if w is not None and name in w.met:
            raise SimulationError(f"{etype}: job '{job_id}' does not exist anymore (it ended and was "
                                  "reported in an earlier message)")
        raise SimulationError(f"{etype}: job '{job_id}' does not exist")
    return job


def data_of(i: int, etype: str, data) -> dict:
    if not isinstance(data, dict):
        raise SimulationError(f"Invalid JSON message: the 'data' value of event {i} ({etype}) should be "
                              "an object")
    return data


def killing_done(st: SimState, to_kill: list[Job], killed: list[Job], progress: dict) -> None:
    for job in killed:
        st.nb_running -= 1
        st.nb_completed += 1
        st.append(st.now, "JOB_COMPLETED", {"job_id": job.id, "job_state": job.state,
                                            "return_code": job.return_code,
                                            "alloc": str(job.allocation)})
        st.job_ended(job)
    st.append(st.now, "JOB_KILLED", {"job_ids": [j.id for j in to_kill], "job_progress": progress})


def dyn_check(st: SimState, what: str) -> None:
    if not st.cfg.dynamic_jobs:
        raise SimulationError(f"Invalid JSON message: dynamic {what} registration received but the option "
                              "seems disabled... It can be activated with the '--enable-dynamic-jobs' "
                              "command line option.")
    if st.registration_finished:
        raise SimulationError(f"Invalid JSON message: dynamic {what} registration received but a "
                              "registration_finished message has already been received")


def ev_execute_job(st: SimState, i: int, data) -> None:
    data = data_of(i, "EXECUTE_JOB", data)
    for k in data:
        if k not in ("job_id", "alloc", "mapping", "storage_mapping"):
            raise SimulationError(f"EXECUTE_JOB (event {i}): field '{k}' is not supported by the embedded "
                                  "simulator")
    job = job_of(st, i, "EXECUTE_JOB", data.get("job_id"))
    if "alloc" not in data:
        raise SimulationError(f"Invalid JSON message: the 'data' value of event {i} (EXECUTE_JOB) should "
                              "contain a 'alloc' key.")
    try:
        alloc, ids, text = parse_allocation(data["alloc"])
    except ValueError as exc:
        raise SimulationError(f"Invalid JSON message: EXECUTE_JOB (event {i}): {exc}") from None
    if not ids:
        raise SimulationError(f"Invalid JSON message: in event {i} (EXECUTE_JOB): the number of allocated "
                              "resources should be strictly positive (got 0).")
    n_machines = len(st.mstate)
    if ids[-1] >= n_machines:
        raise SimulationError(f"Job '{job.id}': invalid allocation {data['alloc']!r}: machine {ids[-1]} "
                              f"does not exist (there are {n_machines} resources)")
    mapping = None
    if "mapping" in data:
        mp = data["mapping"]
        if not isinstance(mp, dict) or not mp:
            raise SimulationError(f"Invalid JSON message: the 'mapping' of event {i} (EXECUTE_JOB) must be "
                                  "a non-empty object")
        try:
            pairs = sorted((int(k), int(v)) for k, v in mp.items())
        except (TypeError, ValueError):
            raise SimulationError(f"Invalid JSON message: Invalid 'mapping' object of event {i} "
                                  "(EXECUTE_JOB): all keys and values must be integers") from None
        for rank, (ex, res) in enumerate(pairs):
            if ex != rank:
                raise SimulationError(f"Invalid JSON message: Invalid 'mapping' object of event {i} "
                                      f"(EXECUTE_JOB): no resource associated to executor {rank}.")
            if not 0 <= res < len(alloc):
                raise SimulationError(f"Invalid JSON message: Invalid 'mapping' object of event {i} "
                                      f"(EXECUTE_JOB): executor {ex} should use the {res}-th resource within "
                                      f"the allocation, but there are only {len(alloc)} allocated resources.")
        mapping = [res for _, res in pairs]
    storage_mapping = {}
    if "storage_mapping" in data:
        sm = data["storage_mapping"]
        if not isinstance(sm, dict) or not sm:
            raise SimulationError(f"Invalid JSON message: the 'storage_mapping' of event {i} (EXECUTE_JOB) "
                                  "must be a non-empty object")
        for k, v in sm.items():
            if not isinstance(v, int) or isinstance(v, bool):
                raise SimulationError(f"Invalid JSON message: Invalid 'storage_mapping' of event {i} "
                                      "(EXECUTE_JOB): a value is not an integer")
            if not 0 <= v < n_machines:
                raise SimulationError(f"Job '{job.id}': storage_mapping '{k}' -> {v}: machine {v} does not "
                                      "exist")
        storage_mapping = dict(sm)
    if job.state != "SUBMITTED":
        raise SimulationError(f"Cannot execute job '{job.id}': its state ({job.state}) is not "
                              "JOB_STATE_SUBMITTED.")
    if job.profile.type != "parallel_homogeneous_total":
        n = len(mapping) if mapping is not None else len(alloc)
        if n != job.res:
            what = "custom mapping size" if mapping is not None else "allocation size"
            raise SimulationError(f"Job '{job.id}' allocation is invalid. The job requires {job.res} machines "
                                  f"but the {what} is {n} ({data['alloc']}).")
    if not st.cfg.compute_sharing or not st.cfg.storage_sharing:
        for mid in ids:
            ms = st.mstate[mid]
            if ms.jobs and ((ms.m.kind == "compute" and not st.cfg.compute_sharing)
                            or (ms.m.kind == "storage" and not st.cfg.storage_sharing)):
                others = ", ".join(sorted(j.id for j in ms.jobs))
                raise SimulationError(
                    f"Job '{job.id}': Invalid allocation: machine {mid} ('{ms.m.name}') is currently "
                    f"computing jobs (these ones: {{{others}}}) whereas time-sharing on "
                    f"{ms.m.kind} machines is disabled")
    if st.energy is not None:
        st.energy.check_allocation(job, alloc, data["alloc"])
    start_job(st, job, alloc, ids, text, mapping, storage_mapping)
    dispatch(st, job, st.mstate[ids[0]].host)


def start_job(st: SimState, job: Job, alloc, ids, text: str, mapping=None, storage_mapping=None) -> None:
    """`job` starts now on machines `ids` (`alloc` as a ProcSet, `text` as Batsim prints it), with its
    executors' `mapping` (None: one per machine) and `storage_mapping`: it is running, its machines
    computing, a machine-states row written (Batsim's ``update_machines_on_job_run``). Its actor is the
    caller's to start (`execution.dispatch`)."""
    job.state = "RUNNING"
    job.allocation, job.alloc_ids, job.alloc_text = alloc, ids, text
    job.storage_mapping = {} if storage_mapping is None else storage_mapping
    job.mapping = mapping
    job.starting_time = LD(st.now)
    st.nb_running += 1
    now = st.now
    mstate = st.mstate
    for mid in ids:
        ms = mstate[mid]
        ms.set_state("computing", now)
        ms.jobs.add(job)
    if st.states is not None:
        st.states.job_started(now, ids, mstate)
    if st.paje is not None:
        st.paje.job_started(now, ids, mstate, job)


def ev_reject_job(st: SimState, i: int, data) -> None:
    data = data_of(i, "REJECT_JOB", data)
    job = job_of(st, i, "REJECT_JOB", data.get("job_id"))
    if job.state != "SUBMITTED":
        raise SimulationError(f"Invalid rejection received: job '{job.id}' cannot be rejected at the present "
                              "time. To be rejected, a job must be submitted and not allocated yet.")
    job.state = "REJECTED"
    st.nb_completed += 1
    st.job_ended(job)


def ev_kill_job(st: SimState, i: int, data) -> None:
    data = data_of(i, "KILL_JOB", data)
    ids = data.get("job_ids")
    if not isinstance(ids, list) or not ids:
        raise SimulationError(f"Invalid JSON message: the 'job_ids' array in the 'data' value of event {i} "
                              "(KILL_JOB) should be a non-empty array.")
    to_kill = []
    for jid in ids:
        job = job_of(st, i, "KILL_JOB", jid)
        if job.kill_requested:
            continue
        if not (job.state == "RUNNING" or job.is_complete):
            raise SimulationError(f"Invalid KILL_JOB: job_id '{job.id}' refers to a job not being executed "
                                  "nor completed.")
        job.kill_requested = True
        to_kill.append(job)
    if not to_kill:
        return
    # Batsim's killer actor kills now and reports (KILLING_DONE) by a message of its own.
    progress, killed = kill_jobs(st, to_kill)
    st.nb_killers += 1
    masters.at_times(st, "killer_process", [(st.now, ("KILLED", to_kill, killed, progress))])


def ev_call_me_later(st: SimState, i: int, data) -> None:
    data = data_of(i, "CALL_ME_LATER", data)
    target = data.get("timestamp")
    if not is_number(target):
        raise SimulationError(f"Invalid JSON message: the 'timestamp' value in the 'data' value of event {i} "
                              "(CALL_ME_LATER) should be a number.")
    now = st.now
    if not target > now:
        raise SimulationError(f"You asked to be awaken in the past! (you ask: {target:f}, it is: {now:f})")
    st.nb_waiters += 1
    # Batsim's waiter sleeps target - now, at least 1e-5 s (jobs_execution.cpp, waiter_process)
    masters.waiter(st, float(target))


def ev_register_profile(st: SimState, i: int, data) -> None:
    dyn_check(st, "profile")
    data = data_of(i, "REGISTER_PROFILE", data)
    wname, pname, prof = data.get("workload_name"), data.get("profile_name"), data.get("profile")
    if not isinstance(wname, str) or not isinstance(pname, str) or not isinstance(prof, dict):
        raise SimulationError(f"Invalid JSON message: REGISTER_PROFILE (event {i}) needs a string "
                              "'workload_name', a string 'profile_name' and an object 'profile'")
    wl = st.workloads.get(wname)
    if wl is None:
        wl = st.workloads[wname] = Workload(wname, "")
    if pname in wl.profiles:
        raise SimulationError(f"Invalid profile registration: the profile '{pname}' of workload '{wname}' "
                              "that was registered has already been registered (old profile: "
                              f"{dumps(wl.profiles[pname].data)})")
    try:
        # Batsim writes the profile back as text (doubles as %f) and reads it again: Profile::from_json
        wl.profiles[pname] = parse_profile(pname, rewritten(prof), wl.profiles)
    except DefinitionError as exc:
        raise SimulationError(f"Invalid JSON profile received from the scheduler: workload '{wname}': "
                              f"{exc}") from None


def ev_register_job(st: SimState, i: int, data) -> None:
    dyn_check(st, "job")
    data = data_of(i, "REGISTER_JOB", data)
    jid = data.get("job_id")
    if not isinstance(jid, str):
        raise SimulationError(f"Invalid JSON message: in event {i} (REGISTER_JOB): ['data']['job_id'] "
                              "should be a string")
    try:
        wname, name = split_job_id(jid)
    except DefinitionError as exc:
        raise SimulationError(f"REGISTER_JOB (event {i}): {exc}") from None
    wl = st.workloads.get(wname)
    if wl is None:
        raise SimulationError(f"REGISTER_JOB (event {i}): workload '{wname}' of job '{jid}' does not exist "
                              "(register a profile in it first)")
    if name in wl.met:
        raise SimulationError(f"Cannot register new job '{jid}', it already exists in the workload.")
    desc = data.get("job")
    if not isinstance(desc, dict):
        raise SimulationError(f"Invalid JSON message: in event {i} (REGISTER_JOB): ['data']['job'] should "
                              "be an object")
    try:
        job = parse_job(rewritten(desc), wl, expected_id=jid)  # as the profile's, Job::from_json
    except DefinitionError as exc:
        raise SimulationError(f"Invalid JSON job submitted by the scheduler: {exc}") from None
    wl.jobs[name] = job
    wl.met.add(name)
    job.state = "SUBMITTED"
    st.nb_submitted += 1
    if st.cfg.ack_dynamic_jobs:
        st.announce(job)


def ev_set_job_metadata(st: SimState, i: int, data) -> None:
    data = data_of(i, "SET_JOB_METADATA", data)
    job = job_of(st, i, "SET_JOB_METADATA", data.get("job_id"))
    md = data.get("metadata")
    if not isinstance(md, str):
        raise SimulationError(f"Invalid JSON message: the 'metadata' value in the 'data' value of event {i} "
                              "(SET_JOB_METADATA) should be a string.")
    if '"' in md:
        raise SimulationError(f"Invalid JSON message: the 'metadata' value in the 'data' value of event {i} "
                              f"(SET_JOB_METADATA) should not contain double quotes (got ###{md}###)")
    job.metadata = md


def ev_notify(st: SimState, i: int, data) -> None:
    data = data_of(i, "NOTIFY", data)
    t = data.get("type")
    if t == "registration_finished":
        st.registration_finished = True
    elif t == "continue_registration":
        st.registration_finished = False
    else:
        raise SimulationError(f"Unknown NOTIFY type received ('{t}').")


def ev_change_job_state(st: SimState, i: int, data) -> None:
    data = data_of(i, "CHANGE_JOB_STATE", data)
    job = job_of(st, i, "CHANGE_JOB_STATE", data.get("job_id"))
    new = data.get("job_state")
    allowed = ("RUNNING", "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED",
               "COMPLETED_KILLED", "REJECTED")
    if new not in allowed:
        raise SimulationError(f"Invalid JSON message: in event {i} (CHANGE_JOB_STATE): "
                              f"['data']['job_state'] must be one of: {{{', '.join(allowed)}}}")
    if job.state == "SUBMITTED" and new == "RUNNING":
        job.starting_time = LD(st.now)
        st.nb_running += 1
    elif job.state == "SUBMITTED" and new == "REJECTED":
        job.state = new
        st.nb_completed += 1
        st.job_ended(job)
    elif job.state == "RUNNING" and new.startswith("COMPLETED"):
        if job.actor is not None:
            raise SimulationError(f"CHANGE_JOB_STATE: job '{job.id}' is being executed by the simulator; "
                                  "kill it instead")
        job.runtime = LD(st.now) - job.starting_time
        job.state = new
        st.nb_running -= 1
        st.nb_completed += 1
        st.job_ended(job)
    else:
        raise SimulationError(f"CHANGE_JOB_STATE: cannot change job '{job.id}' from {job.state} to {new}")
    job.state = new


def ev_to_job_msg(st: SimState, i: int, data) -> None:
    data = data_of(i, "TO_JOB_MSG", data)
    job_of(st, i, "TO_JOB_MSG", data.get("job_id"))


def ev_set_resource_state(st: SimState, i: int, data) -> None:
    if st.energy is None:
        raise SimulationError("Receiving a pstate modification request, which is forbidden as the simulator "
                              "has no energy support (run it with -E)")
    st.energy.set_resource_state(i, data)


def ev_query(st: SimState, i: int, data) -> None:
    if st.energy is None:
        raise SimulationError("Received a request about the energy consumption of the machines but energy "
                              "simulation is not enabled (run the simulator with -E).")
    st.energy.query(i, data)


#: The handler of each event type a scheduler may send.
HANDLERS = {
    "EXECUTE_JOB": ev_execute_job, "REJECT_JOB": ev_reject_job, "KILL_JOB": ev_kill_job,
    "CALL_ME_LATER": ev_call_me_later, "REGISTER_JOB": ev_register_job, "REGISTER_PROFILE": ev_register_profile,
    "SET_JOB_METADATA": ev_set_job_metadata, "NOTIFY": ev_notify, "CHANGE_JOB_STATE": ev_change_job_state,
    "TO_JOB_MSG": ev_to_job_msg, "SET_RESOURCE_STATE": ev_set_resource_state, "QUERY": ev_query,
}
