"""The audit's sweep lines (`burstbuffer.audit`): no processor held twice at one instant (``processors``),
no BB node over its capacity (``burst-buffer``).
"""
from __future__ import annotations

from .read import numeric, split_pairs
from .report import EPS, OVER, Violation


def holders(ids, res, a, b, resource: int, t: float) -> tuple[str, ...]:
    m = (res == resource) & (a <= t + EPS) & (b > t + EPS)
    return tuple(sorted(set(ids[m].tolist()), key=job_key))


def job_key(j: str):
    return (0, int(j), "") if str(j).isdigit() else (1, 0, str(j))


def check_processors(jobs, first: int, only=None):
    """(instants, violations): processors held by two jobs at once (`burstbuffer.audit`). `only`: the resource ids
    to check (a sequence of int; None: every one of ``allocated_resources``)."""
    import numpy as np
    import pandas as pd
    a = numeric(jobs["starting_time"])
    b = numeric(jobs["finish_time"])
    if "nodes_start" in jobs:          # three-phase: the nodes from their start to their release
        ns, ne = numeric(jobs["nodes_start"]), numeric(jobs["nodes_end"])
        a, b = ns, np.where(np.isnan(ne), b, ne)
    b = np.where(np.isnan(b), np.inf, b)          # still running when the run stopped
    ids = jobs["job_id"].to_numpy()
    held = jobs["allocated_resources"].reset_index(drop=True)
    ranges = split_pairs(held[~np.isnan(a)], "-")
    if not len(ranges):
        return 0, []
    rows_j, lo, hi = ranges.index.to_numpy(), ranges["a"].to_numpy(), ranges["b"].to_numpy()
    n = hi - lo + 1
    job = np.repeat(rows_j, n)
    proc = np.repeat(lo, n) + (np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n))
    if only is not None:
        keep = np.isin(proc, np.asarray(list(only), dtype=np.int64))
        job, proc = job[keep], proc[keep]
        if not len(job):                   # every hold on resources not checked (e.g. storage hosts only)
            return 0, []
    s, e = a[job], b[job]
    order = np.lexsort((s, proc))
    proc, s, e, job = proc[order], s[order], e[order], job[order]
    # the latest end among the earlier holds of the same processor
    new = np.r_[True, proc[1:] != proc[:-1]]
    grp = np.cumsum(new)
    run_max = pd.Series(e).groupby(grp).cummax().to_numpy(float)
    prev = np.r_[-np.inf, run_max[:-1]]
    prev[new] = -np.inf
    bad = np.nonzero((s < prev - OVER) & (e > s))[0]
    if not len(bad):
        return 0, []
    instants = len({(float(s[i]), int(proc[i])) for i in bad})
    out = []
    for i in sorted(bad, key=lambda i: (s[i], proc[i]))[:first]:
        hold = holders(ids[job], proc, s, e, int(proc[i]), float(s[i]))
        out.append(Violation("processors", str(ids[job[i]]), float(s[i]), f"processor {int(proc[i])}",
                             f"{len(hold)} jobs", hold))
    return instants, out


def bb_holds(jobs, holds):
    """The BB holds of the run: arrays (job id, BB node, bytes, from [s], to [s]) — from jobs.csv's bb_allocation
    (starting_time → finish_time), replaced by `holds`' phases (`load_holds`) for the jobs it lists."""
    import numpy as np
    import pandas as pd
    start, end = numeric(jobs["starting_time"]), numeric(jobs["finish_time"])
    end = np.where(np.isnan(end), np.inf, end)
    ids = jobs["job_id"].reset_index(drop=True)
    alloc = (jobs["bb_allocation"] if "bb_allocation" in jobs else pd.Series([""] * len(jobs))).reset_index(drop=True)
    listed = ids.isin(holds["job_id"]) if holds is not None else pd.Series(False, index=ids.index)
    plain = ~np.isnan(start) & ~listed.to_numpy()
    seg = pd.DataFrame({"job": ids[plain], "t0": start[plain], "t1": end[plain], "alloc": alloc[plain]})
    if holds is not None and len(holds):
        finish = pd.Series(end, index=ids)
        finish = finish[~finish.index.duplicated()]
        nxt = holds.groupby("job_id", sort=False)["t"].shift(-1)
        t1 = nxt.fillna(holds["job_id"].map(finish)).fillna(np.inf)
        seg = pd.concat([seg, pd.DataFrame({"job": holds["job_id"], "t0": holds["t"], "t1": t1,
                                            "alloc": holds["bb_allocation"]})], ignore_index=True)
    seg = seg[(seg["t1"] > seg["t0"]) & (seg["alloc"] != "")].reset_index(drop=True)
    pairs = split_pairs(seg["alloc"], ":")
    pairs = pairs[pairs["b"] != 0]
    rows = pairs.index.to_numpy()
    return (seg["job"].to_numpy(object)[rows], pairs["a"].to_numpy(np.int64), pairs["b"].to_numpy(np.int64),
            seg["t0"].to_numpy(float)[rows], seg["t1"].to_numpy(float)[rows])


def check_burst_buffer(jobs, holds, capacity: dict[int, int], names: dict[int, str], first: int):
    """(instants, violations): BB nodes above capacity (`burstbuffer.audit`'s docstring); `holds`: `load_holds`'s."""
    import numpy as np
    J, N, B, S, E = bb_holds(jobs, holds)
    out, instants = [], 0
    unknown = ~np.isin(N, np.array(sorted(capacity), dtype=np.int64)) if capacity else np.ones(len(N), bool)
    if unknown.any():
        for i in np.nonzero(unknown)[0][:first]:
            out.append(Violation("burst-buffer", str(J[i]), float(S[i]), f"resource {int(N[i])}", f"{int(B[i])} B",
                                 (), "not a burst-buffer node of the platform"))
        instants += int(unknown.sum())
    keep = ~unknown
    J, N, B, S, E = J[keep], N[keep], B[keep], S[keep], E[keep]
    if not len(N):
        return instants, out
    # events: +bytes at the start, -bytes at the end; at one instant the releases come first
    node = np.r_[N, N]
    t = np.r_[S, E]
    d = np.r_[B, -B]
    finite = np.isfinite(t)
    node, t, d = node[finite], t[finite], d[finite]
    order = np.lexsort((d, t, node))
    node, t, d = node[order], t[order], d[order]
    level = np.cumsum(d)
    new = np.r_[True, node[1:] != node[:-1]]
    base = np.maximum.accumulate(np.where(new, np.arange(len(node)), 0))
    level = level - np.r_[0, level][base]            # the cumulative sum restarted on each node
    # the level after every event of one (node, instant)
    last = np.r_[(node[1:] != node[:-1]) | (t[1:] != t[:-1]), True]
    table = np.zeros(int(max(capacity)) + 1, dtype=np.int64)
    table[np.array(list(capacity), dtype=np.int64)] = list(capacity.values())
    cap = table[node]
    over = np.nonzero(last & (level > cap))[0]
    instants += len(over)
    for i in sorted(over, key=lambda i: (t[i], node[i]))[:first]:
        n, ti = int(node[i]), float(t[i])
        m = (N == n) & (S <= ti) & (E > ti)
        held = tuple(sorted(set(J[m].tolist()), key=job_key))
        came = (N == n) & (S == ti)
        job = str(J[came][0]) if came.any() else held[0]
        name = names.get(n, "")
        out.append(Violation("burst-buffer", job, ti, f"bb {n}" + (f" ({name})" if name else ""),
                             f"{int(level[i]) / 1e9:.2f} GB > {cap[i] / 1e9:.2f} GB "
                             f"({level[i] / cap[i]:.2f}x)", held))
    return instants, out
