"""The BBSched study in the paper's own regime (Fan et al., HPDC'19, §4.1): Cori-like and Theta-like
machines where the burst buffer is the bottleneck (`burstbuffer.workloads.fan2019`), several seeds.

Scopes ``<machine>-<scenario>-r<k>`` (e.g. ``cori-S4-r0``): replicate k of the machine's scenario, made
from the selected KTH jobs with workload seed = policy seed = ``--seed`` + k, run under the alloc-only job
model (the paper's simulation is trace-driven: a job's run time does not depend on its BB request) on the
machine's scaled platform, every window policy with the machine's base order (Cori: FCFS; Theta: WFP,
§4.3). The metrics of a (machine, scenario) group are the means over its replicates with a 95 %
Student-t confidence interval (`metrics.stats.mean_ci`); the claims judge the means.

The measurement window of these scopes drops the first and last `TRIM` of the submission span — the
paper's half-month warm-up and cool-down of a 4-5-month trace (≈ 11 %) — (`window`).

The regime each group ran in (`regime_table`): the Baseline's node and BB usage, the offered load (the
jobs' node-seconds / (nodes × submission span)), the mean queue length over the window, and from each
run's ``decisions.csv`` the share of decisions with a full window, where the GA ran and where the
starvation bound forced a job.
"""
from __future__ import annotations

import math
from pathlib import Path

from ...lazy import lazy
from ..study import ExtraWorkload

np = lazy("numpy")  # numpy, pandas and the statistics (scipy): imported on first use (burstbuffer.lazy)
pd = lazy("pandas")
_stats = lazy("burstbuffer.metrics.stats")


def mean_ci(x):
    """`burstbuffer.metrics.stats.mean_ci`, imported on first use."""
    return _stats.mean_ci(x)

#: the machines and scenarios of the paper regime (S4: the heaviest BB workload of §4.1; S3 was left out for time:
#: its Baseline stayed at 75-79 % BB usage, nodes at 80-90 %)
MACHINES = ("cori", "theta")
SCENARIOS = ("S4",)
#: replicates per (machine, scenario)
REPLICATES = 3
#: share of the submission span dropped at each end of the measurement window (the paper's half-months)
TRIM = 0.11
MACHINE_NAMES = {"cori": "Cori", "theta": "Theta"}


def scope_name(machine: str, scenario: str, k: int) -> str:
    return f"{machine}-{scenario}-r{k}"


def group_of(scope: str) -> str | None:
    """``cori-S4`` for ``cori-S4-r2``; None for a scope of another regime."""
    parts = scope.split("-")
    if len(parts) == 3 and parts[0] in MACHINES and parts[2].startswith("r"):
        return f"{parts[0]}-{parts[1]}"
    return None


def group_label(group: str) -> str:
    m, s = group.split("-")
    return f"{MACHINE_NAMES[m]}-{s}"


GROUPS = tuple(f"{m}-{s}" for m in MACHINES for s in SCENARIOS)


def derive(whole: Path, work: Path, seed: int, root: Path) -> list[ExtraWorkload]:
    """The paper-regime workloads of `whole` (module docstring) into `work`, rewritten only when their
    content changes; `root`: the repository (the bundled platforms). InputError as `load_workload`."""
    from ...workloads.batsim_json import _dumps, load_workload, write_workload
    from ...workloads.cli import platform_params
    from ...workloads.fan2019 import CONCURRENCY, LOAD, MACHINES as M, regime_workload
    w = load_workload(whole, require_bb=False)
    out = []
    for machine in MACHINES:
        m = M[machine]
        plat = root / m.platform
        pp = platform_params(plat)
        for scen in SCENARIOS:
            for k in range(REPLICATES):
                s = seed + k
                res = regime_workload(w, machine=machine, scenario=scen, seed=s, bb_nodes=pp["bb_nodes"],
                                      bb_capacity=pp["bb_capacity"])
                # the generator's constants in the name: a new calibration is a new file, so a resumed
                # reproduce reruns (a run's marker names its workload file)
                path = work / f"{whole.stem}-{machine}-{scen}-c{CONCURRENCY[machine]:g}-l{LOAD:g}-seed{s}.json"
                text = _dumps(res.workload.to_dict())
                if not (path.is_file() and path.read_text(encoding="utf-8") == text):
                    write_workload(path, res.workload)
                out.append(ExtraWorkload(
                    scope_name(machine, scen, k), path,
                    f"{m.name}-like {scen}, replicate {k} (seed {s}; {plat.name}, alloc-only, base order {m.order}; "
                    f"requests × {CONCURRENCY[machine]:g}, submissions × 1/{LOAD:g}): {res.summary()}",
                    platform=plat, model="alloc-only", seed=s, options={"order": m.order}))
    return out


def window(submissions) -> tuple[float, float, bool]:
    """(start, end [s], trimmed): the submission span without its first and last `TRIM`."""
    s = np.asarray(submissions, dtype=float)
    s = s[~np.isnan(s)]
    t0, t1 = float(s.min()), float(s.max())
    return t0 + TRIM * (t1 - t0), t1 - TRIM * (t1 - t0), True


def mean_queue(jobs: pd.DataFrame, a: float, b: float) -> float:
    """Mean number of queued jobs over [a, b] (`metrics.regime.mean_queue`)."""
    from ...metrics.regime import mean_queue as mq
    return mq(jobs, a, b)


def offered_load(jobs: pd.DataFrame, nodes: int) -> float:
    """`metrics.regime.offered_load`: > 1 means the queue must grow."""
    from ...metrics.regime import offered_load as ol
    return ol(jobs, nodes)


def decision_shares(path: Path, window_size: int = 20) -> dict:
    """Shares of the decisions of ``decisions.csv`` at `path`: window full, GA run, starvation bound
    fired (a forced job in the window); NaNs when absent."""
    try:
        d = pd.read_csv(path)
    except (OSError, ValueError):
        return {"decisions": 0, "full": math.nan, "ga": math.nan, "forced": math.nan}
    n = len(d)
    if not n:
        return {"decisions": 0, "full": math.nan, "ga": math.nan, "forced": math.nan}
    return {"decisions": n, "full": float((d["window"] >= window_size).mean()),
            "ga": float((d["solver"] == "ga").mean()), "forced": float((d["forced"] > 0).mean())}


def aggregate(rows: pd.DataFrame) -> pd.DataFrame:
    """The replicate rows of `rows` (paper_metrics rows whose scope is a replicate) as one row per (group,
    policy): the mean of each metric, with ``<metric>_ci`` (95 % half width) and ``replicates``."""
    r = rows.copy()
    r["group"] = r["scope"].map(group_of)
    r = r[r["group"].notna()]
    out = []
    for (g, p), x in r.groupby(["group", "policy"], sort=False):
        row = {"scope": g, "policy": p, "replicates": len(x)}
        for c in ("node_usage", "bb_usage", "wait_h_mean", "bsld_mean"):
            ci = mean_ci(x[c])
            row[c], row[c + "_ci"] = ci.mean, ci.half_width
        for c in [c for c in x.columns if c.startswith("wait_h_") and c != "wait_h_mean"]:
            row[c] = float(x[c].mean())
        for c in ("jobs", "started"):
            row[c] = int(x[c].sum())
        row.update(window_start=math.nan, window_end=math.nan, trimmed=True)
        out.append(row)
    return pd.DataFrame(out)


def regime_table(data, baseline: str = "bbsched-naive") -> list[list[str]]:
    """The report rows of the regime of each group (module docstring): group, replicates, the baseline's
    node and BB usage (mean ± CI), offered load, mean queue length (baseline), window full / GA / forced
    shares (bbsched's decisions, mean over replicates) and the baseline's forced share."""
    from . import bbsched_tables as T
    body = []
    j = data.jobs
    for g in GROUPS:
        scopes = [s for s in dict.fromkeys(j["scope"]) if group_of(s) == g]
        if not scopes:
            continue
        bu, nu, load, queue = [], [], [], []
        dec = {"bbsched": [], baseline: [], "bbsched/nobound": []}
        for s in scopes:
            b = j[(j["scope"] == s) & (j["policy"] == baseline)]
            if b.empty:
                continue
            a, e, _ = window(b["submission_time"])
            spec = next((x for x in data.specs if x.scope == s and (x.column or x.policy) == baseline), None)
            cap = T.read_capacity(Path(spec.out), (96, 0)) if spec else (96, 0)
            bu.append(T.usage(b["starting_time"], b["finish_time"], T.bb_bytes(b), a, e, cap[1]))
            nu.append(T.usage(b["starting_time"], b["finish_time"], b["requested_number_of_resources"], a, e, cap[0]))
            load.append(offered_load(b, cap[0]))
            queue.append(mean_queue(b, a, e))
            for pol in dec:
                sp = next((x for x in data.specs if x.scope == s and (x.column or x.policy) == pol), None)
                if sp is not None:
                    dec[pol].append(decision_shares(Path(sp.out) / "decisions.csv"))
        if not bu:
            continue
        ci = lambda v, pct=True: (f"{100 * mean_ci(v).mean:.1f} ± {100 * mean_ci(v).half_width:.1f} %" if pct  # noqa: E731
                                  else f"{mean_ci(v).mean:.3g} ± {mean_ci(v).half_width:.2g}")
        share = lambda pol, k: (f"{100 * np.nanmean([d[k] for d in dec[pol]]):.0f} %"  # noqa: E731
                                if dec[pol] else "n/a")
        body.append([group_label(g), str(len(bu)), ci(nu), ci(bu), ci(load, False), ci(queue, False),
                     share("bbsched", "full"), share("bbsched", "ga"), share("bbsched", "forced"),
                     share(baseline, "forced"), share("bbsched/nobound", "ga")])
    return body


REGIME_HEADER = ["workload", "replicates", "Baseline node usage", "Baseline BB usage", "offered load",
                 "mean queue length (Baseline) [jobs]", "bbsched: window full", "bbsched: GA runs",
                 "bbsched: starvation bound fires", "Baseline: bound fires", "bbsched/nobound: GA runs"]
