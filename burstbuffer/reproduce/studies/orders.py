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

`CLAIMS` are the statements of the paper that KTH can check (docs/verdicts.md): each condition compares a
treatment column with a control column on the waiting time [h] of a job class, paired over the jobs both
started, or on the idle node-time while jobs wait, paired over `IDLE_WINDOWS` windows of the submission span;
the queue waits of Table 2 compare two queue classes in one column (unpaired). Table 2's ratios are the only
numbers the paper gives: every other band is the project's own, and says so.
"""
from __future__ import annotations

import math
from pathlib import Path

from ...metrics.claims import Band, Claim, Condition, Metric
from ...metrics.verdicts import NO_DIFFERENCE
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


def _get(s: pd.DataFrame, col: str, policy: str, order: str, queues: bool = False) -> float:
    """`col` of the whole scope's row of one column (NaN when absent)."""
    r = s[s["policy"] == label(policy, order, queues)]
    if "scope" in s:
        r = r[r["scope"] == "whole"]
    return float(r[col].iloc[0]) if len(r) and col in r else math.nan


# --- the claims (docs/verdicts.md) ------------------------------------------------------------------------
def _sizes(lo: float, hi: float):
    return lambda r: r["requested_number_of_resources"].between(lo, hi).to_numpy()


def _walltime(upto: float | None = None, above: float | None = None):
    def sel(r):
        wt = r["requested_time"].to_numpy(float)
        return (wt <= upto) if upto is not None else (wt > above)
    return sel


def _queue(q: str):
    def sel(r):
        pairs = list(zip(r["requested_number_of_resources"].to_numpy(float), r["requested_time"].to_numpy(float)))
        routed = {k: queue_class(*k) for k in set(pairs)}
        return np.array([routed[k] == q for k in pairs], bool)
    return sel


_LARGE_SEL = _sizes(SIZE_CLASSES[-1][1], SIZE_CLASSES[-1][2])
#: the paired windows of the idle share: the submission span cut in this many equal windows
IDLE_WINDOWS = 20


def _idle_windows(rows: pd.DataFrame) -> pd.Series:
    """The share of the node-time idle while jobs wait in each of `IDLE_WINDOWS` windows (the run's compute
    nodes: the rows' ``nodes`` column, else 96), `burstbuffer.metrics.regime.idle_while_queued_windows`."""
    from ...metrics.regime import idle_while_queued_windows
    if not {"submission_time", "starting_time", "finish_time"} <= set(rows.columns):
        return pd.Series(dtype=float)
    nodes = int(rows["nodes"].iloc[0]) if "nodes" in rows and len(rows) and rows["nodes"].iloc[0] > 0 else 96
    return idle_while_queued_windows(rows, nodes, IDLE_WINDOWS).dropna()


WAIT_LARGE = Metric(f"mean waiting time of the jobs of {LARGE} processors [h]", scale=3600, select=_LARGE_SEL)
WAIT_SHORT6 = Metric("mean waiting time of the jobs asking ≤ 6 h [h]", scale=3600, select=_walltime(upto=LONG_WALLTIME))
WAIT_CAPABILITY = Metric("mean waiting time of the jobs routed to prod-capability [h]", scale=3600,
                         select=_queue("prod-capability"))
WAIT_LARGE_SHORT = Metric(f"mean waiting time of the jobs of {LARGE} processors asking ≤ 1 h [h]", scale=3600,
                          select=lambda r: _LARGE_SEL(r) & (r["requested_time"].to_numpy(float) <= FLOOR))
WAIT_OVER12 = Metric("mean waiting time of the jobs asking > 12 h [h]", scale=3600, select=_walltime(above=CEILING))
WAIT = Metric("mean waiting time [h]", scale=3600)
MAX_WAIT = Metric("maximum waiting time [h]", stat="max", scale=3600)
IDLE = Metric(f"share of the node-time idle while jobs wait, per window (the submission span cut into {IDLE_WINDOWS})",
              stat="mean", over="windows", values=_idle_windows)

#: the paper gives no number for these: the project's reading of "favours", "helps", "hurts"
NOTICEABLE = Band(10.0, 100.0, "the paper gives no number: a change of at least a tenth, which a user would notice",
                  own=True)
DIRECTION = Band(0.0, 100.0, "the paper gives no number: any reduction beyond the noise floor", own=True)
COSTLY = Band(1.0, 100.0, "the paper gives no number ('obviously hurts utilization'): at least one point of the "
                          "node-time", own=True)
#: Table 2 (Mira, mean wait seconds): prod-short 45,243, prod-capability 278,510, prod-long 276,839
MIRA_SHORT, MIRA_CAPABILITY, MIRA_LONG = 45243.0, 278510.0, 276839.0
_FACTOR2 = "within a factor 2: KTH on 96 processors is not Mira's 49,152 nodes"
SHORT_VS_CAPABILITY = Band(MIRA_CAPABILITY / MIRA_SHORT / 2, 2 * MIRA_CAPABILITY / MIRA_SHORT,
                           f"Table 2: prod-capability waits {MIRA_CAPABILITY / MIRA_SHORT:.2f}× prod-short's; {_FACTOR2}")
SHORT_VS_LONG = Band(MIRA_LONG / MIRA_SHORT / 2, 2 * MIRA_LONG / MIRA_SHORT,
                     f"Table 2: prod-long waits {MIRA_LONG / MIRA_SHORT:.2f}× prod-short's; {_FACTOR2}")
LONG_VS_CAPABILITY = Band(1 / 1.25, 1.25, f"Table 2: prod-long's mean wait {MIRA_LONG / MIRA_CAPABILITY:.3f}× "
                                          "prod-capability's, 'almost the same' (Observation 3); a quarter either way")

_SHORT_Q = ("prod-short jobs", _queue("prod-short"))
_LONG_Q = ("prod-long jobs", _queue("prod-long"))
_CAP_Q = ("prod-capability jobs", _queue("prod-capability"))
_UPTO12 = ("jobs asking ≤ 12 h", _walltime(upto=CEILING))
_OVER12 = ("jobs asking > 12 h", _walltime(above=CEILING))


#: the paper's own words for each claim (Allcock et al. 2017; the section in each claim's source)
WORDS = {
    "wfp-large": "The fraction of the machine size/MAX_SIZE is a multiplier, so larger jobs will gain priority faster "
                 "and will tend toward the top of the priority which meets the goal of enabling large jobs to run.",
    "wfp-no-starvation": "This time factor also provides an anti-starvation factor for jobs in the queue, ensuring that a job "
                         "will eventually reach the front of the line and run.",
    "wfp-walltime": "The longer the requested wall time, the longer the user should be willing to wait for it to run.",
    "queues-capability": "These jobs are small and long and so can block larger jobs for a significant length of time […] By "
                         "restricting them to 1/3 of the machine, we guarantee that we have at least one 32K partition, and "
                         "all of its sub-partitions, available to the prod-capability queue.",
    "queue-waits": "Observation 3 In Table 2, jobs in prod-capability queue have higher priority than jobs in prod-long "
                   "queue. Jobs in prod-capability queue on average used more core hours than jobs in prod-long queue, "
                   "their mean wait times are almost the same.",
    "drain-cost": "Cobalt will then begin to “drain” those resources to make room for the jobs, backfilling jobs where "
                  "it can. This draining obviously hurts utilization",
    "drain-capability": "This draining obviously hurts utilization, but supports the mission to run large-scale “capability "
                        "scale” jobs.",
    "clamp-floor": "The one-hour floor was placed due to very similar scenarios where a large, short job would get to "
                   "the front of the queue very rapidly. […] resulting in a very unfavorable “sawtooth” drain pattern, "
                   "causing a severe impact to utilization. The ceiling and the floor corrected these two issues.",
    "clamp-ceiling": "Placing the 12 hour ceiling allowed for a good turnaround on these longer jobs without unduly "
                     "favoring them.",
}


def _per_policy(make) -> tuple[Condition, ...]:
    return tuple(c for p in POLICIES for c in make(p))


CLAIMS: tuple[Claim, ...] = (
    Claim("wfp-large", "WFP favours large jobs: its size / MAX_SIZE factor makes them gain priority faster and "
          "tend to the top, to run capability jobs (here: jobs of 20-96 processors wait less under wfp than "
          "under fcfs order)", "§4, eq. 1 and its concepts", paper_value="qualitative",
          words=WORDS["wfp-large"],
          conditions=_per_policy(lambda p: [Condition(label(p, "wfp", False), label(p, "fcfs", False), WAIT_LARGE,
                                                      NOTICEABLE)])),
    Claim("wfp-no-starvation", "Eq. 2's time term is an anti-starvation factor: a job eventually reaches the "
          "front (here: wfp's longest wait is below that of the large order, the same size preference "
          "without the time term)", "§4, eq. 2", paper_value="qualitative",
          words=WORDS["wfp-no-starvation"],
          conditions=_per_policy(lambda p: [Condition(label(p, "wfp", False), label(p, "large", False), MAX_WAIT,
                                                      DIRECTION)])),
    Claim("wfp-walltime", "The longer the requested walltime, the longer a job should be willing to wait "
          "(here: the jobs asking at most 6 h wait less under wfp than under fcfs order)", "§4, eq. 2",
          paper_value="qualitative",
          words=WORDS["wfp-walltime"],
          conditions=_per_policy(lambda p: [Condition(label(p, "wfp", False), label(p, "fcfs", False), WAIT_SHORT6,
                                                      NOTICEABLE)])),
    Claim("queues-capability", "Confining prod-long (small, long jobs) to a third of the machine keeps room for "
          "prod-capability jobs (here: they wait less with the Mira-like queues than without, under wfp)",
          "§3 (prod-long)", paper_value="qualitative",
          words=WORDS["queues-capability"],
          conditions=_per_policy(lambda p: [Condition(label(p, "wfp", True), label(p, "wfp", False), WAIT_CAPABILITY,
                                                      NOTICEABLE)])),
    Claim("queue-waits", "Table 2 is a statistic of Mira's job log (April 2013 - January 2017) per queue, not a "
          "policy comparison: prod-short jobs waited far less than prod-capability and prod-long jobs, whose mean waits "
          "are almost the same (here: the same statistic of the simulated log of a run with the Mira-like queues)",
          "§5.1, Table 2 (Mira's log), Observation 3", paper_value="Mira: 45,243 s, 278,510 s, 276,839 s",
          words=WORDS["queue-waits"],
          conditions=_per_policy(lambda p: [
              Condition(label(p, "wfp", True), label(p, "wfp", True), WAIT, SHORT_VS_CAPABILITY, effect="ratio",
                        treatment_jobs=_SHORT_Q, control_jobs=_CAP_Q),
              Condition(label(p, "wfp", True), label(p, "wfp", True), WAIT, SHORT_VS_LONG, effect="ratio",
                        treatment_jobs=_SHORT_Q, control_jobs=_LONG_Q),
              Condition(label(p, "wfp", True), label(p, "wfp", True), WAIT, LONG_VS_CAPABILITY, effect="ratio",
                        asserts=NO_DIFFERENCE, treatment_jobs=_LONG_Q, control_jobs=_CAP_Q)])),
    Claim("drain-cost", "Cobalt drains the resources selected for the top-priority job, backfilling where it can; "
          "this draining hurts utilisation (here: under wfp, filler, which reserves nothing, leaves less of the "
          "node-time idle while jobs wait than the EASY reservation of fcfs-bb / sjf-bb)",
          "§4 (Cobalt's draining)", paper_value="qualitative",
          words=WORDS["drain-cost"],
          conditions=_per_policy(lambda p: [Condition(DRAIN_FREE, label(p, "wfp", False), IDLE, COSTLY,
                                                      effect="points")])),
    Claim("drain-capability", "… but draining supports the mission to run capability-scale jobs (here: under wfp, "
          f"jobs of {LARGE} processors wait less with the reservation than under filler)",
          "§4 (Cobalt's draining)", paper_value="qualitative",
          words=WORDS["drain-capability"],
          conditions=_per_policy(lambda p: [Condition(label(p, "wfp", False), DRAIN_FREE, WAIT_LARGE, NOTICEABLE)])),
    Claim("clamp-floor", "Without the one-hour floor of score_wall_time a large, short job gets to the front very "
          "rapidly, and the resulting drain pattern severely hurts utilisation; the floor corrects it (here: "
          f"without it, jobs of {LARGE} processors asking ≤ 1 h wait less, and with it less node-time is idle "
          "while jobs wait)", "§4.3.4", paper_value="qualitative",
          words=WORDS["clamp-floor"],
          conditions=_per_policy(lambda p: [
              Condition(clamp_label(p, "nofloor"), label(p, "wfp", False), WAIT_LARGE_SHORT, NOTICEABLE),
              Condition(label(p, "wfp", False), clamp_label(p, "nofloor"), IDLE, COSTLY, effect="points")])),
    Claim("clamp-ceiling", "The 12-hour ceiling of score_wall_time gives the longer jobs a good turnaround without "
          "unduly favouring them (here: jobs asking > 12 h wait less with the ceiling than without, and no less "
          "than the jobs asking ≤ 12 h)", "§4.3.4", paper_value="qualitative",
          words=WORDS["clamp-ceiling"],
          conditions=_per_policy(lambda p: [
              Condition(label(p, "wfp", False), clamp_label(p, "noceiling"), WAIT_OVER12, NOTICEABLE),
              Condition(label(p, "wfp", False), label(p, "wfp", False), WAIT, DIRECTION,
                        treatment_jobs=_UPTO12, control_jobs=_OVER12)])),
)


#: Mira (Allcock et al. §2-3): 49,152 nodes (MAX_SIZE, eq. 1), allocated only as partitions of whole 512-node
#: midplanes wired by the torus ("a 96 allocation unit system"), prod-long confined to a third of the machine
MIRA_NODES = 49152
#: whether this simulator allocates partitions (it gives a job any set of free nodes)
PARTITIONS = False


def machine_check(nodes: list[int]):
    """The regime check of Allcock et al.'s claims: a Mira-like machine — `MIRA_NODES` compute nodes (`nodes`: those
    of each run's platform) allocated as midplane partitions (`PARTITIONS`). It fails on KTH's 96 processors, and on
    any platform of this simulator: every claim of the study is then *out of regime* (docs/verdicts.md)."""
    from ...metrics.claims import RegimeCheck
    ok = nodes == [MIRA_NODES] and PARTITIONS
    return RegimeCheck("machine", ok, f"{', '.join(map(str, nodes)) or 'unknown'} compute nodes, any set of nodes "
                                      "per job (no partitions)",
                       f"Mira: {MIRA_NODES:,} nodes allocated as partitions of 512-node midplanes (§2-3), where the "
                       "queues, eq. 1's size / MAX_SIZE and the drains were measured")


def regime(d) -> list:
    """`machine_check` on the compute nodes of the study's runs (`d`: `StudyData`)."""
    from .bbsched_tables import read_capacity
    nodes = sorted({read_capacity(Path(s.out), (0, 0))[0] for s in d.specs
                    if s.scope != "gantt" and "error" not in d.results.get(s.key, {"error": 1})})
    return [machine_check(nodes)]


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
    sections=sections, regime=regime,
    paper="Allcock et al. 2017",
)
