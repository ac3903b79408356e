"""The run-log store interface: one log per run, appended by the run's worker,
read from a cursor by any request attached to it.

A log is a sequence of entries, each an id (a store-chosen string, ordered
within the run) and the bytes of one event's JSON, closed by an end mark once
the run is over. Beside the log a store keeps a few small facts per run: the
worker that runs it (each store instance is one worker, with one heartbeat for
all its runs; a run whose worker's heartbeat lapsed before its end mark was
lost with its worker), whether a reader elsewhere is attached, whether a
cancel was requested, whether a process already claimed ending a lost run, and
who started it (its principal). A store also keeps one random secret for the
whole store (:meth:`RunStore.secret`). A store's failures are typed:
:class:`RunLogUnavailable` (the store cannot be reached; retry later),
:class:`LogTrimmed` (a reader's position was trimmed away), :class:`RunLogFull`.
The toolkit (:mod:`agui.server._runs`) talks to this
interface only; it never knows which store it has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = [
    "LogBatch",
    "LogSlice",
    "LogTrimmed",
    "RunInfo",
    "RunLogFull",
    "RunLogUnavailable",
    "RunRef",
    "RunStore",
    "Signals",
]


@dataclass(frozen=True, slots=True)
class RunRef:
    """One run: its ``threadId`` and ``runId``, within the namespace of ``principal``
    (who started it, as the application's ``authorize`` hook named them; None without
    a hook). A run is unique by the three: two principals that use the same ids have
    two runs, and neither can reach the other's."""

    thread_id: str
    run_id: str
    principal: str | None = None


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
    """What a store knows of a run: ``ended`` (its end mark is in the log),
    ``leased`` (its worker's heartbeat is current), ``principal`` (who started
    it, as the application's ``authorize`` hook named them; None without one) and
    ``nonce`` (random, made when the run was created: its run token is bound to it, so
    a token of an earlier run with the same ids proves nothing)."""

    ended: bool
    leased: bool
    principal: str | None = None
    nonce: str = ""


@dataclass(frozen=True, slots=True)
class Signals:
    """What a worker learns from its heartbeat: ``cancel`` (its runs whose cancel
    was requested since the last heartbeat, perhaps through another process) and
    ``attached`` (its runs that a reader in another process touched within the
    reader's TTL)."""

    cancel: frozenset[RunRef]
    attached: frozenset[RunRef]


class RunLogFull(Exception):
    """The store cannot take a new run: its bound on runs or bytes is reached
    and nothing finished can be evicted. The endpoint answers 503 ``run_log_full``."""


class RunLogUnavailable(Exception):
    """The store cannot be reached (a connection refused or lost, a timeout).
    The endpoint answers 503 ``run_log_unavailable`` with ``Retry-After:
    retry_after``; a live run whose append fails ends ``run_log_failed``."""

    def __init__(self, message: str, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class LogTrimmed(Exception):
    """A reader's position is no longer in the log (trimmed to a bound): what
    follows it cannot be read whole. The reader's stream ends ``RUN_ERROR``
    ``log_trimmed`` instead of skipping events."""


@runtime_checkable
class RunStore(Protocol):
    """A run-log store (:class:`agui.server._runlog.MemoryRunStore`,
    :class:`agui.server._runlog.RedisRunStore`). Times are seconds."""

    retention: float
    """Seconds a run's log is kept after its last append."""

    worker_id: str
    """This store instance's worker: the runs it creates name it, and its
    :meth:`heartbeat` keeps them all alive."""

    async def create(
        self, run: RunRef, lease: float, *, principal: str | None = None, nonce: str = ""
    ) -> bool:
        """Claim a new run for this worker (whose heartbeat lasts ``lease`` s),
        started by ``principal``, with ``nonce`` (both kept with the run:
        :attr:`RunInfo.principal`, :attr:`RunInfo.nonce`); False when the run exists.

        Raises:
            RunLogFull: no room for another run.
            RunLogUnavailable: the store cannot be reached.
        """
        ...

    async def append(
        self, run: RunRef, entries: Sequence[bytes], *, end: bool = False
    ) -> LogBatch | None:
        """Append events (one batch, in order); ``end``: then the end mark.
        Returns the batch as the log holds it (its entry ids), None when
        ``entries`` is empty.

        Raises:
            RunLogUnavailable: the store cannot be reached (nothing was appended,
                or it is unknown whether it was).
        """
        ...

    async def read(
        self, run: RunRef, after: str, limit: int, block: float | None = None
    ) -> LogSlice:
        """Entries after entry ``after`` (``"0"``: from the start), as batches: at
        most ``limit`` of them (a store that reads whole appends, as Redis does,
        reads a bounded number of appends instead). ``block``: when there are
        none yet, wait up to that many seconds for some.

        Raises:
            LogTrimmed: entries after ``after`` were trimmed away.
        """
        ...

    async def holds(self, run: RunRef, after: str) -> bool:
        """Whether every entry after ``after`` is still in the log (``after`` is
        an entry of this run that was not trimmed, or ``"0"`` and nothing was)."""
        ...

    def written_at(self, after: str) -> float | None:
        """The wall-clock time (``time.time()``) entry ``after`` was appended,
        when its id tells (a Redis stream id does); None otherwise."""
        ...

    async def info(self, run: RunRef) -> RunInfo | None:
        """The run's state, None when the store does not hold it."""
        ...

    async def last(self, run: RunRef) -> bytes | None:
        """The last event's JSON, None when the log has none."""
        ...

    async def heartbeat(self, lease: float) -> Signals:
        """This worker is alive for ``lease`` s more; its runs' signals since the
        last heartbeat. One call per worker (not per run) every fraction of
        ``lease``."""
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
        """True for exactly one caller once the heartbeat of the run's worker
        lapsed before its end mark: that caller ends the log (``worker_lost``)."""
        ...

    async def close(self) -> None:
        """Release connections (the store is unusable afterwards)."""
        ...

    async def secret(self) -> bytes:
        """The store's key for run tokens: random, generated once and kept in the
        store, so every process sharing the store agrees (used when the server
        is given no secret of its own)."""
        ...
