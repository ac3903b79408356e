"""The run logs keep a flush as one batch (one chunk in memory, one stream entry on
Redis) and hand readers batches: whatever the cursor and the read size, a reader
gets every entry after its cursor once, in order, with the ids a resume uses."""

from __future__ import annotations

import pytest

from agui.server._encoder import EventEncoder
from agui.server._runlog import LogBatch, LogSlice, LogTrimmed, MemoryRunStore, RunRef
from agui.server._runlog.redis import RedisRunStore

pytestmark = pytest.mark.timeout(60)

APPENDS = [3, 1, 5, 2]
"""Events per append of the logs these tests read (11 events in 4 flushes)."""


def _event(n: int) -> bytes:
    return b'{"type":"CUSTOM","name":"e","value":%d}' % n


async def _fill(store, run: RunRef) -> None:
    assert await store.create(run, 5.0)
    n = 0
    for i, size in enumerate(APPENDS):
        await store.append(run, [_event(n + k) for k in range(size)], end=i == len(APPENDS) - 1)
        n += size


async def _read_all(store, run: RunRef, after: str, limit: int) -> list[tuple[str, bytes]]:
    got: list[tuple[str, bytes]] = []
    while True:
        piece = await store.read(run, after, limit)
        assert all(batch.events for batch in piece.batches)
        got += piece.entries
        if piece.ended:
            return got
        assert piece.entries, "a read of a log not ended came back empty without blocking"
        after = piece.entries[-1][0]


async def _check_every_cursor(store, run: RunRef) -> None:
    whole = await _read_all(store, run, "0", 1000)
    assert [data for _, data in whole] == [_event(n) for n in range(sum(APPENDS))]
    assert len({eid for eid, _ in whole}) == len(whole)
    for limit in (1, 2, 4, 64, 1000):
        assert await _read_all(store, run, "0", limit) == whole
        for k, (cursor, _) in enumerate(whole):
            assert await store.holds(run, cursor)
            assert await _read_all(store, run, cursor, limit) == whole[k + 1 :]


async def test_a_memory_log_read_from_any_cursor_gives_every_later_entry_once_in_order():
    store = MemoryRunStore()
    run = RunRef("t", "batches")
    await _fill(store, run)
    await _check_every_cursor(store, run)
    assert await store.last(run) == _event(sum(APPENDS) - 1)


async def test_a_redis_log_read_from_any_cursor_gives_every_later_entry_once_in_order(redis_url):
    store = RedisRunStore.from_url(redis_url)
    run = RunRef("t", "redis-batches")
    try:
        await _fill(store, run)
        await _check_every_cursor(store, run)
        assert await store.last(run) == _event(sum(APPENDS) - 1)
    finally:
        await store.close()


async def test_the_memory_store_trims_inside_an_append_and_keeps_the_newest_entries():
    store = MemoryRunStore(max_run_events=5)
    run = RunRef("t", "trim-inside")
    assert await store.create(run, 5.0)
    await store.append(run, [_event(n) for n in range(3)])
    await store.append(run, [_event(n) for n in range(3, 7)])
    assert not await store.holds(run, "1")
    assert await store.holds(run, "2")  # entries 3..7 are held: a resume after 2 is whole
    piece = await store.read(run, "2", 100)
    assert piece.entries == [(str(n + 1), _event(n)) for n in range(2, 7)]
    with pytest.raises(LogTrimmed):  # from the start: entries 1 and 2 are gone
        await store.read(run, "0", 100)
    # a bound in bytes trims the same way: whole appends first, then the oldest of the next
    small = MemoryRunStore(max_run_bytes=3 * (len(_event(0)) + 64))
    assert await small.create(run, 5.0)
    for n in range(0, 8, 2):
        await small.append(run, [_event(n), _event(n + 1)])
    assert [eid for eid, _ in (await small.read(run, "5", 100)).entries] == ["6", "7", "8"]
    assert small.total_bytes == 3 * (len(_event(0)) + 64)


async def test_an_event_holding_a_raw_newline_is_kept_whole_in_the_redis_log(redis_url):
    store = RedisRunStore.from_url(redis_url)
    run = RunRef("t", "raw-newline")
    events = [b'{"a":1}', b'{"b":\n2}', b'{"c":3}']
    try:
        assert await store.create(run, 5.0)
        await store.append(run, events, end=True)
        piece = await store.read(run, "0", 100)
        assert [data for _, data in piece.entries] == events and piece.ended
        assert await store.last(run) == b'{"c":3}'
    finally:
        await store.close()


async def test_a_redis_entry_with_one_field_per_event_is_read_as_before(redis_url):
    store = RedisRunStore.from_url(redis_url, prefix="agui:per-field:")
    run = RunRef("t", "per-field")
    try:
        assert await store.create(run, 5.0)
        await store.append(run, [b"{}"])  # (makes the stream; the entries below follow it)
        [log] = [key async for key in store.client.scan_iter(match="agui:per-field:*:log")]
        first = (await store.client.xadd(log, {b"0": b'{"a":1}', b"1": b'{"b":2}'})).decode()
        second = (await store.client.xadd(log, {b"0": b'{"c":3}', b"e": b"1"})).decode()
        got = await _read_all(store, run, f"{first}:0", 1000)
        assert got == [(f"{first}:1", b'{"b":2}'), (f"{second}:0", b'{"c":3}')]
        assert await store.holds(run, f"{first}:1") and not await store.holds(run, f"{first}:2")
        assert await store.last(run) == b'{"c":3}'
    finally:
        await store.close()


async def test_a_redis_reader_at_the_end_of_an_entry_reads_on_in_one_xrange_never_a_blocking_xread(
    redis_url,
):
    store = RedisRunStore.from_url(redis_url)
    run = RunRef("t", "tail-reader")

    async def calls(command: str) -> int:
        stats = await store.client.info("commandstats")
        return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))

    try:
        assert await store.create(run, 5.0)
        await store.append(run, [_event(0), _event(1)])
        piece = await store.read(run, "0", 100)
        cursor = piece.entries[-1][0]
        await store.append(run, [_event(2)], end=True)
        before = await calls("xrange")
        piece = await store.read(run, cursor, 100, block=1.0)
        assert piece.entries and piece.entries[0][1] == _event(2) and piece.ended
        assert await calls("xrange") == before + 1
        assert await calls("xread") == 0  # no connection is held by a blocked reader
    finally:
        await store.close()


def test_frames_with_ids_are_each_events_frame_with_its_id_joined():
    encoder = EventEncoder()
    compact = [b'{"a":1}', b'{"b":"%d %s"}', b'{"c":3}']
    for events in (compact, [*compact, b"line one\r\nline two"]):
        for prefix in ("tag.7-0:", "t%d."):
            assert encoder.frames_with_ids(events, prefix, 4) == b"".join(
                encoder.frame_with_id(data, f"{prefix}{4 + i}") for i, data in enumerate(events)
            )
    assert encoder.frames_with_ids([], "tag.", 1) == b""


def test_a_log_slice_lists_its_batches_entries_with_their_ids():
    piece = LogSlice([LogBatch("", 3, [b"a", b"b"]), LogBatch("9-0:", 0, [b"c"])], False)
    assert piece.entries == [("3", b"a"), ("4", b"b"), ("9-0:0", b"c")]
    assert piece.count == 3
    assert piece.batches[-1].last_id == "9-0:0"


async def test_a_raw_emitter_queues_each_events_json_unframed_for_the_log():
    from agui.server._cancel import CancelToken
    from agui.server._emitter import Emitter, Outbox
    from agui.types import RunStartedEvent
    from agui.wire import encode_event

    event = RunStartedEvent(thread_id="t", run_id="r")
    raw, framed = Outbox(), Outbox()
    await Emitter(raw, None, CancelToken(), raw=True)(event)
    await Emitter(framed, None, CancelToken(), EventEncoder())(event)
    assert await raw.take_frames() == [encode_event(event)]
    assert await framed.take_frames() == [b"data: " + encode_event(event) + b"\n\n"]


def test_a_live_feed_gives_every_later_event_once_from_a_cursor_in_its_window_and_none_outside():
    from agui.server._runlog.feed import LiveFeed

    feed = LiveFeed(max_batches=3)
    batches = [LogBatch("7-0:", 0, [b"a", b"b"]), LogBatch("8-0:", 0, [b"c"])]
    batches += [LogBatch("9-0:", 0, [b"d", b"e", b"f"]), LogBatch("10-0:", 0, [b"g"])]
    for batch in batches[:3]:
        feed.push(batch)
    got = feed.after("0", 100)
    assert got is not None and [e for b in got[0] for e in b.events] == [
        b"a",
        b"b",
        b"c",
        b"d",
        b"e",
        b"f",
    ]
    assert got[1] is True  # reaches the newest
    feed.push(batches[3], end=True)  # the first batch leaves the window
    assert feed.after("0", 100) is None and feed.after("7-0:1", 100) is None
    got = feed.after("9-0:0", 2)
    assert got is not None and [(b.prefix, b.start, b.events) for b in got[0]] == [
        ("9-0:", 1, [b"e", b"f"])
    ]
    assert got[1] is False  # the limit stopped it short of the newest
    assert feed.after("10-0:0", 100) == ([], True) and feed.ended
    assert feed.after("11-0:0", 100) is None  # not pushed yet
