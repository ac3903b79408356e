"""The strict decode path: msgspec straight into the generated structs.

``msgspec.json.decode(data, type=Event)`` is schema-exact: closed objects reject
unknown properties, tagged unions reject unknown members, an optional open slot
is ``NonNullJson`` and refuses ``null``. What msgspec does not check is the ops
of a JSON Patch slot (typed as open objects, see :mod:`agui.wire._patch_check`).

Used two ways by :mod:`agui.wire._decode`: as the **fast path** (:func:`fast_event`:
a document it decodes cleanly needs nothing else; otherwise the lenient path
looks) and as **strict mode** (:func:`decode_strict`, :func:`decode_input_strict`:
whatever it refuses is a :class:`~agui.errors.DecodeError`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from agui._jsonvalue import is_json_object
from agui.errors import DecodeError, UnknownEventType
from agui.types import EVENT_TYPES, Event, RunAgentInput
from agui.wire._errors_map import convert, map_validation_error, not_object
from agui.wire._fallback import parse_plain
from agui.wire._lenient import RETIRED_EVENT_TYPES
from agui.wire._patch_check import PATCH_FIELDS, check_ops, ops_ok
from agui.wire._shapes import StructShape, json_kind, struct_shape

__all__ = [
    "INPUT_SHAPE",
    "NOT_TYPED",
    "PATCH_EVENTS",
    "SHAPES",
    "decode_input_strict",
    "decode_input_typed",
    "decode_strict",
    "decode_typed",
    "fast_event",
    "parse_event_object",
    "patch_ok",
]

Data = bytes | bytearray | memoryview | str

_EVENT_DECODER = msgspec.json.Decoder(Event)
#: the typed decode (raises msgspec.DecodeError/ValidationError; UnicodeEncodeError
#: for a str holding a lone surrogate code point)
decode_typed: Callable[[Data], Event] = _EVENT_DECODER.decode
#: what the typed decode raises when the document needs a closer look (the
#: lenient path, or the fallback parse): not JSON to msgspec, not the type, or
#: a str holding a lone surrogate code point
NOT_TYPED = (msgspec.DecodeError, UnicodeEncodeError)
_INPUT_DECODER = msgspec.json.Decoder(RunAgentInput)
#: the typed decode of a RunAgentInput (raises as ``decode_typed``)
decode_input_typed: Callable[[Data], RunAgentInput] = _INPUT_DECODER.decode

#: the shape of every event class (and of RunAgentInput)
SHAPES: dict[type, StructShape] = {cls: struct_shape(cls) for cls in EVENT_TYPES.values()}
INPUT_SHAPE: StructShape = struct_shape(RunAgentInput)
SHAPES[RunAgentInput] = INPUT_SHAPE

# What the fast path checks after msgspec has decoded an event. msgspec validates
# everything the types say, legacy nulls included: an optional open slot (rawEvent,
# result, ...) is typed NonNullJson, so msgspec itself refuses its `null` and the
# document goes to the lenient path, which reads it as absent. Left to check are the
# ops of a JSON Patch slot (typed as open objects, see agui.wire._patch_check): the classes
# in `PATCH_EVENTS` have one, and `patch_ok(event)` is True when its ops may be
# delivered as decoded (False sends the document to the lenient path).
PATCH_EVENTS = frozenset(PATCH_FIELDS)
_PATCH_ATTR: dict[type, str] = {cls: attr for cls, (attr, _wire) in PATCH_FIELDS.items()}


def patch_ok(event: Event) -> bool:
    """True when the JSON Patch ops of ``event`` (a class in ``PATCH_EVENTS``)
    may be delivered as msgspec decoded them."""
    return ops_ok(getattr(event, _PATCH_ATTR[event.__class__]))


def fast_event(data: Data) -> Event | None:
    """The fast path: the event, or None when the lenient path must look.

    Raises:
        RecursionError: nested too deeply (the entry point maps it).
    """
    try:
        event = decode_typed(data)
    except NOT_TYPED:  # (msgspec.ValidationError is a subclass of its DecodeError)
        return None
    if event.__class__ not in PATCH_EVENTS or patch_ok(event):
        return event
    return None


def parse_event_object(data: Data) -> dict[str, Any]:
    """``data`` parsed as plain JSON, checked to be an object with a ``type``.

    Raises:
        DecodeError: not JSON, not an object, or no (string) ``type``.
    """
    obj = parse_plain(data)
    if not is_json_object(obj):
        raise DecodeError(
            f"Invalid event: the frame is not a JSON object (received {json_kind(obj)})",
            value=obj,
        )
    event_type = obj.get("type")
    if not isinstance(event_type, str) or not event_type:
        raise DecodeError(
            "Invalid event: the frame carries no event type",
            path="$.type",
            value=event_type,
        )
    return obj


def decode_strict(data: Data) -> Event:
    """Strict mode: one event, schema-exact, nothing repaired.

    Raises:
        UnknownEventType: an unknown or retired (0.x) type.
        DecodeError: anything else msgspec refuses, or a malformed patch op.
    """
    event: Event
    try:
        event = _EVENT_DECODER.decode(data)
    except msgspec.ValidationError as exc:  # (a subclass of msgspec.DecodeError)
        obj = parse_event_object(data)
        cls = _class_of(obj)
        raise map_validation_error(exc, obj, SHAPES[cls]) from None
    except NOT_TYPED:
        # not JSON to msgspec; JSON after all when it holds a lone surrogate
        obj = parse_event_object(data)  # (raises the not-JSON error otherwise)
        cls = _class_of(obj)
        event = convert(obj, cls, SHAPES[cls])
    patch = PATCH_FIELDS.get(type(event))
    if patch is not None:
        check_ops(getattr(event, patch[0]), [patch[1]], None)
    return event


def _class_of(obj: dict[str, Any]) -> type:
    """The event class for ``obj["type"]``.

    Raises:
        UnknownEventType: the type is retired (0.x) or unknown.
    """
    event_type = obj["type"]
    if event_type in RETIRED_EVENT_TYPES:
        raise UnknownEventType(event_type, f"retired 0.x event type {event_type!r} (strict mode)")
    cls = EVENT_TYPES.get(event_type)
    if cls is None:
        raise UnknownEventType(event_type)
    return cls


def decode_input_strict(data: Data) -> RunAgentInput:
    """Strict mode for a RunAgentInput.

    Raises:
        DecodeError: not JSON / not an object / anything msgspec refuses.
    """
    try:
        return _INPUT_DECODER.decode(data)
    except msgspec.ValidationError as exc:  # (a subclass of msgspec.DecodeError)
        obj = parse_plain(data)
        if not is_json_object(obj):
            raise not_object(obj) from None
        raise map_validation_error(exc, obj, INPUT_SHAPE) from None
    except NOT_TYPED:
        obj = parse_plain(data)  # JSON after all only with a lone surrogate
        if not is_json_object(obj):
            raise not_object(obj) from None
        return convert(obj, RunAgentInput, INPUT_SHAPE)  # type: ignore[no-any-return]
