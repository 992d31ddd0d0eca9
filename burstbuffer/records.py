"""Plain record classes: what ``@dataclass`` gave the records on the simulator's start-up path (the platform
and workload specs, the simulator's state), without the `dataclasses` module.

Creating a data class at import costs: the module itself imports `inspect` (and with it `ast`, `dis`,
`tokenize`), and each class's ``__init__``, ``__repr__`` and ``__eq__`` are generated as source text and
compiled at every start. A `Record` subclass writes its ``__init__`` in its own source (compiled once, into
the byte-code cache) and names its fields in `_fields`; `Record` gives it the rest, as a data class had it:

- ``repr``: ``Name(field=value, ...)`` over `_fields` (``...`` for a record met again inside its own repr,
  as the data class's guard prints it);
- ``==``: records of the same class whose `_fields` are equal, in order (``NotImplemented`` for another
  class); no hash, as a data class with ``eq`` and without ``frozen``. A subclass that compares by
  identity (a data class's ``eq=False``) sets ``__eq__ = object.__eq__`` and ``__hash__ = object.__hash__``.

docs/startup.md says what this saves.
"""
from __future__ import annotations

from _thread import get_ident

_IN_REPR: set[tuple[int, int]] = set()


class Record:
    """Base of a record class (module docstring). `_fields`: the field names, in order."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __repr__(self) -> str:
        key = (id(self), get_ident())
        if key in _IN_REPR:
            return "..."
        _IN_REPR.add(key)
        try:
            inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        finally:
            _IN_REPR.discard(key)
        return f"{type(self).__qualname__}({inner})"

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        # as tuples, as the data class compared them (an element is equal to itself: a NaN field too)
        return tuple(getattr(self, name) for name in self._fields) == tuple(getattr(other, name)
                                                                            for name in self._fields)

    __hash__ = None  # type: ignore[assignment]

    def replaced(self, **changes):
        """A new record of the same class with `changes` (field=value), as `dataclasses.replace`; for classes
        whose ``__init__`` takes every field of `_fields` by name. TypeError for a name not in `_fields`."""
        unknown = set(changes) - set(self._fields)
        if unknown:
            raise TypeError(f"{type(self).__qualname__} has no field {sorted(unknown)[0]!r}")
        return type(self)(**{name: changes.get(name, getattr(self, name)) for name in self._fields})
