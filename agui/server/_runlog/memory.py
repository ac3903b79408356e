"""The in-memory run-log store: one process, bounded, the default.

Bounds (all configurable): ``max_run_events`` entries and ``max_run_bytes``
bytes per run (beyond them the run's oldest entries are trimmed, so a resume
from before the trimmed point is answered 410), ``max_total_bytes`` over all
runs (beyond it the oldest finished runs are evicted, then the appending run is
trimmed) and ``max_runs`` runs (a new run evicts the oldest finished one, or is
refused with :class:`RunLogFull`). Each bound hit is logged once per run on the
``agui.server._runlog`` logger at WARNING. A finished run is forgotten
``retention`` seconds after its last append.
"""

from __future__ import annotations

import asyncio
import logging
import time
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from agui.server._runlog.store import LogBatch, LogSlice, RunInfo, RunLogFull, RunRef, Signals

__all__ = ["MemoryRunStore"]

logger: logging.Logger = logging.getLogger("agui.server.runlog")

_ENTRY_OVERHEAD = 64
"""Bytes counted per entry beyond its JSON (the id and the bookkeeping)."""

_COMPACT_AT = 64
"""Dropped chunks a log keeps at the head of its list before it compacts it."""


@dataclass(frozen=True, slots=True)
class _Chunk:
    """One append: entries ``first`` .. ``first + len(events) - 1``; ``size`` the
    bytes counted for them. Never changed: trimming replaces it."""

    first: int
    events: list[bytes]
    size: int


def _first_of(chunk: _Chunk) -> int:
    return chunk.first


@dataclass(slots=True)
class _Log:
    chunks: list[_Chunk] = field(default_factory=list[_Chunk])
    head: int = 0  # chunks[:head] are trimmed away (compacted now and then)
    count: int = 0  # entries held
    next_id: int = 1
    size: int = 0
    ended: bool = False
    touched: float = 0.0  # monotonic time of the last append
    lease_until: float = 0.0
    attached_until: float = 0.0
    cancel: bool = False
    lost_claimed: bool = False
    trimmed_warned: bool = False
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def first_id(self) -> int:
        """The id of the first entry held (``next_id`` when none is)."""
        return self.chunks[self.head].first if self.head < len(self.chunks) else self.next_id


class MemoryRunStore:
    """Run logs in this process's memory (see the module doc for the bounds).

    ``MemoryRunStore(*, retention=300.0, max_run_events=100_000,
    max_run_bytes=32 MiB, max_total_bytes=256 MiB, max_runs=10_000)``.
    Entry ids are decimal integers from ``"1"``, per run. Bound to the event
    loop that first uses it.
    """

    def __init__(
        self,
        *,
        retention: float = 300.0,
        max_run_events: int = 100_000,
        max_run_bytes: int = 32 * 1024 * 1024,
        max_total_bytes: int = 256 * 1024 * 1024,
        max_runs: int = 10_000,
    ) -> None:
        self.retention: float = retention
        self.max_run_events = max_run_events
        self.max_run_bytes = max_run_bytes
        self.max_total_bytes = max_total_bytes
        self.max_runs = max_runs
        self._logs: OrderedDict[RunRef, _Log] = OrderedDict()
        self._total = 0

    @property
    def total_bytes(self) -> int:
        """Bytes held over all runs (entries' JSON plus a fixed overhead each)."""
        return self._total

    def __len__(self) -> int:
        return len(self._logs)

    # ------------------------------------------------------------ the worker

    async def create(self, run: RunRef, lease: float) -> bool:
        """Claim ``run`` (see :class:`RunStore`). Raises :class:`RunLogFull`."""
        now = time.monotonic()
        self._expire(now)
        if run in self._logs:
            return False
        if len(self._logs) >= self.max_runs and not self._evict_finished():
            raise RunLogFull(f"the in-memory run log holds {len(self._logs)} runs (max_runs)")
        self._logs[run] = _Log(touched=now, lease_until=now + lease)
        return True

    async def append(self, run: RunRef, entries: Sequence[bytes], *, end: bool = False) -> None:
        """Append a batch (and the end mark); trims to the bounds."""
        log = self._logs.get(run)
        if log is None or log.ended:
            return
        if entries:  # one chunk per append: nothing is done entry by entry
            events = list(entries)
            size = sum(map(len, events)) + _ENTRY_OVERHEAD * len(events)
            log.chunks.append(_Chunk(log.next_id, events, size))
            log.next_id += len(events)
            log.count += len(events)
            log.size += size
            self._total += size
        if end:
            log.ended = True
        log.touched = time.monotonic()
        self._logs.move_to_end(run)
        if log.count > self.max_run_events or log.size > self.max_run_bytes:
            self._trim(run, log, "its per-run bound")
        if self._total > self.max_total_bytes:
            while self._total > self.max_total_bytes and self._evict_finished():
                pass
            if self._total > self.max_total_bytes:
                self._trim(run, log, "the store's total bound")
        changed, log.changed = log.changed, asyncio.Event()
        changed.set()

    async def renew(self, run: RunRef, lease: float) -> Signals:
        """Renew the lease; the signals (see :class:`RunStore`)."""
        log = self._logs.get(run)
        if log is None:
            return Signals(cancel=False, attached=False)
        now = time.monotonic()
        log.lease_until = now + lease
        log.touched = now  # a live run is never expired
        self._logs.move_to_end(run)
        return Signals(cancel=log.cancel, attached=log.attached_until > now)

    async def release(self, run: RunRef) -> None:
        """Drop the lease."""
        log = self._logs.get(run)
        if log is not None:
            log.lease_until = 0.0

    # ------------------------------------------------------------ readers

    async def read(
        self, run: RunRef, after: str, limit: int, block: float | None = None
    ) -> LogSlice:
        """Entries after ``after`` (see :class:`RunStore`)."""
        log = self._logs.get(run)
        if log is None:
            return LogSlice([], True)
        start = int(after) if after.isdigit() else 0
        found = self._after(log, start, limit)
        if not found and not log.ended and block:
            changed = log.changed
            try:
                await asyncio.wait_for(changed.wait(), block)
            except TimeoutError:
                pass
            found = self._after(log, start, limit)
        ended = log.ended and (not found or found[-1].start + len(found[-1].events) == log.next_id)
        return LogSlice(found, ended)

    def _after(self, log: _Log, start: int, limit: int) -> list[LogBatch]:
        """At most ``limit`` entries from id ``start + 1`` (or the first held), as
        batches that share the chunks' lists where a whole chunk is taken."""
        want = start + 1
        chunks = log.chunks
        if want >= log.next_id or log.head >= len(chunks) or limit <= 0:
            return []
        index = len(chunks) - 1  # a reader following the tail wants the last chunk
        if chunks[index].first > want:
            index = max(bisect_right(chunks, want, log.head, index, key=_first_of) - 1, log.head)
        out: list[LogBatch] = []
        while index < len(chunks) and limit > 0:
            chunk = chunks[index]
            skip = max(want - chunk.first, 0)
            events = chunk.events
            if skip or len(events) - skip > limit:
                events = events[skip : skip + limit]
            out.append(LogBatch("", chunk.first + skip, events))
            limit -= len(events)
            index += 1
        return out

    async def holds(self, run: RunRef, after: str) -> bool:
        """Whether everything after entry ``after`` is still held."""
        log = self._logs.get(run)
        if log is None or not after.isdigit() or after != str(int(after)):
            return False
        n = int(after)
        return log.first_id - 1 <= n < log.next_id

    async def info(self, run: RunRef) -> RunInfo | None:
        """See :class:`RunStore`."""
        self._expire(time.monotonic())
        log = self._logs.get(run)
        if log is None:
            return None
        return RunInfo(ended=log.ended, leased=log.lease_until > time.monotonic())

    async def last(self, run: RunRef) -> bytes | None:
        """The last event's JSON."""
        log = self._logs.get(run)
        if log is None or not log.count:
            return None
        return log.chunks[-1].events[-1]

    async def touch(self, run: RunRef, ttl: float) -> None:
        """A reader is attached for ``ttl`` s."""
        log = self._logs.get(run)
        if log is not None:
            log.attached_until = time.monotonic() + ttl

    async def request_cancel(self, run: RunRef) -> bool:
        """Flag a cancel for the worker."""
        log = self._logs.get(run)
        if log is None:
            return False
        log.cancel = True
        return True

    async def claim_lost(self, run: RunRef) -> bool:
        """Once, for a run whose lease lapsed before its end."""
        log = self._logs.get(run)
        if log is None or log.ended or log.lost_claimed or log.lease_until > time.monotonic():
            return False
        log.lost_claimed = True
        return True

    async def close(self) -> None:
        """Forget every run."""
        self._logs.clear()
        self._total = 0

    # ------------------------------------------------------------ bounds

    def _trim(self, run: RunRef, log: _Log, why: str) -> None:
        over_total = why.startswith("the store")

        def over(count: int, size: int) -> bool:  # (count, size: what the log would hold)
            return (
                count > self.max_run_events
                or size > self.max_run_bytes
                or (over_total and self._total - (log.size - size) > self.max_total_bytes)
            )

        chunks = log.chunks
        while log.head < len(chunks) and over(log.count, log.size):
            chunk = chunks[log.head]
            drop, dropped = len(chunk.events), chunk.size
            if not over(log.count - drop, log.size - dropped):
                drop, dropped = 0, 0  # only part of it: its oldest entries
                for data in chunk.events:
                    drop += 1
                    dropped += len(data) + _ENTRY_OVERHEAD
                    if not over(log.count - drop, log.size - dropped):
                        break
            if drop == len(chunk.events):
                log.head += 1
            else:
                chunks[log.head] = _Chunk(
                    chunk.first + drop, chunk.events[drop:], chunk.size - dropped
                )
            log.count -= drop
            log.size -= dropped
            self._total -= dropped
        if log.head >= _COMPACT_AT and log.head * 2 >= len(chunks):
            del chunks[: log.head]
            log.head = 0
        if not log.trimmed_warned:
            log.trimmed_warned = True
            logger.warning(
                "run log of run %r (thread %r) trimmed to %s: a resume from before "
                "entry %s is refused (410)",
                run.run_id,
                run.thread_id,
                why,
                log.first_id,
            )

    def _evict_finished(self) -> bool:
        for run, log in self._logs.items():
            if log.ended:
                logger.warning(
                    "run log of finished run %r evicted early: the in-memory store is full",
                    run.run_id,
                )
                self._drop(run)
                return True
        return False

    def _drop(self, run: RunRef) -> None:
        log = self._logs.pop(run)
        self._total -= log.size

    def _expire(self, now: float) -> None:
        horizon = now - self.retention
        while self._logs:
            run, log = next(iter(self._logs.items()))
            if log.touched > horizon:
                return  # ordered by last append: the rest are newer
            self._drop(run)
