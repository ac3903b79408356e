"""The JSON codec's names, under their original module (kept so that imports of
``agui.wire.json`` keep working; import from :mod:`agui.wire` instead).

The codec lives in one module per job: :mod:`agui.wire.decode` (entry points,
lenient path), :mod:`agui.wire.strict` (fast path, strict mode),
:mod:`agui.wire.errors_map` (msgspec's failures -> DecodeError),
:mod:`agui.wire.fallback` (Python's json module for lone surrogates),
:mod:`agui.wire.finite` (NaN checks) and :mod:`agui.wire.encode`.
"""

from __future__ import annotations

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
