"""agui.pipeline._compact.compact_events: fewer events, the same conversation."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import SHARED

from agui import types as T
from agui._versioning import IMPLEMENTED_PROTOCOL_VERSION
from agui.errors import DecodeError, RunError
from agui.pipeline._apply import Conversation
from agui.pipeline._compact import compact_events
from agui.pipeline._pipeline import Pipeline
from agui.testing.conformance._runner import event_text
from agui.types import event_type
from agui.updates import ErrorUpdate, WarningUpdate
from agui.wire import decode_input

STREAMS = (
    SHARED
    / "upstream"
    / "agui"
    / f"spec-{IMPLEMENTED_PROTOCOL_VERSION}"
    / "conformance"
    / "streams"
)


def types_of(events):
    return [event_type(e) for e in events]


def run_start(run="r1"):
    return T.RunStartedEvent(thread_id="t", run_id=run)


def run_end(run="r1"):
    return T.RunFinishedEvent(thread_id="t", run_id=run)


def text(mid, *deltas, role="assistant"):
    return [
        T.TextMessageStartEvent(message_id=mid, role=role),
        *(T.TextMessageContentEvent(message_id=mid, delta=d) for d in deltas),
        T.TextMessageEndEvent(message_id=mid),
    ]


def custom(name):
    return T.CustomEvent(name=name, value=None)


def apply(events, *, messages=(), state=None, raw=False):
    """(conversation, updates) after a strict pipeline over ``events`` (structs or raw dicts)."""
    conv = Conversation(list(messages), state=state)
    pipe = Pipeline(conv, verify="strict", keep_events=True)
    updates = []
    for ev in events:
        updates += pipe.feed(event_text(ev)) if raw else pipe.feed_event(ev)
    updates += pipe.close()
    return conv, updates, pipe


def rejected(updates):
    return [
        u.error
        for u in updates
        if isinstance(u, ErrorUpdate) and u.fatal and not isinstance(u.error, RunError)
    ]


def same_conversation(a: Conversation, b: Conversation) -> bool:
    return msgspec.to_builtins(a.messages) == msgspec.to_builtins(b.messages) and a.state == b.state


# --- what it does (the reference's behaviour) ------------------------------------------------


def test_consecutive_text_deltas_of_a_message_become_one():
    out = compact_events(text("m1", "Hello", " ", "world"))
    assert types_of(out) == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]
    assert out[1].delta == "Hello world" and out[1].message_id == "m1"


def test_events_interleaved_in_a_message_move_after_its_end():
    m = text("m1", "Processing", "...")
    events = [m[0], m[1], custom("c1"), m[2], custom("c2"), m[3]]
    out = compact_events(events)
    assert types_of(out) == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "CUSTOM",
        "CUSTOM",
    ]
    assert out[1].delta == "Processing..." and [out[3].name, out[4].name] == ["c1", "c2"]


def test_messages_are_compacted_independently():
    out = compact_events([*text("m1", "Hi"), *text("m2", "Hello", " there")])
    assert [getattr(e, "delta", None) for e in out] == [None, "Hi", None, None, "Hello there", None]
    assert [e.message_id for e in out] == ["m1"] * 3 + ["m2"] * 3


def test_an_incomplete_message_keeps_its_start_and_merged_content():
    events = text("m1", "In", "complete")[:-1]
    out = compact_events(events)
    assert types_of(out) == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]
    assert out[1].delta == "Incomplete"


def test_events_outside_streams_pass_through_as_the_same_objects():
    events = [
        custom("a"),
        T.ToolCallStartEvent(tool_call_id="c", tool_call_name="s"),
        T.ToolCallEndEvent(tool_call_id="c"),
    ]
    out = compact_events(events)
    assert out == events and all(a is b for a, b in zip(out, events, strict=True))


def test_a_single_delta_is_kept_as_the_same_event():
    events = text("m1", "only")
    assert compact_events(events)[1] is events[1]


def test_empty_deltas_disappear_into_the_merge():
    out = compact_events(text("m1", "", "Hello", ""))
    assert len(out) == 3 and out[1].delta == "Hello"


def test_reasoning_message_deltas_become_one_as_well():
    events = [
        run_start(),
        T.ReasoningStartEvent(message_id="r"),
        T.ReasoningMessageStartEvent(message_id="rm", role="reasoning"),
        T.ReasoningMessageContentEvent(message_id="rm", delta="thinking"),
        custom("c"),
        T.ReasoningMessageContentEvent(message_id="rm", delta=" hard"),
        T.ReasoningMessageEndEvent(message_id="rm"),
        T.ReasoningEndEvent(message_id="r"),
        run_end(),
    ]
    out = compact_events(events)
    assert types_of(out) == [
        "RUN_STARTED",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "CUSTOM",
        "REASONING_END",
        "RUN_FINISHED",
    ]
    assert out[3].delta == "thinking hard"
    conv_a, ups_a, _ = apply(events)
    conv_b, ups_b, _ = apply(out)
    assert rejected(ups_a) == rejected(ups_b) == []
    assert same_conversation(conv_a, conv_b)


def test_tool_call_args_become_one_delta_and_interleaved_events_move_after():
    events = [
        T.ToolCallStartEvent(tool_call_id="t1", tool_call_name="calc", parent_message_id="m"),
        T.ToolCallArgsEvent(tool_call_id="t1", delta='{"a": '),
        custom("x"),
        T.ToolCallArgsEvent(tool_call_id="t1", delta='10, "b": 20}'),
        custom("y"),
        T.ToolCallEndEvent(tool_call_id="t1"),
    ]
    out = compact_events(events)
    assert types_of(out) == [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "CUSTOM",
        "CUSTOM",
    ]
    assert out[1].delta == '{"a": 10, "b": 20}'


def test_an_incomplete_tool_call_stays_before_run_error():
    events = [
        run_start(),
        T.ToolCallStartEvent(tool_call_id="c1", tool_call_name="edit"),
        T.ToolCallArgsEvent(tool_call_id="c1", delta='{"path":'),
        T.ToolCallArgsEvent(tool_call_id="c1", delta='"a"'),
        T.RunErrorEvent(message="aborted", code="ABORTED"),
    ]
    out = compact_events(events)
    assert types_of(out) == ["RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "RUN_ERROR"]
    assert out[2].delta == '{"path":"a"'


def test_an_incomplete_message_stays_before_run_error_and_a_later_run_replays():
    aborted = [
        run_start(),
        *text("m1", "half", " a sentence")[:-1],
        T.RunErrorEvent(message="aborted"),
    ]
    later = [run_start("r2"), *text("m2", "re", "covered"), run_end("r2")]
    out = compact_events(compact_events(aborted) + later)
    assert types_of(out)[:4] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "RUN_ERROR",
    ]
    assert types_of(out)[-1] == "RUN_FINISHED"
    conv, updates, _ = apply(out)
    assert rejected(updates) == []
    assert [conv.text_of("m1"), conv.text_of("m2")] == ["half a sentence", "recovered"]


def test_state_events_of_a_run_become_one_snapshot_before_run_finished():
    events = [
        run_start(),
        T.StateSnapshotEvent(snapshot={"n": 1, "items": []}),
        *text("m1", "a"),
        T.StateDeltaEvent(delta=[{"op": "add", "path": "/items/-", "value": "x"}]),
        T.StateDeltaEvent(delta=[{"op": "replace", "path": "/n", "value": 2}]),
        run_end(),
    ]
    out = compact_events(events)
    assert types_of(out) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STATE_SNAPSHOT",
        "RUN_FINISHED",
    ]
    assert out[4].snapshot == {"n": 2, "items": ["x"]}
    assert events[1].snapshot == {"n": 1, "items": []}  # the input is not modified


def test_state_carries_over_runs_and_trailing_state_is_flushed_at_the_end():
    events = [
        run_start(),
        T.StateSnapshotEvent(snapshot={"n": 1}),
        run_end(),
        run_start("r2"),
        T.StateDeltaEvent(delta=[{"op": "add", "path": "/m", "value": 0}]),
        run_end("r2"),
        T.StateDeltaEvent(delta=[{"op": "remove", "path": "/n"}]),
    ]
    out = compact_events(events)
    snaps = [e.snapshot for e in out if isinstance(e, T.StateSnapshotEvent)]
    assert snaps == [{"n": 1}, {"n": 1, "m": 0}, {"m": 0}]
    assert types_of(out)[-1] == "STATE_SNAPSHOT"


def test_deltas_before_any_snapshot_are_kept_since_the_base_state_is_unknown():
    deltas = [
        T.StateDeltaEvent(delta=[{"op": "add", "path": "/a", "value": 1}]),
        T.StateDeltaEvent(delta=[{"op": "add", "path": "/b", "value": 2}]),
    ]
    events = [run_start(), *deltas, run_end()]
    out = compact_events(events)
    assert out[1:3] == deltas
    conv_a, _, _ = apply(events, state={"base": True})
    conv_b, _, _ = apply(out, state={"base": True})
    assert conv_a.state == conv_b.state == {"base": True, "a": 1, "b": 2}


def test_a_delta_that_fails_is_kept_after_a_snapshot_of_the_state_so_far():
    bad = T.StateDeltaEvent(delta=[{"op": "remove", "path": "/missing"}])
    events = [
        run_start(),
        T.StateSnapshotEvent(snapshot={"a": 1}),
        T.StateDeltaEvent(delta=[{"op": "add", "path": "/b", "value": 2}]),
        bad,
        T.StateDeltaEvent(delta=[{"op": "add", "path": "/c", "value": 3}]),
        run_end(),
    ]
    out = compact_events(events)
    assert types_of(out) == [
        "RUN_STARTED",
        "STATE_SNAPSHOT",
        "STATE_DELTA",
        "STATE_SNAPSHOT",
        "RUN_FINISHED",
    ]
    assert out[1].snapshot == {"a": 1, "b": 2} and out[2] is bad
    assert out[3].snapshot == {"a": 1, "b": 2, "c": 3}
    conv_a, ups_a, _ = apply(events)
    conv_b, ups_b, _ = apply(out)
    assert conv_a.state == conv_b.state
    codes = [[u.code for u in ups if isinstance(u, WarningUpdate)] for ups in (ups_a, ups_b)]
    assert codes[0] == codes[1] == ["apply_state_patch_failed"]


def test_merged_deltas_keep_the_first_timestamp_and_merge_metadata_in_order():
    events = [
        T.TextMessageStartEvent(message_id="m"),
        T.TextMessageContentEvent(
            message_id="m", delta="a", timestamp=5, metadata={"k": 1, "x": "keep"}
        ),
        T.TextMessageContentEvent(message_id="m", delta="b", timestamp=6, metadata={"k": 2}),
        T.TextMessageEndEvent(message_id="m"),
    ]
    merged = compact_events(events)[1]
    assert (merged.delta, merged.timestamp, merged.metadata) == ("ab", 5, {"k": 2, "x": "keep"})
    conv_a, _, _ = apply([run_start(), *events, run_end()])
    conv_b, _, _ = apply(compact_events([run_start(), *events, run_end()]))
    assert same_conversation(conv_a, conv_b)


# --- where it keeps the conversation the reference's rewrite would change ---------------------


def test_a_tool_call_parented_to_an_open_message_stays_after_that_message_start():
    m = text("m1", "Let me ", "look")
    events = [
        run_start(),
        m[0],
        m[1],
        T.ToolCallStartEvent(tool_call_id="t1", tool_call_name="s", parent_message_id="m1"),
        T.ToolCallArgsEvent(tool_call_id="t1", delta='{"q":'),
        T.ToolCallArgsEvent(tool_call_id="t1", delta='"x"}'),
        T.ToolCallEndEvent(tool_call_id="t1"),
        m[2],
        m[3],
        run_end(),
    ]
    out = compact_events(events)
    assert types_of(out) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    conv_a, ups, _ = apply(events)
    conv_b, ups_b, _ = apply(out)
    assert rejected(ups) == rejected(ups_b) == []
    assert same_conversation(conv_a, conv_b)
    assert len(conv_b.messages) == 1 and conv_b.text_of("m1") == "Let me look"


def test_messages_keep_their_order_when_a_later_one_ends_first():
    a, b = text("a", "1", "2"), text("b", "3", "4")
    events = [run_start(), a[0], a[1], b[0], b[1], b[2], b[3], a[2], a[3], run_end()]
    out = compact_events(events)
    conv_a, _, _ = apply(events)
    conv_b, _, _ = apply(out)
    assert [m.id for m in conv_b.messages] == ["a", "b"]
    assert same_conversation(conv_a, conv_b)


def test_a_messages_snapshot_flushes_the_deltas_streamed_before_it():
    m = text("m1", "before", "!", "after")
    snapshot = T.MessagesSnapshotEvent(messages=[T.AssistantMessage(id="m1", content="reset:")])
    events = [run_start(), m[0], m[1], m[2], snapshot, m[3], m[4], run_end()]
    out = compact_events(events)
    assert [getattr(e, "delta", None) for e in out if isinstance(e, T.TextMessageContentEvent)] == [
        "before!",
        "after",
    ]
    conv_a, _, _ = apply(events)
    conv_b, _, _ = apply(out)
    assert same_conversation(conv_a, conv_b)


# --- the same conversation on real streams ---------------------------------------------------


def _conformance_files() -> list[Path]:
    return sorted(STREAMS.glob("*.json")) if STREAMS.is_dir() else []


def _seeded(fixture: dict) -> tuple[list, object]:
    inp = fixture.get("input") or {}
    messages: list = []
    if inp.get("messages"):
        body = {"threadId": "t", "runId": "r", **inp}
        try:
            messages = list(decode_input(json.dumps(body).encode()).messages)
        except DecodeError:
            messages = []
    return messages, inp.get("state")


@pytest.mark.upstream
@pytest.mark.parametrize(
    "path", _conformance_files() or [None], ids=lambda p: p.stem if p else "absent"
)
def test_compacting_a_conformance_stream_keeps_its_conversation(path):
    if path is None:
        pytest.skip(f"conformance streams not available: {STREAMS}")
    fixture = json.loads(path.read_text(encoding="utf-8"))
    messages, state = _seeded(fixture)
    conv_a, ups_a, pipe = apply(fixture.get("stream", []), messages=messages, state=state, raw=True)
    compacted = compact_events(pipe.events)
    assert len(compacted) <= len(pipe.events)
    if rejected(ups_a):
        # a stream our client rejects: what it delivered before the fault (a cut run) compacts
        # to the same conversation; compare the delivered prefix with its compaction
        conv_a, _, _ = apply(pipe.events, messages=messages, state=state)
        conv_b, ups_b, _ = apply(compacted, messages=messages, state=state)
        assert not [e for e in rejected(ups_b) if getattr(e, "code", "") != "truncated_stream"]
    else:
        conv_b, ups_b, _ = apply(compacted, messages=messages, state=state)
        assert rejected(ups_b) == []
    assert msgspec.to_builtins(conv_b.messages) == msgspec.to_builtins(conv_a.messages)
    assert conv_b.state == conv_a.state


def test_enough_conformance_streams_complete_to_make_the_comparison_meaningful():
    files = _conformance_files()
    if not files:
        pytest.skip(f"conformance streams not available: {STREAMS}")
    completed = 0
    for path in files:
        fixture = json.loads(path.read_text(encoding="utf-8"))
        messages, state = _seeded(fixture)
        _, ups, _ = apply(fixture.get("stream", []), messages=messages, state=state, raw=True)
        completed += not rejected(ups)
    assert completed >= 30


# --- the same conversation on generated streams ---------------------------------------------


@st.composite
def streams(draw):
    """A legal stream: runs of interleaved messages, tool calls, customs, steps and state."""
    events: list = []
    n_runs = draw(st.integers(1, 2))
    counter = 0
    for run in range(n_runs):
        run_id = f"r{run}"
        events.append(run_start(run_id))
        open_text: list[str] = []
        open_tools: list[str] = []
        ended_tools: list[str] = []
        messages: list[str] = []
        step_open = None
        state_known = False
        keys: list[str] = []
        for _ in range(draw(st.integers(0, 25))):
            action = draw(
                st.sampled_from(
                    [
                        "text",
                        "content",
                        "end_text",
                        "tool",
                        "args",
                        "end_tool",
                        "custom",
                        "step",
                        "snapshot",
                        "delta",
                        "result",
                        "messages",
                        "reasoning",
                    ]
                )
            )
            counter += 1
            if action == "text":
                mid = f"m{counter}"
                open_text.append(mid)
                messages.append(mid)
                events.append(T.TextMessageStartEvent(message_id=mid, role="assistant"))
            elif action == "content" and open_text:
                mid = draw(st.sampled_from(open_text))
                events.append(
                    T.TextMessageContentEvent(message_id=mid, delta=draw(st.text(max_size=4)))
                )
            elif action == "end_text" and open_text:
                mid = draw(st.sampled_from(open_text))
                open_text.remove(mid)
                events.append(T.TextMessageEndEvent(message_id=mid))
            elif action == "tool":
                cid = f"c{counter}"
                parent = draw(st.sampled_from([None, *messages]))
                open_tools.append(cid)
                events.append(
                    T.ToolCallStartEvent(
                        tool_call_id=cid,
                        tool_call_name="f",
                        **({"parent_message_id": parent} if parent else {}),
                    )
                )
            elif action == "args" and open_tools:
                cid = draw(st.sampled_from(open_tools))
                events.append(
                    T.ToolCallArgsEvent(
                        tool_call_id=cid, delta=draw(st.sampled_from(['{"a":', "1", "}"]))
                    )
                )
            elif action == "end_tool" and open_tools:
                cid = draw(st.sampled_from(open_tools))
                open_tools.remove(cid)
                ended_tools.append(cid)
                events.append(T.ToolCallEndEvent(tool_call_id=cid))
            elif action == "custom":
                events.append(custom(f"x{counter}"))
            elif action == "step":
                if step_open is None:
                    step_open = f"s{counter}"
                    events.append(T.StepStartedEvent(step_name=step_open))
                else:
                    events.append(T.StepFinishedEvent(step_name=step_open))
                    step_open = None
            elif action == "snapshot":
                keys = draw(st.lists(st.sampled_from("abc"), unique=True))
                events.append(T.StateSnapshotEvent(snapshot={k: counter for k in keys}))
                state_known = True
            elif action == "delta" and state_known:
                op = draw(st.sampled_from(["add", "remove", "replace"]))
                key = draw(st.sampled_from("abc"))
                patch = {"op": op, "path": f"/{key}"}
                if op != "remove":
                    patch["value"] = counter
                events.append(T.StateDeltaEvent(delta=[patch]))  # may fail to apply: fine
            elif action == "messages":
                keep = draw(st.lists(st.sampled_from(messages), unique=True)) if messages else []
                events.append(
                    T.MessagesSnapshotEvent(
                        messages=[
                            T.AssistantMessage(id=mid, content=f"snap{counter}") for mid in keep
                        ]
                    )
                )
            elif action == "reasoning":
                rid = f"rm{counter}"
                events += [
                    T.ReasoningStartEvent(message_id=f"r{counter}"),
                    T.ReasoningMessageStartEvent(message_id=rid, role="reasoning"),
                    *(
                        T.ReasoningMessageContentEvent(message_id=rid, delta=d)
                        for d in draw(st.lists(st.text(max_size=3), max_size=3))
                    ),
                    T.ReasoningMessageEndEvent(message_id=rid),
                    T.ReasoningEndEvent(message_id=f"r{counter}"),
                ]
            elif action == "result" and ended_tools:
                cid = ended_tools.pop(0)
                events.append(
                    T.ToolCallResultEvent(
                        message_id=f"res{counter}", tool_call_id=cid, content="ok"
                    )
                )
        for mid in open_text:
            events.append(T.TextMessageEndEvent(message_id=mid))
        for cid in open_tools:
            events.append(T.ToolCallEndEvent(tool_call_id=cid))
        if step_open is not None:
            events.append(T.StepFinishedEvent(step_name=step_open))
        events.append(run_end(run_id))
    return events


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.sampled_from([None, {"seed": 1}]))
def test_compacting_any_legal_stream_keeps_its_conversation(events, state):
    conv_a, ups_a, _ = apply(events, state=state)
    compacted = compact_events(events)
    conv_b, ups_b, _ = apply(compacted, state=state)
    assert len(compacted) <= len(events)
    assert bool(rejected(ups_a)) == bool(rejected(ups_b))
    assert same_conversation(conv_a, conv_b)
    assert len(compact_events(compacted)) == len(compacted)  # nothing is left to merge


def test_a_tool_call_that_creates_its_parent_message_keeps_the_parents_earlier_deltas_before_it():
    """Found by hypothesis: a MESSAGES_SNAPSHOT drops the open message m1, an empty delta for
    m1 is then skipped, and a TOOL_CALL_START with parent m1 recreates it. Moving the delta
    after the call made it land on the recreated message (content '' instead of none)."""
    events = [
        T.RunStartedEvent(thread_id="t", run_id="r"),
        T.TextMessageStartEvent(message_id="m1", role="assistant"),
        T.MessagesSnapshotEvent(messages=[]),
        T.TextMessageContentEvent(message_id="m1", delta=""),
        T.ToolCallStartEvent(tool_call_id="c4", tool_call_name="f", parent_message_id="m1"),
        T.TextMessageEndEvent(message_id="m1"),
        T.ToolCallEndEvent(tool_call_id="c4"),
        T.RunFinishedEvent(thread_id="t", run_id="r"),
    ]
    original, _, _ = apply(events)
    compacted, _, _ = apply(compact_events(events))
    assert same_conversation(original, compacted)
