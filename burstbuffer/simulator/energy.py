"""Energy in the embedded simulator (``burstbuffer simulate -E``), as Batsim 4.2.1 does it with ``--energy``
(its ``machines.cpp``, ``pstate.cpp``, ``server.cpp`` — server_on_pstate_modification, server_on_switched,
server_on_sched_tell_me_energy —, ``jobs_execution.cpp`` and ``export.cpp``; docs/batsim.md §Energy).

SimGrid's host energy plugin (``sg_host_energy_plugin_init``, ``sg_host_get_consumed_energy``, ...) is not
in SimGrid 3.32's Python API: a small compiled module does those calls (``native/simenergy.cpp``, built on
first use and cached like the simulator's bridge; `load_native`). Without a C++ compiler or SimGrid's
headers, ``-E`` stops with one line (exit 2).

The platform (`check_platform`): every compute and storage host has ``wattage_per_state`` (one
``Idle:AllCores`` or ``Idle:Epsilon:AllCores`` watt triple per pstate of its ``speed`` list), optionally
``wattage_off`` and ``sleep_pstates`` (comma-separated ``sleep:off:on`` pstate triples: a sleep pstate and
the two virtual pstates a switch OFF / ON passes through). Every other pstate is a computation pstate, and
a compute host's must have a positive speed. A bad property is an InputError (file, host, reason).

At run time (`Energy`, ``SimState.energy``):

- SET_RESOURCE_STATE {resources, state}: a computation → computation change is immediate; computation →
  sleep and sleep → computation run, for each machine, an actor on the machine that sets the virtual
  pstate, computes 1 flop (so the switch lasts 1 / the virtual pstate's speed seconds and costs its
  wattage), sets the target pstate, and sends a message to the server (which crosses the network, as a
  job's completion). When every machine of one request has switched, RESOURCE_STATE_CHANGED {resources:
  the request's machines, state} goes to the scheduler. Machines are ``switching_off``/``sleeping``/
  ``switching_on`` meanwhile; a job may only be given idle or computing machines in a computation pstate.
- QUERY {"requests": {"consumed_energy": {}}} → ANSWER {"consumed_energy": J}, the platform's total.
- a job's ``consumed_energy`` (jobs.csv) is its machines' energy at its end minus at its start (long
  doubles, C's ``%Lf``);
- outputs: ``PREFIX_consumed_energy.csv`` (time, energy, event_type s/e/p, wattmin, epower) and
  ``PREFIX_pstate_changes.csv`` (time, machine_id, new_pstate; -1/-2 when a switch to a computation/sleep
  pstate starts), and in ``PREFIX_schedule.csv`` consumed_joules (energy at the last job end minus at the
  first job submission), nb_machine_switches, nb_grouped_switches.

Requests Batsim 4.2.1 mishandles (it logs an error and goes on in an inconsistent state, or aborts: a
switch of a computing or switching machine, a pstate the machine does not have) stop the simulation
with one line (SimulationError).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from procset import ProcSet

from ..errors import InputError
from ..fileio import open_output
from ..platforms.units import parse_speed
from .execution import post_to_server
from .protocol import parse_interval_set
from .state import LD, SimState, SimulationError

#: pstate kinds (Batsim's PStateType)
COMPUTATION, SLEEP, VIRTUAL = "computation", "sleep", "virtual"
#: Batsim's pstate-change trace value while a switch to a computation (-1) / sleep (-2) pstate runs
_TRANSIT = {COMPUTATION: -1, SLEEP: -2}

CONSUMED_ENERGY_HEADER = "time,energy,event_type,wattmin,epower\n"
PSTATE_CHANGES_HEADER = "time,machine_id,new_pstate\n"


def load_native():
    """The compiled energy module (``native/simenergy.cpp``), built on first use and cached as the
    simulator's bridge is (`_bridge.load_extension`). Raises NativeUnavailable (one line)."""
    from ._bridge import load_extension

    return load_extension("simenergy.cpp", "_bb_simenergy")


# ----------------------------------------------------------------------------------------------- platform

@dataclass
class MachinePower:
    """A machine's pstates as Batsim classifies them: `kinds[p]` (COMPUTATION, SLEEP or VIRTUAL) and, per
    sleep pstate, its (switch-off, switch-on) virtual pstates."""

    kinds: list[str]
    sleep: dict[int, tuple[int, int]] = field(default_factory=dict)


#: The largest power a host may draw in any state [W]: beyond it, energies over a run leave the range of a
#: double (SimGrid would take any double, and the run would fail on its first energy sum).
MAX_WATTS = 1e9


def _strtod_full(text: str) -> float:
    """SimGrid's xbt_str_parse_double: a number, leading blanks allowed, nothing after it."""
    if text != text.rstrip():
        raise ValueError(text)
    return float(text)


def _watts(text: str) -> float:
    """Watts of a power profile: `_strtod_full`, then a finite number in [0, MAX_WATTS] (ValueError else)."""
    v = _strtod_full(text)
    if not 0 <= v <= MAX_WATTS:          # also nan
        raise ValueError(f"{text.strip()!r} is not a power in [0, {MAX_WATTS:g}] W")
    return v


_INT_PREFIX = re.compile(r"\s*([+-]?\d+)")
_UINT = re.compile(r"\d+")


def check_platform(platform, machines) -> list[MachinePower]:
    """Check the energy properties of the compute and storage machines of `machines`
    (`platforms.simgrid_xml.Machines`, ids in order) as SimGrid's plugin and Batsim 4.2.1 do (module
    docstring); returns their `MachinePower` by machine id. Raises InputError(file, host, reason)."""
    out = []
    for m in machines.compute + machines.storage:
        h = platform.hosts[m.name]
        item = f"host {m.name!r}"

        def bad(reason, item=item):
            raise InputError(platform.path, item, reason)

        speeds = [s.strip() for s in h.speed.split(",")]
        n = len(speeds)
        watts = h.props.get("wattage_per_state")
        if watts is None:
            bad("no 'wattage_per_state' property (energy, -E, needs one on every compute and storage host)")
        parts = watts.split(",")
        if len(parts) != n:
            bad(f"'wattage_per_state' gives {len(parts)} power profiles for {n} pstates")
        for p, part in enumerate(parts):
            vals = part.split(":")
            if len(vals) not in (2, 3):
                bad(f"'wattage_per_state' of pstate {p} is {part.strip()!r}: expected Idle:AllCores or "
                    "Idle:Epsilon:AllCores")
            try:
                [_strtod_full(v) for v in vals]
            except ValueError:
                bad(f"'wattage_per_state' of pstate {p} is {part.strip()!r}: not numbers")
            try:
                [_watts(v) for v in vals]
            except ValueError as exc:
                bad(f"'wattage_per_state' of pstate {p}: {exc}")
        off = h.props.get("wattage_off")
        if off is not None:
            try:
                w = float(re.match(r"\s*[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?)", off).group(0))
            except (AttributeError, ValueError):
                bad(f"'wattage_off' is {off!r}: not a number")
            if not 0 <= w <= MAX_WATTS:
                bad(f"'wattage_off' is {off!r}: not a power in [0, {MAX_WATTS:g}] W")
        kinds: list[str | None] = [None] * n
        sleep: dict[int, tuple[int, int]] = {}
        sp = h.props.get("sleep_pstates")
        if sp is not None:
            for triple in [t for t in sp.split(",") if t != ""]:
                nums = [x for x in triple.split(":") if x != ""]
                if len(nums) != 3:
                    bad(f"'sleep_pstates' part {triple.strip()!r} is not three colon-separated pstates "
                        "(sleep:off:on)")
                nums = [x.strip() for x in nums]
                if not all(_UINT.fullmatch(x) for x in nums):
                    bad(f"'sleep_pstates' part {triple.strip()!r}: pstates must be unsigned integers")
                s, off_ps, on_ps = (int(x) for x in nums)
                for ps in (s, off_ps, on_ps):
                    if ps >= n:
                        bad(f"'sleep_pstates' part {triple.strip()!r}: pstate {ps} does not exist ({n} pstates)")
                if kinds[s] is not None:
                    bad(f"'sleep_pstates': pstate {s} is already a {kinds[s]} pstate")
                for v in (on_ps, off_ps):
                    if kinds[v] not in (None, VIRTUAL):
                        bad(f"'sleep_pstates': pstate {v} is a virtual transition pstate and a {kinds[v]} pstate")
                kinds[s] = SLEEP
                kinds[on_ps] = kinds[off_ps] = VIRTUAL
                if s in (on_ps, off_ps):
                    bad(f"'sleep_pstates' part {triple.strip()!r}: pstate {s} is both sleep and virtual")
                sleep[s] = (off_ps, on_ps)
        kinds = [k or COMPUTATION for k in kinds]
        if m.kind == "compute":
            for p, k in enumerate(kinds):
                if k != COMPUTATION:
                    continue
                try:
                    ok = parse_speed(speeds[p]) > 0
                except (ValueError, InputError):
                    ok = False
                if not ok:
                    bad(f"computation pstate {p} has a non-positive speed ({speeds[p]!r})")
        out.append(MachinePower(kinds, sleep))
    return out


# ---------------------------------------------------------------------------------------------- run time

class Switch:
    """One machine's switch ON or OFF in progress (its actor's message to the server stands for it)."""

    __slots__ = ("mid", "target", "state")

    def __init__(self, mid: int, target: int, state: str):
        self.mid, self.target, self.state = mid, target, state


class Energy:
    """The energy side of one run (module docstring): the compiled module `nat`, the machines' pstate
    kinds `power` (by machine id), the switches in progress and the energy output files."""

    def __init__(self, st: SimState, nat, power: list[MachinePower], prefix: str):
        self.st, self.nat, self.power = st, nat, power
        self.all = list(range(len(st.mstate)))
        nat.bind([ms.m.name for ms in st.mstate])
        self.switches: dict[int, list[list]] = {}    # target pstate -> [[all machines, still switching]]
        self.nb_switching = 0
        self.nb_grouped = self.nb_machine_switches = 0
        self.first_submission = LD(-1)
        self.last_completion = LD(-1)
        self.last_date = LD(0)
        self.last_energy = LD(0)
        self.before: dict = {}
        self.energy_csv = open_output(f"{prefix}_consumed_energy.csv", "w", encoding="utf-8", newline="")
        self.energy_csv.write(CONSUMED_ENERGY_HEADER)
        self.pstate_csv = open_output(f"{prefix}_pstate_changes.csv", "w", encoding="utf-8", newline="")
        self.pstate_csv.write(PSTATE_CHANGES_HEADER)
        by_pstate: dict[int, list[int]] = {}
        for mid in self.all:
            by_pstate.setdefault(nat.get_pstate(mid), []).append(mid)
        for ps in sorted(by_pstate):
            self.pstate_row(st.now, ProcSet(*by_pstate[ps]), ps)

    # -- energy readings (long doubles, Batsim's sums)
    def _ld(self, pair) -> LD:
        return LD(pair[0]) + LD(pair[1])

    def fmt(self, x: LD) -> str:
        hi = float(x)
        return self.nat.fmt_Lf(hi, float(x - LD(hi)))

    def consumed(self, mids) -> LD:
        return self._ld(self.nat.consumed(list(mids)))

    def total(self) -> LD:
        return self.consumed(self.all)

    # -- output files
    def pstate_row(self, now: float, mids: ProcSet, pstate: int) -> None:
        self.pstate_csv.write("%g,%s,%d\n" % (now, mids, pstate))

    def entry(self, kind: str) -> LD:
        """One `_consumed_energy.csv` row (Batsim's EnergyConsumptionTracer::add_entry); returns the total."""
        now = self.st.now
        energy = self.total()
        wattmin = self._ld(self.nat.wattmin(self.all))
        dt = LD(now) - self.last_date
        de = energy - self.last_energy
        epower = "%f" % float(de / dt) if dt > 0 else "NA"
        self.energy_csv.write(f"{'%f' % now},{self.fmt(energy)},{kind},{self.fmt(wattmin)},{epower}\n")
        self.last_date, self.last_energy = LD(now), energy
        return energy

    # -- jobs
    def first_job_submitted(self) -> None:
        if self.first_submission < 0:
            self.first_submission = self.total()

    def job_started(self, job) -> None:
        """In the job's actor, before its work starts (jobs_execution.cpp, execute_job_process)."""
        self.before[job] = self.consumed(job.allocation)
        self.entry("s")

    def job_ended(self, job) -> None:
        """After the job's machines were released (its actor's end, or the kill)."""
        before = self.before.pop(job, None)
        if before is None:
            return
        job.consumed_energy = self.fmt(self.consumed(job.allocation) - before)
        self.last_completion = self.entry("e")

    def received(self, item) -> bool:
        """The server received the message standing for `item`: a `Switch` is handled here (True); else
        False (a job's end, the caller's; a job's task left running at its walltime drew its hosts' watts
        until then, `loop.handle`)."""
        if type(item) is Switch:
            self.switched(item)
            return True
        return False

    def check_allocation(self, job, alloc, text: str) -> None:
        """EXECUTE_JOB: every machine idle or computing, in a computation pstate (server.cpp)."""
        for mid in alloc:
            ms = self.st.mstate[mid]
            if ms.state not in ("idle", "computing"):
                raise SimulationError(f"Job '{job.id}': Invalid job allocation ('{text}'): machine {mid} "
                                      f"(hostname='{ms.m.name}') cannot compute jobs now (the machine is not "
                                      f"computing nor idle, its state is '{ms.state}')")
            ps = self.nat.get_pstate(mid)
            if self.power[mid].kinds[ps] != COMPUTATION:
                raise SimulationError(f"Job '{job.id}': Invalid job allocation ('{text}'): machine {mid} "
                                      f"(hostname='{ms.m.name}') is not in a computation pstate (ps={ps})")

    # -- the scheduler's requests
    def set_resource_state(self, i: int, data) -> None:
        st = self.st
        what = f"event {i} (SET_RESOURCE_STATE)"
        _data_of_size(data, what, 2, "should")
        res = data.get("resources")
        if not isinstance(res, str):
            raise SimulationError(f"Invalid JSON message: the 'resources' value in the 'data' value of {what} "
                                  "should be a string.")
        try:
            mids = parse_interval_set(res)
        except ValueError as exc:
            raise SimulationError(f"Invalid JSON message: {exc}") from None
        if len(mids) == 0:
            raise SimulationError(f"Invalid JSON message: in {what}: the number of allocated resources should "
                                  "be strictly positive (got 0).")
        state = data.get("state")
        if not isinstance(state, str):
            raise SimulationError(f"Invalid JSON message: the 'state' value in the 'data' value of {what} "
                                  "should be a string.")
        mt = _INT_PREFIX.match(state)
        if mt is None or not -2**31 <= int(mt.group(1)) < 2**31:
            raise SimulationError(f"Invalid JSON message: the 'state' value in the 'data' value of {what} should "
                                  f"be a string corresponding to an integer (got '{state}')")
        pstate = int(mt.group(1))
        for mid in mids:
            if mid >= len(st.mstate):
                raise SimulationError(f"Cannot get machine {mid}: it does not exist")
            if not 0 <= pstate < len(self.power[mid].kinds):
                raise SimulationError(f"SET_RESOURCE_STATE: machine {mid} ('{st.mstate[mid].m.name}') has no "
                                      f"pstate {pstate}")
        now = st.now
        self.switches.setdefault(pstate, []).append([mids, set(mids)])
        self.entry("p")
        new_kind = self.power[mids.min].kinds[pstate]
        self.pstate_row(now, mids, _TRANSIT.get(new_kind, -42))
        self.nb_grouped += 1
        self.nb_machine_switches += len(mids)
        for mid in mids:
            ms = st.mstate[mid]
            kinds = self.power[mid].kinds
            cur = self.nat.get_pstate(mid)
            target_kind = kinds[pstate]
            if kinds[cur] == COMPUTATION and target_kind == COMPUTATION:
                self.nat.set_pstate(mid, pstate)
                done = self.mark_done(mid, pstate)
                if done is not None:
                    st.append(now, "RESOURCE_STATE_CHANGED", {"resources": str(done), "state": str(pstate)})
            elif kinds[cur] == COMPUTATION and target_kind == SLEEP:
                if ms.jobs:
                    raise SimulationError(f"SET_RESOURCE_STATE: cannot switch machine {mid} ('{ms.m.name}') OFF: "
                                          "jobs are running on it")
                self.start_switch(mid, pstate, "switching_off", "sleeping", self.power[mid].sleep[pstate][0])
            elif kinds[cur] == SLEEP and target_kind == COMPUTATION:
                self.start_switch(mid, pstate, "switching_on", "idle", self.power[mid].sleep[cur][1])
            elif kinds[cur] == SLEEP:
                raise SimulationError(f"Switching from a sleep pstate to a non-computation pstate on machine {mid} "
                                      f"('{ms.m.name}') : {cur} -> {pstate}, which is forbidden")
            elif kinds[cur] == COMPUTATION:
                raise SimulationError(f"Switching from a computation pstate to an invalid pstate on machine {mid} "
                                      f"('{ms.m.name}') : {cur} -> {pstate}")
            else:
                raise SimulationError(f"SET_RESOURCE_STATE: machine {mid} ('{ms.m.name}') is being switched "
                                      f"(virtual pstate {cur}); wait for its RESOURCE_STATE_CHANGED")
        if st.states is not None:
            st.states.row(now)

    def query(self, i: int, data) -> None:
        what = f"event {i} (QUERY)"
        _data_of_size(data, what, 1, "must")
        req = data.get("requests")
        if "requests" not in data:
            raise SimulationError(f"Invalid JSON message: the 'data' value of {what} must have a 'requests' member")
        if not isinstance(req, dict):
            raise SimulationError(f"Invalid JSON message: the 'requests' member of the 'data' object  of {what} "
                                  "must be an object")
        if not req:
            raise SimulationError(f"Invalid JSON message: the 'requests' object of the 'data' object of {what} "
                                  "must be non-empty")
        for key, value in req.items():
            if key != "consumed_energy":
                raise SimulationError(f"Invalid JSON message: Unknown QUERY '{key}' of event {i}")
            if value != {}:
                raise SimulationError(f"Invalid JSON message: the value of '{key}' inside the 'requests' object of "
                                      f"the 'data' object of {what} should be an empty object")
            self.st.append(self.st.now, "ANSWER", {"consumed_energy": float(self.total())})

    # -- switches
    def mark_done(self, mid: int, pstate: int) -> ProcSet | None:
        """Machine `mid` reached `pstate`; the request's machines if it was the last of its request
        (Batsim's CurrentSwitches::mark_switch_as_done, with its trace rows), else None."""
        groups = self.switches[pstate]
        for k, g in enumerate(groups):
            if mid in g[1]:
                g[1].discard(mid)
                if g[1]:
                    return None
                del groups[k]
                if not groups:
                    del self.switches[pstate]
                self.pstate_row(self.st.now, g[0], pstate)
                self.entry("p")
                return g[0]
        raise SimulationError(f"internal error: machine {mid} was not switching to pstate {pstate}")

    def start_switch(self, mid: int, target: int, during: str, after: str, virtual: int) -> None:
        st = self.st
        ms = st.mstate[mid]
        ms.set_state(during, st.now)
        sw = Switch(mid, target, after)
        self.nb_switching += 1
        st.nb_executing += 1
        st.sg.Actor.create(f"switch {mid}", ms.host, st.guarded, self._switch_body, sw, virtual)

    def _switch_body(self, sw: Switch, virtual: int) -> None:
        """The switching actor (pstate.cpp): virtual pstate, 1 flop, target pstate, message to the server."""
        st = self.st
        ms = st.mstate[sw.mid]
        self.nat.set_pstate(sw.mid, virtual)
        st.sg.this_actor.execute(1)
        self.nat.set_pstate(sw.mid, sw.target)
        ms.set_state(sw.state, st.now)
        post_to_server(st, sw)

    def switched(self, sw: Switch) -> None:
        """The server received a switching actor's message (server_on_switched)."""
        st = self.st
        st.nb_executing -= 1
        self.nb_switching -= 1
        done = self.mark_done(sw.mid, sw.target)
        if done is not None:
            if st.states is not None:
                st.states.row(st.now)
            st.append(st.now, "RESOURCE_STATE_CHANGED", {"resources": str(done), "state": str(sw.target)})

    # -- the end
    def finish(self, row: dict) -> None:
        """Close the energy files and fill the energy values of schedule.csv's `row`."""
        self.energy_csv.close()
        self.pstate_csv.close()
        row["consumed_joules"] = "%f" % float(self.last_completion - self.first_submission)
        row["nb_machine_switches"] = str(self.nb_machine_switches)
        row["nb_grouped_switches"] = str(self.nb_grouped)

    def close(self) -> None:
        for f in (self.energy_csv, self.pstate_csv):
            if not f.closed:
                f.close()


def _data_of_size(data, what: str, size: int, verb: str) -> None:
    """Batsim's checks of an event's 'data' value (an object of `size` members), with its messages (it says
    "should" of SET_RESOURCE_STATE and "must" of QUERY). Raises SimulationError."""
    if not isinstance(data, dict):
        raise SimulationError(f"Invalid JSON message: the 'data' value of {what} should be an object")
    if len(data) != size:
        raise SimulationError(f"Invalid JSON message: the 'data' value of {what} {verb} be of size {size} "
                              f"(size={len(data)})")
