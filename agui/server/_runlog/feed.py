"""The in-process tail of a run's log: the requests attached in the process that
runs the agent read the run's latest batches here, not from the store, so a
process's store traffic does not grow with its attachments (a store read is
needed only by a reader behind the window, or one in another process).

The window keeps the last ``max_batches`` batches, at most ``max_bytes`` (the
newest batch is always kept, whatever its size). A run whose log failed ends
here with its terminal event even though the store could not take it.
"""

from __future__ import annotations

import asyncio
from collections import deque

from agui.server._runlog.store import LogBatch

__all__ = ["FEED_BATCHES", "FEED_BYTES", "LiveFeed"]

FEED_BATCHES = 32
"""Batches (flushes) a run's in-process window keeps."""

FEED_BYTES = 256 * 1024
"""Bytes of events a run's in-process window keeps (beyond its newest batch).
With the in-memory store the window shares the log's bytes (no copy); with
Redis it is what a process keeps per live run beside the store."""


class LiveFeed:
    """The window of one live run (see the module doc): :meth:`push` after each
    append, :meth:`after` to read from a cursor, :meth:`wait` for the next push."""

    __slots__ = ("_changed", "batches", "dropped", "ended", "max_batches", "max_bytes", "size")

    def __init__(self, max_batches: int = FEED_BATCHES, max_bytes: int = FEED_BYTES) -> None:
        self.batches: deque[LogBatch] = deque()
        self.size: int = 0
        self.dropped: bool = False  # the run's first batches left the window
        self.ended: bool = False  # nothing follows the last batch
        self.max_batches: int = max_batches
        self.max_bytes: int = max_bytes
        self._changed: asyncio.Event = asyncio.Event()

    def push(self, batch: LogBatch | None, *, end: bool = False) -> None:
        """``batch`` was appended (None: nothing was); ``end``: it is the last."""
        if batch is not None:
            self.batches.append(batch)
            self.size += sum(map(len, batch.events))
            while len(self.batches) > 1 and (
                len(self.batches) > self.max_batches or self.size > self.max_bytes
            ):
                old = self.batches.popleft()
                self.size -= sum(map(len, old.events))
                self.dropped = True
        if end:
            self.ended = True
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def after(self, cursor: str, limit: int) -> tuple[list[LogBatch], bool] | None:
        """The batches after entry ``cursor`` (``"0"``: from the run's start), at
        most ``limit`` events, and whether they reach the newest; None when the
        cursor is not in the window (older than it, or not pushed yet)."""
        batches = self.batches
        index, skip = -1, 0
        if cursor == "0":
            if self.dropped:
                return None
            index = 0
        else:
            for i in range(len(batches) - 1, -1, -1):  # a reader at the tail: the newest
                batch = batches[i]
                prefix = batch.prefix
                if not cursor.startswith(prefix):
                    continue
                rest = cursor[len(prefix) :]
                if not rest.isdigit() or len(rest) > 12:
                    continue
                k = int(rest)
                if batch.start <= k < batch.start + len(batch.events):
                    index, skip = i, k - batch.start + 1
                    break
            if index < 0:
                return None
        out: list[LogBatch] = []
        while index < len(batches) and limit > 0:
            batch = batches[index]
            events = batch.events
            if skip or len(events) - skip > limit:
                events = events[skip : skip + limit]
            if events:
                out.append(LogBatch(batch.prefix, batch.start + skip, events))
                limit -= len(events)
            skip = 0
            index += 1
        at_end = index >= len(batches) and (
            not out
            or (out[-1].start + len(out[-1].events) == batches[-1].start + len(batches[-1].events))
        )
        return out, at_end

    async def wait(self, timeout: float) -> None:
        """Until the next :meth:`push`, or ``timeout`` s."""
        changed = self._changed
        try:
            async with asyncio.timeout(timeout):
                await changed.wait()
        except TimeoutError:
            pass
