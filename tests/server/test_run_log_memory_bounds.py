"""The in-memory run log never loses events silently: a reader whose position was
trimmed gets a typed ``log_trimmed`` gap error (its stream ends with it), one
flush larger than the per-run bound still reaches the run's own client whole,
eviction at the byte cap is O(1) (the finished runs are kept in the order they
ended), and eviction warnings are rate-limited with a count."""

from __future__ import annotations

import asyncio
import logging
import time

import httpx
import pytest
from support.resume_helpers import parse_frames

from agui.client._session import Session
from agui.server import BackgroundServer, create_app
from agui.server._runlog import LogTrimmed, MemoryRunStore, RunRef
from agui.server._runlog.memory import WARN_INTERVAL
from agui.types import (
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)
from agui.updates import Done, TextDelta

pytestmark = pytest.mark.timeout(60)


def _agent(n: int, size: int, *, burst: bool):
    """``n`` deltas of ``size`` bytes: all at once (one flush) or each its own flush."""

    async def agent(run_input, emit, cancel) -> None:
        rid, tid = run_input.run_id, run_input.thread_id
        await emit(RunStartedEvent(thread_id=tid, run_id=rid))
        await emit(TextMessageStartEvent(message_id="m", role="assistant"))
        for i in range(n):
            await emit(TextMessageContentEvent(message_id="m", delta=f"{i:06d}" + "x" * size))
            if not burst:
                await asyncio.sleep(0)
        await emit(TextMessageEndEvent(message_id="m"))
        await emit(RunFinishedEvent(thread_id=tid, run_id=rid))

    return agent


def test_a_reader_whose_position_was_trimmed_gets_log_trimmed_never_a_silent_gap():
    store = MemoryRunStore(max_run_bytes=512 * 1024)
    app = create_app(_agent(1500, 8000, burst=False), store=store)
    payload = {"threadId": "t", "runId": "slow-reader", "messages": []}
    with BackgroundServer(app) as server:
        text = ""
        with httpx.Client(timeout=30) as client:
            with client.stream("POST", server.url + "/agent", json=payload) as response:
                for i, chunk in enumerate(response.iter_text()):
                    text += chunk
                    if i == 0:
                        time.sleep(1.5)  # a slow client: the log runs past it
    frames = parse_frames(text)
    deltas = [int(e["delta"][:6]) for _, e in frames if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert deltas == list(range(len(deltas)))  # no gap: what came, came whole
    last = frames[-1][1]
    assert last["type"] == "RUN_ERROR" and last["code"] == "log_trimmed", last
    assert len(deltas) < 1500


def test_a_flush_larger_than_the_per_run_bound_reaches_the_runs_client_whole():
    store = MemoryRunStore(max_run_events=20)
    app = create_app(_agent(100, 4, burst=True), store=store)
    with BackgroundServer(app) as server:

        async def go():
            session = Session(server.url + "/agent", thread_id="t")
            run = session.send("go", run_id="burst")
            updates = [u async for u in run]
            assert run.cursor is not None
            return updates, run.cursor.split(".")[0]  # the run token: proof of the run

        updates, token = asyncio.run(go())
        assert [u.delta[:6] for u in updates if isinstance(u, TextDelta)] == [
            f"{i:06d}" for i in range(100)
        ]
        assert isinstance(updates[-1], Done) and updates[-1].outcome == "success"
        # a resume from the run's start cannot be whole any more: typed, not partial
        again = httpx.post(
            server.url + "/agent",
            json={"threadId": "t", "runId": "burst", "messages": []},
            headers={"Last-Event-ID": f"{token}.0"},
            timeout=10,
        )
        assert again.status_code == 410


async def test_a_read_from_before_a_trimmed_flush_raises_log_trimmed():
    store = MemoryRunStore(max_run_events=50)
    run = RunRef("t", "one-big-flush")
    assert await store.create(run, 5.0)
    await store.append(run, [b"{}"] * 100, end=True)
    with pytest.raises(LogTrimmed):
        await store.read(run, "0", 1000)
    with pytest.raises(LogTrimmed):
        await store.read(run, "49", 1000)
    assert (await store.read(run, "50", 1000)).count == 50


async def _eviction_cost(live_runs: int) -> float:
    """Seconds per append that evicts a finished run, with ``live_runs`` unfinished."""
    store = MemoryRunStore(max_total_bytes=400_000, max_runs=100_000)
    for i in range(live_runs):
        assert await store.create(RunRef("live", str(i)), 60.0)
    done = 0
    data = [b"x" * 1000]
    for i in range(300):  # fill with finished runs
        run = RunRef("done", str(i))
        assert await store.create(run, 60.0)
        await store.append(run, data, end=True)
        done += 1
    start = time.perf_counter()
    for i in range(2000):
        run = RunRef("more", str(i))
        assert await store.create(run, 60.0)
        await store.append(run, data, end=True)  # each evicts the oldest finished run
    return (time.perf_counter() - start) / 2000


async def test_evicting_at_the_byte_cap_costs_the_same_with_8000_live_runs_as_with_100(caplog):
    caplog.set_level(logging.ERROR, "agui.server._runlog")
    few = min([await _eviction_cost(100) for _ in range(3)])
    many = min([await _eviction_cost(8000) for _ in range(3)])
    assert many < 4 * few, (few, many)  # was a scan of every run: ~50x here


async def test_eviction_warnings_are_rate_limited_and_count_what_they_stand_for(caplog):
    caplog.set_level(logging.WARNING, "agui.server._runlog")
    store = MemoryRunStore(max_total_bytes=10_000)
    for i in range(500):
        run = RunRef("w", str(i))
        assert await store.create(run, 60.0)
        await store.append(run, [b"x" * 1000], end=True)
    records = [r for r in caplog.records if "evicted" in r.getMessage()]
    assert len(records) == 1  # 490 evictions within WARN_INTERVAL: one warning
    assert WARN_INTERVAL >= 1.0
    store._evicted.last -= WARN_INTERVAL  # the interval is over: the next one counts the rest
    run = RunRef("w", "last")
    assert await store.create(run, 60.0)
    await store.append(run, [b"x" * 1000], end=True)
    records = [r for r in caplog.records if "evicted" in r.getMessage()]
    assert len(records) == 2 and " 491 time(s)" in records[-1].getMessage(), records[-1]
