"""The protobuf binding: generated numbering, event <-> frame conversion, the frame reader."""

from __future__ import annotations

import copy
import json
import math
import struct
import sys
from pathlib import Path

import pytest
from agui_generated import agui_pb2 as pb
from support import shared_path as shared
from support.conformance import valid_conformance_events

from agui._versioning import IMPLEMENTED_PROTOCOL_VERSION
from agui.errors import DecodeError, FrameTooLarge
from agui.wire import decode_event, decode_event_lenient, encode_event
from agui.wire._proto import (
    ProtoFrameReader,
    UnknownEventArm,
    decode_proto_event,
    encode_proto_frame,
    iter_proto_frames,
    looks_like_proto_stream,
    unknown_arm_json,
)
from agui.wire._proto_convert import EXACT_INTEGER_LIMIT
from agui.wire._sse import DEFAULT_MAX_FRAME_BYTES

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import codegen_proto
from support.proto import proto_path  # noqa: F401  (the fixture, by name below)

pytestmark = pytest.mark.usefixtures("proto_path")

START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
TEXT = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "héllo 👋"}


def frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


# ------------------------------------------------------------------ generated numbering


@pytest.mark.upstream
def test_every_slot_of_the_published_freeze_has_its_number_in_the_generated_binding():
    published = codegen_proto.read_freeze(
        shared(f"upstream/agui/spec-{IMPLEMENTED_PROTOCOL_VERSION}/proto-freeze.txt")
    )
    for key, number in published.items():
        parts = key.split(".")
        if parts[0] in ("EventType", "JsonPatchOperationType"):
            enum = getattr(pb, parts[0])
            assert enum.Value(parts[1]) == number, key
            continue
        desc = pb.DESCRIPTOR.message_types_by_name[parts[0]]
        if parts[1] == "Function":
            desc, parts = desc.nested_types_by_name["Function"], parts[1:]
        assert desc.fields_by_name[parts[-1]].number == number, key
        if len(parts) == 3:
            assert desc.fields_by_name[parts[-1]].containing_oneof.name == parts[1], key
    assert codegen_proto.read_freeze() == published


def test_a_new_schema_field_takes_the_next_free_number_and_is_recorded():
    schema = json.loads(codegen_proto.SCHEMA.read_text(encoding="utf-8"))
    schema = copy.deepcopy(schema)
    schema["$defs"]["TextMessageContentEvent"]["properties"]["futureField"] = {"type": "integer"}
    freeze = codegen_proto.read_freeze()
    proto, added = codegen_proto.proto_text(schema, freeze)
    assert added == ["TextMessageContentEvent.future_field"]
    assert freeze["TextMessageContentEvent.future_field"] == 5
    assert "optional int64 future_field = 5;" in proto
    assert "TextMessageContentEvent.future_field = 5" in codegen_proto.freeze_text(freeze)


def test_the_checked_in_binding_is_what_codegen_makes():
    files, freeze, added = codegen_proto.generate()
    out = ROOT / "generated" / "agui_generated"
    assert added == []
    assert freeze == codegen_proto.FREEZE.read_text(encoding="utf-8")
    for name, text in files.items():
        assert (out / name).read_text(encoding="utf-8") == text, name


# ------------------------------------------------------------------ conversion


@pytest.mark.upstream
def test_every_valid_conformance_event_survives_a_protobuf_round_trip():
    events = valid_conformance_events()
    assert len(events) > 200
    for ev in events:
        struct_ev = decode_event(json.dumps(ev), strict=True)
        (back,) = iter_proto_frames(encode_proto_frame(struct_ev))
        assert decode_event(json.dumps(back), strict=True) == struct_ev, ev


def test_a_struct_and_its_wire_dict_encode_to_the_same_bytes():
    ev = decode_event(json.dumps(TEXT))
    assert encode_proto_frame(ev) == encode_proto_frame(TEXT)


def test_integral_numbers_in_json_values_come_back_as_ints():
    ev = {"type": "STATE_SNAPSHOT", "snapshot": {"n": 3, "x": 1.5, "l": [0, -2], "s": None}}
    (back,) = iter_proto_frames(encode_proto_frame(ev))
    assert back == ev
    assert type(back["snapshot"]["n"]) is int


EDGE_INTEGERS = [0, 1, -1, 2**31, -(2**31) - 1, 2**32 + 7, 10**15 + 3, 2**53 - 1, 2**53, -(2**53)]


def test_a_json_integer_up_to_two_to_the_53_round_trips_through_protobuf_as_an_int():
    ev = {"type": "STATE_SNAPSHOT", "snapshot": {"ints": EDGE_INTEGERS, "one": {"n": 2**53}}}
    text = json.dumps(ev)
    (back,) = iter_proto_frames(encode_proto_frame(json.loads(text)))
    assert json.dumps(back) == text  # JSON -> protobuf -> JSON is the identity for ints
    assert all(type(n) is int for n in back["snapshot"]["ints"])
    custom = {"type": "CUSTOM", "name": "n", "value": -(2**53)}
    (back_custom,) = iter_proto_frames(encode_proto_frame(custom))
    assert back_custom == custom and type(back_custom["value"]) is int


def test_a_number_beyond_two_to_the_53_or_a_fraction_comes_back_as_a_float():
    """Where we differ from the TypeScript reference on purpose: it hands back a JS number,
    which JSON.stringify prints as ``9007199254740994``; beyond 2^53 a double need not be the
    integer that was sent, so we keep the float that says so. 2^53 + 1 is already 2^53 in the
    double (as in every JSON peer that reads numbers as doubles) and comes back as that int."""
    snapshot = {"big": 2**53 + 2, "rounded": 2**53 + 1, "half": 0.5, "neg_zero": -0.0}
    ev = {"type": "STATE_SNAPSHOT", "snapshot": snapshot}
    (back,) = iter_proto_frames(encode_proto_frame(ev))
    got = back["snapshot"]
    assert got["big"] == 2**53 + 2 and type(got["big"]) is float
    assert got["rounded"] == 2**53 and type(got["rounded"]) is int
    assert got["half"] == 0.5
    assert type(got["neg_zero"]) is float and math.copysign(1.0, got["neg_zero"]) < 0
    assert EXACT_INTEGER_LIMIT == 2**53


def test_outcomes_and_content_forms_take_their_wire_shape_and_come_back():
    events = [
        {
            "type": "RUN_FINISHED",
            "threadId": "t",
            "runId": "r",
            "outcome": {"type": "interrupt", "interrupts": [{"id": "i", "reason": "approval"}]},
        },
        {
            "type": "RUN_FINISHED",
            "threadId": "t",
            "runId": "r",
            "outcome": {"type": "success", "pendingToolCallIds": ["c1"]},
        },
        {
            "type": "SUBAGENT_FINISHED",
            "subagentRunId": "s",
            "outcome": {"type": "suspended", "interruptIds": ["i"]},
        },
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "m",
            "toolCallId": "c",
            "content": [
                {"type": "text", "text": "x"},
                {"type": "image", "source": {"type": "url", "value": "http://x/i.png"}},
            ],
        },
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {"id": "a", "role": "activity", "activityType": "plan", "content": {"k": 1}},
                {"id": "u", "role": "user", "content": "hi"},
                {
                    "id": "b",
                    "role": "assistant",
                    "content": "x",
                    "toolCalls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                },
            ],
        },
        {
            "type": "STATE_DELTA",
            "delta": [
                {"op": "add", "path": "/a", "value": 1},
                {"op": "move", "from": "/a", "path": "/b"},
            ],
        },
    ]
    for ev in events:
        (back,) = iter_proto_frames(encode_proto_frame(ev))
        assert back == ev
    wire = pb.Event()
    wire.ParseFromString(encode_proto_frame(events[0])[4:])
    assert wire.run_finished.outcome == "interrupt"
    assert wire.run_finished.interrupts[0].id == "i"


def test_an_event_type_without_an_arm_is_not_encoded():
    with pytest.raises(DecodeError, match="no protobuf arm"):
        encode_proto_frame({"type": "FUTURE_EVENT"})


# ------------------------------------------------------------------ frames


def test_frames_split_anywhere_decode_the_same():
    data = encode_proto_frame(START) + encode_proto_frame(TEXT)
    reader = ProtoFrameReader()
    out = []
    for i in range(len(data)):
        out += reader.feed(data[i : i + 1])
    reader.close()
    assert out == [START, TEXT]


def test_a_frame_over_the_cap_is_frame_too_large():
    reader = ProtoFrameReader()
    with pytest.raises(FrameTooLarge):
        reader.feed(struct.pack(">I", DEFAULT_MAX_FRAME_BYTES + 1))
    with pytest.raises(FrameTooLarge):
        reader.feed(b"")


def test_the_frames_before_a_bad_one_are_returned_before_its_error():
    reader = ProtoFrameReader()
    assert reader.feed(encode_proto_frame(START) + frame(b"\xff\xff")) == [START]
    with pytest.raises(DecodeError):
        reader.close()


@pytest.mark.parametrize("cut", [2, 7])
def test_a_frame_cut_at_end_of_stream_is_a_decode_error(cut):
    data = encode_proto_frame(TEXT)[:cut]
    reader = ProtoFrameReader()
    assert reader.feed(data) == []
    with pytest.raises(DecodeError, match="cut inside a frame"):
        reader.close()


def test_an_envelope_with_only_an_unknown_arm_is_an_unknown_event_not_an_error():
    inner = b"\x0a\x02\x08\x01"  # a message with one submessage field
    body = bytes([0xFA, 0x03, len(inner)]) + inner  # field 63, length-delimited
    item = decode_proto_event(body)
    assert item == UnknownEventArm((63,))
    decoded = decode_event_lenient(unknown_arm_json(item))
    assert decoded.event is None
    assert [w.code for w in decoded.warnings] == ["unknown_event_type"]


@pytest.mark.parametrize(
    "body",
    [
        b"\xff\xff\xff",  # not protobuf
        b"",  # an empty envelope names nothing
        b"\x08\x01",  # a varint where only arms could be
        bytes([0xFA, 0x03, 2]) + b"\xff\xff",  # an unknown arm that is not a message
    ],
)
def test_bytes_that_are_not_an_envelope_are_a_decode_error(body):
    with pytest.raises(DecodeError):
        decode_proto_event(body)


def test_two_event_arms_in_one_envelope_are_a_decode_error():
    a = encode_proto_frame(START)[4:]
    b = encode_proto_frame(TEXT)[4:]
    with pytest.raises(DecodeError, match="more than one event"):
        decode_proto_event(a + b)


def test_an_arm_whose_base_event_names_another_type_is_a_decode_error():
    wire = pb.Event()
    wire.text_message_content.base_event.type = pb.RUN_STARTED
    wire.text_message_content.message_id = "m"
    with pytest.raises(DecodeError, match="declares RUN_STARTED"):
        decode_proto_event(wire.SerializeToString())


def test_only_a_whole_protobuf_body_looks_like_a_proto_stream():
    body = encode_proto_frame(START) + encode_proto_frame(TEXT)
    assert looks_like_proto_stream(body)
    assert not looks_like_proto_stream(body[:-1])
    assert not looks_like_proto_stream(b"")
    assert not looks_like_proto_stream(json.dumps([START]).encode())
    assert not looks_like_proto_stream(b"data: " + encode_event(decode_event(json.dumps(START))))
    assert not looks_like_proto_stream(b"\x00\x00\x00\x02\x08\x01")


def test_object_members_keep_their_order_through_protobuf():
    snapshot = {
        "weather": {"Lisbon": "sunny"},
        "time": {"z": 1, "a": [{"d": None, "c": 2.5}]},
        "b": True,
        "a": [],
    }
    event = {"type": "STATE_SNAPSHOT", "snapshot": snapshot}
    data = encode_proto_frame(event)
    (back,) = iter_proto_frames(data)
    assert json.dumps(back) == json.dumps(event)  # member order too, at every depth
    # the same bytes are a plain map to the stock runtime (wire-compatible), and a frame the
    # stock runtime wrote (map order its own) decodes to the same members
    stock = pb.Event()
    stock.ParseFromString(data[4:])
    assert stock.state_snapshot.snapshot.struct_value["b"] is True
    assert iter_proto_frames(frame(stock.SerializeToString())) == [event]
