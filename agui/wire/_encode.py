"""Encoding AG-UI events, RunAgentInput and plain JSON values.

Encoding writes compact JSON with camelCase names and no ``null`` for an absent
optional (``UNSET`` fields are left out; a ``None`` put in an optional
``NonNullJson`` slot by Python code is treated as absent too). Nulls that are
data — inside state, patch values, metadata values, CUSTOM ``value``, RAW
``event``, a ``null`` STATE_SNAPSHOT — are kept.

Nothing is changed silently: a NaN or infinite float (which msgspec would write
as ``null``) is an :class:`~agui.errors.EncodeError`; a str holding a lone UTF-16
surrogate is written with a ``\\uXXXX`` escape (see :mod:`agui.wire._fallback`).
"""

from __future__ import annotations

import msgspec

from agui._jsonvalue import JSONValue
from agui.types import EVENT_TYPES, Event, RunAgentInput
from agui.wire._fallback import dumps_escaping_surrogates
from agui.wire._finite import check_finite_at
from agui.wire._shapes import StructShape, has_legacy_null, null_paths, struct_shape

__all__ = ["encode_event", "encode_input", "encode_json", "to_json_value"]

_ENCODER = msgspec.json.Encoder()

_SHAPES: dict[type, StructShape] = {cls: struct_shape(cls) for cls in EVENT_TYPES.values()}
_SHAPES[RunAgentInput] = struct_shape(RunAgentInput)

#: events whose only optional open slot is rawEvent (the encoder's common case)
_RAW_EVENT_ONLY = frozenset(
    cls
    for cls, shape in _SHAPES.items()
    if cls is not RunAgentInput
    and shape.null_attrs == (("raw_event", "rawEvent"),)
    and not shape.nested_attrs
)


def _shape(cls: type) -> StructShape:
    shape = _SHAPES.get(cls)
    if shape is None:
        shape = _SHAPES[cls] = struct_shape(cls)
    return shape


def encode_event(event: Event) -> bytes:
    """Compact JSON of one event: camelCase names, tag ``type`` first, no nulls
    for absent optionals (a ``None`` in an optional ``NonNullJson`` slot is left out).

    A str holding a lone UTF-16 surrogate (decoded from a ``"\\ud83d"`` escape:
    one half of a pair a producer split across deltas) cannot be written as
    UTF-8, so that string is written as ``\\uXXXX`` escapes instead: the output
    is still UTF-8 JSON and decodes to an equal event.

    A float that is NaN or infinite cannot be written (JSON has no such
    numbers; msgspec would write ``null``): :class:`~agui.errors.EncodeError`
    names its path. Checked only when the output holds a ``null``, so the
    common case costs one substring search.

    Raises:
        TypeError: ``event`` is not a msgspec struct.
        EncodeError: a NaN or infinite float somewhere in the event.
    """
    try:
        if event.__class__ in _RAW_EVENT_ONLY and not _is_null(event.raw_event):
            out = _ENCODER.encode(event)  # the common case: nothing to leave out
        else:
            if not _is_struct(event):
                raise TypeError(f"not a protocol struct: {type(event).__name__}")
            shape = _shape(type(event))
            if shape.may_hold_null and has_legacy_null(event, shape):
                found = null_paths(event, shape)
                out = _ENCODER.encode(_scrub(msgspec.to_builtins(event), found))
            else:
                out = _ENCODER.encode(event)
    except UnicodeEncodeError:  # a lone surrogate somewhere in a str
        return dumps_escaping_surrogates(to_json_value(event))
    # msgspec writes NaN and +-Infinity as null, in whatever slot a struct built in
    # Python holds them (a struct's types are not checked when it is built): look
    # for the float only when the output holds a null at all (bytes.find: `in` is
    # slower on bytes)
    if out.find(b"null") != -1:
        check_finite_at(msgspec.to_builtins(event), [])
    return out


def encode_input(run_input: RunAgentInput) -> bytes:
    """Compact JSON of a RunAgentInput (the request body), as :func:`encode_event`.

    Raises:
        EncodeError: a NaN or infinite float somewhere in the input (e.g. in ``state``).
    """
    return encode_event(run_input)  # type: ignore[arg-type]


def encode_json(value: JSONValue) -> bytes:
    """Compact UTF-8 JSON of a plain value (an event given as a wire-form dict,
    a state, a list ...; structs and anything else msgspec encodes too), changing
    nothing silently: a str holding a lone UTF-16 surrogate is written with a
    ``\\uXXXX`` escape (as :func:`encode_event` does), a NaN or infinite float
    is refused.

    Raises:
        EncodeError: a NaN or infinite float somewhere in ``value`` (with its path).
        TypeError: a value msgspec cannot encode.
    """
    try:
        out = _ENCODER.encode(value)
    except UnicodeEncodeError:  # a lone surrogate somewhere in a str
        return dumps_escaping_surrogates(msgspec.to_builtins(value))
    if out.find(b"null") != -1:
        check_finite_at(value, [])
    return out


def to_json_value(value: msgspec.Struct) -> JSONValue:
    """A generated struct (or anything msgspec can encode) as plain JSON builtins:
    dicts with camelCase keys, tags included, absent optionals left out."""
    builtins = msgspec.to_builtins(value)
    if _is_struct(value):
        shape = _shape(type(value))
        if shape.may_hold_null:
            found = null_paths(value, shape)
            if found:
                builtins = _scrub(builtins, found)
    return builtins


def _scrub(builtins: JSONValue, paths: list[list[str | int]]) -> JSONValue:
    for path in paths:
        parent = builtins
        for seg in path[:-1]:
            parent = parent[seg]
        parent.pop(path[-1], None)
    return builtins


def _is_struct(value: object) -> bool:
    """True for a msgspec struct (a value typed as one may be anything from untyped code)."""
    return isinstance(value, msgspec.Struct)


def _is_null(value: object) -> bool:
    """True for ``None`` (a slot typed non-null may hold it when built in Python)."""
    return value is None
