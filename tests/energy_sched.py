"""A small deterministic Batsim-protocol scheduler that uses energy (``python tests/energy_sched.py ENDPOINT``):
first come first served on the compute machines, switching idle machines OFF (pstate `SLEEP`) whenever the
queue is empty and back ON (pstate 0) when the head job needs them; a job with an odd number runs at pstate
`SLOW` (its machines are set to it just before EXECUTE_JOB, a computation → computation change), an even one
at pstate 0; a job whose name starts with ``k`` is killed `KILL_AFTER` s after its start (CALL_ME_LATER);
every message that reports a job's end gets a QUERY consumed_energy. The pstates are those of
tests/data/energy4.xml (0, 1 computation, 2 sleep).

It binds a ZeroMQ REP socket at ENDPOINT, answers every message, writes nothing, exits after
SIMULATION_ENDS. Used beside a real Batsim 4.2.1 and the embedded simulator (tests/test_energy_batsim.py).
"""
from __future__ import annotations

import json
import sys

import zmq
from procset import ProcSet

SLOW, SLEEP = 1, 2
KILL_AFTER = 3.0


def main(endpoint: str) -> int:
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    sock.bind(endpoint)
    state: dict[int, str] = {}        # machine -> idle, computing, sleeping, switching_on, switching_off
    pstate: dict[int, int] = {}
    queue: list[tuple[str, int]] = []
    running: dict[str, ProcSet] = {}
    kills: list[tuple[float, str]] = []
    while True:
        msg = json.loads(sock.recv_string())
        now = msg["now"]
        out: list[dict] = []

        def ev(etype: str, data: dict) -> None:
            out.append({"timestamp": now, "type": etype, "data": data})

        ended = False
        for e in msg["events"]:
            t, d = e["type"], e["data"]
            if t == "SIMULATION_BEGINS":
                for r in d["compute_resources"]:
                    state[r["id"]] = "idle"
                    pstate[r["id"]] = 0
            elif t == "SIMULATION_ENDS":
                sock.send_string(json.dumps({"now": now, "events": []}))
                sock.close(0)
                ctx.term()
                return 0
            elif t == "JOB_SUBMITTED":
                queue.append((d["job_id"], d["job"]["res"]))
            elif t == "JOB_COMPLETED":
                ended = True
                for m in ProcSet.from_str(d["alloc"]):
                    state[m] = "idle"
                running.pop(d["job_id"], None)
            elif t == "RESOURCE_STATE_CHANGED":
                for m in ProcSet.from_str(d["resources"]):
                    pstate[m] = int(d["state"])
                    if state[m] == "switching_on":
                        state[m] = "idle"
                    elif state[m] == "switching_off":
                        state[m] = "sleeping"
            elif t == "REQUESTED_CALL":
                due = [j for (at, j) in kills if at <= now and j in running]
                kills[:] = [(at, j) for (at, j) in kills if at > now]
                if due:
                    ev("KILL_JOB", {"job_ids": due})
        # first come, first served
        while queue:
            jid, res = queue[0]
            idle = sorted(m for m, s in state.items() if s == "idle")
            if res <= len(idle):
                alloc = ProcSet(*idle[:res])
                number = jid.split("!")[1]
                want = SLOW if number.isdigit() and int(number) % 2 else 0
                change = ProcSet(*[m for m in alloc if pstate[m] != want])
                if change:
                    ev("SET_RESOURCE_STATE", {"resources": str(change), "state": str(want)})
                    for m in change:
                        pstate[m] = want
                ev("EXECUTE_JOB", {"job_id": jid, "alloc": str(alloc)})
                for m in alloc:
                    state[m] = "computing"
                running[jid] = alloc
                if number.startswith("k"):
                    kills.append((now + KILL_AFTER, jid))
                    ev("CALL_ME_LATER", {"timestamp": now + KILL_AFTER})
                queue.pop(0)
                continue
            coming = sum(1 for s in state.values() if s == "switching_on")
            sleeping = sorted(m for m, s in state.items() if s == "sleeping")
            need = min(res - len(idle) - coming, len(sleeping))
            if need > 0:
                on = ProcSet(*sleeping[:need])
                ev("SET_RESOURCE_STATE", {"resources": str(on), "state": "0"})
                for m in on:
                    state[m] = "switching_on"
            break
        if not queue:
            idle = ProcSet(*sorted(m for m, s in state.items() if s == "idle"))
            if idle:
                ev("SET_RESOURCE_STATE", {"resources": str(idle), "state": str(SLEEP)})
                for m in idle:
                    state[m] = "switching_off"
        if ended:
            ev("QUERY", {"requests": {"consumed_energy": {}}})
        sock.send_string(json.dumps({"now": now, "events": out}))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
