"""``bb_occupancy.csv``: the burst-buffer bytes held on each BB (storage) node over a run (docs/outputs.md).
Batsim's ``machine_states.csv`` counts machines busy or idle; it cannot say how full a burst buffer
is, since BB space is the scheduler's reservation, not a simulated activity. This file is the project's own.

Format: header ``time,total,<BB node>,...`` — one column per BB node, named by its host name (``bb_<id>``
when the platform is unknown), in resource-id order — then one row per time at which the bytes held change:
the bytes held on each node [bytes, integers] from that time on (all the starts and ends at one time are applied
before its row). Time in seconds, ``%.6f`` as jobs.csv. No row before the first job starts: 0 bytes held.

Source: the run's ``jobs.csv`` (each job's ``bb_allocation`` ``"<BB node id>:<bytes> ..."``, held from its
``starting_time`` to its ``finish_time``: two-phase models hold BB while running, three-phase from the start of
the stage-in to the end of the stage-out, docs/io-model.md; a three-phase run's ``bb_holds.csv``, when present,
gives what each job holds phase by phase, docs/audit.md) and ``run.json`` (node names and capacities),
read as `burstbuffer plot` reads them (`runplot.load_run`). A job without both times (not started, or still
running when the run was stopped) holds nothing here.
"""
from __future__ import annotations

import csv
from pathlib import Path

from ..errors import InputError
from .runplot import RunData, load_run


def bb_occupancy_rows(run: RunData, holds=None) -> tuple[list[int], list[tuple[float, list[int]]]]:
    """(BB node ids, [(time [s], [bytes held per node, in that order])]) of `run` (module docstring). `holds`: the
    run's bb_holds.csv (`burstbuffer.audit.load_holds`; three-phase runs), whose phases replace jobs.csv's one
    allocation for the jobs it lists (a job holding different amounts in its phases, as cerberus')."""
    deltas: dict[float, dict[int, int]] = {}
    nodes = set(run.bb_capacity)
    if holds is not None:
        from dataclasses import replace
        run = replace(run, holds=holds)
    items = run.bb_spans()
    for a, b, alloc in items:
        for node, v in alloc.items():
            nodes.add(node)
            for t, sign in ((float(a), 1), (float(b), -1)):
                d = deltas.setdefault(t, {})
                d[node] = d.get(node, 0) + sign * v
    order = sorted(nodes)
    col = {n: i for i, n in enumerate(order)}
    held = [0] * len(order)
    rows = []
    for t in sorted(deltas):
        changed = False
        for node, v in deltas[t].items():
            if v:
                held[col[node]] += v
                changed = True
        if changed or not rows:
            rows.append((t, list(held)))
    return order, rows


def write_bb_occupancy(run_dir: str | Path, path: str | Path | None = None) -> Path:
    """Write `run_dir`/bb_occupancy.csv (or `path`) from the run's jobs.csv and run.json; returns the path.
    Raises InputError if jobs.csv is missing or malformed (`runplot.load_run`)."""
    run = load_run(run_dir)                  # with the run's bb_holds.csv, if any (`RunData.holds`)
    order, rows = bb_occupancy_rows(run)
    out = Path(path) if path is not None else Path(run_dir) / "bb_occupancy.csv"
    tmp = out.with_name(out.name + ".tmp")
    from ..fileio import open_output, removing_on_error
    with removing_on_error(tmp):
        with open_output(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["time", "total"] + [run.names.get(n, f"bb_{n}") for n in order])
            for t, held in rows:
                w.writerow([f"{t:.6f}", sum(held), *held])
        tmp.replace(out)
    return out
