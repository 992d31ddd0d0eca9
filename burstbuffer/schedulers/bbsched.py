"""BBSched and its baselines: a window selection followed by EASY backfilling (Fan et al. 2019 §3-4.3).

Every policy here is a `WindowScheduler`; at each scheduling iteration (`decide`, once per distinct
decision time for the starvation count) it does, on the availability profile:

1. **Window** (§3.1): the first ``window`` queued jobs in the base order (`_base_order`: the policy's
   ``order`` option, `orders.ORDERS`; default FCFS, i.e. submission order; §3 names FCFS or WFP).
2. **Starvation bound** (§3.1): a job that is in the window at more than ``starvation_bound``
   iterations is *forced*: forced jobs start first, in window order, if they fit now; the first forced
   job that does not fit gets the head reservation (processors + BB at its earliest time) and waits.
3. **Selection** (§3.2 or a baseline of §4.3) among the other window jobs that fit now (each alone,
   around the reservation if any): nodes nᵢ and total BB bᵢ = res × bb per node, capacities the free
   nodes and the free BB *pooled over the BB nodes* at `now`. When all candidates fit together the
   choice is all of them (the only Pareto solution; no solver runs).
4. **Placement**: the selected jobs start in window order, each placed by the profile's rule (lowest
   free processors; each node's bytes on one BB node, own chassis → group → any, docs/platform.md). A selected
   job that the placement cannot host — the pooled sums fit but the bytes do not fit the BB nodes'
   free space — is not started this iteration (it stays queued, keeps its place and starvation count)
   and is counted in the decision record (``dropped``); its room is left to step 5.
5. **EASY backfilling** with processor + BB reservation (as fcfs-bb, Kopanski & Rzadca 2021 Algorithm 1): jobs
   in base order start while they fit; the first that does not becomes the head and gets a processor
   + BB reservation at its earliest time; the others start if they fit now around it.

Policies (registry names): ``bbsched`` (BBSched's GA + the §3.2.4 rule), ``bbsched-exact`` (the same
rule on the true Pareto set, window ≤ 20), ``bbsched-nsga2`` (pymoo NSGA-II + the same rule, a labelled
alternative), ``bbsched-naive`` (no selection: step 5 alone, i.e. fcfs-bb plus the starvation bound;
the paper's Slurm-like baseline), ``weighted`` (50/50), ``weighted-cpu`` (80/20), ``weighted-bb``
(20/80), ``constrained-cpu``, ``constrained-bb``, ``bin-packing``. See docs/bbsched.md.
"""
from __future__ import annotations

import csv
import os
from dataclasses import asdict, dataclass, fields

from ..lazy import lazy
from ..platforms.model import Platform
from .base import Job, Start
from .limits import DEFAULT_MUTATION_RATE, EXACT_LIMIT, GA_LIMIT
from .options import Bool, Choice, Number, Option
from .profile import Fit
from .profile_scheduler import ORDER_OPTIONS, ProfileScheduler

#: imported at a policy's first decision: declaring the policies costs no numpy
np = lazy("numpy", globals(), "np")
moo = lazy("burstbuffer.schedulers.moo", globals(), "moo")

__all__ = ["BBSched", "BBSchedExact", "BBSchedNSGA2", "BinPacking", "DecisionRecord", "Naive", "SCORES", "Scored",
           "WindowScheduler"]

#: the single objectives of `Scored` (Fan et al. 2019 §4.3; `moo.best_subset`)
SCORES = ("weighted", "nodes", "bb")


@dataclass
class DecisionRecord:
    """One scheduling iteration of a window policy (written to ``decisions.csv``).

    Attributes: time [s]; queued, window, forced (jobs); forced_started; candidates (window jobs that fit
    now alone); free_nodes, free_bb [bytes] at the selection; solver ("none", "all", "ga", "exact",
    "nsga2", "weighted", …); front (points of the front the decision used, 0 without one); selected,
    selected_nodes, selected_bb [bytes] (the chosen set); started (of them), dropped (placement failures);
    gd (generational distance of the approximate front to the true one, Fan et al. 2019 §3.2.3, when recorded,
    else NaN); true_front (points of the true front, 0 if not computed); backfilled (started by step 5).
    """

    time: float
    queued: int
    window: int
    forced: int = 0
    forced_started: int = 0
    candidates: int = 0
    free_nodes: int = 0
    free_bb: int = 0
    solver: str = "none"
    front: int = 0
    selected: int = 0
    selected_nodes: int = 0
    selected_bb: int = 0
    started: int = 0
    dropped: int = 0
    gd: float = float("nan")
    true_front: int = 0
    backfilled: int = 0


def _positive_int(name: str, v, low: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    return int(v)


class WindowScheduler(ProfileScheduler):
    """Base of the window policies (module docstring; Fan et al. 2019 §3.1, §4.3).

    Args (besides `ProfileScheduler`'s; their ranges and meanings: `declared_options`, their defaults: the
    signature): window (w), starvation_bound (iterations), record_gd (for approximate solvers with ≤ EXACT_LIMIT
    candidates: also compute the true front and record the GD per decision). Raises ValueError on bad values.

    ``decisions`` holds one `DecisionRecord` per iteration with a non-empty window; `write_outputs`
    writes them as ``decisions.csv``.
    """

    name = "window"
    declared_options = ProfileScheduler.declared_options + ORDER_OPTIONS + (
        Option("window", Number(1, integer=True),
               f"the first W queued jobs form the window (bbsched, bbsched-nsga2: <= {GA_LIMIT}; bbsched-exact: "
               f"<= {EXACT_LIMIT})", flag="--window", metavar="W"),
        Option("starvation_bound", Number(0, integer=True),
               "a job in the window at more than K scheduling iterations must start", flag="--starvation-bound",
               metavar="K"),
        Option("record_gd", Bool(),
               "record per decision the generational distance of the GA's front to the true one (decisions.csv; "
               "windows of at most 20 candidates)", flag="--record-gd"),
    )
    #: approximate solver (GD can be recorded)
    approximate = False
    #: the widest window the solver takes (None: any)
    window_limit: int | None = None

    def __init__(self, platform: Platform, *, seed: int = 0, window: int = 20, starvation_bound: int = 50,
                 record_gd: bool = False, **kw):
        super().__init__(platform, seed=seed, **kw)
        self.window = _positive_int("window", window)
        self.starvation_bound = _positive_int("starvation_bound", starvation_bound, 0)
        self.record_gd = bool(record_gd)
        why = type(self).options_conflict({"window": self.window})
        if why:
            raise ValueError(why)
        self._age: dict[str, int] = {}
        self._last_time: float | None = None
        self._calls_at_time = 0
        self.decisions: list[DecisionRecord] = []

    @classmethod
    def options_conflict(cls, options: dict) -> str | None:
        w = options.get("window")
        if cls.window_limit is not None and isinstance(w, int) and w > cls.window_limit:
            return f"window must be <= {cls.window_limit} for {cls.name}, got {w}"
        return super().options_conflict(options)

    # ------------------------------------------------------------------ hooks
    def _base_order(self, now: float) -> list[Job]:
        """The queue in the base order at `now`: the ``order`` option (`ProfileScheduler._ordered`; default
        fcfs, submission order; Fan et al. 2019 §3: FCFS or WFP). It forms the window and steps 2 and 5."""
        return self._ordered(now)

    def _select(self, nodes: np.ndarray, bb: np.ndarray, cap_nodes: int, cap_bb: int,
                rec: DecisionRecord) -> np.ndarray:
        """The selection (k,) bool among the candidates (window order); sets ``rec.solver``/``rec.front``."""
        raise NotImplementedError

    def _rng(self) -> np.random.Generator:
        """A generator for one solver call: seeded from (run seed, decision time, call number at that
        time), so a decision does not depend on how many solver calls came before (a run is reproducible
        bit for bit, and stays so if a simulator splits one instant's events over two messages)."""
        bits = int(np.float64(self._last_time).view(np.uint64))
        self._calls_at_time += 1
        return np.random.default_rng([self.seed & 0xFFFFFFFF, bits & 0xFFFFFFFF, bits >> 32, self._calls_at_time])

    # ------------------------------------------------------------------ the iteration
    def _staging_unsupported(self) -> str | None:
        """The window policies choose jobs by their resources now: the staged lifecycle (``staging="bb-first"``)
        is not supported; they hold a job's nodes from stage-in to stage-out on the three-phase model."""
        return "a window"

    def _start(self, job: Job, fit: Fit, now: float) -> Start:
        self._age.pop(job.id, None)
        return super()._start(job, fit, now)

    def job_ended(self, job_id: str, now: float) -> None:
        self._age.pop(job_id, None)
        super().job_ended(job_id, now)

    def _schedule(self, now: float) -> list[Start]:
        new_time = now != self._last_time
        if new_time:
            self._last_time = now
            self._calls_at_time = 0
        order = self._base_order(now)
        window = order[: self.window]
        if new_time:
            for j in window:
                self._age[j.id] = self._age.get(j.id, 0) + 1
        rec = DecisionRecord(now, len(order), len(window))
        starts: list[Start] = []
        head: Job | None = None
        forced = [j for j in window if self._age.get(j.id, 0) > self.starvation_bound]
        rec.forced = len(forced)
        for j in forced:                                              # step 2
            fit = self._fits_now(j, now)
            if fit is not None:
                starts.append(self._start(j, fit, now))
            elif head is None:
                head = j
                self._reserve(j, now, bb=True)
        rec.forced_started = len(starts)
        starts += self._window_selection(window, head, now, rec)    # steps 3-4
        n_sel = len(starts)
        queue = [j for j in order if j.id in self._queue]
        if head is None:                                              # step 5
            for j in queue:
                fit = self._fits_now(j, now)
                if fit is None:
                    head = j
                    break
                starts.append(self._start(j, fit, now))
            if head is not None:
                self._reserve(head, now, bb=True)
        if head is not None:
            starts += self._backfill([j for j in queue if j is not head and j.id in self._queue], now)
            self._unreserve()
        rec.backfilled = len(starts) - n_sel
        self.decisions.append(rec)
        return starts

    def _window_selection(self, window: list[Job], head: Job | None, now: float,
                          rec: DecisionRecord) -> list[Start]:
        cands = [j for j in window if j.id in self._queue and j is not head
                 and self._fits_now(j, now) is not None]
        rec.candidates = len(cands)
        if not cands:
            return []
        free_nodes = self.profile.nb_free_at(now)
        free_bb = int(sum(self.profile.free_at(now)[1].values()))
        rec.free_nodes, rec.free_bb = free_nodes, free_bb
        nodes = np.array([j.res for j in cands], np.int64)
        bb = np.array([j.bb_total for j in cands], np.int64)
        if nodes.sum() <= free_nodes and bb.sum() <= free_bb:
            x = np.ones(len(cands), bool)
            rec.solver, rec.front = "all", 1
        else:
            x = self._select(nodes, bb, free_nodes, free_bb, rec)
        rec.selected = int(x.sum())
        rec.selected_nodes, rec.selected_bb = int(nodes[x].sum()), int(bb[x].sum())
        starts = []
        for j in (c for c, sel in zip(cands, x) if sel):
            fit = self._fits_now(j, now)
            if fit is None:
                rec.dropped += 1
                continue
            starts.append(self._start(j, fit, now))
        rec.started = len(starts)
        return starts

    # ------------------------------------------------------------------ outputs
    def write_outputs(self, folder) -> None:
        """Write ``decisions.csv`` (one row per `DecisionRecord`) into `folder`, atomically."""
        path = os.path.join(str(folder), "decisions.csv")
        tmp = path + ".tmp"
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=[fl.name for fl in fields(DecisionRecord)])
            w.writeheader()
            for r in self.decisions:
                w.writerow(asdict(r))
        os.replace(tmp, path)


class Naive(WindowScheduler):
    """`bbsched-naive`: the paper's Baseline (§4.3, Slurm-like): jobs start in queue order until nodes or
    BB run out, then EASY backfilling (processor + BB reservation); with the starvation bound."""

    name = "bbsched-naive"

    def _window_selection(self, window, head, now, rec) -> list[Start]:
        """No selection: step 3 is skipped (step 5 alone)."""
        return []


class _FrontPolicy(WindowScheduler):
    """A Pareto-front solver + the §3.2.4 decision rule (`moo.choose`)."""

    solver = "?"

    def _front(self, nodes, bb, cap_nodes, cap_bb) -> moo.Front:
        raise NotImplementedError

    def _select(self, nodes, bb, cap_nodes, cap_bb, rec):
        front = self._front(nodes, bb, cap_nodes, cap_bb)
        rec.solver, rec.front = self.solver, len(front)
        if self.approximate and self.record_gd and len(nodes) <= EXACT_LIMIT:
            true = moo.exact_front(nodes, bb, cap_nodes, cap_bb)
            rec.true_front = len(true)
            rec.gd = moo.generational_distance(front.points, true.points, self.platform.nb_compute,
                                               self.platform.total_bb)
        return front.sets[moo.choose(front, self.platform.nb_compute, self.platform.total_bb)]


class BBSched(_FrontPolicy):
    """`bbsched` (Fan et al. 2019 §3): BBSched's GA (`moo.ga_front`) + the §3.2.4 decision rule.

    Options (`declared_options`; defaults: the signature): population (P), generations (G), mutation_rate (p_m
    per gene), window ≤ GA_LIMIT, and the `WindowScheduler` ones."""

    name = "bbsched"
    declared_options = WindowScheduler.declared_options + (
        Option("population", Number(2, integer=True), "GA population P", flag="--population", metavar="P"),
        Option("generations", Number(1, integer=True), "GA generations G", flag="--generations", metavar="G"),
        Option("mutation_rate", Number(0, 1), "GA bit-flip probability per gene", flag="--mutation-rate",
               metavar="P_M"),
    )
    solver = "ga"
    approximate = True
    window_limit = GA_LIMIT

    def __init__(self, platform: Platform, *, seed: int = 0, population: int = 20, generations: int = 500,
                 mutation_rate: float = DEFAULT_MUTATION_RATE, **kw):
        super().__init__(platform, seed=seed, **kw)
        self.population = _positive_int("population", population, 2)
        self.generations = _positive_int("generations", generations, 0)
        if isinstance(mutation_rate, bool) or not isinstance(mutation_rate, (int, float)) \
                or not 0.0 <= mutation_rate <= 1.0:
            raise ValueError(f"mutation_rate must be a probability in [0, 1], got {mutation_rate!r}")
        self.mutation_rate = float(mutation_rate)

    def _front(self, nodes, bb, cap_nodes, cap_bb):
        return moo.ga_front(nodes, bb, cap_nodes, cap_bb, self._rng(), population=self.population,
                            generations=self.generations, mutation_rate=self.mutation_rate)


class BBSchedNSGA2(BBSched):
    """`bbsched-nsga2`: pymoo's NSGA-II instead of BBSched's GA (same options), + the §3.2.4 rule.
    A labelled alternative: NSGA-II's crowding-distance survival is not BBSched's age rule."""

    name = "bbsched-nsga2"
    solver = "nsga2"

    def _front(self, nodes, bb, cap_nodes, cap_bb):
        return moo.nsga2_front(nodes, bb, cap_nodes, cap_bb, self._rng(), population=self.population,
                               generations=self.generations, mutation_rate=self.mutation_rate)


class BBSchedExact(_FrontPolicy):
    """`bbsched-exact`: the §3.2.4 rule on the true Pareto set (`moo.exact_front`; window ≤ 20)."""

    name = "bbsched-exact"
    solver = "exact"
    window_limit = EXACT_LIMIT

    def _front(self, nodes, bb, cap_nodes, cap_bb):
        return moo.exact_front(nodes, bb, cap_nodes, cap_bb)


class Scored(WindowScheduler):
    """A single-objective baseline (Fan et al. 2019 §4.3) solved exactly: enumeration up to EXACT_LIMIT
    candidates, scipy's MILP (HiGHS) above. Presets (`registry`): ``weighted`` (score "weighted", 50/50),
    ``weighted-cpu`` (80/20), ``weighted-bb`` (20/80), ``constrained-cpu`` (score "nodes": node usage under the
    node and BB capacities; ties: nearest the front of the window, BB usage ignored), ``constrained-bb``
    (score "bb": BB usage under the capacities).

    Args (besides `WindowScheduler`'s): score ("weighted", "nodes" or "bb"), w_nodes (the weight of node usage
    in the weighted score, in [0, 1]; BB usage weighs 1 − w_nodes). Raises ValueError on bad values."""

    name = "scored"
    declared_options = WindowScheduler.declared_options + (
        Option("score", Choice(SCORES), "the §4.3 objective: weighted node and BB usage, node usage or BB usage"),
        Option("w_nodes", Number(0, 1), "weight of node usage in the weighted score (BB usage: 1 - w_nodes)"),
    )

    def __init__(self, platform: Platform, *, seed: int = 0, score: str = "weighted", w_nodes: float = 0.5, **kw):
        super().__init__(platform, seed=seed, **kw)
        if score not in SCORES:
            raise ValueError(f"unknown score {score!r}; valid: {', '.join(SCORES)}")
        if isinstance(w_nodes, bool) or not isinstance(w_nodes, (int, float)) or not 0.0 <= w_nodes <= 1.0:
            raise ValueError(f"w_nodes must be in [0, 1], got {w_nodes!r}")
        self.score, self.w_nodes = score, w_nodes

    def _select(self, nodes, bb, cap_nodes, cap_bb, rec):
        args = (nodes, bb, cap_nodes, cap_bb, self.score, self.w_nodes, self.platform.nb_compute,
                self.platform.total_bb)
        if len(nodes) <= EXACT_LIMIT:
            rec.solver = f"{self.score}-enum"
            return moo.best_subset(*args)
        rec.solver = f"{self.score}-milp"
        return moo.milp_best(*args)


class BinPacking(WindowScheduler):
    """`bin-packing`: the highest alignment score first, repeatedly (§4.3 Bin_Packing; `moo.bin_packing`)."""

    name = "bin-packing"

    def _select(self, nodes, bb, cap_nodes, cap_bb, rec):
        rec.solver = "bin-packing"
        return moo.bin_packing(nodes, bb, cap_nodes, cap_bb, self.platform.nb_compute, self.platform.total_bb)
