"""What one SimGrid call costs from a Python actor, and how many a simulation makes: the floor under the
embedded simulator's run time (issue 17, docs/performance.md, "Large machines").

SimGrid 3.32's Python bindings run every actor in its own thread (the module sets
``contexts/factory:thread`` when imported): each simulation call ("simcall") of an actor wakes the maestro
thread and waits to be woken again, two thread hand-overs per call. This script measures that cost on the
machine it runs on, and counts the calls of a real run, so that "calls × cost per call" bounds from below
what the simulator can take with its present design, whatever the solver and the Python code cost.

``python benchmarks/simcall_floor.py micro [--factories thread ucontext raw boost] [--actors 1 16]
[--calls 20000] [--reps 5] [--cpu CORE]``: for each context factory (``--cfg=contexts/factory:F`` passed to
``simgrid.Engine``) and number of actors N, N actors on a 2-host ``ptask_L07`` platform (the simulator's
host model) each make ``--calls`` / N iterations of one pattern; each (factory, pattern, N) runs ``--reps``
times, each time in a fresh process (one engine per process; a crash is reported, not fatal). Patterns:

==========  =====================================================================  ==============
pattern     one iteration (the call the embedded simulator makes)                  Python calls
==========  =====================================================================  ==============
none        ``Engine.clock`` (a binding call that is no simcall: the Python cost)  1
yield       ``this_actor.yield_()`` (a simcall that does nothing)                  1
sleep       ``this_actor.sleep_for(1e-3)`` (a delay; the server's message time)    1
sem         ``Semaphore.acquire(); Semaphore.release()`` (a job actor's parking)   2
exec        ``this_actor.exec_init([h], [1e6], []).wait_for(1e9)`` (compute phase) 2
comm        ``Comm.sendto_async(h1, h2, 1).wait_for(1e9)`` (a data staging)        2
waitfor     ``Comm.wait_any_for([c], 1e-3)`` timing out (the server's timer wait)  1
mailbox     ``Mailbox.put(x, 1)`` by each actor on h1; one receiver on h2 doing    4
            ``get_async(); Comm.wait_any([c]); data.get()`` (a job's completion)
==========  =====================================================================  ==============

Printed per row: the median over the repeats of wall time and of process CPU time (user + system, all
threads) per iteration, in ns, and the voluntary context switches per iteration (``getrusage``: under the
thread factory, 2 per simcall — the actor's wait and the maestro's).

``python benchmarks/simcall_floor.py count [--workload workloads/kth-1000.json] [--policy sjf-bb]
[--whole-subjobs N] [--whole-messages M] [--micro FILE.json] [--counts COUNT.json]``: one
``burstbuffer.runner.run`` (io-aware, the paper's platform, the bundled first 1000 KTH jobs by default) whose
simulator process imports a counting stand-in for the ``simgrid`` module (``sys.modules["simgrid"]``;
nothing in ``burstbuffer/`` changes): every call into
``this_actor``, ``Semaphore``, ``Mailbox``, ``Comm``, ``Exec``, ``Actor`` objects is counted by name and by
the actor that made it (the server, or a job's executor). Printed: calls per sub-job (job side) and per
protocol message (server side), the simulator's voluntary context switches, and — with the per-pattern
costs of ``micro`` (``--micro``: its ``--json`` output; default: measured now, thread factory, N = 1) — the
floor of this run and of a whole-trace run of ``--whole-subjobs`` sub-jobs and ``--whole-messages``
messages (from its ``batsim_jobs.csv`` rows and ``summary.json``).

Measure on an otherwise idle machine if you can: a hand-over waits for the other thread to be scheduled, so
a loaded machine inflates wall times; CPU times are the steadier figure.

Findings (2026-11-23, 2-core AMD EPYC, Debian python3-simgrid 3.32, load average 25-60; docs/performance.md, "Large machines
(issue 17)" has the tables): under the thread factory a call costs 12-17 µs of CPU (``yield`` 12.0, ``sleep``
16.7; about 2.2 voluntary context switches per simcall). ucontext, raw and boost exist and make a call 4-28x
cheaper (raw ``yield`` 0.43 µs), but a second Python actor aborts the process as soon as two actors are
suspended in calls at once (``loader_life_support: internal error``: pybind11 >= 2.8 keeps a per-thread stack
of call frames that swapped contexts interleave). Whole KTH trace under sjf-bb: 5.4 M calls, a floor of
117 s of simulator CPU.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from common import machine  # noqa: E402

FACTORIES = ("thread", "ucontext", "raw", "boost")
PATTERNS = {"none": 1, "yield": 1, "sleep": 1, "sem": 2, "exec": 2, "comm": 2, "waitfor": 1, "mailbox": 4}


# ------------------------------------------------------------------------------------------ micro worker

def _quiet_import_simgrid():
    """Import SimGrid's bindings without the INFO line they print on stderr (contexts/factory:thread)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            import simgrid  # noqa: PLC0415
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    return simgrid


def micro_worker(factory: str, pattern: str, nactors: int, calls: int) -> dict:
    """One engine, `nactors` actors, `calls` iterations of `pattern` in all (see the module docstring)."""
    sg = _quiet_import_simgrid()
    e = sg.Engine(["simcall_floor", f"--cfg=contexts/factory:{factory}", "--cfg=host/model:ptask_L07",
                   "--log=root.thres:critical"])
    zone = sg.NetZone.create_full_zone("zone")
    h1 = zone.create_host("h1", 1e9).seal()
    h2 = zone.create_host("h2", 1e9).seal()
    link = zone.create_link("link", 1.25e9).set_latency(1e-6).seal()
    zone.add_route(h1.netpoint, h2.netpoint, None, None, [sg.LinkInRoute(link)], True)
    zone.seal()
    per = max(calls // nactors, 1)
    done = []
    this = sg.this_actor

    def body(i: int) -> None:
        if pattern == "none":
            for _ in range(per):
                sg.Engine.clock
        elif pattern == "yield":
            for _ in range(per):
                this.yield_()
        elif pattern == "sleep":
            for _ in range(per):
                this.sleep_for(1e-3)
        elif pattern == "sem":
            s = sg.Semaphore(1)
            for _ in range(per):
                s.acquire()
                s.release()
        elif pattern == "exec":
            for _ in range(per):
                this.exec_init([h1], [1e6], []).wait_for(1e9)
        elif pattern == "comm":
            for _ in range(per):
                sg.Comm.sendto_async(h1, h2, 1).wait_for(1e9)
        elif pattern == "waitfor":
            c, _data = sg.Mailbox.by_name(f"never-{i}").get_async()
            for _ in range(per):
                sg.Comm.wait_any_for([c], 1e-3)
            c.cancel()
        elif pattern == "mailbox":
            mb = sg.Mailbox.by_name("server")
            for k in range(per):
                mb.put(k, 1)
        done.append(i)

    def receiver(total: int) -> None:
        mb = sg.Mailbox.by_name("server")
        for _ in range(total):
            c, data = mb.get_async()
            sg.Comm.wait_any([c])
            data.get()

    for i in range(nactors):
        sg.Actor.create(f"a{i}", h1, body, i)
    if pattern == "mailbox":
        sg.Actor.create("receiver", h2, receiver, per * nactors)
    r0, c0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.process_time(), time.perf_counter()
    e.run()
    wall, cpu, r1 = time.perf_counter() - t0, time.process_time() - c0, resource.getrusage(resource.RUSAGE_SELF)
    if len(done) != nactors:
        raise RuntimeError(f"{nactors - len(done)} actor(s) did not finish")
    n = per * nactors
    return {"factory": factory, "pattern": pattern, "actors": nactors, "iterations": n,
            "wall_ns": 1e9 * wall / n, "cpu_ns": 1e9 * cpu / n, "nvcsw": (r1.ru_nvcsw - r0.ru_nvcsw) / n,
            "nivcsw": (r1.ru_nivcsw - r0.ru_nivcsw) / n, "clock": sg.Engine.clock}


def _run_sub(args: list[str], cpu: int | None = None, timeout: float = 600) -> tuple[dict | None, str]:
    """Run this script as a worker (pinned to core `cpu` if given); (its JSON result, or None and the reason
    it failed)."""
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, cwd=REPO,
                          timeout=timeout, preexec_fn=pin)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode == 0 and lines:
        return json.loads(lines[-1]), ""
    err = [ln for ln in proc.stderr.splitlines() if "CRITICAL" in ln or "Error" in ln or "error" in ln]
    why = err[0].split("]")[-1].strip() if err else (proc.stderr.strip().splitlines() or ["?"])[-1]
    sig = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
    return None, f"{sig}: {why}"


def micro(args) -> dict:
    rows, failures = [], {}
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.2f} at the start; "
          f"{'pinned to core ' + str(args.cpu) if args.cpu is not None else 'not pinned'}", flush=True)
    print(f"{'factory':<9} {'pattern':<8} {'actors':>6} {'wall ns/it':>11} {'CPU ns/it':>10} "
          f"{'CPU ns/call':>11} {'vol. cs/it':>10}", flush=True)
    for factory in args.factories:
        for nactors in args.actors:
            for pattern in args.patterns:
                reps, why = [], ""
                for _ in range(args.reps):
                    res, why = _run_sub(["--micro-worker", factory, pattern, str(nactors), str(args.calls)],
                                        args.cpu)
                    if res is None:
                        break
                    reps.append(res)
                if not reps:
                    failures[f"{factory}/{pattern}/{nactors}"] = why
                    print(f"{factory:<9} {pattern:<8} {nactors:>6}  fails: {why}", flush=True)
                    continue
                row = {k: reps[0][k] for k in ("factory", "pattern", "actors", "iterations")}
                for k in ("wall_ns", "cpu_ns", "nvcsw", "nivcsw"):
                    row[k] = statistics.median(r[k] for r in reps)
                row["cpu_ns_min"], row["cpu_ns_max"] = min(r["cpu_ns"] for r in reps), max(r["cpu_ns"] for r in reps)
                row["reps"] = len(reps)
                rows.append(row)
                print(f"{factory:<9} {pattern:<8} {nactors:>6} {row['wall_ns']:>11.0f} {row['cpu_ns']:>10.0f} "
                      f"{row['cpu_ns'] / PATTERNS[pattern]:>11.0f} {row['nvcsw']:>10.2f}", flush=True)
    out = {"machine": machine(), "load_end": os.getloadavg(), "calls": args.calls, "reps": args.reps, "cpu": args.cpu,
           "rows": rows, "failures": failures}
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return out


# ------------------------------------------------------------------------------------------ call counting

class _Counted:
    """A SimGrid object (or class, or the this_actor module) whose method calls are counted."""

    __slots__ = ("_o", "_n", "_c")

    def __init__(self, obj, name: str, counter):
        object.__setattr__(self, "_o", obj)
        object.__setattr__(self, "_n", name)
        object.__setattr__(self, "_c", counter)

    def __getattr__(self, attr):
        a = getattr(self._o, attr)
        if isinstance(a, type) or not callable(a):
            return _wrap(a, self._c)
        label = f"{self._n}.{attr}"
        counter = self._c

        def call(*args, **kw):
            counter(label)
            return _wrap(a(*_unwrap(args), **{k: _unwrap(v) for k, v in kw.items()}), counter)
        return call

    def __call__(self, *args, **kw):  # a counted class: its constructor
        self._c(f"{self._n}()")
        return _wrap(self._o(*_unwrap(args), **{k: _unwrap(v) for k, v in kw.items()}), self._c)

    def __setattr__(self, attr, value):
        setattr(self._o, attr, value)

    def __eq__(self, other):
        return self._o == _unwrap(other)

    def __hash__(self):
        return hash(self._o)


_COUNTED = ("Semaphore", "Mailbox", "Comm", "Exec", "Actor", "PyGetAsync")


def _wrap(x, counter):
    if isinstance(x, tuple):
        return tuple(_wrap(v, counter) for v in x)
    name = x.__name__ if isinstance(x, type) else type(x).__name__
    if name in _COUNTED and not isinstance(x, _Counted):
        return _Counted(x, name, counter)
    return x


def _unwrap(x):
    if isinstance(x, _Counted):
        return x._o
    if isinstance(x, list):
        return [_unwrap(v) for v in x]
    if isinstance(x, tuple):
        return tuple(_unwrap(v) for v in x)
    return x


class _CountingSimgrid:
    """Stands for the ``simgrid`` module in ``sys.modules``: its counted classes and ``this_actor`` are
    wrapped, the rest (Engine, NetZone, Host, exceptions) is the module's own."""

    def __init__(self, real, counter):
        self._real, self._counter = real, counter
        self.this_actor = _Counted(real.this_actor, "this_actor", counter)

    def __getattr__(self, attr):
        a = getattr(self._real, attr)
        return _Counted(a, attr, self._counter) if attr in _COUNTED else a


def sim_worker(count_file: str, sim_argv: list[str]) -> int:
    """The simulator process of a count run: `python -m burstbuffer.simulator` with the counting module."""
    real = _quiet_import_simgrid()
    counts: dict[str, collections.Counter] = {"server": collections.Counter(), "job": collections.Counter(),
                                              "setup": collections.Counter()}
    self_, ident, maestro = real.Actor.self, threading.get_ident, threading.get_ident()

    def counter(label: str) -> None:
        # under the thread factory, each actor has a thread of its own; maestro is this one (where
        # Actor.self() must not be called)
        role = "setup" if ident() == maestro else "server" if self_().name == "server" else "job"
        counts[role][label] += 1

    sys.modules["simgrid"] = _CountingSimgrid(real, counter)
    from burstbuffer.simulator.cli import main as sim_main

    rc = sim_main(sim_argv)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    Path(count_file).write_text(json.dumps({"counts": {k: dict(v) for k, v in counts.items()},
                                            "nvcsw": ru.ru_nvcsw, "nivcsw": ru.ru_nivcsw,
                                            "cpu_s": ru.ru_utime + ru.ru_stime}))
    return rc


#: What each counted call costs, as a micro pattern: (pattern, share of one iteration). Calls that a
#: pattern's iteration already includes cost 0 here (exec_init inside "exec", the receiver's side of
#: "mailbox"); anything not listed is taken as one plain simcall ("yield").
COST_OF = {
    "this_actor.sleep_for": ("sleep", 1), "Semaphore.acquire": ("sem", 0.5), "Semaphore.release": ("sem", 0.5),
    "this_actor.exec_init": ("exec", 0), "Exec.wait_for": ("exec", 1), "Exec.wait": ("exec", 1),
    "Comm.sendto_async": ("comm", 0), "Comm.wait_for": ("comm", 1), "Comm.wait": ("comm", 1),
    "Mailbox.put": ("mailbox", 1), "Comm.wait_any": ("mailbox", 0), "PyGetAsync.get": ("none", 1),
    "Comm.wait_any_for": ("waitfor", 1), "Mailbox.get_async": ("mailbox", 0),
    "Mailbox.by_name": ("none", 1), "this_actor.get_host": ("none", 1), "Semaphore()": ("none", 1),
    "Actor.daemonize": ("yield", 1),
}


def _micro_costs(rows: list[dict]) -> dict[str, float]:
    """pattern → CPU ns per iteration, thread factory, the fewest actors measured."""
    best: dict[str, tuple[int, float]] = {}
    for r in rows:
        if r["factory"] == "thread" and (r["pattern"] not in best or r["actors"] < best[r["pattern"]][0]):
            best[r["pattern"]] = (r["actors"], r["cpu_ns"])
    return {k: v[1] for k, v in best.items()}


def floor_s(calls: dict[str, float], costs: dict[str, float]) -> float:
    """Seconds that `calls` (label → number) cost at `costs` (pattern → ns per iteration)."""
    total = 0.0
    for label, n in calls.items():
        pattern, share = COST_OF.get(label, ("yield", 1))
        total += n * share * costs[pattern]
    # get_async / wait_any beyond the puts: withdrawn receives and their waits, one simcall each
    extra = max(calls.get("Mailbox.get_async", 0) - calls.get("Mailbox.put", 0), 0)
    total += extra * costs["yield"]
    return total / 1e9


def _subjobs(batsim_jobs: Path) -> int:
    """Rows of a run's batsim_subjobs.csv that ran (io-aware: the sub-jobs; the original jobs are REJECTED)."""
    with open(batsim_jobs) as f:
        next(f)
        return sum(1 for line in f if ",REJECTED," not in line)


def _scaled(c: dict[str, int], k: float) -> dict[str, float]:
    return {label: n * k for label, n in c.items()}


def _merged(*cs: dict[str, float]) -> dict[str, float]:
    out: dict[str, float] = collections.Counter()
    for c in cs:
        out.update(c)
    return dict(out)


def count(args) -> dict:
    from burstbuffer import runner

    if args.micro:
        costs = _micro_costs(json.loads(Path(args.micro).read_text())["rows"])
    else:
        ns = argparse.Namespace(factories=["thread"], patterns=list(PATTERNS), actors=[1], calls=20000, reps=3,
                                cpu=None)
        costs = _micro_costs(micro(ns)["rows"])
    if args.counts:  # a previous count's --json: only the floors are computed again
        prev = json.loads(Path(args.counts).read_text())
        return _floors(args, prev["simulator"]["counts"], prev["subjobs"], prev["messages"], costs, prev)
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    with tempfile.TemporaryDirectory(prefix="simcall-count-") as tmp:
        cfile, out = Path(tmp) / "counts.json", Path(tmp) / "out"
        base = runner.simulator_command

        def counted_command(*a, **k):
            argv = base(*a, **k)
            i = argv.index("burstbuffer.simulator")
            return [argv[0], str(Path(__file__).resolve()), "--sim-worker", str(cfile)] + argv[i + 1:]
        runner.simulator_command = counted_command
        t = time.perf_counter()
        res = runner.run(args.policy, Path(args.workload), Path(args.platform), out, model="io-aware",
                         progress=False, timeout=3600)
        wall = time.perf_counter() - t
        runner.simulator_command = base
        data = json.loads(cfile.read_text())
        subjobs = _subjobs(out / "batsim_subjobs.csv")
    c = data["counts"]
    messages = res.messages
    print(f"{args.policy}, io-aware, {args.workload}: {subjobs} sub-jobs, {messages} messages; run {wall:.1f} s "
          f"wall (with counting), simulator {data['cpu_s']:.1f} s CPU, {data['nvcsw']} voluntary context "
          f"switches ({data['nvcsw'] / subjobs:.1f} per sub-job)")
    for role in ("job", "server", "setup"):
        per = subjobs if role == "job" else messages
        unit = "per sub-job" if role == "job" else "per message"
        total = sum(c[role].values())
        print(f"  {role:<6} {total:>9} calls ({total / per:.2f} {unit}): " + ", ".join(
            f"{k} {v}" for k, v in sorted(c[role].items(), key=lambda kv: -kv[1])))
    result = {"machine": machine(), "policy": args.policy, "workload": str(args.workload), "subjobs": subjobs,
              "messages": messages, "wall_s": wall, "load_end": os.getloadavg(), "simulator": data}
    return _floors(args, c, subjobs, messages, costs, result)


def _floors(args, c: dict, subjobs: int, messages: int, costs: dict[str, float], result: dict) -> dict:
    """Print and add to `result` the floor of the counted run and of the whole trace (`args`)."""
    run_floor = floor_s(_merged(c["job"], c["server"], c["setup"]), costs)
    print("cost per iteration (thread factory, CPU ns): " + ", ".join(f"{k} {v:.0f}" for k, v in costs.items()))
    print(f"floor of the counted run: {run_floor:.2f} s of simulator CPU in SimGrid calls "
          f"(measured: {result['simulator']['cpu_s']:.1f} s, counting included)")
    result.update(costs_ns=costs, floor_s=run_floor)
    if args.whole_subjobs and args.whole_messages:
        kj, km = args.whole_subjobs / subjobs, args.whole_messages / messages
        whole = _merged(_scaled(c["job"], kj), _scaled(c["server"], km), c["setup"])
        wf = floor_s(whole, costs)
        ncalls = sum(v for k, v in whole.items() if COST_OF.get(k, ("yield", 1))[0] != "none")
        print(f"whole trace ({args.whole_subjobs} sub-jobs, {args.whole_messages} messages): "
              f"{ncalls / 1e6:.2f} M SimGrid calls that enter the kernel, floor {wf:.0f} s of simulator CPU")
        result.update(whole_subjobs=args.whole_subjobs, whole_messages=args.whole_messages,
                      whole_calls=ncalls, whole_floor_s=wf)
    return result


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--micro-worker":
        f, p, n, c = argv[1:5]
        print(json.dumps(micro_worker(f, p, int(n), int(c))))
        return 0
    if argv and argv[0] == "--sim-worker":
        return sim_worker(argv[1], argv[2:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("micro", help="cost per SimGrid call, per context factory")
    m.add_argument("--factories", nargs="+", default=list(FACTORIES), choices=FACTORIES)
    m.add_argument("--patterns", nargs="+", default=list(PATTERNS), choices=list(PATTERNS))
    m.add_argument("--actors", nargs="+", type=int, default=[1, 16])
    m.add_argument("--calls", type=int, default=20000, help="iterations in all per run (default 20000)")
    m.add_argument("--reps", type=int, default=5)
    m.add_argument("--cpu", type=int, help="pin each run to this core (`burstbuffer run` pins both of its "
                                           "processes to one core); default: not pinned")
    m.add_argument("--json", help="also write the results here")
    c = sub.add_parser("count", help="SimGrid calls of one run, and the floor they set")
    c.add_argument("--policy", default="sjf-bb")
    c.add_argument("--workload", default=str(REPO / "workloads" / "kth-1000.json"))
    c.add_argument("--platform", default=str(REPO / "platforms" / "dragonfly96.xml"))
    c.add_argument("--micro", help="a `micro --json` file (default: measure the thread factory now)")
    c.add_argument("--whole-subjobs", type=int, help="sub-jobs of a whole-trace run (its batsim_jobs.csv rows "
                                                     "that are not REJECTED)")
    c.add_argument("--whole-messages", type=int, help="protocol messages of that run (its summary.json)")
    c.add_argument("--counts", help="a previous `count --json` file: compute the floors again, no run")
    c.add_argument("--json", help="also write the results here")
    args = ap.parse_args(argv)
    out = micro(args) if args.cmd == "micro" else count(args)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
