"""AG-UI's protobuf binding: ``application/vnd.ag-ui.event+proto`` frames.

A body is a sequence of frames, each a 4-byte big-endian length followed by that many bytes of
one ``ag_ui.Event`` message (an envelope with one oneof arm per event type; the numbers are
AG-UI's published freeze, see ``schema/agui.proto-freeze.txt``). Needs the ``proto`` extra
(``pip install 'agui-sdk[proto]'``, the ``protobuf`` runtime).

* :func:`encode_proto_frame` (event struct or wire-form dict -> one frame);
* :class:`ProtoFrameReader`: incremental, bytes in (any split), wire-form event dicts out; a
  frame over :data:`agui.wire._sse.DEFAULT_MAX_FRAME_BYTES` raises :class:`~agui.errors.FrameTooLarge`;
  a frame cut by the end of the stream is a :class:`~agui.errors.DecodeError` from
  :meth:`ProtoFrameReader.close`;
* an envelope whose only arms are ones this build does not know (an event of a later
  protocol, the bytes well-formed protobuf) is not an error: the reader yields an
  :class:`UnknownEventArm`, which a consumer drops with a warning as it drops an unknown
  ``type`` over SSE (:func:`unknown_arm_json` gives the JSON that makes the JSON decoder do
  exactly that). Bytes that are not a well-formed envelope are a ``DecodeError``;
* :func:`looks_like_proto_stream`: the strict content check ``replay`` uses on a recording.

The compiled path: when the optional C module ``agui.wire._proto_fast`` was built (a wheel or
an editable install made where a C compiler is; see ``hatch_build.py``), a ``typed`` reader
reading JSON text (``ProtoFrameReader(typed=True, json_text=True)``, what the transports use)
hands each run of frames to it first, and it gives each event's JSON text, the very text the
general path gives (upb parse, wire dict, ``encode_json``), or leaves the frame to the Python
paths; :func:`encode_proto_frame` writes the string and JSON-value arms through it (the bytes the
Python writers give).
``AGUI_PROTO_PURE=1`` in the environment (read at import) or :func:`set_compiled` ``(False)``
turns it off; :func:`compiled` says whether it is on.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import msgspec

from agui._extras import needs_extra
from agui._jsonvalue import JSONObject
from agui.errors import DecodeError, FrameTooLarge
from agui.types import EVENT_TYPES, Event

try:
    from agui_generated.agui_pb_convert import TYPED_DECODERS, TYPED_ENCODERS, TYPED_WRITERS
    from google.protobuf.message import DecodeError as PbDecodeError

    from agui.wire import _proto_typed
    from agui.wire._proto_convert import ARM_NUMBERS, event_from_pb, event_to_pb, new_envelope
except ModuleNotFoundError as _missing:
    raise needs_extra(_missing, "proto", ("google",), "the protobuf binding") from None
from agui.wire._encode import encode_json, to_json_value
from agui.wire._proto_typed import NOT_TYPED, read_varint
from agui.wire._sse import DEFAULT_MAX_FRAME_BYTES

__all__ = [
    "PROTOBUF_MEDIA_TYPE",
    "ProtoFrameReader",
    "UnknownEventArm",
    "compiled",
    "decode_proto_event",
    "decode_typed_event",
    "encode_proto_frame",
    "iter_proto_frames",
    "looks_like_proto_stream",
    "set_compiled",
    "unknown_arm_json",
]

PROTOBUF_MEDIA_TYPE = "application/vnd.ag-ui.event+proto"
_HEADER = struct.Struct(">I")

FrameJson = Callable[[bytes, int, int], "bytes | None"]
FramesJson = Callable[[bytes, int, int], "tuple[list[bytes], int]"]
WriteFrame = Callable[[object, int], "bytes | None"]


def _load_compiled() -> Any:
    """The compiled module when it is built here from the current tables, else None."""
    try:
        from agui_generated.agui_pb_fast import TABLES

        from agui.wire import _proto_fast  # type: ignore[attr-defined, unused-ignore]
    except ImportError:  # not built here (a pure-Python install): the Python paths
        return None
    module: Any = _proto_fast
    if module.TABLES != TABLES or not _same_source(getattr(module, "SOURCE", "")):
        return None  # built from other tables or another source: stale, not used
    return module


def _same_source(digest: str) -> bool:
    """Whether ``digest`` (the module's build record) is that of the C source and tables
    beside it (hatch_build.source_digest); True where those files are not installed."""
    import hashlib

    import agui_generated

    source = Path(__file__).with_name("_proto_fast.c")
    tables = Path(agui_generated.__file__).with_name("agui_pb_tables.h")
    if not (source.is_file() and tables.is_file()):
        return True
    return hashlib.sha256(source.read_bytes() + tables.read_bytes()).hexdigest()[:16] == digest


_COMPILED: Any = _load_compiled()
_WRITABLE: dict[type, int] = (
    {
        EVENT_TYPES[name]: index
        for index, (name, writable) in enumerate(_COMPILED.ARMS)
        if writable and name in EVENT_TYPES
    }
    if _COMPILED is not None
    else {}
)
_fast: FrameJson | None = None
_frames: FramesJson | None = None
_write: WriteFrame | None = None


def compiled() -> bool:
    """Whether the compiled path is on (see the module doc)."""
    return _fast is not None


def set_compiled(on: bool) -> bool:
    """Turn the compiled path on or off (on only where it is built); returns :func:`compiled`."""
    global _fast, _frames, _write
    module = _COMPILED if on else None
    _fast = module.frame_json if module is not None else None
    _frames = module.frames_json if module is not None else None
    _write = module.write_frame if module is not None else None
    _proto_typed.compiled_value_bytes = module.value_bytes if module is not None else None
    return _fast is not None


set_compiled(not os.environ.get("AGUI_PROTO_PURE"))


@dataclass(frozen=True, slots=True)
class UnknownEventArm:
    """A frame whose envelope names only event arms this build does not know."""

    fields: tuple[int, ...]
    """The envelope field numbers it carried."""


def encode_proto_frame(event: Event | JSONObject) -> bytes:
    """One frame (4-byte big-endian length + ``Event`` bytes) for an event struct or a
    wire-form dict.

    Raises:
        DecodeError: the event has no protobuf form (a type without an arm, a patch op
            the enum lacks).
    """
    if _write is not None:  # the compiled writer: the same bytes as TYPED_WRITERS' below
        index = _WRITABLE.get(event.__class__)
        if index is not None:
            frame = _write(event, index)
            if frame is not None:
                return frame
    write = TYPED_WRITERS.get(event.__class__)
    if write is not None:  # an arm of strings and JSON values written straight to bytes
        try:
            body: bytes | None = write(event)
        except NOT_TYPED:  # not plain JSON or not encodable: the upb encoder judges it
            body = None
        if body is not None:
            return _HEADER.pack(len(body)) + body
    encode = TYPED_ENCODERS.get(event.__class__)
    if encode is not None:
        try:
            envelope = encode(event)
        except NOT_TYPED:  # not plain JSON somewhere: the wire form's encoder judges it
            envelope = None
        if envelope is not None:
            # the ordered pool has no map field: deterministic output is the default one
            typed: bytes = envelope.SerializeToString()
            return _HEADER.pack(len(typed)) + typed
    data = to_json_value(event) if isinstance(event, msgspec.Struct) else event
    wire: bytes = event_to_pb(data).SerializeToString(deterministic=True)
    return _HEADER.pack(len(wire)) + wire


def decode_typed_event(body: bytes) -> Event | None:
    """One ``Event`` message's bytes straight to its event struct, through the generated
    per-type converter (``agui_generated.agui_pb_convert``), or None when the frame needs the
    general path (:func:`decode_proto_event`, then the JSON decoder): an envelope that is not
    exactly one known arm, bytes that do not parse, or a value the struct's types refuse. A
    struct returned is the one the general path gives for the same bytes."""
    return _typed_at(body, 0, len(body))


def _typed_at(data: bytes, start: int, end: int) -> Event | None:
    """:func:`decode_typed_event` of the message ``data[start:end]`` (read in place)."""
    if end - start < 2:
        return None
    tag = data[start]
    pos = start + 1
    if tag & 0x80:  # arms past field 15 take a two-byte tag
        second = data[pos]
        if second & 0x80:
            return None
        tag = (tag & 0x7F) | (second << 7)
        pos += 1
    entry = TYPED_DECODERS.get(tag)
    if entry is None or pos >= end:
        return None
    length = data[pos]
    pos += 1
    if length & 0x80:
        length &= 0x7F
        shift = 7
        while True:
            if pos >= end or shift > 28:
                return None
            byte = data[pos]
            pos += 1
            length |= (byte & 0x7F) << shift
            if not byte & 0x80:
                break
            shift += 7
    if pos + length != end:  # one arm spanning the message, nothing else
        return None
    cls, convert, plain, fast = entry
    is_plain = data.startswith(plain, pos, end)
    if is_plain and fast is not None:  # the arm's strings read straight from the bytes
        try:
            event: Event | None = fast(data, pos + len(plain), end)
        except (IndexError, UnicodeDecodeError):
            event = None
        if event is not None:
            return event
    try:
        arm = cls.FromString(data[pos:end])
        event = convert(arm, is_plain)
    except (PbDecodeError, RuntimeError, *NOT_TYPED):
        return None
    return event


def _walk(data: bytes) -> list[tuple[int, int, int, int]] | None:
    """Top-level ``(field, wire type, start, end)`` of well-formed protobuf, else None."""
    out: list[tuple[int, int, int, int]] = []
    pos = 0
    groups: list[int] = []
    while pos < len(data):
        tag, pos = read_varint(data, pos, 5)
        field, wire = tag >> 3, tag & 7
        if tag < 0 or field == 0:
            return None
        start = pos
        if wire == 0:
            value, pos = read_varint(data, pos, 10)
            if value < 0:
                return None
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            length, pos = read_varint(data, pos, 5)
            if length < 0:
                return None
            start, pos = pos, pos + length
        elif wire == 3:
            groups.append(field)
        elif wire == 4:
            if not groups or groups.pop() != field:
                return None
        else:
            return None
        if pos > len(data):
            return None
        if not groups and wire != 4:
            out.append((field, wire, start, pos))
    return None if groups else out


def decode_proto_event(body: bytes) -> dict[str, Any] | UnknownEventArm:
    """One ``Event`` message's bytes as a wire-form event dict (or :class:`UnknownEventArm`).

    Raises:
        DecodeError: not a well-formed envelope, several event arms, no arm at all, or an arm
            whose content is not the event it names.
    """
    fields = _walk(body)
    if fields is None:
        raise DecodeError("not a protobuf Event message")
    known = {f for f, _, _, _ in fields if f in ARM_NUMBERS}
    if len(known) > 1:
        raise DecodeError("protobuf envelope carries more than one event")
    if not known:
        future = [(f, w, s, e) for f, w, s, e in fields if w == 2]
        if future and all(_walk(body[s:e]) is not None for _, _, s, e in future):
            return UnknownEventArm(tuple(sorted({f for f, _, _, _ in future})))
        raise DecodeError("protobuf envelope carries no event")
    if any(w != 2 for f, w, _, _ in fields if f in known):
        raise DecodeError("protobuf envelope carries an event in a wire type no arm uses")
    envelope = new_envelope()
    try:
        envelope.ParseFromString(body)
    except (PbDecodeError, RuntimeError) as exc:
        raise DecodeError(f"protobuf Event does not parse: {exc}") from None
    return event_from_pb(envelope)


def unknown_arm_json(item: UnknownEventArm) -> str:
    """JSON that the JSON decoder drops with its unknown-event warning (see module doc)."""
    names = ", ".join(str(f) for f in item.fields)
    return encode_json({"type": f"<protobuf event field {names}>"}).decode()


class ProtoFrameReader:
    """Incremental reader of a protobuf-binding body: bytes in, events out.

    ``feed(chunk)`` returns the wire-form event dicts (and :class:`UnknownEventArm`) of every
    frame the chunk completes (a ``typed`` reader: see :meth:`feed`); ``close()`` at end of stream raises :class:`DecodeError` when a
    frame was cut. A frame over ``max_frame_bytes`` raises :class:`FrameTooLarge`, a frame
    whose bytes are not an event :class:`DecodeError` (both fatal, as in the reference
    reader); the frames before the bad one are returned first, the error comes from the
    next ``feed`` / ``close`` call, and every later call raises it again.
    """

    def __init__(
        self,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        *,
        typed: bool = False,
        json_text: bool = False,
    ) -> None:
        self._buf = bytearray()
        self._max = max_frame_bytes
        self._error: DecodeError | None = None
        self._typed = typed
        self._json_text = json_text

    def feed(
        self, chunk: bytes | bytearray | memoryview
    ) -> list[Event | dict[str, Any] | bytes | UnknownEventArm]:
        """The events completed by ``chunk`` (see the class doc for the errors); with
        ``json_text=True`` each event the compiled path reads (where it is on) is its JSON text
        (``bytes``: what ``encode_json`` gives for its wire-form dict, for a pipeline to read as
        SSE data); with ``typed=True`` each the generated converters read is its struct
        (:func:`decode_typed_event`); any other is its wire-form dict."""
        if self._error is not None:
            raise self._error
        self._buf += chunk
        out: list[Event | dict[str, Any] | bytes | UnknownEventArm] = []
        typed = self._typed
        buf = self._buf
        if len(buf) < 4:
            return out
        (first,) = _HEADER.unpack_from(buf, 0)
        if first <= self._max and len(buf) - 4 < first:
            return out  # no frame complete yet (nothing copied while a big one arrives)
        data = bytes(buf)  # one copy; each frame is read from it in place or sliced once
        have = len(data)
        pos = 0
        frames = _frames if self._json_text else None
        while have - pos >= 4:
            if frames is not None:  # the compiled path: frames up to one it leaves alone
                texts, pos = frames(data, pos, self._max)
                out += texts
                if have - pos < 4:
                    break
            (size,) = _HEADER.unpack_from(data, pos)
            if size > self._max:
                self._error = FrameTooLarge(size, self._max)
                break
            if have - pos - 4 < size:
                break
            start = pos + 4
            pos = start + size
            if typed:
                event = _typed_at(data, start, pos)
                if event is not None:
                    out.append(event)
                    continue
            body = data[start:pos]
            try:
                out.append(decode_proto_event(body))
            except DecodeError as exc:
                self._error = exc
                break
        del buf[:pos]
        if self._error is not None and not out:
            raise self._error
        return out

    def close(self) -> None:
        """End of stream: raises what a last :meth:`feed` held back, or
        :class:`DecodeError` when a frame is incomplete."""
        if self._error is not None:
            raise self._error
        have = len(self._buf)
        if not have:
            return
        self._buf.clear()
        if have < 4:
            self._error = DecodeError(
                f"protobuf stream cut inside a frame's length prefix ({have} of 4 bytes)"
            )
        else:
            self._error = DecodeError(
                f"protobuf stream cut inside a frame ({have - 4} bytes after its length prefix)"
            )
        raise self._error


def iter_proto_frames(data: bytes) -> list[dict[str, Any] | UnknownEventArm]:
    """Every event of a whole protobuf-binding body (raises as :class:`ProtoFrameReader`)."""
    reader = ProtoFrameReader()
    out = reader.feed(data)
    reader.close()
    return cast("list[dict[str, Any] | UnknownEventArm]", out)  # (not typed: no structs)


def looks_like_proto_stream(data: bytes) -> bool:
    """Whether ``data`` is a whole protobuf-binding body: at least one frame, the frames
    tile it exactly, and every frame's first tag is an ``Event`` arm. Strict on purpose:
    JSON, JSONL and SSE text never pass (their first byte makes a length over 10 MiB)."""
    pos = 0
    if len(data) < 4:
        return False
    while pos < len(data):
        if len(data) - pos < 4:
            return False
        (size,) = _HEADER.unpack_from(data, pos)
        if size > DEFAULT_MAX_FRAME_BYTES or len(data) - pos - 4 < size:
            return False
        fields = _walk(data[pos + 4 : pos + 4 + size])
        if not fields or fields[0][1] != 2:
            return False
        pos += 4 + size
    return True
