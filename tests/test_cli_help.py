"""Every `--help` text renders as plain text and cites what a user has: no raw RST double backticks, no
citation of files outside the repository (the facts live in docs/)."""
import re
from pathlib import Path

import pytest

from burstbuffer.cli import main

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = [[], ["run"], ["serve"], ["simulate"], ["reproduce"], ["metrics"], ["workload"],
            ["workload", "from-swf"], ["workload", "split"], ["platform"], ["platform", "dragonfly"], ["sweep"]]


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: " ".join(c) or "burstbuffer")
def test_help_is_plain_and_cites_the_repository(cmd, capsys):
    assert main([*cmd, "--help"]) == 0          # argparse's exit status, returned by main
    text = capsys.readouterr().out
    assert text.startswith("usage: burstbuffer")
    assert "``" not in text
    assert not re.search(r"SPEC|DESIGN|papers/\d|shared/", text), text
    for doc in re.findall(r"docs/[\w-]+\.md", text):
        assert (ROOT / doc).is_file(), doc


def test_every_cited_doc_exists():
    cited = set()
    for folder in ("burstbuffer", "tests", "benchmarks"):
        for f in (ROOT / folder).rglob("*.py"):
            cited |= set(re.findall(r"docs/[\w-]+\.md", f.read_text(encoding="utf-8")))
    assert cited and all((ROOT / d).is_file() for d in cited), sorted(d for d in cited if not (ROOT / d).is_file())
