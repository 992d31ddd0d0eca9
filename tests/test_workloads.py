"""Workloads against the paper's data (docs/workload.md; workloads/, tests/data/reference/): SWF selection, BB model,
Batsim JSON, split."""
import argparse
import gzip
import json
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from burstbuffer.errors import InputError
from burstbuffer.workloads import (BBModel, Workload, convert_records, load_workload, read_swf,
                                   split_workload, workload_from_dict, write_workload)
from burstbuffer.workloads.cli import platform_params, register
from burstbuffer.workloads.swf import parse_swf_line

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "tests" / "data" / "reference"
SWF = ROOT / "workloads" / "KTH-SP2-1996-2.1-cln.swf.gz"
REF1000 = ROOT / "workloads" / "kth-1000.json"          # byte-identical to the artifact's io-aware-1000 file
SPLIT = ROOT / "workloads" / "KTH-split"


def keys(jobs):
    """(id, subtime, walltime, res) of each job, from Job objects or JSON dicts."""
    return [(j["id"], j["subtime"], j["walltime"], j["res"]) if isinstance(j, dict)
            else (j.id, j.subtime, j.walltime, j.res) for j in jobs]


def long_bb(jobs, profiles):
    """Per-node bb of long jobs (walltime > 120 s), rounded to 10 kB: the artifact's
    'distinct bb' correction moves a few bytes, which must not count as a difference."""
    return np.round(np.array([profiles[j["profile"]]["bb"] for j in jobs if j["walltime"] > 120]), -4)


def coms(jobs, profiles):
    return np.array([profiles[j["profile"]]["com"] for j in jobs if j["res"] > 1])


@pytest.fixture(scope="module")
def records():
    return read_swf(SWF)


@pytest.fixture(scope="module")
def ref1000():
    return json.loads(REF1000.read_text())


@pytest.fixture(scope="module")
def ref_parts():
    return [json.loads(gzip.decompress((SPLIT / f"part-{k}.json.gz").read_bytes())) for k in range(16)]


@pytest.fixture(scope="module")
def full(records):
    return convert_records(records, name="KTH-SP2-1996-2.1-cln", seed=0, rule="artifact")


def as_doc(w: Workload):
    return json.loads(json.dumps(w.to_dict()))


# --- SWF selection and the 1000-job workload --------------------------------------------------
def test_1000_jobs_match_the_reference(records, ref1000):
    conv = convert_records(records, name="KTH-SP2-1996-2.1-cln", from_job=15, max_records=1000, seed=0,
                           rule="artifact")
    doc = as_doc(conv.workload)
    assert keys(doc["jobs"]) == keys(ref1000["jobs"])          # ids, subtimes (first at 1), walltimes, res
    assert (doc["name"], doc["description"], doc["nb_res"]) == \
        (ref1000["name"], ref1000["description"], ref1000["nb_res"])
    assert [j["profile"] for j in doc["jobs"]] == [j["profile"] for j in ref1000["jobs"]]
    # short jobs: same ones, 10 MB per node (the reference lowers some by a few bytes, see BBModel)
    short = [j["id"] for j in doc["jobs"] if doc["profiles"][j["profile"]]["bb"] == 10**7]
    ref_short = [j["id"] for j in ref1000["jobs"] if 10**7 - 1000 < ref1000["profiles"][j["profile"]]["bb"] <= 10**7]
    assert short == ref_short and len(short) == conv.short_jobs == 243
    # random parts: same distributions (two-sample Kolmogorov-Smirnov)
    assert stats.ks_2samp(long_bb(doc["jobs"], doc["profiles"]),
                          long_bb(ref1000["jobs"], ref1000["profiles"])).pvalue > 0.01
    assert stats.ks_2samp(coms(doc["jobs"], doc["profiles"]), coms(ref1000["jobs"], ref1000["profiles"])).pvalue > 0.01
    assert all(doc["profiles"][j["profile"]]["com"] == 0 for j in doc["jobs"] if j["res"] == 1)
    for p in doc["profiles"].values():
        assert all(isinstance(p[k], int) for k in ("cpu", "com", "bb"))


def test_whole_trace_counts(full, records):
    sel = full.selection
    assert sel.scanned == len(records) == 28476
    assert len(full.workload.jobs) == 28467
    assert dict(sel.ignored) == {"run time <= 0": 8, "requested processors <= 0": 1}
    assert full.oversized == 14                                   # > 96 processors: kept, rejected at run time
    dropped = convert_records(records, name="kth", seed=0, drop_oversized=True, rule="artifact")
    assert len(dropped.workload.jobs) == 28453                    # the paper's count (docs/workload.md)
    assert dropped.workload.jobs[0].subtime == 1


def test_compute_formula_matches_the_reference_to_the_flop(records, ref1000, ref_parts):
    """cpu = round(1e9 × max(run − 40 bb / 1.25e9, 0.05 run)); short jobs 1e9 × run.
    The artifact computed cpu before lowering a duplicate (walltime, bb) by a few bytes, so a
    job's bb may sit k bytes below the one its cpu was computed from."""
    by_id = {r.job_number: r for r in records}
    m = BBModel()
    exact = total = 0
    for doc in [ref1000] + ref_parts:
        jobs = doc["jobs"]
        run = np.array([by_id[j["id"]].run_time for j in jobs], float)
        short = np.array([j["walltime"] <= 120 for j in jobs])
        bb = np.array([doc["profiles"][j["profile"]]["bb"] for j in jobs], np.int64)
        cpu = np.array([doc["profiles"][j["profile"]]["cpu"] for j in jobs], np.int64)
        assert np.array_equal(cpu[short], (run[short] * 10**9).astype(np.int64))
        hit = m.compute(run, bb, short) == cpu
        exact += int(hit.sum())
        total += len(jobs)
        for k in np.flatnonzero(~hit):
            assert any(m.compute(run[k:k + 1], bb[k:k + 1] + d, short[k:k + 1])[0] == cpu[k] for d in range(1, 200))
        # the clip and the capacity rule bound every long job's request
        res = np.array([j["res"] for j in jobs])
        cap = 40 * 10**9 // -(-res // 12)
        assert np.all(bb[~short] <= np.minimum(cap[~short], 40 * 10**9))
        assert np.all(bb[~short] > 10**8 - 1000)
    assert total == 1000 + 28468 and exact / total > 0.99


def test_capacity_rule():
    m = BBModel()
    kib = np.array([39e9, 39e9, 39e9, 1e6, 1.0, 1e12]) / 1024
    res = np.array([79, 99, 64, 64, 1, 1])
    bb = m.per_node_bb(kib, res)
    assert bb.tolist() == [40 * 10**9 // 7, 40 * 10**9 // 9, 40 * 10**9 // 6, 10**8, 10**8, 40 * 10**9]
    # generalised to B BB nodes: 10 nodes of 3 GB on 2 BB nodes of 10 GB -> 10 GB // 5
    m2 = BBModel(bb_capacity=10 * 10**9, bb_nodes=2)
    assert m2.per_node_bb(np.array([3e9 / 1024]), np.array([10])).tolist() == [2 * 10**9]
    assert m2.per_node_bb(np.array([3e9 / 1024]), np.array([6])).tolist() == [3 * 10**9]


def test_determinism_under_seed():
    m = BBModel()
    wall, run, res = [60, 3600, 7200, 500] * 50, [30, 3000, 100, 400] * 50, [1, 8, 64, 2] * 50
    a = m.draw(wall, run, res, seed=7)
    b = m.draw(wall, run, res, seed=7)
    c = m.draw(wall, run, res, seed=8)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0]) and not np.array_equal(a[2], c[2])
    assert np.all(a[0][::4] == 10**7) and np.all(a[2][::4] == 0)      # short one-node jobs


# --- the 16 parts -------------------------------------------------------------------------------
def _yaml_int(text, key):
    return int(re.search(rf"^{key}:\s*(\d+)", text, re.M).group(1))


def test_parts_from_the_artifact_yaml_match_exactly(records, ref_parts):
    """Each reference part was made from the SWF with from_job_number / num_jobs (SWF records)."""
    for k, ref in enumerate(ref_parts):
        y = (SPLIT / f"part-{k}.yaml").read_text()
        conv = convert_records(records, name="KTH-SP2-1996-2.1-cln", seed=k,
                               from_job=_yaml_int(y, "from_job_number"), max_records=_yaml_int(y, "num_jobs"),
                               rule="artifact")
        doc = as_doc(conv.workload)
        assert keys(doc["jobs"]) == keys(ref["jobs"]), k
        assert doc["description"] == ref["description"], k


def test_split_reproduces_the_reference_parts(full, ref_parts, tmp_path):
    path = write_workload(tmp_path / "kth.json", full.workload)
    parts = split_workload(load_workload(path), weeks=3)
    assert len(parts) == 16
    for k in range(15):
        assert keys(parts[k].jobs) == keys(ref_parts[k]["jobs"]), k
    # part 15: the reference repeats job 27154 (its hand-copied bounds start at 27154, not 27155)
    ref15 = ref_parts[15]["jobs"]
    assert ref15[0]["id"] == 27154 and parts[14].jobs[-1].id == 27154
    shift = ref15[1]["subtime"] - 1
    assert keys(parts[15].jobs) == [(i, s - shift, w, r) for i, s, w, r in keys(ref15[1:])]
    assert sum(len(p.jobs) for p in parts) == len(full.workload.jobs)
    # per-node BB requests and communication: same distribution as the reference parts
    ours = as_doc(full.workload)
    ref_jobs = [j for p in ref_parts for j in p["jobs"]]
    ref_prof = {k: v for p in ref_parts for k, v in p["profiles"].items()}
    assert stats.ks_2samp(long_bb(ours["jobs"], ours["profiles"]), long_bb(ref_jobs, ref_prof)).pvalue > 0.01
    assert stats.ks_2samp(coms(ours["jobs"], ours["profiles"]), coms(ref_jobs, ref_prof)).pvalue > 0.01
    n_short = sum(1 for j in ref_jobs if j["walltime"] <= 120 and j["id"] != 27154)
    assert full.short_jobs == n_short
    # ids, walltimes, res and profiles are kept; each part starts at t = 1
    for p in parts:
        assert p.jobs[0].subtime == 1
        for j in p.jobs:
            assert p.profiles[j.profile] == ours["profiles"][j.profile]


def test_split_is_a_partition_in_order():
    jobs = [{"id": i, "subtime": t, "walltime": 100, "res": 1, "profile": "p"}
            for i, t in enumerate([5, 5, 6, 100, 260, 261, 999, 1000])]
    w = workload_from_dict({"nb_res": 4, "jobs": jobs, "profiles": {"p": {"type": "delay", "delay": 1}}})
    parts = split_workload(w, parts=4)          # span 995 s -> period 249 s: [5, 254) [254, 503) [503, 752) [752, end]
    assert [[j.id for j in p.jobs] for p in parts] == [[0, 1, 2, 3], [4, 5], [], [6, 7]]
    assert [j.subtime for j in parts[3].jobs] == [1, 2]
    assert len(split_workload(w, weeks=1)) == 1


# --- malformed input: one-line errors ---------------------------------------------------------
def test_malformed_swf_line_names_the_line(tmp_path):
    good = " ".join(["1", "10", "0", "5", "1"] + ["-1"] * 13)
    f = tmp_path / "t.swf"
    f.write_text("; header\n" + good + "\n" + " ".join(["2"] * 17) + "\n")
    with pytest.raises(InputError) as e:
        read_swf(f)
    assert "line 3" in str(e.value) and str(f) in str(e.value) and "\n" not in str(e.value)
    f.write_text(good + "\n\n" + good.replace(" 5 ", " five ", 1) + "\n")
    with pytest.raises(InputError, match=r"line 3: field run_time is not a number: 'five'"):
        read_swf(f)
    assert parse_swf_line("  ; comment") is None and parse_swf_line("   ") is None
    assert parse_swf_line(good.replace(" 5 ", " 5.5 ", 1)).run_time == 5.5


def test_gzip_swf_reads_like_the_plain_file(tmp_path):
    lines = "; header\n" + "".join(" ".join([str(i), str(10 * i), "0", "5", "2"] + ["-1"] * 13) + "\n"
                                   for i in range(1, 4))
    plain, packed = tmp_path / "t.swf", tmp_path / "t.swf.gz"
    plain.write_text(lines)
    packed.write_bytes(gzip.compress(lines.encode()))
    assert read_swf(packed) == read_swf(plain) and len(read_swf(plain)) == 3
    from burstbuffer.workloads import convert_swf
    assert convert_swf(packed).workload.name == convert_swf(plain).workload.name == "t"
    bad = tmp_path / "bad.swf.gz"
    bad.write_bytes(gzip.compress(lines.encode())[:-12])          # truncated: no end of stream
    with pytest.raises(InputError) as e:
        read_swf(bad)
    assert str(e.value).startswith(f"{bad}: line ") and "\n" not in str(e.value)


def test_reproduce_unpacks_the_shipped_kth_parts(tmp_path):
    from burstbuffer.reproduce import select_workloads
    args = argparse.Namespace(workload=None, jobs="none", parts=True, parts_from=None, split=None)
    whole, parts, notes = select_workloads(args, tmp_path)
    assert whole is None and [p.name for p in parts] == [f"part-{k}.json" for k in range(16)]
    assert all(p.parent == tmp_path / "kth-split" for p in parts)
    assert sum(len(load_workload(p).jobs) for p in parts) == 28468     # 28,467 jobs, 27154 in two parts
    assert json.loads(parts[3].read_text()) == json.loads(gzip.decompress((SPLIT / "part-3.json.gz").read_bytes()))


def _doc():
    return {"name": "w", "nb_res": 4,
            "jobs": [{"id": 1, "subtime": 1, "walltime": 60, "res": 2, "profile": "1"},
                     {"id": 5, "subtime": 3, "walltime": 60, "res": 2, "profile": "5"}],
            "profiles": {"1": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0, "bb": 10},
                         "5": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0, "bb": 10}}}


@pytest.mark.parametrize("edit, item, reason", [
    (lambda d: d["jobs"][1].pop("res"), "job 5", "missing field 'res'"),
    (lambda d: d["jobs"][1].update(walltime="60"), "job 5", "field 'walltime' must be a number"),
    (lambda d: d["jobs"][1].update(profile="9"), "job 5", "profile '9' is not defined"),
    (lambda d: d["jobs"][1].update(id=1), "job 1", "duplicate job id"),
    (lambda d: d["profiles"]["5"].pop("bb"), "profile 5", "missing field 'bb'"),
    (lambda d: d["profiles"]["5"].update(cpu=None), "profile 5", "field 'cpu' must be a number"),
    (lambda d: d["profiles"]["5"].update(bb=1.5), "profile 5", "field 'bb' must be an integer"),
    (lambda d: d.pop("nb_res"), "workload", "missing field 'nb_res'"),
])
def test_bad_workload_json_gives_one_line_error(tmp_path, edit, item, reason):
    d = _doc()
    edit(d)
    f = tmp_path / "w.json"
    f.write_text(json.dumps(d))
    with pytest.raises(InputError) as e:
        load_workload(f)
    msg = str(e.value)
    assert msg.startswith(f"{f}: {item}: ") and reason in msg and "\n" not in msg


def test_invalid_json_and_roundtrip(tmp_path):
    f = tmp_path / "w.json"
    f.write_text('{"nb_res": 4,\n "jobs": [}')
    with pytest.raises(InputError, match=r"line 2 column 11: invalid JSON"):
        load_workload(f)
    w = workload_from_dict(_doc())
    out = write_workload(tmp_path / "sub" / "w.json", w)
    back = load_workload(out)
    assert back.jobs == w.jobs and back.profiles == w.profiles and back.nb_res == 4
    assert back.job(5).res == 2 and back.bb_of(back.job(5)) == 10
    assert os.listdir(out.parent) == ["w.json"]                 # no temporary file left behind


# --- command line -------------------------------------------------------------------------------
def _parser():
    p = argparse.ArgumentParser(prog="burstbuffer")
    register(p.add_subparsers(dest="command"))
    return p


def test_cli_from_swf_and_split(tmp_path, capsys, ref1000):
    p = _parser()
    out = tmp_path / "w.json"
    args = p.parse_args(["workload", "from-swf", str(SWF), "--output", str(out), "--jobs", "1000",
                         "--from-job", "15", "--seed", "3", "--platform", str(REF / "dragonfly96.yaml"),
                         "--artifact-selection"])
    assert args.func(args) == 0
    text = capsys.readouterr().out
    assert "kept 1000 of 1000 records" in text and "243 short" in text
    assert keys(load_workload(out).jobs) == keys(ref1000["jobs"])
    args = p.parse_args(["workload", "split", str(out), "--weeks", "1", "--output", str(tmp_path / "parts")])
    assert args.func(args) == 0
    parts = sorted((tmp_path / "parts").glob("part-*.json"))
    span = ref1000["jobs"][-1]["subtime"] - 1
    assert len(parts) == math.ceil(span / (7 * 86400))
    assert sum(len(load_workload(f).jobs) for f in parts) == 1000
    args = p.parse_args(["workload", "from-swf", str(SWF), "-o", str(out), "--platform", str(REF / "dragonfly96.xml")])
    with pytest.raises(InputError, match="give --nb-res --bb-nodes --bb-capacity"):
        args.func(args)


def test_platform_params_yaml_and_xml(tmp_path):
    y = tmp_path / "p.yaml"
    y.write_text("nb_res: 96  # compute\nburst_buffer_capacity: 40  # GB\nnum_groups: 3\nnum_chassis: 4\n")
    assert platform_params(y) == {"nb_res": 96, "bb_capacity": 40 * 10**9, "bb_nodes": 12}
    x = tmp_path / "p.xml"
    x.write_text("""<platform version="4.1"><zone id="z" routing="Full">
      <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/><host id="c" speed="1Gf"/>
      <host id="bb0" speed="1Gf"><prop id="role" value="storage"/><prop id="burst_buffer_capacity" value="8GB"/></host>
      <host id="pfs" speed="0"><prop id="role" value="storage"/></host>
      <host id="master_host" speed="1Gf"/></zone></platform>""")
    assert platform_params(x) == {"nb_res": 3, "bb_nodes": 1, "bb_capacity": 8 * 10**9}
    # read as the simulator reads it: a BB node by the storage_nodes list, a capacity on its zone, no master
    x.write_text("""<platform version="4.1"><zone id="z" routing="Full">
      <prop id="storage_nodes" value="bb0,bb1"/><prop id="burst_buffer_capacity" value="2GB"/>
      <host id="a" speed="1Gf"/><host id="bb0" speed="1Gf"/><host id="bb1" speed="1Gf"/>
      <host id="pfs" speed="0"><prop id="role" value="storage"/></host>
      <host id="master_host" speed="1Gf"/></zone></platform>""")
    assert platform_params(x) == {"nb_res": 1, "bb_nodes": 2, "bb_capacity": 2 * 10**9}
    x.write_text(x.read_text().replace("master_host", "head"))
    with pytest.raises(InputError, match="no master host"):
        platform_params(x)


from hypothesis import given, settings, strategies as st  # noqa: E402
from .conftest import examples  # noqa: E402


@settings(max_examples=examples(0.6), deadline=None)
@given(st.lists(st.integers(1, 10**7), min_size=1, max_size=60), st.integers(1, 8))
def test_split_property(subtimes, n):
    subtimes = sorted(subtimes)
    jobs = [{"id": i, "subtime": t, "walltime": 10, "res": 1, "profile": "p"} for i, t in enumerate(subtimes)]
    w = workload_from_dict({"nb_res": 1, "jobs": jobs, "profiles": {"p": {"type": "delay", "delay": 1}}})
    parts = split_workload(w, parts=n)
    assert len(parts) == n
    assert [j.id for p in parts for j in p.jobs] == list(range(len(jobs)))   # a partition, in order
    for p in parts:
        if p.jobs:
            assert p.jobs[0].subtime == 1
            base = subtimes[p.jobs[0].id] - 1
            assert all(j.subtime == subtimes[j.id] - base for j in p.jobs)


def test_duplicate_job_number_is_an_error(tmp_path):
    rec = " ".join(["7", "10", "0", "5", "1", "-1", "-1", "1", "60"] + ["-1"] * 9)
    f = tmp_path / "d.swf"
    f.write_text(rec + "\n" + rec + "\n")
    from burstbuffer.workloads import convert_swf
    with pytest.raises(InputError, match=r"d.swf: line 2: job number 7 appears twice"):
        convert_swf(f)


def test_cli_from_swf_rescales_for_a_larger_machine(tmp_path, capsys):
    """`from-swf --width K --speedup S --days D` (issue 17, what benchmarks/bench_platform_scale.py runs on the
    10,800-host and Theta platforms): every job asks for K times its processors, is submitted S times faster
    (times after the first, which stays at t = 0), sends com / K bytes per pair where the draw is otherwise
    the same, and --days keeps the records submitted within D days of the first after the speed-up."""
    p = _parser()

    def convert(name, *extra):
        out = tmp_path / name
        args = p.parse_args(["workload", "from-swf", str(SWF), "--output", str(out), "--jobs", "400", *extra])
        assert args.func(args) == 0
        return json.loads(out.read_text())

    plain = convert("plain.json")
    wide = convert("wide.json", "--width", "3", "--speedup", "2")
    assert [j["id"] for j in wide["jobs"]] == [j["id"] for j in plain["jobs"]]
    same_draw = 0
    for a, b in zip(plain["jobs"], wide["jobs"]):
        assert b["res"] == 3 * a["res"]
        assert b["subtime"] * 2 == pytest.approx(a["subtime"], abs=1e-6)
        pa, pb = plain["profiles"][a["profile"]], wide["profiles"][b["profile"]]
        if (pa["cpu"], pa["bb"]) == (pb["cpu"], pb["bb"]) and a["res"] > 1:   # one node: no com drawn
            assert pb["com"] == round(pa["com"] / 3)
            same_draw += 1
    assert same_draw > 200
    cut = convert("cut.json", "--width", "3", "--speedup", "2", "--days", "0.5")
    assert 0 < len(cut["jobs"]) < len(wide["jobs"])
    assert max(j["subtime"] for j in cut["jobs"]) <= 0.5 * 86400
    assert cut["jobs"] == wide["jobs"][:len(cut["jobs"])]
    capsys.readouterr()
    with pytest.raises(SystemExit):
        p.parse_args(["workload", "from-swf", str(SWF), "--output", str(tmp_path / "x.json"), "--width", "0"])
