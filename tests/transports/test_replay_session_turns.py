"""A Session over a long replayed event list: another task gets a turn at least every
YIELD_EVERY events, and cancelling the run stops it within one batch."""

from __future__ import annotations

import asyncio

import pytest

from agui.client._session import Session
from agui.transports._replay import YIELD_EVERY, ReplayTransport


def _events(n: int) -> list[dict[str, object]]:
    return [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        *({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"w{i} "} for i in range(n)),
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]


@pytest.mark.asyncio
async def test_another_task_runs_at_least_every_yield_every_events_of_a_replayed_session():
    n = YIELD_EVERY * 20
    updates = 0
    most = 0  # updates between two turns of the other task
    done = False

    async def other() -> None:
        nonlocal most
        seen = 0
        while not done:
            await asyncio.sleep(0)
            most = max(most, updates - seen)
            seen = updates

    ticker = asyncio.create_task(other())
    async for _ in Session(ReplayTransport(_events(n)), thread_id="t").run():
        updates += 1
    done = True
    await ticker
    assert updates >= n
    assert 0 < most <= YIELD_EVERY + 4  # (the run's start and end updates around a batch)


@pytest.mark.asyncio
async def test_cancelling_a_session_run_over_a_long_replay_stops_it_within_one_batch():
    updates = 0
    loop_turns = 0

    async def consume() -> None:
        nonlocal updates
        async for _ in Session(ReplayTransport(_events(YIELD_EVERY * 100)), thread_id="t").run():
            updates += 1

    task = asyncio.create_task(consume())
    while updates < YIELD_EVERY * 3:  # mid-run
        await asyncio.sleep(0)
        loop_turns += 1
    at = updates
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert updates - at <= YIELD_EVERY
    assert updates < YIELD_EVERY * 10
    assert loop_turns <= 3 + 5  # about one turn per batch of events
