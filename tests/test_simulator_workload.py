"""Workload/profile validation and wire format of the embedded simulator (no SimGrid needed)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from burstbuffer.errors import InputError
from burstbuffer.simulator.protocol import dumps, parse_allocation, parse_interval_set
from burstbuffer.simulator.workload import (DefinitionError, Workload, load_workload, parse_job, parse_profile,
                                            split_job_id)


def test_dumps_like_batsim():
    # Batsim prints every double with %f and integers as integers, compactly (docs/protocol.md)
    assert dumps({"now": 1.0, "events": [{"timestamp": 4.0551964, "data": {"res": 4, "ok": True}}]}) == \
        '{"now":1.000000,"events":[{"timestamp":4.055196,"data":{"res":4,"ok":true}}]}'
    assert dumps({"s": "w0%15!0", "x": None, "l": [1, 2.5]}) == '{"s":"w0%15!0","x":null,"l":[1,2.500000]}'


def test_interval_sets():
    assert list(parse_interval_set("0-3 7")) == [0, 1, 2, 3, 7]
    assert str(parse_interval_set("96 108")) == "96 108"
    with pytest.raises(ValueError):
        parse_interval_set("3-1")
    with pytest.raises(ValueError):
        parse_interval_set(5)


def test_allocations_parsed_once_per_text():
    # an EXECUTE_JOB's alloc: the set, its ids in increasing order, its text as Batsim prints it (normalised)
    ps, ids, text = parse_allocation("7 0-2")
    assert list(ps) == [0, 1, 2, 7] and ids == (0, 1, 2, 7) and text == "0-2 7"
    assert parse_allocation("7 0-2")[0] is ps            # remembered by text
    assert parse_allocation("0-2 7")[1:] == (ids, text)  # another text of the same set: the same ids and text
    for bad in ("3-1", 5, ["0"]):
        with pytest.raises(ValueError):
            parse_allocation(bad)


def test_profiles_batsim4_fields():
    assert parse_profile("s", {"type": "data_staging", "nb_bytes": 10, "from": "a", "to": "b"}).type == "data_staging"
    p = parse_profile("c", {"type": "parallel_homogeneous_pfs", "bytes_to_write": 5})
    assert p.data.get("storage", "pfs") == "pfs"
    # pybatsim 3.2's data-staging helper writes size/direction, which Batsim 4 rejects (docs/protocol.md)
    with pytest.raises(DefinitionError, match="nb_bytes"):
        parse_profile("s", {"type": "data_staging", "size": 10, "direction": "to_storage"})
    with pytest.raises(DefinitionError, match="n x n"):
        parse_profile("p", {"type": "parallel", "cpu": [1, 2], "com": [0, 0, 0]})
    with pytest.raises(DefinitionError, match="not supported"):
        parse_profile("m", {"type": "smpi"})
    with pytest.raises(DefinitionError, match="unknown profile"):
        parse_profile("m", {"type": "composed", "seq": ["nope"]}, known={})


def test_jobs():
    wl = Workload("w0%15", "")
    wl.profiles["p"] = parse_profile("p", {"type": "delay", "delay": 1})
    j = parse_job({"profile": "p", "id": "w0%15!0", "res": 2, "walltime": 12.5, "subtime": 1.0}, wl,
                  expected_id="w0%15!0")
    assert (j.id, j.name, j.walltime, j.res) == ("w0%15!0", "0", 12.5, 2)
    assert list(j.description) == ["profile", "id", "res", "walltime", "subtime"]
    assert parse_job({"id": 3, "subtime": 0, "res": 1, "profile": "p"}, wl).walltime == -1
    for bad, msg in [({"id": 1, "subtime": 0, "res": 0, "profile": "p"}, "positive"),
                     ({"id": 1, "subtime": 0, "res": 1, "profile": "p", "walltime": 0}, "walltime"),
                     ({"id": 1, "res": 1, "profile": "p"}, "subtime"),
                     ({"id": 1, "subtime": 0, "res": 1, "profile": "q"}, "does not exist")]:
        with pytest.raises(DefinitionError, match=msg):
            parse_job(bad, wl)
    assert split_job_id("w0!15") == ("w0", "15")
    with pytest.raises(DefinitionError):
        split_job_id("15")


def test_load_workload_errors(tmp_path):
    f = tmp_path / "w.json"
    f.write_text(json.dumps({"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"},
                                                   {"id": 1, "subtime": 1, "res": 1, "profile": "p"}],
                             "profiles": {"p": {"type": "delay", "delay": 1}}}))
    with pytest.raises(InputError, match=r"w\.json: job 1: duplicate job id$"):
        load_workload(str(f), "w0")
    f.write_text(json.dumps({"jobs": [], "profiles": {}}))
    with pytest.raises(InputError, match="nb_res"):
        load_workload(str(f), "w0")
    kth = load_workload(str(Path(__file__).resolve().parent.parent / "workloads" / "kth-1000.json"), "w0")
    assert len(kth.jobs) == 1000 and kth.jobs["15"].description["id"] == "w0!15"
