"""The package's build: setup.cfg holds the metadata; this file adds the policies' C engines, built when the package
is installed (``pip install .``, ``pip install -e .`` as ``make setup`` runs it: in place; a platform wheel from
``pip wheel .`` carries them). Each is a Python extension module ``burstbuffer.schedulers.native.NAME``: the engine's
source ``NAME.c`` with ``pymodule.c`` (its module init), compiled with the engines' flags (no fused multiply-add:
results bit for bit those of their Python oracles). The list and the flags are `burstbuffer.cbuild`'s `ENGINES` and
`ENGINE_CFLAGS`, read from its file (the package itself is not importable before it is installed). Building needs a
C compiler and Python's headers (docs/installation.md)."""
import importlib.util
from pathlib import Path

from setuptools import Extension, setup

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("_burstbuffer_cbuild", HERE / "burstbuffer" / "cbuild.py")
cbuild = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cbuild)
NATIVE = "burstbuffer/schedulers/native"


def engine(name: str, libraries: tuple[str, ...]) -> Extension:
    """The extension module of the policies' C engine `name` (`cbuild.ENGINES`)."""
    return Extension(f"{cbuild.ENGINE_PACKAGE}.native.{name}", sources=[f"{NATIVE}/{name}.c", f"{NATIVE}/pymodule.c"],
                     define_macros=[("BB_MODULE", name)], extra_compile_args=list(cbuild.ENGINE_CFLAGS),
                     libraries=list(libraries), depends=[f"{NATIVE}/{name}.c", f"{NATIVE}/pymodule.c"])


setup(ext_modules=[engine(name, libs) for name, libs in cbuild.ENGINES.items()])
