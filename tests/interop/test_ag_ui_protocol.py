"""The official ``ag-ui-protocol`` package (``ag_ui.core`` models, ``ag_ui.encoder``) as a
server: every event type it defines, on loopback, consumed by agui's Session
(``protocol_peer`` is the app)."""

from __future__ import annotations

import pytest

from tests.interop.interop_helpers import (
    conversation,
    outcomes,
    raw_events,
    require,
    run_input,
    serve,
    session_for,
    wire,
)

require("ag_ui.encoder")

from agui.client._interrupts import cancelled, resolved
from agui.errors import RunError
from agui.updates import (
    ActivityChanged,
    Custom,
    Done,
    EncryptedValue,
    ErrorUpdate,
    Raw,
    ReasoningSpan,
    StepChanged,
    SubagentChanged,
)


@pytest.fixture(scope="module")
def url():
    from tests.interop.protocol_peer import app

    with serve(app) as base:
        yield base + "/agent"


def only_done(updates):
    judged = outcomes(updates)
    assert len(judged) == 1 and isinstance(judged[0], Done), judged
    return judged[0]


async def test_protocol_package_chunks_become_whole_messages(url):
    session = session_for(url)
    assert only_done(await session.send("chunks").collect()).outcome == "success"
    # chunks repeat messageId and role on every fragment: one message each, not several
    assert conversation(session.messages) == [
        {"role": "user", "id": "m1", "content": "chunks"},
        {
            "role": "assistant",
            "id": "m2",
            "content": "Hello",
            "toolCalls": [
                {
                    "id": "tc1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q": "cats"}'},
                },
            ],
        },
        {
            "role": "tool",
            "id": "m3",
            "toolCallId": "tc1",
            "content": [
                {"type": "text", "text": "two cats"},
                {"type": "image", "source": {"type": "url", "value": "https://example.com/c.png"}},
            ],
        },
        {"role": "reasoning", "id": "m4", "content": "pondering"},
    ]


async def test_protocol_package_every_event_type_is_applied(url):
    session = session_for(url)
    updates = await session.send("all").collect()
    assert only_done(updates).outcome == "success"
    assert conversation(session.messages) == [
        {"role": "user", "id": "m1", "content": "all"},
        {
            "role": "activity",
            "id": "m2",
            "activityType": "PLAN",
            "content": {"steps": ["a"], "done": 1},
        },
        {"role": "reasoning", "id": "m3", "content": "thinking", "encryptedValue": "enc-msg"},
        {
            "role": "assistant",
            "id": "m4",
            "content": "On it.",
            "toolCalls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"q":"x"}'},
                    "encryptedValue": "enc-call",
                },
            ],
        },
        {"role": "tool", "id": "m5", "content": "found x", "toolCallId": "c1"},
        {"role": "assistant", "id": "m6", "content": "sub says hi", "subagentRunId": "sub-1"},
    ]
    assert session.state == {"tasks": ["write"], "mode": "act"}
    kinds = (
        StepChanged,
        ActivityChanged,
        ReasoningSpan,
        EncryptedValue,
        SubagentChanged,
        Custom,
        Raw,
    )
    assert [u for u in updates if isinstance(u, kinds)] == [
        StepChanged(name="plan", started=True),
        ActivityChanged(
            message_id="act1", activity_type="PLAN", content={"steps": ["a"], "done": 0}
        ),
        ActivityChanged(
            message_id="act1", activity_type="PLAN", content={"steps": ["a"], "done": 1}
        ),
        ReasoningSpan(span_id="rs1", started=True),
        EncryptedValue(subtype="message", entity_id="r1"),
        ReasoningSpan(span_id="rs1", started=False),
        EncryptedValue(subtype="tool-call", entity_id="c1"),
        SubagentChanged(subagent_run_id="sub-1", status="started", detail="helper"),
        SubagentChanged(subagent_run_id="sub-1", status="finished", detail="success"),
        SubagentChanged(subagent_run_id="sub-2", status="started", detail="flaky"),
        SubagentChanged(subagent_run_id="sub-2", status="error", detail="gave up"),
        Custom(name="progress", value={"pct": 50}),
        Raw(event={"vendor": "x", "n": 1}, source="upstream-llm"),
        StepChanged(name="plan", started=False),
    ]


async def test_protocol_package_keepalive_comments_are_on_the_wire_and_ignored(url):
    content_type, events = await raw_events(url, run_input("all"))
    assert content_type.startswith("text/event-stream")
    # the package's models leave timestamp out unless the producer sets one
    assert all("timestamp" not in e for e in events)
    import httpx

    async with httpx.AsyncClient() as client:
        text = (await client.post(url, json=run_input("all"))).text
    assert text.count(": keep-alive\n\n") == 2


async def test_protocol_package_second_messages_snapshot_replaces_the_first(url):
    session = session_for(url)
    assert only_done(await session.send("snapshot").collect()).outcome == "success"
    assert conversation(session.messages) == [
        {"role": "user", "id": "m1", "content": "snapshot"},
        {
            "role": "assistant",
            "id": "m2",
            "content": "",
            "toolCalls": [
                {
                    "id": "call-9",
                    "type": "function",
                    "function": {"name": "save", "arguments": "{}"},
                },
            ],
        },
        {"role": "assistant", "id": "m3", "content": "final"},
    ]
    assert "snap-a1" not in [m.id for m in session.messages]


async def test_protocol_package_interrupt_pauses_and_resume_is_answered(url):
    session = session_for(url)
    done = only_done(await session.send("interrupt").collect())
    assert done.outcome == "interrupted"
    [pending] = session.pending_interrupts
    assert (pending.id, pending.reason, pending.tool_call_id, pending.message) == (
        "int-1",
        "tool_call",
        "c-del",
        "Delete the file?",
    )
    second = only_done(await session.resume({"int-1": resolved({"approved": True})}).collect())
    assert second.outcome == "success"
    assert session.pending_interrupts == []
    assert conversation(session.messages)[1:] == [
        {"role": "assistant", "id": "m2", "content": "May I?"},
        {"role": "assistant", "id": "m3", "content": 'int-1 resolved: {"approved": true}'},
    ]


async def test_protocol_package_cancelled_resume_reaches_the_server(url):
    session = session_for(url)
    assert only_done(await session.send("interrupt").collect()).outcome == "interrupted"
    assert only_done(await session.resume({"int-1": cancelled()}).collect()).outcome == "success"
    assert session.messages[-1].content == "int-1 cancelled: null"


async def test_protocol_package_run_error_keeps_its_code(url):
    session = session_for(url)
    judged = outcomes(await session.send("error").collect())
    assert [type(u) for u in judged] == [ErrorUpdate, Done]
    assert isinstance(judged[0].error, RunError)
    assert (judged[0].error.message, judged[0].error.code) == ("backend exploded", "backend_down")
    assert judged[1].outcome == "failed"


# --- the pending-call rule (which calls are the client's) ------------------------------

PICK = {"name": "pick_colour", "description": "the user picks a colour", "parameters": {}}


async def test_protocol_package_server_tool_with_explicit_empty_pending_ids_leaves_nothing_pending(
    url,
):
    session = session_for(url)
    done = only_done(await session.send("servertool").collect())
    assert (done.outcome, done.pending_tool_call_ids) == ("success", ())
    assert session.conversation.unanswered_tool_call_ids() == []
    # the next send after a server-side tool is an ordinary run (no ResumeError)
    assert only_done(await session.send("hello").collect()).outcome == "success"


async def test_protocol_package_call_to_a_tool_nobody_offered_is_the_servers(url):
    session = session_for(url, tools=[PICK])
    done = only_done(await session.send("serverquiet").collect())
    assert done.pending_tool_call_ids == ()  # lookup was never offered: the server's call
    assert only_done(await session.send("hello").collect()).outcome == "success"


async def test_protocol_package_call_to_an_offered_tool_is_pending_until_answered(url):
    session = session_for(url, tools=[PICK])
    done = only_done(await session.send("clienttool").collect())
    (cid,) = done.pending_tool_call_ids
    assert session.conversation.tool_call(cid).function.name == "pick_colour"
    session.add_tool_result(cid, "teal")
    assert only_done(await session.run().collect()).outcome == "success"
    assert session.messages[-1].content == "teal"


async def test_protocol_package_tool_message_in_a_messages_snapshot_answers_its_call(url):
    session = session_for(url, tools=[PICK])
    done = only_done(await session.send("answered").collect())
    assert (done.outcome, done.pending_tool_call_ids) == ("success", ())
    tool_messages = [m for m in map(wire, session.messages) if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["found x"]
    assert only_done(await session.send("hello").collect()).outcome == "success"


def test_board_watch_accepts_the_next_line_after_a_server_side_tool(url):
    import io

    from agui._cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["watch", "--url", url], stdin=io.StringIO("servertool\nhello\n"), stdout=out, stderr=err
    )
    lines = out.getvalue().splitlines()
    assert (code, err.getvalue()) == (0, "")
    assert [line for line in lines if line.startswith(("done", "error"))] == [
        "done    success",
        "done    success",
    ]
    assert not any("pending tool calls" in line for line in lines)


def test_board_watch_refuses_a_line_while_the_agent_names_a_call_to_a_tool_it_did_not_offer(url):
    import io

    from agui._cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["watch", "--url", url], stdin=io.StringIO("leftover\nhello\n"), stdout=out, stderr=err
    )
    lines = out.getvalue().splitlines()
    assert (code, err.getvalue()) == (0, "")
    # an explicit pendingToolCallIds wins, even for a tool nobody offered
    assert [line for line in lines if line.startswith("done")] == [
        "done    success (pending tool calls: run-1-call)"
    ]
    [error] = [line for line in lines if line.startswith("error")]
    assert error.startswith(
        "error   cannot send: the agent left 1 call to tools watch does not offer (lookup ("
    )
