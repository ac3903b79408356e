"""JSON Patch operations on the wire (agui.wire._patch_check): open objects, checked per op."""

from __future__ import annotations

import json

import pytest

from agui.errors import DecodeError
from agui.types import ActivityDeltaEvent, AddOperation, StateDeltaEvent
from agui.wire import EventDecoder, decode_event, decode_event_lenient, encode_event
from agui.wire._patch_check import OP_MEMBERS, check_ops, ops_ok


def dumps(obj) -> bytes:
    return json.dumps(obj).encode()


def state_delta(*ops) -> bytes:
    return dumps({"type": "STATE_DELTA", "delta": list(ops)})


def activity_delta(*ops) -> bytes:
    return dumps(
        {"type": "ACTIVITY_DELTA", "messageId": "a", "activityType": "plan", "patch": list(ops)}
    )


def test_op_table_follows_the_generated_op_structs():
    assert OP_MEMBERS == {
        "add": (("path", "pointer"), ("value", "any")),
        "remove": (("path", "pointer"),),
        "replace": (("path", "pointer"), ("value", "any")),
        "move": (("from", "pointer"), ("path", "pointer")),
        "copy": (("from", "pointer"), ("path", "pointer")),
        "test": (("path", "pointer"), ("value", "any")),
    }


@pytest.mark.parametrize("strict", [False, True])
def test_patch_op_extras_survive_decoding_and_reencoding(strict):
    op = {"op": "remove", "path": "/items/1", "value": "drop-me", "comment": {"why": [1, None]}}
    for data, attr in ((state_delta(op), "delta"), (activity_delta(op), "patch")):
        event = decode_event(data, strict=strict)
        assert getattr(event, attr) == [op]
        assert json.loads(encode_event(event)) == json.loads(data)


def test_patch_op_extras_draw_no_warning():
    op = {"op": "add", "path": "/a", "value": 1, "x-note": "kept"}
    assert decode_event_lenient(state_delta(op)) == (StateDeltaEvent(delta=[op]), ())


def test_patch_op_value_null_is_data_not_a_legacy_null():
    ops = [{"op": "add", "path": "/a", "value": None}, {"op": "test", "path": "/a", "value": None}]
    assert decode_event(state_delta(*ops), strict=True).delta == ops
    assert decode_event_lenient(state_delta(*ops)).warnings == ()


def test_unknown_patch_op_is_dropped_with_a_warning_rest_kept():
    decoded = EventDecoder().decode(
        activity_delta(
            {"op": "add", "path": "/a", "value": 1},
            {"op": "increment", "path": "/n", "value": 1},
            {"op": "remove", "path": "/b"},
        )
    )
    assert decoded.event.patch == [
        {"op": "add", "path": "/a", "value": 1},
        {"op": "remove", "path": "/b"},
    ]
    [warning] = decoded.warnings
    assert (warning.code, warning.path) == ("unknown_union_member", "$.patch[1]")
    assert "/patch/1" in warning.message and "'increment'" in warning.message


def test_unknown_patch_op_is_a_decode_error_in_strict_mode():
    with pytest.raises(DecodeError) as info:
        decode_event(state_delta({"op": "increment", "path": "/n", "value": 1}), strict=True)
    assert info.value.path == "$.delta[0].op"
    assert info.value.value == "increment"
    assert "unrecognised value 'increment' for `op`" in info.value.reason


@pytest.mark.parametrize(
    ("op", "path", "reason"),
    [
        ({"op": "add", "path": "/a"}, "$.delta[0].value", "missing required field `value`"),
        ({"op": "replace", "path": "/a"}, "$.delta[0].value", "missing required field `value`"),
        ({"op": "test", "path": "/a"}, "$.delta[0].value", "missing required field `value`"),
        ({"op": "move", "path": "/a"}, "$.delta[0].from", "missing required field `from`"),
        ({"op": "copy", "path": "/a"}, "$.delta[0].from", "missing required field `from`"),
        ({"op": "remove"}, "$.delta[0].path", "missing required field `path`"),
        ({"path": "/a"}, "$.delta[0].op", "missing required field `op`"),
        ({"op": 7, "path": "/a"}, "$.delta[0].op", "expected str, received int"),
        ({"op": "remove", "path": 3}, "$.delta[0].path", "expected str, received int"),
        ({"op": "remove", "path": None}, "$.delta[0].path", "expected str, received null"),
        ({"op": "remove", "path": "a/b"}, "$.delta[0].path", "invalid JSON Pointer 'a/b'"),
        ({"op": "remove", "path": "/a~2"}, "$.delta[0].path", "invalid JSON Pointer '/a~2'"),
        ({"op": "move", "from": "x", "path": "/a"}, "$.delta[0].from", "invalid JSON Pointer"),
    ],
)
@pytest.mark.parametrize("strict", [False, True])
def test_malformed_patch_op_is_a_decode_error_with_path(op, path, reason, strict):
    with pytest.raises(DecodeError) as info:
        decode_event(state_delta({"op": "add", "path": "", "value": {}}, op), strict=strict)
    assert info.value.path == path.replace("[0]", "[1]")
    assert reason in info.value.reason


@pytest.mark.parametrize("strict", [False, True])
def test_patch_that_is_not_an_array_of_objects_is_malformed(strict):
    with pytest.raises(DecodeError) as info:
        decode_event(dumps({"type": "STATE_DELTA", "delta": [["add"]]}), strict=strict)
    assert info.value.path == "$.delta[0]"
    with pytest.raises(DecodeError) as info:
        decode_event(dumps({"type": "STATE_DELTA", "delta": {"op": "add"}}), strict=strict)
    assert info.value.path == "$.delta"


@pytest.mark.parametrize("pointer", ["", "/", "/a/b", "/a~0b/~1c", "/-", "/0", "/a b/ü"])
def test_valid_json_pointers_are_accepted(pointer):
    ops = [{"op": "copy", "from": pointer, "path": pointer}]
    assert ops_ok(ops)
    assert check_ops(ops, ["delta"], None) is ops


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "add", "path": "/a", "value": 1}],
        [{"op": "add", "path": "/a"}],
        [{"op": "nope", "path": "/a"}],
        [{"op": ["add"], "path": "/a"}],
        [{"path": "/a"}],
        [{"op": "remove", "path": "a"}],
        [{"op": "remove", "path": "/~"}],
        [{"op": "remove", "path": "/a"}, 5],
        [],
    ],
)
def test_fast_check_agrees_with_the_full_check(ops):
    warnings: list = []
    try:
        clean = check_ops(ops, ["delta"], warnings) is ops and not warnings
    except DecodeError:
        clean = False
    assert ops_ok(ops) is clean


def test_op_structs_still_build_patches():
    event = StateDeltaEvent(delta=[AddOperation(path="/a", value=None)])
    assert decode_event(encode_event(event), strict=True) == StateDeltaEvent(
        delta=[{"op": "add", "path": "/a", "value": None}]
    )
    assert decode_event(
        encode_event(ActivityDeltaEvent(message_id="a", activity_type="t", patch=[]))
    ) == ActivityDeltaEvent(message_id="a", activity_type="t", patch=[])
