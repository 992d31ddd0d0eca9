"""Policy name → preset (docs/policies.md names): the one registry of the built-in policies.

A built-in policy is a *preset*: the class of its algorithm with some of that class's options set
(`Preset`). One class per algorithm — `easy.EasyBackfilling` (its head's reservation with or without BB, its
backfilling order, its reservation depth are options), `plan.PlanScheduler` (α), `bbsched.Scored` (the
§4.3 score and weights), `cerberus.Cerberus` (its starvation rule)… — and every name users run is one line
of `PRESETS`. Each class declares what the rest of the project reads about it: its options
(``declared_options``: type, range, meaning, command-line alias; the default is its constructor's), its
capabilities (``needs_staged_model``: it decides stage-ins, so it needs a job model that stages separately).
A preset takes the class's options but those it sets.

A new built-in policy is its module plus one line in `PRESETS` (tests and benchmarks iterate over the
registry or over the tags of its presets: ``family:…``, ``paper:…``, ``hashed``); a policy of one's own
needs no line anywhere (``--policy FILE.py:CLASS``, or an entry point of ``burstbuffer.policies``:
`burstbuffer.schedulers.resolve`).

Plan-based policies (Kopanski & Rzadca 2021, §3.3): ``plan-1``, ``plan-2``, ``plan-3`` fix α = 1, 2, 3;
``plan`` takes any α > 0 (option ``alpha``; ``--alpha A`` on ``plan-N`` runs ``plan`` with α = A,
`Preset.for_flags`). Window policies (Fan et al. 2019, BBSched, and its §4.3 baselines; docs/bbsched.md).
``cerberus`` and ``slurm-bb`` decide stage-ins (docs/io-model.md §3).
"""
from __future__ import annotations

import importlib
import string
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

from ..lazy import LazyRegistry

__all__ = ["POLICIES", "PRESETS", "Preset", "any_model_names", "classes", "names_tagged", "names_taking",
           "needs_staged_model", "policy_names"]


@dataclass(frozen=True, eq=False)
class Preset:
    """A built-in policy: name → the class of its algorithm + the options the name sets.

    It stands where a policy class stands (`resolve.PolicyInfo.policy`, `burstbuffer.spec.SchedulerSpec.policy`):
    ``declared_options`` (the class's, but those the preset sets), ``needs_staged_model``, ``options_conflict``
    and ``build(platform, seed=…, **options)``, which builds the class with the preset's options and the given
    ones and names the policy after the preset. Picklable (the class travels by its import path).

    Attributes:
        name: the registry name (``sjf-bb``).
        where: (module, class name) of the algorithm's class, imported on first use.
        options: the options the preset sets (not the user's: `build` refuses another value with a TypeError,
            and the options check says the policy does not take them).
        doc: one paragraph: what the policy is and its source (``burstbuffer policies`` prints its first line).
        tags: ``family:NAME``, ``paper:KEY``, ``hashed`` (its schedules are recorded by
            benchmarks/schedule_hashes.py)…: what tests and benchmarks select presets by (`names_tagged`).
        flag_variant: (preset, label template): a command-line flag alias giving an option the template names
            runs that preset (this one or another) with it, labelled by the template (``--alpha 1.5`` on
            ``plan-2`` or ``plan``: ``plan``, ``plan-1.5``); None: no such variant (a flag giving an option the
            preset sets is then refused as any such option).
    """

    name: str
    where: tuple[str, str]
    options: dict[str, Any] = field(default_factory=dict)
    doc: str = ""
    tags: frozenset[str] = frozenset()
    flag_variant: tuple[str, str] | None = None

    @property
    def policy(self) -> type:
        """The algorithm's class (a `burstbuffer.schedulers.base.Scheduler` subclass)."""
        return getattr(importlib.import_module(self.where[0]), self.where[1])

    @property
    def declared_options(self) -> tuple:
        return tuple(o for o in self.policy.declared_options if o.name not in self.options)

    @property
    def needs_staged_model(self) -> bool:
        return bool(getattr(self.policy, "needs_staged_model", False))

    def options_conflict(self, options: dict) -> str | None:
        """The class's rule across options, over the preset's options and `options`."""
        return self.policy.options_conflict({**options, **self.options})

    def build(self, platform, *, seed: int = 0, **options):
        """The policy for `platform`: the class built with the preset's options and `options` (TypeError for an
        option the preset sets to another value; the class's TypeError / ValueError on bad ones), named after
        the preset."""
        for k, v in options.items():
            if k in self.options and v != self.options[k]:
                raise TypeError(f"policy {self.name} fixes {k} = {self.options[k]!r}; it takes no other {k}")
        sched = self.policy(platform, seed=seed, **{**options, **self.options})
        sched.name = self.name
        return sched

    __call__ = build

    def for_flags(self, flag_options: dict) -> tuple["Preset", str | None]:
        """(the preset to run, its label or None: its own) when the command line's flag aliases give
        `flag_options`: this preset, or its `flag_variant` when the flags give every option its template names."""
        if self.flag_variant is None:
            return self, None
        other, template = self.flag_variant
        named = {f for _, f, _, _ in string.Formatter().parse(template) if f}
        if not named or not named <= flag_options.keys():
            return self, None
        return POLICIES[other], template.format(**{k: flag_options[k] for k in named})

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"<preset {self.name}: {self.where[1]}({opts})>"

    def __reduce__(self):
        # a built-in travels by name (the same object in the other process), another by value
        return (_preset, (self.name,)) if PRESETS.get(self.name) is self else \
            (Preset, (self.name, self.where, self.options, self.doc, self.tags, self.flag_variant))


def _preset(name: str) -> Preset:
    return PRESETS[name]


_S = "burstbuffer.schedulers."
_K21, _F19, _Y = "paper:kopanski2021", "paper:fan2019", "paper:yan-cerberus"


def _p(name, module, cls, doc, *tags, flag_variant=None, **options) -> tuple[str, Preset]:
    return name, Preset(name, (_S + module, cls), options, doc, frozenset(tags), flag_variant)


#: every built-in policy, one line each: name, module, class, description, tags, the options it sets
PRESETS: dict[str, Preset] = dict([
    _p("fcfs", "easy", "FcfsPolicy", "FCFS without backfilling (Kopanski & Rzadca 2021, Algorithm 1 procedure FCFS).",
       "family:easy", _K21, "hashed"),
    _p("fcfs-easy", "easy", "EasyBackfilling", "EASY with a processor-only reservation for the head job "
       "(Kopanski & Rzadca 2021, Algorithm 1).", "family:easy", _K21, "hashed", reserve_bb=False, sjf_backfill=False),
    _p("filler", "easy", "Filler", "start every queued job that fits now, in queue order, no reservation "
       "(Kopanski & Rzadca 2021, §4.2).", "family:easy", _K21, "hashed"),
    _p("fcfs-bb", "easy", "EasyBackfilling", "EASY with the head job's processors + BB reservation "
       "(Kopanski & Rzadca 2021, Algorithm 1).", "family:easy", _K21, "hashed", reserve_bb=True, sjf_backfill=False),
    _p("sjf-bb", "easy", "EasyBackfilling", "fcfs-bb backfilling by ascending walltime (Kopanski & Rzadca 2021, "
       "Algorithm 1 lines 15-16).", "family:easy", _K21, "hashed", reserve_bb=True, sjf_backfill=True),
    _p("plan-1", "plan", "PlanScheduler", "plan-based scheduling with α = 1 (Kopanski & Rzadca 2021, §3.3).",
       "family:plan", _K21, "hashed", alpha=1, flag_variant=("plan", "plan-{alpha:g}")),
    _p("plan-2", "plan", "PlanScheduler", "plan-based scheduling with α = 2 (Kopanski & Rzadca 2021, §3.3).",
       "family:plan", _K21, "hashed", alpha=2, flag_variant=("plan", "plan-{alpha:g}")),
    _p("plan-3", "plan", "PlanScheduler", "plan-based scheduling with α = 3 (Kopanski & Rzadca 2021, §3.3).",
       "family:plan", _K21, "hashed", alpha=3, flag_variant=("plan", "plan-{alpha:g}")),
    _p("plan", "plan", "PlanScheduler", "plan-based scheduling with simulated annealing, any α > 0 "
       "(Kopanski & Rzadca 2021, §3.3, Algorithm 2).", "family:plan", _K21, flag_variant=("plan", "plan-{alpha:g}")),
    _p("conservative-bb", "conservative", "ConservativeBB", "conservative backfilling with BB reservations "
       "(ICS 632 slides, \"Conservative Backfilling\").", "family:conservative", "hashed"),
    _p("bbsched", "bbsched", "BBSched", "BBSched's GA + the §3.2.4 decision rule (Fan et al. 2019 §3).",
       "family:window", _F19),
    _p("bbsched-exact", "bbsched", "BBSchedExact", "the §3.2.4 rule on the true Pareto set (Fan et al. 2019; "
       "window <= 20).", "family:window", _F19),
    _p("bbsched-nsga2", "bbsched", "BBSchedNSGA2", "pymoo's NSGA-II instead of BBSched's GA, + the §3.2.4 rule "
       "(a labelled alternative).", "family:window", _F19),
    _p("bbsched-naive", "bbsched", "Naive", "the paper's Baseline: EASY with processor + BB reservation and the "
       "starvation bound, no window selection (Fan et al. 2019 §4.3).", "family:window", _F19),
    _p("weighted", "bbsched", "Scored", "maximise 0.5·node usage + 0.5·BB usage (Fan et al. 2019 §4.3).",
       "family:window", _F19, score="weighted", w_nodes=0.5),
    _p("weighted-cpu", "bbsched", "Scored", "weights 80 % nodes / 20 % BB (Fan et al. 2019 §4.3 Weighted_CPU).",
       "family:window", _F19, score="weighted", w_nodes=0.8),
    _p("weighted-bb", "bbsched", "Scored", "weights 20 % nodes / 80 % BB (Fan et al. 2019 §4.3 Weighted_BB).",
       "family:window", _F19, score="weighted", w_nodes=0.2),
    _p("constrained-cpu", "bbsched", "Scored", "maximise node usage under the node and BB capacities "
       "(Fan et al. 2019 §4.3 Constrained_CPU).", "family:window", _F19, score="nodes", w_nodes=0.5),
    _p("constrained-bb", "bbsched", "Scored", "maximise BB usage under the capacities (Fan et al. 2019 §4.3 "
       "Constrained_BB).", "family:window", _F19, score="bb", w_nodes=0.5),
    _p("bin-packing", "bbsched", "BinPacking", "the highest alignment score first, repeatedly (Fan et al. 2019 "
       "§4.3 Bin_Packing).", "family:window", _F19),
    _p("cerberus", "cerberus", "Cerberus", "Cerberus as written: bb_in, bb_run, bb_out per job, exact knapsacks, "
       "no starvation rule (Yan et al., Cerberus, §3).", "family:cerberus", _Y),
    _p("cerberus-fcfs-24h", "cerberus", "Cerberus", "cerberus plus the project's starvation rule \"fcfs\": a "
       "queue whose oldest job waited > starvation_limit (24 h) is served first come first served.",
       "family:cerberus", starvation="fcfs"),
    _p("slurm-bb", "slurm_bb", "SlurmBB", "Slurm's burst-buffer plugin: stage-ins for the jobs expected to "
       "start soonest, then EASY backfilling over the staged jobs (docs/io-model.md §3).", "family:cerberus"),
])

def _loaded(p: Preset) -> Preset:
    p.policy               # its class's module imported on the first look-up of the name
    return p


#: name → `Preset`; listing the names imports no policy module, a look-up imports its class's
#: (`burstbuffer.lazy.LazyRegistry`); names added by assignment (``POLICIES["mine"] = Preset(…)``) come after
#: the built-ins
POLICIES: MutableMapping[str, Preset] = LazyRegistry({n: (lambda p=p: _loaded(p)) for n, p in PRESETS.items()})


def policy_names() -> list[str]:
    """Registered policy names, sorted."""
    return sorted(POLICIES)


def classes() -> dict[type, list[str]]:
    """The algorithms' classes → the presets that run them, in registry order (imports every policy class)."""
    out: dict[type, list[str]] = {}
    for n, p in POLICIES.items():
        out.setdefault(p.policy, []).append(n)
    return out


def names_tagged(tag: str) -> list[str]:
    """The presets with `tag` (``hashed``, ``family:easy``, ``paper:fan2019``…), in registry order."""
    return [n for n, p in POLICIES.items() if tag in p.tags]


def needs_staged_model(name: str) -> bool:
    """True if built-in policy `name` decides stage-ins and so runs only under a job model that stages
    separately (its class's ``needs_staged_model``)."""
    return POLICIES[name].needs_staged_model


def any_model_names() -> list[str]:
    """The built-in policies that run under every job model (those without ``needs_staged_model``), in
    registry order (imports every policy class)."""
    return [n for n, p in POLICIES.items() if not p.needs_staged_model]


def names_taking(option: str) -> list[str]:
    """The built-in policies that take `option`, in registry order (imports every policy class)."""
    return [n for n, p in POLICIES.items() if any(o.name == option for o in p.declared_options)]
