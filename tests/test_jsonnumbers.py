"""Batsim's JSON numbers (`burstbuffer.simulator.jsonnumbers`): RapidJSON 1.1.0's default parse and Batsim's
write-as-%f-and-read-again of registered jobs and profiles."""
from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from burstbuffer.simulator.jsonnumbers import loads, read_float, read_int, rewritten



def test_short_numbers_are_exact():
    for s in ["0", "0.5", "-2.25", "1e22", "123456789012345", "0.000123", "12345.678901", "-0.0", "3e-22"]:
        assert read_float(s) == float(s)


def test_seventeen_digits_as_rapidjson_reads_them():
    # hand-checked: 41477507065493334 (the first 17 digits) is rounded to the double 41477507065493336, the
    # last two digits are dropped (17 significant digits read), then /1e4: 1 ulp above the nearest double
    assert read_float("4147750706549.333496") == float.fromhex("0x1.e2dc9a8ebaaacp+41")
    assert float("4147750706549.333496") == float.fromhex("0x1.e2dc9a8ebaaabp+41")
    # with 17 digits the integer significand is exact but above 2^53: rounded once, then scaled
    assert read_float("0.30000000000000004") == 0.30000000000000004


def test_big_integers_and_errors():
    assert read_int("18446744073709551615") == 2 ** 64 - 1  # uint64 kept
    assert read_int("-9223372036854775808") == -2 ** 63      # int64 kept
    assert isinstance(read_int("18446744073709551616"), float)  # beyond: a double
    with pytest.raises(ValueError):
        read_float("1e400")
    with pytest.raises(ValueError):
        loads('{"now": 1e400}')


def test_registered_objects_are_rewritten_as_batsim_does():
    prof = loads('{"type": "parallel_homogeneous", "cpu": 4147750706549.3335, "com": 126975988.0, "n": 3}')
    assert prof["cpu"] == float.fromhex("0x1.e2dc9a8ebaaabp+41")  # the message itself: read exactly
    again = rewritten(prof)
    assert again["cpu"] == float.fromhex("0x1.e2dc9a8ebaaacp+41")  # "4147750706549.333496", read again
    assert again["com"] == 126975988.0 and again["n"] == 3 and isinstance(again["n"], int)
    assert rewritten({"walltime": 1.23456789}) == {"walltime": 1.234568}  # six decimals survive
    assert rewritten([float("inf")]) == [float("inf")]


def _real_rapidjson(tmp: Path):
    cxx = shutil.which("c++") or shutil.which("g++")
    if not cxx or not Path("/usr/include/rapidjson/document.h").exists():
        pytest.skip("needs a C++ compiler and RapidJSON's headers (rapidjson-dev)")
    src = tmp / "lines.cpp"
    src.write_text(r'''#include <rapidjson/document.h>
#include <cstdio>
#include <iostream>
#include <string>
int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    rapidjson::Document d; d.Parse(line.c_str());
    if (d.HasParseError() || !d.IsNumber()) { printf("ERR\n"); continue; }
    if (d.IsDouble()) printf("D %a\n", d.GetDouble());
    else if (d.IsUint64()) printf("U %llu\n", (unsigned long long)d.GetUint64());
    else printf("I %lld\n", (long long)d.GetInt64());
  }
}
''')
    exe = tmp / "lines"
    subprocess.run([cxx, "-O2", "-o", str(exe), str(src)], check=True)
    return exe


def test_same_as_the_real_rapidjson_on_random_literals(tmp_path):
    exe = _real_rapidjson(tmp_path)
    rng = random.Random(7)
    lits = []
    for k in range(20000):
        x = rng.uniform(0, 1) * 10 ** rng.uniform(-12, 20) * rng.choice([1, -1])
        c = k % 6
        s = (repr(x), "%f" % x, "%.17g" % x, "%.*e" % (rng.randint(0, 25), x),
             str(rng.randint(0, 1 << 70)), "0." + "0" * rng.randint(0, 30) + str(rng.randint(1, 10 ** 18)))[c]
        lits.append(s)
    out = subprocess.run([str(exe)], input="\n".join(lits) + "\n", capture_output=True, text=True,
                         check=True).stdout.split("\n")
    moved = 0
    for s, o in zip(lits, out):
        is_int = not any(ch in s for ch in ".eE")
        try:
            got = read_int(s) if is_int else read_float(s)
        except ValueError:
            got = "ERR"
        want = "ERR" if o == "ERR" else float.fromhex(o[2:]) if o[0] == "D" else int(o[2:])
        assert got == want and type(got) is type(want), (s, o, got)
        moved += got != "ERR" and not is_int and got != float(s)
    assert moved > 100  # the cases that matter were exercised: RapidJSON is 1 ulp off on them


def test_the_simulator_reads_workload_files_as_batsim_does(tmp_path):
    from burstbuffer.simulator.workload import load_workload
    path = tmp_path / "w.json"
    path.write_text('{"nb_res": 4, "jobs": [{"id": 1, "subtime": 0, "walltime": 97.99955000000045, "res": 2, '
                    '"profile": "p"}], "profiles": {"p": {"type": "parallel_homogeneous", '
                    '"cpu": 4147750706549.333496, "com": 0}}}')
    wl = load_workload(str(path), "w0")
    assert wl.profiles["p"].data["cpu"] == float.fromhex("0x1.e2dc9a8ebaaacp+41")  # not float("...333496")
    assert float(wl.jobs["1"].walltime) == read_float("97.99955000000045") != 97.99955000000045
