"""NaN and Infinity: JSON has no such numbers, so nothing the SDK writes may hold one.

msgspec (like ``JSON.stringify``) silently writes a NaN or infinite float as
``null``, which changes the data or puts a ``null`` where the protocol forbids
one. :func:`check_finite` finds such a float in a value before it is encoded.
"""

from __future__ import annotations

from math import isfinite

import msgspec

from agui._jsonvalue import JSONValue
from agui.errors import EncodeError
from agui.wire._lenient import format_path

__all__ = ["check_finite"]


def check_finite(value: object) -> None:
    """Check that a JSON value (dicts, lists, tuples, str, int, float, bool,
    None, and whatever else msgspec encodes: structs, dict subclasses, sets,
    dataclasses, enums ..., looked at as they encode) holds no NaN or infinite
    float, which JSON cannot carry (msgspec and ``JSON.stringify`` would write
    ``null`` instead). For values built by hand before they are
    encoded, e.g. an event given as a dict.

    Raises:
        EncodeError: at the first such float, with its JSON path (``$.a[1].b``).
    """
    check_finite_at(value, [])


def check_finite_at(value: JSONValue, path: list[str | int]) -> None:
    """:func:`check_finite` for a ``value`` that sits at ``path`` (its segments).

    Raises:
        EncodeError: at the first NaN or infinite float, with its full JSON path.
    """
    cls = value.__class__
    if cls is float:
        if not isfinite(value):
            raise EncodeError(
                f"{value!r} cannot be written as JSON (NaN and Infinity are not JSON numbers)",
                path=format_path(path),
                value=value,
            )
    elif cls is dict:
        for key, item in value.items():
            check_finite_at(item, [*path, str(key)])
    elif cls is list or cls is tuple:
        for i, item in enumerate(value):
            check_finite_at(item, [*path, i])
    elif cls is not str and cls is not int and cls is not bool and value is not None:
        # anything else msgspec would encode (a struct, an OrderedDict, a set, a
        # dataclass, an Enum, a float subclass ...): look at what it encodes as
        try:
            plain = msgspec.to_builtins(value)
        except (TypeError, ValueError):
            return  # not encodable at all: the encoder says so
        if plain is not value:
            check_finite_at(plain, path)
