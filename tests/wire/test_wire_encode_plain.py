"""Plain JSON values (an event given as a wire-form dict, JSON text built in
Python) written for the wire: nothing changes silently.

``msgspec.json.encode`` writes NaN and Infinity as ``null`` and raises a bare
``UnicodeEncodeError`` on a str holding a lone UTF-16 surrogate;
``str.encode`` raises on JSON text holding one. :func:`agui.wire.encode_json`
refuses the first and escapes the second; :func:`agui.wire.json_text_to_utf8`
escapes a lone surrogate code point in JSON text.
"""

from __future__ import annotations

import math

import pytest

from agui.errors import DecodeError, EncodeError
from agui.types import CustomEvent, StateSnapshotEvent, TextMessageContentEvent
from agui.wire import decode_event, encode_json, json_text_to_utf8


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_encode_json_refuses_nan_and_infinity_in_a_dict_event(bad):
    event = {"type": "STATE_SNAPSHOT", "snapshot": {"scores": [1.5, bad]}}
    with pytest.raises(EncodeError) as info:
        encode_json(event)
    assert info.value.path == "$.snapshot.scores[1]"


def test_encode_json_refuses_nan_next_to_a_lone_surrogate():
    with pytest.raises(EncodeError) as info:
        encode_json({"type": "CUSTOM", "name": "a\ud83d", "value": math.nan})
    assert info.value.path == "$.value"


def test_encode_json_keeps_nulls_that_are_data():
    event = {"type": "STATE_SNAPSHOT", "snapshot": {"a": None, "b": [None, 1.0]}}
    assert encode_json(event) == b'{"type":"STATE_SNAPSHOT","snapshot":{"a":null,"b":[null,1.0]}}'
    assert decode_event(encode_json(event)) == StateSnapshotEvent(
        snapshot={"a": None, "b": [None, 1.0]}
    )


def test_encode_json_writes_a_lone_surrogate_as_an_escape_that_decodes_back():
    event = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "é\ud83d"}
    out = encode_json(event)
    assert out == '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"é\\ud83d"}'.encode()
    assert decode_event(out) == TextMessageContentEvent(message_id="m", delta="é\ud83d")


def test_encode_json_escapes_a_lone_surrogate_in_a_key():
    out = encode_json({"type": "CUSTOM", "name": "n", "value": {"\udc00": 1}})
    assert decode_event(out) == CustomEvent(name="n", value={"\udc00": 1})


def test_encode_json_refuses_what_msgspec_cannot_encode():
    with pytest.raises(TypeError):
        encode_json({"type": "CUSTOM", "value": object()})


def test_json_text_with_a_lone_surrogate_code_point_becomes_utf8_that_decodes():
    text = '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"😀 \ud83d"}'
    out = json_text_to_utf8(text)
    assert out == '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"😀 \\ud83d"}'.encode()
    assert decode_event(out) == TextMessageContentEvent(message_id="m", delta="😀 \ud83d")


def test_json_text_without_a_surrogate_is_its_utf8():
    text = '{"type":"CUSTOM","name":"é"}'
    assert json_text_to_utf8(text) == text.encode("utf-8")


def test_json_text_with_a_lone_surrogate_outside_a_string_is_a_decode_error():
    with pytest.raises(DecodeError, match="not valid JSON"):
        decode_event(json_text_to_utf8('{"type":"CUSTOM","name":"n",\ud83d}'))
