"""Replay of event lists / JSON Lines / JSON arrays gives the event loop one turn per
batch of events, not one per event, hands the pipeline batches framed as SSE (so a
reader pays its per-read cost per batch, as for an SSE response), and stays cancellable
within a batch."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.replay import replayed_frames

from agui.client._session import Session
from agui.transports._replay import YIELD_EVERY, ReplayTransport
from agui.types import RunAgentInput, TextMessageContentEvent
from agui.wire._sse import SseReader


def _input() -> RunAgentInput:
    return RunAgentInput(
        thread_id="t", run_id="r", state={}, messages=[], tools=[], context=[], forwarded_props={}
    )


def _events(n: int) -> list[str]:
    return [
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"x' + str(i) + '"}'
        for i in range(n)
    ]


async def _drain_counting_turns(transport: ReplayTransport) -> tuple[int, int, int]:
    """(frames, transport items, loop turns) of one replay."""
    turns = 0
    loop = asyncio.get_running_loop()
    running = True

    def tick() -> None:
        nonlocal turns
        if running:
            turns += 1
            loop.call_soon(tick)

    loop.call_soon(tick)
    frames = items = 0
    reader = SseReader()
    async for item in transport.stream(_input()):
        items += 1
        frames += len(reader.feed(item)) if isinstance(item, bytes) else 1
    running = False
    return frames, items, turns


@pytest.mark.asyncio
async def test_replaying_an_event_list_takes_one_loop_turn_per_batch_not_per_event():
    n = YIELD_EVERY * 50
    frames, items, turns = await _drain_counting_turns(ReplayTransport(_events(n)))
    assert frames == n
    assert items == n // YIELD_EVERY  # one SSE piece per batch
    assert turns <= n // YIELD_EVERY + 2


@pytest.mark.asyncio
async def test_replay_of_json_lines_takes_one_loop_turn_per_batch(tmp_path):
    n = YIELD_EVERY * 20
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(_events(n)) + "\n")
    frames, items, turns = await _drain_counting_turns(ReplayTransport(str(path)))
    assert frames == n
    assert items < n // YIELD_EVERY
    assert turns <= n // YIELD_EVERY + 2


@pytest.mark.asyncio
async def test_replay_of_a_json_array_takes_one_loop_turn_per_batch(tmp_path):
    n = YIELD_EVERY * 20
    path = tmp_path / "run.json"
    path.write_text("[\n" + ",\n".join(_events(n)) + "\n]\n")
    frames, items, turns = await _drain_counting_turns(ReplayTransport(str(path)))
    assert frames == n
    assert items == n // YIELD_EVERY
    assert turns <= n // YIELD_EVERY + 2


@pytest.mark.asyncio
async def test_a_replay_is_cancelled_within_one_batch_of_items():
    seen = 0

    async def consume() -> None:
        nonlocal seen
        reader = SseReader()
        async for item in ReplayTransport(_events(YIELD_EVERY * 100)).stream(_input()):
            seen += len(reader.feed(item)) if isinstance(item, bytes) else 1

    task = asyncio.create_task(consume())
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert 0 < seen <= 2 * YIELD_EVERY


@pytest.mark.asyncio
async def test_batched_replay_gives_back_each_recorded_text_exactly(tmp_path):
    # texts a single SSE frame cannot carry as they are (a line break, a lone
    # surrogate, an empty text) go on their own, in order; the rest are batched
    odd = [
        '{"type":"TEXT_MESSAGE_CONTENT",\n"messageId":"m","delta":"a"}',
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\ud800"}',
        "",
        '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":" é "}',
    ]
    texts = _events(YIELD_EVERY + 3) + odd + _events(5)
    assert await replayed_frames(ReplayTransport(texts), _input()) == texts


@pytest.mark.asyncio
async def test_an_event_struct_among_texts_is_replayed_in_its_place():
    struct = TextMessageContentEvent(message_id="m", delta="s")
    source: list[object] = [*_events(3), struct, *_events(2)]
    assert await replayed_frames(ReplayTransport(source), _input()) == source


@pytest.mark.asyncio
async def test_json_lines_replay_as_their_exact_lines(tmp_path):
    lines = _events(YIELD_EVERY * 3)
    path = tmp_path / "run.jsonl"
    # blank lines, CRLF and CR endings, padding and a BOM, as a hand-made file has them
    body = "\ufeff" + "\r\n".join(lines[:10]) + "\n\n  " + "\r".join(lines[10:20]) + " \n"
    path.write_text(body + "\n".join(lines[20:]))  # the last line without its newline
    assert await replayed_frames(ReplayTransport(str(path)), _input()) == lines


def test_a_session_over_a_batched_replay_gives_the_updates_of_its_sse_form():
    events = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        *(
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"w{i} "}
            for i in range(YIELD_EVERY * 3)
        ),
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    sse = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)

    async def updates(transport: ReplayTransport) -> list[str]:
        return [repr(u) async for u in Session(transport, thread_id="t").run()]

    assert asyncio.run(updates(ReplayTransport(events))) == asyncio.run(
        updates(ReplayTransport(sse))
    )


@pytest.mark.asyncio
async def test_a_json_array_replays_as_its_exact_elements_whatever_they_hold(tmp_path):
    # commas and "}," inside strings and nested values, pretty-printed elements,
    # and a NaN only the standard library reads: each element's exact text, in order
    texts = [
        '{"type":"STATE_SNAPSHOT","snapshot":{"a":{"b":1},"c":"},{x},"}}',
        *_events(YIELD_EVERY),
        '{\n  "type": "TEXT_MESSAGE_CONTENT",\n  "messageId": "m",\n  "delta": "},"\n}',
        '{"type":"STATE_SNAPSHOT","snapshot":{"n":NaN}}',
        *_events(YIELD_EVERY * 2),
    ]
    path = tmp_path / "run.json"
    path.write_text("[ " + " ,\n ".join(texts) + " ]")
    assert await replayed_frames(ReplayTransport(str(path)), _input()) == texts


def test_a_trailing_comma_after_a_batch_of_array_elements_is_refused(tmp_path):
    from agui.errors import DecodeError

    path = tmp_path / "run.json"
    path.write_text("[" + ",".join(_events(YIELD_EVERY * 4)) + ",]")
    with pytest.raises(DecodeError, match="trailing comma"):
        ReplayTransport(str(path))
