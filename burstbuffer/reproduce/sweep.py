"""`burstbuffer sweep CAMPAIGN.toml --output DIR`: a campaign of simulations, the cross product of its
policies (with options), workloads (files, transforms, parts), job models and seeds, minus its
exclusions, run by the Dask engine (`dask_engine`) or the local pool, resumably.

Campaign file (TOML; relative paths are relative to the file)::

    [campaign]
    platform = "../platforms/dragonfly96.xml"   # default: the bundled Dragonfly
    models = ["io-aware"]                       # job models (default: io-aware)
    seeds = [0]                                 # the policies' seeds (default: [0])
    timeout = 600                               # [s] of simulator silence, or of one decision, before a
                                                #   run fails (docs/reliability.md)
    run-timeout = 86400                         # [s] of wall-clock time before a run fails (default 1 day)
    network-model = "exact"                     # the simulator's --network-model (docs/io-model.md §5;
                                                #   default exact, Batsim's; e.g. uncontended on 10,000 nodes)

    [[policy]]                                  # one table per policy; label defaults to name
    name = "plan"
    label = "plan-2"
    options = { alpha = 2.0 }

    [[workload]]                                # one table per workload; label defaults to the file's stem
    file = "../workloads/kth-1000.json"
    jobs = 60                                   # transform: the first N jobs (file order)
    min-res = 40                                # transform: every job asks for at least N processors
    bb-scenario = "S2"                          # transform: BBSched's S1-S4 (docs/bbsched.md), for the
    bb-seed = 0                                 #   campaign's platform; bb-seed seeds the draw (default 0)
    parts = 2                                   # cut into N parts of equal duration, each run on its own

    [[exclude]]                                 # a run matching every key given here is not run
    policy = "plan-2"                           # (keys: policy (label), workload (label), model, seed)
    model = "alloc-only"

Each run's directory is ``DIR/runs/<id>/``, `<id>` the first 16 hex digits of the SHA-256 of what
determines its result (`run_id`): the workload's and the platform's content, the policy and its
options, the job model, the seed, the network model (when not exact) and the package version. A run whose ``summary.json`` is there is
reused, whatever campaign made it. ``DIR/campaign.csv`` lists every run (key, id, status, summary).
"""
from __future__ import annotations

import csv
import hashlib
import itertools
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from .. import cliargs
from ..version import __version__
from ..errors import InputError
from ..fileio import holding_output_lock, output_dir, read_toml
from ..jsonvalues import is_int, is_num
from ..signals import Interrupted, interruptible
from .execute import RunSettings, execute, interrupted, report_failed
from ..workloads.transform import SCENARIOS
from .runs import RunSpec, with_schedulers

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


def _unknown(path: Path, where: str, table: dict, known: set) -> None:
    for k in table:
        if k not in known:
            raise InputError(str(path), f"{where}.{k}", f"unknown key (known: {', '.join(sorted(known))})")


#: A label (policy or workload): it names runs and, for a transformed workload, a file of DIR/workloads/, so
#: it is a plain name: letters, digits and ``. _ + = -``, not starting with a dot, at most 100 characters.
LABEL_RE = re.compile(r"[A-Za-z0-9_+=-][A-Za-z0-9._+=-]{0,99}")


def _label(path: Path, item: str, value, default: str) -> str:
    """`value` (a label given in the file) checked against `LABEL_RE`, or `default` (e.g. a file's stem)
    with every other character replaced by "_" when none is given."""
    if value is None:
        safe = re.sub(r"[^A-Za-z0-9._+=-]", "_", default)[:100].lstrip(".") or "workload"
        return safe
    if not isinstance(value, str) or not LABEL_RE.fullmatch(value):
        raise InputError(str(path), item, f"{_excerpt(value)} is not a plain name (letters, digits, . _ + = -, "
                                          "not starting with a dot, at most 100 characters)")
    return value


def _excerpt(value, limit: int = 60) -> str:
    """repr of `value`, cut to `limit` characters: what an error message quotes of a bad value."""
    r = repr(value)
    return r if len(r) <= limit else r[:limit - 1] + "…"


def _int(path: Path, item: str, value, lo: int, hi: int | None = None) -> int:
    """`value` if an integer (not a boolean) in [lo, hi), else InputError (file, item, reason)."""
    if not is_int(value) or value < lo or (hi is not None and value >= hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {'2^32' if hi == 2**32 else hi})"
        raise InputError(str(path), item, f"expected an integer {rng}, not {_excerpt(value)}")
    return value


def _str_list(path: Path, item: str, value) -> list:
    if not isinstance(value, list) or not value:
        raise InputError(str(path), item, f"expected a non-empty list, not {_excerpt(value)}")
    return value


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
    _unknown(p, "campaign file", data, _TOP)
    top = data.get("campaign", {})
    if not isinstance(top, dict):
        raise InputError(str(p), "campaign", "expected a table [campaign]")
    _unknown(p, "campaign", top, _CAMPAIGN)
    base = p.resolve().parent
    if "platform" in top and not isinstance(top["platform"], str):
        raise InputError(str(p), "campaign.platform", f"expected a file name, not {_excerpt(top['platform'])}")
    platform = (base / top["platform"]) if "platform" in top else Path(DEFAULT_PLATFORM)
    if not platform.is_file():
        raise InputError(str(p), "campaign.platform", f"file not found: {platform}")
    models = _str_list(p, "campaign.models", top.get("models", ["io-aware"]))
    for m in models:
        if not isinstance(m, str) or m not in model_names():
            raise InputError(str(p), f"model {_excerpt(m)}", f"unknown job model (known: {', '.join(model_names())})")
    seeds = top.get("seeds", [0])
    if not isinstance(seeds, list) or not seeds or not all(is_int(s) and 0 <= s < 2**32 for s in seeds):
        raise InputError(str(p), "campaign.seeds", "expected a non-empty list of integers in [0, 2^32)")
    timeout = top.get("timeout", 600.0)
    if not is_num(timeout) or not timeout > 0:
        raise InputError(str(p), "campaign.timeout", f"expected a number > 0, not {_excerpt(timeout)}")
    run_timeout = top.get("run-timeout", RUN_TIMEOUT)
    if not is_num(run_timeout) or not run_timeout > 0:
        raise InputError(str(p), "campaign.run-timeout", f"expected a number > 0, not {_excerpt(run_timeout)}")
    from ..simulator.network import NETWORK_MODELS
    network_model = top.get("network-model", "exact")
    if not isinstance(network_model, str) or network_model not in NETWORK_MODELS:
        raise InputError(str(p), "campaign.network-model",
                         f"{_excerpt(network_model)} is not a network model (known: {', '.join(NETWORK_MODELS)})")
    tables = {}
    for what in ("policy", "workload", "exclude"):
        tables[what] = data.get(what, [])
        if not isinstance(tables[what], list) or not all(isinstance(t, dict) for t in tables[what]):
            raise InputError(str(p), what, f"expected tables [[{what}]]")
    policies = []
    for i, t in enumerate(tables["policy"]):
        _unknown(p, f"policy[{i}]", t, _POLICY)
        name = t.get("name")
        if not isinstance(name, str) or name not in POLICIES:
            raise InputError(str(p), f"policy[{i}].name",
                             f"{_excerpt(name)} is not a policy (known: {', '.join(POLICIES)})")
        opts = t.get("options", {})
        if not isinstance(opts, dict):
            raise InputError(str(p), f"policy[{i}].options", "expected a table")
        check_campaign_options(p, f"policy[{i}].options", name, opts)
        policies.append((_label(p, f"policy[{i}].label", t.get("label"), name), name, opts))
    workloads = []
    for i, t in enumerate(tables["workload"]):
        _unknown(p, f"workload[{i}]", t, _WORKLOAD)
        if "file" not in t:
            raise InputError(str(p), f"workload[{i}]", "needs file")
        if not isinstance(t["file"], str):
            raise InputError(str(p), f"workload[{i}].file", f"expected a file name, not {_excerpt(t['file'])}")
        f = base / t["file"]
        if not f.is_file():
            raise InputError(str(p), f"workload[{i}].file", f"file not found: {f}")
        for k in ("jobs", "min-res", "parts"):
            if k in t:
                _int(p, f"workload[{i}].{k}", t[k], 1)
        if "bb-scenario" in t and (not isinstance(t["bb-scenario"], str) or t["bb-scenario"] not in SCENARIOS):
            raise InputError(str(p), f"workload[{i}].bb-scenario",
                             f"{_excerpt(t['bb-scenario'])} is not a scenario (known: {', '.join(SCENARIOS)})")
        if "bb-seed" in t:
            _int(p, f"workload[{i}].bb-seed", t["bb-seed"], 0, 2**32)
        if "bb-seed" in t and "bb-scenario" not in t:
            raise InputError(str(p), f"workload[{i}].bb-seed", "only with bb-scenario")
        workloads.append((_label(p, f"workload[{i}].label", t.get("label"), f.stem), f,
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
        _unknown(p, f"exclude[{i}]", t, _EXCLUDE)
        for k, v in t.items():          # a key of the wrong type or naming nothing would exclude nothing
            if k == "seed":
                if not is_int(v) or v not in seeds:
                    raise InputError(str(p), f"exclude[{i}].seed", f"{_excerpt(v)} is not one of the campaign's "
                                                                   "seeds")
            elif not isinstance(v, str) or not (v in known[k] or (k == "workload" and
                                                                 v.partition("/part-")[0] in known[k])):
                raise InputError(str(p), f"exclude[{i}].{k}", f"{_excerpt(v)} is not a {k} label of the campaign "
                                                              f"(known: {', '.join(map(str, known[k]))})")
    return Campaign(p, policies, workloads, list(dict.fromkeys(models)), list(dict.fromkeys(seeds)), exclude,
                    platform, float(timeout), network_model, float(run_timeout))


def check_campaign_options(path: Path, item: str, policy: str, options: dict) -> None:
    """The policy options of a campaign (or study) row, checked as ``--policy-option`` checks them
    (`burstbuffer.schedulers.options.check_options`): InputError ``FILE: ITEM: NAME=VALUE: REASON``."""
    from ..schedulers.options import OptionError
    from ..schedulers.resolve import check_named_options
    try:
        check_named_options(policy, options)
    except OptionError as exc:
        raise InputError(str(path), item, str(exc)) from None


def sha256_file(path: Path) -> str:
    from ..fileio import open_input
    h = hashlib.sha256()
    with open_input(path, "file") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def run_id(workload_sha: str, platform_sha: str, policy: str, options: str, model: str, seed: int,
           network_model: str = "exact") -> str:
    """The run's directory name: 16 hex digits of the SHA-256 of (workload content hash, platform content
    hash, policy, options as canonical JSON, job model, seed, network model unless exact, burstbuffer
    version). The exact network model leaves the key as it was before the option existed."""
    fields = {"workload": workload_sha, "platform": platform_sha, "policy": policy, "options": options,
              "model": model, "seed": seed, "version": __version__}
    if network_model != "exact":
        fields["network_model"] = network_model
    key = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def prepare_workloads(c: Campaign, work: Path) -> list[tuple[str, Path]]:
    """[(label, Batsim workload path)] of the campaign: each workload with its transforms applied in the
    order jobs, min-res, bb-scenario, parts (written to `work`, named by a hash of the source content, the
    transforms and, with bb-scenario, the platform's content), or its parts ``LABEL/part-K``."""
    from ..workloads import Workload, load_workload, split_workload, write_workload
    out = []
    for label, f, tf in c.workloads:
        if not tf:
            out.append((label, f.resolve()))
            continue
        # the S1-S4 draw depends on the platform's BB nodes too
        plat = sha256_file(c.platform) if "bb-scenario" in tf else ""
        tag = hashlib.sha256((sha256_file(f) + json.dumps(tf, sort_keys=True) + plat).encode()).hexdigest()[:12]
        w = load_workload(f, require_bb=False)
        jobs = w.jobs[:tf["jobs"]] if "jobs" in tf else list(w.jobs)
        if "min-res" in tf:
            jobs = [j.replaced(res=min(max(j.res, tf["min-res"]), w.nb_res)) for j in jobs]
        w = Workload(w.name, f"{w.description} {json.dumps(tf, sort_keys=True)}".strip(), w.nb_res, jobs,
                     {j.profile: w.profiles[j.profile] for j in jobs})
        if "bb-scenario" in tf:
            w = bb_scenario(w, tf["bb-scenario"], tf.get("bb-seed", 0), c.platform, source=f"{c.path}: {label}")
        if "parts" in tf:
            for k, part in enumerate(split_workload(w, parts=tf["parts"])):
                if part.jobs:
                    dst = _inside(work, f"{label}-{tag}-part-{k}.json", c.path, label)
                    if not dst.is_file():
                        write_workload(dst, part)
                    out.append((f"{label}/part-{k}", dst.resolve()))
        else:
            dst = _inside(work, f"{label}-{tag}.json", c.path, label)
            if not dst.is_file():
                write_workload(dst, w)
            out.append((label, dst.resolve()))
    return out


def _inside(work: Path, name: str, source: Path, label: str) -> Path:
    """``work / name``, checked to stay inside `work` (a second guard behind `LABEL_RE`): InputError
    otherwise."""
    dst = work / name
    if Path(name).name != name or not dst.resolve().is_relative_to(work.resolve()):
        raise InputError(str(source), f"workload {_excerpt(label)}", "its label would write outside the output folder")
    return dst


def bb_scenario(w, scenario: str, seed: int, platform: Path, source: str = "workload"):
    """`w` transformed into BBSched's `scenario` (``S1`` … ``S4``: `burstbuffer.workloads.transform.SCENARIOS`)
    for the BB nodes and capacity of `platform` (the paper's 12 × 40 GB when the file does not say), drawn
    with `seed`. InputError as `transform_bb` (e.g. no original request above the threshold)."""
    from ..workloads.cli import PAPER_PLATFORM, platform_params
    from ..workloads.transform import transform_bb
    params = {**PAPER_PLATFORM, **platform_params(platform)}
    share, frac = SCENARIOS[scenario]
    return transform_bb(w, share=share, from_above=frac, seed=seed, total_bb=params["bb_nodes"] * params["bb_capacity"],
                        bb_nodes=params["bb_nodes"], bb_capacity=params["bb_capacity"], source=source).workload


def _excluded(c: Campaign, wl: str, pol: str, model: str, seed: int) -> bool:
    run = {"workload": wl, "policy": pol, "model": model, "seed": seed}
    for ex in c.exclude:
        if all(run[k] == v or (k == "workload" and wl.startswith(f"{v}/part-")) for k, v in ex.items()):
            return True
    return False


def plan_campaign(c: Campaign, out: Path) -> list[RunSpec]:
    """The campaign's runs (workload × policy × model × seed minus exclusions), each in
    ``out``/runs/<run_id>; key ``WORKLOAD/POLICY/MODEL/seed-S``."""
    from .runs import njobs
    wls = prepare_workloads(c, out / "workloads")
    psha = sha256_file(c.platform)
    specs = []
    for (wl, path), (pl, name, opts), model, seed in itertools.product(wls, c.policies, c.models, c.seeds):
        if _excluded(c, wl, pl, model, seed):
            continue
        o = json.dumps(opts, sort_keys=True, separators=(",", ":")) if opts else ""
        rid = run_id(sha256_file(path), psha, name, o, model, seed, c.network_model)
        specs.append(RunSpec(wl, name, str(path), model, str(out / "runs" / rid), njobs(path), seed=seed,
                             options=o, label=f"{wl}/{pl}/{model}/seed-{seed}"))
    return specs


def _result(spec: RunSpec, specs: list[RunSpec], results: dict[str, dict]) -> dict:
    """The result of `spec`: its own, or that of the run of the same directory (an identical run under
    other labels, run once), or ``{"error": "not run", "interrupted": True}``."""
    if spec.key in results:
        return results[spec.key]
    for s in specs:
        if s.out == spec.out and s.key in results:
            return results[s.key]
    return {"error": "not run", "interrupted": True}


def write_index(out: Path, specs: list[RunSpec], results: dict[str, dict]) -> Path:
    """``out``/campaign.csv: one row per run (key, workload, policy, options, model, seed, jobs, dir,
    status: done / failed / interrupted (stopped by a signal, or not run), error, mean waiting time [h],
    mean bounded slowdown, wall time [s]); written atomically."""
    path = out / "campaign.csv"
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["key", "workload", "policy", "options", "model", "seed", "jobs", "dir", "status", "error",
                    "mean_waiting_h", "mean_bounded_slowdown", "wall_time_s"])
        for s in specs:
            r = _result(s, specs, results)
            sm = r.get("summary", {})
            status = "done" if "error" not in r else "interrupted" if r.get("interrupted") else "failed"
            w.writerow([s.key, s.scope, s.policy, s.options, s.model, s.seed, s.jobs, s.out,
                        status, r.get("error", ""), sm.get("mean_waiting_h", ""),
                        sm.get("mean_bounded_slowdown", ""), r.get("wall_time", "")])
    os.replace(tmp, path)
    return path


def sweep(args) -> int:
    """The command: 0 when every run finished, 1 when some failed (rerun to retry them); InputError
    (exit 2) for a bad campaign file or engine options."""
    from .dask_engine import check_engine_arguments, make_executor
    check_engine_arguments(args)
    c = load_campaign(args.campaign)
    out = output_dir(args.output)
    specs = with_schedulers(plan_campaign(c, out))
    unique, seen = [], set()         # one run per directory (run id): identical runs under other labels
    for s in specs:
        if s.out not in seen:
            seen.add(s.out)
            unique.append(s)
    workers = args.workers or os.cpu_count() or 1
    same = f" ({len(specs) - len(unique)} identical to another, run once)" if len(unique) < len(specs) else ""
    print(f"sweep: {len(specs)} runs{same} ({len(c.policies)} policies, {len({s.scope for s in specs})} workload(s), "
          f"{len(c.models)} model(s), {len(c.seeds)} seed(s)), engine {args.engine}, output {out}")
    t0 = time.perf_counter()
    try:
        with interruptible():
            executor, close = make_executor(args, workers, pin=args.cpu == "auto", progress=not args.quiet,
                                            desc="sweep")
            try:
                results = execute(unique, executor, RunSettings(str(c.platform.resolve()), timeout=c.timeout,
                                                               network_model=c.network_model,
                                                               run_timeout=c.run_timeout))
            finally:
                close()
    except Interrupted as exc:
        return interrupted(exc, "sweep", write_index(out, specs, exc.result or {}), len(specs))
    index = write_index(out, specs, results)
    failed = [s.key for s in specs if "error" in _result(s, specs, results)]
    print(f"sweep: {len(specs) - len(failed)} of {len(specs)} runs done in {time.perf_counter() - t0:.0f} s; "
          f"table {index}")
    return report_failed(failed)


def register(subparsers) -> None:
    """Add the `sweep` subcommand (cli.py plugin hook)."""
    from .dask_engine import add_engine_arguments
    s = subparsers.add_parser(
        "sweep", help="run a campaign (policies × workloads × models × seeds) on Dask or a local pool",
        description="Run every simulation of a campaign file (TOML: policies with options, workloads with "
                    "transforms and parts, job models, seeds, exclusions) resumably: each run's directory is "
                    "named by a hash of what determines its result and reused once finished.")
    s.add_argument("campaign", metavar="CAMPAIGN.toml")
    s.add_argument("--output", required=True, metavar="DIR", help="output folder (reused: finished runs kept)")
    s.add_argument("--workers", type=cliargs.nonneg_int, default=0, metavar="N",
                   help="local worker processes, one single-threaded each (default: one per core)")
    add_engine_arguments(s, default_engine="dask")
    s.add_argument("--cpu", choices=("auto", "off"), default="auto",
                   help="auto: each local worker pins its runs to a CPU core of its own; off: no pinning")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=holding_output_lock(sweep))   # one writer per folder
