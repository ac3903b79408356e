"""Chunk normalizer: *_CHUNK -> START/CONTENT/END (spec streaming pattern, rules digest §3)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from agui import _rules as R
from agui import types as T
from agui.pipeline._normalize import Normalizer, NormalizeResult

UNSET = msgspec.UNSET


def ev(type_: str, **fields: Any) -> Any:
    """An event struct from wire-style (camelCase) fields."""
    return msgspec.convert({"type": type_, **fields}, T.Event)


def wire(event: Any) -> dict[str, Any]:
    """The event as plain wire JSON (type included)."""
    return msgspec.json.decode(msgspec.json.encode(event))


def feed_all(events: list[Any], normalizer: Normalizer | None = None) -> list[dict[str, Any]]:
    """Normalize a stream that must not violate; return the output as wire dicts."""
    n = normalizer or Normalizer()
    out: list[dict[str, Any]] = []
    for e in events:
        res = n.feed(e)
        assert not res.violations, res.violations
        out.extend(wire(x) for x in res.events)
    return out


def types_of(out: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in out]


RUN_STARTED = ev("RUN_STARTED", threadId="t1", runId="r1")
RUN_FINISHED = ev("RUN_FINISHED", threadId="t1", runId="r1")


# --- expansion ---------------------------------------------------------------------------


def test_single_text_chunk_expands_to_start_content_and_run_finished_closes_it():
    out = feed_all(
        [RUN_STARTED, ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="hi"), RUN_FINISHED]
    )
    assert out == [
        {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "hi"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"},
    ]


def test_idless_continuation_appends_to_the_open_message():
    out = feed_all(
        [
            ev("TEXT_MESSAGE_CHUNK", messageId="m1", role="user", delta="a"),
            ev("TEXT_MESSAGE_CHUNK", delta="b"),
            ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="c"),
        ]
    )
    assert out == [
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "user"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "a"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "b"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "c"},
    ]


@pytest.mark.parametrize("role", ["developer", "system", "assistant", "user"])
def test_role_of_the_opening_chunk_is_kept(role):
    out = feed_all([ev("TEXT_MESSAGE_CHUNK", messageId="m1", role=role, delta="x")])
    assert out[0] == {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": role}


def test_name_of_the_opening_chunk_is_carried_on_start():
    out = feed_all([ev("TEXT_MESSAGE_CHUNK", messageId="m1", name="bot", delta="x")])
    assert out[0] == {
        "type": "TEXT_MESSAGE_START",
        "messageId": "m1",
        "role": "assistant",
        "name": "bot",
    }


def test_a_different_id_closes_the_open_message_and_opens_a_new_one():
    out = feed_all(
        [
            ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="a"),
            ev("TEXT_MESSAGE_CHUNK", messageId="m2", delta="b"),
        ]
    )
    assert [(e["type"], e["messageId"]) for e in out] == [
        ("TEXT_MESSAGE_START", "m1"),
        ("TEXT_MESSAGE_CONTENT", "m1"),
        ("TEXT_MESSAGE_END", "m1"),
        ("TEXT_MESSAGE_START", "m2"),
        ("TEXT_MESSAGE_CONTENT", "m2"),
    ]


def test_tool_call_chunks_expand_with_name_and_parent_message_id():
    out = feed_all(
        [
            ev(
                "TOOL_CALL_CHUNK",
                toolCallId="c1",
                toolCallName="search",
                parentMessageId="m0",
                delta='{"q":',
            ),
            ev("TOOL_CALL_CHUNK", delta='"x"}'),
            RUN_FINISHED,
        ]
    )
    assert out[:4] == [
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "c1",
            "toolCallName": "search",
            "parentMessageId": "m0",
        },
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"q":'},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '"x"}'},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
    ]


def test_reasoning_chunks_expand_with_role_reasoning():
    out = feed_all(
        [
            ev("REASONING_MESSAGE_CHUNK", messageId="r1", delta="hm"),
            ev("REASONING_MESSAGE_CHUNK", delta="m"),
            RUN_FINISHED,
        ]
    )
    assert out[:4] == [
        {"type": "REASONING_MESSAGE_START", "messageId": "r1", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r1", "delta": "hm"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r1", "delta": "m"},
        {"type": "REASONING_MESSAGE_END", "messageId": "r1"},
    ]


def test_switching_kind_closes_the_previous_item_first():
    out = feed_all(
        [
            ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="a"),
            ev("TOOL_CALL_CHUNK", toolCallId="c1", toolCallName="f", delta="{}"),
            ev("REASONING_MESSAGE_CHUNK", messageId="r1", delta="z"),
        ]
    )
    assert types_of(out) == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
    ]


def test_interleaved_chunk_ids_reopen_items_each_time():
    out = feed_all(
        [
            ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="a"),
            ev("TOOL_CALL_CHUNK", toolCallId="t1", toolCallName="f", delta="{"),
            ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="b"),
            ev("TOOL_CALL_CHUNK", toolCallId="t1", toolCallName="f", delta="}"),
            RUN_FINISHED,
        ]
    )
    kinds = types_of(out)
    assert kinds.count("TEXT_MESSAGE_START") == 2
    assert kinds.count("TEXT_MESSAGE_END") == 2
    assert kinds.count("TOOL_CALL_START") == 2
    assert kinds.count("TOOL_CALL_END") == 2
    assert kinds[-1] == "RUN_FINISHED"


def test_empty_delta_is_content_not_a_close():
    out = feed_all(
        [ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta=""), ev("TEXT_MESSAGE_CHUNK", delta="x")]
    )
    assert out == [
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": ""},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "x"},
    ]


def test_chunk_without_delta_opens_with_start_only_and_bare_continuation_emits_nothing():
    n = Normalizer()
    assert types_of(feed_all([ev("TEXT_MESSAGE_CHUNK", messageId="m1")], n)) == [
        "TEXT_MESSAGE_START"
    ]
    res = n.feed(ev("TEXT_MESSAGE_CHUNK"))
    assert res.events == [] and not res.violations
    assert n.open_streams == {None: ("text", "m1")}


# --- metadata, rawEvent, timestamp ------------------------------------------------------


def test_metadata_rides_on_start_and_content_but_not_on_the_closing_end():
    out = feed_all(
        [
            ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="a", metadata={"k": 1}),
            ev("TEXT_MESSAGE_CHUNK", messageId="m2", delta="b", metadata={"k": 2}),
        ]
    )
    assert out == [
        {
            "type": "TEXT_MESSAGE_START",
            "messageId": "m1",
            "role": "assistant",
            "metadata": {"k": 1},
        },
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "a", "metadata": {"k": 1}},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {
            "type": "TEXT_MESSAGE_START",
            "messageId": "m2",
            "role": "assistant",
            "metadata": {"k": 2},
        },
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m2", "delta": "b", "metadata": {"k": 2}},
    ]


@pytest.mark.parametrize(
    ("chunk_type", "id_field", "content_type"),
    [
        ("TEXT_MESSAGE_CHUNK", "messageId", "TEXT_MESSAGE_CONTENT"),
        ("TOOL_CALL_CHUNK", "toolCallId", "TOOL_CALL_ARGS"),
        ("REASONING_MESSAGE_CHUNK", "messageId", "REASONING_MESSAGE_CONTENT"),
    ],
)
def test_metadata_only_continuation_yields_a_zero_length_content(
    chunk_type, id_field, content_type
):
    opener = {id_field: "x1", "delta": "a"}
    if chunk_type == "TOOL_CALL_CHUNK":
        opener["toolCallName"] = "f"
    out = feed_all([ev(chunk_type, **opener), ev(chunk_type, metadata={"usage": 3})])
    assert out[-1] == {"type": content_type, id_field: "x1", "delta": "", "metadata": {"usage": 3}}


def test_raw_event_rides_on_content_never_on_start():
    out = feed_all([ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="a", rawEvent={"p": 1})])
    assert out == [
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "a", "rawEvent": {"p": 1}},
    ]


def test_raw_event_only_chunk_still_emits_a_content_carrying_it():
    out = feed_all(
        [ev("TEXT_MESSAGE_CHUNK", messageId="m1"), ev("TEXT_MESSAGE_CHUNK", rawEvent=[1, 2])]
    )
    assert out[-1] == {
        "type": "TEXT_MESSAGE_CONTENT",
        "messageId": "m1",
        "delta": "",
        "rawEvent": [1, 2],
    }


def test_chunk_timestamp_rides_on_the_events_made_from_it():
    out = feed_all(
        [
            ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="a", timestamp=42),
            ev("RUN_FINISHED", threadId="t", runId="r", timestamp=43),
        ]
    )
    assert [e.get("timestamp") for e in out] == [42, 42, None, 43]


def test_input_chunk_is_never_mutated():
    chunk = ev(
        "TEXT_MESSAGE_CHUNK", messageId="m1", delta="a", metadata={"k": [1]}, rawEvent={"r": 1}
    )
    before = wire(chunk)
    res = Normalizer().feed(chunk)
    assert wire(chunk) == before
    assert all(e is not chunk for e in res.events)


def test_non_chunk_events_pass_through_as_the_same_object():
    n = Normalizer()
    for e in [
        RUN_STARTED,
        ev("TEXT_MESSAGE_START", messageId="m"),
        ev("CUSTOM", name="c", value=None),
    ]:
        res = n.feed(e)
        assert isinstance(res, NormalizeResult)
        assert res.events == [e] and res.events[0] is e
        assert res.violations == ()


# --- closing rules -------------------------------------------------------------------------

CLOSING_OWN_LANE = [
    ev("TEXT_MESSAGE_START", messageId="o"),
    ev("TEXT_MESSAGE_CONTENT", messageId="o", delta="x"),
    ev("TEXT_MESSAGE_END", messageId="o"),
    ev("TOOL_CALL_START", toolCallId="o", toolCallName="f"),
    ev("TOOL_CALL_ARGS", toolCallId="o", delta="x"),
    ev("TOOL_CALL_END", toolCallId="o"),
    ev("TOOL_CALL_RESULT", messageId="o", toolCallId="c", content="r"),
    ev("STATE_SNAPSHOT", snapshot={}),
    ev("STATE_DELTA", delta=[]),
    ev("CUSTOM", name="c", value=1),
    ev("STEP_STARTED", stepName="s"),
    ev("STEP_FINISHED", stepName="s"),
    ev("REASONING_START", messageId="o"),
    ev("REASONING_MESSAGE_START", messageId="o", role="reasoning"),
    ev("REASONING_MESSAGE_CONTENT", messageId="o", delta="x"),
    ev("REASONING_MESSAGE_END", messageId="o"),
    ev("REASONING_END", messageId="o"),
]
CLOSING_ALL_LANES = [
    ev("RUN_STARTED", threadId="t", runId="r"),
    ev("RUN_FINISHED", threadId="t", runId="r"),
    ev("RUN_ERROR", message="boom"),
    ev("MESSAGES_SNAPSHOT", messages=[]),
]
NOT_CLOSING = [
    ev("RAW", event={"x": 1}),
    ev("ACTIVITY_SNAPSHOT", messageId="a", activityType="t", content={}),
    ev("ACTIVITY_DELTA", messageId="a", activityType="t", patch=[]),
    ev("REASONING_ENCRYPTED_VALUE", subtype="message", entityId="m1", encryptedValue="e"),
    ev("SUBAGENT_STARTED", subagentRunId="s9", name="n"),
]


@pytest.mark.parametrize(
    "closer", CLOSING_OWN_LANE + CLOSING_ALL_LANES, ids=lambda e: T.event_type(e)
)
def test_closing_event_emits_the_pending_end_first(closer):
    out = feed_all([ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="a"), closer])
    assert types_of(out)[-2:] == ["TEXT_MESSAGE_END", T.event_type(closer)]
    assert out[-2] == {"type": "TEXT_MESSAGE_END", "messageId": "m1"}


@pytest.mark.parametrize("passer", NOT_CLOSING, ids=lambda e: T.event_type(e))
def test_raw_activity_encrypted_value_and_subagent_started_do_not_close(passer):
    out = feed_all(
        [
            ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="a"),
            passer,
            ev("TEXT_MESSAGE_CHUNK", delta="b"),
        ]
    )
    assert types_of(out) == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        T.event_type(passer),
        "TEXT_MESSAGE_CONTENT",
    ]


def test_custom_closes_the_stream_so_a_following_idless_chunk_is_a_violation():
    n = Normalizer()
    feed_all(
        [ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="a"), ev("CUSTOM", name="c", value=1)], n
    )
    res = n.feed(ev("TEXT_MESSAGE_CHUNK", delta="b"), 7)
    assert res.events == []
    [v] = res.violations
    assert v.code == R.CHUNK_MISSING_ID
    assert "First TEXT_MESSAGE_CHUNK must have a messageId" in v.message
    assert v.position == 7


def test_stream_end_emits_no_end_for_an_open_chunk_stream():
    n = Normalizer()
    out = feed_all([ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="a")], n)
    assert types_of(out) == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]
    assert n.open_streams == {None: ("text", "m1")}


# --- violations ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chunk", "code", "text"),
    [
        (
            ev("TEXT_MESSAGE_CHUNK", delta="x"),
            R.CHUNK_MISSING_ID,
            "First TEXT_MESSAGE_CHUNK must have a messageId",
        ),
        (
            ev("TOOL_CALL_CHUNK", toolCallName="f", delta="x"),
            R.CHUNK_MISSING_ID,
            "First TOOL_CALL_CHUNK must have a toolCallId",
        ),
        (
            ev("TOOL_CALL_CHUNK", toolCallId="c1", delta="x"),
            R.CHUNK_MISSING_TOOL_CALL_NAME,
            "First TOOL_CALL_CHUNK must have a toolCallName",
        ),
        (
            ev("REASONING_MESSAGE_CHUNK", delta="x"),
            R.CHUNK_MISSING_ID,
            "First REASONING_MESSAGE_CHUNK must have a messageId",
        ),
    ],
)
def test_first_chunk_must_carry_its_id_and_tool_name(chunk, code, text):
    res = Normalizer().feed(chunk, 3)
    assert res.events == []
    [v] = res.violations
    assert (v.code, v.position, v.event) == (code, 3, chunk)
    assert text in v.message


@pytest.mark.parametrize(
    ("opener", "continuation", "code", "field"),
    [
        (
            ev("TEXT_MESSAGE_CHUNK", messageId="x1", role="user"),
            ev("TEXT_MESSAGE_CHUNK", role="assistant"),
            R.CHUNK_CONFLICTING_ROLE,
            "role",
        ),
        (
            ev("TEXT_MESSAGE_CHUNK", messageId="x1"),
            ev("TEXT_MESSAGE_CHUNK", messageId="x1", role="user"),
            R.CHUNK_CONFLICTING_ROLE,
            "role",
        ),
        (
            ev("TEXT_MESSAGE_CHUNK", messageId="x1", name="a"),
            ev("TEXT_MESSAGE_CHUNK", name="b"),
            R.CHUNK_CONFLICTING_NAME,
            "name",
        ),
        (
            ev("TEXT_MESSAGE_CHUNK", messageId="x1"),
            ev("TEXT_MESSAGE_CHUNK", name="b"),
            R.CHUNK_CONFLICTING_NAME,
            "name",
        ),
        (
            ev("TOOL_CALL_CHUNK", toolCallId="x1", toolCallName="search"),
            ev("TOOL_CALL_CHUNK", toolCallId="x1", toolCallName="delete"),
            R.CHUNK_CONFLICTING_TOOL_CALL_NAME,
            "toolCallName",
        ),
        (
            ev("TOOL_CALL_CHUNK", toolCallId="x1", toolCallName="f", parentMessageId="p1"),
            ev("TOOL_CALL_CHUNK", parentMessageId="p2"),
            R.CHUNK_CONFLICTING_PARENT_MESSAGE_ID,
            "parentMessageId",
        ),
        (
            ev("TOOL_CALL_CHUNK", toolCallId="x1", toolCallName="f"),
            ev("TOOL_CALL_CHUNK", parentMessageId="p2"),
            R.CHUNK_CONFLICTING_PARENT_MESSAGE_ID,
            "parentMessageId",
        ),
    ],
)
def test_continuation_repeating_a_field_with_another_value_is_a_violation(
    opener, continuation, code, field
):
    n = Normalizer()
    n.feed(opener)
    res = n.feed(continuation, 5)
    assert res.events == []
    [v] = res.violations
    assert (v.code, v.id, v.position, v.event) == (code, "x1", 5, continuation)
    assert f"does not match the open stream's {field}" in v.message
    assert n.open_streams[None][1] == "x1"


def test_continuation_repeating_identical_fields_is_accepted():
    out = feed_all(
        [
            ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="a"),
            ev("TEXT_MESSAGE_CHUNK", messageId="m1", role="assistant", delta="b"),
            ev(
                "TOOL_CALL_CHUNK",
                toolCallId="c1",
                toolCallName="s",
                parentMessageId="m1",
                delta="{",
            ),
            ev(
                "TOOL_CALL_CHUNK",
                toolCallId="c1",
                toolCallName="s",
                parentMessageId="m1",
                delta="}",
            ),
        ]
    )
    assert types_of(out) == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_ARGS",
    ]


def test_violating_chunk_leaves_the_open_stream_untouched():
    n = Normalizer()
    feed_all([ev("TOOL_CALL_CHUNK", toolCallId="c1", toolCallName="f", delta="{")], n)
    bad = n.feed(ev("TEXT_MESSAGE_CHUNK", delta="no id"))
    assert bad.events == [] and bad.violations[0].code == R.CHUNK_MISSING_ID
    assert n.open_streams == {None: ("tool", "c1")}
    out = feed_all([ev("TOOL_CALL_CHUNK", delta="}")], n)
    assert out == [{"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "}"}]


# --- lanes (subagentRunId) ------------------------------------------------------------------


def test_two_subagents_stream_chunks_concurrently_in_their_own_lanes():
    out = feed_all(
        [
            ev("TEXT_MESSAGE_CHUNK", messageId="a1", delta="A", subagentRunId="s1"),
            ev("TEXT_MESSAGE_CHUNK", messageId="b1", delta="B", subagentRunId="s2"),
            ev("TEXT_MESSAGE_CHUNK", delta="A2", subagentRunId="s1"),
            ev("TEXT_MESSAGE_CHUNK", delta="B2", subagentRunId="s2"),
            ev("SUBAGENT_FINISHED", subagentRunId="s1"),
            RUN_FINISHED,
        ]
    )
    assert [(e["type"], e.get("messageId"), e.get("subagentRunId")) for e in out] == [
        ("TEXT_MESSAGE_START", "a1", "s1"),
        ("TEXT_MESSAGE_CONTENT", "a1", "s1"),
        ("TEXT_MESSAGE_START", "b1", "s2"),
        ("TEXT_MESSAGE_CONTENT", "b1", "s2"),
        ("TEXT_MESSAGE_CONTENT", "a1", "s1"),
        ("TEXT_MESSAGE_CONTENT", "b1", "s2"),
        ("TEXT_MESSAGE_END", "a1", "s1"),
        ("SUBAGENT_FINISHED", None, "s1"),
        ("TEXT_MESSAGE_END", "b1", "s2"),
        ("RUN_FINISHED", None, None),
    ]


def test_run_level_events_close_every_lane_in_opening_order():
    out = feed_all(
        [
            ev("TOOL_CALL_CHUNK", toolCallId="c2", toolCallName="f", subagentRunId="s2"),
            ev("TEXT_MESSAGE_CHUNK", messageId="p1", delta="x"),
            ev("REASONING_MESSAGE_CHUNK", messageId="r1", delta="y", subagentRunId="s1"),
            ev("MESSAGES_SNAPSHOT", messages=[]),
        ]
    )
    ends = [e for e in out if e["type"].endswith("_END")]
    assert ends == [
        {"type": "TOOL_CALL_END", "toolCallId": "c2", "subagentRunId": "s2"},
        {"type": "TEXT_MESSAGE_END", "messageId": "p1"},
        {"type": "REASONING_MESSAGE_END", "messageId": "r1", "subagentRunId": "s1"},
    ]


def test_explicit_untagged_event_closes_only_the_parent_lane():
    n = Normalizer()
    feed_all([ev("TEXT_MESSAGE_CHUNK", messageId="s", delta="x", subagentRunId="s1")], n)
    out = feed_all([ev("CUSTOM", name="c", value=1)], n)
    assert types_of(out) == ["CUSTOM"]
    out = feed_all([ev("CUSTOM", name="c", value=1, subagentRunId="s1")], n)
    assert out[0] == {"type": "TEXT_MESSAGE_END", "messageId": "s", "subagentRunId": "s1"}


def test_idless_untagged_chunk_continues_the_sole_open_lane_of_its_kind():
    out = feed_all(
        [
            ev("TEXT_MESSAGE_CHUNK", messageId="s", delta="x", subagentRunId="s1"),
            ev("TEXT_MESSAGE_CHUNK", delta="y"),
        ]
    )
    assert out[-1] == {
        "type": "TEXT_MESSAGE_CONTENT",
        "messageId": "s",
        "delta": "y",
        "subagentRunId": "s1",
    }


def test_idless_untagged_chunk_prefers_the_parent_lane():
    out = feed_all(
        [
            ev("TEXT_MESSAGE_CHUNK", messageId="s", delta="x", subagentRunId="s1"),
            ev("TEXT_MESSAGE_CHUNK", messageId="p", delta="x"),
            ev("TEXT_MESSAGE_CHUNK", delta="y"),
        ]
    )
    assert out[-1] == {"type": "TEXT_MESSAGE_CONTENT", "messageId": "p", "delta": "y"}


def test_idless_untagged_chunk_with_several_candidate_lanes_is_ambiguous():
    n = Normalizer()
    feed_all(
        [
            ev("TEXT_MESSAGE_CHUNK", messageId="a", delta="x", subagentRunId="s1"),
            ev("TEXT_MESSAGE_CHUNK", messageId="b", delta="x", subagentRunId="s2"),
        ],
        n,
    )
    res = n.feed(ev("TEXT_MESSAGE_CHUNK", delta="y"))
    assert res.events == []
    assert res.violations[0].code == R.CHUNK_AMBIGUOUS_LANE
    assert "Ambiguous TEXT_MESSAGE_CHUNK" in res.violations[0].message


def test_chunk_naming_an_open_id_under_another_subagent_is_a_violation():
    n = Normalizer()
    feed_all([ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="x", subagentRunId="s1")], n)
    res = n.feed(ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="y", subagentRunId="s2"))
    assert res.events == []
    [v] = res.violations
    assert (v.code, v.id) == (R.CHUNK_SUBAGENT_MISMATCH, "m1")
    assert "does not match the open stream's subagent 's1'" in v.message


def test_continuation_tag_wins_over_the_openers_on_content():
    out = feed_all(
        [
            ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="x"),
            ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="y"),
        ]
    )
    assert "subagentRunId" not in out[-1]
    out = feed_all(
        [
            ev("TOOL_CALL_CHUNK", toolCallId="c", toolCallName="f", subagentRunId="s"),
            ev("TOOL_CALL_CHUNK", delta="{}"),
        ]
    )
    assert out[-1] == {
        "type": "TOOL_CALL_ARGS",
        "toolCallId": "c",
        "delta": "{}",
        "subagentRunId": "s",
    }


def test_subagent_terminal_closes_only_its_own_lane():
    out = feed_all(
        [
            ev("TEXT_MESSAGE_CHUNK", messageId="p", delta="x"),
            ev("TEXT_MESSAGE_CHUNK", messageId="s", delta="x", subagentRunId="s1"),
            ev("SUBAGENT_ERROR", subagentRunId="s1", message="boom"),
            ev("TEXT_MESSAGE_CHUNK", delta="more"),
        ]
    )
    assert types_of(out)[-3:] == ["TEXT_MESSAGE_END", "SUBAGENT_ERROR", "TEXT_MESSAGE_CONTENT"]
    assert out[-3]["messageId"] == "s" and out[-1]["messageId"] == "p"


def test_the_normalizer_takes_its_rule_codes_from_below_the_verifier():
    """agui.pipeline._normalize imports agui._rules, not the verifier package (the layer above it)."""
    import subprocess
    import sys

    probe = "import sys, agui.pipeline._normalize; print('agui.pipeline._verify' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == "False"
