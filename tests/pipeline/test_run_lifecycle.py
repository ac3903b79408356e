"""The run lifecycle has one owner: leaving a finished run keeps its Done, and
the conversation's run facts are read-only from outside."""

from __future__ import annotations

import pytest

from agui.client._session import Session
from agui.pipeline._apply import Conversation
from agui.pipeline._lifecycle import RunLifecycle
from agui.pipeline._pipeline import Pipeline
from agui.transports import ReplayTransport
from agui.updates import Done

pytestmark = pytest.mark.timeout(30)

START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"}
TEXT = [
    {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "hi"},
    {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
]
FINISH = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r1", "result": {"ok": 1}}


def session() -> Session:
    return Session(ReplayTransport([START, *TEXT, FINISH]), thread_id="t")


SUCCESS = Done("success", result={"ok": 1}, run_id="r1")


async def test_leaving_a_finished_run_with_async_with_keeps_its_done():
    s = session()
    async with s.run() as run:
        async for update in run:
            if isinstance(update, Done):
                break
    assert run.done == SUCCESS
    assert s.conversation.outcome == "success"


async def test_aclose_after_done_keeps_the_done():
    s = session()
    run = s.run()
    async for update in run:
        if isinstance(update, Done):
            break
    await run.aclose()
    assert run.done == SUCCESS
    assert s.conversation.lifecycle.done == SUCCESS


async def test_break_after_done_keeps_the_done_when_the_next_run_starts():
    s = Session(ReplayTransport([START, *TEXT, FINISH]), thread_id="t")
    first = s.run()
    async for update in first:
        if isinstance(update, Done):
            break
    second = await s.run().collect()
    assert first.done == SUCCESS
    assert second[-1] == SUCCESS


async def test_leaving_an_open_run_still_ends_it_cancelled():
    s = session()
    async with s.run() as run:
        async for _ in run:
            break  # right after RunStarted
    assert run.done == Done("cancelled", reason="cancelled by client", run_id="r1")
    assert s.conversation.outcome == "cancelled"


def test_conversation_run_facts_are_read_only_from_outside():
    conv = Conversation()
    for name in ("outcome", "run_id", "result", "run_error", "thread_id"):
        with pytest.raises(AttributeError):
            setattr(conv, name, "x")


def test_the_conversation_reads_its_run_facts_from_its_lifecycle():
    conv = Conversation()
    p = Pipeline(conv)
    import json

    for ev in (START, *TEXT, FINISH):
        p.feed_data(json.dumps(ev))
    life = conv.lifecycle
    assert isinstance(life, RunLifecycle)
    assert (life.run_id, life.thread_id, life.open, life.outcome, life.result) == (
        "r1",
        "t",
        False,
        "success",
        {"ok": 1},
    )
    assert (conv.run_id, conv.outcome, conv.result) == ("r1", "success", {"ok": 1})
    assert p.done == life.done == SUCCESS


def test_session_frames_no_bytes_itself():
    import inspect

    import agui.client._run
    import agui.client._session

    for module in (agui.client._session, agui.client._run):
        source = inspect.getsource(module)
        assert "SseReader" not in source and "decode_event" not in source, module.__name__


# --- the run hands a read's frames out one at a time ------------------------------------


def _sse(*events: dict) -> bytes:
    import json

    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


class _OneRead:
    """A transport answering with the whole stream in one read; notes its close."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.closed = False

    async def stream(self, run_input):
        try:
            yield self.body
        finally:
            self.closed = True


async def test_leaving_after_an_update_leaves_the_later_frames_of_the_same_read_unapplied():
    transport = _OneRead(_sse(START, *TEXT, FINISH))
    s = Session(transport, thread_id="t")
    async with s.run() as run:
        async for update in run:
            if type(update).__name__ == "TextStarted":
                break
    assert transport.closed
    assert [m.content for m in s.messages] == [""]  # the CONTENT frame was never applied
    assert run.done == Done("cancelled", reason="cancelled by client", run_id="r1")


async def test_aclose_between_two_updates_of_one_read_hands_out_nothing_more():
    transport = _OneRead(_sse(START, *TEXT, FINISH))
    s = Session(transport, thread_id="t")
    run = s.run()
    first = await run.__anext__()
    await run.aclose()
    with pytest.raises(StopAsyncIteration):
        await run.__anext__()
    assert type(first).__name__ == "RunStarted" and transport.closed
    assert s.messages == []
    assert run.done == Done("cancelled", reason="cancelled by client", run_id="r1")


async def test_aclose_from_another_task_while_an_async_subscriber_waits_closes_the_stream():
    import asyncio

    transport = _OneRead(_sse(START, *TEXT, FINISH))
    s = Session(transport, thread_id="t")
    waiting = asyncio.Event()
    notified: list = []

    async def subscriber(update):
        notified.append(update)
        if type(update).__name__ == "TextStarted":
            waiting.set()
            await asyncio.sleep(3600)

    unsubscribe = s.subscribe(subscriber)
    run = s.run()
    received: list = []

    async def consume():
        async for update in run:
            received.append(update)
        return "loop ended normally"

    consumer = asyncio.create_task(consume())
    await asyncio.wait_for(waiting.wait(), 10)
    await run.aclose()
    assert await asyncio.wait_for(consumer, 10) == "loop ended normally"
    assert [type(u).__name__ for u in received] == ["RunStarted"]  # TextStarted never handed out
    assert transport.closed and run.finished
    assert run.done == Done("cancelled", reason="cancelled by client", run_id="r1")
    unsubscribe()
    assert (await s.run().wait()).outcome == "success"  # the session stays usable


async def test_cancelling_the_task_while_an_async_subscriber_waits_closes_the_stream():
    import asyncio

    transport = _OneRead(_sse(START, *TEXT, FINISH))
    s = Session(transport, thread_id="t")
    waiting = asyncio.Event()

    async def subscriber(update):
        if type(update).__name__ == "TextStarted":
            waiting.set()
            await asyncio.sleep(3600)

    s.subscribe(subscriber)
    run = s.run()

    async def consume():
        async for _ in run:
            pass

    consumer = asyncio.create_task(consume())
    await asyncio.wait_for(waiting.wait(), 10)
    consumer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await consumer
    assert transport.closed and run.finished
    assert run.done == Done("cancelled", reason="cancelled by client", run_id="r1")


async def test_errors_of_a_read_are_counted_as_they_are_handed_out():
    bad = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "nope", "delta": "x"}
    s = Session(_OneRead(_sse(START, bad, *TEXT, bad, FINISH)), thread_id="t")
    run = s.run()
    seen = []
    async for update in run:
        seen.append(update)
        if len(seen) == 2:
            assert len(run.errors) == 1  # the second bad frame is not fed yet
    assert len(run.errors) == 2 and run.done == SUCCESS
