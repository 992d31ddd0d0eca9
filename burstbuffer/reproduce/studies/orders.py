"""Study ``orders``: queue orders and Mira-like queues on KTH, after Allcock et al., "Experience and Practice
of Batch Scheduling on Leadership Supercomputers at Argonne" (§3 queues, §4 the WFP utility, §5.1 Table 2).

Columns (`VARIANTS`): ``fcfs-bb`` and ``sjf-bb`` under each order of `burstbuffer.schedulers.orders`
(fcfs, sjf, ljf, small, large, bb-small, bb-large, wfp), without queues (label ``POLICY/ORDER``) and with
the Mira-like queues of ``workloads/mira-like-queues.toml`` (label ``POLICY/ORDER+queues``; the file's
own order, wfp, is replaced by the column's, so ``POLICY/wfp+queues`` is Mira's set-up and the other
orders show what the routing and the prod-long share do alone). docs/orders-and-queues.md.

Job classes (`class_table`), on the jobs every column of a scope started (a job that no queue accepts is
rejected by the queue columns: it is left out of every column, so that all columns average the same jobs):

- **size** by processors requested, thresholds as fractions of the 96-processor machine: ``1-4``
  (at most ~4 %: on KTH-1000 538 jobs, 6 % of the requested processor-time), ``5-19`` (below 20 %:
  310 jobs, 37 %), ``20-96`` (at least 20 %, Allcock et al.'s capability line, §3: 152 jobs, 57 %);
- **walltime**: requested walltime ≤ 6 h (``short``) or above (``long``), Mira's prod-short / prod-long line;
- **queue**: the queue the Mira-like file routes the job to (prod-short, prod-long, prod-capability).

`CLAIMS` are the statements of the paper that KTH can check; their measures read the summary rows with
the class columns of `claim_rows` (``wait_h_mean_size_20-96``, ``wait_h_mean_wt_long``,
``wait_h_mean_q_prod-long``, …, waiting times in hours).
"""
from __future__ import annotations

import math
from pathlib import Path

from ...metrics.claims import AllHold, Claim, Measurement
from ...data import bundled
from ..study import Study, StudyData, Variant
from ...lazy import lazy

np = lazy("numpy")  # numpy and pandas: imported on first use (burstbuffer.lazy)
pd = lazy("pandas")

#: the Mira-like queue file (Allcock et al. §3, scaled to 96 processors)
MIRA_QUEUES = bundled("workloads", "mira-like-queues.toml")
POLICIES = ("fcfs-bb", "sjf-bb")
ORDER_NAMES = ("fcfs", "sjf", "ljf", "small", "large", "bb-small", "bb-large", "wfp")
#: (name, lowest, highest processors requested); the platform has 96 processors
SIZE_CLASSES = (("1-4", 1, 4), ("5-19", 5, 19), ("20-96", 20, 10**9))
LARGE = SIZE_CLASSES[-1][0]
#: requested walltime above which a job is "long" [s] (Mira's prod-short / prod-long line, §3)
LONG_WALLTIME = 6 * 3600.0
#: wfp's clamp of score_wall_time [s] (§4.3.4: a floor of one hour, a ceiling of 12 hours)
FLOOR, CEILING = 3600.0, 12 * 3600.0
QUEUE_CLASSES = ("prod-short", "prod-long", "prod-capability")


def label(policy: str, order: str, queues: bool) -> str:
    """A column's label: ``POLICY/ORDER`` or ``POLICY/ORDER+queues``."""
    return f"{policy}/{order}" + ("+queues" if queues else "")


def _variant(policy: str, order: str, queues: bool) -> Variant:
    opts: dict = {"order": order}
    if queues:
        opts["queues"] = {"path": str(MIRA_QUEUES), "order": None}
    return Variant(label(policy, order, queues), policy, opts)


#: the drain and clamp columns (Allcock et al. §4, §4.3.4), beside the order × queue grid: ``filler/wfp``
#: (wfp order, no reservation: nothing is drained for the top job), and ``POLICY/wfp-nofloor`` /
#: ``POLICY/wfp-noceiling`` (wfp without the 1 h floor / the 12 h ceiling of score_wall_time)
DRAIN_FREE = "filler/wfp"
CLAMPS = {"nofloor": {"wall_floor": None}, "noceiling": {"wall_ceiling": None}}


def clamp_label(policy: str, clamp: str) -> str:
    """``POLICY/wfp-nofloor`` or ``POLICY/wfp-noceiling``."""
    return f"{policy}/wfp-{clamp}"


VARIANTS = (tuple(_variant(p, o, q) for q in (False, True) for p in POLICIES for o in ORDER_NAMES)
            + (Variant(DRAIN_FREE, "filler", {"order": "wfp"}),)
            + tuple(Variant(clamp_label(p, c), p, {"order": "wfp", "order_params": params})
                    for p in POLICIES for c, params in CLAMPS.items()))
#: label → (policy, order, with queues) of the order × queue grid
COLUMNS = {label(p, o, q): (p, o, q) for q in (False, True) for p in POLICIES for o in ORDER_NAMES}


# --- job classes -------------------------------------------------------------------------------------
def size_class(res: float) -> str | None:
    """The size class of a job asking for `res` processors (None outside every class)."""
    for name, lo, hi in SIZE_CLASSES:
        if lo <= res <= hi:
            return name
    return None


def queue_class(res: float, walltime: float, queues=None) -> str:
    """The queue the Mira-like file (or `queues`, a `QueueConfig`) routes a job of `res` processors and
    `walltime` [s] to on 96 processors; "none" when no queue accepts it."""
    from ...schedulers.base import Job
    cfg = queues or _mira()
    q, _ = cfg.route(Job("j", 0.0, float(walltime), int(res)), 96)
    return q.name if q is not None else "none"


_MIRA = []


def _mira():
    if not _MIRA:
        from ...schedulers.queues import load_queues
        _MIRA.append(load_queues(MIRA_QUEUES))
    return _MIRA[0]


def class_table(jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per (scope, policy) of the tidy per-job table `jobs` (`StudyData.jobs`): for each class
    (size ``size_<c>``, walltime ``wt_short`` / ``wt_long`` (6 h), ``wt_upto12`` / ``wt_over12`` (wfp's 12 h
    ceiling), ``large_short`` (20-96 processors, at most wfp's 1 h floor), queue ``q_<queue>``) the number of jobs
    ``n_<class>``, their mean waiting time ``wait_h_mean_<class>`` [h] and mean bounded slowdown
    ``bsld_mean_<class>``, over the jobs that every policy of the scope started (``common``: how many)."""
    from ...metrics.tables import class_means

    def classify(sub: pd.DataFrame) -> dict:
        res = sub["requested_number_of_resources"].to_numpy(float)
        wt = sub["requested_time"].to_numpy(float)
        cls = {f"size_{c}": np.array([size_class(r) == c for r in res], bool) for c, _, _ in SIZE_CLASSES}
        cls["wt_short"] = wt <= LONG_WALLTIME
        cls["wt_long"] = wt > LONG_WALLTIME
        cls["wt_upto12"] = wt <= CEILING
        cls["wt_over12"] = wt > CEILING
        cls["large_short"] = cls[f"size_{LARGE}"] & (wt <= FLOOR)
        routed = {k: queue_class(*k) for k in set(zip(res, wt))}
        qs = np.array([routed[k] for k in zip(res, wt)], object)
        for q in QUEUE_CLASSES:
            cls[f"q_{q}"] = qs == q
        return cls
    return class_means(jobs, classify, wait="wait_h_mean_{}", bsld="bsld_mean_{}")


def idle_table(jobs: pd.DataFrame, nodes: int) -> pd.DataFrame:
    """One row per (scope, policy) of `jobs`: ``idle_queued``, the share of the node-time idle while a job
    is queued (`burstbuffer.metrics.regime.idle_while_queued`, on `nodes` compute nodes)."""
    from ...metrics.regime import idle_while_queued
    return pd.DataFrame([{"scope": sc, "policy": pol, "idle_queued": idle_while_queued(g, nodes)}
                         for (sc, pol), g in jobs.groupby(["scope", "policy"], sort=False)],
                        columns=["scope", "policy", "idle_queued"])


def claim_rows(summary: pd.DataFrame, jobs: pd.DataFrame, nodes: int = 96) -> pd.DataFrame:
    """The summary rows the claims judge, with `class_table`'s columns and `idle_table`'s (on `nodes`
    compute nodes), merged on scope and policy."""
    ct = class_table(jobs)
    if ct.empty:
        return summary
    return summary.merge(ct, on=["scope", "policy"], how="left").merge(idle_table(jobs, nodes),
                                                                       on=["scope", "policy"], how="left")


def _study_rows(d: StudyData) -> pd.DataFrame:
    """`claim_rows` of the whole scope, with the compute nodes of its runs' platform."""
    from .bbsched_tables import read_capacity
    whole = [s for s in d.specs if s.scope == "whole" and "error" not in d.results.get(s.key, {"error": 1})]
    nodes = read_capacity(Path(whole[0].out), (96, 0))[0] if whole else 96
    return claim_rows(d.summary[d.summary["scope"] == "whole"], d.jobs[d.jobs["scope"] == "whole"], nodes)


# --- claims ------------------------------------------------------------------------------------------
def _get(s: pd.DataFrame, col: str, policy: str, order: str, queues: bool = False) -> float:
    """`col` of the whole scope's row of one column (NaN when absent)."""
    r = s[s["policy"] == label(policy, order, queues)]
    if "scope" in s:
        r = r[r["scope"] == "whole"]
    return float(r[col].iloc[0]) if len(r) and col in r else math.nan


def _pairs(s: pd.DataFrame, col: str, a: tuple[str, bool], b: tuple[str, bool]):
    """[(policy, value of column a, value of column b)] for the policies where both ran; a, b: (order, queues)."""
    out = []
    for p in POLICIES:
        x, y = _get(s, col, p, *a), _get(s, col, p, *b)
        if not (math.isnan(x) or math.isnan(y)):
            out.append((p, x, y))
    return out


def _change(a: float, b: float) -> str:
    """a relative to b as a signed percentage ("n/a" when b is 0)."""
    return f"{100 * (a / b - 1):+.0f} %" if b else "n/a (0 h)"


def _times(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b else "n/a (0)"


#: "favours": the 20-96 class waits at least this much less under wfp than under fcfs order (relative)
WFP_LARGE_GAIN = 0.10
#: "far less": prod-short's mean wait at most this share of prod-capability's and prod-long's (Mira: 0.16)
SHORT_FAR = 0.5
#: "almost the same": prod-long's and prod-capability's mean waits within this factor (Mira: 1.006)
ALMOST_SAME = 1.25


def wfp_favours_large(s: pd.DataFrame) -> Measurement | None:
    """Conditions, per policy: the 20-96 class's mean waiting time under wfp at least `WFP_LARGE_GAIN`
    below fcfs order's (a 1 % difference does not count)."""
    col = f"wait_h_mean_size_{LARGE}"
    pairs = _pairs(s, col, ("wfp", False), ("fcfs", False))
    if not pairs:
        return None
    return Measurement("; ".join(f"{p}: jobs of {LARGE} processors wait {w:.3g} h under wfp, {f:.3g} h under fcfs"
                                 for p, w, f in pairs),
                       "; ".join(f"{p}: {_change(w, f)}" for p, w, f in pairs),
                       count=(sum(w <= (1 - WFP_LARGE_GAIN) * f for _, w, f in pairs), len(pairs)))


def wfp_does_not_starve(s: pd.DataFrame) -> Measurement | None:
    """Conditions, per policy: wfp's maximum waiting time below the ``large`` order's (the same preference
    for size, without eq. 2's time term)."""
    pairs = _pairs(s, "wait_h_max", ("wfp", False), ("large", False))
    if not pairs:
        return None
    return Measurement("; ".join(f"{p}: max waiting time wfp {w:.3g} h, large {g:.3g} h" for p, w, g in pairs),
                       "; ".join(f"{p}: {_times(w, g)} the large order's" for p, w, g in pairs),
                       count=(sum(w < g for _, w, g in pairs), len(pairs)))


def wfp_long_jobs_wait_longer(s: pd.DataFrame) -> Measurement | None:
    """Conditions, per policy: the ratio (mean waiting time of jobs asking for more than 6 h) / (of the
    others) under wfp above the same ratio under fcfs order."""
    rat = {(p, o): _get(s, "wait_h_mean_wt_long", p, o) / _get(s, "wait_h_mean_wt_short", p, o)
           for p in POLICIES for o in ("wfp", "fcfs") if _get(s, "wait_h_mean_wt_short", p, o) > 0}
    ps = [p for p in POLICIES if not any(math.isnan(rat.get((p, o), math.nan)) for o in ("wfp", "fcfs"))]
    if not ps:
        return None
    return Measurement("; ".join(f"{p}: long / short jobs' mean waiting time {rat[(p, 'wfp')]:.3g} under wfp, "
                                 f"{rat[(p, 'fcfs')]:.3g} under fcfs" for p in ps),
                       "; ".join(f"{p}: {_times(rat[(p, 'wfp')], rat[(p, 'fcfs')])} fcfs's ratio" for p in ps),
                       count=(sum(rat[(p, "wfp")] > rat[(p, "fcfs")] for p in ps), len(ps)))


def queues_help_capability(s: pd.DataFrame) -> Measurement | None:
    """Conditions, per policy, under wfp: prod-capability jobs' mean waiting time with the queues below
    that of the same jobs without them."""
    pairs = _pairs(s, "wait_h_mean_q_prod-capability", ("wfp", True), ("wfp", False))
    if not pairs:
        return None
    return Measurement("; ".join(f"{p}/wfp: prod-capability jobs wait {q:.3g} h with the queues, {n:.3g} h without"
                                 for p, q, n in pairs),
                       "; ".join(f"{p}: {_change(q, n)}" for p, q, n in pairs),
                       count=(sum(q < n for _, q, n in pairs), len(pairs)))


def queue_waits_like_mira(s: pd.DataFrame) -> Measurement | None:
    """Three conditions per policy, under wfp with the queues (Table 2, Observation 3): prod-short's mean
    waiting time at most `SHORT_FAR` × prod-capability's and × prod-long's ("far less"), and prod-long's
    within a factor `ALMOST_SAME` of prod-capability's ("almost the same")."""
    got = []
    for p in POLICIES:
        w = {q: _get(s, f"wait_h_mean_q_{q}", p, "wfp", True) for q in QUEUE_CLASSES}
        if not any(math.isnan(v) for v in w.values()):
            got.append((p, w))
    if not got:
        return None
    ok = 0
    for _, w in got:
        r = w["prod-long"] / w["prod-capability"] if w["prod-capability"] > 0 else math.inf
        ok += ((w["prod-short"] <= SHORT_FAR * w["prod-capability"]) + (w["prod-short"] <= SHORT_FAR * w["prod-long"])
               + (1 / ALMOST_SAME <= r <= ALMOST_SAME))
    return Measurement("; ".join(f"{p}/wfp+queues: prod-short {w['prod-short']:.3g} h, prod-long {w['prod-long']:.3g} h, "
                                 f"prod-capability {w['prod-capability']:.3g} h" for p, w in got),
                       f"{ok} of {3 * len(got)} conditions hold (short ≤ {SHORT_FAR:g} × the others, long within × "
                       f"{ALMOST_SAME:g} of capability; Mira: short 12.6 h, long 76.9 h, capability 77.4 h)",
                       count=(ok, 3 * len(got)))


#: a drain's cost: the idle share while jobs wait at least this many percentage points above the column
#: that does not drain (a rounding difference is no cost)
DRAIN_PP = 1.0
#: "supports capability jobs" / "a good turnaround" / "to the front very rapidly": a class's mean wait at
#: least this much lower (relative) in the column that favours it
FAVOUR = 0.10


def _col(s: pd.DataFrame, col: str, lab: str) -> float:
    """`col` of the whole scope's row of column `lab` (NaN when absent)."""
    r = s[s["policy"] == lab]
    if "scope" in s:
        r = r[r["scope"] == "whole"]
    return float(r[col].iloc[0]) if len(r) and col in r else math.nan


def _pp(x: float) -> str:
    return f"{100 * x:.1f} %"


def drain_costs_utilisation(s: pd.DataFrame) -> Measurement | None:
    """Conditions, per policy (fcfs-bb, sjf-bb under wfp: the top job's reservation drains its nodes): the
    share of the node-time idle while jobs wait at least `DRAIN_PP` points above ``filler/wfp``'s (the same
    order, no reservation). A drain that costs nothing, or less than not draining, fails."""
    free = _col(s, "idle_queued", DRAIN_FREE)
    got = [(p, _get(s, "idle_queued", p, "wfp")) for p in POLICIES]
    got = [(p, v) for p, v in got if v == v]
    if not got or free != free:
        return None
    return Measurement("idle node-time while jobs wait: " + "; ".join(f"{p}/wfp {_pp(v)}" for p, v in got)
                       + f"; {DRAIN_FREE} (no reservation) {_pp(free)}",
                       "; ".join(f"{p}: {100 * (v - free):+.1f} points" for p, v in got)
                       + f" (a cost needs ≥ +{DRAIN_PP:g})",
                       count=(sum(v - free >= DRAIN_PP / 100 for _, v in got), len(got)))


def drain_helps_capability(s: pd.DataFrame) -> Measurement | None:
    """Conditions, per policy under wfp: the 20-96 class's mean wait at least `FAVOUR` below ``filler/wfp``'s."""
    col = f"wait_h_mean_size_{LARGE}"
    free = _col(s, col, DRAIN_FREE)
    got = [(p, _get(s, col, p, "wfp")) for p in POLICIES]
    got = [(p, v) for p, v in got if v == v]
    if not got or free != free:
        return None
    return Measurement("; ".join(f"{p}/wfp: jobs of {LARGE} processors wait {v:.3g} h" for p, v in got)
                       + f"; {DRAIN_FREE}: {free:.3g} h", "; ".join(f"{p}: {_change(v, free)}" for p, v in got),
                       count=(sum(v <= (1 - FAVOUR) * free for _, v in got), len(got)))


def _clamp_pairs(s: pd.DataFrame, col: str, clamp: str):
    """[(policy, `col` under wfp, `col` under wfp without `clamp`)] for the policies where both ran."""
    out = []
    for p in POLICIES:
        a, b = _get(s, col, p, "wfp"), _col(s, col, clamp_label(p, clamp))
        if a == a and b == b:
            out.append((p, a, b))
    return out


def floor_keeps_utilisation(s: pd.DataFrame) -> Measurement | None:
    """Two conditions per policy, wfp with and without the 1 h floor: without it the large short jobs (20-96
    processors, ≤ 1 h) wait at least `FAVOUR` less (they reach the front very rapidly), and the idle share
    while jobs wait is at least `DRAIN_PP` points higher (the sawtooth drain's utilisation cost)."""
    w = _clamp_pairs(s, "wait_h_mean_large_short", "nofloor")
    u = {p: (a, b) for p, a, b in _clamp_pairs(s, "idle_queued", "nofloor")}
    w = [(p, a, b) for p, a, b in w if p in u]
    if not w:
        return None
    k = sum((b <= (1 - FAVOUR) * a) + (u[p][1] - u[p][0] >= DRAIN_PP / 100) for p, a, b in w)
    return Measurement("; ".join(f"{p}/wfp with / without the floor: large short jobs wait {a:.3g} / {b:.3g} h, idle "
                                 f"while jobs wait {_pp(u[p][0])} / {_pp(u[p][1])}" for p, a, b in w),
                       "; ".join(f"{p}: large short jobs {_change(b, a)}, idle {100 * (u[p][1] - u[p][0]):+.1f} points"
                                 for p, a, b in w) + f"; {k} of {2 * len(w)} conditions hold",
                       count=(int(k), 2 * len(w)))


def ceiling_turnaround(s: pd.DataFrame) -> Measurement | None:
    """Two conditions per policy, wfp with and without the 12 h ceiling: with it the jobs asking for more than
    12 h wait at least `FAVOUR` less ("a good turnaround on these longer jobs"), and still no less than the
    jobs asking for at most 12 h ("without unduly favoring them")."""
    w = _clamp_pairs(s, "wait_h_mean_wt_over12", "noceiling")
    short = {p: _get(s, "wait_h_mean_wt_upto12", p, "wfp") for p, _, _ in w}
    w = [(p, a, b) for p, a, b in w if short[p] == short[p]]
    if not w:
        return None
    k = sum((a <= (1 - FAVOUR) * b) + (a >= short[p]) for p, a, b in w)
    return Measurement("; ".join(f"{p}/wfp: jobs asking > 12 h wait {a:.3g} h with the ceiling, {b:.3g} h without; "
                                 f"jobs asking ≤ 12 h {short[p]:.3g} h" for p, a, b in w),
                       "; ".join(f"{p}: {_change(a, b)} with the ceiling, {_times(a, short[p])} the shorter jobs' wait"
                                 for p, a, b in w) + f"; {k} of {2 * len(w)} conditions hold",
                       count=(int(k), 2 * len(w)))


_NEEDS = "fcfs-bb or sjf-bb under the orders compared"
CLAIMS: tuple[Claim, ...] = (
    Claim("wfp-large", "WFP favours large jobs: its size / MAX_SIZE factor makes them gain priority faster and "
          "tend to the top, to run capability jobs (here: jobs of 20-96 processors wait at least 10 % less under wfp than "
          "under fcfs order)", "§4, eq. 1 and its concepts", "whole", POLICIES, "qualitative",
          wfp_favours_large, AllHold(), _NEEDS + " (fcfs, wfp)"),
    Claim("wfp-no-starvation", "Eq. 2's time term is an anti-starvation factor: a job eventually reaches the "
          "front (here: wfp's longest wait is below that of the large order, the same size preference "
          "without the time term)", "§4, eq. 2", "whole", POLICIES, "qualitative", wfp_does_not_starve,
          AllHold(), _NEEDS + " (wfp, large)"),
    Claim("wfp-walltime", "The longer the requested walltime, the longer a job should be willing to wait "
          "(here: under wfp, jobs asking for more than 6 h wait longer relative to the others than under fcfs)",
          "§4, eq. 2", "whole", POLICIES, "qualitative", wfp_long_jobs_wait_longer, AllHold(),
          _NEEDS + " (fcfs, wfp)"),
    Claim("queues-capability", "Confining prod-long (small, long jobs) to a third of the machine keeps room for "
          "prod-capability jobs (here: they wait less with the Mira-like queues than without, under wfp)",
          "§3 (prod-long)", "whole", POLICIES, "qualitative", queues_help_capability, AllHold(),
          "fcfs-bb or sjf-bb under wfp with and without the queues"),
    Claim("queue-waits", "With the queues, prod-short jobs wait far less than prod-capability and prod-long "
          "jobs, whose mean waits are almost the same", "§5.1, Table 2, Observation 3", "whole", POLICIES,
          "Mira: 45,243 s, 278,510 s, 276,839 s", queue_waits_like_mira, AllHold(),
          "fcfs-bb or sjf-bb under wfp with the queues"),
    Claim("drain-cost", "Cobalt drains the resources selected for the top-priority job, backfilling where it can; "
          "this draining hurts utilisation (here: under wfp, the EASY reservation of fcfs-bb / sjf-bb leaves at "
          f"least {DRAIN_PP:g} point more of the node-time idle while jobs wait than filler, which reserves nothing)",
          "§4 (Cobalt's draining)", "whole", POLICIES + ("filler",), "qualitative", drain_costs_utilisation,
          AllHold(), f"fcfs-bb or sjf-bb under wfp, and {DRAIN_FREE}"),
    Claim("drain-capability", "… but draining supports the mission to run capability-scale jobs (here: under wfp, "
          f"jobs of {LARGE} processors wait at least {100 * FAVOUR:g} % less with the reservation than under filler)",
          "§4 (Cobalt's draining)", "whole", POLICIES + ("filler",), "qualitative", drain_helps_capability,
          AllHold(), f"fcfs-bb or sjf-bb under wfp, and {DRAIN_FREE}"),
    Claim("clamp-floor", "Without the one-hour floor of score_wall_time a large, short job gets to the front very "
          "rapidly, and the resulting drain pattern severely hurts utilisation; the floor corrects it (here: "
          f"without it, jobs of {LARGE} processors asking ≤ 1 h wait at least {100 * FAVOUR:g} % less, and the idle "
          f"node-time while jobs wait rises by at least {DRAIN_PP:g} point)", "§4.3.4", "whole", POLICIES,
          "qualitative", floor_keeps_utilisation, AllHold(), "fcfs-bb or sjf-bb under wfp with and without the floor"),
    Claim("clamp-ceiling", "The 12-hour ceiling of score_wall_time gives the longer jobs a good turnaround without "
          f"unduly favouring them (here: jobs asking > 12 h wait at least {100 * FAVOUR:g} % less with the ceiling "
          "than without, and no less than the jobs asking ≤ 12 h)", "§4.3.4", "whole", POLICIES, "qualitative",
          ceiling_turnaround, AllHold(), "fcfs-bb or sjf-bb under wfp with and without the ceiling"),
)


# --- report sections and figures ---------------------------------------------------------------------
def _f(x: float, d: int = 3) -> str:
    return "n/a" if x is None or x != x else f"{x:.{d}g}"


def sections(d: StudyData) -> list:
    """The study's report sections: mean waiting time and bounded slowdown per order (table and figure),
    per size class (table and figure), per Mira queue class (table)."""
    rep, summ = d.report, d.summary
    whole = summ[summ["scope"] == "whole"]
    if whole.empty:
        return []
    ct = class_table(d.jobs[d.jobs["scope"] == "whole"])
    cols = [(p, q) for q in (False, True) for p in POLICIES
            if any(lb in set(whole["policy"]) for lb in (label(p, o, q) for o in ORDER_NAMES))]
    rep.h(1, "Orders and queues: mean waiting time [h] / mean bounded slowdown per order")
    rep.p("Each column is a policy without or with the Mira-like queues (workloads/mira-like-queues.toml, "
          "every queue under the row's order); wfp with the queues is Mira's set-up (Allcock et al. §3-4).")
    body = []
    for o in ORDER_NAMES:
        r = [o]
        for p, q in cols:
            w, b = _get(whole, "wait_h_mean", p, o, q), _get(whole, "bsld_mean", p, o, q)
            r.append("" if w != w else f"{w:.3g} / {b:.3g}")
        body.append(r)
    rep.table(["order"] + [p + (" + queues" if q else "") for p, q in cols], body)
    if ct.empty:
        return []
    n = ct.iloc[0]
    rep.h(2, "Per size class")
    rep.p("Size classes by processors requested, as fractions of the 96-processor machine: 1-4 (≤ ~4 %), "
          "5-19 (< 20 %), 20-96 (≥ 20 %, the capability line of Allcock et al. §3). On the KTH trace most "
          "jobs are small but the large ones hold most of the processor-time (KTH-1000: 54 % of the jobs ask "
          "≤ 4 processors for 6 % of the requested processor-time, 15 % ask ≥ 20 for 57 %). Means over the "
          f"{int(n['common'])} jobs every column started (a job no queue accepts is rejected by the queue "
          "columns and left out of all). Jobs per class: "
          + ", ".join(f"{c} {int(n[f'n_size_{c}'])}" for c, _, _ in SIZE_CLASSES) + "; requested walltime > 6 h: "
          + f"{int(n['n_wt_long'])}.")
    hdr = ["column"] + [f"wait {c} [h]" for c, _, _ in SIZE_CLASSES] + [f"bsld {c}" for c, _, _ in SIZE_CLASSES] \
        + ["wait ≤ 6 h [h]", "wait > 6 h [h]"]
    body = []
    for _, r in ct.iterrows():
        body.append([r["policy"]] + [_f(r[f"wait_h_mean_size_{c}"]) for c, _, _ in SIZE_CLASSES]
                    + [_f(r[f"bsld_mean_size_{c}"]) for c, _, _ in SIZE_CLASSES]
                    + [_f(r["wait_h_mean_wt_short"]), _f(r["wait_h_mean_wt_long"])])
    rep.table(hdr, body)
    rep.h(2, "Per Mira queue class")
    rep.p("Each job's class is the queue the Mira-like file routes it to (by processors and walltime), with or "
          "without the queues in the run. Jobs: " + ", ".join(f"{q} {int(n[f'n_q_{q}'])}" for q in QUEUE_CLASSES) + ".")
    rep.table(["column"] + [f"wait {q} [h]" for q in QUEUE_CLASSES],
              [[r["policy"]] + [_f(r[f"wait_h_mean_q_{q}"]) for q in QUEUE_CLASSES] for _, r in ct.iterrows()])
    return [(size_figure(ct, d.figures), "Mean waiting time per size class and order (processors requested; "
             "jobs every column started)"),
            (order_figure(whole, d.figures), "Mean waiting time and mean bounded slowdown per order")]


def size_figure(ct: pd.DataFrame, folder: Path) -> list[Path]:
    """Per policy × queues panel: grouped bars of the mean waiting time [h] per size class, one group per
    order. Writes ``orders_size_classes.png`` / ``.svg``; returns both paths."""
    from ...metrics.figures import save_figure
    import matplotlib.pyplot as plt
    panels = [(p, q) for q in (False, True) for p in POLICIES
              if ct["policy"].isin([label(p, o, q) for o in ORDER_NAMES]).any()]
    fig, axes = plt.subplots(1, max(len(panels), 1), figsize=(4.2 * max(len(panels), 1), 3.6), sharey=True,
                             squeeze=False)
    width = 0.8 / len(SIZE_CLASSES)
    x = np.arange(len(ORDER_NAMES))
    for ax, (p, q) in zip(axes[0], panels):
        for k, (c, _, _) in enumerate(SIZE_CLASSES):
            v = [_get(ct, f"wait_h_mean_size_{c}", p, o, q) for o in ORDER_NAMES]
            ax.bar(x + (k - (len(SIZE_CLASSES) - 1) / 2) * width, v, width, label=f"{c} processors")
        ax.set_xticks(x, ORDER_NAMES, rotation=45, ha="right")
        ax.set_title(p + (" + Mira-like queues" if q else ""), fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("mean waiting time [h]")
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=len(SIZE_CLASSES), fontsize=8, bbox_to_anchor=(0.5, 0.98))
    return save_figure(fig, folder, "orders_size_classes")


def order_figure(whole: pd.DataFrame, folder: Path) -> list[Path]:
    """Mean waiting time [h] and mean bounded slowdown per order, one line per policy × queues. Writes
    ``orders_means.png`` / ``.svg``; returns both paths."""
    from ...metrics.figures import save_figure
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    x = np.arange(len(ORDER_NAMES))
    for ax, col, name in ((axes[0], "wait_h_mean", "mean waiting time [h]"), (axes[1], "bsld_mean", "mean bounded slowdown")):
        for q in (False, True):
            for p in POLICIES:
                v = [_get(whole, col, p, o, q) for o in ORDER_NAMES]
                if not all(math.isnan(t) for t in v):
                    ax.plot(x, v, marker="o", ls="--" if q else "-", label=p + (" + queues" if q else ""))
        ax.set_xticks(x, ORDER_NAMES, rotation=45, ha="right")
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    return save_figure(fig, folder, "orders_means")


STUDY = Study(
    name="orders",
    title="Queue orders and Mira-like queues on KTH (Allcock et al., Argonne, §3-5)",
    description="queue orders (fcfs, sjf, ljf, small, large, bb-small, bb-large, wfp) × fcfs-bb / sjf-bb, without "
                "and with the Mira-like queues; per-size-class waiting times; Allcock et al.'s checkable claims",
    policies=POLICIES, reference=label("fcfs-bb", "fcfs", False), claims=CLAIMS, variants=VARIANTS,
    sections=sections, claim_rows=_study_rows,
    paper="Allcock et al. 2017",
)
