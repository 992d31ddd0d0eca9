"""The scheduler's platform view, built from a real Batsim 4.2.1 SIMULATION_BEGINS (docs/protocol.md,
docs/platform.md)."""
import json
from pathlib import Path

import pytest

from burstbuffer.errors import InputError
from burstbuffer.platforms.model import Dragonfly, Platform
from burstbuffer.platforms.units import parse_bytes

CAPTURE = Path(__file__).resolve().parent / "data" / "batsim-4.2.1" / "protocol-full-run.jsonl"


@pytest.fixture(scope="module")
def begins():
    raw = json.loads(CAPTURE.open().readline())["raw"]
    return json.loads(raw)["events"][0]["data"]


def test_resources_are_mapped_by_name(begins):
    p = Platform.from_simulation_begins(begins, bb_capacity="40GB")
    assert p.nb_compute == 96
    assert len(p.bb_capacity) == 12 and set(p.bb_capacity.values()) == {40 * 10**9}
    assert p.total_bb == 480 * 10**9
    assert p.names[p.pfs] == "pfs"
    assert sorted(p.names[b] for b in p.bb_capacity) == sorted(f"node_{9 * c}" for c in range(12))
    assert p.names[0] == "node_1"          # SimGrid host order: names sorted as strings


def test_bb_preference_is_chassis_then_group_then_any(begins):
    p = Platform.from_simulation_begins(begins, bb_capacity="40GB")
    by_name = {n: i for i, n in p.names.items()}
    pref = [p.names[b] for b in p.bb_preference(by_name["node_40"])]   # chassis 4 (group 1)
    assert pref[0] == "node_36"
    assert set(pref[1:4]) == {"node_45", "node_54", "node_63"}       # the rest of group 1
    assert len(pref) == 12
    pref = [p.names[b] for b in p.bb_preference(by_name["node_107"])]  # last chassis of group 2
    assert pref[0] == "node_99"


def test_capacity_from_zone_property_and_host_property(begins):
    data = json.loads(json.dumps(begins))
    for r in data["storage_resources"]:
        if r["name"] != "pfs":
            r["zone_properties"] = {"burst_buffer_capacity": "8GB"}
    data["storage_resources"][0]["properties"]["burst_buffer_capacity"] = "1TB"
    p = Platform.from_simulation_begins(data)
    assert sorted(p.bb_capacity.values()) == [8 * 10**9] * 11 + [10**12]


def test_missing_capacity_or_storage_is_a_one_line_error(begins):
    with pytest.raises(InputError, match="node_0: storage node has no burst_buffer_capacity"):
        Platform.from_simulation_begins(begins)
    data = dict(begins, storage_resources=[r for r in begins["storage_resources"] if r["name"] == "pfs"])
    with pytest.raises(InputError, match="no burst-buffer storage node"):
        Platform.from_simulation_begins(data, bb_capacity="40GB")
    with pytest.raises(InputError, match="burst_buffer_capacity"):
        Platform.from_simulation_begins(begins, bb_capacity="40 parsecs")


def test_units_and_dragonfly_shape():
    assert parse_bytes("40GB") == 40 * 10**9
    assert parse_bytes("1.5MB") == 1_500_000
    assert parse_bytes("4GiB") == 4 * 2**30
    with pytest.raises(ValueError):
        parse_bytes("-3")
    d = Dragonfly.parse("3,1;4,1;3,1;3")
    assert d == Dragonfly(3, 4, 3, 3)
    assert d.coordinates(0) == (0, 0) and d.coordinates(9) == (0, 1) and d.coordinates(36) == (1, 4)
    assert d.coordinates(107) == (2, 11)
