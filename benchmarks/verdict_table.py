"""Print the verdicts of a `burstbuffer reproduce` output folder as a Markdown table (for the docs pages that
show a study's verdicts: docs/bbsched-study.md, docs/three-phase-study.md).

    .venv/bin/python benchmarks/verdict_table.py out/bbsched-1000 [--short]

Reads OUTPUT/verdicts.json (written by every `reproduce` run). --short: id, claim, verdict and by how much
(without the measured column). --doc: the table of a study's docs page (docs/studies/verdicts/NAME.inc, `make
study-table`): id, claim, where, what it asserts, verdict, placebo, reversed, the bands with their reasons, the
noise floor, and by how much, after a line naming the run (OUTPUT/manifest.json) and the regime checks
(OUTPUT/regime.json). Exit 2 with a one-line error when the file is missing or unreadable.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


def _id(v: dict) -> str:
    """A row's id; a question the project asks itself (not the source's claim) is marked so."""
    return v["id"] + (" (the project's question)" if v.get("origin") == "project" else "")


def table(out: Path, short: bool = False, doc: bool = False) -> str:
    verdicts = json.loads((out / "verdicts.json").read_text(encoding="utf-8"))
    esc = lambda s: str(s).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    intro = []
    if doc:
        m = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        mode = verdicts[0].get("mode", "real") if verdicts else "real"
        words = str(m.get("command", "")).split()[1:]
        for flag, n in (("--output", 2), ("--workers", 2), ("--engine", 2), ("--cache", 2), ("--report-only", 1),
                        ("-q", 1)):
            if flag in words:                                   # where and how fast: nothing of the results
                i = words.index(flag)
                del words[i:i + n]
        intro = [f"Measured by `burstbuffer {' '.join(words)}` (whole workload: {m.get('whole_label')}; "
                 f"parts: {m.get('parts_label')}; model {m.get('model')}, seed {m.get('seed')}, "
                 f"{m.get('replicates', 1)} replicate(s)); verdict: {mode} run."
                 + (" The placebo column judges the A/A runs `--placebo` added to the same folder."
                    if mode != "placebo" and any(v.get("verdict_placebo") not in (None, "", "not measured",
                                                                                  "not testable", "not run")
                                                 for v in verdicts) else ""),
                 ""]
        if m.get("missing"):                                    # --report-only before every run finished
            intro += [f"**Partial**: judged on the runs finished so far; {len(m['missing'])} not finished yet "
                      f"({', '.join(m['missing'][:8])}{', …' if len(m['missing']) > 8 else ''}): their claims "
                      "are not measured. Rerun the same command to finish them.", ""]
        # no A/A run in the folder: the analysis wrote "not run" in the placebo column; said above the table too
        if verdicts and all(v.get("verdict_placebo") == "not run" for v in verdicts):
            intro[-1:-1] = ["", "Placebo: not run (`--placebo` adds the A/A runs to the same folder: as many runs "
                                "again)."]
        head = ["id", "claim", "where", "asserts", "verdict", "placebo", "reversed", "band (its reason)",
                "noise floor", "by how much"]
        rows = [[_id(v), v["claim"], v["source"], v.get("asserts", ""),
                 *(v["verdict"] if m == mode else v.get(f"verdict_{m}", "") for m in ("real", "placebo", "reverse")),
                 v.get("band", ""), v.get("noise", ""), v["by_how_much"]] for v in verdicts]
        checks = json.loads((out / "regime.json").read_text(encoding="utf-8")) if (out / "regime.json").is_file() else []
        if checks:
            intro += ["Regime checks (a failed one: every claim out of regime):", "",
                      "| check | measured | the source's regime needs | holds |", "| --- | --- | --- | --- |"]
            intro += [f"| {esc(c['name'])} | {esc(c['measured'])} | {esc(c['needs'])} | {'yes' if c['ok'] else 'NO'} |"
                      for c in checks] + [""]
        else:
            intro += ["Regime checks: none (the study declares none).", ""]
    elif short:
        head = ["id", "claim", "where", "verdict", "by how much"]
        rows = [[_id(v), v["claim"], v["source"], v["verdict"], v["by_how_much"]] for v in verdicts]
    else:
        head = ["id", "claim", "where", "measured", "verdict", "by how much"]
        rows = [[_id(v), v["claim"], v["source"], v["measured"], v["verdict"], v["by_how_much"]] for v in verdicts]
    lines = intro + ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 1:
        print("usage: verdict_table.py OUTPUT_DIR [--short | --doc]", file=sys.stderr)
        return 2
    try:
        print(table(Path(args[0]), "--short" in argv, "--doc" in argv))
    except (OSError, ValueError, KeyError) as exc:
        print(f"{args[0]}: verdicts.json: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
