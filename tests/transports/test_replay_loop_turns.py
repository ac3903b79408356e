"""Replay of event lists / JSON Lines gives the event loop one turn per batch of
items, not one per item, and stays cancellable within a batch."""

from __future__ import annotations

import asyncio

import pytest

from agui.transports.replay import YIELD_EVERY, ReplayTransport
from agui.types import RunAgentInput


def _input() -> RunAgentInput:
    return RunAgentInput(
        thread_id="t", run_id="r", state={}, messages=[], tools=[], context=[], forwarded_props={}
    )


def _events(n: int) -> list[str]:
    return [
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x' + str(i) + '"}'
        for i in range(n)
    ]


async def _drain_counting_turns(transport: ReplayTransport) -> tuple[int, int]:
    turns = 0
    loop = asyncio.get_running_loop()
    running = True

    def tick() -> None:
        nonlocal turns
        if running:
            turns += 1
            loop.call_soon(tick)

    loop.call_soon(tick)
    items = 0
    async for _ in transport.stream(_input()):
        items += 1
    running = False
    return items, turns


@pytest.mark.asyncio
async def test_replaying_an_event_list_takes_one_loop_turn_per_batch_not_per_event():
    n = YIELD_EVERY * 50
    items, turns = await _drain_counting_turns(ReplayTransport(_events(n)))
    assert items == n
    assert turns <= n // YIELD_EVERY + 2


@pytest.mark.asyncio
async def test_replay_of_json_lines_takes_one_loop_turn_per_batch(tmp_path):
    n = YIELD_EVERY * 20
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(_events(n)) + "\n")
    items, turns = await _drain_counting_turns(ReplayTransport(str(path)))
    assert items == n
    assert turns <= n // YIELD_EVERY + 2


@pytest.mark.asyncio
async def test_a_replay_is_cancelled_within_one_batch_of_items():
    seen = 0

    async def consume() -> None:
        nonlocal seen
        async for _ in ReplayTransport(_events(YIELD_EVERY * 100)).stream(_input()):
            seen += 1

    task = asyncio.create_task(consume())
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert 0 < seen <= 2 * YIELD_EVERY
