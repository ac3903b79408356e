"""A Starlette app that speaks AG-UI with the official Python package only
(``ag_ui.core`` models, ``ag_ui.encoder.EventEncoder``): every event type it defines.

The scenario is the first word of the latest user message; a request carrying
``resume`` answers the interrupt instead:

- ``chunks``    TEXT_MESSAGE_CHUNK / TOOL_CALL_CHUNK / REASONING_MESSAGE_CHUNK (each chunk
  repeating messageId and role), then a content-part TOOL_CALL_RESULT;
- ``all``       steps, state snapshot + delta, activity snapshot + delta, a reasoning span
  with encrypted values on a message and on a tool call, text, a tool call, custom and raw
  events, a subagent that finishes and one that errors, a keep-alive comment between events;
- ``snapshot``  a MESSAGES_SNAPSHOT replacing the conversation, twice, with fresh ids;
- ``interrupt`` RUN_FINISHED with an interrupt outcome (an approval), then, on resume,
  an answer quoting the resume payload;
- ``error``     RUN_ERROR with a code;
- ``servertool`` a call to ``lookup`` (a tool the server runs itself, not offered by the
  client) whose result arrives only in a MESSAGES_SNAPSHOT, then an answer; RUN_FINISHED
  success with ``pendingToolCallIds: []``;
- ``serverquiet`` a call to ``lookup`` with no result at all; success, no
  ``pendingToolCallIds``;
- ``leftover``   a call to ``lookup`` that RUN_FINISHED names in ``pendingToolCallIds``
  itself (the producer leaves a tool nobody offered to the client);
- ``clienttool`` a call to each tool the client offered (``RunAgentInput.tools``, in
  order); success, no ``pendingToolCallIds``; on the next request, the tool messages'
  contents echoed;
- ``answered``   a call to the first offered tool that the server answers itself in a
  MESSAGES_SNAPSHOT; success, no ``pendingToolCallIds``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from ag_ui.core import (
    ActivityDeltaEvent,
    ActivitySnapshotEvent,
    AssistantMessage,
    BaseEvent,
    CustomEvent,
    FunctionCall,
    Interrupt,
    MessagesSnapshotEvent,
    RawEvent,
    ReasoningEncryptedValueEvent,
    ReasoningEndEvent,
    ReasoningMessageChunkEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentStartedEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCall,
    ToolCallArgsEvent,
    ToolCallChunkEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    ToolMessage,
)
from ag_ui.core.events import EventType
from ag_ui.encoder import EventEncoder
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

KEEPALIVE = ": keep-alive\n\n"

T = EventType


def _word(run_input: RunAgentInput) -> str:
    for message in reversed(run_input.messages):
        if message.role == "user" and isinstance(message.content, str):
            return message.content.split(" ", 1)[0]
    return ""


def chunks() -> list[BaseEvent]:
    return [
        TextMessageChunkEvent(
            type=T.TEXT_MESSAGE_CHUNK, message_id="t1", role="assistant", delta="Hel"
        ),
        TextMessageChunkEvent(
            type=T.TEXT_MESSAGE_CHUNK, message_id="t1", role="assistant", delta="lo"
        ),
        ToolCallChunkEvent(
            type=T.TOOL_CALL_CHUNK,
            tool_call_id="tc1",
            tool_call_name="lookup",
            parent_message_id="t1",
            delta='{"q": ',
        ),
        ToolCallChunkEvent(type=T.TOOL_CALL_CHUNK, tool_call_id="tc1", delta='"cats"}'),
        ReasoningMessageChunkEvent(
            type=T.REASONING_MESSAGE_CHUNK, message_id="r1", delta="pondering"
        ),
        ToolCallResultEvent(
            type=T.TOOL_CALL_RESULT,
            message_id="res1",
            tool_call_id="tc1",
            role="tool",
            content=[
                {"type": "text", "text": "two cats"},
                {"type": "image", "source": {"type": "url", "value": "https://example.com/c.png"}},
            ],
        ),
    ]


def everything() -> list[BaseEvent | str]:
    sub = "sub-1"
    return [
        StepStartedEvent(type=T.STEP_STARTED, step_name="plan"),
        StateSnapshotEvent(type=T.STATE_SNAPSHOT, snapshot={"tasks": [], "mode": "plan"}),
        KEEPALIVE,
        StateDeltaEvent(
            type=T.STATE_DELTA,
            delta=[
                {"op": "add", "path": "/tasks/-", "value": "write"},
                {"op": "replace", "path": "/mode", "value": "act"},
            ],
        ),
        ActivitySnapshotEvent(
            type=T.ACTIVITY_SNAPSHOT,
            message_id="act1",
            activity_type="PLAN",
            content={"steps": ["a"], "done": 0},
        ),
        ActivityDeltaEvent(
            type=T.ACTIVITY_DELTA,
            message_id="act1",
            activity_type="PLAN",
            patch=[{"op": "replace", "path": "/done", "value": 1}],
        ),
        ReasoningStartEvent(type=T.REASONING_START, message_id="rs1"),
        ReasoningMessageStartEvent(
            type=T.REASONING_MESSAGE_START, message_id="r1", role="reasoning"
        ),
        ReasoningMessageContentEvent(
            type=T.REASONING_MESSAGE_CONTENT, message_id="r1", delta="thinking"
        ),
        ReasoningMessageEndEvent(type=T.REASONING_MESSAGE_END, message_id="r1"),
        ReasoningEncryptedValueEvent(
            type=T.REASONING_ENCRYPTED_VALUE,
            subtype="message",
            entity_id="r1",
            encrypted_value="enc-msg",
        ),
        ReasoningEndEvent(type=T.REASONING_END, message_id="rs1"),
        TextMessageStartEvent(type=T.TEXT_MESSAGE_START, message_id="a1", role="assistant"),
        TextMessageContentEvent(type=T.TEXT_MESSAGE_CONTENT, message_id="a1", delta="On it."),
        TextMessageEndEvent(type=T.TEXT_MESSAGE_END, message_id="a1"),
        ToolCallStartEvent(
            type=T.TOOL_CALL_START,
            tool_call_id="c1",
            tool_call_name="search",
            parent_message_id="a1",
        ),
        ToolCallArgsEvent(type=T.TOOL_CALL_ARGS, tool_call_id="c1", delta='{"q":"x"}'),
        ToolCallEndEvent(type=T.TOOL_CALL_END, tool_call_id="c1"),
        ReasoningEncryptedValueEvent(
            type=T.REASONING_ENCRYPTED_VALUE,
            subtype="tool-call",
            entity_id="c1",
            encrypted_value="enc-call",
        ),
        ToolCallResultEvent(
            type=T.TOOL_CALL_RESULT,
            message_id="res1",
            tool_call_id="c1",
            content="found x",
            role="tool",
        ),
        SubagentStartedEvent(
            type=T.SUBAGENT_STARTED, subagent_run_id=sub, name="helper", parent_tool_call_id="c1"
        ),
        TextMessageStartEvent(
            type=T.TEXT_MESSAGE_START, message_id="s1", role="assistant", subagent_run_id=sub
        ),
        TextMessageContentEvent(type=T.TEXT_MESSAGE_CONTENT, message_id="s1", delta="sub says hi"),
        TextMessageEndEvent(type=T.TEXT_MESSAGE_END, message_id="s1"),
        SubagentFinishedEvent(type=T.SUBAGENT_FINISHED, subagent_run_id=sub, result={"ok": True}),
        SubagentStartedEvent(type=T.SUBAGENT_STARTED, subagent_run_id="sub-2", name="flaky"),
        SubagentErrorEvent(
            type=T.SUBAGENT_ERROR, subagent_run_id="sub-2", message="gave up", code="flaky_failed"
        ),
        CustomEvent(type=T.CUSTOM, name="progress", value={"pct": 50}),
        RawEvent(type=T.RAW, event={"vendor": "x", "n": 1}, source="upstream-llm"),
        KEEPALIVE,
        StepFinishedEvent(type=T.STEP_FINISHED, step_name="plan"),
    ]


def snapshots(run_input: RunAgentInput) -> list[BaseEvent]:
    first = [*run_input.messages, AssistantMessage(id="snap-a1", role="assistant", content="draft")]
    second = [
        *run_input.messages,
        AssistantMessage(
            id="snap-b1",
            role="assistant",
            content="",
            tool_calls=[
                ToolCall(
                    id="call-9", type="function", function=FunctionCall(name="save", arguments="{}")
                ),
            ],
        ),
        AssistantMessage(id="snap-b2", role="assistant", content="final"),
    ]
    return [
        MessagesSnapshotEvent(type=T.MESSAGES_SNAPSHOT, messages=first),
        MessagesSnapshotEvent(type=T.MESSAGES_SNAPSHOT, messages=second),
    ]


def _call(call_id: str, name: str, args: str, parent: str | None = None) -> list[BaseEvent]:
    return [
        ToolCallStartEvent(
            type=T.TOOL_CALL_START,
            tool_call_id=call_id,
            tool_call_name=name,
            parent_message_id=parent,
        ),
        ToolCallArgsEvent(type=T.TOOL_CALL_ARGS, tool_call_id=call_id, delta=args),
        ToolCallEndEvent(type=T.TOOL_CALL_END, tool_call_id=call_id),
    ]


def _say(message_id: str, text: str) -> list[BaseEvent]:
    return [
        TextMessageStartEvent(type=T.TEXT_MESSAGE_START, message_id=message_id, role="assistant"),
        TextMessageContentEvent(type=T.TEXT_MESSAGE_CONTENT, message_id=message_id, delta=text),
        TextMessageEndEvent(type=T.TEXT_MESSAGE_END, message_id=message_id),
    ]


def answered_in_snapshot(run_input: RunAgentInput, name: str) -> list[BaseEvent]:
    """A call to ``name`` the server runs itself; its result only in a MESSAGES_SNAPSHOT."""
    call_id = f"{run_input.run_id}-call"
    asked = AssistantMessage(
        id=f"{run_input.run_id}-a",
        role="assistant",
        content="Looking.",
        tool_calls=[
            ToolCall(
                id=call_id, type="function", function=FunctionCall(name=name, arguments='{"q":"x"}')
            )
        ],
    )
    result = ToolMessage(
        id=f"{run_input.run_id}-r", role="tool", tool_call_id=call_id, content="found x"
    )
    return [
        *_say(asked.id, "Looking."),
        *_call(call_id, name, '{"q":"x"}', parent=asked.id),
        MessagesSnapshotEvent(
            type=T.MESSAGES_SNAPSHOT, messages=[*run_input.messages, asked, result]
        ),
        *_say(f"{run_input.run_id}-b", "x is found."),
    ]


APPROVAL = Interrupt(
    id="int-1",
    reason="tool_call",
    message="Delete the file?",
    tool_call_id="c-del",
    response_schema={"type": "object"},
)


async def events(run_input: RunAgentInput) -> AsyncIterator[BaseEvent | str]:
    ids = {"thread_id": run_input.thread_id, "run_id": run_input.run_id}
    yield RunStartedEvent(type=T.RUN_STARTED, protocol_version="1.0", **ids)
    outcome: Any = RunFinishedSuccessOutcome(type="success")
    if run_input.resume:
        answer = run_input.resume[0]
        yield TextMessageStartEvent(type=T.TEXT_MESSAGE_START, message_id="after", role="assistant")
        text = f"{answer.interrupt_id} {answer.status}: {json.dumps(answer.payload)}"
        yield TextMessageContentEvent(type=T.TEXT_MESSAGE_CONTENT, message_id="after", delta=text)
        yield TextMessageEndEvent(type=T.TEXT_MESSAGE_END, message_id="after")
    elif run_input.messages and isinstance(run_input.messages[-1], ToolMessage):
        results = [m.content for m in run_input.messages if isinstance(m, ToolMessage)]
        for event in _say(f"{run_input.run_id}-echo", " | ".join(str(r) for r in results)):
            yield event
    else:
        word = _word(run_input)
        offered = [t.name for t in run_input.tools]
        if word == "servertool":
            for event in answered_in_snapshot(run_input, "lookup"):
                yield event
            outcome = RunFinishedSuccessOutcome(type="success", pending_tool_call_ids=[])
        elif word == "serverquiet":
            for event in _call(f"{run_input.run_id}-call", "lookup", "{}"):
                yield event
        elif word == "leftover":
            call_id = f"{run_input.run_id}-call"
            for event in _call(call_id, "lookup", "{}"):
                yield event
            outcome = RunFinishedSuccessOutcome(type="success", pending_tool_call_ids=[call_id])
        elif word == "clienttool":
            for i, name in enumerate(offered):
                for event in _call(f"{run_input.run_id}-c{i}", name, "{}"):
                    yield event
        elif word == "answered" and offered:
            for event in answered_in_snapshot(run_input, offered[0]):
                yield event
        elif word == "chunks":
            for event in chunks():
                yield event
        elif word == "all":
            for event in everything():
                yield event
        elif word == "snapshot":
            for event in snapshots(run_input):
                yield event
        elif word == "interrupt":
            yield TextMessageStartEvent(
                type=T.TEXT_MESSAGE_START, message_id="ask", role="assistant"
            )
            yield TextMessageContentEvent(
                type=T.TEXT_MESSAGE_CONTENT, message_id="ask", delta="May I?"
            )
            yield TextMessageEndEvent(type=T.TEXT_MESSAGE_END, message_id="ask")
            outcome = RunFinishedInterruptOutcome(type="interrupt", interrupts=[APPROVAL])
        elif word == "error":
            yield RunErrorEvent(type=T.RUN_ERROR, message="backend exploded", code="backend_down")
            return
    yield RunFinishedEvent(type=T.RUN_FINISHED, outcome=outcome, **ids)


async def endpoint(request: Request) -> StreamingResponse:
    run_input = RunAgentInput.model_validate_json(await request.body())
    encoder = EventEncoder(accept=request.headers.get("accept"))

    async def body() -> AsyncIterator[str]:
        async for event in events(run_input):
            yield event if isinstance(event, str) else encoder.encode(event)

    return StreamingResponse(body(), media_type=encoder.get_content_type())


app = Starlette(routes=[Route("/agent", endpoint, methods=["POST"])])
