"""A campaign's runs: its workloads prepared (transforms, parts), each run's id (`run_id`) and directory,
the cross product minus the exclusions (`plan_campaign`)."""
from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

from ..errors import InputError
from ..version import __version__
from ..workloads.transform import SCENARIOS
from ..reproduce.runs import PlannedRun
from .campaign import Campaign
from .fields import quoted


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
        raise InputError(str(source), f"workload {quoted(label)}", "its label would write outside the output folder")
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


def plan_campaign(c: Campaign, out: Path) -> list[PlannedRun]:
    """The campaign's runs (workload × policy × model × seed minus exclusions), each in
    ``out``/runs/<run_id>; key ``WORKLOAD/POLICY/MODEL/seed-S``."""
    from ..reproduce.runs import njobs
    wls = prepare_workloads(c, out / "workloads")
    psha = sha256_file(c.platform)
    runs = []
    for (wl, path), (pl, name, opts), model, seed in itertools.product(wls, c.policies, c.models, c.seeds):
        if _excluded(c, wl, pl, model, seed):
            continue
        o = json.dumps(opts, sort_keys=True, separators=(",", ":")) if opts else ""
        rid = run_id(sha256_file(path), psha, name, o, model, seed, c.network_model)
        runs.append(PlannedRun(wl, name, str(path), model, str(out / "runs" / rid), njobs(path), seed=seed,
                             options=o, label=f"{wl}/{pl}/{model}/seed-{seed}"))
    return runs
