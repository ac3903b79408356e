"""Run-log stores for resumable runs: :class:`MemoryRunStore` (the default,
one process, bounded) and :class:`RedisRunStore` (Redis Streams, shared by
processes; the ``redis`` extra). :func:`store_from_url` reads ``memory``,
``redis://HOST:PORT/DB`` or ``redis+cluster://HOST:PORT`` (a Redis Cluster).
The interface is :class:`RunStore`.
"""

from __future__ import annotations

from typing import Any

from agui.server._runlog.memory import MemoryRunStore
from agui.server._runlog.store import (
    LogBatch,
    LogSlice,
    LogTrimmed,
    RunInfo,
    RunLogFull,
    RunLogUnavailable,
    RunRef,
    RunStore,
    Signals,
)

__all__ = [
    "LogBatch",
    "LogSlice",
    "LogTrimmed",
    "MemoryRunStore",
    "RunInfo",
    "RunLogFull",
    "RunLogUnavailable",
    "RunRef",
    "RunStore",
    "Signals",
    "store_from_url",
]


def store_from_url(url: str, **options: Any) -> RunStore:
    """``"memory"`` -> :class:`MemoryRunStore`; ``redis://...`` / ``rediss://...`` /
    ``unix://...`` / ``redis+cluster://...`` ->
    :class:`agui.server._runlog.redis.RedisRunStore`.
    ``options``: the store's keywords (``retention`` ...).

    Raises:
        ValueError: another scheme.
        ImportError: a Redis URL without the ``redis`` extra.
    """
    if url == "memory":
        return MemoryRunStore(**options)
    if url.startswith(
        ("redis://", "rediss://", "unix://", "redis+cluster://", "rediss+cluster://")
    ):
        from agui.server._runlog.redis import RedisRunStore

        return RedisRunStore.from_url(url, **options)
    raise ValueError(f"a run-log store is 'memory' or 'redis://HOST:PORT/DB', not {url!r}")
