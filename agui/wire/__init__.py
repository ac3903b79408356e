"""Wire layer: bytes <-> typed AG-UI events.

* decoding (:mod:`agui.wire._decode`): :class:`EventDecoder` (one per response
  stream), :func:`decode_event` (strict fast path, lenient repairs),
  :func:`decode_event_lenient` (one event, with :class:`DecodeWarning`
  reports), :func:`decode_input` / :func:`decode_input_lenient`; each raises
  only :class:`~agui.errors.DecodeError` on bad input (msgspec's failures are
  mapped in :mod:`agui.wire._errors_map`);
* encoding (:mod:`agui.wire._encode`): :func:`encode_event`, :func:`encode_input`,
  :func:`encode_json` (a plain value, e.g. a wire-form dict), :func:`to_json_value`;
  :func:`check_finite` (:mod:`agui.wire._finite`); :func:`json_text_to_utf8` and
  :func:`loads_json_text` (:mod:`agui.wire._fallback`: JSON text with lone surrogates);
* SSE framing (:mod:`agui.wire._sse`): :class:`SseReader`, :func:`encode_sse`,
  :func:`encode_sse_event`.

What the lenient path repairs, and how each repair is reported, is listed in
:mod:`agui.wire._lenient`; JSON Patch operations (open objects) are checked by
:mod:`agui.wire._patch_check`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agui.types import Event
from agui.wire._decode import (
    Decoded,
    DecodedInput,
    EventDecoder,
    decode_event,
    decode_event_lenient,
    decode_input,
    decode_input_lenient,
)
from agui.wire._encode import encode_event, encode_input, encode_json, to_json_value
from agui.wire._fallback import json_text_to_utf8, loads_json_text
from agui.wire._finite import check_finite
from agui.wire._lenient import DecodeWarning
from agui.wire._sse import DEFAULT_MAX_FRAME_BYTES, SseReader, encode_sse

if TYPE_CHECKING:
    from agui.wire._proto import PROTOBUF_MEDIA_TYPE as PROTOBUF_MEDIA_TYPE
    from agui.wire._proto import ProtoFrameReader as ProtoFrameReader
    from agui.wire._proto import decode_proto_event as decode_proto_event
    from agui.wire._proto import encode_proto_frame as encode_proto_frame
    from agui.wire._proto import iter_proto_frames as iter_proto_frames

#: the protobuf binding's names (the ``proto`` extra): imported on first use, so they stay
#: out of ``__all__`` (``from agui.wire import *`` works without the extra)
_PROTO = frozenset(
    {
        "PROTOBUF_MEDIA_TYPE",
        "ProtoFrameReader",
        "decode_proto_event",
        "encode_proto_frame",
        "iter_proto_frames",
    }
)

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "DecodeWarning",
    "Decoded",
    "DecodedInput",
    "EventDecoder",
    "SseReader",
    "check_finite",
    "decode_event",
    "decode_event_lenient",
    "decode_input",
    "decode_input_lenient",
    "encode_event",
    "encode_input",
    "encode_json",
    "encode_sse",
    "encode_sse_event",
    "json_text_to_utf8",
    "loads_json_text",
    "to_json_value",
]


def encode_sse_event(event: Event) -> bytes:
    """One SSE frame carrying ``event`` as compact JSON: ``encode_sse(encode_event(event))``."""
    return encode_sse(encode_event(event))


def __getattr__(name: str) -> Any:
    if name in _PROTO:
        from agui.wire import _proto

        return getattr(_proto, name)
    raise AttributeError(f"module 'agui.wire' has no attribute {name!r}")
