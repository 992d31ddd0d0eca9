"""`burstbuffer reproduce`: the experiments of Kopanski & Rzadca 2021, §4.2 — every policy on the io-aware model
over the whole KTH trace (or its first 1000 jobs) and/or its 16 three-week parts, in parallel
worker processes, resumable — then the per-job metrics, the summary tables, Fig. 3 and 5-12 and
the report that sets the paper's claims beside the measurements (docs/metrics.md, docs/policies.md).

Output folder::

    runs/<scope>/<policy>/   one run each (runner.run outputs; summary.json written last = done)
    workloads/               workloads made for the reproduction (trace subsets, parts, Gantt subset)
    job_metrics.csv          tidy: one row per (scope, policy, original job), docs/metrics.md metrics
    summary.csv              one row per (scope, policy): means ± 95 % CI, quantiles, max, utilisations
    part_means.csv           per part and policy: means and means normalised by sjf-bb
    figures/                 fig03 … fig12, PNG and SVG
    report.md, report.html   claims vs measurements
    manifest.json            what was asked, run, skipped, failed, and the wall times

Scopes: ``whole`` (the selected workload) and ``part-00`` … ``part-15``; ``gantt`` is the extra
fcfs-easy run on the alloc-only model for Fig. 3.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import queue as queue_mod
import resource
import signal
import sys
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass
from pathlib import Path

from .affinity import resolve_cpu
from .errors import InputError

ROOT = Path(__file__).resolve().parents[1]
KTH_SWF = ROOT / "workloads" / "KTH-SP2-1996-2.1-cln.swf.gz"
#: the artifact's 16 three-week KTH parts, gzip-compressed (part-N.json.gz, part-N.yaml)
KTH_SPLIT = ROOT / "workloads" / "KTH-split"
KTH_1000 = ROOT / "workloads" / "kth-1000.json"
#: the policies of Kopanski & Rzadca 2021, §4.2, in its order
PAPER_POLICIES = ("fcfs", "fcfs-easy", "filler", "fcfs-bb", "sjf-bb", "plan-1", "plan-2", "plan-3")
GANTT_POLICY = "fcfs-easy"
MARKER = "summary.json"


@dataclass(frozen=True)
class RunSpec:
    """One simulation: `policy` on `workload` (`jobs` static jobs) under `model`, into `out`."""

    scope: str
    policy: str
    workload: str
    model: str
    out: str
    jobs: int

    @property
    def key(self) -> str:
        return f"{self.scope}/{self.policy}"

    def cost(self) -> float:
        """Rough relative cost, to start the longest runs first."""
        factor = 3.0 if self.policy.startswith("plan") else 1.0
        if self.model == "alloc-only":
            factor = 0.3
        return self.jobs * factor


# --- workloads --------------------------------------------------------------------------------------
def _njobs(path: Path) -> int:
    from .workloads.batsim_json import load_workload
    return len(load_workload(path, require_bb=False).jobs)


def whole_trace(work: Path) -> Path:
    """The whole KTH trace as a Batsim workload: `burstbuffer.workloads.bundled.ensure_kth_workload()`
    when that module exists, else converted here from the SWF (docs/workload.md, seed 0) into `work`."""
    try:
        from .workloads.bundled import ensure_kth_workload  # type: ignore[import-not-found]
    except ImportError:
        ensure_kth_workload = None
    if ensure_kth_workload is not None:
        return Path(ensure_kth_workload())
    path = work / "kth-all.json"
    if not path.is_file():
        if not KTH_SWF.is_file():
            raise InputError(str(KTH_SWF), "trace", "file not found (needed for --jobs all)")
        from .workloads import convert_swf, write_workload
        write_workload(path, convert_swf(KTH_SWF, name="KTH-SP2-1996-2.1-cln").workload)
    return path


def _subset(src: Path, n: int, dst: Path) -> Path:
    """The first `n` jobs of `src` (by file order) written to `dst` (kept if already there)."""
    from .workloads import Workload, load_workload, write_workload
    if dst.is_file() and _njobs(dst) == min(n, _njobs(src)):
        return dst
    w = load_workload(src, require_bb=False)
    jobs = w.jobs[:n]
    desc = f"first {len(jobs)} jobs of {src.name}"
    write_workload(dst, Workload(w.name, desc, w.nb_res, jobs, {j.profile: w.profiles[j.profile] for j in jobs}))
    return dst


def _split(src: Path, n: int | None, folder: Path) -> list[Path]:
    from .workloads import load_workload, split_workload, write_parts
    existing = sorted(folder.glob("part-*.json"), key=lambda p: int(p.stem.split("-")[1]))
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


def select_workloads(args, work: Path) -> tuple[Path | None, list[Path], list[str]]:
    """(whole workload or None, part workloads, notes) for the command line `args`."""
    notes = []
    whole = None
    if args.workload:
        whole = Path(args.workload)
        if not whole.is_file():
            raise InputError(str(whole), "workload", "file not found")
    elif args.jobs != "none":
        if args.jobs == "1000":
            whole = KTH_1000
        elif args.jobs == "all":
            whole = whole_trace(work)
        else:
            try:
                n = int(args.jobs)
            except ValueError:
                raise InputError("--jobs", args.jobs, "expected a number of jobs, 'all' or 'none'") from None
            if n <= 0:
                raise InputError("--jobs", args.jobs, "must be > 0")
            whole = _subset(whole_trace(work), n, work / f"kth-{n}.json")
    parts: list[Path] = []
    if args.parts:
        if args.parts_from:
            folder = Path(args.parts_from)
            parts = sorted(folder.glob("part-*.json"), key=lambda p: int(p.stem.split("-")[1]))
            if not parts:
                raise InputError(str(folder), "parts", "no part-N.json in this folder")
        elif args.workload:
            parts = _split(Path(args.workload), args.split, work / "parts")
            notes.append(f"parts: {args.workload} cut into {len(parts)} parts of equal duration")
        elif not args.split and len(list(KTH_SPLIT.glob("part-*.json.gz"))) == 16:
            parts = _unpack_parts(KTH_SPLIT, work / "kth-split")
            notes.append(f"parts: the paper's 16 three-week KTH parts ({KTH_SPLIT})")
        else:
            parts = _split(whole_trace(work), args.split, work / "parts")
            notes.append(f"parts: the whole KTH trace cut into {len(parts)} parts (burstbuffer.workloads.split)")
    if whole is None and not parts:
        raise InputError("--jobs", args.jobs, "nothing to run: give --jobs, --workload or --parts")
    return whole, parts, notes


# --- workers ----------------------------------------------------------------------------------------
_QUEUE = None
_CPU = None


class _QueueReporter:
    """Inside a worker: passes runner.run's progress (jobs started or rejected, total) to the parent's
    bars through a queue, at most every 0.5 s and always on the last job."""

    def __init__(self, key: str):
        self.key = key
        self._last = 0.0

    def __call__(self, done: int, total: int | None) -> None:
        now = time.monotonic()
        if _QUEUE is None or not (now - self._last >= 0.5 or (total and done >= total)):
            return
        self._last = now
        try:
            _QUEUE.put_nowait((self.key, done, total))
        except Exception:  # noqa: BLE001 - a full or closed queue only loses a bar update
            pass


def _init_worker(q, counter, pin: bool) -> None:
    """Worker start: an idle worker ignores Ctrl-C (the parent cancels what has not started); `q` (or
    None: no progress bars) carries the runs' progress to the parent; with `pin`, the k-th worker
    started (`counter`) runs its simulations on the k-th available CPU core (`burstbuffer.affinity`)."""
    global _QUEUE, _CPU
    _QUEUE = q
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with counter.get_lock():
        slot = counter.value
        counter.value += 1
    _CPU = resolve_cpu("auto", slot=slot) if pin else None


def _run_one(spec: RunSpec, platform: str, seed: int, timeout: float) -> dict:
    """Worker: simulate one run, write its marker last; return the marker's content or an error."""
    from .runner import run
    out = Path(spec.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).unlink(missing_ok=True)
    t0 = time.perf_counter()
    ru0 = (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    # during a run Ctrl-C interrupts it, and its simulator (which inherits the disposition) dies with it
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        res = run(spec.policy, Path(spec.workload), Path(platform), out, model=spec.model, seed=seed,
                  progress=False, on_progress=_QueueReporter(spec.key) if _QUEUE is not None else None,
                  timeout=timeout, cpu=_CPU)
    except BaseException as exc:   # noqa: BLE001 - reported, the other runs go on
        msg = f"{type(exc).__name__}: {exc}"
        (out / "error.txt").write_text(msg + "\n\n" + traceback.format_exc())
        return {"key": spec.key, "error": msg}
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    info = {"key": spec.key, "scope": spec.scope, "policy": spec.policy, "model": spec.model,
            "workload": spec.workload, "jobs": spec.jobs, "seed": seed, "wall_time": time.perf_counter() - t0,
            "messages": res.messages, "summary": asdict(res.summary), "cpu_time": _cpu_since(ru0),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S")}
    (out / "error.txt").unlink(missing_ok=True)
    tmp = out / (MARKER + ".tmp")
    tmp.write_text(json.dumps(info, indent=1))
    os.replace(tmp, out / MARKER)
    return info


def _cpu_since(ru0) -> dict[str, float]:
    """CPU seconds (user + system) since `ru0` of this worker (the scheduler) and of its finished
    children (the simulator): on a shared machine they tell what the run costs, whatever the load."""
    cpu = lambda r: r.ru_utime + r.ru_stime  # noqa: E731
    return {"scheduler": round(cpu(resource.getrusage(resource.RUSAGE_SELF)) - cpu(ru0[0]), 2),
            "simulator": round(cpu(resource.getrusage(resource.RUSAGE_CHILDREN)) - cpu(ru0[1]), 2)}


def read_marker(spec: RunSpec) -> dict | None:
    """The finished run's marker, or None if the run is not done (or was made from another
    workload, model or policy)."""
    p = Path(spec.out) / MARKER
    try:
        info = json.loads(p.read_text())
    except (OSError, ValueError):
        return None
    if (info.get("policy"), info.get("model"), info.get("workload"), info.get("jobs")) != \
            (spec.policy, spec.model, spec.workload, spec.jobs):
        return None
    return info if (Path(spec.out) / "jobs.csv").is_file() else None


def execute(specs: list[RunSpec], *, platform: str, seed: int, workers: int, progress: bool,
            timeout: float, pin: bool = True, log=print) -> dict[str, dict]:
    """Run every spec whose marker is missing, `workers` at a time (each on a CPU core of its own when
    `pin`); return key → marker or error."""
    results: dict[str, dict] = {}
    todo = []
    for s in specs:
        info = read_marker(s)
        if info is not None:
            results[s.key] = info
        else:
            todo.append(s)
    if results:
        log(f"resuming: {len(results)} finished run(s) kept, {len(todo)} to do")
    if not todo:
        return results
    todo.sort(key=lambda s: -s.cost())
    ctx = mp.get_context("spawn")
    q = ctx.Queue() if progress else None
    bars: dict[str, object] = {}
    slots: dict[str, int] = {}
    overall = None
    if progress:
        from tqdm import tqdm
        overall = tqdm(total=len(specs), initial=len(results), unit="run", desc="reproduce", position=0,
                       dynamic_ncols=True, leave=True)
    say = (lambda m: overall.write(m)) if overall is not None else log

    def drain():
        if q is None:
            return
        from tqdm import tqdm
        while True:
            try:
                key, n, total = q.get_nowait()
            except (queue_mod.Empty, OSError, EOFError):
                return
            if key not in bars and key in pending_keys:
                used = set(slots.values())
                slot = next(i for i in range(1, workers + 2) if i not in used)
                slots[key] = slot
                bars[key] = tqdm(total=total, unit="job", desc=key, position=slot, leave=False,
                                 dynamic_ncols=True)
            b = bars.get(key)
            if b is not None:
                b.update(n - b.n)

    pool = ProcessPoolExecutor(max_workers=max(1, min(workers, len(todo))), mp_context=ctx, initializer=_init_worker,
                               initargs=(q, ctx.Value("i", 0), pin))
    futures = {pool.submit(_run_one, s, platform, seed, timeout): s for s in todo}
    pending_keys = {s.key for s in todo}
    try:
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.3, return_when=FIRST_COMPLETED)
            drain()
            for f in done:
                s = futures[f]
                pending_keys.discard(s.key)
                try:
                    info = f.result()
                except Exception as exc:  # a worker process died
                    info = {"key": s.key, "error": f"{type(exc).__name__}: {exc}"}
                results[s.key] = info
                b = bars.pop(s.key, None)
                slots.pop(s.key, None)
                if b is not None:
                    b.close()
                if overall is not None:
                    overall.update(1)
                if "error" in info:
                    say(f"FAILED {s.key}: {info['error']} (see {s.out}/error.txt)")
                else:
                    sm = info["summary"]
                    say(f"done {s.key}: {sm['submitted']} jobs, mean waiting time {sm['mean_waiting_h']:.3f} h, "
                        f"mean bounded slowdown {sm['mean_bounded_slowdown']:.3f}, wall {info['wall_time']:.0f} s")
    except KeyboardInterrupt:
        for f in futures:
            f.cancel()
        # interrupt the running workers too (a Ctrl-C at a terminal reaches them already; a signal sent
        # to this process alone does not): each stops its simulator and returns
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            try:
                os.kill(proc.pid, signal.SIGINT)
            except (OSError, AttributeError):
                pass
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        for b in bars.values():
            b.close()
        if overall is not None:
            overall.close()
    pool.shutdown(wait=True)
    return results


# --- analysis ---------------------------------------------------------------------------------------
def collect(specs: list[RunSpec], results: dict[str, dict]):
    """(tidy per-job table of the finished io-aware runs, {(scope, policy): summary + wall_time})."""
    import pandas as pd

    from .metrics.tidy import job_metrics, load_jobs
    frames, sums = [], {}
    for s in specs:
        info = results.get(s.key)
        if not info or "error" in info or s.scope == "gantt":
            continue
        m = job_metrics(load_jobs(Path(s.out) / "jobs.csv"))
        m.insert(0, "policy", s.policy)
        m.insert(0, "scope", s.scope)
        frames.append(m)
        sums[(s.scope, s.policy)] = {**info["summary"], "wall_time": info["wall_time"],
                                     "cpu_time": info.get("cpu_time")}
    jobs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return jobs, sums


def _fmt_pm(mean: float, half: float) -> str:
    return "n/a" if mean != mean else f"{mean:.3g} ± {half:.2g}"


def analyse(out: Path, specs: list[RunSpec], results: dict[str, dict], manifest: dict, log=print) -> Path:
    """Tables, figures and the report from the finished runs; returns the report.md path."""
    import pandas as pd

    from .metrics import figures as F
    from .metrics.report import VERDICT_HEADER, Report, evaluate_claims, verdict_rows
    from .metrics.tables import REFERENCE as REF
    from .metrics.tables import normalised_wide, part_means, summary_table

    jobs, sums = collect(specs, results)
    figs = out / "figures"
    if jobs.empty:
        raise InputError(str(out), "runs", "no run finished: nothing to report")
    jobs.to_csv(out / "job_metrics.csv", index=False)
    summ = summary_table(jobs, sums)
    summ.to_csv(out / "summary.csv", index=False)
    pm = part_means(jobs, REF)
    pm.to_csv(out / "part_means.csv", index=False)
    whole_label = manifest.get("whole_label", "whole")

    rep = Report("Reproduction of Kopanski & Rzadca, Euro-Par 2021, §4.2")
    rep.p(f"Generated by `burstbuffer reproduce` on {time.strftime('%Y-%m-%d %H:%M')}: model "
          f"{manifest['model']}, platform {manifest['platform']}, seed {manifest['seed']}, "
          f"{manifest['workers']} worker process(es).")
    rep.p(f"Whole-workload runs: {whole_label}. Parts: {manifest.get('parts_label', 'none')}.")
    for line in manifest.get("notes", []):
        rep.p(line)
    if manifest.get("skipped"):
        rep.p("Skipped policies: " + "; ".join(manifest["skipped"]))
    if manifest.get("missing"):
        rep.p("Report from the runs finished so far (--report-only); not finished yet: "
              + ", ".join(manifest["missing"]))
    failed = [f"{k}: {v['error']}" for k, v in results.items() if "error" in v]
    if failed:
        rep.p("Failed runs (missing from every table and figure): " + "; ".join(failed))
    rep.p(f"Simulation wall time: {manifest.get('run_wall_s', 0):.0f} s for the runs done by this invocation "
          f"({manifest.get('runs_done_now', 0)} run(s); {manifest.get('runs_kept', 0)} kept from before); "
          f"sum of per-run wall times {sum(s.get('wall_time', 0) for s in sums.values()):.0f} s.")
    hist = [h for h in manifest.get("history", []) if h.get("runs_done")]
    if hist:
        rep.p("Invocations that simulated: " + "; ".join(
            f"{h['started']}: {h['runs_done']} run(s) in {h['wall_s']:.0f} s ({h['runs_kept']} kept)" for h in hist))

    whole = summ[summ["scope"] == "whole"]
    rep.h(1, "The paper's claims beside the measurements")
    if len(whole):
        if manifest.get("jobs") != "all":
            rep.p(f"The claims about the whole trace are judged here on {whole_label}; the paper measured "
                  f"them on the whole KTH trace (28,453 jobs).")
        verdicts = evaluate_claims(whole, pm)
    else:
        rep.p("No whole-workload run: only the claims about the parts are judged.")
        verdicts = evaluate_claims(summ.iloc[0:0], pm)
    rep.table(VERDICT_HEADER, verdict_rows(verdicts))
    counts = {k: sum(v.verdict == k for v in verdicts) for k in ("reproduced", "partly", "not reproduced",
                                                                  "not measured")}
    rep.p("Verdicts: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
    (out / "verdicts.json").write_text(json.dumps([asdict(v) for v in verdicts], indent=1))

    def policy_table(rows: pd.DataFrame):
        header = ["policy", "jobs", "killed", "rejected", "mean wait [h] ± 95 % CI", "median", "q0.9", "q0.99",
                  "max wait [h]", "mean bsld ± 95 % CI", "median bsld", "q0.99 bsld", "max bsld", "CPU util.",
                  "BB util.", "makespan [d]", "wall [s]", "CPU [s]"]
        body = []
        for _, r in rows.iterrows():
            body.append([r["policy"], r["jobs"], r["killed"], r["rejected"], _fmt_pm(r["wait_h_mean"], r["wait_h_ci_half"]),
                         f"{r['wait_h_q0.5']:.3g}", f"{r['wait_h_q0.9']:.3g}", f"{r['wait_h_q0.99']:.3g}",
                         f"{r['wait_h_max']:.3g}", _fmt_pm(r["bsld_mean"], r["bsld_ci_half"]),
                         f"{r['bsld_q0.5']:.3g}", f"{r['bsld_q0.99']:.3g}", f"{r['bsld_max']:.3g}",
                         "n/a" if r["cpu_utilisation"] != r["cpu_utilisation"] else f"{100 * r['cpu_utilisation']:.1f} %",
                         "n/a" if r["bb_utilisation"] != r["bb_utilisation"] else f"{100 * r['bb_utilisation']:.1f} %",
                         f"{r['makespan_s'] / 86400:.2f}", f"{r['wall_time_s']:.0f}",
                         "n/a" if r["cpu_time_s"] != r["cpu_time_s"] else f"{r['cpu_time_s']:.0f}"])
        rep.table(header, body)

    fig_list = []
    if len(whole):
        rep.h(1, f"Summary per policy: {whole_label}")
        policy_table(whole)
        wj = jobs[jobs["scope"] == "whole"]
        tail_n = 3000
        fig_list += [
            (F.mean_bars(wj, "waiting_time", figs, "fig05_mean_waiting_time", "Fig. 5: mean waiting time [h]"),
             "Fig. 5: mean waiting time [h], black bars: 95 % confidence intervals"),
            (F.mean_bars(wj, "bounded_slowdown", figs, "fig06_mean_bounded_slowdown", "Fig. 6: mean bounded slowdown"),
             "Fig. 6: mean bounded slowdown (τ = 600 s), black bars: 95 % confidence intervals"),
            (F.quantile_plot(wj, "waiting_time", figs, "fig07_waiting_time_quantiles", "Fig. 7: waiting time quantiles [h]"),
             "Fig. 7: waiting time quantiles [h] (letter-value plot, log scale)"),
            (F.quantile_plot(wj, "bounded_slowdown", figs, "fig08_bounded_slowdown_quantiles",
                             "Fig. 8: bounded slowdown quantiles"),
             "Fig. 8: bounded slowdown quantiles (letter-value plot, log scale)"),
            (F.tail_plot(wj, "waiting_time", figs, "fig09_waiting_time_tail", "Fig. 9: waiting time tail [h]", k=tail_n),
             f"Fig. 9: waiting time tail distribution [h]: the {tail_n} largest values per policy"),
            (F.tail_plot(wj, "bounded_slowdown", figs, "fig10_bounded_slowdown_tail", "Fig. 10: bounded slowdown tail",
                         k=tail_n),
             f"Fig. 10: bounded slowdown tail distribution: the {tail_n} largest values per policy"),
        ]
    if len(pm):
        rep.h(1, "Over the parts (means normalised by sjf-bb)")
        parts_rows = summ[summ["scope"].str.startswith("part-")]
        body = []
        for pol, g in pm.groupby("policy", sort=False):
            body.append([pol, g["scope"].nunique(), f"{g['wait_norm'].median():.3g}", f"{g['wait_norm'].mean():.3g}",
                         int((g["wait_norm"] < 1).sum()), f"{g['bsld_norm'].median():.3g}",
                         f"{g['bsld_norm'].mean():.3g}", int((g["bsld_norm"] < 1).sum()),
                         f"{parts_rows.loc[parts_rows['policy'] == pol, 'wall_time_s'].sum():.0f}"])
        rep.table(["policy", "parts", "median norm. wait", "mean norm. wait", "parts below sjf-bb (wait)",
                   "median norm. bsld", "mean norm. bsld", "parts below sjf-bb (bsld)", "wall [s], all parts"], body)
        ww, wb = normalised_wide(pm, "wait_norm"), normalised_wide(pm, "bsld_norm")
        if ww.notna().any().any():
            fig_list += [
                (F.normalised_boxplot(ww, figs, "fig11_normalised_waiting_time",
                                      "Fig. 11: normalised mean waiting time", REF),
                 "Fig. 11: mean waiting time per part normalised by sjf-bb's (one dot per part)"),
                (F.normalised_boxplot(wb, figs, "fig12_normalised_bounded_slowdown",
                                      "Fig. 12: normalised mean bounded slowdown", REF),
                 "Fig. 12: mean bounded slowdown per part normalised by sjf-bb's (one dot per part)")]
        else:
            rep.p("No normalised part mean: sjf-bb, the reference, did not run on the parts (or its means are 0). "
                  "Fig. 11-12 are left out.")
    gantt = [s for s in specs if s.scope == "gantt"]
    if gantt and "error" not in results.get(gantt[0].key, {"error": 1}):
        from .metrics.tidy import load_jobs
        g = gantt[0]
        gj = load_jobs(Path(g.out) / "jobs.csv")
        nb = results[g.key]["summary"]
        fig_list.insert(0, (F.gantt(gj, figs, "fig03_gantt_fcfs_easy",
                                    f"Fig. 3: Gantt chart of the first {g.jobs} jobs, fcfs-easy, alloc-only model"),
                            f"Fig. 3: Gantt chart of the first {g.jobs} jobs under fcfs-easy (alloc-only model); "
                            f"processor utilisation {100 * nb['cpu_utilisation']:.1f} %"))
    rep.h(1, "Figures")
    for paths, caption in fig_list:
        rep.img(os.path.relpath(paths[0], out), caption)
    rep.h(1, "Files")
    rep.p("job_metrics.csv (one row per scope, policy and original job: waiting time, turnaround, runtime, "
          "bounded slowdown [s]), summary.csv, part_means.csv, verdicts.json, figures/ (PNG and SVG), "
          "runs/<scope>/<policy>/ (each run's jobs.csv, batsim_jobs.csv, summary.json), manifest.json.")
    md, _ = rep.write(out)
    log(f"report: {md} and {out / 'report.html'}; figures in {figs}")
    return md


# --- the command --------------------------------------------------------------------------------------
def _history(out: Path) -> list[dict]:
    """The invocations recorded in `out`/manifest.json so far (empty if none)."""
    try:
        return json.loads((out / "manifest.json").read_text()).get("history", [])
    except (OSError, ValueError, AttributeError):
        return []


def reproduce(args) -> int:
    from .runner import DEFAULT_PLATFORM
    from .schedulers import POLICIES

    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    work = out / "workloads"
    work.mkdir(exist_ok=True)
    platform = Path(args.platform or DEFAULT_PLATFORM)
    if not platform.is_file():
        raise InputError(str(platform), "platform", "file not found")
    asked = [p.strip() for p in (args.policies or ",".join(PAPER_POLICIES)).split(",") if p.strip()]
    policies, skipped = [], []
    for p in asked:
        if p in POLICIES:
            policies.append(p)
        else:
            skipped.append(f"{p} (not in the policy registry)")
            print(f"skipped: policy {p} is not in the registry (available: {', '.join(sorted(POLICIES))})")
    whole, parts, notes = select_workloads(args, work)
    specs: list[RunSpec] = []
    runs = out / "runs"
    if whole is not None:
        nw = _njobs(whole)
        specs += [RunSpec("whole", p, str(whole.resolve()), args.model, str(runs / "whole" / p), nw) for p in policies]
    for k, part in enumerate(parts):
        scope = f"part-{k:02d}"
        n = _njobs(part)
        if n == 0:
            notes.append(f"{scope} ({part}) has no job: not run")
            continue
        specs += [RunSpec(scope, p, str(part.resolve()), args.model, str(runs / scope / p), n) for p in policies]
    gantt_src = whole if whole is not None else (parts[0] if parts else None)
    if args.gantt_jobs > 0 and gantt_src is not None:
        if GANTT_POLICY in POLICIES:
            n = min(args.gantt_jobs, _njobs(gantt_src))
            gw = _subset(gantt_src, n, work / f"gantt-{n}.json")
            specs.append(RunSpec("gantt", GANTT_POLICY, str(gw.resolve()), "alloc-only",
                                 str(runs / "gantt" / GANTT_POLICY), n))
        else:
            skipped.append(f"Fig. 3 ({GANTT_POLICY} is not in the policy registry)")
    workers = args.workers or os.cpu_count() or 1
    if whole is None:
        whole_label = "none"
    elif args.workload:
        whole_label = f"{whole} ({_njobs(whole)} jobs)"
    else:
        whole_label = {"1000": "the first 1000 KTH jobs (workloads/kth-1000.json)",
                       "all": "the whole KTH trace"}.get(args.jobs, f"the first {args.jobs} KTH jobs")
    manifest = {"command": " ".join(sys.argv), "jobs": None if args.workload else args.jobs,
                "workload": str(whole) if whole else None, "whole_label": whole_label,
                "parts": [str(p) for p in parts],
                "parts_label": f"{len(parts)} parts" if parts else "none",
                "policies": policies, "skipped": skipped, "model": args.model, "platform": str(platform),
                "seed": args.seed, "workers": workers, "notes": notes}
    print(f"reproduce: {len(specs)} runs ({len(policies)} policies × "
          f"{(whole is not None) + len(parts)} workload(s){' + Fig. 3' if any(s.scope == 'gantt' for s in specs) else ''})"
          f", {workers} worker(s), output {out}")
    t0 = time.perf_counter()
    markers = {s.key: read_marker(s) for s in specs}
    kept = sum(m is not None for m in markers.values())
    if args.report_only:
        results = {k: m for k, m in markers.items() if m is not None}
        print(f"report only: {kept} of {len(specs)} runs finished; the others are left out")
        specs_done = [s for s in specs if s.key in results]
        manifest.update(runs_done_now=0, runs_kept=kept, run_wall_s=0.0,
                        history=_history(out), missing=[s.key for s in specs if s.key not in results])
        analyse(out, specs_done, results, manifest)
        return 0
    results = execute(specs, platform=str(platform), seed=args.seed, workers=workers,
                      progress=not args.quiet, timeout=args.timeout, pin=args.cpu == "auto")
    wall = time.perf_counter() - t0
    history = _history(out)
    history.append({"started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() - wall)),
                    "command": manifest["command"], "runs_done": len(specs) - kept, "runs_kept": kept,
                    "wall_s": round(wall, 1)})
    manifest.update(run_wall_s=wall, runs_done_now=len(specs) - kept, runs_kept=kept, history=history,
                    failed={k: v["error"] for k, v in results.items() if "error" in v},
                    wall_times={k: v.get("wall_time") for k, v in results.items() if "error" not in v})
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    ta = time.perf_counter()
    analyse(out, specs, results, manifest)
    print(f"simulations {wall:.0f} s, analysis {time.perf_counter() - ta:.0f} s")
    failed = manifest["failed"]
    if failed:
        print(f"{len(failed)} run(s) failed: {', '.join(failed)}; rerun the same command to retry them",
              file=sys.stderr)
        return 1
    return 0


def register(subparsers) -> None:
    """Add the `reproduce` subcommand (cli.py plugin hook)."""
    from .runner import MODELS
    r = subparsers.add_parser(
        "reproduce", help="run the paper's experiments (§4.2) and write its figures and a report",
        description="Simulate the paper's policies over the KTH trace and/or its 16 three-week parts in "
                    "parallel worker processes, resumably (finished runs, marked by summary.json, are kept), "
                    "then write job_metrics.csv, summary.csv, the paper's Fig. 3 and 5-12 (PNG, SVG) and "
                    "report.md / report.html with the paper's claims beside the measurements.")
    r.add_argument("--jobs", default="all", metavar="1000|all|N|none",
                   help="whole-workload runs: the bundled first 1000 KTH jobs, the whole trace (default), the "
                        "first N jobs of the trace, or none")
    r.add_argument("--parts", action="store_true", help="also run the 16 three-week parts (Fig. 11-12)")
    r.add_argument("--policies", metavar="LIST",
                   help="comma-separated policies (default: " + ",".join(PAPER_POLICIES) + ")")
    r.add_argument("--workers", type=int, default=0, metavar="N",
                   help="parallel worker processes (default: one per core)")
    r.add_argument("--output", required=True, metavar="DIR", help="output folder (reused: finished runs kept)")
    r.add_argument("--workload", metavar="FILE", help="a Batsim workload instead of the KTH selection of --jobs")
    r.add_argument("--parts-from", metavar="DIR", help="with --parts: the part-N.json files of this folder")
    r.add_argument("--split", type=int, metavar="N",
                   help="with --parts: cut the workload into N parts of equal duration instead of the paper's "
                        "16 KTH parts (with --workload: default the three-week rule)")
    r.add_argument("--platform", metavar="FILE", help="SimGrid platform (default: the bundled Dragonfly)")
    r.add_argument("--model", default="io-aware", choices=MODELS, help="job model (default: io-aware)")
    r.add_argument("--seed", type=int, default=0, help="seed of every policy (default: 0)")
    r.add_argument("--gantt-jobs", type=int, default=3500, metavar="N",
                   help="Fig. 3: fcfs-easy, alloc-only, on the first N jobs of the workload (default 3500; 0: no)")
    r.add_argument("--timeout", type=float, default=600.0, metavar="S",
                   help="a run fails if its simulator stays silent this long (default: 600 s)")
    r.add_argument("--cpu", choices=("auto", "off"), default="auto",
                   help="auto: each worker's scheduler and simulator share one CPU core of their own (they take "
                        "turns; twice as fast as unpinned on 2 cores); off: no pinning (default: auto)")
    r.add_argument("--report-only", action="store_true",
                   help="simulate nothing: tables, figures and report from the runs finished so far")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    r.set_defaults(func=reproduce)
