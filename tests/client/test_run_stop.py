"""Stopping a run from anywhere (issue 21 item 3): from inside a subscriber callback (the
agent API's and the session's), from another task and from a signal handler. Each time the
run ends ``cancelled`` before the next frame is delivered, and the HTTP request is closed,
which a real server on loopback observes as a disconnect (its cancel token trips)."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from typing import Any

import pytest

from agui.agent import AgentSubscriber, HttpAgent
from agui.client._run import Run
from agui.client._session import Session
from agui.server import BackgroundServer, CancelToken, create_app
from agui.transports import HttpTransport
from agui.types import (
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)
from agui.updates import Done, TextDelta, Update

DELTAS = 200
STOP_AT = 5


class Drip:
    """What the server saw of one request: deltas sent, whether the client left."""

    def __init__(self) -> None:
        self.sent = 0
        self.tripped = False
        self.exited = threading.Event()


DRIPS: list[Drip] = []


async def drip(run_input: Any, emit: Any, cancel: CancelToken) -> None:
    """RUN_STARTED, a text message of DELTAS deltas 20 ms apart, RUN_FINISHED."""
    seen = Drip()
    DRIPS.append(seen)
    tid, rid = run_input.thread_id, run_input.run_id
    try:
        await emit(RunStartedEvent(thread_id=tid, run_id=rid))
        await emit(TextMessageStartEvent(message_id="m1"))
        for i in range(DELTAS):
            await emit(TextMessageContentEvent(message_id="m1", delta=f"{i} "))
            seen.sent += 1
            await asyncio.sleep(0.02)
        await emit(TextMessageEndEvent(message_id="m1"))
        await emit(RunFinishedEvent(thread_id=tid, run_id=rid))
    finally:
        seen.tripped = cancel.cancelled
        seen.exited.set()


@pytest.fixture(scope="module")
def url():
    with BackgroundServer(create_app(drip)) as srv:
        yield srv.url + "/agent"


def last_drip() -> Drip:
    assert DRIPS, "the server saw no request"
    return DRIPS[-1]


def assert_server_saw_the_disconnect() -> None:
    seen = last_drip()
    assert seen.exited.wait(10), "the server's agent is still streaming"
    assert seen.tripped, "the server did not see the client disconnect"
    assert seen.sent < DELTAS


def user(text: str) -> dict[str, Any]:
    return {"id": "u1", "role": "user", "content": text}


class StopAfter(AgentSubscriber):
    """Counts content deltas; at the STOP_AT-th, stops the run with ``how``."""

    def __init__(self, how: str) -> None:
        self.how = how
        self.deltas = 0

    async def on_text_message_content_event(self, params: Any) -> None:
        self.deltas += 1
        if self.deltas == STOP_AT:
            await getattr(params.agent, self.how)()


@pytest.mark.parametrize("how", ["abort_run", "detach_active_run"])
async def test_abort_or_detach_from_a_subscriber_callback_ends_the_run_cancelled_at_once(url, how):
    agent = HttpAgent(url, initial_messages=[user("drip")])
    stopper = StopAfter(how)
    agent.subscribe(stopper)
    started = time.monotonic()
    result = await asyncio.wait_for(agent.run_agent(), 10)
    assert result.done is not None and result.done.outcome == "cancelled"
    assert stopper.deltas == STOP_AT  # no frame after the stop was delivered
    assert time.monotonic() - started < DELTAS * 0.02 / 2
    assert agent.is_running is False
    assert_server_saw_the_disconnect()


async def test_aclose_from_a_session_subscriber_ends_the_run_cancelled_before_the_next_frame(url):
    session = Session(HttpTransport(url))
    deltas: list[Update] = []

    async def stop(update: Update) -> None:
        if type(update) is TextDelta:
            deltas.append(update)
            if len(deltas) == STOP_AT:
                active = session.active_run
                assert active is not None
                await active.aclose()

    session.subscribe(stop)
    run = session.send("drip")
    seen = [u async for u in run]
    assert [u for u in seen if type(u) is TextDelta] == deltas and len(deltas) == STOP_AT
    assert run.done is not None and run.done.outcome == "cancelled" and run.finished
    assert not session.is_streaming
    assert_server_saw_the_disconnect()


async def test_aclose_from_another_task_closes_the_request_the_server_sees_it(url):
    session = Session(HttpTransport(url))
    run = session.send("drip")
    deltas = 0
    fifth = asyncio.Event()

    async def consume() -> None:
        nonlocal deltas
        async for update in run:
            if type(update) is TextDelta:
                deltas += 1
                if deltas == STOP_AT:
                    fifth.set()

    task = asyncio.create_task(consume())
    await fifth.wait()
    await run.aclose()
    await asyncio.wait_for(task, 10)
    assert run.done is not None and run.done.outcome == "cancelled"
    assert deltas <= STOP_AT + 1
    assert_server_saw_the_disconnect()


async def _stop_by_signal(url: str, install: Any) -> tuple[Run, int]:
    session = Session(HttpTransport(url))
    run = session.send("drip")
    install(run)
    deltas = 0
    async for update in run:
        if type(update) is TextDelta:
            deltas += 1
            if deltas == STOP_AT:
                os.kill(os.getpid(), signal.SIGUSR1)
    return run, deltas


@pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="needs POSIX signals")
async def test_cancel_from_a_signal_handler_ends_the_run_cancelled_and_disconnects(url):
    previous = signal.getsignal(signal.SIGUSR1)
    try:
        run, deltas = await asyncio.wait_for(
            _stop_by_signal(url, lambda r: signal.signal(signal.SIGUSR1, lambda *_: r.cancel())),
            10,
        )
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert run.done is not None and run.done.outcome == "cancelled"
    assert deltas <= STOP_AT + 1
    assert_server_saw_the_disconnect()


@pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="needs POSIX signals")
async def test_cancel_from_a_loop_signal_handler_ends_the_run_cancelled_and_disconnects(url):
    loop = asyncio.get_running_loop()
    try:
        run, deltas = await asyncio.wait_for(
            _stop_by_signal(url, lambda r: loop.add_signal_handler(signal.SIGUSR1, r.cancel)),
            10,
        )
    finally:
        loop.remove_signal_handler(signal.SIGUSR1)
    assert run.done is not None and run.done.outcome == "cancelled"
    assert deltas <= STOP_AT + 1
    assert_server_saw_the_disconnect()


async def test_cancel_before_the_run_starts_sends_nothing(url):
    session = Session(HttpTransport(url))
    before = len(DRIPS)
    run = session.send("drip")
    run.cancel()
    assert [u async for u in run] == []
    assert run.done == Done("cancelled", reason="cancelled by client")
    assert len(DRIPS) == before
