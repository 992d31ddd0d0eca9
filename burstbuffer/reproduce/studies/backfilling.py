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
- ``easy/x2``: EASY seeing every requested walltime × 2 (``walltime_factor``; the jobs still run, and are
  killed, under their own walltime);
- ``easy/x3``: on the scope ``actual`` only (slide 31, `actual_runtime_workload`: each job runs its trace's actual
  run time and asks exactly that), EASY seeing 3 × the actual run time; ``easy`` runs there too (f = 1);
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

from pathlib import Path

from ...lazy import lazy
from ...metrics.claims import Band, Claim, Condition, Metric
from ..study import Study, StudyData, Variant

np = lazy("numpy")  # numpy and pandas: imported on first use (burstbuffer.lazy)
pd = lazy("pandas")

MODEL = "alloc-only"
FCFS, EASY, CONSERVATIVE = "fcfs", "easy", "conservative"
X2, X3 = "easy/x2", "easy/x3"
NAIVE, LOOKAHEAD = "window/fcfs", "window/lookahead"
#: the scope of slide 31's experiment (`actual_runtime_workload`): the trace's jobs run exactly their actual run
#: time (the SWF's), each job's estimate that run time
ACTUAL = "actual"
WHOLE = ("whole",)
VARIANTS = (
    Variant(FCFS, "fcfs", model=MODEL, scopes=WHOLE),
    Variant(EASY, "fcfs-bb", model=MODEL),
    Variant(CONSERVATIVE, "fcfs-bb", {"reservation_depth": "all"}, model=MODEL, scopes=WHOLE),
    Variant(X2, "fcfs-bb", {"walltime_factor": 2}, model=MODEL, scopes=WHOLE),
    Variant(X3, "fcfs-bb", {"walltime_factor": 3}, model=MODEL, scopes=(ACTUAL,)),
    Variant(NAIVE, "bbsched-naive", model=MODEL, scopes=WHOLE),
    Variant(LOOKAHEAD, "constrained-cpu", model=MODEL, scopes=WHOLE),
)


def actual_runtime_workload(whole, work, seed: int = 0, platform=None, swf=None) -> list:
    """Slide 31's workload (Casanova, "Sample results": "replace user estimate by f times the actual run time"): the
    jobs of the Batsim workload `whole` with their trace's actual run time (SWF field 4 of the same job number, from
    `swf`, default the bundled KTH trace) as a ``delay`` job profile (the job runs exactly that long; its BB request
    kept) and that run time as the estimate (walltime, at least 1 s). On it, ``easy`` sees f = 1 (the actual run
    time) and ``easy/x3`` (``walltime_factor`` 3) f = 3. Written to `work`/<stem>-actual.json; the scope
    ``actual`` (`ACTUAL`). [] (no such scope) when a job of `whole` is not in the trace, with no error: the
    other claims do not need it. `seed`, `platform`: unused (the `Study.workloads` signature)."""
    from ..study import ExtraWorkload
    from ...workloads.batsim_json import Workload, load_workload, write_workload
    from ...workloads.bundled import KTH_SWF
    from ...workloads.swf import iter_swf
    w = load_workload(whole, require_bb=False)
    run = {r.job_number: r.run_time for r in iter_swf(swf or KTH_SWF)}
    if not w.jobs or any(j.id not in run or run[j.id] < 0 for j in w.jobs):
        return []
    jobs, profiles = [], {}
    for j in w.jobs:
        t = float(run[j.id])
        name = f"actual-{j.id}"
        profiles[name] = {"type": "delay", "delay": t, "bb": int(w.profiles.get(j.profile, {}).get("bb", 0))}
        jobs.append(j.replaced(walltime=max(1.0, t), profile=name))
    path = Path(work) / f"{Path(whole).stem}-actual.json"
    write_workload(path, Workload(w.name, f"{w.description}; slide 31: each job runs its trace's actual run time, "
                                          "estimated exactly", w.nb_res, jobs, profiles))
    return [ExtraWorkload(ACTUAL, path, f"slide 31 ({ACTUAL}): the same {len(jobs)} jobs, each running its trace's "
                                        "actual run time (a delay profile), its estimate that run time (f = 1); "
                                        "easy/x3 sees 3 × it (f = 3)")]
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
        return {**{c: _class(c)(sub) for c in CLASSES}, "all": np.ones(len(sub), bool)}
    return per_class(jobs, classify)


def class_rows(d: StudyData) -> pd.DataFrame:
    """`class_means` of the whole scope: the report's per-class table."""
    return class_means(d.jobs[d.jobs["scope"] == "whole"])


# --- the claims (docs/verdicts.md) ------------------------------------------------------------------------
def _class(cls: str):
    """The job selection of class `cls` (`CLASSES`) on per-job rows."""
    def sel(r):
        res = r["requested_number_of_resources"].to_numpy(float)
        wt = r["requested_time"].to_numpy(float)
        lo, hi = SMALL if cls.startswith("small") else LARGE
        return (res >= lo) & (res <= hi) & ((wt <= SHORT) if cls.endswith("short") else (wt > SHORT))
    return sel


def _wait(cls: str) -> Metric:
    return Metric(f"mean waiting time of the {cls.replace('_', ' ')} jobs [h]", scale=3600, select=_class(cls))


def _bsld(cls: str) -> Metric:
    return Metric(f"mean bounded slowdown of the {cls.replace('_', ' ')} jobs", "bounded_slowdown",
                  select=_class(cls))


WAIT = Metric("mean waiting time [h]", scale=3600)
BSLD = Metric("mean bounded slowdown", "bounded_slowdown")
#: the slides give no numbers: the project's reading of "favours", "harms", "improve", "better"
FAVOURS = Band(100 * MARGIN, 100.0, f"the slides give no number: a class favoured or harmed waits at least "
                                    f"{100 * MARGIN:g} % less (more)", own=True)
HELPS = Band(100 * IMPROVE, 100.0, f"the slides give no number: an improvement of at least {100 * IMPROVE:g} %, "
                                   "beyond a rounding difference", own=True)
#: slide 34: "a little bit"
LITTLE_BAND = Band(LITTLE[0], LITTLE[1], f"'a little bit' (slide 34, no number): {LITTLE[0]:g} to {LITTLE[1]:g} %",
                   own=True)

CLAIMS: tuple[Claim, ...] = (
    Claim("easy-small-long", "EASY favours small long jobs (here: jobs of at most 4 processors asking more than "
          f"1 h wait at least {100 * MARGIN:g} % less under EASY than under conservative backfilling)",
          "slide 24 (Conservative Backfilling)", paper_value="qualitative",
          words="EASY favors small long jobs", conditions=(Condition(EASY, CONSERVATIVE, _wait("small_long"), FAVOURS),)),
    Claim("easy-large-short", "EASY harms large short jobs (here: jobs of at least 20 processors asking at most 1 h "
          f"wait at least {100 * MARGIN:g} % longer under EASY than under conservative backfilling)",
          "slide 24 (Conservative Backfilling)", paper_value="qualitative",
          words="EASY harms large short jobs", conditions=(Condition(CONSERVATIVE, EASY, _wait("large_short"), FAVOURS),)),
    Claim("estimates-x2", "It is possible to improve performance by multiplying the user estimates by 2 (here: "
          f"EASY's mean wait and mean bounded slowdown, each at least {100 * IMPROVE:g} % lower)",
          "slide 32 (Another Result)", paper_value="qualitative (the slide's table is not in its text)",
          words="Possible to improve performance by multiplying user estimates by 2! (table shows reduction in %)",
          conditions=(Condition(X2, EASY, WAIT, HELPS), Condition(X2, EASY, BSLD, HELPS))),
    Claim("estimates-x3", "Overestimating by 3 would make everybody's life better, the estimate being f times the "
          "actual run time (here, on the trace's jobs running their actual run times: EASY with estimates 3 × the "
          "actual run time against EASY with the actual run time, f = 1, lowers the mean bounded slowdown of every "
          "job class, small / large × short / long, each at least "
          f"{100 * IMPROVE:g} %)", "slide 31 (Sample results)", paper_value="qualitative",
          words="A type of experiments that people have done: replace user estimate by f times the actual run time "
                "[…] overestimating by 3 would make everybodys life better!!",
          conditions=tuple(Condition(X3, EASY, _bsld(c), HELPS, scope=ACTUAL) for c in CLASSES)),
    Claim("lookahead", "Accumulating jobs and scheduling them together (lookahead, by dynamic programming) has been "
          "shown to improve performance a little bit (here: the window of 20 packed for node usage vs started in "
          f"order: mean bounded slowdown {LITTLE[0]:g} to {LITTLE[1]:g} % lower)", "slide 34 (Lookahead idea)",
          paper_value="a little",
          words="we can wait for a while, accumulate jobs, and schedule them together […] This idea has been shown to "
                "improve performance a little bit",
          conditions=(Condition(LOOKAHEAD, NAIVE, BSLD, LITTLE_BAND),)),
)


def sections(d: StudyData) -> list:
    """The study's report section: mean waiting time and bounded slowdown per job class and column."""
    t = class_rows(d)
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
            "claim is qualitative, and each band is the project's own reading of favoured, harmed, better or a "
            "little (docs/verdicts.md).")


STUDY = Study(
    name="backfilling",
    title="EASY backfilling's asymmetries, inflated estimates and lookahead (Casanova, ICS 632 slides)",
    description="Casanova, ICS 632 'Job Scheduling' slides 24, 31-32, 34: FCFS, EASY, conservative, EASY with "
                "estimates × 2 / × 3, a window without and with lookahead (alloc-only); per-class waits, 5 claims",
    policies=(), reference=EASY, claims=CLAIMS, variants=VARIANTS, sections=sections,
    whole_scope_note=whole_scope_note, workloads=actual_runtime_workload,
    paper="Casanova, ICS 632 slides",
)
