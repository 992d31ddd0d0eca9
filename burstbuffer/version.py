"""The package's version, in a module of its own: any layer names it without importing the package root."""
__version__ = "0.1.0"
