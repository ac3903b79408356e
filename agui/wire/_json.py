"""The JSON codec's names, under their original module (kept so that imports of
``agui.wire._json`` keep working; import from :mod:`agui.wire` instead).

The codec lives in one module per job: :mod:`agui.wire._decode` (entry points,
lenient path), :mod:`agui.wire._strict` (fast path, strict mode),
:mod:`agui.wire._errors_map` (msgspec's failures -> DecodeError),
:mod:`agui.wire._fallback` (Python's json module for lone surrogates),
:mod:`agui.wire._finite` (NaN checks) and :mod:`agui.wire._encode`.
"""

from __future__ import annotations

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
    "encode_json",
    "json_text_to_utf8",
    "loads_json_text",
    "to_json_value",
]
