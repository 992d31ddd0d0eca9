"""``executed-python``: a Python block that the documentation build runs, shown with what it printed and the
figures it saved, so that an example page cannot drift from the code (docs/notebook.md).

The block runs in a fresh Python process (the interpreter of the build, the repository first on its path), in
an empty temporary folder; its standard output is shown under the code, and every ``*.png`` it left in that
folder is shown after it (copied into ``docs/_generated/``, which git ignores). A block that fails fails the
build, with its error output.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]


class ExecutedPython(SphinxDirective):
    has_content = True

    def run(self):
        code = "\n".join(self.content)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               "MPLBACKEND": "Agg"}
        gen = Path(self.env.srcdir) / "_generated"
        gen.mkdir(exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="bb-doc-") as tmp:
            r = subprocess.run([sys.executable, "-c", code], cwd=tmp, env=env, capture_output=True, text=True,
                               timeout=600)
            if r.returncode != 0:
                raise ExtensionError(f"{self.env.docname}: executed-python block failed:\n{r.stderr[-3000:]}")
            stem = self.env.docname.replace("/", "-")
            images = []
            for i, png in enumerate(sorted(Path(tmp).glob("*.png"))):
                dst = gen / f"{stem}-{self.lineno}-{i}-{png.name}"
                shutil.copyfile(png, dst)
                images.append(dst)
        out = [nodes.literal_block(code, code, language="python")]
        if r.stdout.strip():
            out.append(nodes.literal_block(r.stdout, r.stdout, language="text"))
        for dst in images:
            uri = "/" + dst.relative_to(self.env.srcdir).as_posix()
            out.append(nodes.image(uri=uri, alt=dst.name))   # Sphinx's image collector copies it
        return out


def setup(app):
    app.add_directive("executed-python", ExecutedPython)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
