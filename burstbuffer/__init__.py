"""burstbuffer: burst-buffer-aware batch scheduling beside Batsim, with an embedded SimGrid simulator."""
from .version import __version__  # noqa: F401  (the package's version, `burstbuffer.__version__`)


class Burstbuffer:
    """pybatsim's launcher entry: ``pybatsim burstbuffer.pybatsim -o '{"policy": "sjf-bb"}'``.

    pybatsim 3.2.1 reads a scheduler name containing a dot as a file name, imports the module named by the part
    before the first dot (``burstbuffer``) and instantiates the class named after it, capitalised. This class
    hands over to `burstbuffer.pybatsim.Pybatsim` (imported only then: pybatsim stays an optional dependency).
    """

    def __new__(cls, options=None):
        from .pybatsim import Pybatsim
        return Pybatsim(options)
