"""Wire layer: bytes <-> typed AG-UI events.

* decoding (:mod:`agui.wire.decode`): :class:`EventDecoder` (one per response
  stream), :func:`decode_event` (strict fast path, lenient repairs),
  :func:`decode_event_lenient` (one event, with :class:`DecodeWarning`
  reports), :func:`decode_input` / :func:`decode_input_lenient`; each raises
  only :class:`~agui.errors.DecodeError` on bad input (msgspec's failures are
  mapped in :mod:`agui.wire.errors_map`);
* encoding (:mod:`agui.wire.encode`): :func:`encode_event`, :func:`encode_input`,
  :func:`encode_json` (a plain value, e.g. a wire-form dict), :func:`to_json_value`;
  :func:`check_finite` (:mod:`agui.wire.finite`); :func:`json_text_to_utf8` and
  :func:`loads_json_text` (:mod:`agui.wire.fallback`: JSON text with lone surrogates);
* SSE framing (:mod:`agui.wire.sse`): :class:`SseReader`, :func:`encode_sse`,
  :func:`encode_sse_event`.

What the lenient path repairs, and how each repair is reported, is listed in
:mod:`agui.wire.lenient`; JSON Patch operations (open objects) are checked by
:mod:`agui.wire.patch`.
"""

from __future__ import annotations

from agui.types import Event
from agui.wire.decode import (
    Decoded,
    DecodedInput,
    EventDecoder,
    decode_event,
    decode_event_lenient,
    decode_input,
    decode_input_lenient,
)
from agui.wire.encode import encode_event, encode_input, encode_json, to_json_value
from agui.wire.fallback import json_text_to_utf8, loads_json_text
from agui.wire.finite import check_finite
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
