"""Record classes (`burstbuffer.records.Record`) behave as the data classes they replaced on the simulator's
start-up path (docs/startup.md): the same repr, ==, hash and immutability, checked beside data-class twins."""
from __future__ import annotations

import copy
import dataclasses
import math
import pickle

import pytest

from burstbuffer.platforms.simgrid_xml import HostElement, LinkElement, Machine, PlatformFile, ZoneElement
from burstbuffer.simulator.state import SimConfig
from burstbuffer.simulator.workload import Profile, SimJob, Workload as SimWorkload
from burstbuffer.workloads.batsim_json import Workload, WorkloadJob


@dataclasses.dataclass
class HostSpecTwin:
    name: str
    speed: str
    core: int = 1
    props: dict = dataclasses.field(default_factory=dict)
    zone_props: dict = dataclasses.field(default_factory=dict)
    zone: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class WorkloadJobTwin:
    id: int | str
    subtime: float
    walltime: float
    res: int
    profile: str


def test_repr_and_equality_as_a_data_class():
    h = HostElement("n0", "1Gf", props={"a": "b"})
    twin = HostSpecTwin("n0", "1Gf", props={"a": "b"})
    assert repr(h) == repr(twin).replace("HostSpecTwin", "HostElement")
    assert h == HostElement("n0", "1Gf", 1, {"a": "b"}, {}, "")
    assert h != HostElement("n0", "1Gf", props={"a": "c"})
    assert h.__eq__(twin) is NotImplemented and h != twin
    assert h.props is not HostElement("n1", "1Gf").props            # a fresh default per instance
    assert HostElement("n1", "1Gf").props is not HostElement("n2", "1Gf").props
    with pytest.raises(TypeError):
        hash(h)                                                  # eq without frozen: unhashable
    nan = float("nan")
    m = Machine(0, "n0", "compute", {}, {}, nan)
    assert m == m and m == copy.copy(m)                          # fields compared as tuples: nan is itself
    assert LinkElement("l", "1GBps") == LinkElement("l", "1GBps", "0", "SHARED")


def test_a_record_inside_itself_prints_dots():
    z = ZoneElement("z", "Full")
    z.items.append(z)
    assert repr(z) == "ZoneElement(id='z', routing='Full', props={}, items=[...])"
    spec = PlatformFile("p.xml", z, {}, set(), [])
    assert repr(spec).startswith("PlatformFile(path='p.xml', root=ZoneElement(id='z'")


def test_workload_job_is_frozen_hashed_and_pickled_as_before():
    j = WorkloadJob(7, 1.5, 100.0, 4, "p")
    twin = WorkloadJobTwin(7, 1.5, 100.0, 4, "p")
    assert repr(j) == repr(twin).replace("WorkloadJobTwin", "WorkloadJob")
    assert hash(j) == hash(twin) and j == WorkloadJob(7, 1.5, 100.0, 4, "p") and len({j, copy.copy(j)}) == 1
    with pytest.raises(AttributeError):
        j.res = 5
    with pytest.raises(AttributeError):
        del j.res
    with pytest.raises(AttributeError):
        j.other = 1
    assert pickle.loads(pickle.dumps(j)) == j and copy.deepcopy(j) == j
    assert not hasattr(j, "__dict__")


def test_workload_compares_without_its_job_objects():
    a = Workload("w", "", 4, [WorkloadJob(1, 0.0, 1.0, 1, "p")], {"p": {}}, "f.json", job_objects=[{"id": 1}])
    b = Workload("w", "", 4, [WorkloadJob(1, 0.0, 1.0, 1, "p")], {"p": {}}, "f.json")
    assert a == b and "job_objects" not in repr(a) and "_by_id" not in repr(a)
    assert a.job(1) is a.jobs[0]


def test_simulator_records():
    wl = SimWorkload("w0", "")
    prof = Profile("p", "delay", {"type": "delay", "delay": 1})
    job = SimJob("w0!1", wl, "1", 0.0, -1.0, 1, prof, {"id": "w0!1"})
    wl.jobs["1"] = job
    twin = SimJob("w0!1", wl, "1", 0.0, -1.0, 1, prof, {"id": "w0!1"})
    assert job == job and job != twin and len({job, twin}) == 2  # identity, as eq=False had it
    assert "workload=SimWorkload" not in repr(job) and "jobs={'1': ...}" in repr(job)
    assert job.composed_stack is not twin.composed_stack and job.storage_mapping == {}
    with pytest.raises(AttributeError):
        job.no_such_field = 1
    cfg = SimConfig("p.xml", ["w.json"], quiet=True)
    assert cfg == SimConfig(platform="p.xml", workloads=["w.json"], quiet=True)
    assert cfg.roles == [] and cfg.sg_cfg == [] and cfg.roles is not SimConfig("p", []).roles
    assert math.isclose(cfg.heartbeat_timeout, 30.0) and cfg.storage_sharing and cfg.machine_states


def test_replaced_is_dataclasses_replace_for_records():
    from burstbuffer.workloads.batsim_json import WorkloadJob
    j = WorkloadJob(3, 10.0, 60.0, 4, "p")
    k = j.replaced(res=8)
    assert k == WorkloadJob(3, 10.0, 60.0, 8, "p") and j.res == 4 and hash(k) != hash(j)
    with pytest.raises(TypeError):
        j.replaced(cores=2)
