"""Closed string sets on the wire: an unrecognised member is stripped, not fatal.

Spec basic/processing (rules digest 1.10): a value outside a closed set (a schema
``enum``) is unrecognised material like an unknown union member: removed from an
optional slot with a warning; a required slot removes the object that holds it.
A value other than a schema ``const`` stays a malformed known value. Strict mode
repairs nothing.
"""

from __future__ import annotations

import json

import pytest

from agui.errors import DecodeError
from agui.types import (
    ResumeEntry,
    TextMessageChunkEvent,
    TextMessageStartEvent,
)
from agui.wire import decode_event, decode_event_lenient, decode_input_lenient


def dumps(obj) -> bytes:
    return json.dumps(obj).encode()


def test_unknown_role_in_optional_slot_is_stripped_with_a_warning():
    decoded = decode_event_lenient(
        dumps({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "narrator"})
    )
    assert decoded.event == TextMessageStartEvent(message_id="m")
    [warning] = decoded.warnings
    assert (warning.code, warning.path) == ("unknown_enum_value", "$.role")
    assert "'narrator'" in warning.message and "/role" in warning.message
    assert "'assistant'" in warning.message  # names the expected members


def test_unknown_role_on_a_chunk_is_stripped_too():
    event = decode_event(dumps({"type": "TEXT_MESSAGE_CHUNK", "role": "wizard", "delta": "x"}))
    assert event == TextMessageChunkEvent(delta="x")


def test_unknown_closed_set_value_is_a_decode_error_in_strict_mode():
    with pytest.raises(DecodeError) as info:
        decode_event(
            dumps({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "narrator"}),
            strict=True,
        )
    assert info.value.path == "$.role"
    assert info.value.value == "narrator"


def test_unknown_value_in_required_closed_set_drops_the_event():
    doc = {
        "type": "REASONING_ENCRYPTED_VALUE",
        "subtype": "thought",
        "entityId": "e",
        "encryptedValue": "x",
    }
    decoded = decode_event_lenient(dumps(doc))
    assert decoded.event is None
    assert [(w.code, w.path) for w in decoded.warnings] == [
        ("unknown_enum_value", "$.subtype"),
        ("dropped_container", "$"),
    ]
    with pytest.raises(DecodeError) as info:  # decode_event reports the drop
        decode_event(dumps(doc))
    assert info.value.path == "$"


def test_unknown_value_in_required_closed_set_drops_its_list_entry():
    body = {
        "threadId": "t",
        "runId": "r",
        "messages": [],
        "resume": [
            {"interruptId": "i1", "status": "postponed"},
            {"interruptId": "i2", "status": "resolved"},
        ],
    }
    decoded = decode_input_lenient(dumps(body))
    assert decoded.input.resume == [ResumeEntry(interrupt_id="i2", status="resolved")]
    assert [(w.code, w.path) for w in decoded.warnings] == [
        ("unknown_enum_value", "$.resume[0].status"),
        ("dropped_container", "$.resume[0]"),
    ]


def test_value_other_than_a_const_stays_malformed():
    # REASONING_MESSAGE_START's role is the single value "reasoning" (a const, not a set)
    with pytest.raises(DecodeError) as info:
        decode_event(
            dumps({"type": "REASONING_MESSAGE_START", "messageId": "m", "role": "assistant"})
        )
    assert info.value.path == "$.role"
    assert 'expected "reasoning"' in str(info.value)


def test_non_string_in_a_closed_set_slot_stays_malformed():
    with pytest.raises(DecodeError) as info:
        decode_event(dumps({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": 5}))
    assert info.value.path == "$.role"
    assert info.value.value == 5
