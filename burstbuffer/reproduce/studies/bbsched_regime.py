"""The BBSched study in the paper's own regime (Fan et al., HPDC'19, §4.1): the Original and S1-S4 workloads
of a Cori-like and a Theta-like machine, built as §4.1 builds them (`burstbuffer.workloads.fan2019`: the
paper's shares of jobs with a request, requests from the stated ranges as the same share of the platform's
BB, submissions as the trace has them), several seeds.

Scopes ``<machine>-<scenario>-r<k>`` (e.g. ``cori-S4-r0``): replicate k of the machine's scenario, made
from the selected KTH jobs with workload seed = policy seed = `REPLICATES` × s + k for the draw's seed s
(``--seed``, + j in `reproduce`'s replicate j: `inner_seed`), so that no two draws share a workload, run under the alloc-only job
model (the paper's simulation is trace-driven: a job's run time does not depend on its BB request) on the
machine's scaled platform, every window policy with the machine's base order (Cori: FCFS; Theta: WFP,
§4.3) and §3.1's starvation bound (50 window iterations, `burstbuffer.schedulers.bbsched`). The metrics
of a (machine, scenario) group are the means over its replicates with a 95 % Student-t confidence
interval (`metrics.stats.mean_ci`).

The measurement window of these scopes drops the first and last `TRIM` of the submission span — the
paper's half-month warm-up and cool-down of a 4-5-month trace (≈ 11 %) — (`window`).

**Regime checks** (`regime_checks`, per group; the study's claims are *out of regime* when one fails):

- offered load (the jobs' node-seconds / (nodes × submission span), the Baseline's runs) below
  `LOAD_MAX` = 1: the paper simulates each trace on its own machine, where the queue drains;
- the Baseline's BB usage in the paper's class for the scenario (§4.4, Fig. 7): at least `BB_HEAVY` =
  80 % on the heavy workloads (`HEAVY`: Cori-S2-S4, Theta-S3-S4, the ones §4.4 does not list as "under
  80 %"), below it on the others;
- bbsched's GA decides at least `GA_MIN` of its decisions: where the candidates all fit, every window
  policy starts them all and BBSched's choice is no choice (the project's own bound: the paper gives no
  share);
- the starvation bound forces a job at no more than `FORCED_MAX` of bbsched's decisions: where it
  fires, the bound chooses, not the policy (the project's own bound).

The Baseline's node usage and the mean queue length are printed beside, not checked (the paper gives
node usage per workload only in figures).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ...lazy import lazy
from ..study import ExtraWorkload

np = lazy("numpy")  # numpy, pandas and the statistics (scipy): imported on first use (burstbuffer.lazy)
pd = lazy("pandas")
_stats = lazy("burstbuffer.metrics.stats")


def mean_ci(x):
    """`burstbuffer.metrics.stats.mean_ci`, imported on first use."""
    return _stats.mean_ci(x)

#: the machines and workloads of the paper regime (§4.1: Original and S1-S4 on each machine)
MACHINES = ("cori", "theta")
SCENARIOS = ("Original", "S1", "S2", "S3", "S4")
#: the workloads whose BB usage §4.4 calls heavy (every one but Theta-Original, -S1, -S2, Cori-Original, -S1,
#: which it lists as "under 80 %")
HEAVY = ("cori-S2", "cori-S3", "cori-S4", "theta-S3", "theta-S4")
#: regime bounds (module docstring)
LOAD_MAX = 1.0
BB_HEAVY = 0.80
GA_MIN = 0.10
FORCED_MAX = 0.50
#: replicates per (machine, scenario)
REPLICATES = 3
#: share of the submission span dropped at each end of the measurement window (the paper's half-months)
TRIM = 0.11
MACHINE_NAMES = {"cori": "Cori", "theta": "Theta"}


def inner_seed(seed: int, k: int) -> int:
    """The workload and policy seed of replicate `k` < `REPLICATES` of a draw whose seed is `seed`: distinct for
    every (seed, k), so `reproduce`'s replicates (draw seeds --seed + j) and its A/A runs never share a
    workload."""
    return REPLICATES * seed + k


def scope_name(machine: str, scenario: str, k: int) -> str:
    """Replicate `k`'s scope of the machine's scenario: ``cori-S4-r2``."""
    return f"{replicates_of(machine, scenario)[:-1]}{k}"


def replicates_of(machine: str, scenario: str) -> str:
    """The scope pattern of every replicate of the machine's scenario (``cori-S4-r*``: a condition's scope
    whose matching scopes are each one replicate, `burstbuffer.metrics.claims.Condition`)."""
    return f"{machine}-{scenario}-r*"


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
    from ...workloads.fan2019 import MACHINES as M, regime_workload
    w = load_workload(whole, require_bb=False)
    out = []
    for machine in MACHINES:
        m = M[machine]
        plat = root / m.platform
        pp = platform_params(plat)
        for scen in SCENARIOS:
            for k in range(REPLICATES):
                s = inner_seed(seed, k)
                res = regime_workload(w, machine=machine, scenario=scen, seed=s, bb_nodes=pp["bb_nodes"],
                                      bb_capacity=pp["bb_capacity"])
                path = work / f"{whole.stem}-{machine}-{scen}-seed{s}.json"
                text = _dumps(res.workload.to_dict())
                if not (path.is_file() and path.read_text(encoding="utf-8") == text):
                    write_workload(path, res.workload)
                out.append(ExtraWorkload(
                    scope_name(machine, scen, k), path,
                    f"{m.name}-like {scen}, replicate {k} (seed {s}; {plat.name}, alloc-only, base order {m.order}; "
                    f"submissions as the trace has them): {res.summary()}",
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


@dataclass
class GroupRegime:
    """The regime one group (machine, scenario) ran in, over its replicates: the Baseline's node and BB usage
    and offered load (lists, one per replicate), its mean queue length, and bbsched's decision shares (window
    full, GA, forced; means over the replicates, NaN without decisions.csv)."""

    group: str
    node_usage: list
    bb_usage: list
    load: list
    queue: list
    full: float
    ga: float
    forced: float

    def checks(self) -> list[tuple[str, bool, str, str]]:
        """(name, ok, measured, needs) of the four checks (module docstring)."""
        heavy = self.group in HEAVY
        bb, load = float(np.mean(self.bb_usage)), float(np.max(self.load))
        label = group_label(self.group)
        return [
            (f"{label}: offered load", load < LOAD_MAX, f"{load:.2f} (highest replicate)",
             f"below {LOAD_MAX:g}: the queue drains, as on the paper's machines"),
            (f"{label}: Baseline BB usage", (bb >= BB_HEAVY) if heavy else (bb < BB_HEAVY), f"{100 * bb:.1f} %",
             (f"at least {100 * BB_HEAVY:g} % (§4.4: a heavy-BB workload)" if heavy
              else f"below {100 * BB_HEAVY:g} % (§4.4 lists it under 80 %)")),
            (f"{label}: GA decisions", self.ga >= GA_MIN, f"{100 * self.ga:.1f} % of bbsched's decisions",
             f"at least {100 * GA_MIN:g} % (the project's own bound: BBSched must choose)"),
            (f"{label}: starvation bound", self.forced <= FORCED_MAX,
             f"forces a job at {100 * self.forced:.1f} % of bbsched's decisions",
             f"at most {100 * FORCED_MAX:g} % (the project's own bound: the policy, not the bound, chooses)"),
        ]


def group_regimes(data, baseline: str = "bbsched-naive") -> list[GroupRegime]:
    """One `GroupRegime` per group run (GROUPS order) from the study's runs (`StudyData`)."""
    from . import bbsched_tables as T
    out = []
    j = data.jobs
    for g in GROUPS:
        scopes = [s for s in dict.fromkeys(j["scope"]) if group_of(s) == g]
        bu, nu, load, queue, dec = [], [], [], [], []
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
            sp = next((x for x in data.specs if x.scope == s and (x.column or x.policy) == "bbsched"), None)
            if sp is not None:
                dec.append(decision_shares(Path(sp.out) / "decisions.csv"))
        if not bu:
            continue
        share = lambda k: float(np.nanmean([d[k] for d in dec])) if dec else math.nan  # noqa: E731
        out.append(GroupRegime(g, nu, bu, load, queue, share("full"), share("ga"), share("forced")))
    return out


def regime_table(regimes: list[GroupRegime]) -> list[list[str]]:
    """The report rows of `regimes`: workload, replicates, the Baseline's node and BB usage (mean ± CI),
    offered load, mean queue length, bbsched's window-full / GA / forced shares, and the checks' outcome."""
    ci = lambda v, pct=True: (f"{100 * mean_ci(v).mean:.1f} ± {100 * mean_ci(v).half_width:.1f} %" if pct  # noqa: E731
                              else f"{mean_ci(v).mean:.3g} ± {mean_ci(v).half_width:.2g}")
    pc = lambda x: "n/a" if x != x else f"{100 * x:.0f} %"  # noqa: E731
    body = []
    for r in regimes:
        failed = [c[0].split(": ", 1)[1] for c in r.checks() if not c[1]]
        body.append([group_label(r.group), str(len(r.bb_usage)), ci(r.node_usage), ci(r.bb_usage), ci(r.load, False),
                     ci(r.queue, False), pc(r.full), pc(r.ga), pc(r.forced),
                     "in regime" if not failed else "out of regime: " + ", ".join(failed)])
    return body


REGIME_HEADER = ["workload", "replicates", "Baseline node usage", "Baseline BB usage", "offered load",
                 "mean queue length (Baseline) [jobs]", "bbsched: window full", "bbsched: GA decides",
                 "bbsched: starvation bound fires", "regime"]
