"""SimGrid calls per executed job of the embedded simulator, and the fingerprint of its message stream.

Runs `burstbuffer run --policy P --model M --seed 0` on the first N bundled KTH jobs (paper's platform) with
the simulator's Python-level SimGrid calls counted (each call of `simgrid.Semaphore.acquire`, `Mailbox.put`,
`Comm.wait_any_for`, `this_actor.sleep_for`, ... from the simulator's actors; a wrapper installed in the
simulator process through a generated ``sitecustomize``), and prints per kind the calls per executed
(sub-)job — an executed job is one `dispatch`, i.e. one EXECUTE_JOB — with the simulator's CPU time.

Every message the simulator sends to the scheduler is recorded (the JSON text, so each timestamp to the
last bit); the temporary directory's name in SIMULATION_BEGINS is normalised. `--save FILE` writes that
stream, `--compare FILE` checks it message for message against a saved one (exit 1 at the first
difference, printed): the check that a change of the simulator's SimGrid calls moved no message.

    PYTHONPATH=. python benchmarks/simcall_counts.py --policy sjf-bb --jobs 200 --save /tmp/before.msgs
    ...change the simulator...
    PYTHONPATH=. python benchmarks/simcall_counts.py --policy sjf-bb --jobs 200 --compare /tmp/before.msgs

The simulator imported is the one PYTHONPATH names first (another checkout's, to measure it), else this one.

Calls made inside SimGrid's C++ (an activity's start inside `wait_for`, ...) are not counted: the figures
are Python-level calls, each at least one hand-over between an actor's thread and SimGrid's maestro.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from common import machine  # noqa: E402

#: The simulator-side hook: count SimGrid calls, record every message sent to the scheduler.
HOOK = r'''
import atexit, collections, json, os
_out = os.environ.get("BB_SIMCALLS_OUT")
if _out:
    import simgrid
    import burstbuffer.simulator.loop as _loop
    counts = collections.Counter()
    msgs = open(_out + ".msgs", "w")
    _dumps = _loop.dumps
    def dumps(obj):
        text = _dumps(obj)
        msgs.write(text + "\n")
        return text
    _loop.dumps = dumps
    def wrap(owner, name, label):
        orig = getattr(owner, name)
        def counted(*a, **k):
            counts[label] += 1
            return orig(*a, **k)
        setattr(owner, name, counted)
    for cls, names in [(simgrid.Semaphore, ["acquire", "release"]), (simgrid.Mailbox, ["put", "get", "get_async"]),
                       (simgrid.Comm, ["wait_any", "wait_any_for", "sendto_async", "sendto", "cancel", "wait",
                                       "wait_for"]),
                       (simgrid.Exec, ["wait", "wait_for", "cancel"]), (simgrid.Actor, ["create", "daemonize"])]:
        for name in names:
            wrap(cls, name, f"{cls.__name__}.{name}")
    for name in ["sleep_for", "set_host"]:
        wrap(simgrid.this_actor, name, "this_actor." + name)
    def _end():
        msgs.close()
        with open(_out, "w") as f:
            json.dump(dict(counts), f)
    atexit.register(_end)
'''

CHILD = r'''
import json, resource, sys
from pathlib import Path
from burstbuffer.runner import run, DEFAULT_PLATFORM
policy, model, workload, out = sys.argv[1:5]
run(policy, Path(workload), DEFAULT_PLATFORM, Path(out), model=model, progress=False, timeout=3600, seed=0)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"sim_cpu": kids.ru_utime + kids.ru_stime}))
'''


def normalised(path: Path) -> list[str]:
    return [re.sub(r'/tmp/[^/"]*burstbuffer-simcalls[^/"]*/', "/TMP/", line)
            for line in path.read_text().splitlines()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policy", default="sjf-bb")
    ap.add_argument("--model", default="io-aware")
    ap.add_argument("--jobs", type=int, default=200, help="first N jobs of workloads/kth-1000.json")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--save", type=Path, help="write the message stream here")
    g.add_argument("--compare", type=Path, help="compare the message stream with this saved one")
    args = ap.parse_args()
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="burstbuffer-simcalls") as tmp:
        tmp = Path(tmp)
        data = json.loads((ROOT / "workloads" / "kth-1000.json").read_text())
        data["jobs"] = data["jobs"][:args.jobs]
        (tmp / "w.json").write_text(json.dumps(data))
        (tmp / "hook").mkdir()
        (tmp / "hook" / "sitecustomize.py").write_text(HOOK)
        paths = [str(tmp / "hook"), os.environ.get("PYTHONPATH"), str(ROOT)]
        env = dict(os.environ, BB_SIMCALLS_OUT=str(tmp / "counts.json"),
                   PYTHONPATH=os.pathsep.join(p for p in paths if p))
        # the scheduler process must not install the hook: it runs without BB_SIMCALLS_OUT, its child with it
        child_env = dict(env)
        child_env.pop("BB_SIMCALLS_OUT")
        code = ("import os, sys; os.environ['BB_SIMCALLS_OUT'] = " + repr(env["BB_SIMCALLS_OUT"])
                + "; exec(sys.argv.pop(1))")
        res = subprocess.run([sys.executable, "-c", code, CHILD, args.policy, args.model, str(tmp / "w.json"),
                              str(tmp / "out")], cwd=tmp, env=child_env, capture_output=True, text=True)
        if res.returncode != 0:
            sys.stderr.write(res.stderr)
            return 2
        sim_cpu = json.loads(res.stdout.strip().splitlines()[-1])["sim_cpu"]
        counts = json.loads((tmp / "counts.json").read_text())
        stream = normalised(tmp / "counts.json.msgs")
    executed = counts.get("Semaphore.release", 0)
    total = sum(counts.values())
    print(f"{args.policy} {args.model}, first {args.jobs} jobs: {executed} executed jobs, {len(stream)} messages, "
          f"simulator CPU {sim_cpu:.2f} s")
    print(f"{'SimGrid call':24} {'calls':>8} {'per executed job':>17}")
    for name, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        print(f"{name:24} {n:8d} {n / max(executed, 1):17.2f}")
    print(f"{'all':24} {total:8d} {total / max(executed, 1):17.2f}")
    if args.save:
        args.save.write_text("\n".join(stream) + "\n")
        print(f"message stream written to {args.save}")
    if args.compare:
        ref = args.compare.read_text().splitlines()
        for k, (a, b) in enumerate(zip(ref, stream)):
            if a != b:
                print(f"message {k} differs:\n  saved: {a[:400]}\n  now:   {b[:400]}")
                return 1
        if len(ref) != len(stream):
            print(f"message count differs: saved {len(ref)}, now {len(stream)}")
            return 1
        print(f"message stream identical to {args.compare} ({len(stream)} messages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
