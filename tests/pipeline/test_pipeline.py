"""Pipeline: SSE bytes -> decode -> normalize -> verify -> apply -> Updates (+ Done per run)."""

from __future__ import annotations

import json
import random
from typing import Any

import msgspec
import pytest

from agui import types as T
from agui.errors import DecodeError, FrameTooLarge, ProtocolViolation, RunError
from agui.pipeline._apply import Conversation
from agui.pipeline._pipeline import Pipeline
from agui.updates import (
    Done,
    ErrorUpdate,
    Paused,
    RunStarted,
    TextDelta,
    TextEnded,
    WarningUpdate,
)


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


START = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}


def text(mid: str, *deltas: str) -> list[dict[str, Any]]:
    return [
        {"type": "TEXT_MESSAGE_START", "messageId": mid},
        *({"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": d} for d in deltas),
        {"type": "TEXT_MESSAGE_END", "messageId": mid},
    ]


def feed_all(p: Pipeline, *events: dict[str, Any]) -> list[Any]:
    return p.feed_bytes(sse(*events)) + p.close()


def of(kind: type, updates: list[Any]) -> list[Any]:
    return [u for u in updates if isinstance(u, kind)]


# --- a clean run ----------------------------------------------------------------------


def test_clean_run_reports_each_change_and_one_done():
    p = Pipeline()
    ups = feed_all(p, START, *text("m1", "Hi", "!"), FINISH)
    assert ups == [
        RunStarted("r1", "t1"),
        *[u for u in ups if not isinstance(u, (RunStarted, Done))],
        Done("success", run_id="r1"),
    ]
    assert of(TextEnded, ups) == [TextEnded("m1", "Hi!")]
    assert p.finished
    assert p.conversation.messages[0].content == "Hi!"


def test_any_split_of_the_bytes_gives_the_same_updates():
    data = sse(START, *text("m1", "caf\u00e9 \U0001f468\u200d\U0001f469"), FINISH)
    whole = Pipeline()
    expected = whole.feed_bytes(data) + whole.close()
    for size in (1, 2, 3, 7, 64):
        p = Pipeline()
        got: list[Any] = []
        for i in range(0, len(data), size):
            got += p.feed_bytes(data[i : i + size])
        got += p.close()
        assert got == expected, size


def test_success_done_carries_result_and_pending_tool_calls():
    p = Pipeline()
    ups = feed_all(
        p,
        START,
        {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "ask_user"},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {**FINISH, "result": {"answer": 42}},
    )
    assert ups[-1] == Done(
        "success", result={"answer": 42}, pending_tool_call_ids=("c1",), run_id="r1"
    )


def test_interrupt_outcome_yields_paused_then_done_interrupted():
    p = Pipeline()
    outcome = {"type": "interrupt", "interrupts": [{"id": "i1", "reason": "confirmation"}]}
    ups = feed_all(p, START, {**FINISH, "outcome": outcome})
    assert isinstance(ups[-2], Paused) and ups[-2].interrupts[0].id == "i1"
    assert ups[-1] == Done("interrupted", run_id="r1")


def test_cancelled_outcome_is_done_cancelled():
    ups = feed_all(Pipeline(), START, {**FINISH, "outcome": {"type": "cancelled"}})
    assert ups[-1].outcome == "cancelled"


def test_run_error_is_error_update_then_done_failed_with_reason():
    ups = feed_all(Pipeline(), START, {"type": "RUN_ERROR", "message": "model down", "code": "E"})
    err, done = ups[-2:]
    assert isinstance(err, ErrorUpdate) and isinstance(err.error, RunError) and err.fatal
    assert done == Done("failed", reason="model down", run_id="r1")


def test_several_sequential_runs_each_get_a_done():
    second = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r2"}
    ups = feed_all(
        Pipeline(),
        START,
        *text("m1", "a"),
        FINISH,
        second,
        *text("m2", "b"),
        {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r2"},
    )
    assert [(d.outcome, d.run_id) for d in of(Done, ups)] == [("success", "r1"), ("success", "r2")]


def test_late_run_error_after_finished_reports_the_run_failed():
    ups = feed_all(Pipeline(), START, FINISH, {"type": "RUN_ERROR", "message": "flush failed"})
    assert [d.outcome for d in of(Done, ups)] == ["success", "failed"]


# --- end of stream --------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["strict", "tolerant", "off"])
def test_truncated_stream_fails_the_run_in_every_mode(mode):
    p = Pipeline(verify=mode)
    ups = feed_all(p, START, *text("m1", "half an ans"))
    err, done = ups[-2:]
    assert isinstance(err.error, ProtocolViolation) and err.error.code == "truncated_stream"
    assert err.fatal and done.outcome == "failed"
    assert p.conversation.messages[0].content == "half an ans"  # what arrived is kept


def test_empty_stream_is_truncated():
    p = Pipeline()
    ups = p.close()
    assert [type(u) for u in ups] == [ErrorUpdate, Done]
    assert ups[0].error.code == "truncated_stream"


def test_close_is_idempotent_and_flushes_a_final_frame_without_blank_line():
    p = Pipeline()
    ups = p.feed_bytes(sse(START)) + p.feed_bytes(b"data: " + json.dumps(FINISH).encode())
    assert not of(Done, ups)
    assert p.close() == [Done("success", run_id="r1")]
    assert p.close() == []


def test_cancel_ends_with_done_cancelled_and_applies_nothing_after():
    p = Pipeline()
    p.feed_bytes(sse(START, {"type": "TEXT_MESSAGE_START", "messageId": "m1"}))
    assert p.cancel() == [Done("cancelled", reason="cancelled by client", run_id="r1")]
    assert (
        p.feed_bytes(sse({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "x"})) == []
    )
    assert p.feed_data(json.dumps(FINISH)) == [] and p.close() == [] and p.cancel() == []
    assert p.conversation.messages[0].content == ""
    assert p.conversation.outcome == "cancelled"


# --- verify modes -----------------------------------------------------------------------


ORPHAN = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "ghost", "delta": "boo"}


def test_strict_mode_fails_on_the_first_violation_and_stops():
    p = Pipeline(verify="strict")
    ups = p.feed_bytes(sse(START, ORPHAN, *text("m1", "never applied"), FINISH))
    err, done = ups[-2:]
    assert err.fatal and err.error.code == "content_without_start" and err.error.id == "ghost"
    assert done == Done("failed", reason=str(err.error), run_id="r1")
    assert p.finished and p.conversation.messages == []
    assert p.close() == []


def test_tolerant_mode_reports_drops_the_event_and_goes_on():
    p = Pipeline(verify="tolerant")
    ups = feed_all(p, START, ORPHAN, *text("m1", "kept"), FINISH)
    errors = of(ErrorUpdate, ups)
    assert (
        len(errors) == 1 and not errors[0].fatal and errors[0].error.code == "content_without_start"
    )
    assert ups[-1] == Done("success", run_id="r1")
    assert [m.id for m in p.conversation.messages] == ["m1"]


def test_off_mode_applies_without_verifying():
    p = Pipeline(verify="off")
    ups = feed_all(p, ORPHAN, START, FINISH)
    assert not of(ErrorUpdate, ups)
    assert [w.code for w in of(WarningUpdate, ups)] == ["apply_unknown_target"]
    assert ups[-1].outcome == "success"


def test_normalizer_violation_is_fatal_in_strict_mode():
    p = Pipeline(verify="strict")
    ups = p.feed_bytes(sse(START, {"type": "TEXT_MESSAGE_CHUNK", "delta": "no id"}))
    assert ups[-2].error.code == "chunk_missing_id" and ups[-1].outcome == "failed"


def test_unknown_mode_is_rejected():
    with pytest.raises(ValueError, match="verify"):
        Pipeline(verify="lenient")  # type: ignore[arg-type]


# --- decoding -------------------------------------------------------------------------------


def test_undecodable_frame_is_reported_and_skipped_in_tolerant_mode():
    p = Pipeline()
    ups = p.feed_bytes(sse(START) + b"data: {not json\n\n" + sse(*text("m1", "ok"), FINISH))
    errs = of(ErrorUpdate, ups)
    assert len(errs) == 1 and isinstance(errs[0].error, DecodeError) and not errs[0].fatal
    assert ups[-1].outcome == "success"


def test_undecodable_frame_is_fatal_in_strict_mode():
    p = Pipeline(verify="strict")
    ups = p.feed_bytes(sse(START) + b"data: [1]\n\n" + sse(FINISH))
    assert ups[-2].fatal and isinstance(ups[-2].error, DecodeError)
    assert ups[-1].outcome == "failed" and p.finished


def test_decode_repairs_become_warnings_and_unknown_types_are_dropped():
    p = Pipeline(keep_events=True)
    ups = feed_all(p, START, {"type": "FUTURE_EVENT", "x": 1}, *text("m1", "a"), FINISH)
    assert any("FUTURE_EVENT" in w.message for w in of(WarningUpdate, ups))
    assert "FUTURE_EVENT" not in [T.event_type(e) for e in p.events]
    assert ups[-1].outcome == "success"


def test_oversized_frame_is_fatal():
    p = Pipeline(max_frame_bytes=64)
    ups = p.feed_bytes(sse(START) + b"data: " + b"x" * 200)
    ups += p.feed_bytes(b"more")  # the reader reports the cap after the frames before it
    assert isinstance(ups[-2].error, FrameTooLarge) and ups[-1].outcome == "failed"
    assert p.finished


@pytest.mark.parametrize("as_bytes", [False, True], ids=["str", "bytes"])
def test_feed_data_applies_the_frame_cap_to_one_events_json_text(as_bytes):
    # feed(str) and feed_data share one check: an event's JSON text over the cap
    # is an oversized frame (fatal: FrameTooLarge), however it is fed
    big = json.dumps({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "x" * 200})
    for feed in ("feed", "feed_data"):
        p = Pipeline(max_frame_bytes=128)
        ups = p.feed_data(json.dumps(START))
        data = big.encode() if as_bytes and feed == "feed_data" else big
        ups += getattr(p, feed)(data)
        assert isinstance(ups[-2].error, FrameTooLarge), feed
        assert ups[-2].error.size == len(big) and ups[-1].outcome == "failed"
        assert p.finished
        assert p.feed_data(json.dumps(FINISH)) == []


def test_feed_data_within_the_frame_cap_is_applied():
    p = Pipeline(max_frame_bytes=128)
    ups = p.feed_data(json.dumps(START))
    ups += p.feed_data(json.dumps(FINISH).encode())
    assert ups[-1] == Done("success", run_id=FINISH["runId"])


def test_retired_thinking_events_keep_one_message_id_across_the_stream():
    p = Pipeline()
    ups = feed_all(
        p,
        START,
        {"type": "THINKING_START"},
        {"type": "THINKING_TEXT_MESSAGE_START"},
        {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "Let me "},
        {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "check."},
        {"type": "THINKING_TEXT_MESSAGE_END"},
        {"type": "THINKING_END"},
        FINISH,
    )
    assert ups[-1].outcome == "success"
    assert [(T.message_role(m), m.content) for m in p.conversation.messages] == [
        ("reasoning", "Let me check.")
    ]


# --- chunks, versions, events ----------------------------------------------------------------


def test_chunk_stream_is_normalized_and_applied():
    p = Pipeline()
    ups = feed_all(
        p,
        START,
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "delta": "Chunks "},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "expand."},
        FINISH,
    )
    assert of(TextDelta, ups) == [TextDelta("m1", "Chunks "), TextDelta("m1", "expand.")]
    assert of(TextEnded, ups) == [TextEnded("m1", "Chunks expand.")]
    assert ups[-1].outcome == "success"


@pytest.mark.parametrize(
    ("declared", "code"),
    [
        ("1.2", "protocol_version_newer"),
        ("draft", "protocol_version_uninterpretable"),
        ("2.0", "protocol_version_newer"),
    ],
)
def test_newer_or_uninterpretable_producer_version_warns_and_is_served(declared, code):
    ups = feed_all(
        Pipeline(), {**START, "protocolVersion": declared}, *text("m1", "served"), FINISH
    )
    assert [w.code for w in of(WarningUpdate, ups)] == [code]
    assert ups[-1].outcome == "success"


@pytest.mark.parametrize("declared", ["1.0", "1.1"])
def test_known_producer_version_is_quiet(declared):
    ups = feed_all(Pipeline(), {**START, "protocolVersion": declared}, FINISH)
    assert not of(WarningUpdate, ups)


def test_events_are_retained_only_when_asked():
    quiet = Pipeline()
    feed_all(quiet, START, FINISH)
    assert quiet.events == []
    kept = Pipeline(keep_events=True)
    feed_all(kept, START, FINISH)
    assert [T.event_type(e) for e in kept.events] == ["RUN_STARTED", "RUN_FINISHED"]


def test_feed_event_takes_structs_and_never_mutates_them():
    conv = Conversation()
    p = Pipeline(conv)
    snap = T.StateSnapshotEvent(snapshot={"n": [1]})
    delta = T.StateDeltaEvent(delta=[T.AddOperation(path="/n/-", value=2)])
    for e in (T.RunStartedEvent(thread_id="t", run_id="r"), snap, delta):
        p.feed_event(e)
    assert conv.state == {"n": [1, 2]} and snap.snapshot == {"n": [1]}
    assert p.feed_data(msgspec.json.encode(T.RunFinishedEvent(thread_id="t", run_id="r")))[
        -1
    ].outcome == ("success")


def test_conversation_is_kept_across_pipelines():
    conv = Conversation()
    feed_all(Pipeline(conv), START, *text("m1", "one"), FINISH)
    feed_all(
        Pipeline(conv), {**START, "runId": "r2"}, *text("m2", "two"), {**FINISH, "runId": "r2"}
    )
    assert [m.content for m in conv.messages] == ["one", "two"]


# --- robustness -------------------------------------------------------------------------------

_IDS = ["a", "b", "c"]


def _random_event(r: random.Random) -> dict[str, Any]:
    """A random, often illegal, event in wire shape."""
    t = r.choice(
        [
            "RUN_STARTED",
            "RUN_FINISHED",
            "RUN_ERROR",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "TEXT_MESSAGE_CHUNK",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "TOOL_CALL_CHUNK",
            "TOOL_CALL_RESULT",
            "STATE_SNAPSHOT",
            "STATE_DELTA",
            "MESSAGES_SNAPSHOT",
            "ACTIVITY_SNAPSHOT",
            "ACTIVITY_DELTA",
            "REASONING_MESSAGE_START",
            "REASONING_MESSAGE_CONTENT",
            "REASONING_MESSAGE_END",
            "REASONING_ENCRYPTED_VALUE",
            "STEP_STARTED",
            "STEP_FINISHED",
            "SUBAGENT_STARTED",
            "SUBAGENT_FINISHED",
            "CUSTOM",
            "RAW",
        ]
    )
    i = r.choice(_IDS)
    d = {"type": t}
    if t.startswith("RUN_") and t != "RUN_ERROR":
        d.update(threadId="t", runId=r.choice(["r1", "r2"]))
    if t == "RUN_ERROR":
        d["message"] = "x"
    if t.startswith(("TEXT", "REASONING_MESSAGE", "ACTIVITY")):
        d["messageId"] = i
    if t.startswith("REASONING_MESSAGE_START"):
        d["role"] = "reasoning"
    if t.endswith(("CONTENT", "ARGS")):
        d["delta"] = r.choice(["x", "\ud83d", "", '"'])
    if t.startswith("TOOL_CALL"):
        d["toolCallId"] = i
    if t == "TOOL_CALL_START":
        d["toolCallName"] = "f"
        d["parentMessageId"] = r.choice(_IDS)
    if t == "TOOL_CALL_RESULT":
        d.update(messageId=r.choice(_IDS), content="c")
    if t == "STATE_SNAPSHOT":
        d["snapshot"] = r.choice([None, 0, {"a": []}, [1]])
    if t in ("STATE_DELTA",):
        d["delta"] = [
            {
                "op": r.choice(["add", "remove", "replace", "move"]),
                "path": r.choice(["/a", "/a/-", "", "/x/y"]),
                "from": "/a",
                "value": 1,
            }
        ]
    if t == "ACTIVITY_DELTA":
        d.update(activityType="t", patch=[{"op": "add", "path": "/n", "value": 1}])
    if t == "ACTIVITY_SNAPSHOT":
        d.update(activityType="t", content={}, replace=r.choice([True, False]))
    if t == "MESSAGES_SNAPSHOT":
        d["messages"] = [
            {
                "id": r.choice(_IDS),
                "role": r.choice(["user", "assistant", "activity", "reasoning"]),
                "content": "z",
                "activityType": "t",
            }
        ]
    if t == "REASONING_ENCRYPTED_VALUE":
        d.update(subtype=r.choice(["tool-call", "message"]), entityId=i, encryptedValue="e")
    if t.startswith("STEP"):
        d["stepName"] = i
    if t.startswith("SUBAGENT"):
        d["subagentRunId"] = i
        d["name"] = "n"
    if t == "CUSTOM":
        d.update(name="c", value=None)
    if t == "RAW":
        d["event"] = {}
    if r.random() < 0.1:
        d["metadata"] = {"k": r.random()}
    if (
        r.random() < 0.1
        and not t.startswith("RUN")
        and t != "MESSAGES_SNAPSHOT"
        and not t.startswith("SUBAGENT")
    ):
        d["subagentRunId"] = r.choice(_IDS)
    return d


@pytest.mark.parametrize("mode", ["strict", "tolerant", "off"])
def test_random_event_sequences_never_raise_and_leave_valid_messages(mode):
    for seed in range(150):
        r = random.Random(seed)
        p = Pipeline(verify=mode)
        for _ in range(r.randint(1, 40)):
            p.feed_bytes(sse(_random_event(r)))
        p.close()
        # (via builtins: a delta may leave a lone surrogate half in a message, which is legal
        # JSON as a \u escape but which msgspec's UTF-8 encoder refuses)
        plain_messages = msgspec.to_builtins(p.conversation.messages)
        assert len(msgspec.convert(plain_messages, type=list[T.Message])) == len(p.conversation)


def test_token_usage_of_run_finished_and_run_error_reaches_done():
    """RUN_FINISHED.usage / RUN_ERROR.usage are data the caller needs (billing):
    never dropped; absent usage is (), not zeros."""
    from agui.types import TokenUsage
    from agui.updates import Done

    stream = (
        b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r1"}\n\n'
        b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r1","usage":'
        b'[{"provider":"p","inputTokens":12,"outputTokens":3,"totalTokens":15}]}\n\n'
        b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r2"}\n\n'
        b'data: {"type":"RUN_ERROR","message":"boom","usage":[{"inputTokens":7}]}\n\n'
        b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r3"}\n\n'
        b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r3"}\n\n'
    )
    p = Pipeline(verify="strict")
    dones = [u for u in p.feed_bytes(stream) + p.close() if isinstance(u, Done)]
    assert [d.outcome for d in dones] == ["success", "failed", "success"]
    assert dones[0].usage == (
        TokenUsage(provider="p", input_tokens=12, output_tokens=3, total_tokens=15),
    )
    assert dones[1].usage == (TokenUsage(input_tokens=7),)
    assert dones[2].usage == ()


def test_a_delta_whose_apply_raises_is_an_apply_failed_warning_and_the_run_goes_on():
    conv = Conversation()
    pipeline = Pipeline(conv)
    pipeline.feed_bytes(sse(START, *text("m1")[:1]))
    # a broken fragment buffer: the delta's append raises
    conv._store.by_id["m1"].frags = 5  # type: ignore[assignment]
    out = pipeline.feed_bytes(
        sse({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "x"})
    )
    assert [(type(u), getattr(u, "code", None)) for u in out] == [(WarningUpdate, "apply_failed")]
    assert "TEXT_MESSAGE_CONTENT" in out[0].message
    out = pipeline.feed_bytes(sse(*text("m2", "y")[:2]))
    assert [type(u) for u in out][-1] is TextDelta
    assert not pipeline.finished


def test_a_conversation_subclass_that_overrides_apply_sees_every_delta():
    seen: list[str] = []

    class Watching(Conversation):
        def apply(self, event: T.Event) -> list[Any]:
            seen.append(type(event).__name__)
            return super().apply(event)

    pipeline = Pipeline(Watching())
    pipeline.feed_bytes(sse(START, *text("m1", "a", "b"), FINISH))
    assert seen.count("TextMessageContentEvent") == 2
    assert pipeline.conversation.message("m1").content == "ab"


def test_a_subclass_apply_that_raises_is_an_apply_failed_warning_on_every_path():
    """An event whose (overridden) apply raises is reported, not raised, whether it
    takes the pipeline's shortcut (a run open, no chunk stream) or the full path
    (a chunk stream open), and the run goes on."""

    class Broken(Conversation):
        def apply(self, event: T.Event) -> list[Any]:
            if isinstance(event, T.CustomEvent):
                raise RuntimeError("broken subclass")
            return super().apply(event)

    pipeline = Pipeline(Broken())
    custom = {"type": "CUSTOM", "name": "n", "value": 1}
    chunk = {"type": "TEXT_MESSAGE_CHUNK", "messageId": "c1", "delta": "x"}
    ups = feed_all(pipeline, START, custom, chunk, custom, FINISH)
    failed = [u for u in of(WarningUpdate, ups) if u.code == "apply_failed"]
    assert [("CUSTOM" in u.message, "broken subclass" in u.message) for u in failed] == [
        (True, True),
        (True, True),
    ]
    assert pipeline.conversation.text_of("c1") == "x"
    assert [u.outcome for u in of(Done, ups)] == ["success"]


def test_each_event_is_judged_in_the_state_it_arrives_in_at_its_position():
    """The shortcut for plain events follows the run and the chunk streams: a chunk
    stream routes every event through the normalizer until it closes, between runs
    every event is refused by the lifecycle, a new run serves them again. A violation
    names its event's position: the verifier's in the delivered stream (the events a
    chunk stream adds count), the normalizer's in the input."""
    p = Pipeline()
    late = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "late"}
    after_end = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m2", "delta": "z"}
    ups = feed_all(
        p,
        START,  # input 0, delivered 0
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "c1", "delta": "x"},  # input 1: 1, 2
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "y"},  # input 2: 3
        *text("m1", "a"),  # inputs 3-5: 4 (the chunk stream's END), 5, 6, 7
        FINISH,  # input 6: 8
        late,  # input 7, delivered 9: refused, no run is open
        {**START, "runId": "r2"},  # input 8: 10
        *text("m2", "b"),  # inputs 9-11: 11-13
        after_end,  # input 12, delivered 14: refused, m2 is closed
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "w"},  # input 13: refused, nothing to continue
        {**FINISH, "runId": "r2"},  # input 14: 15
    )
    refused = [(u.error.code, u.error.position) for u in of(ErrorUpdate, ups)]
    assert refused == [
        ("event_after_run_finished", 9),
        ("content_without_start", 14),
        ("chunk_missing_id", 13),
    ]
    conversation = p.conversation
    assert [conversation.text_of(m) for m in ("c1", "m1", "m2")] == ["xy", "a", "b"]
    assert [u.outcome for u in of(Done, ups)] == ["success", "success"]
