"""The run-log store interface: one log per run, appended by the run's worker,
read from a cursor by any request attached to it.

A log is a sequence of entries, each an id (a store-chosen string, ordered
within the run) and the bytes of one event's JSON, closed by an end mark once
the run is over. Beside the log a store keeps four small facts per run: the
lease of its worker (renewed while the agent runs; a run whose lease lapsed
before its end mark was lost with its worker), whether a reader elsewhere is
attached, whether a cancel was requested, and whether a process already
claimed ending a lost run. The toolkit (:mod:`agui.server._runs`) talks to this
interface only; it never knows which store it has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["LogBatch", "LogSlice", "RunInfo", "RunLogFull", "RunRef", "RunStore", "Signals"]


@dataclass(frozen=True, slots=True)
class RunRef:
    """One run: its ``threadId`` and ``runId`` (a run is unique by the pair)."""

    thread_id: str
    run_id: str


@dataclass(frozen=True, slots=True)
class LogBatch:
    """Consecutive entries of one log, as a store holds them: ``events`` (each
    one event's JSON) with the entry ids ``prefix + str(start + i)``, i from 0.
    One batch is usually one append of the worker (one flush), so a reader
    handles a flush as one piece instead of entry by entry."""

    prefix: str
    start: int
    events: Sequence[bytes]

    def ids(self) -> list[str]:
        """The entry ids of ``events``, in order."""
        prefix, start = self.prefix, self.start
        return [f"{prefix}{start + i}" for i in range(len(self.events))]

    @property
    def last_id(self) -> str:
        """The id of the last of ``events`` (the batch holds at least one)."""
        return f"{self.prefix}{self.start + len(self.events) - 1}"


@dataclass(frozen=True, slots=True)
class LogSlice:
    """Entries read from a log: ``batches`` (:class:`LogBatch`, in order, none
    empty) and ``ended`` (the end mark follows the last of them: the run is over
    and nothing more will come)."""

    batches: list[LogBatch]
    ended: bool

    @property
    def entries(self) -> list[tuple[str, bytes]]:
        """The entries one by one: ``(entry id, event JSON)`` pairs, in order."""
        return [
            pair for batch in self.batches for pair in zip(batch.ids(), batch.events, strict=True)
        ]

    @property
    def count(self) -> int:
        """How many entries the slice holds."""
        return sum(len(batch.events) for batch in self.batches)


@dataclass(frozen=True, slots=True)
class RunInfo:
    """What a store knows of a run: ``ended`` (its end mark is in the log) and
    ``leased`` (its worker's lease is current)."""

    ended: bool
    leased: bool


@dataclass(frozen=True, slots=True)
class Signals:
    """What a run's worker learns when it renews its lease: ``cancel`` (a cancel
    was requested, perhaps through another process) and ``attached`` (a reader
    in another process touched the run within its attach TTL)."""

    cancel: bool
    attached: bool


class RunLogFull(Exception):
    """The store cannot take a new run: its bound on runs or bytes is reached
    and nothing finished can be evicted. The endpoint answers 503 ``run_log_full``."""


@runtime_checkable
class RunStore(Protocol):
    """A run-log store (:class:`agui.server._runlog.MemoryRunStore`,
    :class:`agui.server._runlog.RedisRunStore`). Times are seconds."""

    retention: float
    """Seconds a run's log is kept after its last append."""

    async def create(self, run: RunRef, lease: float) -> bool:
        """Claim a new run with a lease of ``lease`` s; False when the run exists.

        Raises:
            RunLogFull: no room for another run.
        """
        ...

    async def append(self, run: RunRef, entries: Sequence[bytes], *, end: bool = False) -> None:
        """Append events (one batch, in order); ``end``: then the end mark."""
        ...

    async def read(
        self, run: RunRef, after: str, limit: int, block: float | None = None
    ) -> LogSlice:
        """Entries after entry ``after`` (``"0"``: from the start), as batches: at
        most ``limit`` of them (a store that reads whole appends, as Redis does,
        reads a bounded number of appends instead). ``block``: when there are
        none yet, wait up to that many seconds for some."""
        ...

    async def holds(self, run: RunRef, after: str) -> bool:
        """Whether every entry after ``after`` is still in the log (``after`` is
        an entry of this run that was not trimmed, or ``"0"`` and nothing was)."""
        ...

    async def info(self, run: RunRef) -> RunInfo | None:
        """The run's state, None when the store does not hold it."""
        ...

    async def last(self, run: RunRef) -> bytes | None:
        """The last event's JSON, None when the log has none."""
        ...

    async def renew(self, run: RunRef, lease: float) -> Signals:
        """The worker renews its lease for ``lease`` s and reads its signals."""
        ...

    async def release(self, run: RunRef) -> None:
        """The worker is done with the run (its end mark is appended)."""
        ...

    async def touch(self, run: RunRef, ttl: float) -> None:
        """A reader is attached to the run (for ``ttl`` s unless touched again)."""
        ...

    async def request_cancel(self, run: RunRef) -> bool:
        """Ask the run's worker to cancel the agent; False when the run is unknown."""
        ...

    async def claim_lost(self, run: RunRef) -> bool:
        """True for exactly one caller once the run's lease lapsed before its end
        mark: that caller ends the log (``worker_lost``)."""
        ...

    async def close(self) -> None:
        """Release connections (the store is unusable afterwards)."""
        ...
