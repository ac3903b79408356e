"""Lone UTF-16 surrogate escapes (``"\\ud83d"``) on the wire.

A JSON string may hold one (RFC 8259's grammar allows it); a UTF-16 producer
writes one when it splits a surrogate pair across two deltas, and the applier
re-pairs the halves when joining fragments. msgspec refuses such strings, so the
codec falls back to Python's json module for that document (decode) and writes
the lone code point back as an escape (encode).
"""

from __future__ import annotations

import json

import pytest

from agui.errors import DecodeError
from agui.types import RunAgentInput, TextMessageContentEvent, UserMessage
from agui.wire import (
    EventDecoder,
    decode_event,
    decode_event_lenient,
    decode_input,
    encode_event,
    encode_input,
    encode_sse_event,
    to_json_value,
)

HIGH = b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"a\\ud83d"}'
LOW = b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\\ude00b"}'


@pytest.mark.parametrize("data", [HIGH, HIGH.decode(), bytearray(HIGH), memoryview(HIGH)])
def test_lone_surrogate_escape_decodes_without_warning(data):
    assert decode_event(data) == TextMessageContentEvent(message_id="m", delta="a\ud83d")
    assert decode_event_lenient(data) == (
        TextMessageContentEvent(message_id="m", delta="a\ud83d"),
        (),
    )
    assert EventDecoder().decode(data).warnings == ()


def test_lone_low_surrogate_and_reversed_pair_decode():
    assert decode_event(LOW).delta == "\ude00b"
    assert decode_event(
        b'{"type":"CUSTOM","name":"n","value":{"k\\udfff":"\\udfff\\ud800"}}'
    ).value == {"k\udfff": "\udfff\ud800"}


def test_lone_surrogate_escape_decodes_in_strict_mode():
    assert decode_event(HIGH, strict=True).delta == "a\ud83d"


def test_strict_mode_still_checks_a_document_holding_a_lone_surrogate():
    with pytest.raises(DecodeError) as info:
        decode_event(
            b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\\ud83d","x":1}', strict=True
        )
    assert info.value.path == "$.x"
    decoded = decode_event_lenient(
        b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\\ud83d","x":1}'
    )
    assert decoded.event.delta == "\ud83d"
    assert [w.code for w in decoded.warnings] == ["unknown_property"]


@pytest.mark.parametrize(
    "data",
    [
        b'{"type":"CUSTOM","name":"\\ud83d","value":NaN}',  # json would accept NaN
        b'{"type":"CUSTOM","name":"\\ud83d","value":Infinity}',
        b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\\ud83d"',  # truncated
        b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\\ud83d\xff"}',  # not UTF-8
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\\ud83d"}'.encode("utf-16"),
    ],
)
@pytest.mark.parametrize("strict", [False, True])
def test_fallback_parser_accepts_nothing_else_that_is_not_json(data, strict):
    with pytest.raises(DecodeError) as info:
        decode_event(data, strict=strict)
    assert "not valid JSON" in info.value.reason


def test_encode_writes_a_lone_surrogate_as_an_escape_and_round_trips():
    event = TextMessageContentEvent(message_id="m", delta="é a\ud83d", metadata={"k\udc00": None})
    encoded = encode_event(event)
    assert encoded == (
        b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m",'
        b'"delta":"\xc3\xa9 a\\ud83d","metadata":{"k\\udc00":null}}'
    )
    assert decode_event(encoded, strict=True) == event
    assert encode_sse_event(event) == b"data: " + encoded + b"\n\n"
    assert json.loads(encoded) == to_json_value(event)


def test_encode_with_a_lone_surrogate_still_leaves_out_legacy_nulls():
    event = TextMessageContentEvent(message_id="m", delta="\ud83d", raw_event=None)
    assert json.loads(encode_event(event)) == {
        "type": "TEXT_MESSAGE_CONTENT",
        "messageId": "m",
        "delta": "\ud83d",
    }


def test_run_input_with_a_lone_surrogate_round_trips():
    run_input = RunAgentInput(
        thread_id="t", run_id="r", messages=[UserMessage(id="u", content="half \ud83d")]
    )
    encoded = encode_input(run_input)
    assert b"\\ud83d" in encoded
    assert decode_input(encoded) == run_input
    assert decode_input(encoded, strict=True) == run_input
