"""Start-up of the `burstbuffer` command (issue 30): building the parser imports no heavy library.

Behavioural checks, not timings (the times: benchmarks/bench_startup.py): each command line runs in a
fresh interpreter, which then reports the modules it imported."""
from __future__ import annotations

import argparse
import io
import subprocess
import sys
import types
from contextlib import redirect_stdout

import pytest

from burstbuffer import cli

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

#: never imported while building the parser of any command (`--help` of every subcommand and of the top)
NEVER = ("scipy", "matplotlib", "pandas", "simgrid", "dask", "distributed", "numpy", "zmq")

PROBE = ("import io, sys, contextlib\nfrom burstbuffer.cli import main\n"
         "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
         "    code = main(sys.argv[1:])\n"
         "print(code)\n"
         "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")


def imported_by(*argv: str) -> tuple[int, set[str]]:
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True)
    code, mods = out.stdout.strip().splitlines()[-2:]
    return int(code), set(mods.split())


@pytest.mark.parametrize("argv", [["--help"], ["--version"], []])
def test_top_level_help_imports_no_heavy_library(argv):
    code, mods = imported_by(*argv)
    assert code == 0
    assert not mods & set(NEVER), sorted(mods & set(NEVER))
    assert "burstbuffer" in mods  # the probe did import the package


@pytest.mark.parametrize("command", list(cli._BUILTIN) + list(cli._PLUGINS))
def test_subcommand_help_imports_no_heavy_library(command):
    code, mods = imported_by(command, "--help")
    assert code == 0
    assert not mods & set(NEVER), (command, sorted(mods & set(NEVER)))


def test_a_subcommand_still_imports_what_it_runs(tmp_path):
    """The laziness is real: a command that does work imports its libraries (here `metrics` → pandas)."""
    csv = tmp_path / "jobs.csv"
    csv.write_text("job_id,submission_time,starting_time,finish_time,requested_number_of_resources\n")
    _, mods = imported_by("metrics", str(csv))
    assert "pandas" in mods


def test_policy_registry_lists_names_without_importing_them():
    """`POLICIES` (burstbuffer.lazy.LazyRegistry): the names come without importing a policy; a look-up
    imports the policy's module (once: the same class twice), and declaring the policies (their classes, the
    options they declare) costs no numpy: their solvers are imported at their first decision."""
    code = ("import sys\nfrom burstbuffer.schedulers.registry import POLICIES\n"
            "names = list(POLICIES)\n"
            "before = 'burstbuffer.schedulers.easy' in sys.modules\n"
            "same = POLICIES['sjf-bb'] is POLICIES['sjf-bb']\n"
            "after = 'burstbuffer.schedulers.easy' in sys.modules\n"
            "classes = list(POLICIES.values())\n"
            "print(len(names), before, after, same, 'sjf-bb' in POLICIES, 'easy' in POLICIES, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["23", "False", "True", "True", "True", "False", "False"]


def _help_lines(parser: argparse.ArgumentParser) -> dict[str, str]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest: a.help for a in sub._choices_actions}


def test_listed_help_matches_each_subcommands_own():
    """`burstbuffer --help` lists every subcommand from cli's tables without importing them: the tables
    must say what each subcommand's own parser says."""
    full = _help_lines(cli.build_parser())
    light = _help_lines(cli.build_parser(["--help"]))
    assert list(full) == list(light) == list(cli._BUILTIN) + list(cli._PLUGINS)
    assert full == light


def test_top_level_help_text_is_unchanged_by_laziness():
    out_full, out_light = io.StringIO(), io.StringIO()
    with redirect_stdout(out_full):
        cli.build_parser().print_help()
    with redirect_stdout(out_light):
        cli.build_parser(["--help"]).print_help()
    assert out_full.getvalue() == out_light.getvalue()
    for name in ("run", "simulate", "serve", "reproduce", "sweep"):
        assert name in out_light.getvalue()


def test_only_the_named_subcommand_is_built():
    p = cli.build_parser(["simulate", "--help"])
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    assert any(o == "--platform" for a in sub.choices["simulate"]._actions for o in a.option_strings)
    assert [a for a in sub.choices["run"]._actions if a.option_strings != ["-h", "--help"]] == []


def test_unknown_subcommand_is_a_usage_error(capsys):
    assert cli.main(["no-such-command"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_job_models_load_on_demand():
    code = ("import sys\nfrom burstbuffer.io_model.registry import make_model, model_names\n"
            "names = model_names()\nbefore = 'burstbuffer.io_model.io_aware' in sys.modules\n"
            "m = make_model('io-aware')\nprint(names, before, type(m).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['alloc-only', 'io-aware', 'three-phase'] False IOAwareModel"


def test_lazy_packages_export_their_names():
    import burstbuffer.reproduce as rep
    import burstbuffer.schedulers as sch
    for pkg in (rep, sch):
        for name in pkg.__all__:
            value = getattr(pkg, name)
            assert value is not None and not isinstance(value, types.ModuleType), (pkg.__name__, name)
    with pytest.raises(AttributeError):
        sch.no_such_name  # noqa: B018
    from burstbuffer.schedulers import EasyBackfilling
    from burstbuffer.schedulers.easy import EasyBackfilling as direct
    assert EasyBackfilling is direct


def test_policies_listing_does_not_load_the_runner():
    """`burstbuffer policies` describes the policies (it imports their classes, not their solvers) but not
    the run machinery: the runner, the metrics summary, pandas, ZeroMQ, SimGrid."""
    code, mods = imported_by("policies")
    assert code == 0
    assert not mods & {"pandas", "zmq", "simgrid", "matplotlib", "scipy", "numpy"}, sorted(mods)


def test_closed_stdout_ends_quietly():
    """A reader that stops early (`burstbuffer policies | head -1`): no traceback, SIGPIPE's status."""
    import os
    r, w = os.pipe()
    os.close(r)         # the reader is gone before the first write: every write fails (EPIPE)
    try:
        out = subprocess.run([sys.executable, "-m", "burstbuffer", "policies"], stdout=w, stderr=subprocess.PIPE,
                             text=True, timeout=60)
    finally:
        os.close(w)
    assert out.returncode == 141, out.stderr
    assert "Traceback" not in out.stderr and "BrokenPipe" not in out.stderr, out.stderr


def test_the_simulators_run_path_imports_no_numpy():
    """The embedded simulator computes Batsim's long doubles without numpy (`simulator.longdouble`): its
    modules, the compiled bridge's loader and the outputs import no numpy, pandas or scipy."""
    code = ("import sys\nimport burstbuffer.simulator.cli, burstbuffer.simulator.server, burstbuffer.simulator._bridge\n"
            "import burstbuffer.simulator.outputs, burstbuffer.simulator.energy\n"
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'pandas', 'scipy'})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_the_simulators_one_job_run_imports_only_what_it_runs(tmp_path):
    """A one-job simulation (bridged core, its compiled bridge cached) imports neither the data-class
    machinery nor what only building the bridge needs (docs/startup.md); with the compiled ZeroMQ link
    (`simulator.transport`), neither pyzmq nor ctypes. The audit of the outputs after the simulation (numpy,
    pandas: docs/audit.md) is left out with --no-audit: this measures the simulation itself."""
    import os

    from .sim_sched import REPO, run_in_process

    wl = {"nb_res": 96, "jobs": [{"id": "1", "subtime": 0, "walltime": 100, "res": 4, "profile": "p"}],
          "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6}}}
    out = run_in_process(tmp_path, wl, ["--core", "bridged", "--no-audit"], platform=REPO / "tests" / "data" / "cluster96.xml",
                         after="print(status)\nprint(' '.join(sorted(sys.modules)))")
    assert out.returncode == 0, out.stderr
    status, mods = out.stdout.strip().splitlines()[-2:]
    assert status == "0" and (tmp_path / "out_jobs.csv").exists()
    mods = set(mods.split())
    assert {"simgrid", "burstbuffer.simulator.server", "burstbuffer.simulator.transport"} <= mods
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    bare = subprocess.run([sys.executable, "-c", "import sys; print(' '.join(sys.modules))"], cwd=str(REPO),
                          env=env, capture_output=True, text=True, check=True).stdout.split()
    unwanted = {"dataclasses", "inspect", "hashlib", "subprocess", "sysconfig", "importlib.resources", "numpy",
                "socket"} - set(bare)   # (what the interpreter's site start-up imports here is not ours)
    from burstbuffer.cbuild import NativeUnavailable
    from burstbuffer.simulator import transport
    try:
        transport.load_native()
        unwanted |= {"zmq", "ctypes"} - set(bare)
    except NativeUnavailable:
        pass
    assert not mods & unwanted, sorted(mods & unwanted)
