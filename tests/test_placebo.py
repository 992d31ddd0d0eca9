"""The placebo and reversal controls of docs/verdicts.md on every study, end to end at a small size:
`reproduce --study S --placebo` runs each control again on independent replicates (an A/A test) and judges
each claim with those runs in place of its treatment's, unpaired, and no
claim asserting a difference may then come out reproduced or partly; `--reverse` (here `--report-only` on the
same runs) swaps treatment and control, and no directional claim may pass both ways. verdicts.json carries
`asserts` and the verdict of every mode; the report shows the placebo column beside the real one."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from burstbuffer.cli import main
from burstbuffer.reproduce import get_study

pytestmark = pytest.mark.slow   # test tier (setup.cfg markers; docs/testing.md)

PASS = ("reproduced", "partly")
REPLICATES = 3   # every study's default R: the A/A runs are replicates R … 2R − 1


def _crowd(w):
    """The first KTH jobs submitted one second apart: the queue fills and jobs wait."""
    for k, j in enumerate(w["jobs"]):
        j["subtime"] = float(k)


def _bb_everywhere(w):
    for j in w["jobs"]:
        j["res"] = max(j["res"], 30)


_ORDERS = ",".join(f"{p}/{o}" for p in ("fcfs-bb", "sjf-bb")
                   for o in ("fcfs", "wfp", "large", "wfp+queues", "wfp-nofloor", "wfp-noceiling")) + ",filler/wfp"
#: study → (jobs, workload edit, extra arguments): small runs that still judge some claims
CASES = {
    "kopanski2021": (30, _crowd, ["--gantt-jobs", "0"]),
    "orders": (30, _crowd, ["--policies", _ORDERS, "--model", "alloc-only"]),
    "backfilling": (30, _crowd, []),
    # 2 replicates (A/A: 2 more): each of its draws is 5 KTH workloads and 12 paper-regime ones (2 scenarios)
    "bbsched": (20, _bb_everywhere, ["--policies", "bbsched,bbsched-naive,bbsched/w10", "--replicates", "2"]),
    "three-phase": (15, None, ["--policies", "cerberus/three-phase,fcfs-easy/io-aware,sjf-bb/io-aware,"
                                             "plan-2/io-aware"]),
}


@pytest.mark.parametrize("study", sorted(CASES))
def test_placebo_and_reverse(study, tmp_path, kth_subset, monkeypatch):
    n, edit, extra = CASES[study]
    if study == "bbsched":
        # two of the five paper-regime scenarios per machine, as tests/test_bbsched_study.py's end-to-end test
        # (the plan is made in this process; its plan test covers all five)
        from burstbuffer.reproduce.studies import bbsched_regime
        monkeypatch.setattr(bbsched_regime, "SCENARIOS", ("Original", "S4"))
    wl = kth_subset(n, edit)
    out = tmp_path / "out"
    base = ["reproduce", "--study", study, "--workload", str(wl), "--workers", "2", "--engine", "local",
            "--output", str(out), "--timeout", "120", "-q", *extra]
    assert main([*base, "--placebo"]) == 0
    placebo = json.loads((out / "verdicts.json").read_text())
    assert [v["id"] for v in placebo] == [c.id for c in get_study(study).claims]
    for v in placebo:
        assert v["mode"] == "placebo" and v["asserts"] in ("difference", "no difference")
        assert set(v) >= {"verdict_real", "verdict_reverse"}
        if v["asserts"] == "difference":
            assert v["verdict"] not in PASS, (v["id"], v["by_how_much"])
        # condition by condition too, also where the study's regime checks withhold the claim's verdict
        assert all(d["verdict"] not in PASS for d in v["conditions"] if d["asserts"] == "difference"), v["id"]
        # a directional claim cannot hold both ways on the same runs
        if v["asserts"] == "difference":
            assert not (v["verdict_real"] in PASS and v["verdict_reverse"] in PASS), v["id"]
    md = (out / "report.md").read_text()
    assert "**Placebo run**" in md and "| verdict (placebo) |" in md and "| real | reversed |" in md
    # the same runs reversed, then as planned: no simulation, the same verdicts as the placebo run computed
    assert main([*base, "--reverse", "--report-only"]) == 0
    rev = json.loads((out / "verdicts.json").read_text())
    assert [v["verdict"] for v in rev] == [v["verdict_reverse"] for v in placebo]
    # without --placebo the A/A runs the --placebo run left in the folder are judged in the placebo column
    # (the docs table's three columns from one folder), and none is simulated again
    assert main(base) == 0
    real = json.loads((out / "verdicts.json").read_text())
    assert [v["verdict"] for v in real] == [v["verdict_real"] for v in placebo]
    assert [v["verdict_placebo"] for v in real] == [v["verdict"] for v in placebo]
    assert json.loads((out / "manifest.json").read_text())["runs_done_now"] == 0
    if study == "backfilling":
        # an A/A run that did not finish is left out, not simulated by a run without --placebo
        aa = sorted((out / "runs" / f"r{REPLICATES}").rglob("summary.json"))
        assert aa, "the --placebo run made no A/A run"
        aa[0].unlink()
        assert main(base) == 0
        assert not aa[0].exists() and json.loads((out / "manifest.json").read_text())["runs_done_now"] == 0
    md = (out / "report.md").read_text()
    assert "| verdict | by how much | placebo | reversed |" in md
    # the docs page's table (make study-table): the three verdicts side by side, and the regime checks
    doc = _verdict_table().table(out, doc=True).splitlines()
    assert doc[0].startswith("Measured by `burstbuffer ") and str(out) not in doc[0]     # (argv: pytest's here)
    head = next(ln for ln in doc if ln.startswith("| id |"))
    assert "| asserts | verdict | placebo | reversed | band (its reason) | noise floor |" in head
    rows = [ln for ln in doc if ln.startswith("| ") and not ln.startswith(("| id |", "| check |", "| ---"))]
    regime = json.loads((out / "regime.json").read_text())
    assert len(rows) == len(real) + len(regime)
    assert ("| workload | " in "\n".join(doc)) == (study == "kopanski2021")
    if all(c.conditions for c in get_study(study).claims):
        # a converted study judges some claims at this size (else the controls above prove nothing)
        assert any(v["verdict_real"] != "not measured" for v in placebo), study


def test_placebo_and_reverse_exclude_each_other(tmp_path, capsys):
    assert main(["reproduce", "--jobs", "1000", "--output", str(tmp_path / "o"), "--placebo", "--reverse"]) == 2
    assert "not allowed with argument" in capsys.readouterr().err


def _verdict_table():
    spec = importlib.util.spec_from_file_location("verdict_table", Path(__file__).parents[1] / "benchmarks" /
                                                  "verdict_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_partial_table_says_so(tmp_path):
    """--report-only before every run finished: the docs table says which runs are missing."""
    (tmp_path / "verdicts.json").write_text(json.dumps([
        {"id": "x", "claim": "a beats b", "source": "§1", "measured": "needs b on whole", "verdict": "not measured",
         "by_how_much": "", "asserts": "difference", "mode": "real", "verdict_placebo": "not measured",
         "verdict_reverse": "not measured", "band": "a vs b: [1, 2] %", "noise": ""}]))
    (tmp_path / "manifest.json").write_text(json.dumps({"command": "x reproduce --jobs all --output o", "missing":
                                                        ["whole/b", "part-00/b"], "whole_label": "all"}))
    doc = _verdict_table().table(tmp_path, doc=True)
    assert "**Partial**" in doc and "2 not finished yet (whole/b, part-00/b)" in doc
    assert "Measured by `burstbuffer reproduce --jobs all`" in doc and "Regime checks: none" in doc
    assert "| x | a beats b | §1 | difference | not measured | not measured | not measured | a vs b: [1, 2] % |" in doc
    assert "Placebo: not run" not in doc
    # no A/A run in the folder (the analysis wrote "not run" in the placebo column): said above the table too
    v = json.loads((tmp_path / "verdicts.json").read_text())
    (tmp_path / "verdicts.json").write_text(json.dumps([dict(v[0], verdict_placebo="not run")]))
    doc = _verdict_table().table(tmp_path, doc=True)
    assert "| x | a beats b | §1 | difference | not measured | not run | not measured | a vs b: [1, 2] % |" in doc
    assert "Placebo: not run" in doc
