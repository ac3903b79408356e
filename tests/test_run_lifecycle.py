"""The run lifecycle has one owner: leaving a finished run keeps its Done, and
the conversation's run facts are read-only from outside."""

from __future__ import annotations

import pytest

from agui.apply import Conversation
from agui.lifecycle import RunLifecycle
from agui.pipeline import Pipeline
from agui.session import Session
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

    import agui.run
    import agui.session

    for module in (agui.session, agui.run):
        source = inspect.getsource(module)
        assert "SseReader" not in source and "decode_event" not in source, module.__name__
