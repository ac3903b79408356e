"""The runtime of the generated typed protobuf converters (agui_generated.agui_pb_convert).

``agui_generated.agui_pb_convert`` (written by tools/codegen_proto_convert.py) holds one
converter per event type each way: protobuf arm message -> event struct, straight from the
message's attributes into the struct's constructor, and event struct -> envelope. A typed
decode either returns the very struct the JSON path (wire dict -> JSON -> decode_event) gives
for the frame, or raises one of NOT_TYPED, and the caller takes the JSON path, which then
judges (and repairs, warns about or refuses) the frame as before. The helpers below are what
those converters call for the fields that are not a plain attribute.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterable
from typing import Any, Protocol, cast

import msgspec
from google.protobuf import struct_pb2
from google.protobuf.message import DecodeError as PbDecodeError
from google.protobuf.message import Message as PbMessage

from agui._jsonvalue import JSONObject, JSONValue, is_json_array, is_json_object
from agui.errors import DecodeError, EncodeError
from agui.types import EVENT_TYPES
from agui.wire._encode import to_json_value
from agui.wire._finite import check_finite_at
from agui.wire._patch_check import ops_ok
from agui.wire._proto_convert import (
    OP_NAMES,
    TO_PB,
    OrderedFields,
    arm_class,
    fill_message,
    input_from_wire,
    message_from_wire,
    new_envelope,
    parts_from_wire,
    plain_fields,
    set_pb_struct,
    set_pb_value,
)

__all__ = [
    "NOT_TYPED",
    "Fallback",
    "PbFields",
    "arm_class",
    "base_fields",
    "field_json",
    "field_object",
    "input_from_pb",
    "messages_from_pb",
    "new_envelope",
    "ops_from_pb",
    "read_varint",
    "run_finished_outcome",
    "set_object",
    "set_value",
    "special_to_pb",
    "subagent_finished_outcome",
    "tool_result_content",
    "tool_result_content_to_pb",
    "usage_from_pb",
    "value_bytes",
    "varint",
]

UNSET = msgspec.UNSET


class PbFields(Protocol):
    """A message of the ordered pool as the converters read and write it: fields by
    attribute (their names are the generated binding's), presence by ``HasField``."""

    def HasField(self, field_name: str) -> bool:
        """Whether the field (a message, a ``optional`` scalar, a oneof arm) is present."""
        ...

    def SetInParent(self) -> None:
        """Mark this (sub-)message present in its parent, even with no field set."""
        ...

    def __getattr__(self, name: str) -> Any: ...

    def __setattr__(self, name: str, value: object) -> None: ...


class Fallback(Exception):
    """A typed converter's "take the JSON path": a value the struct's types refuse (a role
    outside its enum, a null in a non-null slot, a non-finite number, a missing required
    member ...), or a shape only the wire-dict path reads."""


#: What a typed converter raises when the frame (or event) must take the general path.
NOT_TYPED = (
    Fallback,
    DecodeError,
    EncodeError,
    TypeError,
    ValueError,
    OverflowError,
    msgspec.ValidationError,
)

_FIELD_TYPES: dict[tuple[str, str], Any] = {
    (tag, f.name): f.type for tag, cls in EVENT_TYPES.items() for f in msgspec.structs.fields(cls)
}


_EXACT = 2**53  # EXACT_INTEGER_LIMIT (see _num)


def _typed_number(number: float) -> int | float:
    """A ``number_value`` as :func:`_num` reads it; a non-finite one raises :class:`Fallback`."""
    if number.is_integer():
        if -_EXACT <= number <= _EXACT and (number or math.copysign(1.0, number) > 0):
            return int(number)
        return number
    if number - number != 0:  # NaN or an infinity: not JSON (the JSON path refuses it)
        raise Fallback
    return number


def _typed_value(msg: struct_pb2.Value) -> JSONValue:
    """:func:`_from_value` for a typed decode: a non-finite number raises :class:`Fallback`."""
    kind = msg.WhichOneof("kind")
    if kind == "string_value":
        return msg.string_value
    if kind == "number_value":
        return _typed_number(msg.number_value)
    if kind == "struct_value":
        return _typed_object(msg.struct_value)
    if kind == "bool_value":
        return msg.bool_value
    if kind == "list_value":
        return [_typed_value(item) for item in msg.list_value.values]
    return None


def _typed_object(msg: struct_pb2.Struct) -> JSONObject:
    fields = cast("OrderedFields", msg.fields)  # the ordered pool's: repeated entries
    value = _typed_value
    return {entry.key: value(entry.value) for entry in fields}


# Open JSON values, fast: upb serializes the (already parsed and validated) Value/Struct in C,
# and the loops below read those bytes, which are canonical: one kind per Value, entries as
# key (left out when "") then value. Anything else (unknown fields ...) raises _NotCanonical
# and the message walkers above read it instead, so both give the same JSON for every input.
# Encoding writes the canonical bytes of a JSON value here and upb parses them in C.

_DOUBLE = struct.Struct("<d")
_read_double = _DOUBLE.unpack_from


class _NotCanonical(Exception):
    """Bytes the fast readers do not take (the message walkers read them)."""


def read_varint(data: bytes, pos: int, max_bytes: int) -> tuple[int, int]:
    """The varint at ``pos`` of ``data`` and the position past it; the value is -1 when the
    data ends first or the varint is longer than ``max_bytes`` (10: a 64-bit value, its last
    byte at most 1; 5: a 32-bit value, its last byte at most 0x0F)."""
    result = shift = 0
    for i in range(max_bytes):
        if pos >= len(data):
            return -1, pos
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (
                result if i < max_bytes - 1 or byte <= (0x0F if max_bytes == 5 else 1) else -1
            ), pos
    return -1, pos


def _long_size(data: bytes, pos: int) -> tuple[int, int]:
    """A length of more than one byte at ``pos``; raises :class:`_NotCanonical` when bad."""
    size, pos = read_varint(data, pos, 10)
    if size < 0:
        raise _NotCanonical
    return size, pos


def _read_value(data: bytes, pos: int, end: int) -> JSONValue:
    """The JSON of the canonical ``Value`` bytes ``data[pos:end]`` (no kind: null)."""
    if pos == end:
        return None
    tag = data[pos]
    if tag == 0x11:  # number_value: a little-endian double
        if pos + 9 != end:
            raise _NotCanonical
        return _typed_number(_read_double(data, pos + 1)[0])
    if tag == 0x08 or tag == 0x20:  # null_value (any enum number), bool_value
        flag, pos = read_varint(data, pos + 1, 10)
        if flag < 0 or pos != end:
            raise _NotCanonical
        return None if tag == 0x08 else flag != 0
    size = data[pos + 1]
    pos += 2
    if size >= 0x80:
        size, pos = _long_size(data, pos - 1)
    if pos + size != end:
        raise _NotCanonical
    if tag == 0x1A:  # string_value (UTF-8 checked by upb's parse)
        return data[pos:end].decode()
    if tag == 0x2A:  # struct_value
        return _read_object(data, pos, end)
    if tag == 0x32:  # list_value: repeated Value values = 1
        items: list[JSONValue] = []
        append = items.append
        while pos < end:
            if data[pos] != 0x0A:
                raise _NotCanonical
            size = data[pos + 1]
            pos += 2
            if size >= 0x80:
                size, pos = _long_size(data, pos - 1)
            stop = pos + size
            if stop > end:
                raise _NotCanonical
            if data[pos] == 0x1A and data[pos + 1] < 0x80 and pos + 2 + data[pos + 1] == stop:
                append(data[pos + 2 : stop].decode())  # a short string, read here
            else:
                append(_read_value(data, pos, stop))
            pos = stop
        return items
    raise _NotCanonical


def _read_object(data: bytes, pos: int, end: int) -> JSONObject:
    """The dict of the canonical ``Struct`` bytes ``data[pos:end]`` (entries in order)."""
    out: JSONObject = {}
    while pos < end:
        if data[pos] != 0x0A:  # repeated FieldsEntry fields = 1
            raise _NotCanonical
        size = data[pos + 1]
        pos += 2
        if size >= 0x80:
            size, pos = _long_size(data, pos - 1)
        stop = pos + size
        if stop > end:
            raise _NotCanonical
        key = ""
        if pos < stop and data[pos] == 0x0A:  # key = 1 (left out when "")
            size = data[pos + 1]
            pos += 2
            if size >= 0x80:
                size, pos = _long_size(data, pos - 1)
            key = data[pos : pos + size].decode()
            pos += size
        if pos < stop:  # value = 2 (left out when never set: a null)
            if data[pos] != 0x12:
                raise _NotCanonical
            size = data[pos + 1]
            pos += 2
            if size >= 0x80:
                size, pos = _long_size(data, pos - 1)
            if pos + size != stop:
                raise _NotCanonical
            if data[pos] == 0x1A and data[pos + 1] < 0x80 and pos + 2 + data[pos + 1] == stop:
                out[key] = data[pos + 2 : stop].decode()  # a short string, read here
            else:
                out[key] = _read_value(data, pos, stop)
        elif pos == stop:
            out[key] = None
        else:
            raise _NotCanonical
        pos = stop
    if pos != end:
        raise _NotCanonical
    return out


def field_json(msg: PbFields, name: str) -> Any:
    """A ``google.protobuf.Value`` field as JSON, ``UNSET`` when absent or of no kind (as the
    wire-dict path leaves it out). Raises :class:`Fallback` on a non-finite number."""
    value = getattr(msg, name)  # absent: an empty Value, no bytes
    data = value.SerializeToString()
    if not data:
        return UNSET
    try:
        return _read_value(data, 0, len(data))
    except (_NotCanonical, IndexError):
        if value.WhichOneof("kind") is None:
            return UNSET
        return _typed_value(value)


def field_object(msg: PbFields, name: str) -> Any:
    """A ``google.protobuf.Struct`` field as a dict (members in order), ``UNSET`` when absent."""
    if not msg.HasField(name):
        return UNSET
    value = getattr(msg, name)
    data = value.SerializeToString()
    try:
        return _read_object(data, 0, len(data))
    except (_NotCanonical, IndexError):
        return _typed_object(value)


_LIMIT = 9007199254740991  # the Timestamp bounds (Number.MAX_SAFE_INTEGER)


def base_fields(body: PbFields, type_number: int) -> tuple[Any, Any, Any]:
    """``(timestamp, raw_event, metadata)`` of an arm's ``base_event`` (``UNSET`` when absent).

    Raises:
        Fallback: no ``base_event``, a type that disagrees with the arm, a timestamp out of
            bounds or a null ``rawEvent`` (the JSON path judges those).
    """
    if not body.HasField("base_event"):
        raise Fallback
    base = body.base_event
    if base.type != type_number:
        raise Fallback
    timestamp = base.timestamp if base.HasField("timestamp") else UNSET
    if timestamp is not UNSET and not -_LIMIT <= timestamp <= _LIMIT:
        raise Fallback
    raw = field_json(base, "raw_event")
    if raw is None:
        raise Fallback
    return timestamp, raw, field_object(base, "metadata")


def _checked(value: JSONValue, tag: str, name: str) -> Any:
    """``value`` (a wire-form JSON member) converted to its struct field's type."""
    try:
        check_finite_at(value, [])
    except EncodeError:
        raise Fallback from None
    return msgspec.convert(value, _FIELD_TYPES[tag, name])


def _outcome(body: PbFields, tag: str, lists: tuple[tuple[str, str], ...]) -> Any:
    payload: dict[str, Any] = {}
    for field, key in lists:
        items = getattr(body, field)
        if len(items):
            payload[key] = [
                item if isinstance(item, str) else plain_fields(cast("PbMessage", item))
                for item in items
            ]
    outcome = body.outcome
    if not outcome:
        if payload:
            raise Fallback  # lists without their outcome: the JSON path judges them
        return UNSET
    if outcome == "interrupt":
        payload.setdefault("interrupts", [])
    return _checked({"type": outcome, **payload}, tag, "outcome")


def run_finished_outcome(body: PbFields) -> Any:
    """RUN_FINISHED's ``outcome`` (the string plus its lists) as its struct, ``UNSET`` when
    none; raises :class:`Fallback` (or ``msgspec.ValidationError``) where the JSON path must
    judge it."""
    return _outcome(
        body,
        "RUN_FINISHED",
        (("pending_tool_call_ids", "pendingToolCallIds"), ("interrupts", "interrupts")),
    )


def subagent_finished_outcome(body: PbFields) -> Any:
    """SUBAGENT_FINISHED's ``outcome`` as :func:`run_finished_outcome` reads RUN_FINISHED's."""
    return _outcome(body, "SUBAGENT_FINISHED", (("interrupt_ids", "interruptIds"),))


def usage_from_pb(body: PbFields, tag: str) -> Any:
    """An event's ``usage`` (a list of TokenUsage), ``UNSET`` when empty (as the wire-dict
    path drops an empty list)."""
    usage = body.usage
    if not len(usage):
        return UNSET
    return _checked([plain_fields(item) for item in usage], tag, "usage")


def tool_result_content(body: PbFields) -> Any:
    """TOOL_CALL_RESULT's ``content``: the string, else the content parts as their structs."""
    parts = body.content_parts
    content = body.content
    if content or body.HasField("content"):
        if len(parts):
            raise Fallback  # both forms: the JSON path reports it
        return content
    return _checked(
        parts_from_wire([plain_fields(p) for p in parts]), "TOOL_CALL_RESULT", "content"
    )


def ops_from_pb(ops: Iterable[PbFields]) -> list[dict[str, Any]]:
    """A JSON Patch (repeated ``JsonPatchOperation``) as the wire-form op dicts; raises
    :class:`Fallback` for an op number the enum lacks or ops the patch checks refuse."""
    out: list[dict[str, Any]] = []
    for op in ops:
        name = OP_NAMES.get(op.op)
        if name is None:
            raise Fallback
        item: dict[str, Any] = {"op": name, "path": op.path}
        if op.HasField("from"):
            item["from"] = getattr(op, "from")
        value = field_json(op, "value")
        if value is not UNSET:
            item["value"] = value
        out.append(item)
    if not ops_ok(out):
        raise Fallback
    return out


def messages_from_pb(body: PbFields) -> Any:
    """MESSAGES_SNAPSHOT's ``messages`` as their structs."""
    wire = [message_from_wire(plain_fields(m)) for m in body.messages]
    return _checked(wire, "MESSAGES_SNAPSHOT", "messages")


def input_from_pb(body: PbFields) -> Any:
    """RUN_STARTED's ``input`` as a RunAgentInput struct, ``UNSET`` when absent."""
    if not body.HasField("input"):
        return UNSET
    return _checked(input_from_wire(plain_fields(body.input)), "RUN_STARTED", "input")


_LENGTHS = [bytes((n,)) for n in range(0x80)]  # a one-byte varint, by value
_NULL = b"\x08\x00"
_TRUE = b"\x20\x01"
_FALSE = b"\x20\x00"
_pack_double = _DOUBLE.pack


def varint(size: int) -> bytes:
    """A non-negative int as a protobuf varint (a length prefix, a tag)."""
    if size < 0x80:
        return _LENGTHS[size]
    out = bytearray()
    while size >= 0x80:
        out.append(size & 0x7F | 0x80)
        size >>= 7
    out.append(size)
    return bytes(out)


compiled_value_bytes: Callable[[object], bytes | None] | None = None
"""The compiled path's :func:`value_bytes` (the same bytes, or None where this module's must
judge the value); set by :func:`agui.wire._proto.set_compiled`."""


def value_bytes(value: object) -> bytes:
    """The canonical bytes of a ``google.protobuf.Value`` holding a JSON value (objects'
    members in order), as upb writes them; ``TypeError`` for anything not plain JSON."""
    fast = compiled_value_bytes
    if fast is not None:
        data = fast(value)
        if data is not None:
            return data
    return _value_bytes(value)


def _value_bytes(value: object) -> bytes:
    """:func:`value_bytes` in Python."""
    if isinstance(value, str):
        data = value.encode()
        return b"\x1a" + varint(len(data)) + data
    if value is None:
        return _NULL
    if value is True:
        return _TRUE
    if value is False:
        return _FALSE
    if isinstance(value, int | float):
        return b"\x11" + _pack_double(float(value))
    if is_json_object(value):
        data = _object_bytes(value)
        return b"\x2a" + varint(len(data)) + data
    if is_json_array(value) or isinstance(value, tuple):
        items: Iterable[object] = cast("Iterable[object]", value)
        parts: list[bytes] = []
        for item in items:
            data = _value_bytes(item)
            parts.append(b"\x0a" + varint(len(data)) + data)
        data = b"".join(parts)
        return b"\x32" + varint(len(data)) + data
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _object_bytes(value: dict[Any, Any]) -> bytes:
    """The canonical bytes of an ordered ``google.protobuf.Struct`` holding ``value``."""
    parts: list[bytes] = []
    for key, item in value.items():
        if not isinstance(key, str):
            raise TypeError(f"{type(key).__name__} is not a JSON object key")
        data = _value_bytes(item)
        entry = b"\x12" + varint(len(data)) + data
        if key:  # proto3 leaves out an empty key
            name = key.encode()
            entry = b"\x0a" + varint(len(name)) + name + entry
        parts.append(b"\x0a" + varint(len(entry)) + entry)
    return b"".join(parts)


def set_value(msg: struct_pb2.Value, value: object) -> None:
    """Write a JSON value (from an event struct's field) into a ``google.protobuf.Value``;
    raises ``TypeError`` for anything that is not plain JSON (the caller's general path
    then encodes it from the event's wire form). ``msg`` is empty (a new envelope's)."""
    try:
        msg.MergeFromString(value_bytes(value))
    except PbDecodeError:  # nested past upb's parse depth: set field by field instead
        msg.Clear()
        set_pb_value(msg, value)


def set_object(msg: struct_pb2.Struct, value: object) -> None:
    """Write a dict into a ``google.protobuf.Struct`` field (members in order); raises
    :class:`Fallback` when it is not a dict."""
    if not is_json_object(value):
        raise Fallback
    msg.SetInParent()
    try:
        msg.MergeFromString(_object_bytes(value))
    except PbDecodeError:  # nested past upb's parse depth: set field by field instead
        msg.Clear()
        msg.SetInParent()
        set_pb_struct(msg, value)


def _wire(value: object) -> Any:
    if isinstance(value, list | tuple):
        items = cast("list[msgspec.Struct]", value)
        return [to_json_value(item) for item in items]
    return to_json_value(cast("msgspec.Struct", value))


def special_to_pb(body: PbMessage, key: str, value: object, tag: str | None) -> None:
    """Encode one member whose wire form is not its JSON form (``key`` its JSON name):
    its wire-form JSON, reshaped as :data:`TO_PB` ``[tag]`` reshapes it, into ``body``."""
    if value is UNSET:
        return
    rest: dict[str, Any] = {key: _wire(value)}
    if tag is not None:
        TO_PB[tag](rest)
    fill_message(body, rest)


def tool_result_content_to_pb(body: PbMessage, value: object) -> None:
    """TOOL_CALL_RESULT's ``content``: a string as it is, parts as :func:`special_to_pb`."""
    if isinstance(value, str):
        cast("PbFields", body).content = value
    else:
        special_to_pb(body, "content", value, "TOOL_CALL_RESULT")
