"""The generated per-event-type protobuf converters (``agui_generated.agui_pb_convert``):
frames straight to event structs and back, always agreeing with the wire-dict + JSON path."""

from __future__ import annotations

import json
import math
import struct

import msgspec
import pytest
from agui_generated import agui_pb2 as pb
from agui_generated.agui_pb_convert import TYPED_DECODERS, TYPED_ENCODERS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.event_strategies import events_of
from support.proto import (
    as_events,
    json_path,
    proto_path,  # noqa: F401  (the fixture, by name below)
)

from agui import types as T
from agui.errors import DecodeError
from agui.types import EVENT_TYPES
from agui.wire import encode_json, to_json_value
from agui.wire._proto import (
    ProtoFrameReader,
    compiled,
    decode_proto_event,
    decode_typed_event,
    encode_proto_frame,
)
from agui.wire._proto_convert import event_to_pb
from agui.wire._proto_typed import read_varint

pytestmark = pytest.mark.usefixtures("proto_path")

ARMED = sorted(tag for tag in EVENT_TYPES if tag.lower() in pb.Event.DESCRIPTOR.fields_by_name)


def wire_encoded(event: msgspec.Struct) -> bytes:
    """The wire-dict encoder's bytes for an event (what encode_proto_frame wrote before)."""
    return event_to_pb(to_json_value(event)).SerializeToString(deterministic=True)


def test_every_event_type_with_an_arm_has_a_generated_converter_each_way():
    assert {cls.__name__ for cls in TYPED_ENCODERS} == {EVENT_TYPES[t].__name__ for t in ARMED}
    arms = {(f.number << 3) | 2 for f in pb.Event.DESCRIPTOR.fields}
    assert set(TYPED_DECODERS) == arms


@pytest.mark.parametrize("event_type", ARMED)
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_random_valid_events_go_to_protobuf_and_back_as_the_json_path_reads_them(event_type, data):
    event = data.draw(events_of(EVENT_TYPES[event_type]))
    try:
        reference = wire_encoded(event)
    except DecodeError as exc:  # no protobuf form (a patch op member the binding lacks)
        with pytest.raises(DecodeError) as raised:
            encode_proto_frame(event)
        assert raised.value.reason == exc.reason
        return
    frame = encode_proto_frame(event)
    body = frame[4:]
    assert body == reference  # the generated encoder writes the same bytes
    assert struct.unpack(">I", frame[:4]) == (len(body),)
    expected = json_path(body)
    typed = decode_typed_event(body)
    assert typed is not None, event
    assert typed == expected
    assert type(typed) is type(event)


def test_integers_up_to_two_to_the_53_come_back_as_ints_and_negative_zero_as_a_float():
    ints = [0, -1, 2**31, 2**53 - 1, 2**53, -(2**53)]
    snapshot = {"ints": ints, "neg_zero": -0.0, "half": 0.5, "big": 2**53 + 2}
    body = encode_proto_frame(T.StateSnapshotEvent(snapshot=snapshot))[4:]
    typed = decode_typed_event(body)
    assert isinstance(typed, T.StateSnapshotEvent)
    got = typed.snapshot
    assert got["ints"] == ints and all(type(n) is int for n in got["ints"])
    assert type(got["neg_zero"]) is float and math.copysign(1.0, got["neg_zero"]) < 0
    assert type(got["big"]) is float and got["big"] == 2**53 + 2
    assert typed == json_path(body)


def test_state_keys_keep_their_order_through_the_typed_converters():
    snapshot = {"zeta": 1, "alpha": {"y": 1, "b": 2, "a": 3}, "mid": [{"k2": 0, "k1": 1}]}
    typed = decode_typed_event(encode_proto_frame(T.StateSnapshotEvent(snapshot=snapshot))[4:])
    assert isinstance(typed, T.StateSnapshotEvent)
    assert json.dumps(typed.snapshot) == json.dumps(snapshot)


def test_a_value_the_struct_types_refuse_takes_the_json_path_with_its_warning_or_error():
    bad_role = {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "narrator"}
    body = encode_proto_frame(bad_role)[4:]
    assert decode_typed_event(body) is None
    reader = ProtoFrameReader(typed=True, json_text=True)
    (item,) = reader.feed(encode_proto_frame(bad_role))
    if compiled():  # its JSON text, for the JSON decoder to judge as over SSE
        assert json.loads(item) == bad_role
    else:
        assert item == bad_role  # the wire dict, for the JSON decoder to judge as over SSE


def test_a_non_finite_number_in_a_json_value_takes_the_json_path():
    envelope = event_to_pb({"type": "CUSTOM", "name": "n", "value": 1.0})
    envelope.custom.value.number_value = math.inf
    body = envelope.SerializeToString()
    assert decode_typed_event(body) is None
    assert decode_proto_event(body)["value"] == math.inf  # the JSON encoder then refuses it


def test_a_base_event_type_that_disagrees_with_the_arm_takes_the_general_path_and_fails():
    envelope = event_to_pb({"type": "TEXT_MESSAGE_END", "messageId": "m"})
    envelope.text_message_end.base_event.type = pb.EventType.Value("RUN_STARTED")
    body = envelope.SerializeToString()
    assert decode_typed_event(body) is None
    with pytest.raises(DecodeError, match="base_event declares RUN_STARTED"):
        decode_proto_event(body)


def test_two_arms_or_trailing_bytes_take_the_general_path():
    one = encode_proto_frame({"type": "TEXT_MESSAGE_END", "messageId": "m"})[4:]
    two = one + encode_proto_frame({"type": "STEP_STARTED", "stepName": "s"})[4:]
    assert decode_typed_event(one) is not None
    assert decode_typed_event(two) is None
    with pytest.raises(DecodeError, match="more than one event"):
        decode_proto_event(two)


def test_a_timestamp_and_metadata_in_the_base_event_are_read_by_the_typed_converter():
    event = T.ToolCallArgsEvent(
        tool_call_id="c", delta="{", timestamp=1_700_000_000_000, metadata={"b": 1, "a": 2}
    )
    typed = decode_typed_event(encode_proto_frame(event)[4:])
    assert typed == event
    assert isinstance(typed, T.ToolCallArgsEvent) and list(typed.metadata) == ["b", "a"]


def test_an_event_holding_a_value_that_is_not_plain_json_encodes_as_its_wire_form():
    event = T.StateSnapshotEvent(snapshot={"s": {3}, "t": T.Context(description="d", value="v")})
    body = encode_proto_frame(event)[4:]
    assert body == wire_encoded(event)
    typed = decode_typed_event(body)
    assert isinstance(typed, T.StateSnapshotEvent)
    assert typed.snapshot == {"s": [3], "t": {"description": "d", "value": "v"}}


def test_a_null_raw_event_in_a_struct_is_left_out_as_the_wire_form_leaves_it():
    event = T.StepStartedEvent(step_name="s", raw_event=None)  # type: ignore[arg-type]
    body = encode_proto_frame(event)[4:]
    assert body == wire_encoded(event)
    assert decode_typed_event(body) == T.StepStartedEvent(step_name="s")


def test_the_typed_reader_yields_structs_and_the_plain_reader_wire_dicts():
    events = [
        T.RunStartedEvent(thread_id="t", run_id="r"),
        T.TextMessageContentEvent(message_id="m", delta="hi"),
        T.RunFinishedEvent(thread_id="t", run_id="r"),
    ]
    body = b"".join(map(encode_proto_frame, events))
    got = ProtoFrameReader(typed=True, json_text=True).feed(body)
    if compiled():  # each event's JSON text (the general path's text)
        assert all(isinstance(item, bytes) for item in got)
        assert as_events(got) == events
    else:
        assert got == events
    assert ProtoFrameReader().feed(body) == [to_json_value(ev) for ev in events]


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=200),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["", "a", "é", "k" * 130]) | st.text(max_size=3), inner)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(value=_JSON)
def test_open_json_values_encode_and_decode_as_set_and_read_field_by_field(value):
    for event in (
        T.CustomEvent(name="n", value=value, metadata={"m": value}),  # through upb's envelope
        T.StateSnapshotEvent(snapshot=value),  # written straight to bytes
    ):
        frame = encode_proto_frame(event)
        assert frame[4:] == wire_encoded(event)
        typed = decode_typed_event(frame[4:])
        assert typed is not None
        assert encode_json(typed) == encode_json(json_path(frame[4:]))
        assert typed == json_path(frame[4:])


def test_a_json_value_with_fields_the_value_type_lacks_reads_as_the_message_walk_reads_it():
    envelope = event_to_pb({"type": "CUSTOM", "name": "n", "value": {"a": [1, "x"]}})
    envelope.custom.value.struct_value.fields[0].value.MergeFromString(b"\x38\x01")  # field 7
    envelope.custom.value.MergeFromString(b"\x40\x02")  # field 8, past the kind
    body = envelope.SerializeToString()
    typed = decode_typed_event(body)
    assert isinstance(typed, T.CustomEvent)
    assert typed.value == {"a": [1, "x"]} and typed == json_path(body)


def test_a_null_value_of_any_enum_number_reads_as_null():
    envelope = event_to_pb({"type": "CUSTOM", "name": "n", "value": [1]})
    envelope.custom.value.Clear()
    envelope.custom.value.MergeFromString(b"\x08\x05")
    body = envelope.SerializeToString()
    typed = decode_typed_event(body)
    assert isinstance(typed, T.CustomEvent)
    assert typed.value is None and typed == json_path(body)


def test_a_json_value_nested_past_upbs_parse_depth_encodes_as_set_field_by_field():
    deep: object = 1
    for _ in range(120):
        deep = [{"k": deep}]
    event = T.StateSnapshotEvent(snapshot={"deep": deep})
    assert encode_proto_frame(event)[4:] == wire_encoded(event)


@pytest.mark.parametrize(
    ("data", "width", "expected"),
    [
        (b"\x00", 10, (0, 1)),
        (b"\x96\x01\xff", 10, (150, 2)),  # stops at the first byte under 0x80
        (b"\xff" * 9 + b"\x01", 10, (2**64 - 1, 10)),
        (b"\xff" * 9 + b"\x02", 10, (-1, 10)),  # past 64 bits
        (b"\x80" * 10 + b"\x00", 10, (-1, 10)),  # longer than ten bytes
        (b"\xff" * 4 + b"\x0f", 5, (2**32 - 1, 5)),
        (b"\xff" * 4 + b"\x10", 5, (-1, 5)),  # past 32 bits
        (b"\x96", 10, (-1, 1)),  # the data ends inside the varint
        (b"", 5, (-1, 0)),
    ],
)
def test_the_varint_reader_reads_up_to_its_width_and_refuses_a_cut_or_overlong_varint(
    data, width, expected
):
    assert read_varint(data, 0, width) == expected


@pytest.mark.parametrize("size", [127, 128, 300, 16_383, 16_384, 70_000])
def test_json_values_whose_lengths_take_several_bytes_read_as_upb_reads_them(size):
    text = "é" * (size // 2) + "x" * (size % 2)
    value = {"k" * size: text, "list": [text, {"n": text}] * 3, "short": "s"}
    for event in (T.CustomEvent(name="n", value=value), T.StateSnapshotEvent(snapshot=value)):
        frame = encode_proto_frame(event)
        typed = decode_typed_event(frame[4:])
        assert typed is not None
        assert typed == event == json_path(frame[4:])


def _arm_bytes(*fields: bytes) -> bytes:
    """A TEXT_MESSAGE_CONTENT envelope around a type-only base_event and ``fields``."""
    arm = b"\x0a\x02\x08\x01" + b"".join(fields)
    return b"\x12" + bytes([len(arm)]) + arm


def test_string_arms_in_any_valid_layout_read_as_upb_reads_them():
    long = "x" * 130
    cases = [
        _arm_bytes(b"\x1a\x01d", b"\x12\x01m"),  # members out of field-number order
        _arm_bytes(b"\x12\x01m", b"\x12\x01n", b"\x1a\x01d"),  # a member twice: the last wins
        _arm_bytes(b"\x12\x01m", b"\x1a\x01d", b"\x22\x00"),  # an optional present and empty
        _arm_bytes(b"\x1a\x01d"),  # messageId left out: ""
        _arm_bytes(b"\x12\x01m", b"\x1a\x01d", b"\x28\x01"),  # a field the arm lacks
    ]
    envelope = event_to_pb({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": long})
    cases.append(envelope.SerializeToString())  # a length over one byte
    for body in cases:
        typed = decode_typed_event(body)
        assert typed is not None and typed == json_path(body)
    assert decode_typed_event(cases[1]).message_id == "n"
    assert decode_typed_event(cases[2]).subagent_run_id == ""
    assert decode_typed_event(cases[3]).message_id == ""
    assert decode_typed_event(cases[5]).delta == long


def test_a_string_arm_with_invalid_utf8_or_cut_short_is_not_read_and_fails_on_the_general_path():
    for body in (
        _arm_bytes(b"\x12\x01m", b"\x1a\x02\xc3\x28"),  # not UTF-8
        _arm_bytes(b"\x12\x01m", b"\x1a\x05d"),  # a length past the end
        _arm_bytes(b"\x12\x01m", b"\x1a"),  # a tag with no length
    ):
        assert decode_typed_event(body) is None
        with pytest.raises(DecodeError):
            decode_proto_event(body)


@pytest.mark.parametrize(
    "event",
    [
        T.TextMessageContentEvent(message_id="", delta="x" * 300),
        T.TextMessageContentEvent(message_id="m", delta="é", subagent_run_id=""),
        T.TextMessageStartEvent(message_id="m", role="assistant"),
        T.TextMessageChunkEvent(),
        T.TextMessageContentEvent(message_id="m", delta="d", timestamp=5, metadata={"a": 1}),
    ],
)
def test_string_arms_written_straight_to_bytes_are_what_upb_writes(event):
    assert encode_proto_frame(event)[4:] == wire_encoded(event)


def test_a_string_arm_member_that_is_not_a_str_or_not_encodable_is_judged_by_the_upb_encoder():
    for event in (
        T.TextMessageContentEvent(message_id="m", delta=7),  # type: ignore[arg-type]
        T.TextMessageContentEvent(message_id="m", delta="\ud800"),
    ):
        with pytest.raises(DecodeError, match="cannot encode TEXT_MESSAGE_CONTENT as protobuf"):
            encode_proto_frame(event)


def test_the_typed_reader_fed_in_any_pieces_yields_the_same_structs_and_errors():
    events = [
        T.TextMessageContentEvent(message_id="m", delta="d" * 200),
        T.StateSnapshotEvent(snapshot={"a": [1, {"b": "c"}]}),
        T.StepStartedEvent(step_name="s"),
    ]
    body = b"".join(map(encode_proto_frame, events))
    for step in (1, 3, 7, len(body)):
        reader = ProtoFrameReader(typed=True, json_text=True)
        got = [item for i in range(0, len(body), step) for item in reader.feed(body[i : i + step])]
        reader.close()
        assert as_events(got) == events
        assert all(isinstance(item, bytes if compiled() else T.Event) for item in got)
    reader = ProtoFrameReader(typed=True, json_text=True)
    cut = body + b"\x00\x00\x00\x09\x12"
    assert as_events(reader.feed(cut)) == events
    with pytest.raises(DecodeError, match="cut inside a frame"):
        reader.close()
