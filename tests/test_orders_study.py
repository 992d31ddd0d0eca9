"""`burstbuffer reproduce --study orders` (Allcock et al., Argonne, §3-5): its plan, the per-size-class
table on a hand-made jobs table, a small end-to-end
analysis, `reproduce --queues`, and the base order of the window policies (Fan et al. 2019 §3)."""
from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from burstbuffer.cli import main
from burstbuffer.errors import InputError
from burstbuffer.platforms.model import Platform
from burstbuffer.reproduce import RunSettings, analyse, execute, get_study, plan_runs
from burstbuffer.reproduce.command import with_queue_file
from burstbuffer.reproduce.local import LocalPoolExecutor
from burstbuffer.reproduce.studies import orders as O
from burstbuffer.runner import DEFAULT_PLATFORM
from burstbuffer.schedulers import POLICIES, Job, make_scheduler
from burstbuffer.schedulers.queues import QueueConfig, queue_config

from .test_policies import simulate

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

ROOT = Path(__file__).resolve().parents[1]
MIRA = ROOT / "workloads" / "mira-like-queues.toml"


def _args(wl, **kw):
    base = dict(jobs="1000", workload=str(wl), parts=False, parts_from=None, split=None, policies=None,
                model="io-aware", gantt_jobs=3500, seed=0)
    base.update(kw)
    return argparse.Namespace(**base)


# ---------------------------------------------------------------------------- the plan
def test_plan_every_order_with_and_without_queues(tmp_path, kth_subset):
    st = get_study("orders")
    plan = plan_runs(st, _args(kth_subset(5)), tmp_path, POLICIES, log=lambda m: None)
    keys = [s.key for s in plan.specs]
    want = [f"whole/{p}/{o}{q}" for q in ("", "+queues") for p in ("fcfs-bb", "sjf-bb") for o in
            ("fcfs", "sjf", "ljf", "small", "large", "bb-small", "bb-large", "wfp")]
    want += ["whole/filler/wfp"] + [f"whole/{p}/wfp-{c}" for p in ("fcfs-bb", "sjf-bb") for c in ("nofloor", "noceiling")]
    assert keys == want                                           # 32 + 5 runs (drain, clamps), no Gantt run
    by = {s.key: s for s in plan.specs}
    assert json.loads(by["whole/sjf-bb/wfp-nofloor"].options) == {"order": "wfp", "order_params": {"wall_floor": None}}
    assert json.loads(by["whole/filler/wfp"].options) == {"order": "wfp"} and by["whole/filler/wfp"].policy == "filler"
    s = by["whole/sjf-bb/wfp"]
    assert (s.policy, json.loads(s.options), s.model) == ("sjf-bb", {"order": "wfp"}, "io-aware")
    s = by["whole/fcfs-bb/ljf+queues"]
    assert s.policy == "fcfs-bb" and Path(s.out) == tmp_path / "runs" / "whole" / "fcfs-bb" / "ljf+queues"
    assert json.loads(s.options) == {"order": "ljf", "queues": {"order": None, "path": str(MIRA)}}
    # the queue option is JSON and the policy's factory takes it: the file's order (wfp) is replaced by ljf
    sched = make_scheduler("fcfs-bb", Platform.simple(96, [10**12]), **json.loads(s.options))
    assert sched.queues.order is None and {o.name for o in sched._orders.rank_orders} == {"ljf"}
    plain = make_scheduler("fcfs-bb", Platform.simple(96, [10**12]), queues=str(MIRA))
    assert {o.name for o in plain._orders.rank_orders} == {"wfp"}     # a bare path keeps the file's order
    plan = plan_runs(st, _args(kth_subset(5), policies="sjf-bb/wfp+queues,fcfs-bb/large"), tmp_path, POLICIES,
                     log=lambda m: None)
    assert [s.key for s in plan.specs] == ["whole/sjf-bb/wfp+queues", "whole/fcfs-bb/large"]


def test_queue_config_values():
    assert queue_config(None) is None
    cfg = queue_config(MIRA)
    assert isinstance(cfg, QueueConfig) and cfg.order == "wfp" and queue_config(cfg) is cfg
    assert queue_config({"path": str(MIRA), "order": "sjf"}).order == "sjf"
    with pytest.raises(InputError, match="unknown order 'fifo'"):
        queue_config({"path": str(MIRA), "order": "fifo"})
    with pytest.raises(ValueError):
        queue_config({"file": str(MIRA)})
    with pytest.raises(ValueError):
        queue_config(3)


# ---------------------------------------------------------------------------- job classes, by hand
def _job(scope, pol, jid, res, wall_h, wait_h, bsld=1.0):
    return {"scope": scope, "policy": pol, "job_id": jid, "requested_number_of_resources": res,
            "requested_time": wall_h * 3600.0, "waiting_time": None if wait_h is None else wait_h * 3600.0,
            "bounded_slowdown": None if wait_h is None else bsld}


def test_class_table_by_hand():
    """Two columns, five jobs. j5 (48 processors, 30 h: no Mira queue takes it) did not start in b: it is
    left out of both. Classes: j1 (1 proc, 1 h) 1-4 short prod-short; j2 (4, 8 h) 1-4 long prod-long;
    j3 (10, 2 h) 5-19 short prod-short; j4 (32, 10 h) 20-96 long prod-capability."""
    rows = []
    for pol, waits, bs in (("a", (1, 3, 2, 10, 7), (1, 2, 3, 4, 5)), ("b", (2, 1, 6, 4, None), (2, 2, 2, 2, 2))):
        for (jid, res, wall), w, b in zip((("j1", 1, 1), ("j2", 4, 8), ("j3", 10, 2), ("j4", 32, 10), ("j5", 48, 30)),
                                         waits, bs):
            rows.append(_job("whole", pol, jid, res, wall, w, b))
    ct = O.class_table(pd.DataFrame(rows)).set_index("policy")
    assert list(ct["common"]) == [4, 4]
    a, b = ct.loc["a"], ct.loc["b"]
    assert (a["n_size_1-4"], a["n_size_5-19"], a["n_size_20-96"]) == (2, 1, 1)
    assert a["wait_h_mean_size_1-4"] == 2.0 and b["wait_h_mean_size_1-4"] == 1.5
    assert a["wait_h_mean_size_5-19"] == 2.0 and b["wait_h_mean_size_20-96"] == 4.0
    assert a["wait_h_mean_size_20-96"] == 10.0                       # j5's 7 h is left out
    assert a["bsld_mean_size_1-4"] == 1.5 and a["bsld_mean_size_20-96"] == 4.0
    assert (a["n_wt_short"], a["n_wt_long"]) == (2, 2)
    assert a["wait_h_mean_wt_short"] == 1.5 and a["wait_h_mean_wt_long"] == 6.5
    assert b["wait_h_mean_wt_long"] == 2.5
    assert (a["n_q_prod-short"], a["n_q_prod-long"], a["n_q_prod-capability"]) == (2, 1, 1)
    assert a["wait_h_mean_q_prod-short"] == 1.5 and b["wait_h_mean_q_prod-long"] == 1.0
    assert O.queue_class(48, 30 * 3600) == "none" and O.size_class(96) == "20-96"


# ---------------------------------------------------------------------------- a small analysis
def _crowd(w):
    """The first 12 KTH jobs submitted within 12 s, the second asking for 80 processors: jobs wait."""
    for k, j in enumerate(w["jobs"]):
        j["subtime"] = float(k)
    w["jobs"][1]["res"] = 80


def test_small_study_runs_and_reports(tmp_path, kth_subset):
    wl = kth_subset(12, edit=_crowd)
    st = get_study("orders")
    out = tmp_path / "rep"
    plan = plan_runs(st, _args(wl, policies="fcfs-bb/fcfs,fcfs-bb/wfp,fcfs-bb/wfp+queues", model="alloc-only"),
                     out, POLICIES, log=lambda m: None)
    results = execute(plan.specs, LocalPoolExecutor(2, pin=False, progress=False),
                      RunSettings(str(DEFAULT_PLATFORM)), log=lambda m: None)
    assert all("error" not in r for r in results.values()), results
    analyse(out, st, plan.specs, results, {"model": "alloc-only", "platform": str(DEFAULT_PLATFORM), "seed": 0,
                                            "workers": 2}, log=lambda m: None)
    full = {v["id"]: v for v in json.loads((out / "verdicts.json").read_text())}
    verdicts = {k: v["verdict"] for k, v in full.items()}
    assert set(verdicts) == {c.id for c in O.CLAIMS}
    # a claim is judged under both policies: with fcfs-bb's columns only, its fcfs-bb condition is measured,
    # its sjf-bb one says what it needs, and the claim is not measured
    for cid in ("wfp-large", "queue-waits"):
        conds = full[cid]["conditions"]
        assert verdicts[cid] == "not measured" and "needs sjf-bb/" in full[cid]["measured"]
        assert all(d["verdict"] != "not measured" for d in conds if d["treatment"].startswith("fcfs-bb/"))
    assert verdicts["wfp-no-starvation"] == "not measured"                       # no large-order run
    report = (out / "report.md").read_text()
    assert "Per size class" in report and "Per Mira queue class" in report
    assert (out / "figures" / "orders_size_classes.png").is_file() and (out / "figures" / "orders_means.svg").is_file()
    # the class means are those of job_metrics.csv (all 12 jobs start in every column here)
    jm = pd.read_csv(out / "job_metrics.csv")
    g = jm[jm["policy"] == "fcfs-bb/wfp"]
    ct = O.class_table(jm).set_index("policy").loc["fcfs-bb/wfp"]
    small = g[g["requested_number_of_resources"] <= 4]
    assert ct["common"] == 12 and ct["n_size_1-4"] == len(small)
    assert math.isclose(ct["wait_h_mean_size_1-4"], small["waiting_time"].mean() / 3600)
    with_q = pd.read_csv(out / "runs" / "whole" / "fcfs-bb" / "wfp+queues" / "jobs.csv")
    assert set(with_q["queue"].dropna()) <= {"prod-short", "prod-long", "prod-capability"}


# ---------------------------------------------------------------------------- reproduce --queues
def test_with_queue_file(tmp_path):
    q = tmp_path / "q.toml"
    q.write_text('[[queue]]\nname = "all"\n')
    st, note = with_queue_file(get_study("kopanski2021"), "fcfs-bb,plan-2", str(q))
    cols = {v.label: v for v in st.columns("fcfs-bb,plan-2")}
    assert cols["fcfs-bb"].options == {"queues": str(q.resolve())} and cols["plan-2"].options == {}
    assert "applied to fcfs-bb" in note
    st, _ = with_queue_file(get_study("orders"), None, str(q))
    cols = {v.label: v for v in st.columns(None)}
    assert cols["sjf-bb/small+queues"].options == {"order": "small", "queues": {"path": str(q.resolve()), "order": None}}
    assert cols["sjf-bb/small"].options == {"order": "small"}


@pytest.mark.parametrize("args, words", [
    (["--policies", "plan-2,plan-1", "--queues", str(MIRA)], "no policy of study kopanski2021 takes a queue file"),
    (["--study", "orders", "--queues", "/nonexistent.toml"], "file not found"),
])
def test_reproduce_queues_errors_are_one_line(tmp_path, capsys, args, words):
    assert main(["reproduce", "--jobs", "1000", "--output", str(tmp_path / "o"), "--engine", "local", *args]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err


# ---------------------------------------------------------------------------- window base order
def test_the_order_picks_the_window():
    """4 processors, window 2, constrained-cpu (most nodes; ties: nearest the front). All submitted at 0:
    A, B (1 processor, 100 s), C, D (3 processors, 10 s). fcfs: the window is {A, B}, both fit together:
    A, B start; C heads, reserved at 100; D after it. sjf: the window is {C, D}, they do not fit together:
    C is chosen; step 5 in sjf order: D heads (reserved at 10 on processors 0-2), A backfills on
    processor 3, B waits for D's end."""
    plat = Platform.simple(4, [10**9])
    jobs = [Job("A", 0.0, 100.0, 1), Job("B", 0.0, 100.0, 1), Job("C", 0.0, 10.0, 3), Job("D", 0.0, 10.0, 3)]
    rt = {j.id: j.walltime for j in jobs}
    runs = {}
    for order in (None, "fcfs", "sjf"):
        sched = make_scheduler("constrained-cpu", plat, window=2, **({"order": order} if order else {}))
        runs[order] = (simulate(sched, jobs, rt), sched.decisions[0])
    assert runs["fcfs"][0].start == {"A": 0.0, "B": 0.0, "C": 100.0, "D": 110.0}
    assert (runs["fcfs"][1].solver, runs["fcfs"][1].selected_nodes) == ("all", 2)
    assert runs["sjf"][0].start == {"C": 0.0, "A": 0.0, "D": 10.0, "B": 20.0}
    assert (runs["sjf"][1].solver, runs["sjf"][1].selected_nodes) == ("nodes-enum", 3)
    assert runs[None][0].start == runs["fcfs"][0].start and runs[None][0].decisions == runs["fcfs"][0].decisions


def test_window_policies_take_order_on_the_command_line(capsys):
    from burstbuffer.policyargs import spec_from_args
    ns = argparse.Namespace(policy="bbsched", order="wfp", queues=None, reservation_depth=None, easy_extra_nodes=False,
                            wfp_unit=30.0)
    assert spec_from_args(ns, job_model="io-aware", seed=0).options == {"order": "wfp", "order_params": {"unit": 30.0}}
    assert main(["run", "--policy", "bbsched", "--queues", str(MIRA), "-q"]) == 2
    assert main(["run", "--policy", "weighted", "--order", "fifo", "-q"]) == 2
    err = capsys.readouterr().err
    assert "--queues: " in err and "policy bbsched takes no option 'queues'" in err and "unknown order" in err
