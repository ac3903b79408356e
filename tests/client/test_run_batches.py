"""``Run.batches()``: the opt-in iteration one list of updates per transport read."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agui.client._session import Session
from agui.types import (
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)
from agui.updates import Done, ErrorUpdate, TextDelta, Update
from agui.wire import encode_sse_event

pytestmark = pytest.mark.timeout(30)

THREAD = "t-batches"


def sse(*events: Any) -> bytes:
    return b"".join(encode_sse_event(e) for e in events)


FIRST = sse(
    RunStartedEvent(thread_id=THREAD, run_id="r1"),
    TextMessageStartEvent(message_id="m1"),
    TextMessageContentEvent(message_id="m1", delta="Hel"),
)
SECOND = sse(
    TextMessageContentEvent(message_id="m1", delta="lo"),
    TextMessageEndEvent(message_id="m1"),
    RunFinishedEvent(thread_id=THREAD, run_id="r1"),
)


class Reads:
    """A transport answering with the given reads (SSE bytes), one item each."""

    def __init__(self, *reads: bytes) -> None:
        self.reads = reads
        self.taken = 0

    async def stream(self, run_input: Any) -> AsyncIterator[bytes]:
        for chunk in self.reads:
            self.taken += 1
            yield chunk


def kinds(updates: list[Update]) -> list[tuple[str, Any]]:
    return [(type(u).__name__, getattr(u, "delta", None)) for u in updates]


async def per_update(*reads: bytes) -> list[Update]:
    return [u async for u in Session(Reads(*reads), thread_id=THREAD).run()]


def test_batches_hold_the_same_updates_in_the_same_order_one_list_per_read() -> None:
    async def main() -> tuple[list[list[Update]], list[Update]]:
        run = Session(Reads(FIRST, SECOND), thread_id=THREAD).run()
        lists = [batch async for batch in run.batches()]
        return lists, await per_update(FIRST, SECOND)

    lists, single = asyncio.run(main())
    assert [len(b) for b in lists] == [3, 3]  # RunStarted, TextStarted, TextDelta | ...
    assert kinds([u for b in lists for u in b]) == kinds(single)
    assert type(lists[-1][-1]) is Done and lists[-1][-1].outcome == "success"


def test_batches_tell_subscribers_each_update_before_its_list_is_handed_out() -> None:
    seen: list[Update] = []

    async def main() -> list[int]:
        session = Session(Reads(FIRST, SECOND), thread_id=THREAD)
        session.subscribe(seen.append)
        told_at_hand_out = []
        async for batch in session.run().batches():
            assert seen[-len(batch) :] == batch
            told_at_hand_out.append(len(seen))
        return told_at_hand_out

    assert asyncio.run(main()) == [3, 6]


def test_leaving_batches_after_the_first_list_leaves_later_reads_unapplied() -> None:
    async def main() -> tuple[str, int, Any]:
        transport = Reads(FIRST, SECOND)
        session = Session(transport, thread_id=THREAD)
        run = session.run()
        async with run:
            async for batch in run.batches():
                assert [u.delta for u in batch if type(u) is TextDelta] == ["Hel"]
                break
        text = session.conversation.messages[-1].content
        return text, transport.taken, run.done

    text, taken, done = asyncio.run(main())
    assert text == "Hel"  # the second read's "lo" was never applied
    assert taken == 1
    assert type(done) is Done and done.outcome == "cancelled"


def test_batches_report_a_bad_frame_as_a_typed_error_and_keep_the_rest() -> None:
    bad = FIRST + b"data: {not json\n\n" + SECOND

    async def main() -> list[Update]:
        run = Session(Reads(bad), thread_id=THREAD).run()
        return [u async for batch in run.batches() for u in batch]

    updates = asyncio.run(main())
    errors = [u for u in updates if type(u) is ErrorUpdate]
    assert len(errors) == 1 and not errors[0].fatal
    assert [u.delta for u in updates if type(u) is TextDelta] == ["Hel", "lo"]
    assert type(updates[-1]) is Done and updates[-1].outcome == "success"


def test_a_run_iterated_update_by_update_refuses_batches() -> None:
    async def main() -> None:
        run = Session(Reads(FIRST, SECOND), thread_id=THREAD).run()
        async with run:
            async for _ in run:
                break
            with pytest.raises(RuntimeError, match="update by update"):
                run.batches()

    asyncio.run(main())


def test_a_run_iterated_with_batches_refuses_update_by_update() -> None:
    async def main() -> None:
        run = Session(Reads(FIRST, SECOND), thread_id=THREAD).run()
        async with run:
            async for _ in run.batches():
                break
            with pytest.raises(RuntimeError, match="with batches"):
                run.__aiter__()

    asyncio.run(main())
