"""msgspec's failures -> :class:`agui.errors.DecodeError`: the one place that maps them.

msgspec raises more than ``ValidationError`` on bad input:

* ``ValidationError``: a value of the wrong type, a missing or unknown field,
  an unknown tag (its message names a JSON path, parsed here into ``.path`` and
  ``.value``);
* ``DecodeError``: not JSON (or JSON msgspec refuses: a lone surrogate escape,
  which the fallback parse then reads);
* ``UnicodeEncodeError``: a str holding a lone UTF-16 surrogate where a
  non-string is expected, or as a struct's property name (msgspec raises while
  building its own message); :func:`convert` then converts a copy with the
  surrogates replaced, to learn what is wrong and where, and reports it against
  the original value;
* ``RecursionError``: a document nested deeper than about a thousand levels.

Every decode entry point catches :data:`FAILURES` and maps them with
:func:`failure`; every conversion goes through :func:`convert`. Reasons and
paths never hold a lone surrogate (written as ``\\uXXXX``), so an error can be
printed on any terminal.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from agui._jsonvalue import JSONValue, is_json_array, is_json_object
from agui.errors import DecodeError, UnknownEventType
from agui.wire._lenient import UNKNOWN_EVENT_TYPE, DecodeWarning, format_path, printable
from agui.wire._shapes import FieldShape, ListShape, Shape, StructShape, UnionShape, json_kind

__all__ = [
    "FAILURES",
    "convert",
    "drop_error",
    "failure",
    "map_validation_error",
    "not_json",
    "not_object",
    "too_deep",
]

Data = bytes | bytearray | memoryview | str

#: What msgspec (and the stdlib fallback parse) raise on bad input; an entry
#: point catches these and raises ``failure(exc, data)`` instead.
FAILURES = (msgspec.DecodeError, UnicodeError, RecursionError)

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _error(reason: str, path: str = "$", value: JSONValue = None) -> DecodeError:
    return DecodeError(printable(reason), path=printable(path), value=value)


def failure(exc: BaseException, data: Data) -> DecodeError:
    """The DecodeError for one of :data:`FAILURES` that reached an entry point
    (``data``: the document being decoded)."""
    if isinstance(exc, RecursionError):
        return too_deep(data)
    if isinstance(exc, msgspec.ValidationError):
        return map_validation_error(exc, None, None)
    if isinstance(exc, UnicodeError):
        return _error(
            "a string holding a lone UTF-16 surrogate cannot be read here", value=_preview(data)
        )
    return not_json(data, exc)


def convert(obj: JSONValue, cls: object, shape: StructShape | None) -> Any:
    """``msgspec.convert(obj, type=cls)``, every failure a DecodeError (``shape``:
    ``cls``'s shape, for the messages; None when ``cls`` is a union).

    Raises:
        DecodeError: ``obj`` is not a valid ``cls`` (path and offending value).
    """
    try:
        return msgspec.convert(obj, type=cls)
    except msgspec.ValidationError as exc:
        raise map_validation_error(exc, obj, shape) from None
    except UnicodeError:
        pass
    except RecursionError:  # (no preview: the value is too deep to print)
        raise _error("not valid JSON (nested too deeply)") from None
    # a lone surrogate where msgspec needs UTF-8: find what is wrong on a copy
    # holding U+FFFD in their place, and report it against the original
    try:
        msgspec.convert(_without_surrogates(obj), type=cls)
    except msgspec.ValidationError as exc:
        raise map_validation_error(exc, obj, shape, replaced=True) from None
    except (UnicodeError, RecursionError):  # pragma: no cover - nothing left to fail on
        pass
    raise _error("a string holding a lone UTF-16 surrogate cannot be read here", value=obj)


def _without_surrogates(value: JSONValue) -> JSONValue:
    cls = value.__class__
    if cls is str:
        return _LONE_SURROGATE.sub("\ufffd", value)
    if cls is dict:
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if cls is list:
        return [_without_surrogates(v) for v in value]
    return value


def too_deep(data: Data) -> DecodeError:
    """A document nested deeper than the decoders' recursion limit (about
    a thousand levels): a DecodeError rather than a RecursionError."""
    return not_json(data, "nested too deeply")


def _preview(data: Data) -> str:
    text = bytes(data).decode("utf-8", "replace") if not isinstance(data, str) else data
    return text if len(text) <= 200 else text[:200] + "..."


def not_json(data: Data, exc: BaseException | str) -> DecodeError:
    """``data`` (bytes or str) is not JSON any decoder here reads."""
    preview = _preview(data)
    reason = str(exc)
    if "out of range" in reason or "Exceeds the limit" in reason:
        # valid JSON syntax, but a number no decoder here represents (1e400, a
        # 5000-digit integer): say so rather than "not valid JSON"
        return _error(f"a number is out of range ({reason})", value=preview)
    return _error(f"not valid JSON ({reason})", value=preview)


def not_object(obj: JSONValue) -> DecodeError:
    """A request body that is JSON but not an object."""
    return DecodeError(
        f"the request body is not a JSON object (received {json_kind(obj)})", value=obj
    )


def drop_error(warnings: tuple[DecodeWarning, ...], event_type: str | None = None) -> DecodeError:
    """The error for a document the lenient path dropped (its ``warnings`` say why):
    :class:`UnknownEventType` for an unknown type, else DecodeError."""
    if any(w.code == UNKNOWN_EVENT_TYPE for w in warnings) and event_type is not None:
        return UnknownEventType(event_type, f"unrecognised event type {event_type!r} (dropped)")
    last = warnings[-1] if warnings else None
    return _error(
        f"dropped: {last.message}" if last else "dropped", path=last.path if last else "$"
    )


# -- ValidationError messages -------------------------------------------------------

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


def _lookup(obj: JSONValue, segs: list[str | int]) -> tuple[bool, JSONValue]:
    for seg in segs:
        if isinstance(seg, int):
            if not (is_json_array(obj) and 0 <= seg < len(obj)):
                return False, None
            obj = obj[seg]
        else:
            if not (is_json_object(obj) and seg in obj):
                return False, None
            obj = obj[seg]
    return True, obj


def _original_segs(obj: JSONValue, segs: list[str | int]) -> list[str | int]:
    """``segs`` read on a copy of ``obj`` whose surrogates were replaced: the same
    path with each key as ``obj`` spells it."""
    out: list[str | int] = []
    for seg in segs:
        if isinstance(seg, str) and is_json_object(obj) and seg not in obj:
            seg = next((k for k in obj if _without_surrogates(k) == seg), seg)
        out.append(seg)
        found, obj = _lookup(obj, [seg])
        if not found:
            obj = None
    return out


def _field_at(obj: JSONValue, shape: Shape | None, segs: list[str | int]) -> FieldShape | None:
    """The FieldShape a path ends on (walking the value to pick union members)."""
    field = None
    for seg in segs:
        while isinstance(shape, UnionShape):
            if shape.tags and shape.tag_field is not None and is_json_object(obj):
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


def map_validation_error(
    exc: msgspec.ValidationError,
    obj: JSONValue,
    shape: StructShape | None,
    *,
    replaced: bool = False,
) -> DecodeError:
    """The DecodeError for msgspec's ``exc`` on ``obj`` (the plain JSON value
    converted; None when not at hand) of ``shape``: reason, path and offending
    value. ``replaced``: ``exc`` came from a copy of ``obj`` whose lone
    surrogates were replaced (paths and values are then read on ``obj``)."""
    match = _AT.match(str(exc))
    msg = match["msg"] if match else str(exc)
    path = match["path"] if match and match["path"] else "$"
    segs = _parse_path(path)
    if replaced:
        segs = _original_segs(obj, segs)
        path = format_path(segs)
    missing = _MISSING.match(msg)
    if missing:
        name = missing["name"]
        return _error(f"missing required field `{name}`", path=format_path([*segs, name]))
    unknown = _UNKNOWN.match(msg)
    if unknown:
        name = unknown["name"]
        if replaced:
            name = _original_segs(_lookup(obj, segs)[1], [name])[0]
        _, value = _lookup(obj, [*segs, name])
        return _error(
            f"unrecognised property `{name}`", path=format_path([*segs, name]), value=value
        )
    _, value = _lookup(obj, segs)
    enum = _ENUM.match(msg) or _INVALID.match(msg)
    if enum:
        shown = repr(value) if replaced else enum["value"]
        field = _field_at(obj, shape, segs)
        if field is not None and field.literal:
            expected = " | ".join(json.dumps(v) for v in field.literal)
            reason = f"invalid value {shown} for `{segs[-1]}`, expected {expected}"
        else:
            reason = f"unrecognised value {shown} for `{segs[-1] if segs else '$'}`"
        return _error(reason, path=path, value=value)
    if value is None and segs:
        field = _field_at(obj, shape, segs)
        if field is not None and not field.required and not field.null_ok:
            return _error(
                f"null in optional `{segs[-1]}`: 1.0 never sends null there,"
                " an absent field is left out",
                path=path,
                value=None,
            )
    reason = msg.replace("Expected `", "expected ").replace("`, got `", ", received ")
    reason = reason.replace("`", "")
    return _error(reason, path=path, value=value)
