"""Every msgspec failure on bad input becomes an ``agui.errors.DecodeError``.

msgspec raises more than ``ValidationError`` on bad input: a str holding a lone
UTF-16 surrogate where it expects a non-string (or as a struct's property name)
makes it raise ``UnicodeEncodeError`` while it builds its own message, a deep
document a ``RecursionError``. None of that may escape a decode entry point (and
so crash a client, the CLI or a server): the wire layer maps all of it in one
place to a typed error with a JSON path where one is known. The fuzz tests at
the end feed any bytes, any JSON text and event-shaped documents with odd values
in every slot through every entry point and the client pipeline.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agui.errors import DecodeError
from agui.pipeline._pipeline import Pipeline
from agui.types import EVENT_TYPES, RunAgentInput, TextMessageContentEvent
from agui.updates import ErrorUpdate
from agui.wire import (
    EventDecoder,
    decode_event,
    decode_event_lenient,
    decode_input,
    decode_input_lenient,
)
from agui.wire._shapes import shape_of

EVENT_ENTRY_POINTS = {
    "decode_event": decode_event,
    "decode_event_strict": lambda data: decode_event(data, strict=True),
    "decode_event_lenient": decode_event_lenient,
    "EventDecoder": lambda data: EventDecoder().decode(data),
    "EventDecoder_strict": lambda data: EventDecoder(strict=True).decode(data),
}
INPUT_ENTRY_POINTS = {
    "decode_input": decode_input,
    "decode_input_strict": lambda data: decode_input(data, strict=True),
    "decode_input_lenient": decode_input_lenient,
}
ALL_ENTRY_POINTS = {**EVENT_ENTRY_POINTS, **INPUT_ENTRY_POINTS}

SURROGATE_TIMESTAMP = '{"type":"RUN_STARTED","threadId":"t","runId":"r","timestamp":"\\ud83d"}'
INPUT = {"threadId": "t", "runId": "r", "state": {}, "messages": [], "tools": [], "context": []}


def _forms(text: str) -> list[Any]:
    """JSON text as bytes (escapes only) and as str holding the code points themselves."""
    raw = json.dumps(json.loads(text), ensure_ascii=False)
    return [text.encode(), text, raw]


@pytest.mark.parametrize("name", EVENT_ENTRY_POINTS)
@pytest.mark.parametrize("form", [0, 1, 2])
def test_lone_surrogate_in_a_timestamp_is_a_decode_error(name, form):
    data = _forms(SURROGATE_TIMESTAMP)[form]
    with pytest.raises(DecodeError) as info:
        EVENT_ENTRY_POINTS[name](data)
    assert info.value.path == "$.timestamp"
    assert "int" in info.value.reason
    assert info.value.value == "\ud83d"


@pytest.mark.parametrize("name", ["decode_event_strict", "EventDecoder_strict"])
def test_lone_surrogate_property_name_is_a_decode_error_in_strict_mode(name):
    data = '{"type":"RUN_STARTED","threadId":"t","runId":"r","\\ud83d":1}'
    with pytest.raises(DecodeError) as info:
        EVENT_ENTRY_POINTS[name](data)
    assert info.value.path == '$["\\ud83d"]'
    assert "unrecognised property" in info.value.reason
    assert info.value.value == 1


def test_lone_surrogate_property_name_is_stripped_when_lenient():
    data = '{"type":"RUN_STARTED","threadId":"t","runId":"r","\\ud83d":1}'
    decoded = decode_event_lenient(data)
    assert decoded.event == EVENT_TYPES["RUN_STARTED"](thread_id="t", run_id="r")
    assert [(w.code, w.path) for w in decoded.warnings] == [("unknown_property", '$["\\ud83d"]')]


def test_lone_surrogate_as_event_type_is_an_unknown_event_type():
    data = '{"type":"\\ud83d","threadId":"t","runId":"r"}'
    for name, entry in EVENT_ENTRY_POINTS.items():
        if name in ("decode_event_lenient", "EventDecoder"):
            assert entry(data).event is None, name
        else:
            with pytest.raises(DecodeError) as info:
                entry(data)
            assert info.value.path == "$.type", name


@pytest.mark.parametrize("name", INPUT_ENTRY_POINTS)
@pytest.mark.parametrize(
    ("slot", "path"),
    [("messages", "$.messages"), ("tools", "$.tools"), ("threadId", None)],
)
def test_lone_surrogate_in_a_run_agent_input_slot_is_a_decode_error(name, slot, path):
    body = json.dumps({**INPUT, slot: "\ud83d" if path else 5})
    entry = INPUT_ENTRY_POINTS[name]
    with pytest.raises(DecodeError) as info:
        entry(body)
    assert info.value.path == (path or "$.threadId")


def test_lone_surrogate_in_a_run_agent_input_str_slot_decodes():
    body = json.dumps({**INPUT, "threadId": "t\ud83d"})
    for name, entry in INPUT_ENTRY_POINTS.items():
        value = entry(body)
        value = value.input if name == "decode_input_lenient" else value
        assert isinstance(value, RunAgentInput) and value.thread_id == "t\ud83d", name


@pytest.mark.parametrize("name", EVENT_ENTRY_POINTS)
def test_raw_lone_surrogate_in_json_text_decodes(name):
    # a str holding the code point itself (not its escape), in a str slot
    data = '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"a\ud83d"}'
    result = EVENT_ENTRY_POINTS[name](data)
    event = result if isinstance(result, TextMessageContentEvent) else result.event
    assert event == TextMessageContentEvent(message_id="m", delta="a\ud83d")


@pytest.mark.parametrize("name", ALL_ENTRY_POINTS)
def test_raw_lone_surrogate_outside_a_string_is_a_decode_error(name):
    with pytest.raises(DecodeError, match="not valid JSON"):
        ALL_ENTRY_POINTS[name]('{"type":"RUN_STARTED",\ud83d}')


@pytest.mark.parametrize("name", ALL_ENTRY_POINTS)
def test_deeply_nested_document_is_a_decode_error(name):
    for doc in (
        '{"type":"CUSTOM","name":"n","value":' + "[" * 5000 + "]" * 5000 + "}",
        '{"type":"CUSTOM","name":"n","value":"\\ud83d","x":' + "[" * 5000 + "]" * 5000 + "}",
    ):
        with pytest.raises(DecodeError, match="nested too deeply"):
            ALL_ENTRY_POINTS[name](doc)


def test_pipeline_reports_a_lone_surrogate_timestamp_as_an_error_update():
    pipeline = Pipeline()
    updates = pipeline.feed_bytes(b"data: " + SURROGATE_TIMESTAMP.encode() + b"\n\n")
    assert len(updates) == 1 and isinstance(updates[0], ErrorUpdate)
    assert isinstance(updates[0].error, DecodeError)
    assert updates[0].error.path == "$.timestamp"


def test_decode_error_text_holds_no_lone_surrogate():
    # the message must be printable on a UTF-8 terminal
    data = '{"type":"RUN_STARTED","threadId":"t","runId":"r","\\ud83d":"\\udc00"}'
    with pytest.raises(DecodeError) as info:
        decode_event(data, strict=True)
    str(info.value).encode("utf-8")
    info.value.path.encode("utf-8")
    info.value.reason.encode("utf-8")


def test_lenient_warning_text_holds_no_lone_surrogate():
    data = '{"type":"RUN_STARTED","threadId":"t","runId":"r","\\ud83d":1}'
    for warnings in (decode_event_lenient(data).warnings, EventDecoder().decode(data).warnings):
        assert [w.message for w in warnings] == [
            "stripped unrecognised property /\\ud83d of RUN_STARTED"
        ]


# -- fuzzing -----------------------------------------------------------------------

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FUZZ_PIPELINE = settings(FUZZ, max_examples=150)  # (a whole pipeline per example)

SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
ODD_TEXT = st.lists(st.one_of(SURROGATES, st.characters()), max_size=6).map("".join)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63, max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    ODD_TEXT,
    SURROGATES,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(ODD_TEXT, inner, max_size=3)
    ),
    max_leaves=8,
)
EVENT_NAMES = sorted(EVENT_TYPES) + ["THINKING_START", "THINKING_TEXT_MESSAGE_CONTENT", "NOPE"]
FIELDS = {name: sorted(shape_of(cls).fields) for name, cls in EVENT_TYPES.items()}
INPUT_FIELDS = sorted(shape_of(RunAgentInput).fields)


@st.composite
def event_documents(draw) -> dict[str, Any]:
    """An event-shaped object: a known (or retired, or unknown) type, each of its
    fields absent, plausible or odd, plus maybe an odd extra property."""
    name = draw(st.sampled_from(EVENT_NAMES))
    doc: dict[str, Any] = {"type": draw(st.one_of(st.just(name), SCALARS))}
    for field in FIELDS.get(name, ["messageId", "delta", "role"]):
        if field != "type" and draw(st.booleans()):
            doc[field] = draw(st.one_of(st.just("x"), st.just([]), st.just({}), VALUES))
    if draw(st.booleans()):
        doc[draw(ODD_TEXT)] = draw(VALUES)
    return doc


@st.composite
def input_documents(draw) -> dict[str, Any]:
    doc: dict[str, Any] = dict(INPUT)
    for field in INPUT_FIELDS:
        if draw(st.booleans()):
            doc[field] = draw(VALUES)
    if draw(st.booleans()):
        doc["messages"] = [
            {
                "role": draw(st.sampled_from(["user", "tool", "assistant", "x"])),
                "id": draw(VALUES),
                "content": draw(VALUES),
            }
        ]
    return doc


def _texts(doc: Any) -> list[Any]:
    """One JSON document as the entry points may get it: bytes with escapes, a
    str with escapes, a str holding the code points themselves."""
    escaped = json.dumps(doc)
    return [escaped.encode(), escaped, json.dumps(doc, ensure_ascii=False)]


def _printable(text: str) -> None:
    text.encode("utf-8")  # raises on a lone surrogate


def _only_typed_errors(data: Any) -> None:
    for name, entry in ALL_ENTRY_POINTS.items():
        try:
            result = entry(data)
        except DecodeError as exc:
            _printable(str(exc))
            _printable(exc.path)
        except Exception as exc:  # pragma: no cover - the failure being reported
            raise AssertionError(f"{name} raised {type(exc).__name__}: {exc!r}") from exc
        else:
            for warning in getattr(result, "warnings", ()):
                _printable(warning.message)
                _printable(warning.path)


def _pipeline_never_raises(frames: list[bytes]) -> None:
    pipeline = Pipeline()
    for frame in frames:
        pipeline.feed_bytes(b"data: " + frame + b"\n\n")
    pipeline.close()


@FUZZ
@given(st.binary(max_size=200))
def test_any_bytes_raise_only_typed_errors(data):
    _only_typed_errors(data)
    Pipeline().feed_bytes(data)


@FUZZ
@given(st.text(max_size=100))
def test_any_text_raises_only_typed_errors(text):
    _only_typed_errors(text)


@FUZZ
@given(VALUES)
def test_any_json_value_raises_only_typed_errors(value):
    for data in _texts(value):
        _only_typed_errors(data)


@FUZZ
@given(event_documents())
def test_event_with_odd_values_in_every_slot_raises_only_typed_errors(doc):
    for data in _texts(doc):
        _only_typed_errors(data)


@FUZZ
@given(input_documents())
def test_run_agent_input_with_odd_values_raises_only_typed_errors(doc):
    for data in _texts(doc):
        _only_typed_errors(data)


@FUZZ_PIPELINE
@given(st.lists(event_documents(), max_size=6))
@example([json.loads(SURROGATE_TIMESTAMP)])
def test_pipeline_never_raises_on_odd_events(docs):
    _pipeline_never_raises([json.dumps(doc).encode() for doc in docs])
    start = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
    _pipeline_never_raises([json.dumps(doc).encode() for doc in [start, *docs]])


@FUZZ_PIPELINE
@given(st.lists(event_documents(), max_size=6))
@example([json.loads(SURROGATE_TIMESTAMP)])
def test_pipeline_feed_data_never_raises_on_odd_json_text(docs):
    # JSON text as a str, holding lone surrogate code points themselves
    pipeline = Pipeline()
    pipeline.feed_data('{"type":"RUN_STARTED","threadId":"t","runId":"r"}')
    for doc in docs:
        pipeline.feed_data(json.dumps(doc, ensure_ascii=False))
    pipeline.close()


def test_json_kind_names_each_json_kind_a_bool_before_an_int_and_else_the_class():
    import enum
    from collections import OrderedDict

    from agui.wire._shapes import json_kind

    class Color(enum.StrEnum):
        RED = "red"

    values = [{}, OrderedDict(), [], "s", Color.RED, True, 1, 1.5, None, b"x", (1,)]
    kinds = ["object", "object", "array", "str", "str", "bool", "int", "float", "null"]
    assert [json_kind(v) for v in values] == [*kinds, "bytes", "tuple"]
