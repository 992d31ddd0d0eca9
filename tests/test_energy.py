"""Energy (``simulate -E``): the platform's energy properties as SimGrid's plugin and Batsim 4.2.1 read them
(`burstbuffer.simulator.energy.check_platform`), and the one-line errors of bad ones (file, host, reason;
exit 2). No simulation runs here (tests/test_energy_sim.py; beside real Batsim: tests/test_energy_batsim.py).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from burstbuffer.errors import InputError
from burstbuffer.platforms.simgrid_xml import parse_platform, resolve_machines
from burstbuffer.simulator import cli
from burstbuffer.simulator.energy import COMPUTATION, SLEEP, VIRTUAL, check_platform

DATA = Path(__file__).parent / "data"
PLATFORM = DATA / "energy4.xml"
GOOD_HOST = ('speed="1Gf, 0.5Gf, 1e-6Mf, 0.5f, 0.2f" pstate="0">\n'
             '            <prop id="wattage_per_state" value="95:100:200, 90:93:140, 10:10:10, 120:120:120, '
             '150:150:150"/>\n'
             '            <prop id="wattage_off" value="9"/>\n'
             '            <prop id="sleep_pstates" value="2:3:4"/>')


def _check(path):
    spec = parse_platform(str(path))
    return check_platform(spec, resolve_machines(spec, {}, "master"))


def _variant(tmp_path, new_host: str) -> Path:
    """energy4.xml with host2's definition replaced by `new_host` (the others unchanged)."""
    text = PLATFORM.read_text()
    first = text.index('<host id="host2" ') + len('<host id="host2" ')
    assert text[first:].startswith(GOOD_HOST)
    p = tmp_path / "bad.xml"
    p.write_text(text[:first] + new_host + text[first + len(GOOD_HOST):])
    return p


def test_pstates_of_the_test_platform():
    power = _check(PLATFORM)
    assert len(power) == 4
    for p in power:
        assert p.kinds == [COMPUTATION, COMPUTATION, SLEEP, VIRTUAL, VIRTUAL]
        assert p.sleep == {2: (3, 4)}   # sleep pstate 2: switch OFF through 3, ON through 4


BAD = [
    ('speed="1Gf, 0.5Gf">', "no 'wattage_per_state' property"),
    ('speed="1Gf, 0.5Gf"><prop id="wattage_per_state" value="95:200"/>', "1 power profiles for 2 pstates"),
    ('speed="1Gf"><prop id="wattage_per_state" value="95"/>', "expected Idle:AllCores"),
    ('speed="1Gf"><prop id="wattage_per_state" value="95:x"/>', "not numbers"),
    ('speed="1Gf"><prop id="wattage_per_state" value="95:100"/><prop id="wattage_off" value="off"/>',
     "'wattage_off' is 'off'"),
    ('speed="1Gf, 1f, 1f"><prop id="wattage_per_state" value="1:2, 1:2, 1:2"/>'
     '<prop id="sleep_pstates" value="1:2"/>', "not three colon-separated pstates"),
    ('speed="1Gf, 1f, 1f"><prop id="wattage_per_state" value="1:2, 1:2, 1:2"/>'
     '<prop id="sleep_pstates" value="1:2:3"/>', "pstate 3 does not exist (3 pstates)"),
    ('speed="1Gf, 1f, 1f"><prop id="wattage_per_state" value="1:2, 1:2, 1:2"/>'
     '<prop id="sleep_pstates" value="1:-2:2"/>', "must be unsigned integers"),
    ('speed="1Gf, 1f, 1f, 1f"><prop id="wattage_per_state" value="1:2, 1:2, 1:2, 1:2"/>'
     '<prop id="sleep_pstates" value="1:2:3,2:1:3"/>', "already a virtual pstate"),
    ('speed="1Gf, 0f"><prop id="wattage_per_state" value="1:2, 1:2"/>', "computation pstate 1 has a non-positive"),
]


@pytest.mark.parametrize("host,reason", BAD)
def test_bad_energy_properties_are_one_line_input_errors(tmp_path, host, reason):
    p = _variant(tmp_path, host)
    with pytest.raises(InputError) as exc:
        _check(p)
    msg = str(exc.value)
    assert str(p) in msg and "host 'host2'" in msg and reason in msg and "\n" not in msg


def test_simulate_E_with_a_bad_platform_exits_2_with_one_line(tmp_path, capsys):
    p = _variant(tmp_path, BAD[0][0])
    rc = cli.main(["-p", str(p), "-w", str(DATA / "energy-jobs.json"), "-E", "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert err[0].startswith("burstbuffer simulate: error: ") and "host 'host2'" in err[0]


def test_simulate_E_needs_a_platform_simgrids_loader_reads(capsys):
    rc = cli.main(["-p", str(Path(__file__).parent.parent / "platforms" / "dragonfly96.xml"),
                   "-w", str(DATA / "energy-jobs.json"), "-E", "-q"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "energy needs a platform SimGrid's XML loader reads" in err[0]


def test_without_E_the_energy_properties_are_not_checked():
    """Batsim reads them only with -E: a platform without them runs as before (cluster96.xml has none)."""
    from burstbuffer.simulator.server import SimConfig, Simulator
    Simulator(SimConfig(platform=str(DATA / "cluster96.xml"), workloads=[str(DATA / "energy-jobs.json")]))
    with pytest.raises(InputError, match="wattage_per_state"):
        Simulator(SimConfig(platform=str(DATA / "cluster96.xml"), workloads=[str(DATA / "energy-jobs.json")],
                            energy=True))
