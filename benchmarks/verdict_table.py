"""Print the verdicts of a `burstbuffer reproduce` output folder as a Markdown table (for the docs pages that
show a study's verdicts: docs/bbsched-study.md, docs/three-phase-study.md).

    .venv/bin/python benchmarks/verdict_table.py out/bbsched-1000 [--short]

Reads OUTPUT/verdicts.json (written by every `reproduce` run). --short: id, claim, verdict and by how much
(without the measured column). Exit 2 with a one-line error when the file is missing or unreadable.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


def table(out: Path, short: bool = False) -> str:
    verdicts = json.loads((out / "verdicts.json").read_text(encoding="utf-8"))
    esc = lambda s: str(s).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    if short:
        head = ["id", "claim", "where", "verdict", "by how much"]
        rows = [[v["id"], v["claim"], v["source"], v["verdict"], v["by_how_much"]] for v in verdicts]
    else:
        head = ["id", "claim", "where", "measured", "verdict", "by how much"]
        rows = [[v["id"], v["claim"], v["source"], v["measured"], v["verdict"], v["by_how_much"]] for v in verdicts]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 1:
        print("usage: verdict_table.py OUTPUT_DIR [--short]", file=sys.stderr)
        return 2
    try:
        print(table(Path(args[0]), "--short" in argv))
    except (OSError, ValueError, KeyError) as exc:
        print(f"{args[0]}: verdicts.json: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
