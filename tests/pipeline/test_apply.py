"""Conversation (the applier): the reducer rules of notes/agui-rules.md section 4."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from agui import types as T
from agui.errors import RunError
from agui.pipeline._apply import Conversation
from agui.updates import (
    ActivityChanged,
    EncryptedValue,
    ErrorUpdate,
    MessagesSnapshot,
    MetadataChanged,
    Paused,
    RunStarted,
    StateChanged,
    TextDelta,
    TextEnded,
    TextStarted,
    ToolCallArgs,
    ToolCallEnded,
    ToolCallStarted,
    ToolResult,
    WarningUpdate,
)


def ev(type_: str, **fields: Any) -> Any:
    """A generated event from wire-shaped (camelCase) fields."""
    return msgspec.convert({"type": type_, **fields}, T.Event)


def msg(**fields: Any) -> Any:
    return msgspec.convert(fields, T.Message)


def run(conv: Conversation, *events: Any) -> list[Any]:
    out: list[Any] = []
    for e in events:
        out.extend(conv.apply(e))
    return out


def wire(conv: Conversation) -> list[dict[str, Any]]:
    return msgspec.to_builtins(conv.messages)


def text(mid: str, *deltas: str, role: str | None = None) -> list[Any]:
    start = {"messageId": mid} | ({"role": role} if role else {})
    return [
        ev("TEXT_MESSAGE_START", **start),
        *(ev("TEXT_MESSAGE_CONTENT", messageId=mid, delta=d) for d in deltas),
        ev("TEXT_MESSAGE_END", messageId=mid),
    ]


def call(cid: str, name: str, *deltas: str, parent: str | None = None) -> list[Any]:
    start = {"toolCallId": cid, "toolCallName": name}
    if parent is not None:
        start["parentMessageId"] = parent
    return [
        ev("TOOL_CALL_START", **start),
        *(ev("TOOL_CALL_ARGS", toolCallId=cid, delta=d) for d in deltas),
        ev("TOOL_CALL_END", toolCallId=cid),
    ]


def warnings(updates: list[Any]) -> list[str]:
    return [u.code for u in updates if isinstance(u, WarningUpdate)]


# --- text messages ------------------------------------------------------------------


def test_text_triad_assembles_deltas_and_reports_each_step():
    conv = Conversation()
    ups = run(conv, *text("m1", "Hel", "lo, ", "world"))
    assert ups == [
        TextStarted("m1", "assistant"),
        TextDelta("m1", "Hel"),
        TextDelta("m1", "lo, "),
        TextDelta("m1", "world"),
        TextEnded("m1", "Hello, world"),
    ]
    assert wire(conv) == [{"role": "assistant", "id": "m1", "content": "Hello, world"}]


def test_text_role_default_is_assistant_and_given_role_is_kept():
    conv = Conversation()
    run(conv, *text("u1", "hi", role="user"), *text("a1", "yo"))
    assert [m["role"] for m in wire(conv)] == ["user", "assistant"]


def test_text_start_name_is_recorded():
    conv = Conversation()
    run(conv, ev("TEXT_MESSAGE_START", messageId="m1", name="helper"))
    assert wire(conv)[0]["name"] == "helper"


def test_reopened_message_id_appends_to_its_content():
    conv = Conversation()
    run(conv, *text("m1", "First half."), *text("m1", " Second half."))
    assert wire(conv) == [{"role": "assistant", "id": "m1", "content": "First half. Second half."}]


def test_multibyte_text_split_across_deltas_reassembles_exactly():
    conv = Conversation()
    run(conv, *text("m1", "caf", "e\u0301 ", "\U0001f468", "\u200d", "\U0001f469"))
    assert conv.text_of("m1") == "cafe\u0301 \U0001f468\u200d\U0001f469"


def test_empty_delta_is_content_not_a_close():
    conv = Conversation()
    ups = run(conv, *text("m1", "", "x", ""))
    assert [u.delta for u in ups if isinstance(u, TextDelta)] == ["", "x", ""]
    assert conv.text_of("m1") == "x"


def test_content_for_unknown_message_is_warned_and_skipped():
    conv = Conversation()
    ups = conv.apply(ev("TEXT_MESSAGE_CONTENT", messageId="ghost", delta="boo"))
    assert warnings(ups) == ["apply_unknown_target"]
    assert conv.messages == []


def test_text_events_for_an_activity_message_are_dropped_with_a_warning():
    conv = Conversation()
    run(conv, ev("ACTIVITY_SNAPSHOT", messageId="a1", activityType="t", content={"n": 1}))
    ups = run(conv, *text("a1", "text"))
    assert warnings(ups) == ["apply_activity_target"] * 3
    assert wire(conv) == [
        {"role": "activity", "id": "a1", "activityType": "t", "content": {"n": 1}}
    ]


def test_text_delta_on_multimodal_user_content_replaces_it_with_text():
    conv = Conversation([msg(id="u1", role="user", content=[{"type": "text", "text": "a"}])])
    run(conv, ev("TEXT_MESSAGE_CONTENT", messageId="u1", delta="b"))
    assert wire(conv)[0]["content"] == "b"


# --- reasoning ------------------------------------------------------------------------


def test_reasoning_message_assembles_with_role_reasoning():
    conv = Conversation()
    run(
        conv,
        ev("REASONING_START", messageId="r"),
        ev("REASONING_MESSAGE_START", messageId="r1", role="reasoning"),
        ev("REASONING_MESSAGE_CONTENT", messageId="r1", delta="think"),
        ev("REASONING_MESSAGE_CONTENT", messageId="r1", delta="ing"),
        ev("REASONING_MESSAGE_END", messageId="r1"),
        ev("REASONING_END", messageId="r"),
    )
    assert wire(conv) == [{"role": "reasoning", "id": "r1", "content": "thinking"}]


def test_encrypted_value_lands_on_tool_call_and_message_but_not_activity():
    conv = Conversation()
    run(conv, *text("m1", "hi"), *call("c1", "f", "{}", parent="m1"))
    run(conv, ev("ACTIVITY_SNAPSHOT", messageId="a1", activityType="t", content={}))
    u1 = conv.apply(
        ev(
            "REASONING_ENCRYPTED_VALUE",
            subtype="tool-call",
            entityId="c1",
            encryptedValue="E1",
            encryptedValueType="vendor/v1",
        )
    )
    u2 = conv.apply(
        ev("REASONING_ENCRYPTED_VALUE", subtype="message", entityId="m1", encryptedValue="E2")
    )
    u3 = conv.apply(
        ev("REASONING_ENCRYPTED_VALUE", subtype="message", entityId="a1", encryptedValue="E3")
    )
    u4 = conv.apply(
        ev("REASONING_ENCRYPTED_VALUE", subtype="message", entityId="nope", encryptedValue="E4")
    )
    assert u1 == [EncryptedValue("tool-call", "c1")]
    assert u2 == [EncryptedValue("message", "m1")]
    assert warnings(u3) == warnings(u4) == ["apply_unknown_entity"]
    m = wire(conv)[0]
    assert m["encryptedValue"] == "E2"
    assert m["toolCalls"][0]["encryptedValue"] == "E1"
    assert m["toolCalls"][0]["encryptedValueType"] == "vendor/v1"
    assert "encryptedValue" not in wire(conv)[1]


# --- tool calls -----------------------------------------------------------------------


def test_tool_call_with_parent_attaches_to_the_assistant_message():
    conv = Conversation()
    ups = run(conv, *text("m1", "Looking."), *call("c1", "search", '{"q":', '"agui"}', parent="m1"))
    assert ToolCallStarted("c1", "search", "m1") in ups
    assert ToolCallArgs("c1", '{"q":') in ups
    assert ToolCallEnded("c1", "search", '{"q":"agui"}') in ups
    assert wire(conv) == [
        {
            "role": "assistant",
            "id": "m1",
            "content": "Looking.",
            "toolCalls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"q":"agui"}'},
                }
            ],
        }
    ]


def test_tool_call_without_parent_gets_its_own_message_named_after_the_call():
    conv = Conversation()
    run(conv, *text("m1", "x"), *call("c1", "f"))
    assert [m["id"] for m in wire(conv)] == ["m1", "c1"]
    assert wire(conv)[1]["toolCalls"][0]["id"] == "c1"
    assert "content" not in wire(conv)[1]


def test_tool_call_parent_naming_nothing_creates_that_message_and_text_reuses_it():
    conv = Conversation()
    run(conv, *call("c1", "f", parent="m9"), *text("m9", "after"))
    assert wire(conv) == [
        {
            "role": "assistant",
            "id": "m9",
            "content": "after",
            "toolCalls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}
            ],
        }
    ]


def test_tool_call_parent_naming_a_user_message_is_warned_and_gets_own_message():
    conv = Conversation()
    run(conv, *text("u1", "q", role="user"))
    ups = run(conv, *call("c1", "f", parent="u1"))
    assert warnings(ups) == ["apply_parent_not_assistant"]
    assert [m["id"] for m in wire(conv)] == ["u1", "c1"]


def test_replayed_tool_call_start_is_idempotent_and_keeps_arguments():
    conv = Conversation()
    run(conv, *call("c1", "f", '{"a":1}', parent="m1"))
    ups = conv.apply(ev("TOOL_CALL_START", toolCallId="c1", toolCallName="f"))
    assert ups == []
    assert len(conv.messages) == 1
    assert conv.messages[0].tool_calls[0].function.arguments == '{"a":1}'


def test_replayed_tool_call_start_with_new_name_renames_in_place_with_warning():
    conv = Conversation()
    run(conv, *call("c1", "f", "{}"))
    ups = conv.apply(ev("TOOL_CALL_START", toolCallId="c1", toolCallName="g"))
    assert warnings(ups) == ["apply_tool_call_renamed"]
    assert conv.messages[0].tool_calls[0].function.name == "g"


def test_malformed_tool_arguments_are_kept_raw():
    conv = Conversation()
    ups = run(conv, *call("c1", "f", '{"a": tru'))
    assert ToolCallEnded("c1", "f", '{"a": tru') in ups


def test_tool_result_is_placed_after_the_calling_message_even_after_later_text():
    conv = Conversation()
    run(
        conv,
        *text("m1", "calling"),
        *call("c1", "f", "{}", parent="m1"),
        *call("c2", "g", "{}", parent="m1"),
        *text("m2", "later"),
    )
    ups = run(
        conv,
        ev("TOOL_CALL_RESULT", messageId="t1", toolCallId="c1", content="one"),
        ev("TOOL_CALL_RESULT", messageId="t2", toolCallId="c2", content="two"),
    )
    assert ups == [ToolResult("t1", "c1", "one"), ToolResult("t2", "c2", "two")]
    assert [(m["id"], m["role"]) for m in wire(conv)] == [
        ("m1", "assistant"),
        ("t1", "tool"),
        ("t2", "tool"),
        ("m2", "assistant"),
    ]
    assert wire(conv)[1]["toolCallId"] == "c1"


def test_tool_result_for_unknown_call_is_appended():
    conv = Conversation()
    run(
        conv, *text("m1", "x"), ev("TOOL_CALL_RESULT", messageId="t1", toolCallId="zz", content="r")
    )
    assert [m["id"] for m in wire(conv)] == ["m1", "t1"]


def test_tool_result_content_parts_are_kept():
    parts = [
        {"type": "text", "text": "see"},
        {"type": "image", "source": {"type": "url", "value": "u"}},
    ]
    conv = Conversation()
    run(
        conv,
        *call("c1", "f"),
        ev("TOOL_CALL_RESULT", messageId="t1", toolCallId="c1", content=parts),
    )
    assert wire(conv)[1]["content"] == parts


def test_pending_tool_call_ids_are_derived_from_unanswered_calls_of_the_run():
    conv = Conversation()
    run(
        conv,
        ev("RUN_STARTED", threadId="t", runId="r"),
        *call("c1", "f"),
        *call("c2", "g"),
        ev("TOOL_CALL_RESULT", messageId="t1", toolCallId="c1", content="done"),
        ev("RUN_FINISHED", threadId="t", runId="r"),
    )
    assert conv.outcome == "success"
    assert conv.pending_tool_call_ids == ["c2"]


def test_producer_pending_tool_call_ids_win_over_the_derived_list():
    conv = Conversation()
    run(
        conv,
        ev("RUN_STARTED", threadId="t", runId="r"),
        *call("c1", "f"),
        ev(
            "RUN_FINISHED",
            threadId="t",
            runId="r",
            result={"ok": True},
            outcome={"type": "success", "pendingToolCallIds": ["c9"]},
        ),
    )
    assert conv.pending_tool_call_ids == ["c9"]
    assert conv.result == {"ok": True}


def test_empty_pending_tool_call_ids_means_no_call_is_pending():
    conv = Conversation()
    run(
        conv,
        ev("RUN_STARTED", threadId="t", runId="r"),
        *call("c1", "lookup"),
        ev(
            "RUN_FINISHED",
            threadId="t",
            runId="r",
            outcome={"type": "success", "pendingToolCallIds": []},
        ),
    )
    assert conv.pending_tool_call_ids == []
    assert conv.unanswered_tool_call_ids() == []


def test_a_tool_message_in_a_messages_snapshot_answers_its_call():
    conv = Conversation()
    snapshot = [
        {
            "id": "a1",
            "role": "assistant",
            "toolCalls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "done"},
    ]
    run(
        conv,
        ev("RUN_STARTED", threadId="t", runId="r"),
        *call("c1", "f", parent="a1"),
        *call("c2", "f"),
        ev("MESSAGES_SNAPSHOT", messages=[*snapshot]),
        ev("RUN_FINISHED", threadId="t", runId="r"),
    )
    # c1 answered by the snapshot's tool message; c2 dropped by the snapshot: nothing left
    assert conv.pending_tool_call_ids == []


def test_calls_to_tools_nobody_offered_are_the_servers():
    conv = Conversation()
    conv.offered_tools = frozenset({"pick_colour"})
    run(
        conv,
        ev("RUN_STARTED", threadId="t", runId="r"),
        *call("c1", "lookup"),
        *call("c2", "pick_colour"),
        ev("RUN_FINISHED", threadId="t", runId="r"),
    )
    assert conv.pending_tool_call_ids == ["c2"]


def test_run_started_input_names_the_offered_tools_when_no_session_did():
    conv = Conversation()
    tools = [{"name": "pick_colour", "description": "x", "parameters": {}}]
    run(
        conv,
        ev(
            "RUN_STARTED",
            threadId="t",
            runId="r",
            input={
                "threadId": "t",
                "runId": "r",
                "messages": [],
                "tools": tools,
                "context": [],
                "state": {},
                "forwardedProps": {},
            },
        ),
        *call("c1", "lookup"),
        *call("c2", "pick_colour"),
        ev("RUN_FINISHED", threadId="t", runId="r"),
    )
    assert conv.offered_tools == frozenset({"pick_colour"})
    assert conv.pending_tool_call_ids == ["c2"]


def test_unknown_offered_tools_count_every_unanswered_call_as_the_reference_does():
    conv = Conversation()  # no session told it what was offered: offered_tools is None
    run(
        conv,
        ev("RUN_STARTED", threadId="t", runId="r"),
        *call("c1", "lookup"),
        ev("RUN_FINISHED", threadId="t", runId="r"),
    )
    assert conv.offered_tools is None and conv.pending_tool_call_ids == ["c1"]


# --- state ------------------------------------------------------------------------------


@pytest.mark.parametrize("snapshot", [None, 0, "", False, [], {}, ["only-this"]])
def test_state_snapshot_replaces_with_any_json_including_null_and_falsy(snapshot):
    conv = Conversation(state={"old": 1})
    ups = conv.apply(ev("STATE_SNAPSHOT", snapshot=snapshot))
    assert ups == [StateChanged(snapshot, None)]
    assert conv.state == snapshot and type(conv.state) is type(snapshot)


def test_state_delta_applies_in_order():
    conv = Conversation(state={"plan": {"status": "open", "steps": ["outline"]}})
    ups = run(
        conv,
        ev("STATE_DELTA", delta=[{"op": "replace", "path": "/plan/status", "value": "closed"}]),
        ev("STATE_DELTA", delta=[{"op": "add", "path": "/plan/steps/-", "value": "review"}]),
    )
    assert conv.state == {"plan": {"status": "closed", "steps": ["outline", "review"]}}
    assert ups[1].patch == [{"op": "add", "path": "/plan/steps/-", "value": "review"}]


def test_failing_multi_op_state_delta_leaves_state_untouched_and_warns():
    conv = Conversation(state={"a": 1})
    ups = conv.apply(
        ev(
            "STATE_DELTA",
            delta=[
                {"op": "add", "path": "/b", "value": 2},
                {"op": "replace", "path": "/missing", "value": 3},
            ],
        )
    )
    assert warnings(ups) == ["apply_state_patch_failed"]
    assert "Failed to apply state patch" in ups[0].message
    assert conv.state == {"a": 1}


def test_failing_test_op_leaves_state_untouched():
    conv = Conversation(state={"a": 1})
    ups = conv.apply(
        ev(
            "STATE_DELTA",
            delta=[{"op": "test", "path": "/a", "value": 2}, {"op": "remove", "path": "/a"}],
        )
    )
    assert warnings(ups) == ["apply_state_patch_failed"]
    assert conv.state == {"a": 1}


def test_failing_move_leaves_state_untouched():
    conv = Conversation(state={"a": 1})
    ups = conv.apply(ev("STATE_DELTA", delta=[{"op": "move", "from": "/a", "path": "/x/y"}]))
    assert warnings(ups) == ["apply_state_patch_failed"]
    assert conv.state == {"a": 1}


def test_state_patch_on_null_state_fails_cleanly():
    conv = Conversation()
    conv.apply(ev("STATE_SNAPSHOT", snapshot=None))
    ups = conv.apply(ev("STATE_DELTA", delta=[{"op": "add", "path": "/a", "value": 1}]))
    assert warnings(ups) == ["apply_state_patch_failed"]
    assert conv.state is None


def test_absent_initial_state_reads_as_an_empty_object_for_a_first_delta():
    conv = Conversation()
    assert conv.state is None
    conv.apply(ev("STATE_DELTA", delta=[{"op": "add", "path": "/n", "value": 7}]))
    assert conv.state == {"n": 7}


def test_delivered_events_are_never_mutated_by_later_patches():
    conv = Conversation()
    snap = ev("STATE_SNAPSHOT", snapshot={"items": []})
    add = ev("STATE_DELTA", delta=[{"op": "add", "path": "/obj", "value": {"k": []}}])
    run(
        conv,
        snap,
        add,
        ev("STATE_DELTA", delta=[{"op": "add", "path": "/items/-", "value": 1}]),
        ev("STATE_DELTA", delta=[{"op": "add", "path": "/obj/k/-", "value": 2}]),
    )
    assert conv.state == {"items": [1], "obj": {"k": [2]}}
    assert snap.snapshot == {"items": []}
    assert msgspec.to_builtins(add.delta)[0]["value"] == {"k": []}


# --- messages snapshot -----------------------------------------------------------------------


def test_messages_snapshot_reconciles_by_id_keeping_activity_in_place():
    conv = Conversation(
        [
            msg(id="m1", role="user", content="hi"),
            msg(id="asst-1", role="assistant", content="a"),
            msg(id="tool-stream", role="tool", content="r", toolCallId="c"),
            msg(id="act-1", role="activity", activityType="t", content={}),
            msg(id="asst-2", role="assistant", content="b"),
        ]
    )
    ups = conv.apply(
        ev(
            "MESSAGES_SNAPSHOT",
            messages=[
                {"id": "m1", "role": "user", "content": "hi"},
                {"id": "asst-1", "role": "assistant", "content": "a, corrected"},
                {"id": "tool-canon", "role": "tool", "content": "r", "toolCallId": "c"},
                {"id": "asst-2", "role": "assistant", "content": "b"},
            ],
        )
    )
    # what it brought: asst-1 replaced, tool-canon added, tool-stream removed (list order)
    [up] = ups
    assert isinstance(up, MessagesSnapshot) and up.count == 5
    assert [msgspec.to_builtins(m) for m in up.changed] == [
        {"id": "asst-1", "role": "assistant", "content": "a, corrected"},
        {"id": "tool-canon", "role": "tool", "content": "r", "toolCallId": "c"},
    ]
    assert (up.replaced, up.removed) == ({"asst-1"}, ("tool-stream",))
    assert [m["id"] for m in wire(conv)] == ["m1", "asst-1", "act-1", "asst-2", "tool-canon"]
    assert wire(conv)[1]["content"] == "a, corrected"


def test_a_messages_snapshot_repeating_the_conversation_brings_nothing():
    conv = Conversation([msg(id="m1", role="user", content="hi")])
    conv.apply(ev("TEXT_MESSAGE_START", messageId="a1", role="assistant"))
    conv.apply(ev("TEXT_MESSAGE_CONTENT", messageId="a1", delta="hel"))
    conv.apply(ev("TEXT_MESSAGE_CONTENT", messageId="a1", delta="lo"))
    conv.apply(ev("TEXT_MESSAGE_END", messageId="a1"))
    conv.apply(ev("TOOL_CALL_START", toolCallId="c1", toolCallName="f", parentMessageId="a1"))
    conv.apply(ev("TOOL_CALL_ARGS", toolCallId="c1", delta='{"a": 1}'))
    conv.apply(ev("TOOL_CALL_END", toolCallId="c1"))
    same = [
        {"id": "m1", "role": "user", "content": "hi"},
        {
            "id": "a1",
            "role": "assistant",
            "content": "hello",
            "toolCalls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
            ],
            "metadata": {"not": "compared"},
        },
    ]
    assert conv.apply(ev("MESSAGES_SNAPSHOT", messages=same)) == [MessagesSnapshot(2)]
    # new arguments for the same call: the message is replaced
    same[1]["toolCalls"][0]["function"]["arguments"] = '{"a": 2}'
    [up] = conv.apply(ev("MESSAGES_SNAPSHOT", messages=same))
    assert ([m.id for m in up.changed], up.replaced, up.removed) == (["a1"], {"a1"}, ())


def test_messages_snapshot_with_activity_role_owns_activity_messages():
    conv = Conversation([msg(id="act-1", role="activity", activityType="t", content={})])
    conv.apply(
        ev(
            "MESSAGES_SNAPSHOT",
            messages=[{"id": "act-2", "role": "activity", "activityType": "t", "content": {}}],
        )
    )
    assert [m["id"] for m in wire(conv)] == ["act-2"]


def test_messages_snapshot_keeps_reasoning_unless_it_carries_reasoning():
    conv = Conversation(
        [msg(id="r1", role="reasoning", content="hmm"), msg(id="a", role="assistant", content="x")]
    )
    conv.apply(ev("MESSAGES_SNAPSHOT", messages=[{"id": "a", "role": "assistant", "content": "x"}]))
    assert [m["id"] for m in wire(conv)] == ["r1", "a"]
    conv.apply(
        ev(
            "MESSAGES_SNAPSHOT",
            messages=[
                {"id": "r2", "role": "reasoning", "content": "new"},
                {"id": "a", "role": "assistant"},
            ],
        )
    )
    assert [m["id"] for m in wire(conv)] == ["a", "r2"]


def test_messages_snapshot_authoritative_activity_types_metadata():
    conv = Conversation(
        [
            msg(id="s1", role="activity", activityType="search", content={}),
            msg(id="p1", role="activity", activityType="plan", content={}),
        ]
    )
    conv.apply(
        ev(
            "MESSAGES_SNAPSHOT",
            messages=[],
            metadata={"@ag-ui/client": {"authoritativeActivityTypes": ["search"]}},
        )
    )
    assert [m["id"] for m in wire(conv)] == ["p1"]


def test_tool_calls_from_a_snapshot_accept_later_arguments_and_results():
    conv = Conversation()
    conv.apply(
        ev(
            "MESSAGES_SNAPSHOT",
            messages=[
                {
                    "id": "a1",
                    "role": "assistant",
                    "toolCalls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{"},
                        }
                    ],
                }
            ],
        )
    )
    run(
        conv,
        ev("TOOL_CALL_ARGS", toolCallId="c1", delta="}"),
        ev("TOOL_CALL_RESULT", messageId="t1", toolCallId="c1", content="ok"),
    )
    assert wire(conv)[0]["toolCalls"][0]["function"]["arguments"] == "{}"
    assert [m["id"] for m in wire(conv)] == ["a1", "t1"]


# --- activity --------------------------------------------------------------------------------


def test_activity_snapshot_then_delta():
    conv = Conversation()
    u1 = conv.apply(
        ev("ACTIVITY_SNAPSHOT", messageId="a1", activityType="web_search", content={"query": "q"})
    )
    u2 = conv.apply(
        ev(
            "ACTIVITY_DELTA",
            messageId="a1",
            activityType="web_search",
            patch=[{"op": "add", "path": "/found", "value": 3}],
        )
    )
    assert u1 == [ActivityChanged("a1", "web_search", {"query": "q"})]
    assert u2 == [ActivityChanged("a1", "web_search", {"query": "q", "found": 3})]


def test_activity_snapshot_replace_false_keeps_existing_content():
    conv = Conversation()
    run(
        conv,
        ev("ACTIVITY_SNAPSHOT", messageId="a1", activityType="t", content={"v": 1}),
        ev("ACTIVITY_SNAPSHOT", messageId="a1", activityType="u", content={"v": 2}, replace=False),
    )
    assert wire(conv)[0]["content"] == {"v": 1} and wire(conv)[0]["activityType"] == "t"
    conv.apply(ev("ACTIVITY_SNAPSHOT", messageId="a1", activityType="u", content={"v": 3}))
    assert wire(conv)[0]["content"] == {"v": 3} and wire(conv)[0]["activityType"] == "u"


def test_activity_snapshot_replaces_a_non_activity_message_in_place():
    conv = Conversation()
    run(conv, *text("m0", "a"), *text("m1", "b"), *text("m2", "c"))
    conv.apply(ev("ACTIVITY_SNAPSHOT", messageId="m1", activityType="t", content={}))
    assert [m["role"] for m in wire(conv)] == ["assistant", "activity", "assistant"]


def test_activity_delta_for_unknown_message_warns():
    conv = Conversation()
    ups = conv.apply(ev("ACTIVITY_DELTA", messageId="never", activityType="t", patch=[]))
    assert warnings(ups) == ["apply_unknown_activity"]
    assert "never" in ups[0].message and "ACTIVITY_DELTA" in ups[0].message


def test_failing_activity_delta_keeps_content_but_merges_metadata():
    conv = Conversation()
    conv.apply(ev("ACTIVITY_SNAPSHOT", messageId="a1", activityType="t", content={"v": 1}))
    ups = conv.apply(
        ev(
            "ACTIVITY_DELTA",
            messageId="a1",
            activityType="u",
            patch=[{"op": "remove", "path": "/nope"}],
            metadata={"k": 1},
        )
    )
    assert warnings(ups) == ["apply_activity_patch_failed"]
    assert wire(conv)[0] == {
        "role": "activity",
        "id": "a1",
        "activityType": "t",
        "content": {"v": 1},
        "metadata": {"k": 1},
    }


# --- metadata ---------------------------------------------------------------------------------


def test_metadata_merges_last_write_wins_without_recursion():
    conv = Conversation()
    run(
        conv,
        ev("TEXT_MESSAGE_START", messageId="m1", metadata={"a": 1, "trace": ["one", "two"]}),
        ev("TEXT_MESSAGE_CONTENT", messageId="m1", delta="done", metadata={"b": 2, "gone": None}),
        ev("TEXT_MESSAGE_END", messageId="m1", metadata={"c": 3, "trace": ["three"]}),
    )
    assert wire(conv)[0]["metadata"] == {"a": 1, "b": 2, "gone": None, "c": 3, "trace": ["three"]}


def test_tool_call_metadata_lands_on_the_call_and_result_metadata_on_the_tool_message():
    conv = Conversation()
    ups = run(
        conv,
        ev(
            "TOOL_CALL_START",
            toolCallId="c1",
            toolCallName="f",
            parentMessageId="m1",
            metadata={"p": 1},
        ),
        ev("TOOL_CALL_END", toolCallId="c1", metadata={"q": 2}),
        ev("TOOL_CALL_RESULT", messageId="t1", toolCallId="c1", content="r", metadata={"r": 3}),
    )
    assert MetadataChanged("c1", {"p": 1, "q": 2}) in ups
    assert wire(conv)[0]["toolCalls"][0]["metadata"] == {"p": 1, "q": 2}
    assert "metadata" not in wire(conv)[0]
    assert wire(conv)[1]["metadata"] == {"r": 3}


def test_metadata_is_not_aliased_with_the_event():
    conv = Conversation()
    start = ev("TEXT_MESSAGE_START", messageId="m1", metadata={"list": [1]})
    conv.apply(start)
    conv.messages[0].metadata["list"].append(2)
    assert start.metadata == {"list": [1]}


# --- run lifecycle -----------------------------------------------------------------------------


def test_run_started_input_messages_are_appended_once():
    conv = Conversation([msg(id="u1", role="user", content="hi")])
    ups = conv.apply(
        ev(
            "RUN_STARTED",
            threadId="t",
            runId="r",
            input={
                "threadId": "t",
                "runId": "r",
                "messages": [
                    {"id": "u1", "role": "user", "content": "hi"},
                    {"id": "u2", "role": "user", "content": "again"},
                ],
            },
        )
    )
    assert ups == [RunStarted("r", "t")]
    assert [m["id"] for m in wire(conv)] == ["u1", "u2"]
    assert (conv.run_id, conv.thread_id, conv.outcome) == ("r", "t", None)


def test_interrupt_outcome_pauses_with_every_interrupt():
    conv = Conversation()
    ups = run(
        conv,
        ev("RUN_STARTED", threadId="t", runId="r"),
        ev(
            "RUN_FINISHED",
            threadId="t",
            runId="r",
            outcome={
                "type": "interrupt",
                "interrupts": [
                    {"id": "i1", "reason": "confirmation"},
                    {"id": "i2", "reason": "tool_call"},
                ],
            },
        ),
    )
    assert isinstance(ups[-1], Paused)
    assert [i.id for i in ups[-1].interrupts] == ["i1", "i2"]
    assert [i.id for i in conv.pending_interrupts] == ["i1", "i2"]
    assert conv.outcome == "interrupted"
    conv.apply(ev("RUN_STARTED", threadId="t", runId="r2"))
    conv.apply(ev("RUN_ERROR", message="boom"))
    assert len(conv.pending_interrupts) == 2  # RUN_ERROR leaves them
    conv.apply(ev("RUN_STARTED", threadId="t", runId="r3"))
    conv.apply(ev("RUN_FINISHED", threadId="t", runId="r3"))
    assert conv.pending_interrupts == []


def test_cancelled_outcome():
    conv = Conversation()
    run(conv, ev("RUN_STARTED", threadId="t", runId="r"))
    assert (
        conv.apply(ev("RUN_FINISHED", threadId="t", runId="r", outcome={"type": "cancelled"})) == []
    )
    assert conv.outcome == "cancelled"


def test_run_error_is_reported_as_fatal_run_error():
    conv = Conversation()
    ups = run(
        conv, ev("RUN_STARTED", threadId="t", runId="r"), ev("RUN_ERROR", message="nope", code="E1")
    )
    err = ups[-1]
    assert isinstance(err, ErrorUpdate) and err.fatal and isinstance(err.error, RunError)
    assert (err.error.message, err.error.code) == ("nope", "E1")
    assert conv.outcome == "failed" and conv.run_error is err.error


def test_chunk_events_are_refused_with_a_warning():
    conv = Conversation()
    ups = conv.apply(ev("TEXT_MESSAGE_CHUNK", messageId="m1", delta="x"))
    assert warnings(ups) == ["apply_chunk_not_normalized"]
    assert conv.messages == []


def test_bad_data_never_raises():
    conv = Conversation()
    bad = T.TextMessageContentEvent(message_id="m1", delta="x")
    conv.apply(ev("TEXT_MESSAGE_START", messageId="m1"))
    bad.delta = 42  # a struct mutated into nonsense after decoding
    ups = conv.apply(bad)
    assert all(isinstance(u, (WarningUpdate, TextDelta)) for u in ups)
    assert conv.apply(object()) == [WarningUpdate("apply_unknown_event", "cannot apply event None")]


# --- read side -----------------------------------------------------------------------------------


def test_input_messages_strip_activity_and_keep_reasoning():
    conv = Conversation()
    conv.add_user_message("hi", message_id="u1")
    run(conv, ev("ACTIVITY_SNAPSHOT", messageId="a1", activityType="t", content={}))
    run(conv, ev("REASONING_MESSAGE_START", messageId="r1", role="reasoning"))
    assert [m.id for m in conv.input_messages()] == ["u1", "r1"]


def test_add_user_message_mints_an_id():
    conv = Conversation()
    mid = conv.add_user_message("hello")
    assert conv.message(mid).content == "hello" and len(mid) == 36
    assert conv.message("nope") is None


def test_built_structs_are_cached_until_the_message_changes():
    conv = Conversation()
    run(conv, *text("m1", "a"), *text("m2", "b"))
    first = conv.messages
    again = conv.messages
    assert first[0] is again[0] and first[1] is again[1]
    conv.apply(ev("TEXT_MESSAGE_CONTENT", messageId="m2", delta="c"))
    third = conv.messages
    assert third[0] is first[0] and third[1] is not first[1]
    assert third[1].content == "bc"


def test_a_read_between_deltas_sees_every_later_delta():
    """The applier keeps text and arguments as fragments and builds structs on reads:
    a read (join, build) between deltas, whatever state the record started in (opened
    by a START, given to the constructor, a snapshot's call, a tool result's text,
    multimodal content turned to text by an empty delta), never hides a later delta."""
    conv = Conversation(
        [
            msg(id="u1", role="user", content="hi"),
            msg(id="u2", role="user", content=[{"type": "text", "text": "a"}]),
        ]
    )

    def content(mid: str) -> Any:
        return next(m["content"] for m in wire(conv) if m["id"] == mid)

    def arguments(cid: str) -> str:
        calls = [c for m in wire(conv) for c in m.get("toolCalls", ())]
        return next(c["function"]["arguments"] for c in calls if c["id"] == cid)

    conv.apply(ev("TEXT_MESSAGE_START", messageId="m1"))
    assert content("m1") == ""
    for delta, seen in (("a", "a"), ("b", "ab")):
        conv.apply(ev("TEXT_MESSAGE_CONTENT", messageId="m1", delta=delta))
        assert content("m1") == seen and conv.text_of("m1") == seen
    for delta, seen in (("!", "hi!"), ("?", "hi!?")):
        conv.apply(ev("TEXT_MESSAGE_CONTENT", messageId="u1", delta=delta))
        assert content("u1") == seen
    conv.apply(ev("TEXT_MESSAGE_CONTENT", messageId="u2", delta=""))
    assert content("u2") == ""
    conv.apply(ev("TEXT_MESSAGE_CONTENT", messageId="u2", delta="x"))
    assert content("u2") == "x"
    conv.apply(ev("TOOL_CALL_START", toolCallId="c1", toolCallName="f", parentMessageId="m1"))
    assert arguments("c1") == ""
    for delta, seen in (('{"a"', '{"a"'), (":1}", '{"a":1}')):
        conv.apply(ev("TOOL_CALL_ARGS", toolCallId="c1", delta=delta))
        assert arguments("c1") == seen and content("m1") == "ab"
    assert conv.apply(ev("TOOL_CALL_END", toolCallId="c1"))[-1] == ToolCallEnded(
        "c1", "f", '{"a":1}'
    )
    conv.apply(ev("TOOL_CALL_RESULT", messageId="t1", toolCallId="c1", content="ok"))
    assert content("t1") == "ok"
    conv.apply(ev("TEXT_MESSAGE_CONTENT", messageId="t1", delta="+"))
    assert content("t1") == "ok+"
    snapshot_call = {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{"}}
    conv.apply(
        ev(
            "MESSAGES_SNAPSHOT",
            messages=[*wire(conv), {"id": "a2", "role": "assistant", "toolCalls": [snapshot_call]}],
        )
    )
    assert arguments("c2") == "{"
    conv.apply(ev("TOOL_CALL_ARGS", toolCallId="c2", delta="}"))
    assert arguments("c2") == "{}" and content("m1") == "ab"


def test_dict_messages_are_accepted_by_the_constructor():
    conv = Conversation([{"id": "u1", "role": "user", "content": "hi"}], state={"x": 1})
    assert wire(conv) == [{"role": "user", "id": "u1", "content": "hi"}] and conv.state == {"x": 1}


def test_surrogate_pair_split_across_deltas_is_re_paired():
    conv = Conversation()
    ups = run(conv, *text("m1", "a\ud83d", "\ude00b"), *call("c1", "f", '{"e":"\ud83d', '\ude00"}'))
    assert TextEnded("m1", "a\U0001f600b") in ups
    assert ToolCallEnded("c1", "f", '{"e":"\U0001f600"}') in ups
    assert conv.messages[0].content == "a\U0001f600b"


def test_lone_surrogate_half_is_kept_until_its_partner_arrives():
    conv = Conversation()
    run(
        conv,
        ev("TEXT_MESSAGE_START", messageId="m1"),
        ev("TEXT_MESSAGE_CONTENT", messageId="m1", delta="x\ud83d"),
    )
    assert conv.text_of("m1") == "x\ud83d"  # read mid-stream: nothing replaced
    conv.apply(ev("TEXT_MESSAGE_CONTENT", messageId="m1", delta="\ude00"))
    assert conv.text_of("m1") == "x\U0001f600"


def test_long_message_is_compacted_into_blocks_and_reassembles_exactly():
    conv = Conversation()
    conv.apply(ev("TEXT_MESSAGE_START", messageId="m1"))
    parts = [f"{i}," for i in range(5000)] + ["\ud83d", "\ude00"]
    for p in parts:
        conv.apply(ev("TEXT_MESSAGE_CONTENT", messageId="m1", delta=p))
    rec = conv._store.by_id["m1"]
    assert len(rec.frags) < 512 + 10  # 9 blocks of 512 fragments + the newest ones
    assert conv.text_of("m1") == "".join(parts[:-2]) + "\U0001f600"


def test_input_state_is_an_empty_object_while_absent_or_null():
    conv = Conversation()
    assert conv.input_state() == {}
    conv.apply(ev("STATE_SNAPSHOT", snapshot=None))
    assert conv.input_state() == {}
    conv.apply(ev("STATE_SNAPSHOT", snapshot=[0]))
    assert conv.input_state() == [0]


def test_a_failed_state_patch_warning_names_the_operation_index_op_path_and_why():
    conv = Conversation(state={"count": 0, "tasks": [{"done": False}]})
    cases = [
        (
            [{"op": "add", "path": "/a", "value": 1}, {"op": "replace", "path": "/x", "value": 1}],
            "delta[1] replace '/x': member 'x' not found",
        ),
        (
            [{"op": "replace", "path": "/tasks/3/done", "value": True}],
            "delta[0] replace '/tasks/3/done': array index 3 is out of bounds (length 1)",
        ),
        (
            [{"op": "test", "path": "/count", "value": 2}, {"op": "remove", "path": "/count"}],
            "delta[0] test '/count': test failed: the value there is not the one given",
        ),
        (
            [{"op": "remove", "path": "/count"}, {"op": "add", "path": "/tasks/x", "value": 1}],
            "delta[1] add '/tasks/x': 'x' is not a valid array index",
        ),
        ([{"op": "add", "path": "/v"}], "delta[0] add '/v': the operation has no 'value' member"),
    ]
    for delta, why in cases:
        ups = conv.apply(ev("STATE_DELTA", delta=delta))
        assert warnings(ups) == ["apply_state_patch_failed"]
        assert ups[0].message == f"Failed to apply state patch (state unchanged): {why}"
    assert conv.state == {"count": 0, "tasks": [{"done": False}]}


def test_a_failed_activity_patch_warning_names_the_operation():
    conv = Conversation()
    conv.apply(ev("ACTIVITY_SNAPSHOT", messageId="a1", activityType="t", content={"v": [1]}))
    ups = conv.apply(
        ev(
            "ACTIVITY_DELTA",
            messageId="a1",
            activityType="t",
            patch=[{"op": "add", "path": "/w", "value": 1}, {"op": "remove", "path": "/v/5"}],
        )
    )
    assert warnings(ups) == ["apply_activity_patch_failed"]
    assert ups[0].message.endswith(
        "(content unchanged): patch[1] remove '/v/5': array index 5 is out of bounds (length 1)"
    )
