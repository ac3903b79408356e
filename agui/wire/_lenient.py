"""The lenient repairs: what the compatibility rules let a consumer fix, and how.

Rules: the 1.0 validation policy (spec ``basic/processing``: unknown material is stripped
with a warning, a malformed known value is fatal) and the reference client's compatibility
boundary (0.x nulls, ``binary`` parts and THINKING_* events upgraded). Every repair is
reported as a :class:`DecodeWarning` naming its JSON path; nothing is repaired silently.

=========================  ==================================================
code                       repair
=========================  ==================================================
``unknown_event_type``     an event type this SDK does not know: dropped
``unknown_property``       a property a closed object does not describe:
                           stripped (open-by-key objects — metadata, state,
                           activity content, rawEvent, forwardedProps,
                           responseSchema, CUSTOM/RAW payloads — and JSON
                           Patch operations are open, so never stripped)
``unknown_union_member``   a union member with an unrecognised tag (content
                           part, part source, outcome, patch ``op``): removed
                           from an optional slot or from its list
``unknown_enum_value``     a string outside a closed string set (a schema
                           ``enum``, e.g. TEXT_MESSAGE_START ``role``
                           ``"narrator"``): stripped from an optional slot
                           (spec basic/processing; the reference client's
                           admitted gap is to fail instead)
``dropped_container``      an object whose *required* slot held such a member
                           or value: the object itself removed (from its list
                           or slot; an event: dropped)
``legacy_null``            ``null`` in an optional slot (0.x producers):
                           treated as absent. ``metadata: null`` and
                           ``subagentRunId: null`` stay errors (no version allows them)
``legacy_binary_part``     a 0.x ``binary`` content part upgraded to an
                           image/audio/video/document part
``retired_event``          a 0.x ``THINKING_*`` event translated to its
                           ``REASONING_*`` equivalent
``retired_field``          a field the translation cannot carry (``title``)
``minted_id``              a translated event needed an id none was open for
``fractional_timestamp``   a finite fractional number in an event's
                           ``timestamp`` (integer milliseconds in the schema;
                           Python producers send ``time.time()``): made an
                           integer number of milliseconds, by
                           :func:`timestamp_ms` (below 1e11 it is read as
                           seconds, else as milliseconds; rounded)
=========================  ==================================================

Never repaired (always a :class:`~agui.errors.DecodeError`): a malformed value
in a known field (wrong JSON type, the fractional ``timestamp`` above aside; a
value other than a ``const`` — e.g. REASONING_MESSAGE_START role
``"assistant"`` — a union slot holding a non-object), a missing required
field, a document that is not a JSON object or has no ``type``.

JSON Patch operations are checked by :mod:`agui.wire._patch_check` (unknown ``op``
removed with ``unknown_union_member``; a malformed op is an error).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agui._jsonvalue import JSONValue, is_json_array, is_json_object
from agui.wire._shapes import (
    LEAF,
    OPEN,
    OPEN_NOT_NULL,
    OPEN_OBJECT,
    DictShape,
    ListShape,
    Shape,
    StructShape,
    UnionShape,
    json_kind,
)

__all__ = [
    "RETIRED_EVENT_TYPES",
    "DecodeWarning",
    "ThinkingTranslator",
    "format_path",
    "format_pointer",
    "printable",
    "repair",
    "timestamp_ms",
]

UNKNOWN_EVENT_TYPE = "unknown_event_type"
UNKNOWN_PROPERTY = "unknown_property"
UNKNOWN_UNION_MEMBER = "unknown_union_member"
UNKNOWN_ENUM_VALUE = "unknown_enum_value"
DROPPED_CONTAINER = "dropped_container"
LEGACY_NULL = "legacy_null"
LEGACY_BINARY_PART = "legacy_binary_part"
RETIRED_EVENT = "retired_event"
RETIRED_FIELD = "retired_field"
MINTED_ID = "minted_id"
FRACTIONAL_TIMESTAMP = "fractional_timestamp"

SECONDS_BELOW = 1e11
"""A fractional timestamp below this is in seconds: 1e11 ms is March 1973, 1e11 s the year 5138."""

_MAX_SAFE = 2**53 - 1  # the schema's bound on timestamp (a JSON-safe integer)

#: wire names whose ``null`` is an error even in an optional slot (0.x and 1.0 both reject it)
NULL_IS_ERROR = frozenset({"metadata", "subagentRunId"})

Path = list[str | int]  # object keys and list indices


def format_path(path: Path) -> str:
    """``["messages", 0, "role"]`` -> ``$.messages[0].role`` (msgspec's notation)."""
    out = ["$"]
    for seg in path:
        if isinstance(seg, int):
            out.append(f"[{seg}]")
        elif seg.isidentifier():
            out.append(f".{seg}")
        else:
            out.append(f"[{json.dumps(seg)}]")
    return "".join(out)


def format_pointer(path: Path) -> str:
    """``["messages", 0, "role"]`` -> ``/messages/0/role`` (RFC 6901, as the
    reference client's warnings name paths); a lone surrogate in a key is written
    as a ``\\uXXXX`` escape (see :func:`printable`)."""
    return printable("".join("/" + str(seg).replace("~", "~0").replace("/", "~1") for seg in path))


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def printable(text: str) -> str:
    """``text`` with each lone UTF-16 surrogate written as a ``\\uXXXX`` escape
    (a str holding one cannot be written as UTF-8, e.g. to a terminal): for the
    text of warnings and errors, which may quote a key or value as received."""
    if _LONE_SURROGATE.search(text) is None:
        return text
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@dataclass(frozen=True, slots=True)
class DecodeWarning:
    """One repair made by the lenient decoder.

    Attributes:
        code: stable snake_case code (see the table in :mod:`agui.wire._lenient`).
        message: human-readable; names the JSON pointer (``/outcome``) and, for
            events, the event type.
        path: JSON path in msgspec's notation (``$.messages[0].content[1]``);
            ``$`` for the whole event.
    """

    code: str
    message: str
    path: str = "$"

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


class _Drop:
    def __repr__(self) -> str:
        return "DROP"


DROP: Any = _Drop()


def repair(value: JSONValue, shape: Shape, path: Path, warnings: list[DecodeWarning]) -> JSONValue:
    """Repair plain JSON ``value`` against ``shape``; return the (possibly new) value.

    Never mutates ``value``: a changed object or list is copied. Returns ``DROP``
    when the value itself must go (an unrecognised union member, or an object
    whose required slot held one); the caller removes it from its list or its
    optional slot, or propagates ``DROP`` when the slot is required. Values of
    the wrong JSON kind are returned unchanged for msgspec to reject.
    """
    if shape is OPEN or shape is OPEN_NOT_NULL or shape is OPEN_OBJECT:
        return value
    if isinstance(shape, StructShape):
        return _repair_struct(value, shape, path, warnings) if is_json_object(value) else value
    if isinstance(shape, UnionShape):
        return _repair_union(value, shape, path, warnings)
    if isinstance(shape, ListShape):
        if not is_json_array(value):
            return value
        out = None
        for i, item in enumerate(value):
            fixed = repair(item, shape.item, [*path, i], warnings)
            if fixed is not item:
                if out is None:
                    out = value[:i]
                if fixed is not DROP:
                    out.append(fixed)
            elif out is not None:
                out.append(item)
        return value if out is None else out
    if isinstance(shape, DictShape):
        if not is_json_object(value):
            return value
        changed: dict[str, Any] = {}
        for key, item in value.items():
            fixed = repair(item, shape.value, [*path, key], warnings)
            if fixed is not item:
                changed[key] = fixed
        if not changed:
            return value
        return {k: changed.get(k, v) for k, v in value.items() if changed.get(k) is not DROP}
    return value


def _repair_struct(
    value: dict[str, Any], shape: StructShape, path: Path, warnings: list[DecodeWarning]
) -> Any:
    out = None
    fields = shape.fields
    for key, item in value.items():
        fs = fields.get(key)
        if fs is None:
            if key == shape.tag_field or not shape.closed:
                continue
            warnings.append(
                DecodeWarning(
                    UNKNOWN_PROPERTY,
                    f"stripped unrecognised property {format_pointer([*path, key])}"
                    f" of {_describe(shape)}",
                    format_path([*path, key]),
                )
            )
            fixed = DROP
        elif item is None and not fs.required and not fs.null_ok:
            # optional slots are never null in 1.0: a 0.x producer's way to say absent
            if key in NULL_IS_ERROR and fs.shape is not OPEN_NOT_NULL:
                continue  # left for msgspec to reject (never a legacy null)
            warnings.append(
                DecodeWarning(
                    LEGACY_NULL,
                    f"treated null at {format_pointer([*path, key])} as absent (legacy null)",
                    format_path([*path, key]),
                )
            )
            fixed = DROP
        else:
            closed = fs.closed_set
            if closed is not None and item.__class__ is str and item not in closed:
                # an unrecognised member of a closed string set (spec basic/processing):
                # stripped like an unknown union member; a required slot drops its container
                warnings.append(
                    DecodeWarning(
                        UNKNOWN_ENUM_VALUE,
                        f"stripped unrecognised {key} {item!r} at {format_pointer([*path, key])}"
                        f" of {_describe(shape)} (expected one of"
                        f" {', '.join(repr(v) for v in fs.literal or ())})",
                        format_path([*path, key]),
                    )
                )
                fixed = DROP
            elif key == "timestamp" and type(item) is float and fs.shape is LEAF:
                fixed = _repair_timestamp(item, [*path, key], shape, warnings)
            else:
                fixed = repair(item, fs.shape, [*path, key], warnings)
            if fixed is DROP and fs.required:
                warnings.append(
                    DecodeWarning(
                        DROPPED_CONTAINER,
                        f"removed {_describe(shape)} at {format_pointer(path) or '/'}: its"
                        f" required {key!r} is unrecognised",
                        format_path(path),
                    )
                )
                return DROP
        if fixed is not item:
            if out is None:
                out = dict(value)
            if fixed is DROP:
                del out[key]
            else:
                out[key] = fixed
    return value if out is None else out


def timestamp_ms(value: float) -> int | None:
    """The integer milliseconds a fractional ``timestamp`` stands for (rule
    ``fractional_timestamp``): below :data:`SECONDS_BELOW` in absolute value it
    is seconds (``1733000000.123`` -> ``1733000000123``), else milliseconds
    (``1733000000123.4`` -> ``1733000000123``); rounded to the nearest
    millisecond. None when ``value`` is not finite or the result is past the
    schema's safe-integer bound (then the value stays a decode error)."""
    import math

    if not math.isfinite(value):
        return None
    ms = round(value * 1000) if abs(value) < SECONDS_BELOW else round(value)
    return ms if -_MAX_SAFE <= ms <= _MAX_SAFE else None


def _repair_timestamp(
    value: float, path: Path, shape: StructShape, warnings: list[DecodeWarning]
) -> Any:
    ms = timestamp_ms(value)
    if ms is None:
        return value  # left for msgspec to reject
    unit = "seconds" if abs(value) < SECONDS_BELOW else "milliseconds"
    warnings.append(
        DecodeWarning(
            FRACTIONAL_TIMESTAMP,
            f"made the fractional timestamp {value!r} at {format_pointer(path)} of"
            f" {_describe(shape)} the integer {ms} (read as {unit}; the schema's timestamp"
            " is integer milliseconds)",
            format_path(path),
        )
    )
    return ms


def _repair_union(
    value: JSONValue, shape: UnionShape, path: Path, warnings: list[DecodeWarning]
) -> JSONValue:
    if shape.tags and shape.tag_field is not None and is_json_object(value):
        tag = value.get(shape.tag_field)
        if not isinstance(tag, str):
            return value  # missing/odd tag (even an unhashable one): left for msgspec to reject
        member = shape.tags.get(tag)
        if member is not None:
            return _repair_struct(value, member, path, warnings)
        if tag == "binary" and _is_content_part_union(shape):
            upgraded = _upgrade_binary(value)
            if upgraded is not None:
                warnings.append(
                    DecodeWarning(
                        LEGACY_BINARY_PART,
                        f"upgraded legacy binary content part at {format_pointer(path)}"
                        f" to a {upgraded['type']!r} part",
                        format_path(path),
                    )
                )
                return _repair_struct(upgraded, shape.tags[upgraded["type"]], path, warnings)
        warnings.append(
            DecodeWarning(
                UNKNOWN_UNION_MEMBER,
                f"removed unrecognised {shape.tag_field} {tag!r} at {format_pointer(path)}",
                format_path(path),
            )
        )
        return DROP
    sub = shape.kinds.get(json_kind(value))
    if sub is None:
        return value
    return repair(value, sub, path, warnings)


def _describe(shape: StructShape) -> str:
    if shape.tag is not None:
        return f"{shape.tag}"
    return shape.cls.__name__


# -- legacy binary content parts (0.x, retired in 1.0) ---------------------------

_MEDIA_TAGS = ("image", "audio", "video", "document")


def _is_content_part_union(shape: UnionShape) -> bool:
    return all(tag in shape.tags for tag in _MEDIA_TAGS)


def _upgrade_binary(part: dict[str, Any]) -> dict[str, Any] | None:
    """A 0.x ``{type: binary, mimeType, data?|url?, filename?, id?}`` part as a 1.0
    media part, or None when it cannot be upgraded (no data and no url: an
    id-only part names nothing we can fetch; or no usable mimeType).

    mime prefix image/ audio/ video/ -> that part type, else document; ``data``
    wins over ``url``; ``filename`` -> ``metadata.filename``. The legacy ``id``
    (a provider file handle, not a part id) is not carried.
    """
    mime = part.get("mimeType")
    if not isinstance(mime, str) or not mime:
        return None
    data, url = part.get("data"), part.get("url")
    if isinstance(data, str) and data:
        source = {"type": "data", "value": data, "mimeType": mime}
    elif isinstance(url, str) and url:
        source = {"type": "url", "value": url, "mimeType": mime}
    else:
        return None
    major = mime.split("/", 1)[0]
    upgraded: dict[str, Any] = {
        "type": major if major in ("image", "audio", "video") else "document",
        "source": source,
    }
    filename = part.get("filename")
    if isinstance(filename, str):
        upgraded["metadata"] = {"filename": filename}
    return upgraded


# -- retired THINKING_* events (0.x, translated to REASONING_*) ------------------

RETIRED_EVENT_TYPES = frozenset(
    {
        "THINKING_START",
        "THINKING_END",
        "THINKING_TEXT_MESSAGE_START",
        "THINKING_TEXT_MESSAGE_CONTENT",
        "THINKING_TEXT_MESSAGE_END",
    }
)


class ThinkingTranslator:
    """Translates the five retired 0.x ``THINKING_*`` events into ``REASONING_*``.

    Stateful, one per stream: ``THINKING_START`` and ``THINKING_TEXT_MESSAGE_START``
    mint fresh ids (``id_factory``, default uuid4) that the following CONTENT
    and END events reuse, as the reference client's compatibility boundary does:

    * THINKING_START -> REASONING_START (``title`` dropped with a warning)
    * THINKING_TEXT_MESSAGE_START -> REASONING_MESSAGE_START, role ``reasoning``
    * THINKING_TEXT_MESSAGE_CONTENT -> REASONING_MESSAGE_CONTENT (current message
      id; minted with a ``minted_id`` warning when none is open)
    * THINKING_TEXT_MESSAGE_END / THINKING_END -> the matching END

    Envelope fields (timestamp, rawEvent, metadata) are carried over. The
    ``retired_event`` warning is given once per retired type per translator.
    """

    def __init__(self, id_factory: Callable[[], str] | None = None) -> None:
        self._new_id = id_factory or (lambda: str(uuid.uuid4()))
        self._span: str | None = None
        self._message: str | None = None
        self._warned: set[str] = set()

    def translate(self, obj: dict[str, Any], warnings: list[DecodeWarning]) -> dict[str, Any]:
        """Return the REASONING_* form of retired event ``obj`` (a new dict)."""
        old = obj["type"]
        out = dict(obj)
        if old == "THINKING_START":
            out["type"] = "REASONING_START"
            if "title" in out:
                del out["title"]
                warnings.append(
                    DecodeWarning(
                        RETIRED_FIELD,
                        "dropped /title of retired THINKING_START (REASONING_START has no title)",
                        "$.title",
                    )
                )
            self._span = out["messageId"] = self._new_id()
        elif old == "THINKING_END":
            out["type"] = "REASONING_END"
            out["messageId"] = self._span or self._mint(old, warnings)
            self._span = None
        elif old == "THINKING_TEXT_MESSAGE_START":
            out["type"] = "REASONING_MESSAGE_START"
            out["role"] = "reasoning"
            self._message = out["messageId"] = self._new_id()
        elif old == "THINKING_TEXT_MESSAGE_CONTENT":
            out["type"] = "REASONING_MESSAGE_CONTENT"
            if self._message is None:
                self._message = self._mint(old, warnings)
            out["messageId"] = self._message
        else:  # THINKING_TEXT_MESSAGE_END
            out["type"] = "REASONING_MESSAGE_END"
            out["messageId"] = self._message or self._mint(old, warnings)
            self._message = None
        if old not in self._warned:
            self._warned.add(old)
            warnings.append(
                DecodeWarning(
                    RETIRED_EVENT,
                    f"translated retired event {old} into {out['type']}",
                    "$.type",
                )
            )
        return out

    def _mint(self, old: str, warnings: list[DecodeWarning]) -> str:
        new = self._new_id()
        warnings.append(
            DecodeWarning(
                MINTED_ID,
                f"{old} arrived with no open thinking item; minted messageId {new!r}",
                "$.messageId",
            )
        )
        return new
