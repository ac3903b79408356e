"""Producer profiles (agui.pipeline._profiles): each compatibility rule, applied by the
Conversation, is named by a stable warning code and never silent."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from agui import types as T
from agui.pipeline._apply import Conversation
from agui.pipeline._profiles import (
    LANGGRAPH_ON_INTERRUPT,
    PROFILE_CODES,
    langgraph_interrupt,
    wants_resume_value,
)
from agui.updates import Custom, Paused, WarningUpdate

VALUE = {"message": "Approve the plan?", "reason": "approval"}


def ev(type_: str, **fields: Any) -> Any:
    return msgspec.convert({"type": type_, **fields}, T.Event)


def on_interrupt(iid: Any = "lg-1", value: Any = None, **raw: Any) -> Any:
    value = json.dumps(VALUE) if value is None else value
    raw_event: dict[str, Any] = {"value": VALUE, "response_schema": None, **raw}
    if iid is not None:
        raw_event["id"] = iid
    return ev("CUSTOM", name="on_interrupt", value=value, rawEvent=raw_event)


def run(conv: Conversation, *events: Any) -> list[Any]:
    out: list[Any] = []
    for e in (ev("RUN_STARTED", threadId="t", runId="r"), *events):
        out.extend(conv.apply(e))
    return out


def test_langgraph_on_interrupt_then_no_outcome_is_an_interrupted_run_with_a_warning():
    conv = Conversation()
    ups = run(conv, on_interrupt(), ev("RUN_FINISHED", threadId="t", runId="r"))
    assert Custom("on_interrupt", json.dumps(VALUE)) in ups
    warning, paused = ups[-2:]
    assert isinstance(warning, WarningUpdate) and warning.code == LANGGRAPH_ON_INTERRUPT
    assert "lg-1" in warning.message
    assert isinstance(paused, Paused)
    [pending] = conv.pending_interrupts
    assert paused.interrupts == (pending,)
    assert msgspec.to_builtins(pending) == {
        "id": "lg-1",
        "reason": "approval",
        "message": "Approve the plan?",
        "metadata": {"langgraph": {"raw": VALUE}},
    }
    assert conv.outcome == "interrupted"
    assert LANGGRAPH_ON_INTERRUPT in PROFILE_CODES


def test_langgraph_on_interrupt_with_an_equal_interrupt_outcome_makes_one_interrupt_no_warning():
    conv = Conversation()
    outcome = {
        "type": "interrupt",
        "interrupts": [{"id": "lg-1", "reason": "approval", "message": "Approve the plan?"}],
    }
    ups = run(conv, on_interrupt(), ev("RUN_FINISHED", threadId="t", runId="r", outcome=outcome))
    assert not [u for u in ups if isinstance(u, WarningUpdate)]
    assert [i.id for i in conv.pending_interrupts] == ["lg-1"]
    assert conv.pending_interrupts[0].metadata is msgspec.UNSET  # the outcome's, as sent


def test_an_explicit_success_outcome_wins_over_a_legacy_on_interrupt():
    conv = Conversation()
    ups = run(
        conv,
        on_interrupt(),
        ev("RUN_FINISHED", threadId="t", runId="r", outcome={"type": "success"}),
    )
    assert conv.outcome == "success" and conv.pending_interrupts == []
    assert not [u for u in ups if isinstance(u, (WarningUpdate, Paused))]


def test_on_interrupt_without_a_raw_event_id_stays_a_plain_custom_event():
    conv = Conversation()
    ups = run(conv, on_interrupt(iid=None), ev("RUN_FINISHED", threadId="t", runId="r"))
    assert conv.outcome == "success" and conv.pending_interrupts == []
    assert not [u for u in ups if isinstance(u, (WarningUpdate, Paused))]


def test_a_legacy_interrupt_of_an_earlier_run_does_not_leak_into_the_next():
    conv = Conversation()
    conv.apply(ev("RUN_STARTED", threadId="t", runId="r0"))
    conv.apply(on_interrupt())
    conv.apply(ev("RUN_ERROR", message="boom"))
    run(conv, ev("RUN_FINISHED", threadId="t", runId="r"))
    assert conv.outcome == "success" and conv.pending_interrupts == []


def test_repeated_on_interrupt_with_one_id_is_one_interrupt_and_two_ids_are_two():
    conv = Conversation()
    run(
        conv,
        on_interrupt(),
        on_interrupt(),
        on_interrupt("lg-2"),
        ev("RUN_FINISHED", threadId="t", runId="r"),
    )
    assert [i.id for i in conv.pending_interrupts] == ["lg-1", "lg-2"]


def test_langgraph_interrupt_value_shapes():
    plain = langgraph_interrupt(on_interrupt(value="not json {"))
    assert (plain.message, plain.reason) == ("not json {", "input_required")
    scalar = langgraph_interrupt(on_interrupt(value="42"))
    assert scalar.message is msgspec.UNSET and scalar.metadata == {"langgraph": {"raw": 42}}
    schema = {"type": "object"}
    assert langgraph_interrupt(on_interrupt(response_schema=schema)).response_schema == schema
    other = ev("CUSTOM", name="something_else", value="{}", rawEvent={"id": "x"})
    assert langgraph_interrupt(other) is None


def test_langgraph_interrupts_want_a_resume_value_and_plain_ones_do_not():
    assert wants_resume_value(langgraph_interrupt(on_interrupt()))
    assert wants_resume_value({"id": "i", "reason": "r", "metadata": {"langgraph": {}}})
    assert not wants_resume_value(T.Interrupt(id="i", reason="confirmation"))
    assert not wants_resume_value({"id": "i", "reason": "r", "metadata": {"langgraph": 1}})


# -- the same rule without a Session: agui.client._interrupts (board-watch trace) ------------------


def test_interrupts_of_applies_the_legacy_on_interrupt_rule_to_structs_and_wire_dicts():
    from agui.client._interrupts import interrupts_of

    events = [
        ev("RUN_STARTED", threadId="t", runId="r"),
        on_interrupt(),
        ev("RUN_FINISHED", threadId="t", runId="r"),
    ]
    wire = [msgspec.to_builtins(e) for e in events]
    for stream in (events, wire):
        [pending] = interrupts_of(stream)
        assert msgspec.to_builtins(pending) == {
            "id": "lg-1",
            "reason": "approval",
            "message": "Approve the plan?",
            "metadata": {"langgraph": {"raw": VALUE}},
        }


def test_interrupts_of_lets_an_explicit_outcome_win_and_forgets_an_earlier_run():
    from agui.client._interrupts import interrupts_of

    outcome = {"type": "interrupt", "interrupts": [{"id": "lg-1", "reason": "approval"}]}
    start = ev("RUN_STARTED", threadId="t", runId="r")
    explicit = [start, on_interrupt(), ev("RUN_FINISHED", threadId="t", runId="r", outcome=outcome)]
    assert [i.metadata for i in interrupts_of(explicit)] == [msgspec.UNSET]  # the outcome's
    success = [
        start,
        on_interrupt(),
        ev("RUN_FINISHED", threadId="t", runId="r", outcome={"type": "success"}),
    ]
    assert interrupts_of(success) == []
    errored = [
        start,
        on_interrupt(),
        ev("RUN_ERROR", message="boom"),
        ev("RUN_STARTED", threadId="t", runId="r2"),
        ev("RUN_FINISHED", threadId="t", runId="r2"),
    ]
    assert interrupts_of(errored) == []


def test_resume_run_answers_a_legacy_interrupt_with_one_resume_entry():
    from agui.client._interrupts import resolved, resume_run
    from agui.types import RunAgentInput

    previous = RunAgentInput(
        thread_id="t", run_id="r", messages=[], tools=[], context=[], state={}, forwarded_props={}
    )
    events = [
        ev("RUN_STARTED", threadId="t", runId="r"),
        on_interrupt(),
        ev("RUN_FINISHED", threadId="t", runId="r"),
    ]
    nxt = resume_run(previous, events, {"lg-1": resolved({"approved": True})}, run_id="r2")
    assert msgspec.to_builtins(nxt.resume) == [
        {"interruptId": "lg-1", "status": "resolved", "payload": {"approved": True}}
    ]


# -- the other producer quirks: accepted as they are (README "Producer profiles") -----------


def feed_all(*frames: str) -> tuple[Conversation, list[Any]]:
    from agui.pipeline._pipeline import Pipeline

    conv = Conversation()
    pipeline = Pipeline(conv)
    out: list[Any] = []
    for frame in frames:
        out.extend(pipeline.feed(frame))
    return conv, out


def text_run(timestamp: str) -> tuple[Conversation, list[Any]]:
    return feed_all(
        '{"type":"RUN_STARTED","threadId":"t","runId":"r","timestamp":' + timestamp + "}",
        '{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant","timestamp":'
        + timestamp
        + "}",
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}',
        '{"type":"TEXT_MESSAGE_END","messageId":"m"}',
        '{"type":"RUN_FINISHED","threadId":"t","runId":"r"}',
    )


def test_integer_timestamps_in_seconds_and_in_milliseconds_are_both_accepted():
    from agui.updates import Done, ErrorUpdate

    for timestamp in ("1733050000", "1733050000123"):
        conv, out = text_run(timestamp)
        assert [m.content for m in conv.messages] == ["hi"]
        assert not [u for u in out if isinstance(u, (ErrorUpdate, WarningUpdate))]
        assert isinstance(out[-1], Done) and out[-1].outcome == "success"


def test_a_fractional_timestamp_in_seconds_becomes_integer_milliseconds_with_a_warning():
    from agui.updates import Done, ErrorUpdate

    conv, out = text_run("1733050000.5")
    assert [m.content for m in conv.messages] == ["hi"]
    assert not [u for u in out if isinstance(u, ErrorUpdate)]
    warnings = [u for u in out if isinstance(u, WarningUpdate)]
    assert [(w.code, w.path) for w in warnings] == [("fractional_timestamp", "$.timestamp")] * 2
    assert warnings[0].message == (
        "made the fractional timestamp 1733050000.5 at /timestamp of RUN_STARTED the integer"
        " 1733050000500 (read as seconds; the schema's timestamp is integer milliseconds)"
    )
    assert isinstance(out[-1], Done) and out[-1].outcome == "success"


def test_a_fractional_timestamp_in_milliseconds_is_rounded_to_the_millisecond():
    from agui.wire import decode_event_lenient

    decoded = decode_event_lenient(
        b'{"type":"STEP_STARTED","stepName":"s","timestamp":1733050000123.6}'
    )
    assert decoded.event.timestamp == 1733050000124
    assert [w.code for w in decoded.warnings] == ["fractional_timestamp"]
    assert "read as milliseconds" in decoded.warnings[0].message


def test_strict_decoding_refuses_a_fractional_timestamp():
    from agui.errors import DecodeError
    from agui.wire import decode_event

    with pytest.raises(DecodeError) as caught:
        decode_event(
            b'{"type":"STEP_STARTED","stepName":"s","timestamp":1733050000.5}', strict=True
        )
    assert caught.value.path == "$.timestamp"


@pytest.mark.parametrize("value", ["1.5e300", "-1.5e300", "9.1e15"])
def test_a_fractional_timestamp_past_the_safe_integer_range_stays_a_decode_error(value):
    from agui.errors import DecodeError
    from agui.wire import decode_event_lenient

    with pytest.raises(DecodeError) as caught:
        decode_event_lenient(
            ('{"type":"STEP_STARTED","stepName":"s","timestamp":' + value + "}").encode()
        )
    assert caught.value.path == "$.timestamp"


def test_an_integral_float_timestamp_is_made_an_integer_too():
    from agui.wire import decode_event_lenient

    decoded = decode_event_lenient(
        b'{"type":"STEP_STARTED","stepName":"s","timestamp":1733050000123.0}'
    )
    assert decoded.event.timestamp == 1733050000123
    assert type(decoded.event.timestamp) is int
    assert [w.code for w in decoded.warnings] == ["fractional_timestamp"]


def test_chunks_repeating_message_id_and_role_on_every_fragment_are_one_message():
    chunk = '{"type":"TEXT_MESSAGE_CHUNK","messageId":"m","role":"assistant","delta":"%s"}'
    conv, out = feed_all(
        '{"type":"RUN_STARTED","threadId":"t","runId":"r"}',
        chunk % "Hel",
        chunk % "lo",
        chunk % "!",
        '{"type":"RUN_FINISHED","threadId":"t","runId":"r"}',
    )
    assert [(m.id, m.content) for m in conv.messages] == [("m", "Hello!")]
    assert not [u for u in out if isinstance(u, WarningUpdate)]


def test_several_messages_snapshots_with_fresh_ids_do_not_duplicate_messages():
    snapshot = (
        '{"type":"MESSAGES_SNAPSHOT","messages":[{"id":"%s","role":"user","content":"hi"},'
        '{"id":"%s","role":"assistant","content":"hello"}]}'
    )
    conv, _ = feed_all(
        '{"type":"RUN_STARTED","threadId":"t","runId":"r"}',
        '{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}',
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"hello"}',
        '{"type":"TEXT_MESSAGE_END","messageId":"m1"}',
        snapshot % ("s1", "s2"),
        snapshot % ("s3", "s4"),
        '{"type":"RUN_FINISHED","threadId":"t","runId":"r"}',
    )
    assert [(m.id, m.content) for m in conv.messages] == [("s3", "hi"), ("s4", "hello")]


def test_run_error_without_a_code_is_a_failed_run_with_the_message():
    from agui.updates import Done, ErrorUpdate

    _, out = feed_all(
        '{"type":"RUN_STARTED","threadId":"t","runId":"r"}',
        '{"type":"RUN_ERROR","message":"model failed"}',
    )
    [error] = [u.error for u in out if isinstance(u, ErrorUpdate)]
    assert (error.message, error.code) == ("model failed", None)
    assert isinstance(out[-1], Done) and out[-1].outcome == "failed"


def test_whole_state_snapshots_after_every_step_each_replace_the_state():
    conv, out = feed_all(
        '{"type":"RUN_STARTED","threadId":"t","runId":"r"}',
        '{"type":"STATE_SNAPSHOT","snapshot":{"messages":[],"tasks":[]}}',
        '{"type":"STATE_SNAPSHOT","snapshot":{"messages":[{"type":"human"}]}}',
        '{"type":"STATE_SNAPSHOT","snapshot":{"messages":[{"type":"human"}],"tasks":["a"]}}',
        '{"type":"RUN_FINISHED","threadId":"t","runId":"r"}',
    )
    assert conv.state == {"messages": [{"type": "human"}], "tasks": ["a"]}
    assert not [u for u in out if isinstance(u, WarningUpdate)]
