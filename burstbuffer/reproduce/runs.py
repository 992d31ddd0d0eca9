"""Run planning: which simulations a study needs — scope × policy on the selected workloads under one
job model, plus the study's Gantt run — each with its own output directory.

Scopes: ``whole`` (the selected workload: the bundled first 1000 KTH jobs, the whole KTH trace, its
first N jobs or a given file) and ``part-00`` … (its parts: the paper's 16 three-week KTH parts, or a
cut into N parts of equal duration, ``burstbuffer.workloads.split``); ``gantt`` is the study's extra
run (Kopanski & Rzadca, Euro-Par 2021, §4.2, Fig. 3). A run's directory is
``OUTPUT/runs/<scope>/<policy>/``; workloads made here go to ``OUTPUT/workloads/``.

Replicates (docs/verdicts.md, "Replicates"): replicate k is one independent draw of every random input —
the KTH workload converted under burst-buffer/communication seed k (`workload from-swf --seed k`; its
parts cut from that draw), the policies under seed ``--seed`` + k. Every column shares replicate k's
inputs (paired). Replicate 0 is the plan's usual runs; replicate k > 0 goes to
``OUTPUT/runs/r<k>/<scope>/<policy>/`` and its workloads to ``OUTPUT/workloads/draw-<k>/``. A given
``--workload`` or ``--parts-from`` file has no draw of its own: its replicates vary the policies' seed only.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..data import bundled
from ..errors import InputError
from ..schedulers.resolve import PolicyError, is_spec, resolve_policy
from .study import Study

KTH_SWF = bundled("workloads", "KTH-SP2-1996-2.1-cln.swf.gz")
#: the artifact's 16 three-week KTH parts, gzip-compressed (part-N.json.gz, part-N.yaml)
KTH_SPLIT = bundled("workloads", "KTH-split")
KTH_1000 = bundled("workloads", "kth-1000.json")


@dataclass(frozen=True)
class PlannedRun:
    """One simulation: `policy` on `workload` (a Batsim JSON path, `jobs` static jobs) under job model
    `model`, into directory `out`; `scope` names the workload's role (``whole``, ``part-NN``, ``gantt``).
    A campaign (`burstbuffer.sweep`) also sets `seed` (None: the plan's `RunSettings.seed`),
    `options` (the policy's options as canonical JSON, "" for none) and `label` (its key). `column`: the
    study variant's label (`burstbuffer.reproduce.study.Variant`) when it is not the policy's name: the run's
    name in the study's tables. `platform`: a SimGrid file for this run instead of the plan's (`RunSettings`;
    "" for the plan's). `replicate`: the replicate k (module docstring; 0: the plan's usual run); `placebo`:
    True for a run of a control's A/A column (a replicate beyond the R judged, `reproduce --placebo`)."""

    scope: str
    policy: str
    workload: str
    model: str
    out: str
    jobs: int
    seed: int | None = None
    options: str = ""
    label: str = ""
    column: str = ""
    platform: str = ""
    replicate: int = 0
    placebo: bool = False
    #: the run's `burstbuffer.spec.SchedulerSpec` (policy resolved, options checked), made once in the parent
    #: for the plan (`with_schedulers`); None: the worker makes it from `policy` and `options`
    scheduler: Any = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        """``label``, else ``scope/policy``: unique within a plan."""
        return self.label or f"{self.scope}/{self.policy}"

    def cost(self) -> float:
        """Rough relative cost (jobs × a policy factor), to start the longest runs first."""
        factor = 3.0 if self.policy.startswith("plan") else 1.0
        if self.model == "alloc-only":
            factor = 0.3
        return self.jobs * factor


@dataclass
class RunPlan:
    """The runs of one invocation. specs: in plan order (whole, then parts, then gantt); policies: the
    policies planned; skipped: what was asked but cannot run (text); notes: how the workloads were
    chosen (report text); whole / parts: the workload files; whole_label / parts_label: report text."""

    specs: list[PlannedRun]
    policies: list[str]
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    whole: Path | None = None
    parts: list[Path] = field(default_factory=list)
    whole_label: str = "none"
    parts_label: str = "none"
    resolved: dict[str, Any] = field(default_factory=dict)   # policy text → its PolicyInfo, resolved by the plan


# --- workloads --------------------------------------------------------------------------------------
def njobs(path: Path) -> int:
    """The number of static jobs of the Batsim workload `path`."""
    from ..workloads.batsim_json import load_workload
    return len(load_workload(path, require_bb=False).jobs)


def whole_trace(work: Path, draw: int = 0) -> Path:
    """The whole KTH trace as a Batsim workload, its burst-buffer and communication requests drawn under seed
    `draw`: for draw 0 `burstbuffer.workloads.bundled.ensure_kth_workload()` when that module exists, else
    (and for any other draw) converted here from the SWF into `work`. InputError when the SWF is needed and
    absent."""
    try:
        from ..workloads.bundled import ensure_kth_workload  # type: ignore[import-not-found]
    except ImportError:
        ensure_kth_workload = None
    if ensure_kth_workload is not None:
        return Path(ensure_kth_workload() if draw == 0 else ensure_kth_workload(work / "kth-all.json", seed=draw))
    path = work / "kth-all.json"
    if not path.is_file():
        if not KTH_SWF.is_file():
            raise InputError(str(KTH_SWF), "trace", "file not found (needed for --jobs all)")
        from ..workloads import convert_swf, write_workload
        write_workload(path, convert_swf(KTH_SWF, name="KTH-SP2-1996-2.1-cln", rule="artifact").workload)
    return path


def subset(src: Path, n: int, dst: Path) -> Path:
    """The first `n` jobs of `src` (by file order) written to `dst` (kept if already there):
    `workloads.split.first_jobs`."""
    from ..workloads.split import first_jobs
    return first_jobs(src, n, dst, keep=True)


def _parts_in(folder: Path) -> list[Path]:
    return sorted(folder.glob("part-*.json"), key=lambda p: int(p.stem.split("-")[1]))


def split(src: Path, n: int | None, folder: Path) -> list[Path]:
    """`src` cut into `n` parts of equal duration (None: the three-week rule) as `folder`/part-K.json
    (kept if the folder already holds as many)."""
    from ..workloads import load_workload, split_workload, write_parts
    existing = _parts_in(folder)
    parts = split_workload(load_workload(src, require_bb=False), parts=n) if n else \
        split_workload(load_workload(src, require_bb=False), weeks=3)
    if len(existing) == len(parts):
        return existing
    return write_parts(parts, folder)


def _unpack_parts(src: Path, folder: Path) -> list[Path]:
    """The part-N.json.gz files of `src` decompressed into `folder` (kept if already there), in N order.
    Raises InputError if `src` holds none."""
    import gzip
    import shutil
    packed = sorted(src.glob("part-*.json.gz"), key=lambda p: int(p.name.split(".")[0].split("-")[1]))
    if not packed:
        raise InputError(str(src), "parts", "no part-N.json.gz in this folder")
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for gz in packed:
        dst = folder / gz.name.removesuffix(".gz")
        if not dst.is_file():
            tmp = dst.with_suffix(".tmp")
            with gzip.open(gz, "rb") as f, open(tmp, "wb") as g:
                shutil.copyfileobj(f, g)
            tmp.replace(dst)
        out.append(dst)
    return out


def select_workloads(args, work: Path, draw: int = 0) -> tuple[Path | None, list[Path], list[str]]:
    """(whole workload or None, part workloads, notes) for the command line `args` (``jobs``,
    ``workload``, ``parts``, ``parts_from``, ``split``), the KTH selections drawn under seed `draw` (module
    docstring; draw 0: the bundled files). InputError for a missing file, a bad ``--jobs`` or nothing to
    run."""
    notes = []
    whole = None
    if args.workload:
        whole = Path(args.workload)
        if not whole.is_file():
            raise InputError(str(whole), "workload", "file not found")
    elif args.jobs != "none":
        if args.jobs == "1000" and draw == 0:
            whole = KTH_1000
        elif args.jobs == "1000":
            whole = subset(whole_trace(work, draw), 1000, work / "kth-1000.json")
        elif args.jobs == "all":
            whole = whole_trace(work, draw)
        else:
            try:
                n = int(args.jobs)
            except ValueError:
                raise InputError("--jobs", args.jobs, "expected a number of jobs, 'all' or 'none'") from None
            if n <= 0:
                raise InputError("--jobs", args.jobs, "must be > 0")
            whole = subset(whole_trace(work, draw), n, work / f"kth-{n}.json")
    parts: list[Path] = []
    if args.parts:
        if args.parts_from:
            folder = Path(args.parts_from)
            parts = _parts_in(folder)
            if not parts:
                raise InputError(str(folder), "parts", "no part-N.json in this folder")
        elif args.workload:
            parts = split(Path(args.workload), args.split, work / "parts")
            notes.append(f"parts: {args.workload} cut into {len(parts)} parts of equal duration")
        elif not args.split and draw == 0 and len(list(KTH_SPLIT.glob("part-*.json.gz"))) == 16:
            parts = _unpack_parts(KTH_SPLIT, work / "kth-split")
            notes.append(f"parts: the paper's 16 three-week KTH parts ({KTH_SPLIT})")
        else:
            parts = split(whole_trace(work, draw), args.split, work / "parts")
            how = f"{args.split} parts of equal duration" if args.split else f"{len(parts)} three-week parts"
            notes.append(f"parts: the whole KTH trace cut into {how} (burstbuffer.workloads.split)")
    if whole is None and not parts:
        raise InputError("--jobs", args.jobs, "nothing to run: give --jobs, --workload or --parts")
    return whole, parts, notes


def _whole_label(args, whole: Path | None) -> str:
    if whole is None:
        return "none"
    if args.workload:
        return f"{whole} ({njobs(whole)} jobs)"
    return {"1000": "the first 1000 KTH jobs (workloads/kth-1000.json)",
            "all": "the whole KTH trace"}.get(args.jobs, f"the first {args.jobs} KTH jobs")


def _entry_point_names() -> set[str]:
    from ..schedulers.resolve import ENTRY_POINT_GROUP
    from importlib.metadata import entry_points
    return {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}


def replicate_dir(runs: Path, k: int) -> Path:
    """The runs folder of replicate `k`: `runs` itself for k = 0, ``runs/r<k>`` otherwise."""
    return runs if k == 0 else runs / f"r{k}"


def finished_placebo(specs: list[PlannedRun], asked: bool, finished) -> list[PlannedRun]:
    """`specs` without the A/A runs (`PlannedRun.placebo`) that `finished` (spec → bool) says are not done, unless
    the A/A runs were `asked` (``--placebo``): a run without ``--placebo`` judges the placebo column with the
    A/A runs an earlier ``--placebo`` run finished in its folder, and simulates none of them."""
    return specs if asked else [s for s in specs if not s.placebo or finished(s)]


def placebo_controls(study: Study) -> set[str]:
    """The column labels that are the control of a condition asserting a difference in `study`'s claims: the
    columns whose A/A runs ``reproduce --placebo`` makes."""
    from ..metrics.verdicts import DIFFERENCE
    return {d.control for c in study.claims for d in c.conditions if d.asserts == DIFFERENCE}


def _draw_specs(study: Study, args, columns, whole: Path | None, parts: list[Path], work: Path, runs: Path,
                k: int, replicates: int, notes: list[str]) -> list[PlannedRun]:
    """The runs of replicate `k` (module docstring): every column of `columns` ((variant, folder name)) on the
    scopes of draw `k` (`whole`, the study's derived workloads, `parts`) into `runs`; replicates k ≥
    `replicates` are A/A runs (`PlannedRun.placebo`)."""
    base = getattr(args, "seed", 0) or 0
    scopes: list[tuple[str, Path]] = []
    setting: dict[str, object] = {}   # scope → its ExtraWorkload when it runs in a setting of its own
    if whole is not None:
        scopes.append(("whole", whole))
        if study.workloads is not None:
            from ..runner import DEFAULT_PLATFORM
            platform = Path(getattr(args, "platform", None) or DEFAULT_PLATFORM)
            for extra in study.workloads(whole, work, base + k, platform):
                scopes.append((extra.scope, Path(extra.path)))
                if k == 0:
                    notes.append(extra.note)
                setting[extra.scope] = extra
    for i, part in enumerate(parts):
        scopes.append((f"part-{i:02d}", part))
    specs: list[PlannedRun] = []
    for scope, path in scopes:
        n = njobs(path)
        if n == 0:
            if k == 0:
                notes.append(f"{scope} ({path}) has no job: not run")
            continue
        for v, name in columns:
            if v.scopes and scope not in v.scopes:
                continue
            ex = setting.get(scope)
            options = {**(ex.options if ex is not None else {}), **v.options}
            opts = json.dumps(options, sort_keys=True, separators=(",", ":")) if options else ""
            col = v.label if v.label != v.policy else ""
            # a derived workload's own seed is drawn from the replicate's (base + k) already
            seed = ex.seed if ex is not None and ex.seed is not None else (base + k if k else None)
            label = f"{scope}/{col}" if col else ""
            if k:
                label = f"r{k}/{scope}/{col or name}"
            specs.append(PlannedRun(scope, v.policy, str(path.resolve()),
                                 v.model or (ex.model if ex is not None and ex.model else None) or args.model,
                                 str(runs / scope / name), n, options=opts, label=label,
                                 column=col, seed=seed,
                                 platform=str(Path(ex.platform).resolve()) if ex is not None and ex.platform else "",
                                 replicate=k, placebo=k >= replicates))
    return specs


# --- the plan ----------------------------------------------------------------------------------------
def plan_runs(study: Study, args, out: Path, registry, log=print) -> RunPlan:
    """The runs of `study` for the command line `args` (``policies`` — a comma-separated list or None for
    the study's —, ``model``, ``gantt_jobs`` and the workload options of `select_workloads`) into
    `out`: every policy of `registry` (name → policy; unknown ones are skipped with a message) and every
    ``MODULE:CLASS`` / ``FILE.py:CLASS`` spec or installed entry point (`burstbuffer.schedulers.resolve`; one
    that cannot be resolved is an InputError; its runs go to a folder named by its label) on the
    whole workload and on each non-empty part under ``args.model``, then the study's Gantt run on the
    first ``args.gantt_jobs`` jobs (of the whole workload, else of the first part). A study with
    `Study.variants` runs its variants (policy + options + model) instead, each in a folder named by its
    label, and a study with `Study.workloads` also runs every variant on the workloads it derives from the
    whole one (scopes beside ``whole``); a variant with `Variant.scopes` runs on those scopes only. With
    ``args.replicates`` R > 1, every run but the Gantt one in R replicates (module docstring); with
    ``args.placebo``, the columns that are a control of a difference claim (`placebo_controls`) also in R
    more replicates, R … 2R − 1: their A/A runs; without it, the A/A runs of an earlier ``--placebo`` run into
    `out` are planned too (`finished_placebo` keeps those that finished). InputError as `select_workloads`."""
    work = out / "workloads"
    work.mkdir(parents=True, exist_ok=True)
    policies, skipped = [], []
    resolved: dict[str, Any] = {}   # a spec's PolicyInfo, resolved once here (`with_schedulers` reuses it)
    columns = []   # (variant, run folder name)
    folder: dict[str, str] = {}   # policy spec → its run folder name (a spec's label, unique)
    for v in study.columns(args.policies):
        p = v.policy
        if p in registry:
            policies.append(v.label)
            columns.append((v, v.label))
        elif is_spec(p) or p in _entry_point_names():
            if p not in folder:
                try:
                    resolved[p] = resolve_policy(p)
                    label = resolved[p].label
                except PolicyError as exc:
                    raise InputError("--policies", exc.spec, exc.reason) from None
                while label in folder.values() or label in registry:
                    label += "_"
                folder[p] = label
            policies.append(p)
            columns.append((v, folder[p]))
        else:
            skipped.append(f"{p} (not in the policy registry)")
            log(f"skipped: policy {p} is not in the registry (available: {', '.join(sorted(registry))})")
    replicates = getattr(args, "replicates", 1) or 1
    # A/A runs: asked by --placebo, or left in `out` by an earlier --placebo run (their draws' folders exist),
    # which `reproduce` then judges in the placebo column if they are finished (`finished_placebo`)
    left = (work / f"draw-{replicates}").is_dir()
    aa = placebo_controls(study) if getattr(args, "placebo", False) or left else set()
    runs = out / "runs"
    specs: list[PlannedRun] = []
    whole = parts = notes = None
    for k in range(2 * replicates if aa else replicates):
        wk = work if k == 0 else work / f"draw-{k}"
        wk.mkdir(parents=True, exist_ok=True)
        w, p, n = select_workloads(args, wk, draw=k)
        if k == 0:
            whole, parts, notes = w, p, n
            if replicates > 1 and (args.workload or (args.parts and args.parts_from)):
                notes.append("replicates: the given workload files have no draw of their own; the replicates vary "
                             "the policies' seed only")
        cols = columns if k < replicates else [(v, name) for v, name in columns if v.label in aa]
        specs += _draw_specs(study, args, cols, w, p, wk, replicate_dir(runs, k), k, replicates, notes)
    gantt_src = whole if whole is not None else (parts[0] if parts else None)
    g = study.gantt
    if g is not None and args.gantt_jobs > 0 and gantt_src is not None:
        if g.policy in registry:
            n = min(args.gantt_jobs, njobs(gantt_src))
            gw = subset(gantt_src, n, work / f"gantt-{n}.json")
            specs.append(PlannedRun("gantt", g.policy, str(gw.resolve()), g.model, str(runs / "gantt" / g.policy), n))
        else:
            skipped.append(f"{g.label} ({g.policy} is not in the policy registry)")
    return RunPlan(specs, policies, skipped, notes, whole, parts, _whole_label(args, whole),
                   f"{len(parts)} parts" if parts else "none", resolved)


def with_schedulers(specs: list[PlannedRun], resolved: dict[str, Any] | None = None) -> list[PlannedRun]:
    """`specs`, each carrying its `burstbuffer.spec.SchedulerSpec` (``scheduler``), made in the calling
    (parent) process by `burstbuffer.spec.make_spec`: each policy resolved once (its `PolicyInfo`, taken from
    `resolved` — policy text → PolicyInfo, what the plan resolved already — when there), each distinct
    (policy, options, job model) checked once. The workers then build the policy from the spec and never resolve
    its name again (a ``FILE.py`` policy is imported once per process, when the spec is unpickled). A run whose
    spec cannot be made (a policy that needs another job model) keeps None and fails in its worker as before,
    the other runs going on."""
    from ..schedulers.resolve import policy_info
    from ..spec import make_spec
    infos: dict[str, Any] = resolved if resolved is not None else {}
    made: dict[tuple[str, str, str], Any] = {}
    out = []
    for s in specs:
        k = (s.policy, s.options, s.model)
        if k not in made:
            try:
                if s.policy not in infos:
                    infos[s.policy] = policy_info(s.policy)
                made[k] = make_spec(infos[s.policy], options=json.loads(s.options) if s.options else None,
                                    job_model=s.model)
            except InputError:
                made[k] = None
        out.append(replace(s, scheduler=made[k]))
    return out

