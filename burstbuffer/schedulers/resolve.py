"""Policy specs → policy classes: built-in names, installed entry points, user modules and files.

One resolver for every command (`run`, `serve`, `reproduce --policies`, `policies`, the pybatsim adapter);
the interface a user policy implements is `burstbuffer.schedulers.api.Policy` (docs/writing-a-policy.md).

A *policy spec* is one of:

- a built-in name (`registry.POLICIES`: ``sjf-bb``, ``plan-2``, ``cerberus``, …);
- the name of an entry point of the group ``burstbuffer.policies`` of an installed distribution
  (``[options.entry_points] burstbuffer.policies = my-policy = my_pkg.policies:MyPolicy``);
- ``package.module:ClassName`` (an importable module);
- ``path/to/file.py:ClassName`` (a Python file, loaded under a private module name; relative paths are
  taken from the current folder).

The object named must be a subclass of `burstbuffer.schedulers.base.Scheduler` (any class built as
``Class.build(platform, seed=N, **options)``). Every failure is a `PolicyError` whose message is one line
(``SPEC: REASON``); the CLI turns it into ``burstbuffer: --policy: SPEC: REASON`` and exit status 2.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from ..platforms.model import Platform
from .base import Scheduler
from .registry import POLICIES

__all__ = ["ENTRY_POINT_GROUP", "PolicyError", "PolicyInfo", "all_policies", "is_spec",
           "load_file", "make_scheduler",
           "policy_info", "resolve_policy"]

#: entry-point group under which installed packages offer policies
ENTRY_POINT_GROUP = "burstbuffer.policies"


class PolicyError(ValueError):
    """A policy spec that cannot be resolved; str() is one line ``SPEC: REASON``."""

    def __init__(self, spec: str, reason: str):
        self.spec, self.reason = spec, reason
        super().__init__(f"{spec}: {reason}")


@dataclass(frozen=True)
class PolicyInfo:
    """A resolved policy.

    Attributes:
        spec: what the user wrote (a name or ``MODULE:CLASS`` / ``FILE.py:CLASS``).
        label: a short name safe as a folder name (the built-in or entry-point name; else the class's own
            ``name`` attribute, else its class name) — `run`'s default ``out/LABEL``, reproduce's run folder.
        policy: a built-in's `registry.Preset` (its class and the options it sets), else the policy class (a
            `Scheduler` subclass); either gives its options, capabilities and ``build``.
        origin: ``built-in``, ``entry point of DIST``, ``module MODULE`` or ``file PATH``.
    """

    spec: str
    label: str
    policy: type[Scheduler]
    origin: str

    @property
    def description(self) -> str:
        """First line of the policy class's docstring ('' if none)."""
        doc = (getattr(self.policy, "doc", None) or inspect.getdoc(self.policy) or "").strip()
        return " ".join(doc.split("\n\n", 1)[0].split()) if doc else ""

    @property
    def options(self) -> list[str]:
        """The keyword options the policy takes, as ``name=default`` (``name`` alone when it has no
        default): the class's declared options and its own keyword parameters
        (`burstbuffer.schedulers.options.describe`)."""
        from .options import describe
        rows = describe(self.policy)
        return [n if d == "(required)" else f"{n}={d}" for n, _, d, _ in rows if not n.startswith("**")]


def is_spec(text: str) -> bool:
    """True if `text` has the ``MODULE:CLASS`` / ``FILE.py:CLASS`` form (rather than a registered name)."""
    return ":" in text


def _safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", label) or "policy"


def _label_of(cls, fallback: str) -> str:
    own = cls.__dict__.get("name") if isinstance(cls, type) else None
    return _safe(own if isinstance(own, str) and own and own != "?" else fallback)


def _check_class(spec: str, obj, where: str):
    if not (isinstance(obj, type) and issubclass(obj, Scheduler)):
        raise PolicyError(spec, f"{where} is not a subclass of "
                                "burstbuffer.schedulers.Scheduler (docs/writing-a-policy.md)")
    if inspect.isabstract(obj):
        missing = ", ".join(sorted(obj.__abstractmethods__))
        raise PolicyError(spec, f"{where} is abstract (it does not define {missing})")
    return obj


def _import_error(spec: str, what: str, exc: BaseException) -> PolicyError:
    tb = exc.__traceback__
    line = ""
    while tb is not None:   # the innermost frame of the user's code
        line = f" (line {tb.tb_lineno} of {tb.tb_frame.f_code.co_filename})"
        tb = tb.tb_next
    if isinstance(exc, SyntaxError):
        line = f" (line {exc.lineno} of {exc.filename})"
        return PolicyError(spec, f"cannot import {what}: SyntaxError: {exc.msg}{line}")
    return PolicyError(spec, f"cannot import {what}: {exc.__class__.__name__}: {exc}{line}")


def load_file(spec: str, path_text: str):
    """The module of Python file `path_text` (loaded once under a private name; `spec` names it in a
    `PolicyError`)."""
    path = Path(path_text).expanduser()
    if not path.exists():
        raise PolicyError(spec, f"file {path_text} not found")
    if not path.is_file():
        raise PolicyError(spec, f"{path_text} is not a regular file")
    path = path.resolve()
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    modname = f"burstbuffer_user_policy_{_safe(path.stem)}_{digest}"
    if modname in sys.modules:
        return sys.modules[modname]
    mspec = importlib.util.spec_from_file_location(modname, path)
    if mspec is None or mspec.loader is None:
        raise PolicyError(spec, f"{path_text} cannot be loaded as a Python module (not a .py file?)")
    mod = importlib.util.module_from_spec(mspec)
    sys.modules[modname] = mod   # dataclasses and pickling look the module up by name
    try:
        mspec.loader.exec_module(mod)
    except BaseException as exc:  # the user's code: SyntaxError, ImportError, anything it raises
        del sys.modules[modname]
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise _import_error(spec, path_text, exc) from None
    return mod


def _load_module(spec: str, modname: str):
    try:
        return importlib.import_module(modname)
    except ModuleNotFoundError as exc:
        if exc.name and (modname == exc.name or modname.startswith(exc.name + ".")):
            raise PolicyError(spec, f"no module named {exc.name!r}") from None
        raise _import_error(spec, f"module {modname}", exc) from None
    except Exception as exc:
        raise _import_error(spec, f"module {modname}", exc) from None


def _resolve_target(spec: str, target: str) -> tuple[type, str, str]:
    """(class, default label, origin) of ``MODULE:CLASS`` or ``FILE.py:CLASS``."""
    where, _, attr = target.rpartition(":")
    if not where or not attr:
        raise PolicyError(spec, "expected MODULE:CLASS or FILE.py:CLASS")
    attr = attr.strip()
    if where.endswith(".py") or "/" in where or "\\" in where:
        mod = load_file(spec, where)
        origin = f"file {where}"
    else:
        mod = _load_module(spec, where)
        origin = f"module {where}"
    obj = mod
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            break
    if obj is None:
        raise PolicyError(spec, f"{where} has no class {attr}")
    cls = _check_class(spec, obj, f"{attr}")
    return cls, cls.__name__, origin


def _entry_points() -> dict:
    """name → EntryPoint of the group `ENTRY_POINT_GROUP` (first one wins on duplicates)."""
    out = {}
    from importlib.metadata import entry_points  # 20-30 ms: only when a name is not built in
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        out.setdefault(ep.name, ep)
    return out


def policy_info(policy: str) -> "PolicyInfo":
    """The `PolicyInfo` of a policy name or ``MODULE:CLASS`` / ``FILE.py:CLASS`` spec, for the command line.
    Raises InputError("--policy", spec, reason) if it cannot be resolved."""
    from ..errors import InputError
    try:
        return resolve_policy(policy)
    except PolicyError as exc:
        raise InputError("--policy", exc.spec, exc.reason) from None


def resolve_policy(spec: str) -> PolicyInfo:
    """Resolve a policy spec (see the module docstring) into a `PolicyInfo`.

    Order: built-in names, then entry points, then ``MODULE:CLASS`` / ``FILE.py:CLASS``. Raises
    `PolicyError` (one line) for an unknown name, a missing file or module, a missing attribute, an
    object that is not a `Scheduler` subclass, or an exception raised while importing the user's code.
    """
    spec = str(spec).strip()
    if not spec:
        raise PolicyError("''", "empty policy name")
    if spec in POLICIES:
        return PolicyInfo(spec, spec, POLICIES[spec], "built-in")
    eps = _entry_points()
    if spec in eps:
        ep = eps[spec]
        dist = getattr(getattr(ep, "dist", None), "name", None) or "an installed package"
        try:
            obj = ep.load()
        except Exception as exc:
            raise _import_error(spec, f"entry point {ep.value}", exc) from None
        cls = _check_class(spec, obj, f"entry point {ep.value}")
        return PolicyInfo(spec, _safe(spec), cls, f"entry point of {dist}")
    if not is_spec(spec):
        import difflib
        names = sorted(POLICIES) + sorted(eps)
        close = difflib.get_close_matches(spec, names, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        raise PolicyError(spec, f"unknown policy ({hint}choose from {', '.join(names)}, or give MODULE:CLASS or "
                                "FILE.py:CLASS; `burstbuffer policies` lists them)")
    cls, name, origin = _resolve_target(spec, spec)
    return PolicyInfo(spec, _label_of(cls, name), cls, origin)


def all_policies() -> tuple[list[PolicyInfo], list[str]]:
    """(every built-in policy then every entry point of `ENTRY_POINT_GROUP`, sorted by name; the one-line
    errors of the entry points that failed to load)."""
    infos = [PolicyInfo(n, n, POLICIES[n], "built-in") for n in sorted(POLICIES)]
    errors = []
    for name in sorted(_entry_points()):
        if name in POLICIES:
            errors.append(f"{name}: entry point ignored, a built-in policy has that name")
            continue
        try:
            infos.append(resolve_policy(name))
        except PolicyError as exc:
            errors.append(str(exc))
    return infos, errors


def make_scheduler(name: str, platform: Platform, *, seed: int = 0, **options) -> Scheduler:
    """Build the scheduler of policy `name` for `platform`.

    `options` are the policy's options (its class's ``declared_options``, listed by ``burstbuffer policies
    NAME``), passed to its ``build``; `seed` seeds the policy's private `random.Random` (the only source of
    randomness). `name` may be a built-in name, an entry point of ``burstbuffer.policies``, ``MODULE:CLASS`` or
    ``FILE.py:CLASS`` (`resolve_policy`). Raises `PolicyError` (a ValueError, one line) if `name` cannot be
    resolved; the policy raises TypeError/ValueError on bad options (unchecked here: a run checks them once,
    `burstbuffer.spec.make_spec`).
    """
    return resolve_policy(name).policy.build(platform, seed=seed, **options)
