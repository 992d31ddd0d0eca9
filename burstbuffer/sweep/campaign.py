"""A campaign file (TOML, `burstbuffer.sweep`'s docstring) read and checked: `load_campaign` → `Campaign`."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..fileio import read_toml
from ..jsonvalues import is_int, is_num
from ..workloads.transform import SCENARIOS
from .fields import check_campaign_options, int_in, label_of, nonempty_list, quoted, unknown_keys

_TOP = {"campaign", "policy", "workload", "exclude"}
_CAMPAIGN = {"platform", "models", "seeds", "timeout", "run-timeout", "name", "network-model"}
#: [s] a campaign run's default wall-clock limit (campaign key run-timeout; reproduce --run-timeout)
RUN_TIMEOUT = 86400.0
_POLICY = {"name", "label", "options"}
_WORKLOAD = {"file", "label", "jobs", "min-res", "parts", "bb-scenario", "bb-seed"}
_EXCLUDE = {"policy", "workload", "model", "seed"}


@dataclass(frozen=True)
class Campaign:
    """A parsed campaign file: `policies` [(label, name, options dict)], `workloads` [(label, file,
    transforms dict)], `models`, `seeds`, `exclude` [dict], `platform` path, `timeout` [s],
    `network_model` (the simulator's, `burstbuffer.simulator.network.NETWORK_MODELS`), `run_timeout` [s]."""

    path: Path
    policies: list
    workloads: list
    models: list
    seeds: list
    exclude: list
    platform: Path
    timeout: float
    network_model: str = "exact"
    run_timeout: float = RUN_TIMEOUT
    #: policy name → its `PolicyInfo`, resolved once when the file was checked (`with_schedulers` reuses it)
    resolved: dict = field(default_factory=dict, compare=False)


def load_campaign(path: str | Path) -> Campaign:
    """Parse and check the campaign file `path` (module docstring). InputError (file, item, reason) for
    a missing or malformed file, an unknown key, policy or job model, a missing workload file, a value of
    the wrong type (booleans are not numbers), an empty list, a label that is not a plain name
    (`LABEL_RE`: labels name files inside the output folder), duplicate labels, a bad number or a bad policy
    option (`check_campaign_options`: every option checked here, once, not at each run). Repeated models or
    seeds are kept once."""
    from ..io_model.registry import model_names
    from ..runner import DEFAULT_PLATFORM
    from ..schedulers import POLICIES
    p = Path(path)
    data = read_toml(p, "campaign")
    unknown_keys(p, "campaign file", data, _TOP)
    top = data.get("campaign", {})
    if not isinstance(top, dict):
        raise InputError(str(p), "campaign", "expected a table [campaign]")
    unknown_keys(p, "campaign", top, _CAMPAIGN)
    base = p.resolve().parent
    if "platform" in top and not isinstance(top["platform"], str):
        raise InputError(str(p), "campaign.platform", f"expected a file name, not {quoted(top['platform'])}")
    platform = (base / top["platform"]) if "platform" in top else Path(DEFAULT_PLATFORM)
    if not platform.is_file():
        raise InputError(str(p), "campaign.platform", f"file not found: {platform}")
    models = nonempty_list(p, "campaign.models", top.get("models", ["io-aware"]))
    for m in models:
        if not isinstance(m, str) or m not in model_names():
            raise InputError(str(p), f"model {quoted(m)}", f"unknown job model (known: {', '.join(model_names())})")
    seeds = top.get("seeds", [0])
    if not isinstance(seeds, list) or not seeds or not all(is_int(s) and 0 <= s < 2**32 for s in seeds):
        raise InputError(str(p), "campaign.seeds", "expected a non-empty list of integers in [0, 2^32)")
    timeout = top.get("timeout", 600.0)
    if not is_num(timeout) or not timeout > 0:
        raise InputError(str(p), "campaign.timeout", f"expected a number > 0, not {quoted(timeout)}")
    run_timeout = top.get("run-timeout", RUN_TIMEOUT)
    if not is_num(run_timeout) or not run_timeout > 0:
        raise InputError(str(p), "campaign.run-timeout", f"expected a number > 0, not {quoted(run_timeout)}")
    from ..simulator.network import NETWORK_MODELS
    network_model = top.get("network-model", "exact")
    if not isinstance(network_model, str) or network_model not in NETWORK_MODELS:
        raise InputError(str(p), "campaign.network-model",
                         f"{quoted(network_model)} is not a network model (known: {', '.join(NETWORK_MODELS)})")
    tables = {}
    for what in ("policy", "workload", "exclude"):
        tables[what] = data.get(what, [])
        if not isinstance(tables[what], list) or not all(isinstance(t, dict) for t in tables[what]):
            raise InputError(str(p), what, f"expected tables [[{what}]]")
    policies, resolved = [], {}
    for i, t in enumerate(tables["policy"]):
        unknown_keys(p, f"policy[{i}]", t, _POLICY)
        name = t.get("name")
        if not isinstance(name, str) or name not in POLICIES:
            raise InputError(str(p), f"policy[{i}].name",
                             f"{quoted(name)} is not a policy (known: {', '.join(POLICIES)})")
        opts = t.get("options", {})
        if not isinstance(opts, dict):
            raise InputError(str(p), f"policy[{i}].options", "expected a table")
        resolved[name] = check_campaign_options(p, f"policy[{i}].options", name, opts)
        policies.append((label_of(p, f"policy[{i}].label", t.get("label"), name), name, opts))
    workloads = []
    for i, t in enumerate(tables["workload"]):
        unknown_keys(p, f"workload[{i}]", t, _WORKLOAD)
        if "file" not in t:
            raise InputError(str(p), f"workload[{i}]", "needs file")
        if not isinstance(t["file"], str):
            raise InputError(str(p), f"workload[{i}].file", f"expected a file name, not {quoted(t['file'])}")
        f = base / t["file"]
        if not f.is_file():
            raise InputError(str(p), f"workload[{i}].file", f"file not found: {f}")
        for k in ("jobs", "min-res", "parts"):
            if k in t:
                int_in(p, f"workload[{i}].{k}", t[k], 1)
        if "bb-scenario" in t and (not isinstance(t["bb-scenario"], str) or t["bb-scenario"] not in SCENARIOS):
            raise InputError(str(p), f"workload[{i}].bb-scenario",
                             f"{quoted(t['bb-scenario'])} is not a scenario (known: {', '.join(SCENARIOS)})")
        if "bb-seed" in t:
            int_in(p, f"workload[{i}].bb-seed", t["bb-seed"], 0, 2**32)
        if "bb-seed" in t and "bb-scenario" not in t:
            raise InputError(str(p), f"workload[{i}].bb-seed", "only with bb-scenario")
        workloads.append((label_of(p, f"workload[{i}].label", t.get("label"), f.stem), f,
                          {k: t[k] for k in ("jobs", "min-res", "bb-scenario", "bb-seed", "parts") if k in t}))
    for what, items in (("policy", policies), ("workload", workloads)):
        if not items:
            raise InputError(str(p), what, "the campaign needs at least one")
        labels = [x[0] for x in items]
        dup = {x for x in labels if labels.count(x) > 1}
        if dup:
            raise InputError(str(p), what, f"duplicate label(s) {', '.join(sorted(dup))}: set label = ...")
    exclude = tables["exclude"]
    known = {"policy": [x[0] for x in policies], "workload": [x[0] for x in workloads], "model": models}
    for i, t in enumerate(exclude):
        unknown_keys(p, f"exclude[{i}]", t, _EXCLUDE)
        for k, v in t.items():          # a key of the wrong type or naming nothing would exclude nothing
            if k == "seed":
                if not is_int(v) or v not in seeds:
                    raise InputError(str(p), f"exclude[{i}].seed", f"{quoted(v)} is not one of the campaign's "
                                                                   "seeds")
            elif not isinstance(v, str) or not (v in known[k] or (k == "workload" and
                                                                 v.partition("/part-")[0] in known[k])):
                raise InputError(str(p), f"exclude[{i}].{k}", f"{quoted(v)} is not a {k} label of the campaign "
                                                              f"(known: {', '.join(map(str, known[k]))})")
    return Campaign(p, policies, workloads, list(dict.fromkeys(models)), list(dict.fromkeys(seeds)), exclude,
                    platform, float(timeout), network_model, float(run_timeout), resolved)
