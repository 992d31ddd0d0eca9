"""Cell-by-cell comparison of the energy outputs of two runs (real Batsim 4.2.1 and the embedded simulator,
``-E``): `_jobs.csv` (every column, consumed_energy included), `_machine_states.csv`,
`_pstate_changes.csv`, the energy fields of `_schedule.csv` and `_consumed_energy.csv`.

One tolerance, on `_consumed_energy.csv`'s `epower` column only: it is (energy - previous energy) /
(time - previous time), a quotient of two long-double differences; when two rows have the same printed time
(several events at one date), both differences are rounding noise of the clock and of the energy sums (a few
ulps), and the quotient is noise too: there only "a number" or "NA" must agree. Elsewhere it must agree to
1e-6 relative (its inputs agree to the printed digits, which bound the quotient's error far below that).
Every other cell, `energy` and `wattmin` included, must be identical.
"""
from __future__ import annotations

import csv
from pathlib import Path

SCHEDULE_ENERGY_FIELDS = ("consumed_joules", "nb_machine_switches", "nb_grouped_switches", "time_computing",
                          "time_idle", "time_sleeping", "time_switching_off", "time_switching_on",
                          "nb_jobs", "nb_jobs_success", "nb_jobs_killed", "makespan")


def _rows(path: str) -> list[list[str]]:
    with open(path, newline="") as f:
        return list(csv.reader(f))


def _time_close(x: list[str], y: list[str], tol: float) -> bool:
    try:
        return x[1:] == y[1:] and abs(float(x[0]) - float(y[0])) <= tol
    except ValueError:
        return False


def compare_energy_outputs(real_prefix: str, emb_prefix: str, limit: int = 10, energy_tol: float = 0.0,
                           time_tol: float = 0.0, epower_tol: float = 0.0) -> list[str]:
    """Differences (strings; empty: the same) between the outputs of two runs (module docstring);
    `energy_tol` [J]: how far `_consumed_energy.csv`'s energy cells may be apart, `time_tol` [s] the time
    cells of `_machine_states.csv` and `_pstate_changes.csv` (0: identical), `epower_tol` [W] how far its
    epower cells may be apart beyond the 1e-6 relative rule (for runs whose energy totals differ by ulps:
    over rows microseconds apart their quotient moves by ulps / dt)."""
    out: list[str] = []
    for suffix in ("_jobs.csv", "_machine_states.csv", "_pstate_changes.csv"):
        a, b = _rows(real_prefix + suffix), _rows(emb_prefix + suffix)
        if len(a) != len(b):
            out.append(f"{suffix}: {len(a)} rows != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y and not (time_tol > 0 and suffix != "_jobs.csv" and _time_close(x, y, time_tol)):
                out.append(f"{suffix} row {i}: {x} != {y}")
    a, b = _rows(real_prefix + "_consumed_energy.csv"), _rows(emb_prefix + "_consumed_energy.csv")
    if len(a) != len(b):
        out.append(f"_consumed_energy.csv: {len(a)} rows != {len(b)}")
    for i, (x, y) in enumerate(zip(a, b)):
        if x[:4] != y[:4] and not (energy_tol > 0 and x[0] == y[0] and x[2:4] == y[2:4]
                                   and abs(float(x[1]) - float(y[1])) <= energy_tol):
            out.append(f"_consumed_energy.csv row {i}: {x} != {y}")
        elif i > 0 and x[4] != y[4]:
            same_time = a[i - 1][0] == x[0] if i > 1 else False
            if (x[4] == "NA") != (y[4] == "NA"):
                out.append(f"_consumed_energy.csv row {i}: epower {x[4]} != {y[4]}")
            elif not same_time and abs(float(x[4]) - float(y[4])) > 1e-6 * max(1.0, abs(float(x[4]))) + epower_tol:
                out.append(f"_consumed_energy.csv row {i}: epower {x[4]} != {y[4]} (beyond 1e-6 relative)")
    (ka, va), (kb, vb) = _rows(real_prefix + "_schedule.csv"), _rows(emb_prefix + "_schedule.csv")
    sa, sb = dict(zip(ka, va)), dict(zip(kb, vb))
    for k in SCHEDULE_ENERGY_FIELDS:
        if sa.get(k) != sb.get(k):
            out.append(f"_schedule.csv {k}: {sa.get(k)} != {sb.get(k)}")
    return out[:limit]


if __name__ == "__main__":
    import sys

    d = Path(sys.argv[1])
    print("\n".join(compare_energy_outputs(str(d / "real" / "out"), str(d / "embedded" / "out"), 50)) or "same")


def energy_platform(path: Path, n: int) -> Path:
    """A platform of `n` hosts like tests/data/energy4.xml's (same pstates and watts) and a master, all on one
    10 GB/s, 20 us link (Full routing), written to `path`."""
    src = (Path(__file__).parent / "data" / "energy4.xml").read_text()
    head = src.split('<zone id="root" routing="Full">')[0]
    host = src.split("<host ")[1].split("</host>")[0]
    names = [f"host{i}" for i in range(n)] + ["master"]
    body = ["<host " + host.replace('id="host0"', f'id="{h}"') + "</host>" for h in names[:-1]]
    body.append('<host id="master" speed="1Gf"><prop id="role" value="master"/></host>')
    body.append('<link id="l" bandwidth="10GBps" latency="20us"/>')
    body += [f'<route src="{a}" dst="{b}"><link_ctn id="l"/></route>'
             for k, a in enumerate(names) for b in names[k + 1:]]
    path.write_text(head + '<zone id="root" routing="Full">\n' + "\n".join(body) + "\n</zone>\n</platform>\n")
    return path


def six_pstate_platform(path: Path) -> Path:
    """tests/data/energy4.xml with the pstates pybatsim 3.2.1's fcfsSchedSleep expects (its
    energy_platform_homogeneous.xml layout): 0, 1, 2 computation (1, 0.5, 0.25 Gflop/s), 3 sleep, 4 switching
    OFF, 5 switching ON; written to `path`."""
    text = (Path(__file__).parent / "data" / "energy4.xml").read_text()
    for old, new in (('speed="1Gf, 0.5Gf, 1e-6Mf, 0.5f, 0.2f"', 'speed="1Gf, 0.5Gf, 0.25Gf, 1e-6Mf, 0.5f, 0.2f"'),
                     ('value="95:100:200, 90:93:140, 10:10:10, 120:120:120, 150:150:150"',
                      'value="95:100:200, 90:93:140, 85:88:110, 10:10:10, 120:120:120, 150:150:150"'),
                     ('value="2:3:4"', 'value="3:4:5"')):
        assert old in text
        text = text.replace(old, new)
    path.write_text(text)
    return path
