"""Decoding AG-UI events and RunAgentInput: the entry points and the lenient path.

Decoding has two paths:

* **strict fast path** (:mod:`agui.wire._strict`) — ``msgspec.json.decode(data,
  type=Event)`` into the generated structs (schema-exact: closed objects reject
  unknown properties, tagged unions reject unknown members, an optional open
  slot is ``NonNullJson`` and refuses ``null``), plus a check of the ops of a
  JSON Patch slot;
* **lenient path** (here), taken only when the fast path fails and ``strict`` is
  not set: the document is parsed as plain JSON (:mod:`agui.wire._fallback`),
  repaired as the compatibility rules allow (see :mod:`agui.wire._lenient`:
  unknown event types dropped, unknown properties stripped, unknown union
  members removed, legacy nulls removed, retired ``THINKING_*`` translated,
  legacy ``binary`` parts upgraded, fractional timestamps made integer
  milliseconds), each repair reported as a
  :class:`DecodeWarning`, then converted with ``msgspec.convert``. What is still
  invalid is a malformed known field: :class:`~agui.errors.DecodeError` with its
  JSON path and offending value.

Which entry point: a response stream goes through one :class:`EventDecoder`
(it carries the THINKING_* translation from event to event); a single event
through :func:`decode_event` (warnings discarded) or :func:`decode_event_lenient`
(warnings kept); a request body through :func:`decode_input` /
:func:`decode_input_lenient`. Every one of them raises only
:class:`~agui.errors.DecodeError` (or its subclass ``UnknownEventType``) on bad
input: whatever msgspec or the fallback parse raise is mapped in one place,
:mod:`agui.wire._errors_map`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from agui._jsonvalue import is_json_object
from agui.types import EVENT_TYPES, Event, RunAgentInput
from agui.wire._errors_map import FAILURES, convert, drop_error, failure, not_object
from agui.wire._fallback import parse_plain
from agui.wire._lenient import (
    DROP,
    RETIRED_EVENT_TYPES,
    UNKNOWN_EVENT_TYPE,
    DecodeWarning,
    ThinkingTranslator,
    printable,
    repair,
)
from agui.wire._patch_check import PATCH_FIELDS, check_ops
from agui.wire._strict import (
    INPUT_SHAPE,
    NOT_TYPED,
    PATCH_EVENTS,
    SHAPES,
    decode_input_strict,
    decode_input_typed,
    decode_strict,
    decode_typed,
    fast_event,
    parse_event_object,
    patch_ok,
)

__all__ = [
    "Decoded",
    "DecodedInput",
    "EventDecoder",
    "decode_event",
    "decode_event_lenient",
    "decode_input",
    "decode_input_lenient",
]

Data = bytes | bytearray | memoryview | str

_tuple_new = tuple[Any, ...].__new__


class Decoded(NamedTuple):
    """Result of a lenient event decode.

    ``event`` is the typed event, or None when the event was dropped (an
    unknown type, or a required slot holding an unrecognised member); every
    repair made — and the reason for a drop — is in ``warnings``.
    """

    event: Event | None
    warnings: tuple[DecodeWarning, ...]


def _new_decoded(fields: tuple[Any, tuple[DecodeWarning, ...]]) -> Decoded:
    return _tuple_new(Decoded, fields)


class DecodedInput(NamedTuple):
    """Result of a lenient RunAgentInput decode: the input and the repairs made."""

    input: RunAgentInput
    warnings: tuple[DecodeWarning, ...]


class EventDecoder:
    """Decoder for one event stream: the entry point for a response stream.

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
                return _new_decoded((decode_strict(data), ()))
            try:  # the fast path, inlined (see strict.fast_event)
                event = decode_typed(data)
            except NOT_TYPED:
                pass
            else:
                if event.__class__ not in PATCH_EVENTS or patch_ok(event):
                    return _new_decoded((event, ()))
            if self._translator is None:
                self._translator = ThinkingTranslator(self._id_factory)
            return _decode_lenient(data, self._translator)
        except FAILURES as exc:
            raise failure(exc, data) from None


def decode_event(data: Data, *, strict: bool = False) -> Event:
    """Decode one AG-UI event from JSON (bytes or str).

    ``strict=False`` (default): the fast path, then the lenient repairs of
    :mod:`agui.wire._lenient`, whose warnings are discarded here (use
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
            return decode_strict(data)
        try:  # the fast path, inlined (see strict.fast_event)
            event = decode_typed(data)
        except NOT_TYPED:
            pass
        else:
            if event.__class__ not in PATCH_EVENTS or patch_ok(event):
                return event
        decoded = _decode_lenient(data, ThinkingTranslator())
        if decoded.event is None:
            raise drop_error(decoded.warnings, parse_event_object(data)["type"])
        return decoded.event
    except FAILURES as exc:
        raise failure(exc, data) from None


def decode_event_lenient(data: Data) -> Decoded:
    """Decode one event on its own, reporting every repair (see :class:`Decoded`).

    For a single document (a test, a log line, a server checking one event).
    Not for a stream: it is stateless, so a retired THINKING_* event is
    translated with fresh ids each time and a THINKING_START ... THINKING_END
    sequence would not line up; decode a stream with one :class:`EventDecoder`.

    Raises:
        DecodeError: not JSON, not an object, no ``type``, or a malformed known
            field (path and offending value attached).
    """
    try:
        event = fast_event(data)
        if event is not None:
            return Decoded(event, ())
        return _decode_lenient(data, ThinkingTranslator())
    except FAILURES as exc:
        raise failure(exc, data) from None


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
            return decode_input_strict(data)
        return _decode_input_lenient(data).input
    except FAILURES as exc:
        raise failure(exc, data) from None


def decode_input_lenient(data: Data) -> DecodedInput:
    """Decode a RunAgentInput, reporting every repair made.

    Raises:
        DecodeError: as :func:`decode_input`; also when the repairs would have
            to remove the input itself.
    """
    try:
        return _decode_input_lenient(data)
    except FAILURES as exc:
        raise failure(exc, data) from None


# -- the lenient path --------------------------------------------------------------


def _decode_input_lenient(data: Data) -> DecodedInput:
    try:
        return DecodedInput(decode_input_typed(data), ())
    except NOT_TYPED:  # the lenient path decides
        pass
    obj = parse_plain(data)
    if not is_json_object(obj):
        raise not_object(obj)
    warnings: list[DecodeWarning] = []
    fixed = repair(obj, INPUT_SHAPE, [], warnings)
    if fixed is DROP:
        raise drop_error(tuple(warnings))
    return DecodedInput(convert(fixed, RunAgentInput, INPUT_SHAPE), tuple(warnings))


def _decode_lenient(data: Data, translator: ThinkingTranslator) -> Decoded:
    obj = parse_event_object(data)
    warnings: list[DecodeWarning] = []
    event_type = obj["type"]
    if event_type in RETIRED_EVENT_TYPES:
        obj = translator.translate(obj, warnings)
        event_type = obj["type"]
    cls = EVENT_TYPES.get(event_type)
    if cls is None:
        warnings.append(
            DecodeWarning(
                UNKNOWN_EVENT_TYPE, f"Dropping unrecognised event {printable(event_type)}", "$.type"
            )
        )
        return Decoded(None, tuple(warnings))
    shape = SHAPES[cls]
    fixed = repair(obj, shape, [], warnings)
    if fixed is DROP:
        return Decoded(None, tuple(warnings))
    event = convert(fixed, cls, shape)
    patch = PATCH_FIELDS.get(cls)
    if patch is not None:
        attr, wire = patch
        ops = getattr(event, attr)
        kept = check_ops(ops, [wire], warnings)
        if kept is not ops:
            setattr(event, attr, kept)
    return Decoded(event, tuple(warnings))
