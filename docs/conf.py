"""Sphinx configuration of burstbuffer's documentation site (`make docs` builds it into docs/_build/html).

Sphinx with MyST rather than MkDocs: the pages stay the Markdown files the code already cites
(docs/*.md, by name and section), and Sphinx brings three things this site needs from well-kept,
widely used extensions: autodoc (the API reference from the docstrings), sphinx-argparse (one page per
command generated from `burstbuffer.cli.build_parser`, so the pages cannot drift from `--help`), and
`-W` (every warning, a broken link or cross-reference included, fails the build). Batsim, SimGrid and
pybatsim document themselves with Sphinx too.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs" / "_ext"))   # executed-python: example blocks run by the build

from burstbuffer import __version__  # noqa: E402

project = "burstbuffer"
author = "the burstbuffer authors"
copyright = "the burstbuffer authors, MIT licence"
version = release = __version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinxarg.ext",
    "executed",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated", "Thumbs.db", ".DS_Store"]

# MyST: `#section` links to headings of level 1-3 resolve (and fail the build when they do not)
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath"]
# every warning fails the build (-W in the Makefile); a reference that resolves nowhere is a warning too
nitpicky = False
# sphinx-argparse's domain does not answer MyST's any-role look-ups (harmless: MyST then tries the others)
suppress_warnings = ["myst.domains"]

# docstrings are written with `name` for code (as Markdown): render the default role as inline code
default_role = "code"
# no typographic replacement: `--option` in help texts must stay two hyphens
smartquotes = False
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True   # `Attributes:` as fields, not as a second description of a NamedTuple's fields

html_theme = "furo"
html_title = f"burstbuffer {release}"
html_static_path: list[str] = []


# ---------------------------------------------------------------------------- generated content
# `{policy-options}`: every built-in policy with its one-line description and its options, as
# `burstbuffer policies` prints them (burstbuffer.schedulers.resolve.all_policies), so that the page
# cannot drift from the code.
import re  # noqa: E402

from docutils import nodes  # noqa: E402
from docutils.parsers.rst import Directive  # noqa: E402


def _inline(text: str) -> list[nodes.Node]:
    """`code` spans of a one-line description as literals, the rest as text."""
    out: list[nodes.Node] = []
    for k, part in enumerate(re.split(r"`([^`]*)`", text)):
        if part:
            out.append(nodes.literal(text=part) if k % 2 else nodes.Text(part))
    return out


class PolicyOptions(Directive):
    has_content = False

    def run(self):
        from burstbuffer.schedulers.resolve import all_policies
        infos, errors = all_policies()
        if errors:
            raise self.error(f"policy-options: {errors[0]}")
        dl = nodes.definition_list()
        for info in infos:
            if info.origin != "built-in":
                continue
            item = nodes.definition_list_item()
            term = nodes.term()
            term += nodes.literal(text=info.spec)
            body = nodes.definition()
            desc = nodes.paragraph()
            desc.extend(_inline(info.description or "(no description)"))
            opts = nodes.paragraph()
            opts += nodes.Text("options: ")
            opts += nodes.literal(text=", ".join(info.options) or "none")
            body += [desc, opts]
            item += [term, body]
            dl += item
        return [dl]


def _unlisted_pages(srcdir: Path) -> list[str]:
    """Pages of docs/ that no toctree names: the index lists them under "More", so that a new page is on the
    site (and checked by -W) without a second edit, instead of failing the build as a page outside every
    toctree."""
    pages = {str(p.relative_to(srcdir).with_suffix("")) for p in srcdir.rglob("*.md")
             if "_build" not in p.parts}
    listed = {"index"}
    for p in srcdir.rglob("*.md"):
        if "_build" in p.parts:
            continue
        here = p.relative_to(srcdir).parent
        for block in re.findall(r"```\{toctree\}\n(.*?)```", p.read_text(encoding="utf-8"), flags=re.S):
            for line in block.splitlines():
                line = line.strip()
                if not line or line.startswith(":"):
                    continue
                name = line[1:] if line.startswith("/") else str(here / line)
                listed.add(str(Path(name)).removesuffix(".md"))
    return sorted(pages - listed)


def _more_pages(app, docname, source):
    if docname == "index":
        more = _unlisted_pages(Path(app.srcdir))
        if more:
            source[0] += "\n```{toctree}\n:caption: More\n:maxdepth: 1\n\n" + "\n".join(more) + "\n```\n"


def _reread_index(app, env, added, changed, removed):
    return ["index"] if (added or removed) else []   # a page came or went: the "More" list may change


def setup(app):
    app.add_directive("policy-options", PolicyOptions)
    app.connect("source-read", _more_pages)
    app.connect("env-get-outdated", _reread_index)
    return {"parallel_read_safe": True}
