"""The in-memory run-log store: one process, bounded, the default.

Bounds (all configurable): ``max_run_events`` entries and ``max_run_bytes``
bytes per run (beyond them the run's oldest entries are trimmed, so a resume
from before the trimmed point is answered 410), ``max_total_bytes`` over all
runs (beyond it the oldest finished runs are evicted, then the appending run is
trimmed) and ``max_runs`` runs (a new run evicts the oldest finished one, or is
refused with :class:`RunLogFull`). Finished runs are kept in the order they
ended, so an eviction takes the oldest at once (no scan of the runs). A reader
whose position was trimmed gets :class:`LogTrimmed` (its stream ends
``log_trimmed``), never the entries after the gap as if nothing were missing.
Bound hits are logged on the ``agui.server._runlog`` logger at WARNING, at most
once per :data:`WARN_INTERVAL` seconds per kind, with the count since the last
one. A finished run is forgotten ``retention`` seconds after its last append.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import uuid
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from agui.server._runlog.store import (
    LogBatch,
    LogSlice,
    LogTrimmed,
    RunInfo,
    RunLogFull,
    RunRef,
    Signals,
)

__all__ = ["WARN_INTERVAL", "MemoryRunStore"]

WARN_INTERVAL = 10.0
"""Seconds between two warnings of one kind (trimmed, evicted); the warning
counts what happened since the last one."""

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


def _entry_number(entry: str) -> int | None:
    """An entry id as its number; None for anything but 1 to 20 ASCII digits."""
    if 0 < len(entry) <= 20 and entry.isascii() and entry.isdigit():
        return int(entry)
    return None


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
    worker: str = ""
    released: bool = False
    attached_until: float = 0.0
    cancel: bool = False
    lost_claimed: bool = False
    principal: str | None = None
    nonce: str = ""
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def first_id(self) -> int:
        """The id of the first entry held (``next_id`` when none is)."""
        return self.chunks[self.head].first if self.head < len(self.chunks) else self.next_id


class _Warnings:
    """Warnings of one kind at most once per :data:`WARN_INTERVAL` s, each with
    the count of occurrences since the previous one."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.count = 0
        self.last = float("-inf")

    def hit(self, detail: str) -> None:
        """One occurrence (``detail``: the latest's particulars)."""
        self.count += 1
        now = time.monotonic()
        if now - self.last >= WARN_INTERVAL:
            logger.warning(
                "%s %d time(s) in the last %g s (latest: %s)",
                self.what,
                self.count,
                WARN_INTERVAL,
                detail,
            )
            self.count = 0
            self.last = now


class MemoryRunStore:
    """Run logs in this process's memory (see the module doc for the bounds).

    ``MemoryRunStore(*, retention=300.0, max_run_events=100_000,
    max_run_bytes=32 MiB, max_total_bytes=256 MiB, max_runs=10_000)``.
    Entry ids are decimal integers from ``"1"``, per run. Bound to the event
    loop that first uses it. One store is one worker (:attr:`worker_id`).
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
        self.worker_id: str = uuid.uuid4().hex[:16]
        self._logs: OrderedDict[RunRef, _Log] = OrderedDict()
        self._finished: OrderedDict[RunRef, None] = OrderedDict()  # in the order they ended
        self._total = 0
        self._secret = os.urandom(32)
        self._alive_until: dict[str, float] = {}  # worker -> end of its heartbeat
        self._cancels: dict[str, set[RunRef]] = {}
        self._trimmed = _Warnings("run logs trimmed to a bound (a resume before it is refused)")
        self._evicted = _Warnings("finished run logs evicted early (the store is full)")

    @property
    def total_bytes(self) -> int:
        """Bytes held over all runs (entries' JSON plus a fixed overhead each)."""
        return self._total

    def __len__(self) -> int:
        return len(self._logs)

    # ------------------------------------------------------------ the worker

    async def create(
        self, run: RunRef, lease: float, *, principal: str | None = None, nonce: str = ""
    ) -> bool:
        """Claim ``run`` (see :class:`RunStore`). Raises :class:`RunLogFull`."""
        now = time.monotonic()
        self._expire(now)
        if run in self._logs:
            return False
        if len(self._logs) >= self.max_runs and not self._evict_finished():
            raise RunLogFull(f"the in-memory run log holds {len(self._logs)} runs (max_runs)")
        self._logs[run] = _Log(touched=now, worker=self.worker_id, principal=principal, nonce=nonce)
        self._alive_until[self.worker_id] = max(
            self._alive_until.get(self.worker_id, 0.0), now + lease
        )
        return True

    async def append(
        self, run: RunRef, entries: Sequence[bytes], *, end: bool = False
    ) -> LogBatch | None:
        """Append a batch (and the end mark); trims to the bounds."""
        log = self._logs.get(run)
        if log is None or log.ended:
            return None
        batch: LogBatch | None = None
        if entries:  # one chunk per append: nothing is done entry by entry
            events = list(entries)
            size = sum(map(len, events)) + _ENTRY_OVERHEAD * len(events)
            log.chunks.append(_Chunk(log.next_id, events, size))
            batch = LogBatch("", log.next_id, events)
            log.next_id += len(events)
            log.count += len(events)
            log.size += size
            self._total += size
        if end:
            log.ended = True
            self._finished[run] = None
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
        return batch

    async def heartbeat(self, lease: float) -> Signals:
        """This worker is alive ``lease`` s more; its runs' signals."""
        now = time.monotonic()
        self._alive_until[self.worker_id] = now + lease
        cancel = frozenset(self._cancels.pop(self.worker_id, ()))
        self._expire(now)
        return Signals(cancel=cancel, attached=frozenset())

    def _alive(self, log: _Log) -> bool:
        return not log.released and self._alive_until.get(log.worker, 0.0) > time.monotonic()

    async def release(self, run: RunRef) -> None:
        """The worker is done with ``run``."""
        log = self._logs.get(run)
        if log is not None:
            log.released = True

    # ------------------------------------------------------------ readers

    async def read(
        self, run: RunRef, after: str, limit: int, block: float | None = None
    ) -> LogSlice:
        """Entries after ``after`` (see :class:`RunStore`)."""
        log = self._logs.get(run)
        if log is None:
            return LogSlice([], True)
        start = _entry_number(after) or 0
        found = self._after(log, start, limit)
        if not found and not log.ended and block:
            changed = log.changed
            # (not asyncio.wait_for: on Python 3.11 it returns a wait that completed in the
            # loop turn the reader was cancelled in, and the cancel of a client gone is lost)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(block):
                    await changed.wait()
            found = self._after(log, start, limit)
        if start < log.first_id - 1:
            raise LogTrimmed(
                f"entries {start + 1} to {log.first_id - 1} of run {run.run_id!r} were "
                "trimmed from the in-memory run log"
            )
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
        n = _entry_number(after)
        if log is None or n is None or after != str(n):
            return False
        return log.first_id - 1 <= n < log.next_id

    def written_at(self, after: str) -> float | None:
        """None: an entry id here is a number, not a time."""
        return None

    async def info(self, run: RunRef) -> RunInfo | None:
        """See :class:`RunStore`."""
        self._expire(time.monotonic())
        log = self._logs.get(run)
        if log is None:
            return None
        return RunInfo(
            ended=log.ended, leased=self._alive(log), principal=log.principal, nonce=log.nonce
        )

    async def last(self, run: RunRef) -> bytes | None:
        """The last event's JSON."""
        log = self._logs.get(run)
        if log is None or not log.count:
            return None
        return log.chunks[-1].events[-1]

    async def touch(self, run: RunRef, ttl: float) -> None:
        """A reader is attached for ``ttl`` s (the worker is this process: it sees
        its own readers)."""
        log = self._logs.get(run)
        if log is not None:
            log.attached_until = time.monotonic() + ttl

    async def request_cancel(self, run: RunRef) -> bool:
        """Flag a cancel for the run's worker (read at its next heartbeat)."""
        log = self._logs.get(run)
        if log is None:
            return False
        log.cancel = True
        if not log.ended:
            self._cancels.setdefault(log.worker, set()).add(run)
        return True

    async def claim_lost(self, run: RunRef) -> bool:
        """Once, for a run whose worker's heartbeat lapsed before its end."""
        log = self._logs.get(run)
        if log is None or log.ended or log.lost_claimed or self._alive(log):
            return False
        log.lost_claimed = True
        return True

    async def close(self) -> None:
        """Forget every run."""
        self._logs.clear()
        self._finished.clear()
        self._total = 0

    async def secret(self) -> bytes:
        """This store's random token key (made with the store: one process)."""
        return self._secret

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
        self._trimmed.hit(f"run {run.run_id!r} to {why}, from entry {log.first_id}")

    def _evict_finished(self) -> bool:
        """Drop the finished run that ended first (O(1)); False when none is."""
        if not self._finished:
            return False
        run = next(iter(self._finished))
        self._evicted.hit(f"run {run.run_id!r}")
        self._drop(run)
        return True

    def _drop(self, run: RunRef) -> None:
        log = self._logs.pop(run)
        self._finished.pop(run, None)
        self._total -= log.size

    def _expire(self, now: float) -> None:
        horizon = now - self.retention
        while self._logs:
            run, log = next(iter(self._logs.items()))
            if log.touched > horizon:
                return  # ordered by last append: the rest are newer
            if not log.ended and self._alive(log):
                log.touched = now  # a live run of a live worker is never expired
                self._logs.move_to_end(run)
                continue
            self._drop(run)
