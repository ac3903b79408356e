"""Wire layer: bytes <-> typed AG-UI events.

* JSON codec (:mod:`agui.wire.json`): :func:`decode_event` (strict fast path,
  lenient repairs), :func:`decode_event_lenient` / :class:`EventDecoder` (with
  :class:`DecodeWarning` reports), :func:`encode_event`, :func:`decode_input`,
  :func:`encode_input`, :func:`to_json_value`, :func:`check_finite`;
* SSE framing (:mod:`agui.wire.sse`): :class:`SseReader`, :func:`encode_sse`,
  :func:`encode_sse_event`.

What the lenient path repairs, and how each repair is reported, is listed in
:mod:`agui.wire.lenient`; JSON Patch operations (open objects) are checked by
:mod:`agui.wire.patch`.
"""

from __future__ import annotations

from agui.types import Event
from agui.wire.json import (
    Decoded,
    DecodedInput,
    EventDecoder,
    check_finite,
    decode_event,
    decode_event_lenient,
    decode_input,
    decode_input_lenient,
    encode_event,
    encode_input,
    to_json_value,
)
from agui.wire.lenient import DecodeWarning
from agui.wire.sse import DEFAULT_MAX_FRAME_BYTES, SseReader, encode_sse

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
    "encode_sse",
    "encode_sse_event",
    "to_json_value",
]


def encode_sse_event(event: Event) -> bytes:
    """One SSE frame carrying ``event`` as compact JSON: ``encode_sse(encode_event(event))``."""
    return encode_sse(encode_event(event))
