"""The Redis Streams run-log store: runs shared by every process on one Redis.

One stream per run (``agui:run:{<hash>}:log``; the hash of ``threadId`` and
``runId`` in braces keeps a run's keys in one Redis Cluster slot). A flush of the
worker is one ``MULTI`` holding one ``XADD``: the flush's events as the fields
``0``, ``1``, ... of one stream entry (one command per flush, not per event: a
process appends well over 100k events/s; ``MAXLEN ~ max_run_entries``), the end
mark (field ``e``) in the last entry, an ``XTRIM MINID ~`` dropping entries
older than ``retention`` and a ``PEXPIRE`` of the run's keys to ``retention``. Readers catch up with ``XRANGE``
from their cursor and follow the live tail with ``XREAD BLOCK``. Beside the
stream: ``:run`` (the run exists), ``:lease`` (``PX lease``, renewed by the
worker), ``:att`` (a reader elsewhere is attached), ``:cancel``, ``:end``,
``:lost`` (``SET NX``: who ends a lost run) and ``:first`` (the first entry's
id: ``Last-Event-ID: 0`` is refused once it was trimmed). An event's id is its
stream entry's id and its place in the entry (``<ms>-<seq>:<n>``).

Needs the ``redis`` extra (``pip install 'agui-sdk[redis]'``: redis-py's asyncio
client) and Redis 6.2 or newer (exclusive ``XRANGE`` bounds, ``XTRIM MINID``).
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Collection, Sequence
from typing import Any, TypedDict, Unpack

import redis.asyncio as aioredis

from agui.server.runlog.store import LogSlice, RunInfo, RunRef, Signals

__all__ = ["RedisOptions", "RedisRunStore"]

_EVENT_ID = re.compile(r"^([0-9]{1,20}-[0-9]{1,20}):([0-9]{1,9})$")
_END = b"e"


class RedisOptions(TypedDict, total=False):
    """The keywords :meth:`RedisRunStore.from_url` passes on to :class:`RedisRunStore`."""

    retention: float
    max_run_entries: int
    prefix: str


class RedisRunStore:
    """Run logs in Redis Streams (see the module doc).

    ``RedisRunStore(client, *, retention=300.0, max_run_entries=10_000,
    prefix="agui:run:")`` (``max_run_entries``: flushes kept per run, each up to
    the emitter's 256 KiB buffer); :meth:`from_url` builds the client from
    ``redis://HOST:PORT/DB``. Each reader following a live tail holds one pooled
    connection while it blocks (at most ``block`` seconds at a time).
    """

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        retention: float = 300.0,
        max_run_entries: int = 10_000,
        prefix: str = "agui:run:",
    ) -> None:
        self.client = client
        self.retention: float = retention
        self.max_run_entries = max_run_entries
        self.prefix = prefix
        self._retention_ms = max(int(retention * 1000), 1)
        self._first_known: set[RunRef] = set()

    @classmethod
    def from_url(cls, url: str, **options: Unpack[RedisOptions]) -> RedisRunStore:
        """A store on the Redis at ``url`` (``redis://HOST:PORT/DB``); ``options``
        as :class:`RedisRunStore` takes them."""
        # redis-py leaves from_url's **kwargs unannotated
        client = aioredis.Redis.from_url(url, decode_responses=False)  # pyright: ignore[reportUnknownMemberType]
        return cls(client, **options)

    def _key(self, run: RunRef, part: str) -> str:
        digest = hashlib.blake2b(
            f"{len(run.thread_id)}:{run.thread_id}{run.run_id}".encode("utf-8", "surrogatepass"),
            digest_size=12,
        ).hexdigest()
        return f"{self.prefix}{{{digest}}}:{part}"

    def _keys(self, run: RunRef) -> list[str]:
        return [self._key(run, part) for part in ("log", "run", "first", "end", "cancel")]

    # ------------------------------------------------------------ the worker

    async def create(self, run: RunRef, lease: float) -> bool:
        """``SET :run NX`` and the first lease."""
        created = await self.client.set(self._key(run, "run"), b"1", nx=True, px=self._retention_ms)
        if not created:
            return False
        await self.client.set(self._key(run, "lease"), b"1", px=max(int(lease * 1000), 1))
        return True

    async def append(self, run: RunRef, entries: Sequence[bytes], *, end: bool = False) -> None:
        """One ``MULTI``: one ``XADD`` of the batch (and the end mark), trimming, expiry."""
        if not entries and not end:
            return
        log = self._key(run, "log")
        fields: dict[bytes, bytes] = {str(i).encode(): data for i, data in enumerate(entries)}
        if end:
            fields[_END] = b"1"
        pipe = self.client.pipeline(transaction=True)
        pipe.xadd(log, fields, maxlen=self.max_run_entries, approximate=True)  # type: ignore[arg-type]
        if end:
            pipe.set(self._key(run, "end"), b"1", px=self._retention_ms)
        minid = max(int(time.time() * 1000) - self._retention_ms, 0)
        pipe.xtrim(log, minid=minid, approximate=True)
        for key in self._keys(run):
            pipe.pexpire(key, self._retention_ms)
        results = await pipe.execute()
        if run not in self._first_known:
            self._first_known.add(run)
            first = bytes(results[0]) + b":0"
            await self.client.set(self._key(run, "first"), first, nx=True, px=self._retention_ms)
        if end:
            self._first_known.discard(run)

    async def renew(self, run: RunRef, lease: float) -> Signals:
        """Renew the lease and the keys' expiry; read the signals."""
        pipe = self.client.pipeline(transaction=False)
        pipe.set(self._key(run, "lease"), b"1", px=max(int(lease * 1000), 1))
        for key in self._keys(run):
            pipe.pexpire(key, self._retention_ms)
        pipe.exists(self._key(run, "cancel"))
        pipe.exists(self._key(run, "att"))
        results = await pipe.execute()
        return Signals(cancel=bool(results[-2]), attached=bool(results[-1]))

    async def release(self, run: RunRef) -> None:
        """Delete the lease."""
        self._first_known.discard(run)
        await self.client.delete(self._key(run, "lease"))

    # ------------------------------------------------------------ readers

    async def read(
        self, run: RunRef, after: str, limit: int, block: float | None = None
    ) -> LogSlice:
        """``XRANGE`` from the cursor's entry; ``XREAD BLOCK`` when there is nothing yet.
        ``limit`` bounds the entries read (``limit // 64``, at least 1), so the
        events are at most that many flushes."""
        log = self._key(run, "log")
        count = max(limit // 64, 1)
        if after == "0":
            sid, skip = "-", -1
        else:
            match = _EVENT_ID.match(after)
            if match is None:
                return LogSlice([], True)
            sid, skip = match[1], int(match[2])
        found: Any = await self.client.xrange(log, min=sid, max="+", count=count)
        if sid != "-" and found and bytes(found[0][0]).decode() == sid:
            first_fields = found[0][1]
            if skip + 1 >= _events_in(first_fields) and _END not in first_fields:
                found = found[1:]  # nothing left of the cursor's own entry
        if not found and block:
            ms = max(int(block * 1000), 1)
            start = "0-0" if sid == "-" else sid
            streams: Any = await self.client.xread({log: start}, count=count, block=ms)
            found = streams[0][1] if streams else []
        out: list[tuple[str, bytes]] = []
        for entry_id, fields in found:
            name = bytes(entry_id).decode()
            first = skip + 1 if name == sid else 0
            for i in range(first, _events_in(fields)):
                out.append((f"{name}:{i}", bytes(fields[str(i).encode()])))
            if _END in fields:
                return LogSlice(out, True)
        return LogSlice(out, False)

    async def holds(self, run: RunRef, after: str) -> bool:
        """Whether event ``after`` (``"0"``: the run's first) is still in the stream."""
        log = self._key(run, "log")
        if after == "0":
            first: Any = await self.client.get(self._key(run, "first"))
            if first is None:
                return bool(await self.client.exists(self._key(run, "run")))
            after = bytes(first).decode()
        match = _EVENT_ID.match(after)
        if match is None:
            return False
        found: Any = await self.client.xrange(log, min=match[1], max=match[1], count=1)
        return bool(found) and int(match[2]) < max(_events_in(found[0][1]), 1)

    async def info(self, run: RunRef) -> RunInfo | None:
        """``EXISTS`` of ``:run``, ``:end`` and ``:lease``."""
        pipe = self.client.pipeline(transaction=False)
        for part in ("run", "end", "lease"):
            pipe.exists(self._key(run, part))
        exists, ended, leased = await pipe.execute()
        if not exists:
            return None
        return RunInfo(ended=bool(ended), leased=bool(leased))

    async def last(self, run: RunRef) -> bytes | None:
        """The last event's JSON (``XREVRANGE``, skipping the end mark)."""
        found: Any = await self.client.xrevrange(self._key(run, "log"), count=2)
        for _, fields in found:
            n = _events_in(fields)
            if n:
                return bytes(fields[str(n - 1).encode()])
        return None

    async def touch(self, run: RunRef, ttl: float) -> None:
        """``SET :att PX ttl``."""
        await self.client.set(self._key(run, "att"), b"1", px=max(int(ttl * 1000), 1))

    async def request_cancel(self, run: RunRef) -> bool:
        """``SET :cancel`` when the run exists."""
        if not await self.client.exists(self._key(run, "run")):
            return False
        await self.client.set(self._key(run, "cancel"), b"1", px=self._retention_ms)
        return True

    async def claim_lost(self, run: RunRef) -> bool:
        """``SET :lost NX`` once the lease is gone and the end mark is not there."""
        info = await self.info(run)
        if info is None or info.ended or info.leased:
            return False
        return bool(
            await self.client.set(self._key(run, "lost"), b"1", nx=True, px=self._retention_ms)
        )

    async def close(self) -> None:
        """Close the client's connections."""
        await self.client.aclose()


def _events_in(fields: Collection[object]) -> int:
    """How many events a stream entry holds (its fields ``0`` .. ``n-1``)."""
    return len(fields) - (1 if _END in fields else 0)
