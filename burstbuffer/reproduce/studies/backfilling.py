"""Study ``backfilling``: EASY backfilling's folklore, after Casanova's lecture slides "Job Scheduling"
(ICS 632, Principles of High Performance Computing): slide 24 (EASY favours small long jobs and harms large
short ones), slides 31-32 (inflated runtime estimates help), slide 34 (lookahead helps a little).

Columns (`VARIANTS`), every one under the alloc-only job model (the slides' results come from trace-driven
simulations, where a job's run time does not depend on its I/O), on the selected KTH workload:

- ``fcfs``: first come, first served, no backfilling;
- ``easy``: EASY backfilling — ``fcfs-bb``: one reservation, for the head job (processors and BB, so that
  the reservation holds on this BB-requesting workload; ``fcfs-easy`` reserves processors only and its head
  job can be overtaken through the BB);
- ``conservative``: conservative backfilling, every queued job reserved (``fcfs-bb`` with
  ``reservation_depth = all``);
- ``easy/x2``, ``easy/x3``: EASY seeing every requested walltime × 2 and × 3 (``walltime_factor``; the jobs
  still run, and are killed, under their own walltime);
- ``window/fcfs`` and ``window/lookahead``: the window policies of `burstbuffer.schedulers.bbsched` without
  and with a lookahead — ``bbsched-naive`` (the first 20 queued jobs started in order, then EASY) and
  ``constrained-cpu`` (the subset of those 20 that uses the most nodes now, solved exactly, then EASY): the
  same framework with and without "accumulating jobs and scheduling them together".

Job classes (`class_means`), on the jobs every column started, by processors requested (small: at most 4 of
96, large: at least 20, Allcock et al.'s capability line; the orders study's size classes) and requested
walltime (short: at most 1 h; long: above) — the estimate EASY sees. KTH-1000: 463 small short, 75 small
long, 100 large short, 52 large long jobs.
"""
from __future__ import annotations

import math

from ...lazy import lazy
from ...metrics.claims import AllHold, Claim, Measurement, Within
from ..study import Study, StudyData, Variant

np = lazy("numpy")  # numpy and pandas: imported on first use (burstbuffer.lazy)
pd = lazy("pandas")

MODEL = "alloc-only"
FCFS, EASY, CONSERVATIVE = "fcfs", "easy", "conservative"
X2, X3 = "easy/x2", "easy/x3"
NAIVE, LOOKAHEAD = "window/fcfs", "window/lookahead"
VARIANTS = (
    Variant(FCFS, "fcfs", model=MODEL),
    Variant(EASY, "fcfs-bb", model=MODEL),
    Variant(CONSERVATIVE, "fcfs-bb", {"reservation_depth": "all"}, model=MODEL),
    Variant(X2, "fcfs-bb", {"walltime_factor": 2}, model=MODEL),
    Variant(X3, "fcfs-bb", {"walltime_factor": 3}, model=MODEL),
    Variant(NAIVE, "bbsched-naive", model=MODEL),
    Variant(LOOKAHEAD, "constrained-cpu", model=MODEL),
)
#: (name, lowest, highest processors requested) of the small and large classes (96 processors)
SMALL, LARGE = (1, 4), (20, 10 ** 9)
#: requested walltime [s] up to which a job is short
SHORT = 3600.0
CLASSES = ("small_short", "small_long", "large_short", "large_long")
#: a class is favoured / harmed when its mean wait differs by at least this much (relative)
MARGIN = 0.05
#: "helps", "better": at least this much lower (relative; a rounding difference is no help)
IMPROVE = 0.01
#: "a little bit" (slide 34): a lookahead's improvement of the mean bounded slowdown in [1, 25] %
LITTLE = (1.0, 25.0)


def class_means(jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per (scope, policy) of the tidy per-job table `jobs`: ``wait_h_<class>`` [h] and
    ``bsld_<class>`` (mean waiting time and bounded slowdown) and ``n_<class>`` for each of `CLASSES` and
    ``all``, over the jobs every policy of the scope started (``common``: how many;
    `burstbuffer.metrics.tables.class_means`)."""
    from ...metrics.tables import class_means as per_class

    def classify(sub: pd.DataFrame) -> dict:
        res = sub["requested_number_of_resources"].to_numpy(float)
        wt = sub["requested_time"].to_numpy(float)
        small, large = (res >= SMALL[0]) & (res <= SMALL[1]), (res >= LARGE[0]) & (res <= LARGE[1])
        short = wt <= SHORT
        return {"small_short": small & short, "small_long": small & ~short, "large_short": large & short,
                "large_long": large & ~short, "all": np.ones(len(sub), bool)}
    return per_class(jobs, classify)


def claim_rows(d: StudyData) -> pd.DataFrame:
    """`class_means` of the whole scope: what the claims judge."""
    return class_means(d.jobs[d.jobs["scope"] == "whole"])


# --- measures (rows of `claim_rows`) --------------------------------------------------------------------
def _v(s: pd.DataFrame, col: str, lab: str) -> float:
    r = s[s["policy"] == lab]
    return float(r[col].iloc[0]) if len(r) and col in r else math.nan


def _have(s: pd.DataFrame, *labs: str) -> bool:
    return all((s["policy"] == lab).any() for lab in labs) if len(s) else False


def _ch(a: float, b: float) -> str:
    """a relative to b, signed percentage."""
    return f"{100 * (a / b - 1):+.0f} %" if b else "n/a (0 h)"


def _asymmetry(cls: str, favoured: bool):
    """The measure of slide 24 for class `cls`: EASY `favoured` (or harmed) it. Two conditions: vs conservative
    backfilling (the slide's context), the class's mean wait under EASY at least `MARGIN` lower (higher);
    vs FCFS, EASY's relative wait reduction for the class larger (smaller) than over all jobs."""
    def measure(s: pd.DataFrame) -> Measurement | None:
        if not _have(s, EASY) or not (_have(s, CONSERVATIVE) or _have(s, FCFS)):
            return None
        e = _v(s, f"wait_h_{cls}", EASY)
        conds, text, how = [], [], []
        if _have(s, CONSERVATIVE):
            c = _v(s, f"wait_h_{cls}", CONSERVATIVE)
            conds.append(e <= (1 - MARGIN) * c < c if favoured else e >= (1 + MARGIN) * c > 0)
            text.append(f"{cls.replace('_', ' ')} jobs wait {e:.3g} h under EASY, {c:.3g} h under conservative")
            how.append(f"vs conservative {_ch(e, c)}")
        if _have(s, FCFS):
            f, ea, fa = _v(s, f"wait_h_{cls}", FCFS), _v(s, "wait_h_all", EASY), _v(s, "wait_h_all", FCFS)
            rc, ra = 1 - e / f if f else math.nan, 1 - ea / fa if fa else math.nan
            conds.append(bool(rc > ra) if favoured else bool(rc < ra))
            text.append(f"{f:.3g} h under FCFS (all jobs: EASY {ea:.3g} h, FCFS {fa:.3g} h)")
            how.append(f"EASY vs FCFS: {-100 * rc:+.0f} % for the class, {-100 * ra:+.0f} % for all jobs")
        return Measurement("; ".join(text), "; ".join(how) + f"; {sum(conds)} of {len(conds)} conditions hold",
                           count=(sum(map(int, conds)), len(conds)))
    return measure


def estimates_x2(s: pd.DataFrame) -> Measurement | None:
    """Two conditions: EASY with the estimates × 2 lowers the mean waiting time and the mean bounded slowdown
    by at least `IMPROVE` (relative) vs the user's estimates."""
    if not _have(s, EASY, X2):
        return None
    pairs = [(name, _v(s, col, X2), _v(s, col, EASY)) for name, col in (("wait", "wait_h_all"), ("bounded slowdown", "bsld_all"))]
    return Measurement("; ".join(f"mean {n}: {a:.3g} with estimates × 2, {b:.3g} with the user's" for n, a, b in pairs),
                       "; ".join(f"{n} {_ch(a, b)}" for n, a, b in pairs) + f" (help needs ≤ −{100 * IMPROVE:g} %)",
                       count=(sum(a <= (1 - IMPROVE) * b for _, a, b in pairs), len(pairs)))


def estimates_x3_everybody(s: pd.DataFrame) -> Measurement | None:
    """One condition per job class (`CLASSES`): EASY with the estimates × 3 lowers the class's mean bounded
    slowdown by at least `IMPROVE` vs the user's estimates ("everybody's life better")."""
    if not _have(s, EASY, X3):
        return None
    got = [(c, _v(s, f"bsld_{c}", X3), _v(s, f"bsld_{c}", EASY)) for c in CLASSES]
    got = [(c, a, b) for c, a, b in got if a == a and b == b]
    if not got:
        return None
    return Measurement("mean bounded slowdown with estimates × 3 / the user's: "
                       + "; ".join(f"{c.replace('_', ' ')} {a:.3g} / {b:.3g}" for c, a, b in got),
                       "; ".join(f"{c.replace('_', ' ')} {_ch(a, b)}" for c, a, b in got)
                       + f" (better needs ≤ −{100 * IMPROVE:g} %)",
                       count=(sum(a <= (1 - IMPROVE) * b for _, a, b in got), len(got)))


def lookahead_helps(s: pd.DataFrame) -> Measurement | None:
    """value: the lookahead's improvement of the mean bounded slowdown over the same window started in order [%]."""
    if not _have(s, NAIVE, LOOKAHEAD):
        return None
    a, b = _v(s, "bsld_all", LOOKAHEAD), _v(s, "bsld_all", NAIVE)
    wa, wb = _v(s, "wait_h_all", LOOKAHEAD), _v(s, "wait_h_all", NAIVE)
    imp = 100 * (1 - a / b) if b else math.nan
    return Measurement(f"mean bounded slowdown {a:.3g} with the lookahead, {b:.3g} without (mean wait {wa:.3g} h, "
                       f"{wb:.3g} h)", f"{imp:+.1f} % better (a little: {LITTLE[0]:g} to {LITTLE[1]:g} %)", value=imp)


CLAIMS: tuple[Claim, ...] = (
    Claim("easy-small-long", "EASY favours small long jobs (here: jobs of at most 4 processors asking more than "
          f"1 h wait at least {100 * MARGIN:g} % less under EASY than under conservative backfilling, and gain more "
          "from EASY over FCFS than the average job)", "slide 24 (Conservative Backfilling)", "whole",
          (EASY, CONSERVATIVE, FCFS), "qualitative", _asymmetry("small_long", True), AllHold(),
          "easy and conservative or fcfs"),
    Claim("easy-large-short", "EASY harms large short jobs (here: jobs of at least 20 processors asking at most 1 h "
          f"wait at least {100 * MARGIN:g} % longer under EASY than under conservative backfilling, and gain less "
          "from EASY over FCFS than the average job)", "slide 24 (Conservative Backfilling)", "whole",
          (EASY, CONSERVATIVE, FCFS), "qualitative", _asymmetry("large_short", False), AllHold(),
          "easy and conservative or fcfs"),
    Claim("estimates-x2", "It is possible to improve performance by multiplying the user estimates by 2 (here: "
          "EASY's mean wait and mean bounded slowdown, each at least 1 % lower)", "slide 32 (Another Result)",
          "whole", (EASY, X2), "qualitative", estimates_x2, AllHold(), "easy and easy/x2"),
    Claim("estimates-x3", "Overestimating by 3 would make everybody's life better (here: EASY with the user's "
          "estimates × 3 — the slide multiplies the actual run time, which the policy does not know — lowers the "
          "mean bounded slowdown of every job class: small / large × short / long)", "slide 31 (Sample results)",
          "whole", (EASY, X3), "qualitative", estimates_x3_everybody, AllHold(), "easy and easy/x3"),
    Claim("lookahead", "Accumulating jobs and scheduling them together (lookahead, by dynamic programming) has been "
          "shown to improve performance a little bit (here: the window of 20 packed for node usage vs started in "
          "order: mean bounded slowdown 1 to 25 % lower)", "slide 34 (Lookahead idea)", "whole",
          ("bbsched-naive", "constrained-cpu"), "a little", lookahead_helps,
          Within(sum(LITTLE) / 2, (LITTLE[1] - LITTLE[0]) / 2, LITTLE[1]), "window/fcfs and window/lookahead"),
)


def sections(d: StudyData) -> list:
    """The study's report section: mean waiting time and bounded slowdown per job class and column."""
    t = claim_rows(d)
    if t.empty:
        return []
    d.report.h(1, "Backfilling: mean waiting time [h] / mean bounded slowdown per job class")
    n = t.iloc[0]
    d.report.p(f"Over the {int(n['common'])} jobs every column started; small: ≤ {SMALL[1]} processors, large: ≥ "
               f"{LARGE[0]}; short: requested walltime ≤ {SHORT / 3600:g} h. Jobs per class: "
               + ", ".join(f"{c.replace('_', ' ')} {int(n[f'n_{c}'])}" for c in CLASSES) + ".")
    f = lambda x: "n/a" if x != x else f"{x:.3g}"  # noqa: E731
    d.report.table(["column", "all", *(c.replace("_", " ") for c in CLASSES)],
                   [[r["policy"], *(f"{f(r[f'wait_h_{c}'])} / {f(r[f'bsld_{c}'])}" for c in ("all", *CLASSES))]
                    for _, r in t.iterrows()])
    return []


def whole_scope_note(manifest: dict) -> str:
    """Where the claims are judged: every column under the alloc-only model, whatever ``--model`` says."""
    return (f"Every column runs under the {MODEL} job model (the study's own setting; the --model above is not "
            f"used), on {manifest.get('whole_label', 'the selected workload')}. The slides give no numbers: every "
            "claim is qualitative, and each rule says what counts as favoured, harmed, better or a little.")


STUDY = Study(
    name="backfilling",
    title="EASY backfilling's asymmetries, inflated estimates and lookahead (Casanova, ICS 632 slides)",
    description="Casanova, ICS 632 'Job Scheduling' slides 24, 31-32, 34: FCFS, EASY, conservative, EASY with "
                "estimates × 2 / × 3, a window without and with lookahead (alloc-only); per-class waits, 5 claims",
    policies=(), reference=EASY, claims=CLAIMS, variants=VARIANTS, sections=sections, claim_rows=claim_rows,
    whole_scope_note=whole_scope_note,
    paper="Casanova, ICS 632 slides",
)
