"""Where the agent API met the reference client on real servers and differed (issue 37)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agui.agent import AbstractAgent, AgentSubscriber
from agui.types import (
    RunErrorEvent,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    event_type,
)

pytestmark = pytest.mark.timeout(30)


class Scripted(AbstractAgent):
    """An agent whose ``run`` yields a fixed list of event structs."""

    def __init__(self, events: list[Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.events = events

    async def run(self, run_input):  # type: ignore[override]
        for event in self.events:
            yield event
            await asyncio.sleep(0)


WORDS = [
    RunStartedEvent(thread_id="t", run_id="r1"),
    TextMessageStartEvent(message_id="m1", role="assistant"),
    *(TextMessageContentEvent(message_id="m1", delta=f"w{i} ") for i in range(8)),
    TextMessageEndEvent(message_id="m1"),
    RunFinishedEvent(thread_id="t", run_id="r1"),
]


async def test_abort_run_from_a_content_callback_keeps_that_event():
    """Finding 3: the reference applies the event whose callback aborted ("w0 ... w4")."""
    agent = Scripted(WORDS, thread_id="t")

    async def on_content(params):
        if params.event.delta == "w4 ":
            await params.agent.abort_run()

    agent.subscribe(AgentSubscriber(on_text_message_content_event=on_content))
    out = await agent.run_agent()
    assert out.done is not None and out.done.outcome == "cancelled"
    assert agent.messages[-1].content == "w0 w1 w2 w3 w4 "


async def test_a_concurrent_run_agent_is_refused_and_the_first_run_goes_on():
    """Finding 4, a deliberate difference: the reference runs both (their events interleave
    on one message list); we refuse the second with the documented ``RuntimeError`` and the
    first run completes untouched."""
    from pathlib import Path

    agent = Scripted(WORDS, thread_id="t")
    second: list[BaseException] = []

    async def on_content(params):
        if params.event.delta == "w2 " and not second:
            try:
                await params.agent.run_agent()
            except RuntimeError as exc:
                second.append(exc)

    agent.subscribe(AgentSubscriber(on_text_message_content_event=on_content))
    out = await agent.run_agent()
    assert [str(e) for e in second] == ["this agent is already running (await abort_run() first)"]
    assert out.done is not None and out.done.outcome == "success"
    assert agent.messages[-1].content == "".join(f"w{i} " for i in range(8))
    docs = (Path(__file__).resolve().parents[2] / "docs" / "from-ag-ui-client.md").read_text()
    assert "a second `run_agent` while one runs raises `RuntimeError`" in docs


async def test_run_finished_after_run_error_gets_no_callback_and_is_reported():
    """Finding 5 (adk-agui-middleware sends RUN_FINISHED after RUN_ERROR): the reference fails
    the run there and never calls ``onRunFinishedEvent``; we call ``on_run_error_event`` once,
    no ``on_run_finished_event``, report the violation, and the run ends ``failed``."""
    events = [
        RunStartedEvent(thread_id="t", run_id="r1"),
        RunErrorEvent(message="boom", code="E"),
        RunFinishedEvent(thread_id="t", run_id="r1"),
    ]
    agent = Scripted(events, thread_id="t")
    calls: list[str] = []
    agent.subscribe(
        AgentSubscriber(
            on_run_error_event=lambda p: calls.append("error"),
            on_run_finished_event=lambda p: calls.append("finished"),
            on_event=lambda p: calls.append(f"event {event_type(p.event)}"),
        )
    )
    out = await agent.run_agent()
    assert calls == ["event RUN_STARTED", "event RUN_ERROR", "error"]
    assert out.done is not None and out.done.outcome == "failed"
    assert out.done.reason == "boom"
