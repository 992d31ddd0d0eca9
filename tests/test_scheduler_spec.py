"""The scheduler side built once (`burstbuffer.spec.SchedulerSpec`): the policy name resolved once per run
whatever the link, the parent of an in-simulator run building no scheduler, a policy of one's own with a new
option reachable from the command line with no other edit, and the spec surviving the trip to the child."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from burstbuffer.errors import InputError
from burstbuffer.platforms.model import Platform
from burstbuffer.spec import SchedulerSpec, make_spec

REPO = Path(__file__).resolve().parents[1]

#: counts, in every process of a run, the policy resolutions and the SchedulerApps built, one line each:
#: "PID resolve SPEC" / "PID app"
COUNTER = textwrap.dedent('''
    import os

    def _log(line):
        with open(os.environ["BB_COUNT_LOG"], "a") as f:
            f.write(f"{os.getpid()} {line}\\n")

    import burstbuffer.app as _app
    import burstbuffer.schedulers.resolve as _resolve

    _resolve_policy = _resolve.resolve_policy

    def resolve_policy(spec):
        _log(f"resolve {spec}")
        return _resolve_policy(spec)

    _resolve.resolve_policy = resolve_policy
    _init = _app.SchedulerApp.__init__

    def __init__(self, *a, **k):
        _log("app")
        _init(self, *a, **k)

    _app.SchedulerApp.__init__ = __init__
''')

#: a policy of one's own with an option no built-in policy has: one class, in one file
WIDTH_POLICY = textwrap.dedent('''
    from burstbuffer.schedulers import Policy
    from burstbuffer.schedulers.options import Number, Option


    class WidthCapped(Policy):
        """Starts the queued jobs that fit now, first come first served, at most `max_width` nodes each."""

        name = "width-capped"
        declared_options = Policy.declared_options + (
            Option("max_width", Number(1, integer=True), "[nodes] the widest job started"),
        )

        def __init__(self, platform, *, seed=0, max_width=4, **options):
            super().__init__(platform, seed=seed, **options)
            self.max_width = max_width

        def schedule(self, now, queue, profile, rng):
            starts = []
            for job in queue:
                fit = self.fit_now(job) if job.res <= self.max_width else None
                if fit is not None:
                    starts.append(self.start(job, fit))
            return starts

        def write_outputs(self, output):
            (output / "max_width.txt").write_text(f"{self.max_width}\\n")
''')


def _cli(tmp_path, *argv, count=False):
    env = dict(os.environ)
    path = [str(REPO)]
    if count:
        hook = tmp_path / "hook"
        hook.mkdir(exist_ok=True)
        (hook / "sitecustomize.py").write_text(COUNTER)
        path.insert(0, str(hook))
        env["BB_COUNT_LOG"] = str(tmp_path / "count.log")
    env["PYTHONPATH"] = os.pathsep.join(path + [env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "burstbuffer", *argv], capture_output=True, text=True, env=env,
                          cwd=str(tmp_path))


@pytest.mark.parametrize("link", ["in-simulator", "pipes"])
def test_the_policy_name_is_resolved_once_per_run(kth_subset, tmp_path, link):
    """Once in the whole run, in the process that read the command line; the scheduler (its SchedulerApp) is
    built once, in the process that runs it: the run's child, on both links."""
    wl = kth_subset(5)
    r = _cli(tmp_path, "run", "--policy", "plan-2", "--alpha", "1.5", "--link", link, "--workload", str(wl),
             "--output", str(tmp_path / "o"), "-q", count=True)
    assert r.returncode == 0, r.stderr
    lines = [ln.split(" ", 1) for ln in (tmp_path / "count.log").read_text().splitlines()]
    resolved = [(pid, what) for pid, what in lines if what.startswith("resolve")]
    apps = [pid for pid, what in lines if what == "app"]
    assert [what for _, what in resolved] == ["resolve plan-2"]
    assert len(apps) == 1
    assert apps[0] != resolved[0][0]
    assert "policy plan-1.5" in r.stdout


def test_serve_and_the_python_api_resolve_once(monkeypatch):
    import burstbuffer.schedulers.resolve as resolve
    seen = []
    real = resolve.resolve_policy
    monkeypatch.setattr(resolve, "resolve_policy", lambda spec: seen.append(spec) or real(spec))
    spec = make_spec("cerberus", options={"profit": "nodes"}, job_model="three-phase", seed=3)
    from burstbuffer.session import SchedulerSession
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        session = SchedulerSession(spec, Path(tmp), progress=False)
        sched = spec.build(Platform.simple(2, [10 ** 12]))
    assert seen == ["cerberus"]
    assert session.job_model.stages_separately and sched.name == "cerberus"


def test_a_new_policy_with_a_new_option_needs_one_class_and_no_edit(kth_subset, tmp_path):
    """The option is listed, checked by its declaration (type and range) and reaches the policy."""
    f = tmp_path / "width.py"
    f.write_text(WIDTH_POLICY)
    spec = f"{f}:WidthCapped"
    r = _cli(tmp_path, "policies", spec)
    assert r.returncode == 0, r.stderr
    assert "max_width: int >= 1, default 4" in r.stdout and "[nodes] the widest job started" in r.stdout
    r = _cli(tmp_path, "run", "--policy", spec, "--policy-option", "max_width=0", "-q")
    assert r.returncode == 2 and r.stderr.strip() == "burstbuffer: --policy-option: max_width=0: must be >= 1"
    r = _cli(tmp_path, "run", "--policy", spec, "--policy-option", "max_width=true", "-q")
    assert r.returncode == 2 and "expected an integer, got a boolean (true)" in r.stderr
    for link in ("in-simulator", "pipes"):
        out = tmp_path / link
        r = _cli(tmp_path, "run", "--policy", spec, "--policy-option", "max_width=64", "--link", link,
                 "--workload", str(kth_subset(5)), "--output", str(out), "-q")
        assert r.returncode == 0, r.stderr
        assert (out / "max_width.txt").read_text() == "64\n"
        assert (out / "jobs.csv").read_text().count("COMPLETED_SUCCESSFULLY") == 5


def test_a_spec_travels_whole_to_another_process(tmp_path):
    """Built-in presets and file-loaded classes alike: the child gets the policy (a preset: the registry's own
    object, its class with it; a user's class), not a name to resolve again."""
    f = tmp_path / "width.py"
    f.write_text(WIDTH_POLICY)
    for spec in (make_spec("sjf-bb", options={"order": "wfp"}, seed=7),
                 make_spec(f"{f}:WidthCapped", options={"max_width": 2})):
        again = pickle.loads(pickle.dumps(spec))
        assert isinstance(again, SchedulerSpec) and again.label == spec.label and again.options == spec.options
        assert getattr(again.policy, "__qualname__", again.policy) == getattr(spec.policy, "__qualname__", spec.policy)
        assert again.seed == spec.seed
    code = ("import pickle, sys\nspec = pickle.loads(sys.stdin.buffer.read())\n"
            "from burstbuffer.platforms.model import Platform\n"
            "print(spec.label, spec.build(Platform.simple(2, [10 ** 12])).max_width)")
    out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(make_spec(f"{f}:WidthCapped",
                         options={"max_width": 2})), capture_output=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert out.stdout.decode().split() == ["width-capped", "2"]


def test_capabilities_are_checked_when_the_spec_is_made():
    with pytest.raises(InputError, match=r"^--policy: slurm-bb: needs --model three-phase"):
        make_spec("slurm-bb", job_model="io-aware")
    with pytest.raises(InputError, match=r"^--model: io: unknown job model"):
        make_spec("sjf-bb", job_model="io")
    assert make_spec("slurm-bb", job_model="three-phase").policy.needs_staged_model


def test_the_docs_options_page_is_the_declarations():
    """docs/policy-options.md's table is made from the policies' declarations (`policyargs.options_page`):
    rewrite it with ``python -m burstbuffer.policyargs`` when a declaration changes."""
    from burstbuffer.policyargs import PAGE_BEGIN, PAGE_END, options_page
    text = (REPO / "docs" / "policy-options.md").read_text()
    assert text.split(PAGE_BEGIN + "\n", 1)[1].split(PAGE_END, 1)[0] == options_page()


def test_checking_a_built_in_policys_options_builds_no_policy(monkeypatch):
    """The rules across options are the class's (`options_conflict`, which its constructor applies too): the
    run's process that checks them builds no policy, and the rules still refuse."""
    from burstbuffer.schedulers.base import Scheduler

    def never(cls, *a, **k):
        raise AssertionError(f"{cls.__name__} built while its options were checked")
    monkeypatch.setattr(Scheduler, "build", classmethod(never))
    make_spec("bbsched", options={"window": 40, "order": "sjf"})
    make_spec("cerberus", options={"phases": "as-written", "starvation": "none"}, job_model="three-phase")
    make_spec("sjf-bb", options={"reservation_depth": 2})
    for policy, options, model, reason in (
            ("bbsched", {"window": 60}, "io-aware", "window=60: window must be <= 52 for bbsched, got 60"),
            ("bbsched-exact", {"window": 21}, "io-aware", "window=21: window must be <= 20 for bbsched-exact"),
            ("sjf-bb", {"reservation_depth": 2, "easy_extra_nodes": True}, "io-aware", "not to a reservation depth"),
            ("cerberus", {"phases": "as-written", "starvation": "reserve"}, "three-phase", "not reserve")):
        with pytest.raises(InputError, match=reason):
            make_spec(policy, options=options, job_model=model)


def test_a_study_resolves_each_policy_once_in_the_parent(kth_subset, tmp_path):
    """`reproduce` over replicates and two job models: each policy — a built-in name and a FILE.py policy —
    is resolved once in the process that read the command line (its options checked there), never again for
    another replicate, job model or column; the workers build the policies from the specs."""
    wl = kth_subset(8)
    (tmp_path / "capped.py").write_text((REPO / "examples" / "bb_capped_backfill.py").read_text())
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(COUNTER)
    env = dict(os.environ, BB_COUNT_LOG=str(tmp_path / "count.log"))
    env["PYTHONPATH"] = os.pathsep.join([str(hook), str(REPO), env.get("PYTHONPATH", "")])
    argv = [sys.executable, "-m", "burstbuffer", "reproduce", "--study", "three-phase", "--workload", str(wl),
            "--policies", f"fcfs-easy/io-aware,fcfs-easy/three-phase,{tmp_path / 'capped.py'}:BBCappedBackfill",
            "--replicates", "2", "--engine", "local", "--workers", "2", "--output", str(tmp_path / "o"), "-q"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    lines = [ln.split(" ", 1) for ln in (tmp_path / "count.log").read_text().splitlines()]
    parent = sorted(what for pid, what in lines if int(pid) == p.pid and what.startswith("resolve"))
    assert parent == sorted(["resolve fcfs-easy", f"resolve {tmp_path / 'capped.py'}:BBCappedBackfill"])
    assert sum(what == "app" for _, what in lines) == 6          # 3 columns × 2 replicates, each built once


def test_a_sweep_resolves_each_policy_once_in_the_parent(kth_subset, tmp_path):
    """`sweep` over two job models and two seeds: each policy of the campaign is resolved once, when the file is
    checked, in the process that read the command line; the runs build their policies from the specs."""
    wl = kth_subset(6)
    camp = tmp_path / "c.toml"
    camp.write_text('[campaign]\nmodels = ["io-aware", "alloc-only"]\nseeds = [0, 1]\n'
                    '[[policy]]\nname = "fcfs-bb"\n[[policy]]\nname = "sjf-bb"\noptions = {period = 600}\n'
                    f'[[workload]]\nfile = "{wl}"\n')
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(COUNTER)
    env = dict(os.environ, BB_COUNT_LOG=str(tmp_path / "count.log"))
    env["PYTHONPATH"] = os.pathsep.join([str(hook), str(REPO), env.get("PYTHONPATH", "")])
    argv = [sys.executable, "-m", "burstbuffer", "sweep", str(camp), "--engine", "local", "--workers", "2",
            "--output", str(tmp_path / "o"), "-q"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err
    lines = [ln.split(" ", 1) for ln in (tmp_path / "count.log").read_text().splitlines()]
    assert sorted(what for pid, what in lines if what.startswith("resolve")) == ["resolve fcfs-bb", "resolve sjf-bb"]
    assert {int(pid) for pid, what in lines if what.startswith("resolve")} == {p.pid}
    assert sum(what == "app" for _, what in lines) == 8           # 2 policies × 2 models × 2 seeds
