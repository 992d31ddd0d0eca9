"""Queue orders, the WFP utility, reservation depth, EASY's extra nodes and named queues
(docs/orders-and-queues.md; Allcock et al., Argonne, §3-4; Casanova's ICS 632 slides)."""
from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from burstbuffer.errors import InputError
from burstbuffer.platforms.model import Platform
from burstbuffer.schedulers import Job, make_scheduler
from burstbuffer.schedulers.orders import ORDERS, Wfp, make_order
from burstbuffer.schedulers.queues import Queue, QueueConfig, load_queues
from burstbuffer.schedulers.registry import names_taking

EASY_POLICIES = tuple(names_taking("reservation_depth"))
QUEUE_POLICIES = tuple(names_taking("queues"))

from .test_policies import PROPS, simulate, workloads

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

H = 3600.0


# ---------------------------------------------------------------------------- WFP (Allcock et al. §4)
def brute_wfp(job: Job, now: float, *, period=15.0, unit=60.0, floor=H, ceiling=12 * H, max_size=4) -> float:
    """Eq. 1 summed tick by tick: every `period` s (global multiples) after submission, up to `now`."""
    sw = min(max(job.walltime, floor), ceiling) if floor is not None else job.walltime
    total, k = 0.0, math.floor(job.subtime / period) + 1
    while k * period <= now:
        e = k * period - job.subtime
        total += (e / unit) ** 2 / (sw / unit) ** 3 * (job.res / max_size) * job.weight
        k += 1
    return total


def test_section_4_3_3_example_implies_minutes():
    """§4.3.3: a 5-minute walltime grows superlinearly after sqrt(5^3) = 11.2 minutes: the time term
    (eligible / unit)^2 / (walltime / unit)^3 of eq. 1 passes 1 there when the unit is the minute
    (before the §4.3.4 floor, so without it)."""
    w = Wfp(1, unit=60.0, wall_floor=None, wall_ceiling=None)
    job = Job("j", 0.0, 5 * 60.0, 1)
    cross = math.sqrt(5 ** 3) * 60.0                     # 11.18 min in seconds
    assert w.increment(job, cross) == pytest.approx(1.0, rel=1e-12)
    assert w.increment(job, 11.1 * 60) < 1.0 < w.increment(job, 11.2 * 60)
    # in seconds the same job would cross only after sqrt(300^3) s = 86.6 min: not the paper's number
    secs = Wfp(1, unit=1.0, wall_floor=None, wall_ceiling=None)
    assert secs.increment(job, cross) == pytest.approx(1 / 60)
    assert secs.increment(job, math.sqrt(300 ** 3)) == pytest.approx(1.0, rel=1e-12)
    # with the §4.3.4 floor of 1 h, score_wall_time is 60 min: the crossing moves to sqrt(60^3) min
    assert Wfp(1).score_wall_time(300.0) == H and Wfp(1).score_wall_time(30 * H) == 12 * H
    assert Wfp(1).increment(job, math.sqrt(60 ** 3) * 60) == pytest.approx(1.0, rel=1e-12)


@given(st.floats(0, 5000), st.floats(0, 30000), st.floats(1, 100000), st.integers(1, 4),
       st.sampled_from([15.0, 7.0]), st.sampled_from([60.0, 1.0]), st.sampled_from([1.0, 2.5]))
def test_closed_form_equals_the_sum_of_the_increments(sub, wait, wall, res, period, unit, weight):
    job = Job("j", sub, wall, res, weight=weight)
    w = Wfp(4, period=period, unit=unit)
    want = brute_wfp(job, sub + wait, period=period, unit=unit)
    assert w.priority(job, sub + wait) == pytest.approx(want, rel=1e-9, abs=1e-300)


def test_wfp_parameters_are_checked():
    for kw in ({"period": 0}, {"unit": -1}, {"wall_floor": 10.0, "wall_ceiling": 5.0}):
        with pytest.raises(ValueError):
            Wfp(4, **kw)
    with pytest.raises(ValueError, match="valid orders"):
        make_order("fifo", 4)


# ---------------------------------------------------------------------------- WFP vs FCFS, hand-checked
def _long_narrow_vs_short_wide():
    """4 processors. R (4 procs, 3 h) runs from 0. A: 1 proc, 12 h walltime, submitted at 0;
    B: 4 procs, 1 h, submitted at 1 h. When R ends (3 h), A has waited 3 h and B 2 h.
    FCFS: A starts at 3 h, B waits for A's end (15 h). WFP: B's priority ((120 min)^2-ish / 60^3 × 1)
    dwarfs A's ((180 min)^2-ish / 720^3 × 1/4): B starts at 3 h, A at 4 h."""
    plat = Platform.simple(4, [10**9])
    jobs = [Job("R", 0.0, 3 * H, 4), Job("A", 0.0, 12 * H, 1), Job("B", H, H, 4)]
    return plat, jobs, {j.id: j.walltime for j in jobs}


@pytest.mark.parametrize("policy", ["fcfs", "fcfs-bb", "conservative-bb", "filler"])
def test_wfp_and_fcfs_disagree_on_a_long_narrow_and_a_short_wide_job(policy):
    plat, jobs, runtime = _long_narrow_vs_short_wide()
    fcfs = simulate(make_scheduler(policy, plat, order="fcfs"), jobs, runtime, horizon=1e6)
    sched = make_scheduler(policy, plat, order="wfp")
    wfp = simulate(sched, jobs, runtime, horizon=1e6)
    assert fcfs.start == {"R": 0.0, "A": 3 * H, "B": 15 * H}
    if policy == "conservative-bb":
        # A holds its reservation (3 h) since its submission; B, first in WFP order at 3 h, is
        # compressed first but may not delay a reservation: the order cannot overturn it
        assert wfp.start == fcfs.start
        return
    assert wfp.start == {"R": 0.0, "B": 3 * H, "A": 4 * H}
    # the priorities at start are eq. 1 summed over the 15-s ticks (minutes, MAX_SIZE = 4)
    a, b = jobs[1], jobs[2]
    assert sched.job_facts["A"][1] == pytest.approx(brute_wfp(a, 4 * H), rel=1e-12)
    assert sched.job_facts["B"][1] == pytest.approx(brute_wfp(b, 3 * H), rel=1e-12)
    assert brute_wfp(b, 3 * H) > 100 * brute_wfp(a, 3 * H)


def test_static_orders_pick_the_head():
    """On an idle 4-processor machine with one job running, each static order starts the expected
    job first when the machine frees up (ties: submission order)."""
    plat = Platform.simple(4, [100 * 10**9])
    jobs = [Job("R", 0.0, 10.0, 4),
            Job("a", 1.0, 5.0, 4, 1 * 10**9), Job("b", 2.0, 3.0, 2, 5 * 10**9), Job("c", 3.0, 8.0, 3, 0),
            Job("d", 4.0, 3.0, 1, 2 * 10**9)]
    runtime = {j.id: j.walltime for j in jobs}
    first = {}
    for order in ORDERS:
        tr = simulate(make_scheduler("fcfs", plat, order=order), jobs, runtime)
        first[order] = [d[1] for d in tr.decisions if d[1] != "R"][0]    # decisions: in start order
    # bb_total: a 4 GB, b 10 GB, c 0, d 2 GB; walltime: b = d = 3 (b first); res: d 1 < b 2
    assert first == {"fcfs": "a", "sjf": "b", "ljf": "c", "small": "d", "large": "a", "bb-small": "c",
                     "bb-large": "b", "wfp": "a"}


# ---------------------------------------------------------------------------- reservation depth
@PROPS
@given(workloads(), st.sampled_from(sorted(ORDERS)), st.sampled_from(["fcfs-bb", "sjf-bb"]))
def test_depth_all_is_conservative_bb(wl, order, policy):
    plat, jobs, runtime = wl
    cons = simulate(make_scheduler("conservative-bb", plat, order=order), jobs, runtime)
    deep = simulate(make_scheduler(policy, plat, order=order, reservation_depth="all"), jobs, runtime)
    assert deep.decisions == cons.decisions
    assert deep.rejected == cons.rejected


@PROPS
@given(workloads(), st.sampled_from(EASY_POLICIES), st.booleans())
def test_depth_1_is_easy(wl, policy, periodic):
    plat, jobs, runtime = wl
    easy = simulate(make_scheduler(policy, plat, period=1.0 if periodic else None), jobs, runtime)
    one = simulate(make_scheduler(policy, plat, reservation_depth=1, period=1.0 if periodic else None), jobs, runtime)
    assert one.decisions == easy.decisions
    assert one.reservations == easy.reservations


def test_depth_2_protects_the_second_job():
    """4 processors. R (3 procs, 10 s) runs on {0,1,2}; H (2 procs, 10 s) and S (4 procs, 10 s) queue
    at 0; L (1 proc, 30 s) arrives at 1. Depth 1 (EASY): only H is reserved ({0,1} at 10); L fits on
    {3} over [1, 31) and starts, so S waits for L's end (31). Depth 2: S also holds a reservation
    (all 4 at 20) and L, which would overlap it, waits for S's end (30) -- as conservative-bb."""
    plat = Platform.simple(4, [10**9])
    jobs = [Job("R", 0.0, 10.0, 3), Job("H", 0.0, 10.0, 2), Job("S", 0.0, 10.0, 4), Job("L", 1.0, 30.0, 1)]
    runtime = {j.id: j.walltime for j in jobs}
    assert simulate(make_scheduler("fcfs-bb", plat), jobs, runtime).start == \
        {"R": 0.0, "H": 10.0, "L": 1.0, "S": 31.0}
    assert simulate(make_scheduler("fcfs-bb", plat, reservation_depth=1), jobs, runtime).start == \
        {"R": 0.0, "H": 10.0, "L": 1.0, "S": 31.0}
    want = {"R": 0.0, "H": 10.0, "S": 20.0, "L": 30.0}
    tr = simulate(make_scheduler("fcfs-bb", plat, reservation_depth=2), jobs, runtime)
    assert tr.start == want
    assert tr.plans[0][1] == {"R": 0.0, "H": 10.0, "S": 20.0}   # R starts now, two reservations
    assert simulate(make_scheduler("conservative-bb", plat), jobs, runtime).start == want


# ---------------------------------------------------------------------------- EASY extra nodes (ICS 632 slides)
def test_extra_nodes_backfill_a_job_on_the_heads_processors():
    """4 processors. W (1 proc, walltime 10, runs 1 s) on {0} and X (3 procs, 10 s) on {1,2,3} from 0;
    H (2 procs, 10 s) is the head: shadow time 10, reserved on {0,1}; extra nodes at 10: {2,3}.
    Y (1 proc, 100 s) arrives at 1, when {0} is free: it collides with H's processors, so plain EASY
    starts it at 10; with extra nodes (1 <= 2) it starts at 1 and H is re-placed on {1,2} at 10."""
    plat = Platform.simple(4, [10**9])
    jobs = [Job("W", 0.0, 10.0, 1), Job("X", 0.0, 10.0, 3), Job("H", 0.0, 10.0, 2), Job("Y", 1.0, 100.0, 1)]
    runtime = {"W": 1.0, "X": 10.0, "H": 10.0, "Y": 100.0}
    plain = simulate(make_scheduler("fcfs-bb", plat), jobs, runtime)
    assert plain.start == {"W": 0.0, "X": 0.0, "H": 10.0, "Y": 10.0}
    extra = simulate(make_scheduler("fcfs-bb", plat, easy_extra_nodes=True), jobs, runtime)
    assert extra.start == {"W": 0.0, "X": 0.0, "Y": 1.0, "H": 10.0}
    assert str(extra.procs["Y"]) == "0" and str(extra.procs["H"]) == "1-2"


@PROPS
@given(workloads(), st.sampled_from(EASY_POLICIES), st.booleans())
def test_extra_nodes_never_delay_the_head(wl, policy, periodic):
    """As plain EASY (tests/test_policies.py::test_easy_reservation_never_delayed): a head's shadow
    time R(d) at a later decision d is ≤ max(R_prev, d); for fcfs-bb / sjf-bb (BB reserved too) it
    never moves past the first one and the head starts by it. fcfs-easy reserves no BB (Euro-Par 2021
    paper §3.1): only the first bound holds."""
    plat, jobs, runtime = wl
    tr = simulate(make_scheduler(policy, plat, easy_extra_nodes=True), jobs, runtime,
                  period=1.0 if periodic else None)
    first: dict[str, float] = {}
    prev: dict[str, float] = {}
    for d, jid, shadow in tr.reservations:
        assert shadow >= d and tr.start[jid] > d
        if jid not in first:
            first[jid] = prev[jid] = shadow
            continue
        assert shadow <= max(prev[jid], d), (jid, d, shadow, prev[jid])
        if policy != "fcfs-easy":
            assert shadow <= first[jid]
        prev[jid] = shadow
    if policy != "fcfs-easy":
        for jid, r1 in first.items():
            assert tr.start[jid] <= r1, (jid, tr.start[jid], r1)
    for j in jobs:
        assert (j.id in tr.start) != (j.id in tr.rejected)


# ---------------------------------------------------------------------------- queues
def _queue_cfg(draw_caps):
    prod_small, share_small, share_big = draw_caps
    return QueueConfig((
        Queue("small", max_procs=prod_small, max_share=share_small),
        Queue("big", min_procs=prod_small + 1, max_walltime=8.0, max_share=share_big),
        Queue("backfill", backfill=True, route=False),
    ), "fcfs", "generated")


def holdings(tr, jobs, runtime, queue_of) -> dict[str, list[tuple[float, int]]]:
    """Per queue: (time, +res / −res) events of the started jobs."""
    ev: dict[str, list[tuple[float, int]]] = {}
    for j in jobs:
        if j.id in tr.start:
            q = queue_of(j)
            ev.setdefault(q, []).extend([(tr.start[j.id], j.res), (tr.start[j.id] + runtime[j.id], -j.res)])
    return ev


def max_held(events: list[tuple[float, int]]) -> int:
    """Largest sum held at any instant (an end at t frees before a start at t)."""
    cur = best = 0
    for _, d in sorted(events, key=lambda e: (e[0], e[1])):
        cur += d
        best = max(best, cur)
    return best


@PROPS
@given(workloads(), st.sampled_from(QUEUE_POLICIES + ("depth-2",)), st.sampled_from(["fcfs", "wfp", "sjf"]),
       st.tuples(st.integers(1, 3), st.sampled_from([0.25, 0.5, 1.0]), st.sampled_from([0.5, 1.0])),
       st.lists(st.booleans(), min_size=12, max_size=12))
def test_queue_limits_are_never_exceeded(wl, policy, order, caps, to_backfill):
    plat, jobs, runtime = wl
    cfg = _queue_cfg(caps)
    jobs = [Job(j.id, j.subtime, j.walltime, j.res, j.bb, queue="backfill" if b else "")
            for j, b in zip(jobs, to_backfill)]
    if policy == "depth-2":
        sched = make_scheduler("fcfs-bb", plat, order=order, queues=cfg, reservation_depth=2)
    else:
        sched = make_scheduler(policy, plat, order=order, queues=cfg)
    tr = simulate(sched, jobs, runtime)
    n = plat.nb_compute
    routed = {j.id: cfg.route(j, n)[0] for j in jobs}
    for j in jobs:   # every job starts or is rejected with a reason: none is dropped
        assert (j.id in tr.start) != (j.id in tr.rejected)
        if routed[j.id] is None and sched.can_ever_fit(Job(j.id, 0, j.walltime, j.res, 0, queue=j.queue)):
            assert j.id in tr.rejected
    for q, ev in holdings(tr, jobs, runtime, lambda j: routed[j.id].name).items():
        assert max_held(ev) <= cfg.by_name(q).cap(n), q


def test_a_backfill_job_never_outranks_a_production_job():
    plat = Platform.simple(2, [10**9])
    jobs = [Job("R", 0.0, 10.0, 2), Job("Bq", 1.0, 10.0, 2, queue="backfill"), Job("P", 2.0, 10.0, 2)]
    runtime = {j.id: j.walltime for j in jobs}
    cfg = QueueConfig((Queue("prod"), Queue("backfill", backfill=True, route=False)))
    assert simulate(make_scheduler("fcfs", plat), jobs, runtime).start == {"R": 0.0, "Bq": 10.0, "P": 20.0}
    assert simulate(make_scheduler("fcfs", plat, queues=cfg), jobs, runtime).start == \
        {"R": 0.0, "P": 10.0, "Bq": 20.0}


def test_routing_and_rejection_reasons():
    cfg = load_queues(QUEUE_FILE)
    n = 96
    route = lambda res, wall: cfg.route(Job("j", 0, wall, res), n)  # noqa: E731
    assert route(20, 24 * H)[0].name == "prod-capability"
    assert route(19, 6 * H)[0].name == "prod-short"
    assert route(19, 6 * H + 1)[0].name == "prod-long"
    assert cfg.by_name("prod-long").cap(n) == 32
    q, why = route(20, 24 * H + 1)
    assert q is None and "no queue accepts it" in why and "\n" not in why
    q, why = cfg.route(Job("j", 0, 60, 4, queue="debug"), n)
    assert q is None and "debug" in why


# ---------------------------------------------------------------------------- queue files and CLI errors
from pathlib import Path  # noqa: E402

QUEUE_FILE = Path(__file__).resolve().parents[1] / "workloads" / "mira-like-queues.toml"


@pytest.mark.parametrize("text, item", [
    ("[[queue]]\nname = 'a'\nmax_share = 2\n", "max_share"),
    ("[[queue]]\nname = 'a'\norder = 'fifo'\n", "order"),
    ("[[queue]]\nname = 'a'\n[[queue]]\nname = 'a'\n", "defined twice"),
    ("[[queue]]\nname = 'a'\ncolour = 1\n", "unknown key"),
    ("[[queue]\n", "TOML"),
    ("order = 'wfp'\n", "no [[queue]]"),
    ("[[queue]]\nname='a'\norder='sjf'\n[[queue]]\nname='b'\norder='wfp'\n", "share one order"),
])
def test_bad_queue_files_are_one_line_errors(tmp_path, text, item):
    p = tmp_path / "q.toml"
    p.write_text(text)
    with pytest.raises(InputError) as exc:
        load_queues(p).check_orders("fcfs")
    assert item in str(exc.value) and "\n" not in str(exc.value) and str(p) in str(exc.value)


@pytest.mark.parametrize("args, words", [
    (["--order", "fifo"], "unknown order"),
    (["--policy", "plan-2", "--order", "wfp"], "policy plan-2 takes no option 'order'"),
    (["--policy", "filler", "--reservation-depth", "2"], "policy filler takes no option 'reservation_depth'"),
    (["--policy", "fcfs-bb", "--reservation-depth", "0"], "an integer >= 1 or 'all'"),
    (["--policy", "fcfs-bb", "--reservation-depth", "2", "--easy-extra-nodes"], "not to a reservation depth"),
    (["--queues", "/nonexistent.toml"], "file not found"),
    (["--wfp-unit", "0", "--order", "wfp"], "must be > 0"),
])
@pytest.mark.parametrize("command", ["run", "serve"])
def test_cli_rejects_bad_order_options_in_one_line(capsys, args, words, command):
    from burstbuffer.cli import main
    argv = [command, *args] + (["--policy", "fcfs-bb"] if "--policy" not in args else [])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err


# ---------------------------------------------------------------------------- from the CLI
def _run_cli(*args):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "burstbuffer.cli", "run", *map(str, args)], capture_output=True,
                          text=True, timeout=600)


def test_cli_queues_jobs_csv_columns_limits_and_rejections(kth_subset, tmp_path):
    """`run --queues` on 60 KTH jobs (one edited to ask for 30 processors for 30 h: no queue takes it,
    one to ask for the backfill queue): jobs.csv gains queue and priority, the routed-nowhere job is
    rejected with its reason, prod-long never holds more than 32 processors; a run without queues or
    wfp keeps the Batsim columns only."""
    import csv

    from burstbuffer.metrics.definitions import JOBS_CSV_COLUMNS as JOB_COLUMNS

    def edit(w):
        w["jobs"][3].update(res=30, walltime=30 * 3600)
        w["jobs"][5]["queue"] = "backfill"

    wl = kth_subset(60, edit=edit)
    r = _run_cli("--policy", "fcfs-bb", "--queues", QUEUE_FILE, "--model", "alloc-only", "--workload", wl,
                 "--output", tmp_path / "q", "-q")
    assert r.returncode == 0, r.stderr
    assert "rejected             1" in r.stdout
    with open(tmp_path / "q" / "jobs.csv", newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == list(JOB_COLUMNS) + ["queue", "priority"]
        rows = list(reader)
    rej = [x for x in rows if x["final_state"] == "REJECTED"]
    assert len(rej) == 1 and "no queue accepts it" in rej[0]["metadata"]
    started = [x for x in rows if x["starting_time"]]
    assert len(started) == 59 and all(x["queue"] and x["priority"] for x in started)
    assert {x["queue"] for x in started} >= {"prod-short", "prod-long", "backfill"}
    cfg = load_queues(QUEUE_FILE)
    for q in cfg.queues:
        ev = []
        for x in started:
            if x["queue"] == q.name:
                n = int(x["requested_number_of_resources"])
                ev += [(float(x["starting_time"]), n), (float(x["finish_time"]), -n)]
        assert max_held(ev) <= q.cap(96), q.name
    r = _run_cli("--policy", "fcfs-bb", "--order", "sjf", "--model", "alloc-only", "--workload", wl,
                 "--output", tmp_path / "plain", "-q")
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "plain" / "jobs.csv", newline="") as f:
        assert next(csv.reader(f)) == list(JOB_COLUMNS)


@pytest.mark.parametrize("text,reason", [
    ('queue = [1, 2]\n', "expected a table"),
    ('[[queue]]\nname = "a"\nmin_walltime = nan\n', "got nan"),
    ('[[queue]]\nname = "a"\nmin_walltime = inf\n', "finite number"),
    ('[[queue]]\nname = "a"\nmax_walltime = nan\n', "got nan"),
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
])
def test_bad_queue_files_are_one_line_errors(tmp_path, capsys, text, reason):
    """A queue that is not a table, a NaN or infinite walltime bound, a TOML nested too deeply: one line, exit 2
    (before, a traceback, or every job rejected)."""
    from burstbuffer.cli import main
    f = tmp_path / "q.toml"
    f.write_text(text)
    assert main(["run", "--policy", "fcfs-bb", "--queues", str(f), "--output", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and reason in err[0] and str(f) in err[0], err
