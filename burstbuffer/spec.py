"""`SchedulerSpec`: what the scheduler side of one run is, made and checked once.

Every way a run starts — ``burstbuffer run`` and ``serve`` (their flags, `burstbuffer.policyargs`), a campaign
row or a study's run (`burstbuffer.runner.run` with a policy name), the pybatsim launcher, the Python API —
makes one `SchedulerSpec` with `make_spec`: the policy named by ``--policy`` is resolved there (the only
resolution of the run), its options checked against what the policy class declares
(`burstbuffer.schedulers.options.check_options`), the job model looked up and the policy's capabilities held
against it (a policy that decides stage-ins needs a model that stages separately). Everything downstream
builds from the spec (`SchedulerSpec.build`, `SchedulerSpec.make_job_model`) and never looks a name up again;
the spec is picklable, so that the in-simulator child of ``run`` (`burstbuffer.colocated`) receives it whole.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import InputError

if TYPE_CHECKING:
    from .io_model.base import JobModel
    from .platforms.model import Platform
    from .schedulers.base import Scheduler
    from .schedulers.resolve import PolicyInfo

__all__ = ["SchedulerSpec", "make_spec"]


@dataclass(frozen=True)
class SchedulerSpec:
    """The scheduler side of one run.

    Attributes:
        policy: a built-in policy's `burstbuffer.schedulers.registry.Preset`, or the user's policy class (a
            `burstbuffer.schedulers.base.Scheduler` subclass): either is built as ``policy.build(platform, …)``.
        label: the policy's short name (``sjf-bb``, ``plan-1.5``, a user class's name): the default output
            folder, the progress bar, run.json.
        options: the policy's checked options (name → value), passed to ``policy.build`` as they are.
        job_model: the job model's name (`burstbuffer.io_model.registry.JOB_MODELS`).
        seed: seed of the policy's random choices (an integer >= 0).
        text: the policy as it was given (``--policy``), for messages.
        origin: ``built-in``, ``entry point of DIST``, ``module M`` or ``file PATH`` (`PolicyInfo.origin`).
    """

    policy: type
    label: str
    options: dict = field(default_factory=dict)
    job_model: str = "io-aware"
    seed: int = 0
    text: str = ""
    origin: str = "built-in"

    def build(self, platform: Platform) -> Scheduler:
        """The policy for `platform` (at SIMULATION_BEGINS): ``policy.build(platform, seed, **options)``."""
        return self.policy.build(platform, seed=self.seed, **self.options)

    def make_job_model(self) -> JobModel:
        """A new job model of this spec's kind."""
        return self.job_model_class()

    @property
    def job_model_class(self) -> type:
        """The job model's class (`burstbuffer.io_model.registry.JOB_MODELS`)."""
        from .io_model.registry import JOB_MODELS
        return JOB_MODELS[self.job_model]

    @property
    def queues(self) -> Any:
        """The policy's named queues (its ``queues`` option; None: one queue)."""
        return self.options.get("queues")

    def __reduce__(self):
        # a class loaded from FILE.py lives in a private module (`resolve._load_file`) that another process
        # has not imported: it travels as (file, class name) and is loaded from its file there
        cls = self.policy
        where = getattr(sys.modules.get(cls.__module__), "__file__", None)
        if cls.__module__.startswith("burstbuffer_user_policy_") and where:
            return (_from_file, (where, cls.__qualname__, self.label, self.options, self.job_model, self.seed,
                                 self.text, self.origin))
        return (SchedulerSpec, (cls, self.label, self.options, self.job_model, self.seed, self.text, self.origin))


def _from_file(path: str, qualname: str, *rest) -> SchedulerSpec:
    from .schedulers.resolve import load_file
    obj = load_file(path, path)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return SchedulerSpec(obj, *rest)


def make_spec(policy: str | PolicyInfo, *, options: dict | None = None, job_model: str = "io-aware",
              seed: int = 0, flag_options: dict | None = None, sources: dict | None = None) -> SchedulerSpec:
    """The checked `SchedulerSpec` of `policy` (a name, ``MODULE:CLASS``, ``FILE.py:CLASS``, or its
    `PolicyInfo` when the caller resolved it already) with `options` (``--policy-option`` and the like) and
    `flag_options` (the command line's flag aliases; they may choose a variant of a built-in policy,
    `burstbuffer.schedulers.registry.Preset.for_flags`: ``--alpha A`` on ``plan`` or ``plan-N``
    runs ``plan`` labelled ``plan-A``).

    Raises InputError (one line): ``--policy: SPEC: REASON`` for a policy that cannot be resolved or that
    needs another job model, ``--model: NAME: unknown job model``, and for a bad option ``WHERE: TEXT: REASON``
    with (WHERE, TEXT) from `sources` (option name → the flag or ``--policy-option`` and what the user wrote;
    default ``--policy-option``, ``NAME=VALUE``)."""
    from .io_model.registry import JOB_MODELS, model_names
    from .schedulers.options import OptionError, check_options
    from .schedulers.resolve import PolicyInfo, policy_info

    info = policy if isinstance(policy, PolicyInfo) else policy_info(str(policy))
    cls, label = info.policy, info.label
    flag_options = dict(flag_options or {})
    if flag_options and hasattr(cls, "for_flags"):       # a preset: a flag may run its variant (`Preset.for_flags`)
        cls, variant = cls.for_flags(flag_options)
        label = variant or label
    merged = {**flag_options, **(options or {})}
    try:
        model_class = JOB_MODELS[job_model]
    except KeyError:
        raise InputError("--model", job_model,
                         f"unknown job model (choose from {', '.join(model_names())})") from None
    if getattr(cls, "needs_staged_model", False) and not getattr(model_class, "stages_separately", False):
        raise InputError("--policy", info.spec, "needs --model three-phase (it decides stage-ins, docs/io-model.md §3)")
    sources = sources or {}
    try:
        check_options(cls, merged, label=label)
    except OptionError as exc:
        where, text = sources.get(exc.name, ("--policy-option", f"{exc.name}={exc.text}"))
        raise InputError(where, text, exc.reason) from None
    text = info.spec if cls is info.policy else cls.name        # the preset that runs (plan, for plan-N --alpha)
    return SchedulerSpec(cls, label, merged, job_model, seed, text, info.origin)
