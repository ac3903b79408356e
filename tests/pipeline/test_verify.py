"""Verifier: every ordering rule, its stable code, and state not advanced on a violation."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from agui import _rules as R
from agui import types as T
from agui.errors import ProtocolViolation
from agui.pipeline._verify import RULES, Verifier


def ev(type_: str, **fields: Any) -> Any:
    return msgspec.convert({"type": type_, **fields}, T.Event)


def rs(run: str = "r1", thread: str = "t1", **kw: Any) -> Any:
    return ev("RUN_STARTED", threadId=thread, runId=run, **kw)


def rf(run: str = "r1", thread: str = "t1", **kw: Any) -> Any:
    return ev("RUN_FINISHED", threadId=thread, runId=run, **kw)


def tms(mid: str, **kw: Any) -> Any:
    return ev("TEXT_MESSAGE_START", messageId=mid, **kw)


def tmc(mid: str, delta: str = "x", **kw: Any) -> Any:
    return ev("TEXT_MESSAGE_CONTENT", messageId=mid, delta=delta, **kw)


def tme(mid: str, **kw: Any) -> Any:
    return ev("TEXT_MESSAGE_END", messageId=mid, **kw)


def tcs(cid: str, **kw: Any) -> Any:
    return ev("TOOL_CALL_START", toolCallId=cid, toolCallName=kw.pop("name", "f"), **kw)


def tca(cid: str, **kw: Any) -> Any:
    return ev("TOOL_CALL_ARGS", toolCallId=cid, delta="{}", **kw)


def tce(cid: str, **kw: Any) -> Any:
    return ev("TOOL_CALL_END", toolCallId=cid, **kw)


def run_strict(events: list[Any], verifier: Verifier | None = None) -> ProtocolViolation | None:
    """First violation of the stream (including finish()), or None."""
    v = verifier or Verifier()
    for i, e in enumerate(events):
        violation = v.check(e, i)
        if violation is not None:
            return violation
    return v.finish()


def run_tolerant(events: list[Any]) -> list[tuple[int | None, str]]:
    """(position, code) of every violation; violating events are dropped."""
    v = Verifier()
    found = [(i, x.code) for i, e in enumerate(events) if (x := v.check(e, i)) is not None]
    end = v.finish()
    if end is not None:
        found.append((None, end.code))
    return found


# --- valid streams ---------------------------------------------------------------------------

VALID = {
    "triad": [rs(), tms("m1"), tmc("m1"), tme("m1"), rf()],
    "interleaved messages tool calls reasoning and steps": [
        rs(),
        ev("STEP_STARTED", stepName="a"),
        tms("m1"),
        tcs("c1"),
        ev("REASONING_START", messageId="r"),
        ev("REASONING_MESSAGE_START", messageId="r", role="reasoning"),
        tms("m2"),
        tmc("m1"),
        tca("c1"),
        tmc("m2"),
        ev("STEP_STARTED", stepName="b"),
        ev("REASONING_MESSAGE_CONTENT", messageId="r", delta="hm"),
        tme("m2"),
        ev("STEP_FINISHED", stepName="a"),
        tce("c1"),
        ev("REASONING_MESSAGE_END", messageId="r"),
        ev("REASONING_END", messageId="r"),
        tme("m1"),
        ev("STEP_FINISHED", stepName="b"),
        rf(),
    ],
    "reopen a closed message id": [
        rs(),
        tms("m1"),
        tme("m1"),
        tms("m1"),
        tmc("m1"),
        tme("m1"),
        rf(),
    ],
    "unchecked events anywhere inside a run": [
        rs(),
        tms("m1"),
        ev("RAW", event=None),
        ev("CUSTOM", name="c", value=None),
        ev("STATE_SNAPSHOT", snapshot=None),
        ev("STATE_DELTA", delta=[]),
        ev("MESSAGES_SNAPSHOT", messages=[]),
        ev("ACTIVITY_SNAPSHOT", messageId="a", activityType="x", content={}),
        ev("ACTIVITY_DELTA", messageId="a", activityType="x", patch=[]),
        ev("REASONING_ENCRYPTED_VALUE", subtype="message", entityId="nobody", encryptedValue="e"),
        tme("m1"),
        rf(),
    ],
    "tool call result for an unknown or closed call": [
        rs(),
        ev("TOOL_CALL_RESULT", messageId="t1", toolCallId="never", content="r"),
        tcs("c1"),
        tce("c1"),
        ev("TOOL_CALL_RESULT", messageId="t2", toolCallId="c1", content="r"),
        rf(),
    ],
    "two sequential runs reuse ids": [
        rs("r1"),
        tms("m1"),
        tme("m1"),
        rf("r1"),
        rs("r2"),
        tms("m1"),
        tme("m1"),
        rf("r2"),
    ],
    "run error as first event": [ev("RUN_ERROR", message="unreachable")],
    "late run error after run finished": [rs(), rf(), ev("RUN_ERROR", message="late")],
    "new run after run error": [
        rs("r1"),
        tms("m1"),
        ev("RUN_ERROR", message="x"),
        rs("r2"),
        tms("m1"),
        tme("m1"),
        rf("r2"),
    ],
    "span and message share an id": [
        rs(),
        ev("REASONING_START", messageId="x"),
        ev("REASONING_MESSAGE_START", messageId="x", role="reasoning"),
        ev("REASONING_MESSAGE_END", messageId="x"),
        ev("REASONING_END", messageId="x"),
        rf(),
    ],
    "steps finish in any order and per owner": [
        rs(),
        ev("STEP_STARTED", stepName="tools"),
        ev("STEP_STARTED", stepName="tools", subagentRunId="s1"),
        ev("STEP_FINISHED", stepName="tools"),
        ev("STEP_FINISHED", stepName="tools", subagentRunId="s1"),
        rf(),
    ],
    "subagent lifecycle with nesting": [
        rs(),
        ev("SUBAGENT_STARTED", subagentRunId="s1", name="a"),
        ev("SUBAGENT_STARTED", subagentRunId="s2", name="b", parentSubagentRunId="s1"),
        tms("m", subagentRunId="s2"),
        tmc("m"),
        tme("m", subagentRunId="s2"),
        ev("SUBAGENT_ERROR", subagentRunId="s2", message="x"),
        ev("SUBAGENT_FINISHED", subagentRunId="s1"),
        rf(),
    ],
    "unannounced attribution": [
        rs(),
        tms("m", subagentRunId="ghost"),
        tmc("m", subagentRunId="ghost"),
        tme("m"),
        rf(),
    ],
    "same tool call id and message id do not collide": [
        rs(),
        tms("x", subagentRunId="s1"),
        tcs("x", subagentRunId="s2"),
        tce("x", subagentRunId="s2"),
        tme("x", subagentRunId="s1"),
        rf(),
    ],
    "interrupt outcome with distinct ids": [
        rs(),
        rf(
            outcome={
                "type": "interrupt",
                "interrupts": [
                    {"id": "i1", "reason": "confirmation"},
                    {"id": "i2", "reason": "confirmation"},
                ],
            }
        ),
    ],
}


@pytest.mark.parametrize("name", list(VALID))
def test_valid_stream_has_no_violation(name):
    assert run_tolerant(VALID[name]) == []


# --- one stream per rule code ------------------------------------------------------------------
# (stream, position of the violating event or None for finish(), code, text in the message)

STARTED = [rs(), tms("m1")]
VIOLATIONS: dict[str, tuple[list[Any], int | None, str]] = {
    R.FIRST_EVENT_NOT_RUN_STARTED: ([tms("m1")], 0, "First event must be 'RUN_STARTED'"),
    R.EVENT_AFTER_RUN_FINISHED: (
        [rs(), rf(), tms("m1")],
        2,
        "The run has already finished with 'RUN_FINISHED'",
    ),
    R.EVENT_AFTER_RUN_ERROR: (
        [rs(), ev("RUN_ERROR", message="x"), ev("RUN_ERROR", message="y")],
        2,
        "The run has already errored with 'RUN_ERROR'",
    ),
    R.RUN_ALREADY_ACTIVE: (
        [rs("r1"), rs("r2")],
        1,
        "Cannot send 'RUN_STARTED' while a run is still active",
    ),
    R.RUN_STARTED_THREAD_MISMATCH: (
        [rs("r1", "t1"), rf("r1", "t1"), rs("r2", "t2")],
        2,
        "carries the input's threadId 't1'",
    ),
    R.RUN_FINISHED_RUN_ID_MISMATCH: ([rs("r1"), rf("r2")], 1, "must agree on their runId"),
    R.RUN_FINISHED_THREAD_MISMATCH: (
        [rs("r1", "t1"), rf("r1", "t9")],
        1,
        "carry the input's threadId 't1'",
    ),
    R.DUPLICATE_INTERRUPT_ID: (
        [
            rs(),
            rf(
                outcome={
                    "type": "interrupt",
                    "interrupts": [{"id": "i1", "reason": "a"}, {"id": "i1", "reason": "b"}],
                }
            ),
        ],
        1,
        "two interrupts carrying the id 'i1'",
    ),
    R.TRUNCATED_STREAM: ([rs(), tms("m1"), tme("m1")], None, "ended without a terminal event"),
    R.RUN_FINISHED_OPEN_STEP: (
        [rs(), ev("STEP_STARTED", stepName="s"), rf()],
        2,
        "while steps are still active: s",
    ),
    R.RUN_FINISHED_OPEN_TEXT_MESSAGE: (
        [*STARTED, rf()],
        2,
        "while text messages are still active: m1",
    ),
    R.RUN_FINISHED_OPEN_REASONING_MESSAGE: (
        [rs(), ev("REASONING_MESSAGE_START", messageId="r", role="reasoning"), rf()],
        2,
        "while reasoning messages are still active: r",
    ),
    R.RUN_FINISHED_OPEN_REASONING_SPAN: (
        [rs(), ev("REASONING_START", messageId="r"), rf()],
        2,
        "while reasoning spans are still active: r",
    ),
    R.RUN_FINISHED_OPEN_TOOL_CALL: (
        [rs(), tcs("c1"), rf()],
        2,
        "while tool calls are still active: c1",
    ),
    R.RUN_FINISHED_OPEN_SUBAGENT: (
        [rs(), ev("SUBAGENT_STARTED", subagentRunId="s1", name="n"), rf()],
        2,
        "while subagents are still active: s1",
    ),
    R.TEXT_MESSAGE_ALREADY_OPEN: (
        [*STARTED, tms("m1")],
        2,
        "A text message with ID 'm1' is already in progress",
    ),
    R.CONTENT_WITHOUT_START: ([rs(), tmc("m1")], 1, "No active text message found with ID 'm1'"),
    R.TEXT_MESSAGE_END_WITHOUT_START: (
        [rs(), tms("m1"), tme("m1"), tme("m1")],
        3,
        "No active text message found with ID 'm1'",
    ),
    R.TOOL_CALL_ALREADY_OPEN: (
        [rs(), tcs("c1"), tcs("c1")],
        2,
        "A tool call with ID 'c1' is already in progress",
    ),
    R.ARGS_WITHOUT_START: ([rs(), tca("c1")], 1, "No active tool call found with ID 'c1'"),
    R.TOOL_CALL_END_WITHOUT_START: ([rs(), tce("c1")], 1, "No active tool call found with ID 'c1'"),
    R.REASONING_MESSAGE_ALREADY_OPEN: (
        [
            rs(),
            ev("REASONING_MESSAGE_START", messageId="r", role="reasoning"),
            ev("REASONING_MESSAGE_START", messageId="r", role="reasoning"),
        ],
        2,
        "A reasoning message with ID 'r' is already in progress",
    ),
    R.REASONING_CONTENT_WITHOUT_START: (
        [rs(), ev("REASONING_MESSAGE_CONTENT", messageId="r", delta="x")],
        1,
        "No active reasoning message found with ID 'r'",
    ),
    R.REASONING_MESSAGE_END_WITHOUT_START: (
        [rs(), ev("REASONING_START", messageId="r"), ev("REASONING_MESSAGE_END", messageId="r")],
        2,
        "No active reasoning message found with ID 'r'",
    ),
    R.REASONING_SPAN_ALREADY_OPEN: (
        [rs(), ev("REASONING_START", messageId="r"), ev("REASONING_START", messageId="r")],
        2,
        "A reasoning span with ID 'r' is already in progress",
    ),
    R.REASONING_END_WITHOUT_START: (
        [
            rs(),
            ev("REASONING_MESSAGE_START", messageId="r", role="reasoning"),
            ev("REASONING_END", messageId="r"),
        ],
        2,
        "No active reasoning span found with ID 'r'",
    ),
    R.STEP_ALREADY_ACTIVE: (
        [rs(), ev("STEP_STARTED", stepName="s"), ev("STEP_STARTED", stepName="s")],
        2,
        'Step "s" is already active',
    ),
    R.STEP_NOT_STARTED: (
        [rs(), ev("STEP_FINISHED", stepName="s")],
        1,
        'step "s" that was not started',
    ),
    R.STEP_OWNER_MISMATCH: (
        [
            rs(),
            ev("STEP_STARTED", stepName="s"),
            ev("STEP_FINISHED", stepName="s", subagentRunId="s1"),
        ],
        2,
        "that step is open under the parent agent",
    ),
    R.SUBAGENT_ALREADY_ACTIVE: (
        [
            rs(),
            ev("SUBAGENT_STARTED", subagentRunId="s1", name="n"),
            ev("SUBAGENT_STARTED", subagentRunId="s1", name="n"),
        ],
        2,
        "subagent 's1' is already active",
    ),
    R.SUBAGENT_ID_REUSED: (
        [
            rs(),
            ev("SUBAGENT_STARTED", subagentRunId="s1", name="n"),
            ev("SUBAGENT_FINISHED", subagentRunId="s1"),
            ev("SUBAGENT_STARTED", subagentRunId="s1", name="n"),
        ],
        3,
        "subagent 's1' has already finished in this run",
    ),
    R.SUBAGENT_PARENT_NOT_STARTED: (
        [rs(), ev("SUBAGENT_STARTED", subagentRunId="s2", name="n", parentSubagentRunId="s1")],
        1,
        "parentSubagentRunId 's1' has not been started",
    ),
    R.SUBAGENT_NOT_ACTIVE: (
        [rs(), ev("SUBAGENT_FINISHED", subagentRunId="s1")],
        1,
        "no active subagent found with ID 's1'",
    ),
    R.SUBAGENT_ATTRIBUTION_MISMATCH: (
        [rs(), tcs("c1", subagentRunId="s1"), tca("c1"), tce("c1", subagentRunId="s2")],
        3,
        ("subagentRunId 's2' does not match the tool call 'c1' opener's subagent 's1'"),
    ),
}


def test_every_verifier_rule_code_has_a_violating_stream():
    assert set(VIOLATIONS) == R.VERIFIER_RULES


def test_rule_codes_are_stable_snake_case_with_a_one_line_doc():
    assert R.NORMALIZER_RULES.isdisjoint(R.VERIFIER_RULES)
    assert set(RULES) == R.NORMALIZER_RULES | R.VERIFIER_RULES
    for code, doc in RULES.items():
        assert code.isidentifier() and code == code.lower()
        assert doc and "\n" not in doc
        assert getattr(R, code.upper()) == code


@pytest.mark.parametrize("code", sorted(VIOLATIONS))
def test_violation_carries_code_event_position_id_and_a_message_naming_them(code):
    events, position, text = VIOLATIONS[code]
    violation = run_strict(events)
    assert violation is not None
    assert violation.code == code
    assert violation.position == position
    assert text in violation.message
    if position is None:
        assert violation.event is None
    else:
        assert violation.event is events[position]
        assert T.event_type(events[position]) in violation.message
        if violation.id is None:
            assert T.event_type(events[position]) == "RUN_ERROR"  # the one event without an id
        else:
            assert violation.id in violation.message


@pytest.mark.parametrize(
    "code",
    # truncation is reported by finish(), with no event to feed again
    sorted(code for code, (_, position, _) in VIOLATIONS.items() if position is not None),
)
def test_rejected_event_does_not_advance_state(code):
    """Feeding the violating event a second time gives the same violation again."""
    events, position, _ = VIOLATIONS[code]
    v = Verifier()
    for i, e in enumerate(events[:position]):
        assert v.check(e, i) is None
    first = v.check(events[position], position)
    again = v.check(events[position], position)
    assert first is not None and again is not None
    assert (first.code, first.message) == (again.code, again.message)


# --- state not advanced / tolerant continuation -------------------------------------------------


def test_run_finished_rejected_for_an_open_message_leaves_the_run_open():
    v = Verifier()
    for i, e in enumerate([rs(), tms("m1")]):
        assert v.check(e, i) is None
    assert v.check(rf(), 2).code == R.RUN_FINISHED_OPEN_TEXT_MESSAGE
    assert v.run_open
    assert v.check(tme("m1"), 3) is None
    assert v.check(rf(), 4) is None
    assert not v.run_open
    assert v.finish() is None


def test_tolerant_mode_drops_each_bad_event_and_goes_on():
    events = [
        tmc("early"),
        rs(),
        tmc("m1"),
        tms("m1"),
        tms("m1"),
        tmc("m1"),
        tme("m1"),
        tme("m1"),
        rf(),
    ]
    assert run_tolerant(events) == [
        (0, R.FIRST_EVENT_NOT_RUN_STARTED),
        (2, R.CONTENT_WITHOUT_START),
        (4, R.TEXT_MESSAGE_ALREADY_OPEN),
        (7, R.TEXT_MESSAGE_END_WITHOUT_START),
    ]


def test_rejected_first_event_keeps_the_stream_waiting_for_run_started():
    assert run_tolerant([tms("m1"), tme("m1"), rs(), rf()]) == [
        (0, R.FIRST_EVENT_NOT_RUN_STARTED),
        (1, R.FIRST_EVENT_NOT_RUN_STARTED),
    ]


def test_run_finished_checks_steps_first_then_messages_reasoning_tools_subagents():
    events = [
        rs(),
        ev("SUBAGENT_STARTED", subagentRunId="s1", name="n"),
        tcs("c"),
        ev("REASONING_START", messageId="rs"),
        ev("REASONING_MESSAGE_START", messageId="rm", role="reasoning"),
        tms("m"),
        ev("STEP_STARTED", stepName="st", subagentRunId="s1"),
    ]
    v = Verifier()
    for i, e in enumerate(events):
        assert v.check(e, i) is None
    closers = [
        ev("STEP_FINISHED", stepName="st", subagentRunId="s1"),
        tme("m"),
        ev("REASONING_MESSAGE_END", messageId="rm"),
        ev("REASONING_END", messageId="rs"),
        tce("c"),
        ev("SUBAGENT_FINISHED", subagentRunId="s1"),
    ]
    expected = [
        R.RUN_FINISHED_OPEN_STEP,
        R.RUN_FINISHED_OPEN_TEXT_MESSAGE,
        R.RUN_FINISHED_OPEN_REASONING_MESSAGE,
        R.RUN_FINISHED_OPEN_REASONING_SPAN,
        R.RUN_FINISHED_OPEN_TOOL_CALL,
        R.RUN_FINISHED_OPEN_SUBAGENT,
    ]
    for closer, code in zip(closers, expected, strict=True):
        violation = v.check(rf(), 99)
        assert violation.code == code
        assert v.check(closer, 100) is None
    assert v.check(rf(), 101) is None


def test_open_step_of_a_subagent_is_labelled_with_its_owner():
    violation = run_strict([rs(), ev("STEP_STARTED", stepName="tools", subagentRunId="s1"), rf()])
    assert "tools (subagent 's1')" in violation.message


def test_run_error_abandons_everything_open():
    assert (
        run_tolerant(
            [
                rs(),
                tms("m"),
                tcs("c"),
                ev("STEP_STARTED", stepName="s"),
                ev("RUN_ERROR", message="boom"),
            ]
        )
        == []
    )


def test_new_run_resets_open_items_and_owners():
    assert (
        run_tolerant(
            [
                rs("r1"),
                tms("m", subagentRunId="s1"),
                ev("RUN_ERROR", message="x"),
                rs("r2"),
                tms("m", subagentRunId="s2"),
                tme("m"),
                rf("r2"),
            ]
        )
        == []
    )


# --- properties -----------------------------------------------------------------------------------


def test_run_properties_follow_the_lifecycle():
    v = Verifier()
    assert (v.run_open, v.run_id, v.thread_id) == (False, None, None)
    v.check(rs("r1", "t1"), 0)
    assert (v.run_open, v.run_id, v.thread_id) == (True, "r1", "t1")
    v.check(rf("r1", "t1"), 1)
    assert (v.run_open, v.run_id, v.thread_id) == (False, "r1", "t1")
    v.check(rs("r2", "t1"), 2)
    assert (v.run_open, v.run_id) == (True, "r2")
    v.check(ev("RUN_ERROR", message="x"), 3)
    assert v.run_open is False


def test_thread_id_given_to_the_constructor_is_the_streams_thread():
    v = Verifier(thread_id="t-input")
    violation = v.check(rs("r1", "t-other"), 0)
    assert violation.code == R.RUN_STARTED_THREAD_MISMATCH
    assert v.check(rs("r1", "t-input"), 1) is None


# --- finish() ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        ([], R.TRUNCATED_STREAM),
        ([rs()], R.TRUNCATED_STREAM),
        ([rs(), tms("m")], R.TRUNCATED_STREAM),
        ([rs(), rf(), rs("r2")], R.TRUNCATED_STREAM),
        ([rs(), rf()], None),
        ([rs(), ev("RUN_ERROR", message="x")], None),
        ([ev("RUN_ERROR", message="x")], None),
        ([rs(), rf(), ev("RUN_ERROR", message="late")], None),
    ],
)
def test_finish_reports_a_stream_without_terminal_event(events, expected):
    v = Verifier()
    for i, e in enumerate(events):
        assert v.check(e, i) is None
    result = v.finish()
    assert (result.code if result else None) == expected
    if result is not None:
        assert result.event is None and result.position is None


def test_empty_stream_is_truncated_and_says_it_never_started():
    violation = Verifier().finish()
    assert violation.code == R.TRUNCATED_STREAM
    assert "never emitted 'RUN_STARTED'" in violation.message


# --- subagent attribution -----------------------------------------------------------------------------


def test_untagged_continuation_always_passes_tagged_one_must_match_parent_owner():
    assert run_tolerant(
        [rs(), tms("m"), tmc("m"), tmc("m", subagentRunId="s1"), tme("m"), rf()]
    ) == [(3, R.SUBAGENT_ATTRIBUTION_MISMATCH)]


def test_owner_outlives_end_so_a_reopen_by_another_subagent_is_rejected():
    assert run_tolerant(
        [
            rs(),
            tms("m", subagentRunId="s1"),
            tme("m"),
            tms("m", subagentRunId="s2"),
            tms("m"),
            tme("m"),
            rf(),
        ]
    ) == [(3, R.SUBAGENT_ATTRIBUTION_MISMATCH)]


def test_tool_call_start_tag_must_match_its_parent_messages_owner():
    violation = run_strict(
        [
            rs(),
            tms("m", subagentRunId="s1"),
            tme("m"),
            tcs("c", parentMessageId="m", subagentRunId="s2"),
        ]
    )
    assert violation.code == R.SUBAGENT_ATTRIBUTION_MISMATCH
    assert "parent message 'm'" in violation.message


def test_untagged_tool_call_inherits_the_parent_messages_owner():
    assert run_tolerant(
        [
            rs(),
            tms("m", subagentRunId="s1"),
            tme("m"),
            tcs("c", parentMessageId="m"),
            tca("c", subagentRunId="s2"),
            tce("c"),
            rf(),
        ]
    ) == [(4, R.SUBAGENT_ATTRIBUTION_MISMATCH)]


def test_messages_snapshot_seeds_owners_authoritatively():
    snapshot = ev(
        "MESSAGES_SNAPSHOT",
        messages=[
            {
                "id": "m",
                "role": "assistant",
                "content": "",
                "subagentRunId": "s1",
                "toolCalls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"id": "r", "role": "reasoning", "content": "", "subagentRunId": "s1"},
        ],
    )
    assert run_tolerant(
        [
            rs(),
            tms("m", subagentRunId="s9"),
            tme("m"),
            snapshot,
            tms("m", subagentRunId="s2"),
            tcs("c", subagentRunId="s2"),
            ev("REASONING_START", messageId="r", subagentRunId="s2"),
            tms("m", subagentRunId="s1"),
            tme("m"),
            rf(),
        ]
    ) == [
        (4, R.SUBAGENT_ATTRIBUTION_MISMATCH),
        (5, R.SUBAGENT_ATTRIBUTION_MISMATCH),
        (6, R.SUBAGENT_ATTRIBUTION_MISMATCH),
    ]


def test_run_started_input_messages_seed_owners():
    started = rs(
        input={
            "threadId": "t1",
            "runId": "r1",
            "messages": [{"id": "m", "role": "assistant", "content": "hi", "subagentRunId": "s1"}],
        }
    )
    assert run_tolerant([started, tms("m", subagentRunId="s2"), rf()]) == [
        (1, R.SUBAGENT_ATTRIBUTION_MISMATCH)
    ]


def test_tool_call_result_records_the_minted_messages_owner():
    assert run_tolerant(
        [
            rs(),
            ev("TOOL_CALL_RESULT", messageId="t", toolCallId="c", content="x", subagentRunId="s1"),
            tms("t", subagentRunId="s2"),
            rf(),
        ]
    ) == [(2, R.SUBAGENT_ATTRIBUTION_MISMATCH)]


def test_encrypted_value_checks_the_owner_of_its_subtypes_entity():
    assert run_tolerant(
        [
            rs(),
            tcs("c", subagentRunId="s1"),
            tce("c"),
            ev(
                "REASONING_ENCRYPTED_VALUE",
                subtype="tool-call",
                entityId="c",
                encryptedValue="e",
                subagentRunId="s2",
            ),
            ev("REASONING_MESSAGE_START", messageId="r", role="reasoning", subagentRunId="s1"),
            ev(
                "REASONING_ENCRYPTED_VALUE",
                subtype="message",
                entityId="r",
                encryptedValue="e",
                subagentRunId="s2",
            ),
            ev(
                "REASONING_ENCRYPTED_VALUE",
                subtype="message",
                entityId="r",
                encryptedValue="e",
                subagentRunId="s1",
            ),
            ev("REASONING_MESSAGE_END", messageId="r"),
            rf(),
        ]
    ) == [(3, R.SUBAGENT_ATTRIBUTION_MISMATCH), (5, R.SUBAGENT_ATTRIBUTION_MISMATCH)]


def test_activity_snapshot_reowns_only_when_new_or_replacing():
    def snap(tag: str, replace: bool | None = None) -> Any:
        extra = {} if replace is None else {"replace": replace}
        return ev(
            "ACTIVITY_SNAPSHOT",
            messageId="a",
            activityType="x",
            content={},
            subagentRunId=tag,
            **extra,
        )

    def delta(tag: str) -> Any:
        return ev("ACTIVITY_DELTA", messageId="a", activityType="x", patch=[], subagentRunId=tag)

    assert run_tolerant(
        [
            rs(),
            snap("s1"),
            snap("s2", replace=False),
            delta("s2"),
            delta("s1"),
            snap("s2"),
            delta("s2"),
            rf(),
        ]
    ) == [(3, R.SUBAGENT_ATTRIBUTION_MISMATCH)]


# --- deliberate differences from the reference client (spec wins) ------------------------------------


def test_truncated_stream_fails_although_the_reference_client_reports_completed():
    """Spec (draft basic/transports#truncation): a truncated run MUST NOT be reported as a
    success. @ag-ui/client 1.0.0 completes it (upstream fixture
    truncated-run-reported-as-completed pins that admitted gap)."""
    violation = run_strict([rs(), tms("m"), tmc("m"), tme("m")])
    assert violation.code == R.TRUNCATED_STREAM


def test_run_finished_for_another_run_id_is_rejected_unlike_the_reference_client():
    """Spec (draft basic/run-input): RUN_STARTED and RUN_FINISHED agree on their runId."""
    assert run_strict([rs("a"), rf("b")]).code == R.RUN_FINISHED_RUN_ID_MISMATCH


def test_run_finished_on_another_thread_is_rejected_unlike_the_reference_client():
    assert run_strict([rs("a", "t"), rf("a", "u")]).code == R.RUN_FINISHED_THREAD_MISMATCH


def test_second_run_on_another_thread_is_rejected_unlike_the_reference_client():
    assert run_strict([rs("a", "t"), rf("a", "t"), rs("b", "u")]).code == (
        R.RUN_STARTED_THREAD_MISMATCH
    )


def test_duplicate_interrupt_ids_are_rejected_unlike_the_reference_client():
    """Spec (draft basic/patterns/interrupt-resume): a resume entry answers an interrupt by id,
    so two interrupts with one id would let one answer cover both."""
    violation = run_strict(
        [
            rs(),
            rf(
                outcome={
                    "type": "interrupt",
                    "interrupts": [{"id": "i", "reason": "x"}, {"id": "i", "reason": "y"}],
                }
            ),
        ]
    )
    assert (violation.code, violation.id) == (R.DUPLICATE_INTERRUPT_ID, "i")


def test_chunk_events_reaching_the_verifier_are_not_checked():
    assert run_tolerant([rs(), ev("TEXT_MESSAGE_CHUNK", delta="x"), rf()]) == []


def test_verify_rules_re_exports_the_codes_of_agui_rules():
    """The codes live in agui._rules (below normalizer and verifier); the old path stays."""
    import agui._rules

    assert R.RULES is agui._rules.RULES
    assert R.__all__ == agui._rules.__all__
    assert all(getattr(R, name) is getattr(agui._rules, name) for name in agui._rules.__all__)


def test_checks_is_the_table_of_the_current_state_and_agrees_with_check():
    v = Verifier()
    content = ev("TEXT_MESSAGE_CONTENT", messageId="m1", delta="x")

    def via_table(event: Any) -> ProtocolViolation | None:
        check = v.checks.get(type(event))
        return check(event, 0) if check is not None else v.check(event, 0)

    assert type(content) not in v.checks  # between runs: only the openers
    refused = via_table(content)
    assert refused is not None and refused.code == R.FIRST_EVENT_NOT_RUN_STARTED
    assert via_table(rs()) is None
    assert via_table(tms("m1")) is None
    assert via_table(content) is None  # in a run: the item checks
    assert via_table(ev("TEXT_MESSAGE_CONTENT", messageId="m2", delta="x")).code == (
        R.CONTENT_WITHOUT_START
    )
    assert via_table(ev("TEXT_MESSAGE_END", messageId="m1")) is None
    assert via_table(rf()) is None
    late = via_table(content)  # after RUN_FINISHED: between runs again
    assert late is not None and late.code == R.EVENT_AFTER_RUN_FINISHED
    assert v.check(content, 0).code == R.EVENT_AFTER_RUN_FINISHED
