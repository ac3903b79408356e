"""LangGraph behind ``ag-ui-langgraph``'s own FastAPI endpoint on loopback, with an offline
fake chat model (``langgraph_peer``), consumed by agui's Session."""

from __future__ import annotations

import json
import logging

import pytest

from tests.interop.interop_helpers import (
    conversation,
    outcomes,
    raw_events,
    require,
    run_input,
    serve,
    session_for,
)

require("ag_ui_langgraph")
require("fastapi")

from agui.errors import ResumeError
from agui.pipeline._profiles import LANGGRAPH_ON_INTERRUPT
from agui.updates import Custom, Done, MessagesSnapshot, Paused, ToolCallEnded, WarningUpdate

# the adapter (0.0.47) calls a LangGraph API deprecated since LangGraph 1.0 on every run
pytestmark = pytest.mark.filterwarnings("ignore:`get_config_jsonschema` is deprecated")


@pytest.fixture(scope="module")
def url():
    """The adapter with its defaults (legacy on_interrupt, no interrupt outcome)."""
    from tests.interop.langgraph_peer import app

    with serve(app()) as base:
        yield base + "/agent"


@pytest.fixture(scope="module")
def outcome_url():
    """The adapter with ``emit_interrupt_outcome=True`` (the 1.0 interrupt outcome)."""
    from tests.interop.langgraph_peer import app

    with serve(app(outcome=True)) as base:
        yield base + "/agent"


@pytest.fixture(autouse=True)
def _quiet_deprecation(caplog):
    caplog.set_level(logging.ERROR, logger="ag_ui_langgraph")


def only_done(updates):
    judged = outcomes(updates)
    assert len(judged) == 1 and isinstance(judged[0], Done), judged
    return judged[0]


async def test_langgraph_streamed_text_and_the_final_snapshots(url):
    session = session_for(url)
    updates = await session.send("text").collect()
    assert only_done(updates).outcome == "success"
    assert conversation(session.messages) == [
        {"role": "user", "id": "m1", "content": "text"},
        {"role": "assistant", "id": "m2", "content": "Hello from the graph"},
    ]
    assert session.messages[1].id == "lg-text"  # the model's message id is kept
    # LangGraph ends every run with a MESSAGES_SNAPSHOT of the whole thread
    assert MessagesSnapshot(count=2) in updates
    # the state is the whole graph state: it carries the messages again, in LangChain's shape
    assert [m["type"] for m in session.state["messages"]] == ["human", "ai"]
    assert session.state["messages"][1]["content"] == "Hello from the graph"


async def test_langgraph_tool_call_state_and_result_misplaced_by_the_adapter_ids(url):
    session = session_for(url)
    updates = await session.send("tool").collect()
    assert only_done(updates).outcome == "success"
    # ag-ui-langgraph bug: the chunk that opens a call (name + id) also carries the first
    # argument fragment ('{"title"'), and the adapter drops it: the streamed arguments are
    # not JSON. The closing MESSAGES_SNAPSHOT carries the right arguments.
    [ended] = [u for u in updates if isinstance(u, ToolCallEnded)]
    assert ended.arguments == ': "write tests"}'
    # ag-ui-langgraph bug: TOOL_CALL_RESULT's messageId is the toolCallId, the snapshot gives
    # that tool message a fresh id, so a snapshot merge (ours and the reference client's
    # alike) keeps the streamed messages in place and appends the tool message last
    assert conversation(session.messages) == [
        {"role": "user", "id": "m1", "content": "tool"},
        {
            "role": "assistant",
            "id": "m2",
            "content": "",
            "toolCalls": [
                {
                    "id": "call-lg-1",
                    "type": "function",
                    "function": {"name": "add_task", "arguments": '{"title": "write tests"}'},
                },
            ],
        },
        {"role": "assistant", "id": "m3", "content": "done: added write tests"},
        {"role": "tool", "id": "m4", "content": "added write tests", "toolCallId": "call-lg-1"},
    ]
    assert session.messages[3].id != "call-lg-1"
    assert session.state["tasks"] == ["write tests"]


async def test_langgraph_wire_quirks(url):
    content_type, events = await raw_events(url, run_input("tool", threadId="quirks"))
    assert content_type == "text/event-stream; charset=utf-8"
    types = [e["type"] for e in events]
    assert all("timestamp" not in e for e in events)  # no timestamps at all
    assert types.count("RAW") > len(types) // 3  # every LangChain callback is forwarded as RAW
    assert all("rawEvent" in e for e in events if e["type"] == "TOOL_CALL_START")
    # a STATE_SNAPSHOT after each node; mid-run ones hold only that node's output
    snapshots = [e["snapshot"] for e in events if e["type"] == "STATE_SNAPSHOT"]
    assert len(snapshots) >= 3 and "tasks" in snapshots[-1]
    result = next(e for e in events if e["type"] == "TOOL_CALL_RESULT")
    final = next(e for e in reversed(events) if e["type"] == "MESSAGES_SNAPSHOT")
    [tool] = [m for m in final["messages"] if m["role"] == "tool"]
    assert result["messageId"] == result["toolCallId"] != tool["id"]


async def test_langgraph_second_turn_does_not_duplicate_messages(url):
    session = session_for(url)
    assert only_done(await session.send("tool").collect()).outcome == "success"
    # the state sent back carries LangChain-shaped messages; the graph must not add them twice
    assert only_done(await session.send("text again").collect()).outcome == "success"
    assert [m["role"] for m in conversation(session.messages)] == [
        "user",
        "assistant",
        "assistant",
        "tool",
        "user",
        "assistant",
    ]
    assert len(session.state["messages"]) == 6
    assert session.state["tasks"] == ["write tests"]


async def test_langgraph_default_interrupt_is_a_legacy_custom_event_on_the_wire(url):
    _, events = await raw_events(url, run_input("ask", threadId="legacy-wire"))
    custom = [e for e in events if e["type"] == "CUSTOM"]
    assert [c["name"] for c in custom] == ["on_interrupt"]
    # the value is a JSON *string*, not the object
    assert json.loads(custom[0]["value"]) == {"message": "Approve the plan?", "reason": "approval"}
    assert events[-1]["type"] == "RUN_FINISHED" and "outcome" not in events[-1]


async def test_langgraph_legacy_on_interrupt_becomes_a_pending_interrupt(url):
    session = session_for(url)
    updates = await session.send("ask").collect()
    # the compat rule is never silent: its warning, then Done(interrupted)
    warning, done = outcomes(updates)
    assert isinstance(warning, WarningUpdate) and warning.code == LANGGRAPH_ON_INTERRUPT
    assert isinstance(done, Done) and done.outcome == "interrupted"
    [pending] = session.pending_interrupts
    assert pending.message == "Approve the plan?"
    second = await session.resume({pending.id: {"ok": True}}).collect()
    assert only_done(second).outcome == "success"
    assert session.messages[-1].content == 'you said: {"ok": true}'


async def test_langgraph_legacy_on_interrupt_is_a_warned_compat_rule(url):
    session = session_for(url)
    updates = await session.send("ask").collect()
    # the CUSTOM update is still delivered; the rule says what it did with a stable code
    assert [u.name for u in updates if isinstance(u, Custom)] == ["on_interrupt"]
    [warning] = [u for u in updates if isinstance(u, WarningUpdate)]
    assert warning.code == LANGGRAPH_ON_INTERRUPT
    [paused] = [u for u in updates if isinstance(u, Paused)]
    [pending] = session.pending_interrupts
    assert paused.interrupts == (pending,)
    assert (pending.reason, pending.message) == ("approval", "Approve the plan?")
    assert pending.metadata["langgraph"]["raw"] == {
        "message": "Approve the plan?",
        "reason": "approval",
    }
    # a run that does not answer it is refused before anything is sent
    with pytest.raises(ResumeError):
        session.run(forwarded_props={"command": {"resume": {"ok": True}}})


async def test_langgraph_legacy_resume_through_forwarded_props_command(url):
    # the adapter's legacy channel (deprecated, logged as such): forwardedProps.command.resume
    _, first = await raw_events(url, run_input("ask", threadId="legacy-command"))
    assert [e["name"] for e in first if e["type"] == "CUSTOM"] == ["on_interrupt"]
    body = run_input(
        "ask",
        threadId="legacy-command",
        runId="run-2",
        forwardedProps={"command": {"resume": {"ok": True}}},
    )
    _, resumed = await raw_events(url, body)
    assert resumed[-1]["type"] == "RUN_FINISHED" and "outcome" not in resumed[-1]
    final = next(e for e in reversed(resumed) if e["type"] == "MESSAGES_SNAPSHOT")
    assert [(m["role"], m["content"]) for m in final["messages"]] == [
        ("user", "ask"),
        ("assistant", 'you said: {"ok": true}'),
    ]


async def test_langgraph_interrupt_outcome_pauses_and_resume_entry_answers(outcome_url):
    session = session_for(outcome_url)
    updates = await session.send("ask").collect()
    assert only_done(updates).outcome == "interrupted"
    # with emit_interrupt_outcome the legacy CUSTOM event is still sent, before the outcome
    assert [u.name for u in updates if isinstance(u, Custom)] == ["on_interrupt"]
    [paused] = [u for u in updates if isinstance(u, Paused)]
    [pending] = session.pending_interrupts
    assert paused.interrupts == (pending,)
    assert (pending.reason, pending.message) == ("approval", "Approve the plan?")
    assert pending.metadata["langgraph"]["raw"] == {
        "message": "Approve the plan?",
        "reason": "approval",
    }
    # RunAgentInput.resume[]: one resolved entry becomes Command(resume=payload)
    resumed = await session.resume({pending.id: {"ok": True}}).collect()
    assert only_done(resumed).outcome == "success"
    assert session.pending_interrupts == []
    assert conversation(session.messages) == [
        {"role": "user", "id": "m1", "content": "ask"},
        {"role": "assistant", "id": "m2", "content": 'you said: {"ok": true}'},
    ]


async def test_langgraph_server_tool_call_is_not_pending_for_a_client_offering_other_tools(url):
    pick = {"name": "pick_colour", "description": "the user picks a colour", "parameters": {}}
    session = session_for(url, tools=[pick])
    done = only_done(await session.send("tool").collect())
    # add_task is the graph's own tool (its tool node runs it): never the client's
    assert (done.outcome, done.pending_tool_call_ids) == ("success", ())
    assert session.conversation.unanswered_tool_call_ids() == []
    assert only_done(await session.send("text again").collect()).outcome == "success"
