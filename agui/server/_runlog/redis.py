"""The Redis Streams run-log store: runs shared by every process on one Redis.

One stream per run (``agui:run:{<hash>}:log``; the hash of ``threadId`` and
``runId`` in braces keeps a run's keys in one Redis Cluster slot). A flush of the
worker is one pipelined round trip holding one ``XADD``: the flush's events as
one stream entry, their JSON joined by newlines in the field ``d`` with their
count in ``n`` (one command and one value per flush, not per event: a process
appends well over 100k events/s; ``MAXLEN ~ max_run_entries``); the end mark
(field ``e``) in the last entry, an ``XTRIM MINID ~`` dropping entries older
than ``retention`` and a ``PEXPIRE`` of the run's keys to ``retention``. (An
entry whose events are the fields ``0``, ``1``, ... is read as well: what a
release before this layout wrote, and what a batch holding a raw newline is
written as.) No ``MULTI``: the entry carries its own end mark, and the lease,
held until the flush is done, keeps other processes from taking the run for
lost in between. Readers catch up with ``XRANGE``
Readers catch up with ``XRANGE``
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
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict, Unpack

import redis.asyncio as aioredis

from agui.server._runlog.store import LogBatch, LogSlice, RunInfo, RunRef, Signals

__all__ = ["RedisOptions", "RedisRunStore"]

_EVENT_ID = re.compile(r"^([0-9]{1,20}-[0-9]{1,20}):([0-9]{1,9})$")
_END = b"e"
_COUNT = b"n"
_DATA = b"d"
_KNOWN_ENTRIES = 4096
"""Entries whose event count a store remembers (the last one each reader read),
so a reader at the end of an entry reads after it instead of reading it again."""


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
        self._counts: OrderedDict[tuple[RunRef, str], int] = OrderedDict()

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
        """One round trip: one ``XADD`` of the batch (and the end mark), trimming, expiry."""
        if not entries and not end:
            return
        log = self._key(run, "log")
        fields = _fields(entries)
        if end:
            fields[_END] = b"1"
        pipe = self.client.pipeline(transaction=False)
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
        """``XRANGE`` from the cursor's entry; ``XREAD BLOCK`` when there is nothing yet
        (at once, after the entry, when the cursor is the last event of an entry
        this store read last). ``limit`` bounds the entries read (``limit // 64``,
        at least 1), so the events are at most that many flushes."""
        log = self._key(run, "log")
        count = max(limit // 64, 1)
        if after == "0":
            sid, skip = "-", -1
        else:
            match = _EVENT_ID.match(after)
            if match is None:
                return LogSlice([], True)
            sid, skip = match[1], int(match[2])
        ms = max(int(block * 1000), 1) if block else None
        known = self._counts.pop((run, sid), None)
        found: Any
        if known is not None and skip + 1 >= known:  # the cursor's entry is done with
            streams: Any = await self.client.xread({log: sid}, count=count, block=ms)
            found = streams[0][1] if streams else []
        else:
            # (one more than count: the first may be the cursor's own, used up)
            found = await self.client.xrange(log, min=sid, max="+", count=count + 1)
            if sid != "-" and found and bytes(found[0][0]).decode() == sid:
                first_fields = found[0][1]
                if skip + 1 >= _events_in(first_fields) and _END not in first_fields:
                    found = found[1:]  # nothing left of the cursor's own entry
            found = found[:count]
            if not found and ms is not None:
                start = "0-0" if sid == "-" else sid
                streams = await self.client.xread({log: start}, count=count, block=ms)
                found = streams[0][1] if streams else []
        out: list[LogBatch] = []
        for entry_id, fields in found:
            name = bytes(entry_id).decode()
            first = skip + 1 if name == sid else 0
            events = _events_of(fields)
            if first < len(events):
                out.append(LogBatch(f"{name}:", first, events[first:] if first else events))
            if _END in fields:
                return LogSlice(out, True)
        if out:
            self._remember(run, out[-1])
        return LogSlice(out, False)

    def _remember(self, run: RunRef, batch: LogBatch) -> None:
        counts = self._counts
        counts[(run, batch.prefix[:-1])] = batch.start + len(batch.events)
        if len(counts) > _KNOWN_ENTRIES:
            counts.popitem(last=False)

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
            events = _events_of(fields)
            if events:
                return events[-1]
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


def _fields(events: Sequence[bytes]) -> dict[bytes, bytes]:
    """A stream entry's fields holding ``events``: joined by newlines in ``d``,
    their count in ``n``; one field per event when one holds a newline."""
    if not events:
        return {}
    data = b"\n".join(events)
    if data.count(b"\n") == len(events) - 1:
        return {_COUNT: str(len(events)).encode(), _DATA: data}
    return {str(i).encode(): event for i, event in enumerate(events)}


def _events_in(fields: Mapping[bytes, object]) -> int:
    """How many events a stream entry holds."""
    count = fields.get(_COUNT)
    if isinstance(count, bytes):
        return int(count)
    return len(fields) - (1 if _END in fields else 0)


def _events_of(fields: Mapping[bytes, Any]) -> list[bytes]:
    """A stream entry's events (either layout; see the module doc)."""
    data = fields.get(_DATA)
    if data is not None:
        return bytes(data).split(b"\n")
    return [bytes(fields[str(i).encode()]) for i in range(_events_in(fields))]
