"""Wire-form event dicts <-> ``ag_ui.Event`` protobuf messages (AG-UI's protobuf binding).

The binding's shapes (generated into ``agui_generated.agui_pb2`` from the schema and the freeze
record) differ from the JSON form in a few fixed places, converted here both ways as the
reference ``@ag-ui/proto`` does, so the two implementations read each other's bytes:

* the event's ``type``/``timestamp``/``rawEvent``/``metadata`` ride in ``base_event``, and the
  envelope's oneof arm names the event (a ``base_event.type`` that disagrees is a decode error);
* any-JSON fields are ``google.protobuf.Value``, objects are ``Struct`` (numbers are doubles
  there: an integral number reads back as an ``int``; beyond 2**53 precision is lost, as in JS);
  an object's members keep their order both ways (``Struct.fields`` is a protobuf map, whose
  order the Python runtime does not keep; :func:`new_envelope` messages read and write it as
  the repeated entries it is on the wire, so ``{"b": 1, "a": 2}`` reads back in that order,
  as the reference implementation reads it);
* RUN_FINISHED / SUBAGENT_FINISHED ``outcome`` is a string plus its lists
  (``interrupts``, ``pendingToolCallIds``, ``interruptIds``);
* a message's / tool result's ``content`` is the ``content`` string, or ``content_parts``
  (parts, each a oneof ``text|image|audio|video|document`` with a oneof ``source``), or for an
  ``activity`` message ``activity_content``;
* JSON Patch ``op`` is an enum (an unknown number reads back as its decimal string, which the
  JSON decoder then strips with a warning, as it does an unknown op over SSE).

Decoding is structural only (bytes -> the JSON an SSE frame would have carried); the JSON
decoder and the rest of the pipeline judge the result exactly as they judge SSE input.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, cast

from agui_generated import agui_pb2 as pb
from google.protobuf import (
    descriptor_pb2,
    descriptor_pool,
    json_format,
    message_factory,
    struct_pb2,
)
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message as PbMessage

from agui._jsonvalue import JSONObject, JSONValue, is_json_array, is_json_object
from agui.errors import DecodeError

__all__ = [
    "ARM_NUMBERS",
    "EXACT_INTEGER_LIMIT",
    "OP_NAMES",
    "TO_PB",
    "OrderedFields",
    "arm_class",
    "event_from_pb",
    "event_to_pb",
    "fill_message",
    "input_from_wire",
    "message_from_wire",
    "new_envelope",
    "parts_from_wire",
    "plain_fields",
    "set_pb_struct",
    "set_pb_value",
]

_STRUCT = "google.protobuf.Struct"
_VALUE = "google.protobuf.Value"
_PART_KINDS = ("text", "image", "audio", "video", "document")
_PARTS_ROLES = frozenset({"user", "tool"})
_KNOWN_ROLES = frozenset(
    {"developer", "system", "assistant", "user", "tool", "activity", "reasoning"}
)
OP_NAMES = {v.number: v.name.lower() for v in pb.JsonPatchOperationType.DESCRIPTOR.values}
_OP_NUMBERS = {name: number for number, name in OP_NAMES.items()}
_TYPE_NUMBERS = {v.name: v.number for v in pb.EventType.DESCRIPTOR.values}
_TYPE_NAMES = {v.number: v.name for v in pb.EventType.DESCRIPTOR.values}
_ARM_OF_TYPE = {f.name.upper(): f.name for f in pb.Event.DESCRIPTOR.oneofs_by_name["event"].fields}
_TYPE_OF_ARM = {arm: tag for tag, arm in _ARM_OF_TYPE.items()}
ARM_NUMBERS = frozenset(f.number for f in pb.Event.DESCRIPTOR.fields)


class _FieldsEntry(Protocol):
    """One member of an ordered ``google.protobuf.Struct`` (see the module doc)."""

    key: str
    value: struct_pb2.Value


class OrderedFields(Protocol):
    """``Struct.fields`` of the ordered pool: repeated :class:`_FieldsEntry`, not a map."""

    def add(self) -> _FieldsEntry:
        """A new entry at the end (``key``, ``value``)."""
        ...

    def __iter__(self) -> Iterator[_FieldsEntry]: ...


def _ordered_event_class() -> Any:
    """``ag_ui.Event`` in a pool of its own whose ``google.protobuf.Struct.fields`` is a
    repeated ``FieldsEntry`` instead of a map: the same bytes on the wire (a map is repeated
    entries), but the runtime keeps the entries in order."""
    pool = descriptor_pool.DescriptorPool()
    struct_file = descriptor_pb2.FileDescriptorProto()
    # types-protobuf leaves the descriptor API's arguments unknown (pyright strict)
    struct_pb2.DESCRIPTOR.CopyToProto(struct_file)  # pyright: ignore[reportUnknownMemberType]
    for message in struct_file.message_type:
        for nested in message.nested_type:
            nested.options.ClearField("map_entry")
    pool.Add(struct_file)  # pyright: ignore[reportUnknownMemberType]
    agui_file = descriptor_pb2.FileDescriptorProto()
    pb.DESCRIPTOR.CopyToProto(agui_file)  # pyright: ignore[reportUnknownMemberType]
    pool.Add(agui_file)  # pyright: ignore[reportUnknownMemberType]
    event = pool.FindMessageTypeByName("ag_ui.Event")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return message_factory.GetMessageClass(event)  # pyright: ignore[reportUnknownArgumentType]


_ORDERED_EVENT = _ordered_event_class()


def new_envelope() -> Any:
    """An empty ``ag_ui.Event`` whose objects keep their member order (see the module doc);
    :func:`event_to_pb` builds these, and decoding parses into one."""
    return _ORDERED_EVENT()


def arm_class(name: str) -> Any:
    """The message class of envelope arm ``name`` in the ordered pool (see the module doc)."""
    arm: object = getattr(new_envelope(), name)
    return type(arm)


def set_pb_value(msg: struct_pb2.Value, value: object) -> None:
    """Write one JSON value into a ``google.protobuf.Value`` (objects in member order)."""
    if value is None:
        msg.null_value = struct_pb2.NULL_VALUE
    elif isinstance(value, bool):
        msg.bool_value = value
    elif isinstance(value, int | float):
        msg.number_value = value
    elif isinstance(value, str):
        msg.string_value = value
    elif is_json_object(value):
        msg.struct_value.SetInParent()
        set_pb_struct(msg.struct_value, value)
    elif is_json_array(value) or isinstance(value, tuple):
        msg.list_value.SetInParent()
        items: Iterable[object] = cast("Iterable[object]", value)
        for item in items:
            set_pb_value(msg.list_value.values.add(), item)
    else:
        raise TypeError(f"{type(value).__name__} is not a JSON value")


def set_pb_struct(msg: struct_pb2.Struct, value: JSONObject) -> None:
    """Write one JSON object into a ``google.protobuf.Struct`` (members in order)."""
    if _is_map(msg):
        msg.update(value)
        return
    fields = cast("OrderedFields", msg.fields)  # the ordered pool's: repeated entries
    for key, item in value.items():
        entry = fields.add()
        entry.key = key
        set_pb_value(entry.value, item)


def _is_map(struct: PbMessage) -> bool:
    return bool(struct.DESCRIPTOR.fields_by_name["fields"].message_type.GetOptions().map_entry)


def _from_value(msg: struct_pb2.Value) -> JSONValue:
    """A ``google.protobuf.Value`` as JSON (no kind reads as null, as the reference reads it)."""
    kind = msg.WhichOneof("kind")
    if kind == "number_value":
        return _num(msg.number_value)
    if kind == "string_value":
        return msg.string_value
    if kind == "bool_value":
        return msg.bool_value
    if kind == "struct_value":
        return _from_struct(msg.struct_value)
    if kind == "list_value":
        return [_from_value(item) for item in msg.list_value.values]
    return None


def _from_struct(msg: struct_pb2.Struct) -> JSONObject:
    if _is_map(msg):
        return {key: _from_value(msg.fields[key]) for key in msg.fields}
    fields = cast("OrderedFields", msg.fields)  # the ordered pool's: repeated entries
    return {entry.key: _from_value(entry.value) for entry in fields}


# ------------------------------------------------------------------ encode


def _obj(value: object) -> dict[str, Any] | None:
    return value if is_json_object(value) else None


@functools.cache
def _json_fields(descriptor: Descriptor) -> dict[str, FieldDescriptor]:
    """A message type's fields by JSON (camelCase) name (computed once per type)."""
    return {fd.camelcase_name: fd for fd in descriptor.fields}


def fill_message(msg: PbMessage, data: dict[str, Any]) -> None:
    """Set ``msg``'s fields from a dict keyed by JSON names; unknown keys are not encoded."""
    fields = _json_fields(msg.DESCRIPTOR)
    for key, value in data.items():
        fd = fields.get(key)
        if fd is None or value is None and fd.message_type is None:
            continue
        if fd.message_type is not None:
            full = fd.message_type.full_name
            if fd.is_repeated:
                target = getattr(msg, fd.name)
                for item in value if is_json_array(value) else ():
                    if is_json_object(item):
                        fill_message(target.add(), item)
            elif full == _VALUE:
                set_pb_value(getattr(msg, fd.name), value)
            elif full == _STRUCT:
                if is_json_object(value):
                    target = getattr(msg, fd.name)
                    target.SetInParent()
                    set_pb_struct(target, value)
            elif is_json_object(value):
                fill_message(getattr(msg, fd.name), value)
        elif fd.is_repeated:
            getattr(msg, fd.name).extend(v for v in value or () if isinstance(v, str))
        elif fd.enum_type is not None:
            setattr(msg, fd.name, value)
        else:
            setattr(msg, fd.name, value)


def _part_to_wire(part: JSONValue) -> dict[str, Any] | None:
    rec = _obj(part)
    if rec is None or rec.get("type") not in _PART_KINDS:
        return None
    kind = rec["type"]
    body: dict[str, Any] = {k: v for k, v in rec.items() if k != "type"}
    if kind != "text":
        src = _obj(rec.get("source"))
        body["source"] = (
            {src["type"]: {k: v for k, v in src.items() if k != "type"}}
            if src is not None and src.get("type") in ("data", "url", "file")
            else None
        )
    return {kind: body}


def _message_to_wire(message: JSONValue) -> dict[str, Any]:
    msg = dict(_obj(message) or {})
    msg["metadata"] = _obj(msg.get("metadata"))
    if isinstance(msg.get("toolCalls"), list):
        msg["toolCalls"] = [
            dict(tc, metadata=_obj(tc.get("metadata")))
            for tc in msg["toolCalls"]
            if is_json_object(tc)
        ]
    content = msg.get("content")
    if is_json_array(content):
        msg["contentParts"] = [w for w in map(_part_to_wire, content) if w is not None]
        msg.pop("content")
    elif msg.get("role") == "activity":
        msg["activityContent"] = _obj(content) or {}
        msg.pop("content", None)
    return msg


def _input_to_wire(value: JSONValue) -> dict[str, Any] | None:
    rec = _obj(value)
    if rec is None:
        return None
    out = dict(rec)
    out["messages"] = [_message_to_wire(m) for m in rec.get("messages") or ()]
    for key in ("tools", "resume"):
        out[key] = [
            dict(item, metadata=_obj(item.get("metadata")))
            for item in rec.get(key) or ()
            if is_json_object(item)
        ]
    return out


def _ops_to_wire(ops: JSONValue) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for op in ops if is_json_array(ops) else ():
        number = _OP_NUMBERS.get(op.get("op")) if is_json_object(op) else None
        if number is None:
            raise DecodeError(
                f"JSON Patch op {op.get('op') if is_json_object(op) else op!r} "
                "has no protobuf form",
                path="$.op",
            )
        out.append(dict(op, op=number))
    return out


def _outcome_to_pb(rest: dict[str, Any]) -> dict[str, Any]:
    """The outcome member as the binding's string; its record (``{}`` when none)."""
    rec = _obj(rest.pop("outcome", None)) or {}
    rest["outcome"] = rec.get("type") if isinstance(rec.get("type"), str) else ""
    return rec


def _run_finished_to_pb(rest: dict[str, Any]) -> None:
    rec = _outcome_to_pb(rest)
    if rest["outcome"] == "success":
        rest["pendingToolCallIds"] = rec.get("pendingToolCallIds") or []
    elif rest["outcome"] == "interrupt":
        rest["interrupts"] = rec.get("interrupts") or []


def _subagent_finished_to_pb(rest: dict[str, Any]) -> None:
    rec = _outcome_to_pb(rest)
    if rest["outcome"] == "suspended":
        rest["interruptIds"] = rec.get("interruptIds") or []


def _messages_to_pb(rest: dict[str, Any]) -> None:
    rest["messages"] = [_message_to_wire(m) for m in rest.get("messages") or ()]


def _state_delta_to_pb(rest: dict[str, Any]) -> None:
    rest["delta"] = _ops_to_wire(rest.get("delta"))


def _activity_delta_to_pb(rest: dict[str, Any]) -> None:
    rest["patch"] = _ops_to_wire(rest.get("patch"))


def _tool_result_to_pb(rest: dict[str, Any]) -> None:
    if isinstance(rest.get("content"), list):
        rest["contentParts"] = [w for w in map(_part_to_wire, rest.pop("content")) if w is not None]


def _run_started_to_pb(rest: dict[str, Any]) -> None:
    if "input" in rest:
        rest["input"] = _input_to_wire(rest["input"])


TO_PB: dict[str, Callable[[dict[str, Any]], None]] = {
    "MESSAGES_SNAPSHOT": _messages_to_pb,
    "RUN_FINISHED": _run_finished_to_pb,
    "SUBAGENT_FINISHED": _subagent_finished_to_pb,
    "STATE_DELTA": _state_delta_to_pb,
    "ACTIVITY_DELTA": _activity_delta_to_pb,
    "TOOL_CALL_RESULT": _tool_result_to_pb,
    "RUN_STARTED": _run_started_to_pb,
}
"""Event type -> how :func:`event_to_pb` reshapes its wire members (past the base event)
for the binding; every other type's members map one to one."""


def event_to_pb(event: dict[str, Any]) -> Any:
    """A wire-form event dict (as :func:`agui.wire.to_json_value` gives) as an ``Event``.

    Raises:
        DecodeError: a type the binding has no arm for, or a patch op it cannot encode.
    """
    rest = dict(event)
    tag = rest.pop("type", None)
    arm = _ARM_OF_TYPE.get(tag) if isinstance(tag, str) else None
    if arm is None:
        raise DecodeError(f"event type {tag!r} has no protobuf arm", path="$.type")
    base = {
        "type": _TYPE_NUMBERS[tag],
        "timestamp": rest.pop("timestamp", None),
        "rawEvent": rest.pop("rawEvent", None),
        "metadata": _obj(rest.pop("metadata", None)),
    }
    if "rawEvent" in event:
        base["rawEvent"] = event["rawEvent"]
    else:
        base.pop("rawEvent")
    to_pb = TO_PB.get(tag)
    if to_pb is not None:
        to_pb(rest)
    out = new_envelope()
    body = getattr(out, arm)
    try:
        fill_message(body.base_event, base)
        fill_message(body, rest)
    except (json_format.ParseError, TypeError, ValueError, OverflowError) as exc:
        raise DecodeError(f"cannot encode {tag} as protobuf: {exc}") from None
    return out


# ------------------------------------------------------------------ decode


#: Largest magnitude up to which every integer is exactly a double (``Number.MAX_SAFE_INTEGER``
#: + 1): a ``google.protobuf.Value`` carries numbers as doubles, so only these survive exactly.
EXACT_INTEGER_LIMIT = 2**53


def _num(value: float) -> int | float:
    """A ``number_value`` (a double) as JSON reads it: an ``int`` when integral and at most
    :data:`EXACT_INTEGER_LIMIT` in magnitude, so a JSON integer comes back as it was sent; any
    other double (a fraction, ``-0.0``, or an integer beyond 2^53, which the double may already
    have rounded) stays a ``float``."""
    if value.is_integer() and abs(value) <= EXACT_INTEGER_LIMIT:
        if value == 0 and math.copysign(1.0, value) < 0:
            return value
        return int(value)
    return value


_SCALAR, _LIST, _MESSAGES, _OPTIONAL, _MESSAGE, _ANY, _OBJECT = range(7)
_PLANS: dict[object, tuple[tuple[str, str, int], ...]] = {}


def _plan(msg: PbMessage) -> tuple[tuple[str, str, int], ...]:
    """``(field name, JSON name, kind)`` of each field of a message type, in declaration
    order (worked out once per type: descriptor attributes are slow to read)."""
    descriptor = msg.DESCRIPTOR
    plan = _PLANS.get(descriptor)
    if plan is None:
        rows: list[tuple[str, str, int]] = []
        for fd in descriptor.fields:
            full = fd.message_type.full_name if fd.message_type is not None else ""
            if fd.is_repeated:
                kind = _MESSAGES if full else _LIST
            elif full == _VALUE:
                kind = _ANY
            elif full == _STRUCT:
                kind = _OBJECT
            elif full:
                kind = _MESSAGE
            else:
                kind = _OPTIONAL if fd.has_presence else _SCALAR
            rows.append((fd.name, fd.json_name, kind))
        plan = _PLANS[descriptor] = tuple(rows)
    return plan


def plain_fields(msg: PbMessage) -> dict[str, Any]:
    """``msg`` as a dict keyed by JSON names, as ts-proto materialises it: scalars without
    presence at their default, absent optionals and messages left out, lists always there."""
    out: dict[str, Any] = {}
    for name, json_name, kind in _plan(msg):
        if kind == _SCALAR:
            out[json_name] = getattr(msg, name)
        elif kind == _LIST:
            out[json_name] = list(getattr(msg, name))
        elif kind == _MESSAGES:
            out[json_name] = [plain_fields(x) for x in getattr(msg, name)]
        elif msg.HasField(name):
            value = getattr(msg, name)
            if kind == _ANY:
                if value.WhichOneof("kind") is not None:
                    out[json_name] = _from_value(value)
            elif kind == _OBJECT:
                out[json_name] = _from_struct(value)
            elif kind == _MESSAGE:
                out[json_name] = plain_fields(value)
            else:
                out[json_name] = value
    return out


def _source_from_wire(src: JSONValue) -> dict[str, Any] | None:
    arms = [k for k in ("data", "url", "file") if k in (src or {})]
    if not arms:
        return None
    return {"type": arms[0], **src[arms[0]]}


def parts_from_wire(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Content parts from their protobuf wire dicts (one ``oneof`` arm each) to JSON."""
    out: list[dict[str, Any]] = []
    for part in parts:
        kind = next((k for k in _PART_KINDS if k in part), None)
        if kind is None:
            continue  # a part kind this build predates: dropped, as over SSE
        body = dict(part[kind])
        if kind != "text" and "source" in body:
            src = _source_from_wire(body["source"])
            if src is None:
                continue
            body["source"] = src
        out.append({"type": kind, **body})
    return out


def message_from_wire(wire: dict[str, Any]) -> dict[str, Any]:
    """One message from its protobuf wire dict to the JSON form (parts, activity content)."""
    msg = dict(wire)
    parts = msg.pop("contentParts", [])
    activity = msg.pop("activityContent", None)
    role = msg.get("role", "")
    known = role in _KNOWN_ROLES
    uses_parts = role in _PARTS_ROLES if known else bool(parts)
    forms = ("content" in msg) + bool(parts) + (activity is not None)
    if forms > 1 and not (uses_parts and "content" in msg and not parts and activity is None):
        raise DecodeError("message carries more than one content form", path="$.messages")
    if known and parts and not uses_parts:
        raise DecodeError(f"a {role} message carries content parts", path="$.messages")
    if known and activity is not None and role != "activity":
        raise DecodeError(f"a {role} message carries activity content", path="$.messages")
    if uses_parts and "content" not in msg:
        msg["content"] = parts_from_wire(parts)
    if activity is not None and (role == "activity" or not known):
        msg["content"] = activity
    if not msg.get("toolCalls"):
        msg.pop("toolCalls", None)
    return msg


def input_from_wire(wire: dict[str, Any]) -> dict[str, Any]:
    """A ``RunAgentInput`` from its protobuf wire dict to the JSON form (its messages)."""
    out = dict(wire)
    out["messages"] = [message_from_wire(m) for m in wire.get("messages", [])]
    return out


def _ops_from_wire(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [dict(op, op=OP_NAMES.get(op["op"], str(op["op"]))) for op in ops]


def event_from_pb(envelope: PbMessage) -> dict[str, Any]:
    """An ``Event`` with one arm set as the wire-form dict an SSE frame would carry.

    Raises:
        DecodeError: no arm or no ``base_event``, a ``base_event.type`` that disagrees with
            the arm, a message carrying several content forms.
    """
    arm = envelope.WhichOneof("event")
    if arm is None:
        raise DecodeError("protobuf event envelope carries no event")
    body = getattr(envelope, arm)
    tag = _TYPE_OF_ARM[arm]
    if not body.HasField("base_event"):
        raise DecodeError(f"protobuf {tag} carries no base_event")
    base = body.base_event
    if _TYPE_NAMES.get(base.type) != tag:
        raise DecodeError(
            f"protobuf envelope carries {tag} but its base_event declares "
            f"{_TYPE_NAMES.get(base.type, base.type)}",
            path="$.type",
        )
    rest = plain_fields(body)
    rest.pop("baseEvent")
    event: dict[str, Any] = {"type": tag}
    plain_base = plain_fields(base)
    for key in ("timestamp", "rawEvent", "metadata"):
        if key in plain_base:
            event[key] = plain_base[key]
    event.update(rest)
    from_pb = FROM_PB.get(tag)
    if from_pb is not None:
        from_pb(event)
    return event


def _outcome_from_pb(event: dict[str, Any], lists: tuple[str, ...]) -> None:
    payload = {k: event.pop(k) for k in lists if event.get(k)}
    for k in lists:
        event.pop(k, None)
    outcome = event.pop("outcome")
    if outcome:
        if outcome == "interrupt":
            payload.setdefault("interrupts", [])
        event["outcome"] = {"type": outcome, **payload}
    else:
        event.update(payload)


def _no_empty_usage(event: dict[str, Any]) -> None:
    if not event.get("usage"):
        event.pop("usage", None)


def _run_finished_from_pb(event: dict[str, Any]) -> None:
    _outcome_from_pb(event, ("pendingToolCallIds", "interrupts"))
    _no_empty_usage(event)


def _subagent_finished_from_pb(event: dict[str, Any]) -> None:
    _outcome_from_pb(event, ("interruptIds",))


def _messages_from_pb(event: dict[str, Any]) -> None:
    event["messages"] = [message_from_wire(m) for m in event["messages"]]


def _state_delta_from_pb(event: dict[str, Any]) -> None:
    event["delta"] = _ops_from_wire(event["delta"])


def _activity_delta_from_pb(event: dict[str, Any]) -> None:
    event["patch"] = _ops_from_wire(event["patch"])


def _tool_result_from_pb(event: dict[str, Any]) -> None:
    parts = event.pop("contentParts")
    if "content" in event and parts:
        raise DecodeError(
            "tool result carries both string content and content parts", path="$.content"
        )
    if "content" not in event:
        event["content"] = parts_from_wire(parts)


def _run_started_from_pb(event: dict[str, Any]) -> None:
    if "input" in event:
        event["input"] = input_from_wire(event["input"])


FROM_PB: dict[str, Callable[[dict[str, Any]], None]] = {
    "MESSAGES_SNAPSHOT": _messages_from_pb,
    "RUN_FINISHED": _run_finished_from_pb,
    "SUBAGENT_FINISHED": _subagent_finished_from_pb,
    "STATE_DELTA": _state_delta_from_pb,
    "ACTIVITY_DELTA": _activity_delta_from_pb,
    "TOOL_CALL_RESULT": _tool_result_from_pb,
    "RUN_STARTED": _run_started_from_pb,
    "RUN_ERROR": _no_empty_usage,
}
"""Event type -> how :func:`event_from_pb` reshapes the binding's members (past the base
event) into the wire form (raising DecodeError where they conflict); every other type's
members map one to one."""
