"""The compiled path of the protobuf binding (agui.wire._proto_fast): every frame it reads gives
the JSON text the general path gives (upb parse -> wire dict -> encode_json), and every frame it
leaves alone is one the Python paths judge; bad, deep, huge or hostile frames never crash it."""

from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from agui_generated import agui_pb2 as pb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.event_strategies import events_of

from agui import types as T
from agui.errors import DecodeError
from agui.types import EVENT_TYPES
from agui.wire import _proto as proto
from agui.wire import _proto_typed, encode_json
from agui.wire._proto import decode_proto_event, encode_proto_frame

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from bench import realistic_events

if not proto.set_compiled(True):  # (the module-level switch is restored by each test's use)
    if os.environ.get("AGUI_PURE_BUILD"):
        pytest.skip("a pure-Python build (AGUI_PURE_BUILD)", allow_module_level=True)
    raise RuntimeError("agui.wire._proto_fast is not built: run `python hatch_build.py`")

from agui.wire import _proto_fast  # (built: checked above)

frame_json = _proto_fast.frame_json
ARMED = [t for t in EVENT_TYPES if t.lower() in {f.name for f in pb.Event.DESCRIPTOR.fields}]


def _typed(text: bytes) -> object:
    """JSON text parsed keeping member order, duplicates and int-vs-float apart."""

    def pairs(items: list[tuple[str, object]]) -> object:
        return ("{}", items)

    def mark(value: object) -> object:
        if isinstance(value, tuple):
            return (value[0], [(k, mark(v)) for k, v in value[1]])
        if isinstance(value, list):
            return [mark(v) for v in value]
        return (type(value).__name__, value)

    return mark(json.loads(text, object_pairs_hook=pairs))


def general(body: bytes) -> bytes | None:
    """The general path's JSON text of one Event message, None when it refuses it."""
    try:
        item = decode_proto_event(body)
    except DecodeError:
        return None
    if isinstance(item, proto.UnknownEventArm):
        return None
    try:
        return encode_json(item)
    except Exception:  # noqa: BLE001  (a value JSON cannot carry: not a frame read here)
        return None


def check(body: bytes) -> bytes | None:
    """frame_json of ``body``, asserted to agree with the general path when it reads it."""
    text = frame_json(body, 0, len(body))
    if text is not None:
        expected = general(body)
        assert expected is not None, body
        assert _typed(text) == _typed(expected), (text, expected)
    return text


def test_every_realistic_event_reads_to_the_general_paths_exact_json_text():
    events = realistic_events(3000, 7)
    assert {type(ev).__name__ for ev in events} >= {
        "MessagesSnapshotEvent",
        "StateSnapshotEvent",
        "StateDeltaEvent",
        "RunFinishedEvent",
        "ToolCallResultEvent",
    }
    for event in events:
        body = encode_proto_frame(event)[4:]
        text = frame_json(body, 0, len(body))
        assert text is not None, event  # none of these is left to the slow paths
        assert text == general(body)  # byte for byte (no fractional numbers in them)


@pytest.mark.parametrize("event_type", ARMED)
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_random_valid_events_of_every_type_read_as_the_general_path_reads_them(event_type, data):
    event = data.draw(events_of(EVENT_TYPES[event_type]))
    try:
        frame = encode_proto_frame(event)
    except DecodeError:  # no protobuf form
        return
    check(frame[4:])


def _mutants(body: bytes, rng: random.Random) -> list[bytes]:
    out = []
    for _ in range(40):
        data = bytearray(body)
        how = rng.randrange(5)
        i = rng.randrange(len(data) + 1)
        if how == 0 and data:
            data[min(i, len(data) - 1)] ^= 1 << rng.randrange(8)
        elif how == 1:
            del data[i:]
        elif how == 2:
            data[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4)))
        elif how == 3 and data:
            data[min(i, len(data) - 1)] = rng.choice([0x00, 0x7F, 0x80, 0xFF, 0x0A, 0x12, 0x08])
        else:
            del data[i : i + rng.randrange(1, 4)]
        out.append(bytes(data))
    return out


def test_mutated_frames_are_read_as_the_general_path_reads_them_or_left_to_it():
    rng = random.Random(39)
    events = realistic_events(600, 3) + [
        T.RunStartedEvent(thread_id="t", run_id="r", timestamp=5, metadata={"a": [1.5, None]}),
        T.CustomEvent(name="n", value={"x": [True, False, None, -0.0, 2**60, 'é\n"\\']}),
        T.RunFinishedEvent(
            thread_id="t",
            run_id="r",
            outcome=T.RunFinishedSuccessOutcome(pending_tool_call_ids=["c"]),
        ),
        T.RunFinishedEvent(
            thread_id="t",
            run_id="r",
            outcome=T.RunFinishedInterruptOutcome(interrupts=[T.Interrupt(id="i", reason="x")]),
        ),
        T.MessagesSnapshotEvent(messages=[T.UserMessage(id="u", content="hi")]),
        T.ActivityDeltaEvent(
            message_id="m", activity_type="a", patch=[T.RemoveOperation(path="/a")]
        ),
    ]
    read = left = 0
    for event in events[::3]:
        for body in _mutants(encode_proto_frame(event)[4:], rng):
            if check(body) is None:
                left += 1
            else:
                read += 1
    assert read > 100 and left > 100  # both sides of the line were exercised


@settings(max_examples=400, deadline=None)
@given(body=st.binary(max_size=64))
def test_arbitrary_bytes_never_crash_and_never_disagree(body):
    check(body)
    check(b"\x12" + bytes([len(body)]) + body if len(body) < 128 else body)


def _custom(value_bytes: bytes) -> bytes:
    """A CUSTOM envelope whose value is the given google.protobuf.Value bytes."""
    inner = b"\x0a\x02\x08\x0a" + b"\x12\x01n" + b"\x1a" + _varint(len(value_bytes)) + value_bytes
    return b"\x5a" + _varint(len(inner)) + inner


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _list(value: bytes) -> bytes:
    entry = b"\x0a" + _varint(len(value)) + value
    return b"\x32" + _varint(len(entry)) + entry


def test_nesting_past_the_depth_bound_is_left_to_the_general_path_without_recursing():
    shallow = deep = b"\x1a\x01x"
    for _ in range(20):
        shallow = _list(shallow)
    for _ in range(5000):  # ~5000 levels: far past upb's limit and the C bound
        deep = _list(deep)
    assert check(_custom(shallow)) is not None
    assert frame_json(_custom(deep), 0, len(_custom(deep))) is None
    assert general(_custom(deep)) is None  # upb refuses it: the general path's DecodeError


def _struct(entries: list[tuple[str, bytes]]) -> bytes:
    parts = []
    for key, value in entries:
        k = key.encode()
        entry = b"\x0a" + _varint(len(k)) + k + b"\x12" + _varint(len(value)) + value
        parts.append(b"\x0a" + _varint(len(entry)) + entry)
    body = b"".join(parts)
    return b"\x2a" + _varint(len(body)) + body


@pytest.mark.parametrize("size", [3, 9, 2000])
def test_an_object_with_a_duplicate_key_is_left_to_the_general_path(size):
    one = b"\x11" + struct.pack("<d", 1.0)
    entries = [(f"k{i}", one) for i in range(size)]
    assert check(_custom(_struct(entries))) is not None  # distinct keys: read here
    dup = _custom(_struct([*entries, ("k1", b"\x1a\x01x")]))
    assert frame_json(dup, 0, len(dup)) is None
    assert json.loads(general(dup))["value"]["k1"] == "x"  # the general path: last one wins


@pytest.mark.parametrize(
    "bad",
    [b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"a\x80"],
    ids=["ff", "overlong", "surrogate", "past-10ffff", "cut", "lone-continuation"],
)
def test_a_string_that_is_not_utf8_is_left_to_the_general_path_which_refuses_it(bad):
    arm = b"\x0a\x02\x08\x01\x12\x01m\x1a" + bytes([len(bad)]) + bad
    body = b"\x12" + bytes([len(arm)]) + arm
    assert frame_json(body, 0, len(body)) is None
    with pytest.raises(DecodeError):
        decode_proto_event(body)


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_number_is_left_to_the_general_path(number):
    body = _custom(b"\x11" + struct.pack("<d", number))
    assert frame_json(body, 0, len(body)) is None


def test_numbers_read_as_the_general_path_reads_them():
    for number in (0.1, -0.0, 1e16, 1e-7, 2.0**53, 2.0**53 + 2, -(2.0**60), 1.5e300, 5e-324):
        body = _custom(b"\x11" + struct.pack("<d", number))
        text = check(body)
        assert text is not None
        assert json.loads(text)["value"] == json.loads(general(body))["value"]


def test_frame_json_checks_its_bounds_and_reads_in_place():
    body = encode_proto_frame(T.StepStartedEvent(step_name="s"))[4:]
    framed = b"xx" + body + b"yy"
    assert frame_json(framed, 2, 2 + len(body)) == general(body)
    for start, end in ((-1, 3), (0, len(framed) + 1), (5, 4)):
        with pytest.raises(ValueError):
            frame_json(framed, start, end)


def test_every_entry_point_refuses_odd_arguments_with_a_typed_error():
    body = encode_proto_frame(T.StepStartedEvent(step_name="s"))[4:]
    framed = struct.pack(">I", len(body)) + body
    for args, error in (
        ((framed, 0), TypeError),
        ((framed, "0", 1 << 20), TypeError),
        (("text", 0, 1 << 20), TypeError),
        ((framed, -1, 1 << 20), ValueError),
        ((framed, len(framed) + 1, 1 << 20), ValueError),
        ((framed, 2**64, 1 << 20), OverflowError),
    ):
        with pytest.raises(error):
            _proto_fast.frames_json(*args)
    # a negative or tiny frame limit, a position at the end: nothing read, nothing skipped
    assert _proto_fast.frames_json(framed, 0, -(2**63)) == ([], 0)
    assert _proto_fast.frames_json(framed, 0, len(body) - 1) == ([], 0)
    assert _proto_fast.frames_json(framed, len(framed), 0) == ([], len(framed))
    assert _proto_fast.frames_json(bytearray(framed), 0, len(body)) == (
        [general(body)],
        len(framed),
    )
    event = T.StepStartedEvent(step_name="s")
    (arm,) = [i for i, (name, _) in enumerate(_proto_fast.ARMS) if name == "STEP_STARTED"]
    (unwritable,) = [i for i, (name, w) in enumerate(_proto_fast.ARMS) if name == "RUN_STARTED"]
    for args, error in (
        ((event,), TypeError),
        ((event, "0"), TypeError),
        ((event, 2**64), OverflowError),
        ((event, -1), ValueError),
        ((event, len(_proto_fast.ARMS)), ValueError),
        ((event, unwritable), ValueError),
    ):
        with pytest.raises(error):
            _proto_fast.write_frame(*args)
    assert _proto_fast.write_frame(event, arm) == _encode(event, False)
    # an object that is not that arm's event (no such attributes, or not strings): Python's
    assert _proto_fast.write_frame(object(), arm) is None
    assert _proto_fast.write_frame(T.CustomEvent(name="n", value=1), arm) is None
    for value in (b"x", {1: 2}, [object()], float, "\ud800", 10**400):
        assert _proto_fast.value_bytes(value) is None


def test_a_build_from_other_tables_or_another_source_is_not_used(monkeypatch):
    import agui_generated.agui_pb_fast as tables

    assert proto._load_compiled() is _proto_fast
    monkeypatch.setattr(_proto_fast, "SOURCE", "0" * 16)  # built from another _proto_fast.c
    assert proto._load_compiled() is None
    monkeypatch.undo()
    monkeypatch.setattr(tables, "TABLES", "0" * 16)
    assert proto._load_compiled() is None


def test_the_environment_switch_turns_the_compiled_path_off():
    code = "from agui.wire import _proto as p; print(p.compiled(), p.set_compiled(True))"
    env = {**os.environ, "AGUI_PROTO_PURE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "True"]
    env.pop("AGUI_PROTO_PURE")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["True", "True"]


def test_only_a_json_text_reader_takes_the_compiled_path_and_only_when_on():
    body = b"".join(map(encode_proto_frame, realistic_events(200, 1)))
    try:
        proto.set_compiled(True)
        fast = proto.ProtoFrameReader(typed=True, json_text=True).feed(body)
        proto.set_compiled(False)
        pure = proto.ProtoFrameReader(typed=True, json_text=True).feed(body)
        proto.set_compiled(True)
        typed = proto.ProtoFrameReader(typed=True).feed(body)  # structs, as without it
    finally:
        proto.set_compiled(True)
    assert all(isinstance(item, bytes) for item in fast)
    assert not any(isinstance(item, bytes) for item in pure)
    assert len(fast) == len(pure)
    assert typed == pure


def _encode(event: object, on: bool) -> bytes | str:
    """encode_proto_frame with the compiled path on or off: the frame, or the error's text."""
    was = proto.compiled()
    proto.set_compiled(on)
    try:
        return encode_proto_frame(event)
    except DecodeError as exc:
        return f"DecodeError: {exc}"
    finally:
        proto.set_compiled(was)


def test_every_realistic_event_encodes_to_the_python_writers_bytes():
    for event in realistic_events(3000, 5):
        assert _encode(event, True) == _encode(event, False), event


@pytest.mark.parametrize("event_type", ARMED)
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_random_valid_events_of_every_type_encode_to_the_python_paths_bytes(event_type, data):
    event = data.draw(events_of(EVENT_TYPES[event_type]))
    assert _encode(event, True) == _encode(event, False)


def test_events_the_compiled_writer_leaves_alone_encode_as_before():
    class Text(str):
        pass

    for event in (
        T.TextMessageContentEvent(message_id="m", delta="d", timestamp=5),
        T.TextMessageContentEvent(message_id="m", delta=Text("d")),
        T.TextMessageContentEvent(message_id="m", delta="\ud800"),  # no UTF-8: an error
        T.CustomEvent(name="n", value={1: "x"}),
        T.CustomEvent(name="n", value=10**400),
        T.StateSnapshotEvent(snapshot={"a": float("nan")}),
    ):
        assert _encode(event, True) == _encode(event, False)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.just("\ud800"),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner)
        | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


def _python_value_bytes(value: object) -> bytes | str:
    try:
        return _proto_typed._value_bytes(value)
    except (TypeError, ValueError, OverflowError) as exc:
        return type(exc).__name__


@settings(max_examples=500, deadline=None)
@given(value=_JSON)
def test_value_bytes_are_the_python_functions_or_left_to_it(value):
    data = _proto_fast.value_bytes(value)
    expected = _python_value_bytes(value)
    assert data is None or data == expected
    if data is None:  # only what the Python function must judge (an error here)
        assert isinstance(expected, str)
    assert _python_value_bytes(value) == (
        _proto_typed.value_bytes(value) if data is not None else expected
    )


def test_value_bytes_of_long_values_and_deep_nesting():
    big = {"k" * 300: ["x" * 20000, list(range(200)), {"": None}]}
    assert _proto_fast.value_bytes(big) == _proto_typed._value_bytes(big)
    deep: object = "x"
    for _ in range(300):  # past the C bound: the Python function writes it
        deep = [deep]
    assert _proto_fast.value_bytes(deep) is None
    assert _proto_typed.value_bytes(deep) == _proto_typed._value_bytes(deep)


def test_a_huge_object_of_near_identical_keys_is_checked_in_n_log_n():
    # 100,000 keys sharing a long prefix: a hashed check a peer can make collide, or a
    # pairwise one, would take minutes here; sorted, it takes a fraction of a second
    one = b"\x11" + struct.pack("<d", 1.0)
    entries = [("k" * 64 + f"{i:08d}", one) for i in range(100_000)]
    body = _custom(_struct(entries))
    start = time.process_time()
    text = frame_json(body, 0, len(body))
    assert time.process_time() - start < 5.0
    assert text is not None and text.count(b'"k') == 100_000
    dup = _custom(_struct([*entries, (entries[50_000][0], one)]))
    assert frame_json(dup, 0, len(dup)) is None
