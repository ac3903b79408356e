"""JSON values as decoded (``msgspec.json.decode`` / ``json.loads`` without a type).

A decoded value is a ``dict`` (object, string keys), a ``list``, a ``str``, an ``int``, a
``float``, a ``bool`` or ``None``. :data:`JSONValue` is ``Any`` on purpose: the value is
arbitrary and read by structure, and a recursive alias would need a cast at every read.
:func:`is_json_object` / :func:`is_json_array` narrow one to ``dict[str, JSONValue]`` /
``list[JSONValue]`` for a type checker exactly where ``isinstance(value, dict)`` would, both
ways (``TypeIs``); a bare ``isinstance`` leaves the keys and items of unknown type.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:  # typing.TypeIs is 3.13+; type checkers ship typing_extensions' stubs
    from typing_extensions import TypeIs

__all__ = [
    "JSONArray",
    "JSONObject",
    "JSONValue",
    "is_json_array",
    "is_json_container",
    "is_json_object",
]

JSONValue: TypeAlias = Any
"""Any decoded JSON value (arbitrary by nature; see the module doc)."""

JSONObject: TypeAlias = dict[str, JSONValue]
"""A decoded JSON object."""

JSONArray: TypeAlias = list[JSONValue]
"""A decoded JSON array."""


def is_json_object(value: object) -> TypeIs[JSONObject]:
    """True when ``value`` is a ``dict`` (a decoded JSON object); narrows it to
    :data:`JSONObject`."""
    return isinstance(value, dict)


def is_json_array(value: object) -> TypeIs[JSONArray]:
    """True when ``value`` is a ``list`` (a decoded JSON array); narrows it to
    :data:`JSONArray`."""
    return isinstance(value, list)


def is_json_container(value: object) -> TypeIs[JSONObject | JSONArray]:
    """True when ``value`` is a ``dict`` or a ``list`` (a JSON object or array); narrows it
    to :data:`JSONObject` ``|`` :data:`JSONArray`."""
    return isinstance(value, dict | list)
