"""JSON codec: strict fast path, lenient repairs with warning paths, errors, encoding."""

from __future__ import annotations

import json

import pytest

from agui.errors import DecodeError, EncodeError, UnknownEventType
from agui.types import (
    UNSET,
    AddOperation,
    CustomEvent,
    DataSource,
    DocumentPart,
    ImagePart,
    MessagesSnapshotEvent,
    RawEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunAgentInput,
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
    TextPart,
    Tool,
    ToolCallResultEvent,
    ToolCallStartEvent,
    UrlSource,
    UserMessage,
)
from agui.wire import (
    DecodeWarning,
    EventDecoder,
    check_finite,
    decode_event,
    decode_event_lenient,
    decode_input,
    decode_input_lenient,
    encode_event,
    encode_input,
    encode_sse_event,
    to_json_value,
)


def dumps(obj) -> bytes:
    return json.dumps(obj).encode()


def lenient(obj):
    return decode_event_lenient(dumps(obj))


def codes(decoded) -> list[tuple[str, str]]:
    return [(w.code, w.path) for w in decoded.warnings]


# -- fast path ---------------------------------------------------------------------


def test_valid_event_decodes_without_warnings():
    decoded = lenient({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "hi"})
    assert decoded.event == TextMessageContentEvent(message_id="m1", delta="hi")
    assert decoded.warnings == ()


def test_decode_accepts_str_bytes_and_memoryview():
    raw = b'{"type":"TEXT_MESSAGE_END","messageId":"m"}'
    assert decode_event(raw) == decode_event(raw.decode()) == decode_event(memoryview(raw))


def test_empty_delta_is_content():
    ev = decode_event(b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":""}', strict=True)
    assert ev.delta == ""


def test_state_snapshot_null_is_data_not_legacy_null():
    decoded = lenient({"type": "STATE_SNAPSHOT", "snapshot": None})
    assert decoded == (StateSnapshotEvent(snapshot=None), ())
    assert decode_event(b'{"type":"STATE_SNAPSHOT","snapshot":null}', strict=True).snapshot is None


def test_custom_value_and_raw_event_null_are_data():
    assert lenient({"type": "CUSTOM", "name": "n", "value": None}).event == CustomEvent(
        name="n", value=None
    )
    assert lenient({"type": "RAW", "event": None}).event == RawEvent(event=None)


# -- unknown event types ------------------------------------------------------------


def test_unknown_event_type_dropped_with_warning():
    decoded = lenient({"type": "FUTURE_EVENT", "somethingNew": True})
    assert decoded.event is None
    assert codes(decoded) == [("unknown_event_type", "$.type")]
    assert "FUTURE_EVENT" in decoded.warnings[0].message


def test_decode_event_raises_unknown_event_type_for_dropped_event():
    with pytest.raises(UnknownEventType) as info:
        decode_event(b'{"type":"FUTURE_EVENT"}')
    assert info.value.event_type == "FUTURE_EVENT"
    assert isinstance(info.value, DecodeError)


def test_strict_unknown_event_type_raises_unknown_event_type():
    with pytest.raises(UnknownEventType) as info:
        decode_event(b'{"type":"FUTURE_EVENT"}', strict=True)
    assert info.value.event_type == "FUTURE_EVENT"
    assert info.value.path == "$.type"


# -- unknown properties ---------------------------------------------------------------


def test_unknown_property_stripped_with_path():
    decoded = lenient(
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x", "futureProp": 1}
    )
    assert decoded.event == TextMessageContentEvent(message_id="m", delta="x")
    assert codes(decoded) == [("unknown_property", "$.futureProp")]
    assert "/futureProp" in str(decoded.warnings[0])


def test_nested_unknown_property_stripped_with_path():
    decoded = lenient(
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {"id": "u", "role": "user", "content": [{"type": "text", "text": "a", "x": 1}]}
            ],
        }
    )
    assert decoded.event == MessagesSnapshotEvent(
        messages=[UserMessage(id="u", content=[TextPart(text="a")])]
    )
    assert codes(decoded) == [("unknown_property", "$.messages[0].content[0].x")]
    assert "/messages/0/content/0/x" in decoded.warnings[0].message


def test_strict_rejects_unknown_property_with_path():
    with pytest.raises(DecodeError) as info:
        decode_event(b'{"type":"TEXT_MESSAGE_END","messageId":"m","futureProp":1}', strict=True)
    assert info.value.path == "$.futureProp"
    assert info.value.value == 1


def test_open_metadata_keys_are_never_stripped():
    meta = {"acme.vendor/traceId": "t", "acme.vendor/parentSpan": None, "nested": {"a": [1]}}
    decoded = lenient(
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant", "metadata": meta}
    )
    assert decoded.warnings == ()
    assert decoded.event.metadata == meta


def test_open_objects_are_never_repaired():
    # activity content, state, rawEvent, forwardedProps, responseSchema: any keys survive
    content = {"unknown": {"type": "hologram"}, "n": None}
    decoded = lenient(
        {
            "type": "ACTIVITY_SNAPSHOT",
            "messageId": "a",
            "activityType": "x",
            "content": content,
            "rawEvent": {"type": "paused", "futureProp": None},
        }
    )
    assert decoded.warnings == ()
    assert decoded.event.content == content
    assert decoded.event.raw_event == {"type": "paused", "futureProp": None}


def test_patch_op_extras_are_kept():
    doc = {"type": "STATE_DELTA", "delta": [{"op": "remove", "path": "/items/1", "value": "x"}]}
    decoded = lenient(doc)
    assert decoded.warnings == ()
    assert decoded.event.delta == [{"op": "remove", "path": "/items/1", "value": "x"}]
    # strict decoding accepts them too: patch operations are open objects
    assert decode_event(dumps(doc), strict=True) == decoded.event
    assert json.loads(encode_event(decoded.event)) == doc


# -- unknown union members --------------------------------------------------------------


def test_unknown_outcome_removed_from_optional_slot():
    decoded = lenient(
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "paused"}}
    )
    assert decoded.event == RunFinishedEvent(thread_id="t", run_id="r")
    assert decoded.event.outcome is UNSET
    assert codes(decoded) == [("unknown_union_member", "$.outcome")]
    assert "/outcome" in decoded.warnings[0].message


def test_outcome_array_is_malformed_not_unknown():
    doc = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": [{"type": "x"}]}
    with pytest.raises(DecodeError) as info:
        lenient(doc)
    assert info.value.path == "$.outcome"
    assert "expected object, received array" in str(info.value)
    assert info.value.value == [{"type": "x"}]


def test_unknown_part_removed_from_list_keeping_neighbours():
    decoded = lenient(
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {
                    "id": "m",
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "before"},
                        {"type": "hologram", "source": {"type": "data", "value": "AA"}},
                        {"type": "text", "text": "after"},
                    ],
                }
            ],
        }
    )
    assert decoded.event.messages[0].content == [TextPart(text="before"), TextPart(text="after")]
    assert codes(decoded) == [("unknown_union_member", "$.messages[0].content[1]")]
    assert "/messages/0/content/1" in decoded.warnings[0].message


def test_unknown_patch_op_removed_rest_applies():
    decoded = lenient(
        {
            "type": "STATE_DELTA",
            "delta": [
                {"op": "increment", "path": "/count", "value": 1},
                {"op": "replace", "path": "/count", "value": 5},
            ],
        }
    )
    assert decoded.event == StateDeltaEvent(delta=[{"op": "replace", "path": "/count", "value": 5}])
    assert codes(decoded) == [("unknown_union_member", "$.delta[0]")]


def test_unknown_message_role_in_snapshot_is_removed():
    decoded = lenient(
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {"id": "w", "role": "wizard"},
                {"id": "s", "role": "system", "content": "c"},
            ],
        }
    )
    assert [m.id for m in decoded.event.messages] == ["s"]
    assert codes(decoded) == [("unknown_union_member", "$.messages[0]")]


def test_required_slot_with_unknown_member_removes_containing_object():
    decoded = lenient(
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "m",
            "toolCallId": "c",
            "content": [
                {"type": "image", "source": {"type": "ftp", "value": "x"}},
                {"type": "text", "text": "kept"},
            ],
        }
    )
    assert decoded.event.content == [TextPart(text="kept")]
    assert codes(decoded) == [
        ("unknown_union_member", "$.content[0].source"),
        ("dropped_container", "$.content[0]"),
    ]


def test_strict_rejects_unknown_union_member():
    with pytest.raises(DecodeError) as info:
        decode_event(
            b'{"type":"RUN_FINISHED","threadId":"t","runId":"r","outcome":{"type":"paused"}}',
            strict=True,
        )
    assert info.value.path == "$.outcome.type"
    assert info.value.value == "paused"


# -- legacy nulls ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        ({"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "n", "parentMessageId": None}, "$.parentMessageId"),
        ({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": None}, "$.outcome"),
        ({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "result": None}, "$.result"),
        ({"type": "TEXT_MESSAGE_END", "messageId": "m", "rawEvent": None}, "$.rawEvent"),
        ({"type": "SUBAGENT_FINISHED", "subagentRunId": "s", "result": None}, "$.result"),
        ({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": None}, "$.role"),
    ],
)  # fmt: skip
def test_legacy_null_in_optional_slot_is_removed(doc, path):
    decoded = lenient(doc)
    assert decoded.event is not None
    assert codes(decoded) == [("legacy_null", path)]
    assert to_json_value(decoded.event) == {k: v for k, v in doc.items() if v is not None}


def test_legacy_null_in_nested_input_and_media_metadata_removed():
    doc = {
        "type": "RUN_STARTED",
        "threadId": "t",
        "runId": "r",
        "input": {
            "threadId": "t",
            "runId": "r",
            "messages": [
                {
                    "id": "u",
                    "role": "user",
                    "content": [
                        {"type": "image", "source": {"type": "url", "value": "u"}, "metadata": None}
                    ],
                }
            ],
            "tools": [{"name": "n", "description": "d", "parameters": None}],
            "resume": [{"interruptId": "i", "status": "resolved", "payload": None}],
            "forwardedProps": None,
            "state": None,
        },
    }
    decoded = lenient(doc)
    assert sorted(w.path for w in decoded.warnings) == [
        "$.input.forwardedProps",
        "$.input.messages[0].content[0].metadata",
        "$.input.resume[0].payload",
        "$.input.state",
        "$.input.tools[0].parameters",
    ]
    assert {w.code for w in decoded.warnings} == {"legacy_null"}
    run_input = decoded.event.input
    assert run_input.forwarded_props is UNSET and run_input.state is UNSET
    assert run_input.tools == [Tool(name="n", description="d")]
    assert run_input.messages[0].content[0] == ImagePart(source=UrlSource(value="u"))


def test_fast_path_does_not_accept_legacy_null_in_any_slot():
    # msgspec refuses the null (NonNullJson); the lenient path reads it as a legacy null
    decoded = lenient({"type": "TEXT_MESSAGE_END", "messageId": "m", "rawEvent": None})
    assert decoded.event.raw_event is UNSET
    assert len(decoded.warnings) == 1


@pytest.mark.parametrize("field", ["metadata", "subagentRunId"])
def test_null_metadata_and_subagent_run_id_are_errors(field):
    with pytest.raises(DecodeError) as info:
        lenient({"type": "TEXT_MESSAGE_END", "messageId": "m", field: None})
    assert info.value.path == f"$.{field}"


@pytest.mark.parametrize(
    "doc",
    [
        {"type": "TEXT_MESSAGE_END", "messageId": "m", "rawEvent": None},
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "n", "parentMessageId": None},
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "input": {"threadId": "t", "runId": "r", "messages": [], "forwardedProps": None}},
    ],
)  # fmt: skip
def test_strict_rejects_legacy_null(doc):
    with pytest.raises(DecodeError) as info:
        decode_event(dumps(doc), strict=True)
    assert info.value.path in {"$.rawEvent", "$.parentMessageId", "$.input.forwardedProps"}


# -- malformed known fields ------------------------------------------------------------------


def test_malformed_known_field_is_decode_error_with_path_and_value():
    with pytest.raises(DecodeError) as info:
        lenient({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": 42})
    assert info.value.path == "$.delta"
    assert info.value.value == 42
    assert "expected str, received int" in info.value.reason


def test_malformed_nested_field_path():
    with pytest.raises(DecodeError) as info:
        lenient(
            {
                "type": "MESSAGES_SNAPSHOT",
                "messages": [{"id": "m", "role": "user", "content": [{"type": "text", "text": 1}]}],
            }
        )
    assert info.value.path == "$.messages[0].content[0].text"
    assert info.value.value == 1


def test_malformed_field_is_still_an_error_after_other_repairs():
    with pytest.raises(DecodeError) as info:
        lenient({"type": "TEXT_MESSAGE_CONTENT", "messageId": 7, "delta": "x", "extra": 1})
    assert info.value.path == "$.messageId"


def test_closed_enum_value_is_fatal_in_strict_mode_and_names_the_field():
    # lenient mode strips it (tests/wire/test_wire_closed_sets.py); strict mode repairs nothing
    doc = {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "narrator"}
    with pytest.raises(DecodeError) as info:
        decode_event(dumps(doc), strict=True)
    assert info.value.path == "$.role"
    assert info.value.value == "narrator"
    assert "role" in str(info.value)


def test_wrong_literal_names_the_expected_value():
    with pytest.raises(DecodeError) as info:
        lenient({"type": "REASONING_MESSAGE_START", "messageId": "m", "role": "assistant"})
    assert 'expected "reasoning"' in str(info.value)


def test_missing_required_field_names_it():
    with pytest.raises(DecodeError) as info:
        lenient({"type": "SUBAGENT_STARTED", "subagentRunId": "s"})
    assert info.value.path == "$.name"
    assert "missing required field `name`" in str(info.value)


def test_float_timestamp_is_malformed_when_strict_and_made_milliseconds_leniently():
    # the compatibility rule fractional_timestamp: repaired with a warning, never silently
    doc = {"type": "TEXT_MESSAGE_END", "messageId": "m", "timestamp": 1.5}
    with pytest.raises(DecodeError) as info:
        decode_event(dumps(doc), strict=True)
    assert info.value.path == "$.timestamp"
    decoded = lenient(doc)
    assert decoded.event.timestamp == 1500
    assert codes(decoded) == [("fractional_timestamp", "$.timestamp")]


def test_negative_token_count_is_malformed():
    with pytest.raises(DecodeError) as info:
        lenient({"type": "RUN_ERROR", "message": "x", "usage": [{"inputTokens": -1}]})
    assert info.value.path == "$.usage[0].inputTokens"
    assert info.value.value == -1


@pytest.mark.parametrize("strict", [False, True])
def test_not_json_is_decode_error(strict):
    with pytest.raises(DecodeError) as info:
        decode_event(b"{nope", strict=strict)
    assert "not valid JSON" in info.value.reason
    assert info.value.value == "{nope"


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("doc", [[1], "x", 3, None])
def test_non_object_is_decode_error(doc, strict):
    with pytest.raises(DecodeError) as info:
        decode_event(dumps(doc), strict=strict)
    assert "not a JSON object" in info.value.reason


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("doc", [{}, {"type": ""}, {"type": 3}, {"type": None}])
def test_missing_type_is_decode_error(doc, strict):
    with pytest.raises(DecodeError) as info:
        decode_event(dumps(doc), strict=strict)
    assert "no event type" in info.value.reason
    assert not isinstance(info.value, UnknownEventType)


# -- retired THINKING_* events ------------------------------------------------------------------


def _ids():
    counter = iter(range(1, 100))
    return lambda: f"id-{next(counter)}"


def test_thinking_stream_translated_to_reasoning():
    decoder = EventDecoder(id_factory=_ids())
    stream = [
        {"type": "THINKING_START", "title": "Working"},
        {"type": "THINKING_TEXT_MESSAGE_START"},
        {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "Let me "},
        {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "check."},
        {"type": "THINKING_TEXT_MESSAGE_END"},
        {"type": "THINKING_END", "timestamp": 5},
    ]
    results = [decoder.decode(dumps(doc)) for doc in stream]
    assert [r.event for r in results] == [
        ReasoningStartEvent(message_id="id-1"),
        ReasoningMessageStartEvent(message_id="id-2", role="reasoning"),
        ReasoningMessageContentEvent(message_id="id-2", delta="Let me "),
        ReasoningMessageContentEvent(message_id="id-2", delta="check."),
        ReasoningMessageEndEvent(message_id="id-2"),
        ReasoningEndEvent(message_id="id-1", timestamp=5),
    ]
    all_warnings = [w for r in results for w in r.warnings]
    assert [w.code for w in all_warnings] == [
        "retired_field",
        "retired_event",
        "retired_event",
        "retired_event",
        "retired_event",
        "retired_event",
    ]
    assert any("THINKING_START" in str(w) for w in all_warnings)
    # the second CONTENT is translated without repeating the warning
    assert results[3].warnings == ()


def test_thinking_content_without_start_mints_an_id_with_warning():
    decoder = EventDecoder(id_factory=_ids())
    decoded = decoder.decode(b'{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"x"}')
    assert decoded.event == ReasoningMessageContentEvent(message_id="id-1", delta="x")
    assert "minted_id" in [w.code for w in decoded.warnings]
    end = decoder.decode(b'{"type":"THINKING_TEXT_MESSAGE_END"}')
    assert end.event == ReasoningMessageEndEvent(message_id="id-1")


def test_thinking_malformed_delta_is_decode_error():
    with pytest.raises(DecodeError) as info:
        EventDecoder().decode(b'{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":1}')
    assert info.value.path == "$.delta"


def test_strict_rejects_retired_event():
    with pytest.raises(UnknownEventType) as info:
        decode_event(b'{"type":"THINKING_START"}', strict=True)
    assert info.value.event_type == "THINKING_START"
    assert "retired" in str(info.value)


def test_strict_decoder_returns_no_warnings_and_raises():
    decoder = EventDecoder(strict=True)
    assert decoder.decode(b'{"type":"STEP_STARTED","stepName":"s"}').warnings == ()
    with pytest.raises(UnknownEventType):
        decoder.decode(b'{"type":"THINKING_END"}')


# -- legacy binary content parts -------------------------------------------------------------


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        (
            {"type": "binary", "mimeType": "image/png", "url": "https://e/x.png"},
            ImagePart(source=UrlSource(value="https://e/x.png", mime_type="image/png")),
        ),
        (
            {"type": "binary", "mimeType": "application/pdf", "url": "u", "data": "QQ==", "filename": "a.pdf"},
            DocumentPart(
                source=DataSource(value="QQ==", mime_type="application/pdf"),
                metadata={"filename": "a.pdf"},
            ),
        ),
    ],
)  # fmt: skip
def test_legacy_binary_part_upgraded(part, expected):
    decoded = decode_input_lenient(
        dumps(
            {
                "threadId": "t",
                "runId": "r",
                "messages": [{"id": "u", "role": "user", "content": [part]}],
            }
        )
    )
    assert decoded.input.messages[0].content == [expected]
    assert codes(decoded) == [("legacy_binary_part", "$.messages[0].content[0]")]


def test_id_only_binary_part_cannot_be_upgraded_and_is_removed():
    decoded = decode_input_lenient(
        dumps(
            {
                "threadId": "t",
                "runId": "r",
                "messages": [
                    {
                        "id": "u",
                        "role": "user",
                        "content": [{"type": "binary", "mimeType": "image/png", "id": "f1"}],
                    }
                ],
            }
        )
    )
    assert decoded.input.messages[0].content == []
    assert codes(decoded) == [("unknown_union_member", "$.messages[0].content[0]")]


# -- RunAgentInput --------------------------------------------------------------------------------


def test_decode_input_strict_and_lenient():
    body = {"threadId": "t", "runId": "r", "messages": [], "forwardedProps": None, "extra": 1}
    decoded = decode_input_lenient(dumps(body))
    assert decoded.input == RunAgentInput(thread_id="t", run_id="r", messages=[])
    assert sorted(codes(decoded)) == [
        ("legacy_null", "$.forwardedProps"),
        ("unknown_property", "$.extra"),
    ]
    assert decode_input(dumps(body)) == decoded.input
    with pytest.raises(DecodeError) as info:
        decode_input(dumps(body), strict=True)
    assert info.value.path in {"$.extra", "$.forwardedProps"}


def test_decode_input_malformed_field_path():
    with pytest.raises(DecodeError) as info:
        decode_input(b'{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user"}]}')
    assert info.value.path == "$.messages[0].content"


@pytest.mark.parametrize("strict", [False, True])
def test_decode_input_not_an_object(strict):
    with pytest.raises(DecodeError) as info:
        decode_input(b"[]", strict=strict)
    assert "not a JSON object" in info.value.reason


def test_decode_input_not_json():
    with pytest.raises(DecodeError):
        decode_input(b"{", strict=True)


# -- encoding ---------------------------------------------------------------------------------------


def test_encode_is_compact_camel_case_and_omits_absent_fields():
    ev = ToolCallStartEvent(tool_call_id="c1", tool_call_name="search")
    assert (
        encode_event(ev) == b'{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"search"}'
    )


def test_encode_omits_none_in_optional_any_slots():
    ev = RunFinishedEvent(thread_id="t", run_id="r", result=None, raw_event=None)
    assert encode_event(ev) == b'{"type":"RUN_FINISHED","threadId":"t","runId":"r"}'


def test_encode_omits_nested_none_in_optional_slots_of_input():
    run_input = RunAgentInput(
        thread_id="t",
        run_id="r",
        messages=[
            UserMessage(id="u", content=[ImagePart(source=UrlSource(value="x"), metadata=None)])
        ],
        state=None,
        forwarded_props=None,
        tools=[Tool(name="n", description="d", parameters=None)],
    )
    assert json.loads(encode_input(run_input)) == {
        "threadId": "t",
        "runId": "r",
        "messages": [
            {
                "role": "user",
                "id": "u",
                "content": [{"type": "image", "source": {"type": "url", "value": "x"}}],
            }
        ],
        "tools": [{"name": "n", "description": "d"}],
    }
    # the struct itself is left untouched
    assert run_input.state is None and run_input.forwarded_props is None


def test_encode_keeps_nulls_that_are_data():
    assert (
        encode_event(StateSnapshotEvent(snapshot=None))
        == b'{"type":"STATE_SNAPSHOT","snapshot":null}'
    )
    assert (
        encode_event(CustomEvent(name="n", value=None))
        == b'{"type":"CUSTOM","name":"n","value":null}'
    )
    assert encode_event(RawEvent(event=None)) == b'{"type":"RAW","event":null}'
    ev = StateDeltaEvent(delta=[AddOperation(path="/a", value=None)], metadata={"k": None})
    assert json.loads(encode_event(ev)) == {
        "type": "STATE_DELTA",
        "delta": [{"op": "add", "path": "/a", "value": None}],
        "metadata": {"k": None},
    }


def test_encode_tool_result_with_parts():
    ev = ToolCallResultEvent(message_id="m", tool_call_id="c", content=[TextPart(text="x")])
    assert json.loads(encode_event(ev))["content"] == [{"type": "text", "text": "x"}]


def test_encode_rejects_non_struct():
    with pytest.raises(TypeError):
        encode_event({"type": "RAW"})  # type: ignore[arg-type]


def test_to_json_value_is_plain_json_without_absent_or_legacy_nulls():
    ev = RunStartedEvent(thread_id="t", run_id="r", raw_event=None)
    assert to_json_value(ev) == {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}


def test_encode_sse_event_frames_compact_json():
    frame = encode_sse_event(TextMessageStartEvent(message_id="m"))
    assert frame == b'data: {"type":"TEXT_MESSAGE_START","messageId":"m"}\n\n'


def test_decode_warning_str_names_code_and_pointer():
    warning = DecodeWarning("unknown_property", "stripped unrecognised property /x", "$.x")
    assert str(warning) == "[unknown_property] stripped unrecognised property /x"


# -- numbers JSON cannot carry ----------------------------------------------------------------


@pytest.mark.parametrize(
    "event",
    [
        RunFinishedEvent(thread_id="t", run_id="r", result=float("nan")),
        StateSnapshotEvent(snapshot={"a": [1, {"b": float("inf")}]}),
        CustomEvent(name="n", value={"s": "\ud83d", "x": float("-inf")}),  # the surrogate path too
    ],
)
def test_encode_refuses_nan_and_infinity_with_the_path(event):
    with pytest.raises(EncodeError) as info:
        encode_event(event)
    assert info.value.path in {"$.result", "$.snapshot.a[1].b", "$.value.x"}
    assert "cannot be written as JSON" in str(info.value)
    assert isinstance(info.value, ValueError)  # (what json.dumps raises for the same)


def test_encode_keeps_nested_nulls_and_finite_floats():
    ev = StateSnapshotEvent(snapshot={"a": None, "b": [None, 1.5]})
    assert encode_event(ev) == b'{"type":"STATE_SNAPSHOT","snapshot":{"a":null,"b":[null,1.5]}}'


def test_encode_input_refuses_nan_in_state():
    run_input = RunAgentInput(thread_id="t", run_id="r", messages=[], state={"x": float("nan")})
    with pytest.raises(EncodeError) as info:
        encode_input(run_input)
    assert info.value.path == "$.state.x"


def test_encode_refuses_nan_inside_a_tuple():
    with pytest.raises(EncodeError) as info:
        encode_event(StateSnapshotEvent(snapshot={"p": (1, float("nan"))}))
    assert info.value.path == "$.snapshot.p[1]"


def test_check_finite_looks_into_structs_inside_a_dict():
    doc = {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [
            UserMessage(id="u", content=[TextPart(text="x", metadata={"n": float("inf")})])
        ],
    }
    with pytest.raises(EncodeError) as info:
        check_finite(doc)
    assert info.value.path == "$.messages[0].content[0].metadata.n"


def test_check_finite_walks_plain_json():
    check_finite({"a": [1, 2.5, None, "x", {"b": True}]})
    with pytest.raises(EncodeError) as info:
        check_finite({"a": [1, {"b": float("nan")}]})
    assert info.value.path == "$.a[1].b"


@pytest.mark.parametrize("number", [b"1e400", b"-1e400"])
def test_lone_surrogate_fallback_refuses_out_of_range_numbers(number):
    # msgspec refuses 1e400; the json-module fallback (taken for a lone surrogate
    # escape) would read it as inf, which nothing can encode again
    doc = b'{"type":"CUSTOM","name":"n","value":{"s":"\\ud83d","x":' + number + b"}}"
    with pytest.raises(DecodeError) as info:
        decode_event(doc)
    assert info.value.reason.startswith("a number is out of range")


@pytest.mark.parametrize("number", [b"1e400", b"9" * 5000])
def test_out_of_range_number_is_reported_as_such_not_as_invalid_json(number):
    with pytest.raises(DecodeError) as info:
        decode_event(b'{"type":"CUSTOM","name":"n","value":' + number + b"}")
    assert info.value.reason.startswith("a number is out of range")


@pytest.mark.parametrize(
    "event",
    [
        TextMessageContentEvent(message_id="m", delta="x", raw_event={"score": float("nan")}),
        TextMessageContentEvent(message_id="m", delta="x", metadata={"score": float("inf")}),
    ],
)
def test_encode_fast_path_still_refuses_nan_in_raw_event_or_metadata(event):
    with pytest.raises(EncodeError):
        encode_event(event)


def test_encode_fast_path_output_is_exact():
    ev = TextMessageContentEvent(message_id="m", delta="null and more")  # "null" in the text
    assert (
        encode_event(ev)
        == b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"null and more"}'
    )


@pytest.mark.parametrize(
    ("event", "path"),
    [
        (TextMessageContentEvent(message_id="m", delta="x", timestamp=float("inf")), "$.timestamp"),
        (TextMessageContentEvent(message_id="m", delta=float("nan")), "$.delta"),
        (RunFinishedEvent(thread_id="t", run_id="r", timestamp=float("nan")), "$.timestamp"),
    ],
)
def test_encode_refuses_nan_in_a_slot_not_typed_float(event, path):
    # a struct's types are not checked when it is built: a float can sit anywhere
    with pytest.raises(EncodeError) as info:
        encode_event(event)
    assert info.value.path == path


@pytest.mark.parametrize(
    "doc",
    [
        {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "a", "role": {}}]},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": []}},
    ],
)
@pytest.mark.parametrize("strict", [False, True])
def test_unhashable_union_tag_is_a_decode_error(doc, strict):
    with pytest.raises(DecodeError) as info:
        decode_event(dumps(doc), strict=strict)
    assert info.value.path in {"$.messages[0].role", "$.outcome.type"}


def test_check_finite_path_of_a_non_str_key_is_the_json_key():
    with pytest.raises(EncodeError) as info:
        check_finite({"value": {1: float("nan")}})
    assert info.value.path == '$.value["1"]'  # a key, not an index


@pytest.mark.parametrize(
    "value",
    [
        {"o": __import__("collections").OrderedDict(x=float("nan"))},
        {"s": {float("inf")}},
        {"t": TextPart(text="x", metadata={"n": float("nan")})},
    ],
)
def test_check_finite_looks_at_other_encodable_values_as_they_encode(value):
    with pytest.raises(EncodeError):
        check_finite(value)


def test_codec_names_are_still_importable_from_agui_wire_json():
    import warnings

    import agui.wire

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import agui.wire.json as old

    for name in old.__all__:
        assert getattr(old, name) is getattr(agui.wire, name), name
    assert {"decode_event", "EventDecoder", "encode_event", "loads_json_text"} <= set(old.__all__)
