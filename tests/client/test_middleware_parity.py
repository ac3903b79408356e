"""Middleware sees what the reference's middleware sees: ``runNext`` / ``runNextWithState``."""

from __future__ import annotations

import pytest

from agui.client._middleware import EventWithState, Middleware, run_next, run_next_with_state
from agui.client._session import Session
from agui.transports import ReplayTransport
from agui.types import (
    RunFinishedEvent,
    RunStartedEvent,
    StateDeltaEvent,
    TextMessageChunkEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    event_type,
)
from agui.updates import Done, TextEnded

pytestmark = pytest.mark.timeout(30)

#: what llama-index sends: text only as chunks
CHUNKED = [
    RunStartedEvent(thread_id="t", run_id="r1"),
    TextMessageChunkEvent(message_id="m1", role="assistant", delta="hello "),
    TextMessageChunkEvent(message_id="m1", delta="world"),
    StateDeltaEvent(delta=[{"op": "add", "path": "/n", "value": 1}]),
    RunFinishedEvent(thread_id="t", run_id="r1"),
]


class Upper(Middleware):
    def on_event(self, event):
        if isinstance(event, TextMessageContentEvent):
            return TextMessageContentEvent(message_id=event.message_id, delta=event.delta.upper())
        return event


async def test_middleware_receives_chunk_events_expanded():
    """Finding 2: a ``Middleware``'s ``on_event`` gets START / CONTENT / END for chunks (the
    reference's ``runNext``), so an uppercasing middleware works against a chunk producer."""
    seen: list[str] = []

    class Record(Middleware):
        def on_event(self, event):
            seen.append(event_type(event))
            return event

    session = Session(ReplayTransport(CHUNKED), thread_id="t", middleware=[Record(), Upper()])
    updates = await session.send("hi").collect()
    assert TextEnded("m1", "HELLO WORLD") in updates
    assert session.messages[-1].content == "HELLO WORLD"
    assert seen == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STATE_DELTA",
        "RUN_FINISHED",
    ]
    assert updates[-1] == Done("success", run_id="r1")


async def test_function_middleware_calling_next_directly_sees_chunks_as_sent():
    """As the reference's ``next.run(input)``: only :func:`run_next` expands."""
    raw: list[str] = []
    expanded: list[str] = []

    async def direct(run_input, next):
        async for event in next(run_input):
            raw.append(event_type(event))
            yield event

    async def via_run_next(run_input, next):
        async for event in run_next(run_input, next):
            expanded.append(event_type(event))
            yield event

    session = Session(ReplayTransport(CHUNKED), thread_id="t", middleware=[via_run_next, direct])
    await session.send("hi").collect()
    assert raw.count("TEXT_MESSAGE_CHUNK") == 2
    assert "TEXT_MESSAGE_CHUNK" not in expanded
    assert expanded.count("TEXT_MESSAGE_CONTENT") == 2
    assert session.messages[-1].content == "hello world"


async def test_run_next_with_state_gives_messages_and_state_after_each_event():
    """The reference's ``runNextWithState``: each expanded event with what it left."""
    seen: list[EventWithState] = []

    async def tracking(run_input, next):
        async for item in run_next_with_state(run_input, next):
            seen.append(item)
            yield item.event

    session = Session(ReplayTransport(CHUNKED), thread_id="t", middleware=[tracking])
    await session.send("hi").collect()
    by_type = [(event_type(s.event), s) for s in seen]
    assert [t for t, _ in by_type] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STATE_DELTA",
        "RUN_FINISHED",
    ]
    # the input's user message first, then the assistant's text as it grows
    assert [m.content for m in by_type[2][1].messages] == ["hi", "hello "]
    assert [m.content for m in by_type[4][1].messages] == ["hi", "hello world"]
    assert by_type[4][1].state == {}  # the input's state as sent
    assert by_type[5][1].state == {"n": 1}
    assert isinstance(by_type[1][1].event, TextMessageStartEvent)
    assert isinstance(by_type[4][1].event, TextMessageEndEvent)
