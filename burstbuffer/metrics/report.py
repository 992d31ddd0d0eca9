"""The reproduction report: each claim of a study beside the measured numbers, with a verdict, as
``report.md`` and ``report.html`` (with the figures).

The claims are data (`burstbuffer.metrics.claims`: a table of `Claim`s evaluated by one function,
`claims.evaluate`; each study keeps its table, e.g. `burstbuffer.reproduce.studies.kopanski2021.CLAIMS`);
`Report` is a list of blocks rendered to both formats. This module imports no study (metrics/ depends on
nothing above it).
Verdicts: ``reproduced`` (the claim holds as stated, within the tolerance named in the row),
``partly`` (same direction, smaller effect, or holds for one of two metrics), ``not reproduced``
(the opposite is measured), ``not measured`` (a policy or the parts were not run), ``out of regime`` (the runs
are not in the regime the source's claim is about), ``not testable`` (the source states nothing a run could
check).
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path

from .verdicts import MISSING, NOT, NOT_TESTABLE, OUT_OF_REGIME, PARTLY, REPRODUCED, Verdict  # noqa: F401 - re-exported


#: A NaN written out in a table cell ("nan", "+nan", "nan %"), as Python formats one.
NAN = re.compile(r"(?<![A-Za-z])[+-]?nan(?![A-Za-z])")


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
        """A table; a cell holding a NaN (a mean over no job, a ratio of nothing) reads "n/a", and a note under
        the table says so."""
        cells = [[str(c) for c in r] for r in rows]
        blank = [[bool(NAN.search(c)) for c in r] for r in cells]
        self.blocks.append(("table", header, [["n/a" if b else c for c, b in zip(r, br)]
                                              for r, br in zip(cells, blank)]))
        if any(map(any, blank)):
            self.p("n/a: no value on this workload (a mean over a group of jobs that is empty, or a ratio whose "
                   "denominator is 0); a larger workload (--jobs N) gives one.")

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
               ".not-measured,.out-of-regime,.not-testable{background:#e8e8e8}pre{background:#f6f6f6;padding:.5em}</style>",
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
                        cls = c.replace(" ", "-") if c in (REPRODUCED, PARTLY, NOT, MISSING, OUT_OF_REGIME,
                                                           NOT_TESTABLE) else ""
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
    """The report's claims table: one row per verdict (number from 1, claim, where, measured, verdict,
    by how much), the columns of `VERDICT_HEADER`."""
    return [[str(i), x.claim, x.source, x.measured, x.verdict, x.by_how_much] for i, x in enumerate(verdicts, 1)]


VERDICT_HEADER = ["#", "claim (Kopanski & Rzadca 2021)", "where", "measured", "verdict", "by how much"]
