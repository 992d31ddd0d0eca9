"""The reproduction report: each claim of Kopanski & Rzadca 2021, §4.2 (docs/policies.md) beside the measured numbers,
with a verdict, as ``report.md`` and ``report.html`` (with the figures).

`evaluate_claims` turns the summary table (`tables.summary_table`) and the per-part means
(`tables.part_means`) into `Verdict`s; `Report` is a list of blocks rendered to both formats.
Verdicts: ``reproduced`` (the claim holds as stated, within the tolerance named in the row),
``partly`` (same direction, smaller effect, or holds for one of two metrics), ``not reproduced``
(the opposite is measured), ``not measured`` (a policy or the parts were not run).
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

REPRODUCED, PARTLY, NOT, MISSING = "reproduced", "partly", "not reproduced", "not measured"


@dataclass
class Verdict:
    """One claim: its text and place in the paper, what was measured, the verdict and how far the
    measurement is from the claim."""

    claim: str
    source: str
    measured: str
    verdict: str
    by_how_much: str


def _pct(x: float) -> str:
    return "n/a" if x != x else f"{100 * x:.1f} %"


def _g(x: float, d: int = 3) -> str:
    return "n/a" if x is None or x != x else f"{x:.{d}g}"


def _get(s: pd.DataFrame, policy: str, col: str) -> float:
    r = s[s["policy"] == policy]
    return float(r[col].iloc[0]) if len(r) else math.nan


def _have(s: pd.DataFrame, *policies: str) -> bool:
    return all((s["policy"] == p).any() and not math.isnan(_get(s, p, "wait_h_mean")) for p in policies)


def _missing(claim: str, source: str, need: str) -> Verdict:
    return Verdict(claim, source, f"needs {need}", MISSING, "")


def evaluate_claims(whole: pd.DataFrame, parts: pd.DataFrame | None = None) -> list[Verdict]:
    """Verdicts on the claims of Kopanski & Rzadca 2021, §4.2 (docs/policies.md).

    `whole`: `summary_table` rows of the main scope (one per policy). `parts`: `part_means` rows
    (may be empty). Claims about the whole trace are judged on `whole`, claims about the 16 parts on
    `parts`.
    """
    v: list[Verdict] = []
    s = whole
    m = lambda p, c="wait_h_mean": _get(s, p, c)  # noqa: E731
    others = [p for p in s["policy"] if p not in ("fcfs", "fcfs-easy")]

    # 1. fcfs-easy two orders of magnitude above every other policy but fcfs
    claim = ("fcfs-easy has two orders of magnitude higher mean waiting time and mean bounded slowdown than "
             "every other policy except fcfs")
    if _have(s, "fcfs-easy") and others:
        rw = m("fcfs-easy") / max(m(p) for p in others)
        rb = m("fcfs-easy", "bsld_mean") / max(m(p, "bsld_mean") for p in others)
        worst = min(rw, rb)
        verdict = REPRODUCED if worst >= 10 ** 1.5 else PARTLY if worst > 1 else NOT
        v.append(Verdict(claim, "§4.2, Fig. 5-6",
                         f"fcfs-easy / the highest of {', '.join(others)}: waiting time {rw:.3g}×, "
                         f"bounded slowdown {rb:.3g}× (mean waiting time {m('fcfs-easy'):.3g} h)",
                         verdict, f"10^{np.log10(rw):.2f} and 10^{np.log10(rb):.2f} vs 10^2 claimed "
                                  f"(reproduced from 10^1.5, i.e. two orders when rounded)"))
    else:
        v.append(_missing(claim, "§4.2, Fig. 5-6", "fcfs-easy and another policy besides fcfs"))

    # 2. fcfs-easy better than fcfs on average and for most jobs, worse in the extreme tail
    claim = ("fcfs-easy does better than fcfs on average and for the majority of jobs, but worse in the last "
             "32-quantile: it considerably delays numerous jobs")
    if _have(s, "fcfs", "fcfs-easy"):
        mean_ok = m("fcfs-easy") < m("fcfs")
        med_ok = m("fcfs-easy", "wait_h_q0.5") <= m("fcfs", "wait_h_q0.5")
        tail_ok = m("fcfs-easy", "wait_h_q0.96875") > m("fcfs", "wait_h_q0.96875")
        n_ok = int(mean_ok) + int(med_ok) + int(tail_ok)
        verdict = REPRODUCED if n_ok == 3 else NOT if n_ok == 0 else PARTLY
        v.append(Verdict(claim, "§4.2, Fig. 5, 7, 9",
                         f"mean waiting time fcfs-easy {m('fcfs-easy'):.3g} h vs fcfs {m('fcfs'):.3g} h; median "
                         f"{m('fcfs-easy', 'wait_h_q0.5'):.3g} vs {m('fcfs', 'wait_h_q0.5'):.3g} h; 31/32-quantile "
                         f"{m('fcfs-easy', 'wait_h_q0.96875'):.3g} vs {m('fcfs', 'wait_h_q0.96875'):.3g} h; max "
                         f"{m('fcfs-easy', 'wait_h_max'):.3g} vs {m('fcfs', 'wait_h_max'):.3g} h",
                         verdict, f"{n_ok} of 3 conditions hold (lower mean, lower median, higher 31/32-quantile)"))
    else:
        v.append(_missing(claim, "§4.2, Fig. 5, 7, 9", "fcfs and fcfs-easy"))

    # 3. sjf-bb 4.5 % below fcfs-bb
    claim = "sjf-bb's mean waiting time is 4.5 % lower than fcfs-bb's (whole trace)"
    if _have(s, "sjf-bb", "fcfs-bb"):
        d = 1 - m("sjf-bb") / m("fcfs-bb")
        verdict = REPRODUCED if abs(100 * d - 4.5) <= 2.5 else PARTLY if d > 0 else NOT
        v.append(Verdict(claim, "§4.2 (choice of the reference)",
                         f"sjf-bb {m('sjf-bb'):.4g} h, fcfs-bb {m('fcfs-bb'):.4g} h: {_pct(d)} lower",
                         verdict, f"{100 * d - 4.5:+.1f} percentage points from 4.5 % (tolerance ±2.5)"))
    else:
        v.append(_missing(claim, "§4.2", "sjf-bb and fcfs-bb"))

    # 4-5. plan-2 vs sjf-bb
    for col, claimed, label, fig in (("wait_h_mean", 20.0, "mean waiting time", "Fig. 5"),
                                     ("bsld_mean", 27.0, "mean bounded slowdown", "Fig. 6")):
        claim = (f"plan-2 improves the {label} by {'over ' if claimed == 20 else ''}{claimed:g} % over sjf-bb")
        if _have(s, "plan-2", "sjf-bb"):
            imp = 100 * (1 - m("plan-2", col) / m("sjf-bb", col))
            tol = 0.0 if claimed == 20 else 2.5
            verdict = REPRODUCED if imp >= claimed - tol else PARTLY if imp > 0 else NOT
            v.append(Verdict(claim, f"§1 contribution 4, §4.2, {fig}",
                             f"plan-2 {m('plan-2', col):.4g}, sjf-bb {m('sjf-bb', col):.4g}: {imp:.1f} % better",
                             verdict, f"{imp - claimed:+.1f} percentage points from {claimed:g} %"
                                      + (f" (tolerance −{tol:g})" if tol else " (claimed as a lower bound)")))
        else:
            v.append(_missing(claim, f"§4.2, {fig}", "plan-2 and sjf-bb"))

    # 6. plan-2 outperforms all other policies
    claim = "plan-2 outperforms all other policies (mean waiting time and mean bounded slowdown)"
    if _have(s, "plan-2") and len(s) > 1:
        res = []
        for col, label in (("wait_h_mean", "waiting time"), ("bsld_mean", "bounded slowdown")):
            ranked = s.sort_values(col)[["policy", col]]
            rank = int(np.flatnonzero(ranked["policy"].to_numpy() == "plan-2")[0]) + 1
            best_other = ranked[ranked["policy"] != "plan-2"].iloc[0]
            res.append((rank, label, best_other["policy"], m("plan-2", col) / float(best_other[col]) - 1))
        n_ok = sum(r[0] == 1 for r in res)
        verdict = REPRODUCED if n_ok == 2 else PARTLY if n_ok == 1 else NOT
        v.append(Verdict(claim, "§4.2, Fig. 5-6",
                         "; ".join(f"{label}: plan-2 ranks {rank} of {len(s)}" for rank, label, _, _ in res),
                         verdict, "; ".join(f"{label}: {100 * gap:+.1f} % vs the best other ({p})"
                                            for _, label, p, gap in res)))
    else:
        v.append(_missing(claim, "§4.2", "plan-2 and other policies"))

    # 7. filler near-starves some jobs
    claim = ("filler has a good distribution for most jobs but disproportionately delays some (near-starvation; "
             "tail of the waiting time)")
    aware = [p for p in ("fcfs-bb", "sjf-bb", "plan-1", "plan-2", "plan-3") if _have(s, p)]
    if _have(s, "filler") and aware:
        mx = {p: m(p, "wait_h_max") for p in aware}
        top = max(mx, key=mx.get)
        ratio = m("filler", "wait_h_max") / mx[top]
        med = m("filler", "wait_h_q0.5") <= min(m(p, "wait_h_q0.5") for p in aware)
        verdict = REPRODUCED if ratio > 1 else PARTLY if m("filler", "wait_h_max") > m(aware[0], "wait_h_max") else NOT
        v.append(Verdict(claim, "§4.2, Fig. 7-10",
                         f"max waiting time filler {m('filler', 'wait_h_max'):.3g} h vs the highest of "
                         f"{', '.join(aware)} ({top}) {mx[top]:.3g} h; filler median {m('filler', 'wait_h_q0.5'):.3g} h"
                         f" ({'lowest' if med else 'not the lowest'} of these)",
                         verdict, f"filler's maximum is {ratio:.2f}× the highest of the BB-aware policies"))
    else:
        v.append(_missing(claim, "§4.2, Fig. 9-10", "filler and a BB-aware policy"))

    # 8. plan-1 delays some jobs strongly
    claim = "plan-1 delays selected jobs significantly (tail of the waiting time)"
    if _have(s, "plan-1") and any(_have(s, p) for p in ("plan-2", "sjf-bb")):
        refs = [p for p in ("plan-2", "sjf-bb") if _have(s, p)]
        ratios = {p: m("plan-1", "wait_h_max") / m(p, "wait_h_max") for p in refs}
        n_ok = sum(r > 1 for r in ratios.values())
        verdict = REPRODUCED if n_ok == len(refs) else PARTLY if n_ok else NOT
        v.append(Verdict(claim, "§4.2, Fig. 9",
                         f"max waiting time plan-1 {m('plan-1', 'wait_h_max'):.3g} h; "
                         + ", ".join(f"{p} {m(p, 'wait_h_max'):.3g} h" for p in refs),
                         verdict, ", ".join(f"{r:.2f}× {p}'s" for p, r in ratios.items())))
    else:
        v.append(_missing(claim, "§4.2, Fig. 9", "plan-1 and plan-2 or sjf-bb"))

    # 9-11. over the parts
    pm = parts if parts is not None else pd.DataFrame()
    nparts = pm["scope"].nunique() if len(pm) else 0

    def frac(policy: str, col: str, pred) -> tuple[int, int]:
        r = pm[(pm["policy"] == policy)][col].dropna()
        return int(pred(r).sum()), len(r)

    claim = "over the parts, filler has in most cases a higher mean than the non-starving BB-aware policies"
    if nparts and (pm["policy"] == "filler").any() and pm["wait_norm"].notna().any():
        kw, nw = frac("filler", "wait_norm", lambda r: r > 1)
        kb, nb = frac("filler", "bsld_norm", lambda r: r > 1)
        ok = [kw > nw / 2, kb > nb / 2]
        verdict = REPRODUCED if all(ok) else PARTLY if any(ok) else NOT
        v.append(Verdict(claim, "§4.2, Fig. 11-12",
                         f"filler's part mean above sjf-bb's in {kw} of {nw} parts (waiting time), {kb} of {nb} "
                         f"(bounded slowdown)", verdict, "majority needed on both metrics"))
    else:
        v.append(_missing(claim, "§4.2, Fig. 11-12", "the parts with filler and sjf-bb"))

    claim = "over the parts, plan-based scheduling outperforms greedy list scheduling (sjf-bb)"
    plans = [p for p in ("plan-1", "plan-2", "plan-3") if nparts and (pm["policy"] == p).any()]
    if plans and pm["wait_norm"].notna().any():
        meds = {p: (pm.loc[pm["policy"] == p, "wait_norm"].median(), pm.loc[pm["policy"] == p, "bsld_norm"].median())
                for p in plans}
        n_ok = sum(int(a < 1) + int(b < 1) for a, b in meds.values())
        verdict = REPRODUCED if n_ok == 2 * len(plans) else PARTLY if n_ok else NOT
        v.append(Verdict(claim, "§4.2, Fig. 11-12",
                         "median normalised mean (waiting time, bounded slowdown): "
                         + "; ".join(f"{p} {_g(a)}, {_g(b)}" for p, (a, b) in meds.items()),
                         verdict, f"{n_ok} of {2 * len(plans)} medians below 1 (sjf-bb = 1)"))
    else:
        v.append(_missing(claim, "§4.2, Fig. 11-12", "the parts with a plan policy and sjf-bb"))

    claim = "in the shorter workloads (parts), plan-1 outperforms plan-2"
    if nparts and all((pm["policy"] == p).any() for p in ("plan-1", "plan-2")):
        w = pm.pivot(index="scope", columns="policy", values="wait_mean_h")
        b = pm.pivot(index="scope", columns="policy", values="bsld_mean")
        kw, kb = int((w["plan-1"] < w["plan-2"]).sum()), int((b["plan-1"] < b["plan-2"]).sum())
        n = int(w[["plan-1", "plan-2"]].notna().all(axis=1).sum())
        ok = [kw > n / 2, kb > n / 2]
        verdict = REPRODUCED if all(ok) else PARTLY if any(ok) else NOT
        v.append(Verdict(claim, "§4.2, Fig. 11-12",
                         f"plan-1's part mean below plan-2's in {kw} of {n} parts (waiting time), {kb} of {n} "
                         f"(bounded slowdown)", verdict, "majority needed on both metrics"))
    else:
        v.append(_missing(claim, "§4.2, Fig. 11-12", "the parts with plan-1 and plan-2"))
    return v


# --- rendering -------------------------------------------------------------------------------------
@dataclass
class Report:
    """A document as blocks: ("h", level, text), ("p", text), ("table", header, rows),
    ("img", relative path, caption), ("pre", text)."""

    title: str
    blocks: list = field(default_factory=list)

    def h(self, level: int, text: str):
        self.blocks.append(("h", level, text))

    def p(self, text: str):
        self.blocks.append(("p", text))

    def table(self, header: list[str], rows: list[list]):
        self.blocks.append(("table", header, [[str(c) for c in r] for r in rows]))

    def img(self, path: str, caption: str):
        self.blocks.append(("img", path, caption))

    def pre(self, text: str):
        self.blocks.append(("pre", text))

    def markdown(self) -> str:
        out = [f"# {self.title}", ""]
        for b in self.blocks:
            if b[0] == "h":
                out += ["#" * (b[1] + 1) + " " + b[2], ""]
            elif b[0] == "p":
                out += [b[1], ""]
            elif b[0] == "table":
                esc = lambda c: c.replace("|", "\\|")  # noqa: E731
                out.append("| " + " | ".join(map(esc, b[1])) + " |")
                out.append("| " + " | ".join("---" for _ in b[1]) + " |")
                out += ["| " + " | ".join(map(esc, r)) + " |" for r in b[2]]
                out.append("")
            elif b[0] == "img":
                out += [f"![{b[2]}]({b[1]})", "", f"*{b[2]}*", ""]
            elif b[0] == "pre":
                out += ["```", b[1], "```", ""]
        return "\n".join(out)

    def html(self) -> str:
        e = html.escape
        out = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>", f"<title>{e(self.title)}</title>",
               "<style>body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}"
               "table{border-collapse:collapse;font-size:13px;margin:1em 0}td,th{border:1px solid #bbb;"
               "padding:3px 6px;text-align:left;vertical-align:top}th{background:#eee}"
               "figure{margin:1.5em 0}img{max-width:100%}figcaption{font-style:italic}"
               ".reproduced{background:#d8f5d0}.partly{background:#fbf1c7}.not-reproduced{background:#f9d0d0}"
               ".not-measured{background:#e8e8e8}pre{background:#f6f6f6;padding:.5em}</style>",
               "</head><body>", f"<h1>{e(self.title)}</h1>"]
        for b in self.blocks:
            if b[0] == "h":
                out.append(f"<h{b[1] + 1}>{e(b[2])}</h{b[1] + 1}>")
            elif b[0] == "p":
                out.append(f"<p>{e(b[1])}</p>")
            elif b[0] == "table":
                out.append("<table><tr>" + "".join(f"<th>{e(c)}</th>" for c in b[1]) + "</tr>")
                for r in b[2]:
                    cells = []
                    for c in r:
                        cls = c.replace(" ", "-") if c in (REPRODUCED, PARTLY, NOT, MISSING) else ""
                        cells.append(f"<td class='{cls}'>{e(c)}</td>" if cls else f"<td>{e(c)}</td>")
                    out.append("<tr>" + "".join(cells) + "</tr>")
                out.append("</table>")
            elif b[0] == "img":
                src = b[1][:-4] + ".svg" if b[1].endswith(".png") else b[1]
                out.append(f"<figure><img src='{e(src)}' alt='{e(b[2])}'><figcaption>{e(b[2])}</figcaption></figure>")
            elif b[0] == "pre":
                out.append(f"<pre>{e(b[1])}</pre>")
        out.append("</body></html>")
        return "\n".join(out)

    def write(self, folder: Path) -> tuple[Path, Path]:
        """Write ``report.md`` and ``report.html`` into `folder`; return both paths."""
        md, ht = folder / "report.md", folder / "report.html"
        md.write_text(self.markdown(), encoding="utf-8")
        ht.write_text(self.html(), encoding="utf-8")
        return md, ht


def verdict_rows(verdicts: list[Verdict]) -> list[list[str]]:
    return [[str(i), x.claim, x.source, x.measured, x.verdict, x.by_how_much] for i, x in enumerate(verdicts, 1)]


VERDICT_HEADER = ["#", "claim (papers/001)", "where", "measured", "verdict", "by how much"]
