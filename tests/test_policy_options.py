"""One options path (docs/policy-options.md): every option declared once, on the policy class that takes it
(``declared_options``), the flag aliases of ``--policy-option`` generated from those declarations and read in
one place (`burstbuffer.policyargs.spec_from_args`), one check wherever options are read (run, serve, a
campaign when it is loaded, a study)."""
from __future__ import annotations

import argparse
import inspect
import json
import math
from pathlib import Path

import pytest

from burstbuffer.cli import build_parser, main
from burstbuffer.policyargs import flag_options, spec_from_args
from burstbuffer.errors import InputError
from burstbuffer.platforms.model import Platform
from burstbuffer.sweep.campaign import load_campaign
from burstbuffer.schedulers.options import PERIOD_MIN, OptionError, check_options, declared, option_names, takes
from burstbuffer.schedulers.registry import POLICIES, needs_staged_model

ROOT = Path(__file__).resolve().parents[1]
KTH = ROOT / "workloads" / "kth-1000.json"
EXAMPLE = "examples/bb_capped_backfill.py:BBCappedBackfill"
BUILT_IN = sorted(POLICIES)
FLAGS = {o.flag: o.name for o, _, _ in flag_options()}


def _spec_of(policy: str, pairs: list[str]):
    return spec_from_args(argparse.Namespace(policy=policy, policy_option=pairs), job_model="io-aware", seed=0)


def _one_line_exit_2(capsys, argv, *words):
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, err
    return err


# --------------------------------------------------------------------------- issue 26's cases
@pytest.mark.parametrize("policy, pair, reason", [
    ("cerberus", "starvation=bogus", "expected one of fcfs, reserve, none, got 'bogus'"),
    ("cerberus", "starvation_limit=NaN", "expected a finite number"),
    ("cerberus", "starvation_limit=Infinity", "expected a finite number"),
    ("bbsched", "window=0", "must be >= 1"),
    ("fcfs-bb", "order=bogus", "unknown order 'bogus'"),
    ("fcfs-bb", "period=0", f"must be >= {PERIOD_MIN:g} s"),
    ("fcfs-bb", "period=4e-7", f"must be >= {PERIOD_MIN:g} s"),
    ("bbsched", "generations=0", "must be >= 1"),
    # booleans are not numbers, numbers are not booleans
    ("bbsched", "window=true", "expected an integer, got a boolean (true)"),
    ("fcfs-bb", "period=true", "expected a number, got a boolean (true)"),
    ("cerberus", "starvation_limit=false", "expected a number, got a boolean (false)"),
    ("plan", "alpha=true", "expected a number, got a boolean (true)"),
    ("bbsched", "record_gd=1", "expected true or false, got 1"),
    ("fcfs-bb", "easy_extra_nodes=0", "expected true or false, got 0"),
    # strings are not numbers, integers are integers
    ("fcfs-bb", 'period="60"', "expected a number, got a string ('60')"),
    ("bbsched", "window=2.5", "expected an integer, got 2.5"),
    ("fcfs-bb", "reservation_depth=0", "expected an integer >= 1 or 'all', got 0"),
    ("fcfs-bb", "reservation_depth=most", "expected an integer >= 1 or 'all'"),
    ("plan", "exhaustive_limit=9", "must be in [0, 8]"),
    ("fcfs-bb", 'order_params={"unit": 0}', "unit: must be > 0"),
    ("fcfs-bb", 'order_params={"speed": 1}', "unknown wfp parameter 'speed'"),
    # the policy takes no such option
    ("fcfs-bb", "window=5", "policy fcfs-bb takes no option 'window'"),
    ("slurm-bb", "profit=nodes", "policy slurm-bb takes no option 'profit' (its options: none)"),
    # the constructor refuses the combination (probe platform)
    ("bbsched", "window=60", "window must be <= 52 for bbsched, got 60"),
    ("plan-2", "alpha=3", "policy plan-2 takes no option 'alpha'"),
])
def test_bad_policy_option_is_one_line_and_exit_2(capsys, policy, pair, reason):
    model = ["--model", "three-phase"] if needs_staged_model(policy) else []
    err = _one_line_exit_2(capsys, ["run", "--policy", policy, *model, "--policy-option", pair, "-q"])
    assert err.startswith(f"burstbuffer: --policy-option: {pair}: "), err
    assert reason in err


def test_generations_0_is_refused_as_the_flag_refuses_it(capsys):
    _one_line_exit_2(capsys, ["run", "--policy", "bbsched", "--generations", "0", "-q"], "--generations")
    _one_line_exit_2(capsys, ["run", "--policy", "bbsched", "--policy-option", "generations=0", "-q"],
                     "generations=0: must be >= 1")


def test_period_below_the_bound_is_refused_and_the_bound_runs(kth_subset, tmp_path, capsys):
    """4e-7 s stopped the simulator ("awaken in the past"); the smallest period accepted runs to the end."""
    wl = kth_subset(5)
    _one_line_exit_2(capsys, ["run", "--workload", str(wl), "--policy-option", "period=0.5", "-q"], "period=0.5")
    assert main(["run", "--workload", str(wl), "--policy", "fcfs-bb", "--policy-option", f"period={PERIOD_MIN}",
                 "--output", str(tmp_path / "o"), "-q"]) == 0
    assert (tmp_path / "o" / "jobs.csv").read_text().count("COMPLETED_SUCCESSFULLY") == 5


def test_serve_checks_options_the_same_way(capsys):
    err = _one_line_exit_2(capsys, ["serve", "--policy", "fcfs-bb", "--policy-option", "period=0"])
    assert err.startswith("burstbuffer: --policy-option: period=0: must be >= 1 s")
    _one_line_exit_2(capsys, ["serve", "--policy", "bbsched", "--window", "60"], "--window: 60:", "<= 52")


def test_a_pair_without_value_and_an_option_given_twice(capsys):
    _one_line_exit_2(capsys, ["run", "--policy-option", "period", "-q"], "--policy-option: period: expected NAME=VALUE")
    _one_line_exit_2(capsys, ["run", "--policy", "bbsched", "--window", "5", "--policy-option", "window=6", "-q"],
                     "option window given twice (--window and --policy-option)")
    _one_line_exit_2(capsys, ["run", "--policy-option", "period=60", "--policy-option", "period=120", "-q"],
                     "given twice")


# --------------------------------------------------------------------------- campaigns and studies
def _campaign(tmp_path, options: str, name: str = "bbsched") -> Path:
    p = tmp_path / "c.toml"
    p.write_text(f'[[policy]]\nname = "{name}"\noptions = {options}\n[[workload]]\nfile = "{KTH}"\njobs = 5\n')
    return p


@pytest.mark.parametrize("options, words", [
    ("{ window = 0 }", "policy[0].options: window=0: must be >= 1"),
    ("{ record_gd = 1 }", "policy[0].options: record_gd=1: expected true or false"),
    ("{ window = true }", "window=true: expected an integer, got a boolean"),
    ("{ generations = 0 }", "generations=0: must be >= 1"),
    ("{ period = 4e-7 }", "period=4e-07: must be >= 1 s"),
    ("{ no_such_option = 1 }", "policy bbsched takes no option 'no_such_option'"),
])
def test_campaign_options_are_checked_when_it_is_loaded(tmp_path, capsys, options, words):
    camp = _campaign(tmp_path, options)
    with pytest.raises(InputError) as exc:
        load_campaign(camp)
    assert str(exc.value).startswith(f"{camp}: ") and words in str(exc.value)
    err = _one_line_exit_2(capsys, ["sweep", str(camp), "--output", str(tmp_path / "o"), "--engine", "local"], words)
    assert not (tmp_path / "o" / "runs").exists()      # nothing ran


def test_campaign_options_are_not_rewritten(tmp_path):
    """What is checked is what runs: the options dict (hashed into the run ids) is left as written."""
    c = load_campaign(_campaign(tmp_path, '{ window = 10, order = "sjf", order_params = { unit = 30 } }'))
    assert c.policies == [("bbsched", "bbsched", {"window": 10, "order": "sjf", "order_params": {"unit": 30}})]


def test_study_options_are_checked_before_the_runs():
    from burstbuffer.reproduce.command import check_study_options
    from burstbuffer.reproduce.runs import PlannedRun
    study = argparse.Namespace(name="orders")
    good = PlannedRun("whole", "sjf-bb", "w.json", "io-aware", "out", 5, options='{"order":"ljf"}', column="sjf-bb/ljf")
    check_study_options(study, [good, good])
    bad = PlannedRun("whole", "sjf-bb", "w.json", "io-aware", "out", 5, options='{"order":"fifo"}', column="sjf-bb/fifo")
    with pytest.raises(InputError, match=r"^--study orders: sjf-bb/fifo: order=fifo: unknown order 'fifo'"):
        check_study_options(study, [good, bad])


# --------------------------------------------------------------------------- the flags are aliases
#: flag (with its command-line value) → the same option given as --policy-option
ALIASES = [
    ("plan", ["--alpha", "1.5"], ["alpha=1.5"]),
    ("cerberus", ["--profit", "nodes"], ["profit=nodes"]),
    ("cerberus", ["--starvation-limit", "60"], ["starvation_limit=60.0"]),
    ("sjf-bb", ["--order", "wfp"], ["order=wfp"]),
    ("sjf-bb", ["--queues", "workloads/mira-like-queues.toml"], ["queues=workloads/mira-like-queues.toml"]),
    ("sjf-bb", ["--reservation-depth", "2"], ["reservation_depth=2"]),
    ("sjf-bb", ["--reservation-depth", "all"], ["reservation_depth=all"]),
    ("sjf-bb", ["--easy-extra-nodes"], ["easy_extra_nodes=true"]),
    ("sjf-bb", ["--order", "wfp", "--wfp-unit", "30"], ["order=wfp", 'order_params={"unit": 30.0}']),
    ("bbsched", ["--window", "10"], ["window=10"]),
    ("bbsched", ["--starvation-bound", "0"], ["starvation_bound=0"]),
    ("bbsched", ["--generations", "7"], ["generations=7"]),
    ("bbsched", ["--population", "4"], ["population=4"]),
    ("bbsched", ["--mutation-rate", "0.25"], ["mutation_rate=0.25"]),
    ("bbsched", ["--record-gd"], ["record_gd=true"]),
]


def _resolve(policy, argv, command="run"):
    model = ["--model", "three-phase"] if needs_staged_model(policy) else []
    args = build_parser().parse_args([command, "--policy", policy, *model, *argv])
    return spec_from_args(args, job_model=args.model, seed=args.seed)


@pytest.mark.parametrize("command", ["run", "serve"])
@pytest.mark.parametrize("policy, flags, pairs", ALIASES)
def test_each_flag_gives_the_options_of_its_policy_option(policy, flags, pairs, command):
    via_flag = _resolve(policy, flags, command)
    via_option = _resolve(policy, [a for p in pairs for a in ("--policy-option", p)], command)
    assert via_flag.options == via_option.options and via_flag.options
    assert via_flag.text == via_option.text == policy


def test_every_flag_is_declared_and_on_every_command_line():
    """The flags are generated from the declarations: each declared flag is on run's and serve's command
    lines (serve has --alpha and --profit too), and every alias tested above is one of them."""
    assert {f for _, flags, _ in ALIASES for f in flags if f.startswith("--")} == set(FLAGS)
    declared_flags = {o.flag for cls in POLICIES.values() for o in cls.declared_options if o.flag}
    assert declared_flags == set(FLAGS)
    for command in ("run", "serve"):
        text = build_parser()._subparsers._group_actions[0].choices[command].format_help()
        assert all(flag in text for flag in FLAGS), command


def test_alpha_runs_plan_n_as_plan_with_that_alpha():
    s = _resolve("plan-2", ["--alpha", "1.5"])
    assert (s.text, s.label, s.options) == ("plan", "plan-1.5", {"alpha": 1.5})
    assert s.policy is POLICIES["plan"]
    assert s.build(Platform.simple(2, [10 ** 12])).alpha == 1.5
    with pytest.raises(InputError, match="takes no option 'alpha'"):      # the preset sets it
        _resolve("plan-2", ["--policy-option", "alpha=1.5"])


# --------------------------------------------------------------------------- the table meets the policies
@pytest.mark.parametrize("policy", BUILT_IN)
def test_every_declared_option_is_taken_by_the_policy_at_its_default(policy):
    """Each option a policy declares is a keyword its constructor (or ``build``) takes, with a default there
    (an option the policy did not take would be a TypeError)."""
    cls = POLICIES[policy]
    plat = Platform.simple(2, [10 ** 12])
    for name, (opt, default) in takes(cls)[0].items():
        assert opt is not None and default is not inspect.Parameter.empty, name
        cls.build(plat, seed=0, **{name: default})
        check_options(cls, {name: default})


def test_no_default_is_written_twice():
    """Each option's default is written once in the built-in policies' classes: in one constructor, which the
    subclasses reach by passing ``**options`` on — a subclass may give another default (a default order of its
    own), never the same one again; the declarations carry none."""
    where: dict[tuple, set] = {}
    for cls in {p.policy for p in POLICIES.values()}:
        for c in cls.__mro__:
            for fn in (c.__dict__.get("__init__"), c.__dict__.get("build")):
                fn = getattr(fn, "__func__", fn)
                if fn is None or not c.__module__.startswith("burstbuffer."):
                    continue
                for p in inspect.signature(fn).parameters.values():
                    if p.default is not p.empty and p.name != "seed":
                        where.setdefault((p.name, repr(p.default)), set()).add(c.__qualname__)
    twice = {n: sorted(cs) for n, cs in where.items() if len(cs) > 1}
    assert not twice, twice
    assert all(not hasattr(o, "default") for cls in POLICIES.values() for o in cls.declared_options)


# --------------------------------------------------------------------------- user policies
def test_user_policy_options_come_from_its_constructor(capsys):
    assert _spec_of(EXAMPLE, ["bb_share=0.25"]).options == {"bb_share": 0.25}
    for pair, reason in (("bb_share=true", "expected a number, got a boolean (true)"),
                         ("bb_share=NaN", "expected a finite number"),
                         ("bb_share=x", "expected a number, got a string ('x')"),
                         ("share=1", "takes no option 'share' (its options: bb_share, period, staging, "
                                     "staging_bandwidth)"),
                         # inherited from Policy through **options: the table's rule
                         ("period=0.5", "must be >= 1 s"),
                         ("staging=later", "expected one of bb-first, with-nodes")):
        with pytest.raises(InputError, match=f"--policy-option: {pair}: .*{reason}".replace("(", r"\(").replace(")", r"\)")):
            _spec_of(EXAMPLE, [pair])


def test_a_user_constructor_refusing_a_value_is_the_reason(tmp_path):
    f = tmp_path / "pol.py"
    f.write_text("from burstbuffer.schedulers import Policy\n\n"
                 "class Capped(Policy):\n"
                 "    def __init__(self, platform, *, seed=0, share: float = 0.5):\n"
                 "        super().__init__(platform, seed=seed)\n"
                 "        if not 0 < share <= 1:\n"
                 "            raise ValueError(f'share must be in (0, 1], got {share}')\n"
                 "    def schedule(self, now):\n"
                 "        return []\n")
    spec = f"{f}:Capped"
    with pytest.raises(InputError, match=r"^--policy-option: share=2: share must be in \(0, 1\], got 2$"):
        _spec_of(spec, ["share=2"])


# --------------------------------------------------------------------------- burstbuffer policies
def test_policies_prints_every_option_with_type_default_and_meaning(capsys):
    assert main(["policies", "sjf-bb"]) == 0
    out = capsys.readouterr().out
    opts = declared(POLICIES["sjf-bb"])
    for name in option_names(POLICIES["sjf-bb"]):
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(f"{name}: "))
        assert ", default " in line, line
        meaning = out.splitlines()[out.splitlines().index(line) + 1].strip()
        assert meaning and meaning == opts[name].meaning + (f" (alias {opts[name].flag})" if opts[name].flag else "")
    assert "period: float >= 1 (or null), default null" in out
    assert "reservation_depth: int >= 1 or all (or null), default null" in out
    assert main(["policies", "plan"]) == 0
    assert "alpha: float > 0, default 2.0" in capsys.readouterr().out
    assert main(["policies", "plan-3"]) == 0
    head, preset, rest = capsys.readouterr().out.split("\n", 2)
    assert preset == "    = PlanScheduler with alpha=3 (burstbuffer.schedulers.plan)"   # the preset sets α
    assert "alpha" not in rest                                                        # so it takes no α
    assert main(["policies", EXAMPLE]) == 0
    assert "bb_share: float, default 0.5" in capsys.readouterr().out


def test_policies_lists_all_with_their_options(capsys):
    assert main(["policies"]) == 0
    out = capsys.readouterr().out
    for p in BUILT_IN:
        assert any(ln.startswith(p + "  ") for ln in out.splitlines()), p
    assert out.count("window: int >= 1, default 20") == 1        # shared by the ten window policies: said once
    lines = out.splitlines()
    described = [ln.strip() for ln in lines if ln.startswith("    ") and not ln.startswith("        ")
                 and ": " in ln and not ln.strip().startswith(("shared options:", "options:"))]
    assert len(described) == len(set(described)), "an option described twice"
    from burstbuffer.schedulers.options import describe
    for p in BUILT_IN:           # each policy's shared + own options are exactly its declared ones
        at = next(i for i, ln in enumerate(lines) if ln.startswith(p + "  "))
        block = lines[at + 1:next((j for j in range(at + 1, len(lines)) if not lines[j].strip()), len(lines))]
        shared = next((ln.split(":", 1)[1] for ln in block if ln.strip().startswith("shared options:")), "")
        own = [ln.strip().split(":", 1)[0] for ln in block
               if ln.startswith("    ") and not ln.startswith("        ") and ": " in ln
               and not ln.strip().startswith(("shared options:", "options", "its own options"))]
        names = [n.strip() for n in shared.split(",") if n.strip()] + own
        assert sorted(names) == sorted(r[0] for r in describe(POLICIES[p])), p


def test_option_error_is_one_line():
    e = OptionError("window", 0, "must be >= 1")
    assert str(e) == "window=0: must be >= 1" and isinstance(e, ValueError)
    assert str(OptionError("order_params", {"unit": 0}, "bad")) == 'order_params={"unit": 0}: bad'
    assert math.isnan(json.loads("NaN"))          # what --policy-option reads: NaN is a float, refused by the check
