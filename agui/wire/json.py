"""JSON codec for AG-UI events and RunAgentInput.

Decoding has two paths:

* **strict fast path** — ``msgspec.json.decode(data, type=Event)`` into the
  generated structs (schema-exact: closed objects reject unknown properties,
  tagged unions reject unknown members, an optional open slot is ``NonNullJson``
  and refuses ``null``), plus a check of the ops of a JSON Patch slot;
* **lenient path**, taken only when the fast path fails and ``strict`` is not
  set: the document is parsed as plain JSON, repaired as the compatibility
  rules allow (see :mod:`agui.wire.lenient`: unknown event types dropped,
  unknown properties stripped, unknown union members removed, legacy nulls
  removed, retired ``THINKING_*`` translated, legacy ``binary`` parts
  upgraded), each repair reported as a :class:`DecodeWarning`, then converted
  with ``msgspec.convert``. What is still invalid is a malformed known field:
  :class:`~agui.errors.DecodeError` with its JSON path and offending value.

Encoding writes compact JSON with camelCase names and no ``null`` for an absent
optional (``UNSET`` fields are left out; a ``None`` put in an optional
``NonNullJson`` slot by Python code is treated as absent too). Nulls that are
data — inside state, patch values, metadata values, CUSTOM ``value``, RAW
``event``, a ``null`` STATE_SNAPSHOT — are kept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from math import isfinite
from typing import Any, NamedTuple

import msgspec

from agui.errors import DecodeError, EncodeError, UnknownEventType
from agui.types import EVENT_TYPES, Event, RunAgentInput
from agui.wire.lenient import (
    DROP,
    RETIRED_EVENT_TYPES,
    UNKNOWN_EVENT_TYPE,
    DecodeWarning,
    ThinkingTranslator,
    format_path,
    repair,
)
from agui.wire.patch import PATCH_FIELDS, check_ops, ops_ok
from agui.wire.shapes import (
    ListShape,
    StructShape,
    UnionShape,
    has_legacy_null,
    json_kind,
    null_paths,
    shape_of,
)

__all__ = [
    "Decoded",
    "DecodedInput",
    "EventDecoder",
    "check_finite",
    "decode_event",
    "decode_event_lenient",
    "decode_input",
    "decode_input_lenient",
    "encode_event",
    "encode_input",
    "loads_json_text",
    "to_json_value",
]

Data = bytes | bytearray | memoryview | str

_EVENT_DECODER = msgspec.json.Decoder(Event)
_decode_typed = _EVENT_DECODER.decode
_INPUT_DECODER = msgspec.json.Decoder(RunAgentInput)
_PLAIN_DECODER = msgspec.json.Decoder()
_ENCODER = msgspec.json.Encoder()

_SHAPES: dict[type, StructShape] = {cls: shape_of(cls) for cls in EVENT_TYPES.values()}
_INPUT_SHAPE: StructShape = shape_of(RunAgentInput)
_SHAPES[RunAgentInput] = _INPUT_SHAPE


# What the fast path checks after msgspec has decoded an event. msgspec validates
# everything the types say, legacy nulls included: an optional open slot (rawEvent,
# result, ...) is typed NonNullJson, so msgspec itself refuses its `null` and the
# document goes to the lenient path, which reads it as absent. Left to check are the
# ops of a JSON Patch slot (typed as open objects, see agui.wire.patch): the classes
# in `_PATCH_EVENTS` have one, and `_patch_ok(event)` is True when its ops may be
# delivered as decoded (False sends the document to the lenient path).
_PATCH_EVENTS = frozenset(PATCH_FIELDS)
_PATCH_ATTR: dict[type, str] = {cls: attr for cls, (attr, _wire) in PATCH_FIELDS.items()}


def _patch_ok(event: Any) -> bool:
    return ops_ok(getattr(event, _PATCH_ATTR[event.__class__]))


#: events whose only optional open slot is rawEvent (the encoder's common case)
_RAW_EVENT_ONLY = frozenset(
    cls
    for cls, shape in _SHAPES.items()
    if cls is not RunAgentInput
    and shape.null_attrs == (("raw_event", "rawEvent"),)
    and not shape.nested_attrs
)


def _fast_ok(event: Any) -> bool:
    """True when a fast-path decoded event needs nothing from the lenient path."""
    return event.__class__ not in _PATCH_EVENTS or _patch_ok(event)


def _shape(cls: type) -> StructShape:
    shape = _SHAPES.get(cls)
    if shape is None:
        shape = _SHAPES[cls] = shape_of(cls)
    return shape


class Decoded(NamedTuple):
    """Result of a lenient event decode.

    ``event`` is the typed event, or None when the event was dropped (an
    unknown type, or a required slot holding an unrecognised member); every
    repair made — and the reason for a drop — is in ``warnings``.
    """

    event: Event | None
    warnings: tuple[DecodeWarning, ...]


def _new_decoded(fields: tuple[Any, tuple[DecodeWarning, ...]]) -> Decoded:
    return _tuple_new(Decoded, fields)  # type: ignore[no-any-return]


_tuple_new = tuple.__new__


class DecodedInput(NamedTuple):
    """Result of a lenient RunAgentInput decode: the input and the repairs made."""

    input: RunAgentInput
    warnings: tuple[DecodeWarning, ...]


# -- decoding ------------------------------------------------------------------


class EventDecoder:
    """Decoder for one event stream.

    The only state is what the retired ``THINKING_*`` translation needs (the
    ids it minted for the open thinking span and message), so use one
    ``EventDecoder`` per response stream. Stateless callers can use
    :func:`decode_event` / :func:`decode_event_lenient` instead.

    Args:
        strict: schema-exact decoding; nothing is repaired (see
            :func:`decode_event`).
        id_factory: makes the ids minted for translated THINKING events
            (default: ``str(uuid.uuid4())``).
    """

    __slots__ = ("_id_factory", "_strict", "_translator")

    def __init__(
        self, *, strict: bool = False, id_factory: Callable[[], str] | None = None
    ) -> None:
        self._strict = strict
        self._id_factory = id_factory
        self._translator: ThinkingTranslator | None = None

    @property
    def strict(self) -> bool:
        """True: schema-exact decoding (anything the lenient path would repair,
        and unknown or retired event types, raise ``DecodeError``); False:
        lenient, each repair reported as a ``DecodeWarning``."""
        return self._strict

    def decode(self, data: Data) -> Decoded:
        """Decode one event document (the ``data`` of one SSE frame).

        Returns :class:`Decoded` (``event`` None when dropped). In strict mode
        the warnings are always empty and unknown/retired types raise.

        Raises:
            DecodeError: not JSON, not an object, no ``type``, a malformed known
                field (``.path``, ``.value``); strict mode also: anything the
                lenient path would have repaired.
            UnknownEventType: strict mode only, for an unknown or retired type.
        """
        try:
            if self._strict:
                return _new_decoded((_decode_strict(data), ()))
            try:  # the fast path, inlined (see decode_event)
                event = _decode_typed(data)
            except msgspec.DecodeError:
                pass
            else:
                if event.__class__ not in _PATCH_EVENTS or _patch_ok(event):
                    return _new_decoded((event, ()))
            if self._translator is None:
                self._translator = ThinkingTranslator(self._id_factory)
            return _decode_lenient(data, self._translator)
        except RecursionError:
            raise _too_deep(data) from None


def decode_event(data: Data, *, strict: bool = False) -> Event:
    """Decode one AG-UI event from JSON (bytes or str).

    ``strict=False`` (default): the fast path, then the lenient repairs of
    :mod:`agui.wire.lenient`, whose warnings are discarded here (use
    :func:`decode_event_lenient` or :class:`EventDecoder` to see them).
    ``strict=True``: schema-exact, nothing repaired: unknown properties, legacy
    nulls, unknown union members, retired THINKING_* events and legacy binary
    parts are errors.

    Raises:
        UnknownEventType: the type is unknown (strict) or the event was dropped
            as unknown (lenient); ``.event_type`` holds it.
        DecodeError: not JSON / not an object / no ``type`` / malformed known
            field, with ``.path`` (e.g. ``$.delta``) and ``.value``; also a
            lenient drop for another reason (a required slot holding an
            unrecognised member).
    """
    try:
        if strict:
            return _decode_strict(data)
        try:  # the fast path, inlined (see _fast_event and _fast_ok)
            event = _decode_typed(data)
        except msgspec.DecodeError:
            pass
        else:
            if event.__class__ not in _PATCH_EVENTS or _patch_ok(event):
                return event
        decoded = _decode_lenient(data, ThinkingTranslator())
        if decoded.event is None:
            raise _drop_error(decoded.warnings, _parse_event_object(data)["type"])
        return decoded.event
    except RecursionError:
        raise _too_deep(data) from None


def decode_event_lenient(data: Data) -> Decoded:
    """Decode one event, reporting every repair (see :class:`Decoded`).

    Stateless: a THINKING_* event is translated with fresh ids, so a stream of
    them should go through one :class:`EventDecoder` instead.

    Raises:
        DecodeError: not JSON, not an object, no ``type``, or a malformed known
            field (path and offending value attached).
    """
    try:
        event = _fast_event(data)
        if event is not None:
            return Decoded(event, ())
        return _decode_lenient(data, ThinkingTranslator())
    except RecursionError:
        raise _too_deep(data) from None


def decode_input(data: Data, *, strict: bool = False) -> RunAgentInput:
    """Decode a RunAgentInput request body (server side).

    Lenient by default (legacy nulls such as ``forwardedProps: null`` or
    ``state: null`` read as absent, unknown properties stripped, unknown parts
    removed, legacy binary parts upgraded; warnings discarded — see
    :func:`decode_input_lenient`); ``strict=True`` repairs nothing.

    Raises:
        DecodeError: not JSON / not an object / malformed known field, with path.
    """
    try:
        if strict:
            return _decode_input_strict(data)
        return decode_input_lenient(data).input
    except RecursionError:
        raise _too_deep(data) from None


def decode_input_lenient(data: Data) -> DecodedInput:
    """Decode a RunAgentInput, reporting every repair made.

    Raises:
        DecodeError: as :func:`decode_input`; also when the repairs would have
            to remove the input itself.
    """
    try:
        try:
            value = _INPUT_DECODER.decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError):
            pass
        else:
            return DecodedInput(value, ())
        obj = _parse_plain(data)
        if not isinstance(obj, dict):
            raise _not_object(obj)
        warnings: list[DecodeWarning] = []
        fixed = repair(obj, _INPUT_SHAPE, [], warnings)
        if fixed is DROP:
            raise _drop_error(tuple(warnings))
        return DecodedInput(_convert(fixed, RunAgentInput, _INPUT_SHAPE), tuple(warnings))
    except RecursionError:
        raise _too_deep(data) from None


def _fast_event(data: Data) -> Event | None:
    """The strict fast path: the event, or None when the lenient path must look."""
    try:
        event = _decode_typed(data)
    except msgspec.DecodeError:  # (msgspec.ValidationError is a subclass)
        return None
    return event if _fast_ok(event) else None


def _decode_lenient(data: Data, translator: ThinkingTranslator) -> Decoded:
    obj = _parse_event_object(data)
    warnings: list[DecodeWarning] = []
    event_type = obj["type"]
    if event_type in RETIRED_EVENT_TYPES:
        obj = translator.translate(obj, warnings)
        event_type = obj["type"]
    cls = EVENT_TYPES.get(event_type)
    if cls is None:
        warnings.append(
            DecodeWarning(
                UNKNOWN_EVENT_TYPE, f"Dropping unrecognised event {event_type}", "$.type"
            )
        )
        return Decoded(None, tuple(warnings))
    shape = _SHAPES[cls]
    fixed = repair(obj, shape, [], warnings)
    if fixed is DROP:
        return Decoded(None, tuple(warnings))
    event = _convert(fixed, cls, shape)
    patch = PATCH_FIELDS.get(cls)
    if patch is not None:
        attr, wire = patch
        ops = getattr(event, attr)
        kept = check_ops(ops, [wire], warnings)
        if kept is not ops:
            setattr(event, attr, kept)
    return Decoded(event, tuple(warnings))


def _decode_strict(data: Data) -> Event:
    try:
        event = _EVENT_DECODER.decode(data)
    except msgspec.ValidationError as exc:  # (a subclass of msgspec.DecodeError)
        raise _strict_error(exc, _parse_event_object(data)) from None
    except msgspec.DecodeError:
        # not JSON to msgspec; JSON after all when it holds a lone surrogate escape
        obj = _parse_event_object(data)  # (raises the not-JSON error otherwise)
        try:
            event = msgspec.convert(obj, type=Event)
        except msgspec.ValidationError as exc:
            raise _strict_error(exc, obj) from None
    patch = PATCH_FIELDS.get(type(event))
    if patch is not None:
        check_ops(getattr(event, patch[0]), [patch[1]], None)
    return event


def _strict_error(exc: msgspec.ValidationError, obj: dict) -> DecodeError:
    event_type = obj["type"]
    if event_type in RETIRED_EVENT_TYPES:
        return UnknownEventType(event_type, f"retired 0.x event type {event_type!r} (strict mode)")
    cls = EVENT_TYPES.get(event_type)
    if cls is None:
        return UnknownEventType(event_type)
    return _map_error(exc, obj, _SHAPES[cls])


def _decode_input_strict(data: Data) -> RunAgentInput:
    try:
        value = _INPUT_DECODER.decode(data)
    except msgspec.ValidationError as exc:  # (a subclass of msgspec.DecodeError)
        obj = _parse_plain(data)
        if not isinstance(obj, dict):
            raise _not_object(obj) from None
        raise _map_error(exc, obj, _INPUT_SHAPE) from None
    except msgspec.DecodeError:
        obj = _parse_plain(data)  # JSON after all only with a lone surrogate escape
        if not isinstance(obj, dict):
            raise _not_object(obj) from None
        try:
            value = msgspec.convert(obj, type=RunAgentInput)
        except msgspec.ValidationError as exc:
            raise _map_error(exc, obj, _INPUT_SHAPE) from None
    return value


def _convert(obj: dict, cls: type, shape: StructShape) -> Any:
    try:
        return msgspec.convert(obj, type=cls)
    except msgspec.ValidationError as exc:
        raise _map_error(exc, obj, shape) from None


def _parse_plain(data: Data) -> Any:
    try:
        return _PLAIN_DECODER.decode(data)
    except msgspec.DecodeError as exc:
        try:
            obj = _parse_with_lone_surrogates(data)
        except ValueError as fallback:  # it has a surrogate escape: json's reason is the real one
            raise _not_json(data, fallback) from None
        if obj is _NOT_JSON:
            raise _not_json(data, exc) from None
        return obj


# A JSON string may hold a lone UTF-16 surrogate escape ("\ud83d"): RFC 8259's
# grammar allows it and a UTF-16 producer writes one when it splits a surrogate
# pair across two deltas (the applier re-pairs the halves when joining them).
# msgspec refuses such a string, so on a msgspec failure a document that holds a
# surrogate escape is parsed again with Python's json module, whose str keeps the
# lone code point. What json accepts and msgspec does not stays an error: the
# constants NaN and Infinity, and a number too large for a float (json would read
# 1e400 as inf, which no encoder can write back); bytes must be UTF-8 (json would
# also guess UTF-16/32).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_NOT_JSON: Any = object()


def loads_json_text(text: str) -> Any:
    """``json.loads(text)``, refusing what Python's json module accepts and JSON
    (and msgspec) does not: the constants ``NaN``/``Infinity`` and a number too
    large for a float (``1e400``, which json would read as ``inf``). Unlike
    msgspec it keeps a lone UTF-16 surrogate escape. For hand-written JSON files
    and the codec's fallback parse.

    Raises:
        ValueError: not JSON (json's reason, or one of the refusals above).
        RecursionError: nested deeper than the interpreter's recursion limit.
    """
    return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not isfinite(value):
        raise ValueError("Number out of range")
    return value


def _parse_with_lone_surrogates(data: Data) -> Any:
    """The document parsed by Python's json module, when it holds a surrogate
    escape; ``_NOT_JSON`` when it holds none (msgspec's error stands).

    Raises:
        ValueError: it holds one but is still not JSON (json's reason).
    """
    try:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        return _NOT_JSON
    if _SURROGATE_ESCAPE.search(text) is None:
        return _NOT_JSON
    try:
        return loads_json_text(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _parse_event_object(data: Data) -> dict:
    obj = _parse_plain(data)
    if not isinstance(obj, dict):
        raise DecodeError(
            f"Invalid event: the frame is not a JSON object (received {json_kind(obj)})",
            value=obj,
        )
    event_type = obj.get("type")
    if not isinstance(event_type, str) or not event_type:
        raise DecodeError(
            "Invalid event: the frame carries no event type", path="$.type", value=event_type
        )
    return obj


def _too_deep(data: Data) -> DecodeError:
    """A document nested deeper than the decoders' recursion limit (about
    a thousand levels): a DecodeError rather than a RecursionError."""
    return _not_json(data, "nested too deeply")


def _not_json(data: Data, exc: Exception | str) -> DecodeError:
    text = bytes(data).decode("utf-8", "replace") if not isinstance(data, str) else data
    preview = text if len(text) <= 200 else text[:200] + "..."
    reason = str(exc)
    if "out of range" in reason or "Exceeds the limit" in reason:
        # valid JSON syntax, but a number no decoder here represents (1e400, a
        # 5000-digit integer): say so rather than "not valid JSON"
        return DecodeError(f"a number is out of range ({reason})", value=preview)
    return DecodeError(f"not valid JSON ({reason})", value=preview)


def _not_object(obj: Any) -> DecodeError:
    return DecodeError(
        f"the request body is not a JSON object (received {json_kind(obj)})", value=obj
    )


def _drop_error(warnings: tuple[DecodeWarning, ...], event_type: str | None = None) -> DecodeError:
    if any(w.code == UNKNOWN_EVENT_TYPE for w in warnings) and event_type is not None:
        return UnknownEventType(event_type, f"unrecognised event type {event_type!r} (dropped)")
    last = warnings[-1] if warnings else None
    return DecodeError(
        f"dropped: {last.message}" if last else "dropped", path=last.path if last else "$"
    )


# -- msgspec errors -> DecodeError --------------------------------------------------

_AT = re.compile(r"^(?P<msg>.*?)(?: - at `(?P<path>\$[^`]*)`)?$", re.DOTALL)
_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+)\]|\[(\"(?:[^\"\\]|\\.)*\")\]")
_MISSING = re.compile(r"^Object missing required field `(?P<name>[^`]+)`$")
_UNKNOWN = re.compile(r"^Object contains unknown field `(?P<name>[^`]+)`$")
_ENUM = re.compile(r"^Invalid enum value (?P<value>.+)$")
_INVALID = re.compile(r"^Invalid value (?P<value>.+)$")


def _parse_path(path: str) -> list[str | int]:
    segs: list[str | int] = []
    for name, index, quoted in _SEGMENT.findall(path[1:]):
        if name:
            segs.append(name)
        elif index:
            segs.append(int(index))
        else:
            segs.append(json.loads(quoted))
    return segs


def _lookup(obj: Any, segs: list[str | int]) -> tuple[bool, Any]:
    for seg in segs:
        in_list = isinstance(seg, int) and isinstance(obj, list) and 0 <= seg < len(obj)
        if not (in_list or (isinstance(seg, str) and isinstance(obj, dict) and seg in obj)):
            return False, None
        obj = obj[seg]
    return True, obj


def _field_at(obj: Any, shape: Any, segs: list[str | int]) -> Any:
    """The FieldShape a path ends on (walking the value to pick union members)."""
    field = None
    for seg in segs:
        while isinstance(shape, UnionShape):
            if shape.tags and isinstance(obj, dict):
                tag = obj.get(shape.tag_field)
                shape = shape.tags.get(tag) if isinstance(tag, str) else None
            else:
                shape = shape.kinds.get(json_kind(obj))
        if isinstance(shape, StructShape) and isinstance(seg, str):
            field = shape.fields.get(seg)
            if field is None:
                return None
            shape = field.shape
        elif isinstance(shape, ListShape) and isinstance(seg, int):
            field, shape = None, shape.item
        else:
            return None
        found, obj = _lookup(obj, [seg])
        if not found:
            return field
    return field


def _map_error(exc: msgspec.ValidationError, obj: Any, shape: StructShape) -> DecodeError:
    match = _AT.match(str(exc))
    msg = match["msg"] if match else str(exc)
    path = match["path"] if match and match["path"] else "$"
    segs = _parse_path(path)
    missing = _MISSING.match(msg)
    if missing:
        name = missing["name"]
        return DecodeError(f"missing required field `{name}`", path=format_path([*segs, name]))
    unknown = _UNKNOWN.match(msg)
    if unknown:
        name = unknown["name"]
        _, value = _lookup(obj, [*segs, name])
        return DecodeError(
            f"unrecognised property `{name}`", path=format_path([*segs, name]), value=value
        )
    _, value = _lookup(obj, segs)
    enum = _ENUM.match(msg) or _INVALID.match(msg)
    if enum:
        field = _field_at(obj, shape, segs)
        if field is not None and field.literal:
            expected = " | ".join(json.dumps(v) for v in field.literal)
            reason = f"invalid value {enum['value']} for `{segs[-1]}`, expected {expected}"
        else:
            reason = f"unrecognised value {enum['value']} for `{segs[-1] if segs else '$'}`"
        return DecodeError(reason, path=path, value=value)
    if value is None and segs:
        field = _field_at(obj, shape, segs)
        if field is not None and not field.required and not field.null_ok:
            return DecodeError(
                f"null in optional `{segs[-1]}`: 1.0 never sends null there,"
                " an absent field is left out",
                path=path, value=None,
            )
    reason = msg.replace("Expected `", "expected ").replace("`, got `", ", received ")
    reason = reason.replace("`", "")
    return DecodeError(reason, path=path, value=value)


# -- encoding ------------------------------------------------------------------------


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
        if event.__class__ in _RAW_EVENT_ONLY and event.raw_event is not None:
            out = _ENCODER.encode(event)  # the common case: nothing to leave out
        else:
            if not isinstance(event, msgspec.Struct):
                raise TypeError(f"not a protocol struct: {type(event).__name__}")
            shape = _shape(type(event))
            if shape.may_hold_null and has_legacy_null(event, shape):
                found = null_paths(event, shape)
                out = _ENCODER.encode(_scrub(msgspec.to_builtins(event), found))
            else:
                out = _ENCODER.encode(event)
    except UnicodeEncodeError:  # a lone surrogate somewhere in a str
        return _encode_escaping_surrogates(to_json_value(event))
    # msgspec writes NaN and +-Infinity as null, in whatever slot a struct built in
    # Python holds them (a struct's types are not checked when it is built): look
    # for the float only when the output holds a null at all (bytes.find: `in` is
    # slower on bytes)
    if out.find(b"null") != -1:
        _check_finite(msgspec.to_builtins(event), [])
    return out


def check_finite(value: Any) -> None:
    """Check that a JSON value (dicts, lists, tuples, str, int, float, bool,
    None, and whatever else msgspec encodes: structs, dict subclasses, sets,
    dataclasses, enums ..., looked at as they encode) holds no NaN or infinite
    float, which JSON cannot carry (msgspec and ``JSON.stringify`` would write
    ``null`` instead). For values built by hand before they are
    encoded, e.g. an event given as a dict.

    Raises:
        EncodeError: at the first such float, with its JSON path (``$.a[1].b``).
    """
    _check_finite(value, [])


def _check_finite(value: Any, path: list[str | int]) -> None:
    """Raise :class:`EncodeError` at the first NaN or infinite float in plain
    JSON builtins ``value`` (``path``: where ``value`` sits)."""
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
            _check_finite(item, [*path, str(key)])
    elif cls is list or cls is tuple:
        for i, item in enumerate(value):
            _check_finite(item, [*path, i])
    elif cls is not str and cls is not int and cls is not bool and value is not None:
        # anything else msgspec would encode (a struct, an OrderedDict, a set, a
        # dataclass, an Enum, a float subclass ...): look at what it encodes as
        try:
            plain = msgspec.to_builtins(value)
        except (TypeError, ValueError):
            return  # not encodable at all: the encoder says so
        if plain is not value:
            _check_finite(plain, path)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _encode_escaping_surrogates(builtins: Any) -> bytes:
    """Compact JSON of plain ``builtins`` whose strs may hold lone surrogates:
    those are written as ``\\uXXXX`` escapes (as ``json.dumps(ensure_ascii=True)``
    would), every other character as UTF-8. A surrogate code point can only
    occur inside a JSON string (a key or a value), where the escape is legal.

    Raises:
        EncodeError: a NaN or infinite float in the same document.
    """
    _check_finite(builtins, [])
    text = json.dumps(builtins, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text.encode("utf-8")


def encode_input(run_input: RunAgentInput) -> bytes:
    """Compact JSON of a RunAgentInput (the request body), as :func:`encode_event`.

    Raises:
        EncodeError: a NaN or infinite float somewhere in the input (e.g. in ``state``).
    """
    return encode_event(run_input)  # type: ignore[arg-type]


def to_json_value(value: msgspec.Struct) -> Any:
    """A generated struct (or anything msgspec can encode) as plain JSON builtins:
    dicts with camelCase keys, tags included, absent optionals left out."""
    builtins = msgspec.to_builtins(value)
    if isinstance(value, msgspec.Struct):
        shape = _shape(type(value))
        if shape.may_hold_null:
            found = null_paths(value, shape)
            if found:
                builtins = _scrub(builtins, found)
    return builtins


def _scrub(builtins: Any, paths: list[list[str | int]]) -> Any:
    for path in paths:
        parent = builtins
        for seg in path[:-1]:
            parent = parent[seg]
        parent.pop(path[-1], None)
    return builtins
