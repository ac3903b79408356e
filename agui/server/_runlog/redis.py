"""The Redis Streams run-log store: runs shared by every process on one Redis
(or one Redis Cluster).

**Keys.** One stream per run, ``agui:run:{<thread>}:<run>:log`` (``<thread>``
a hash of the ``threadId``, and of the run's principal when the application has
an ``authorize`` hook: each principal's runs are a namespace of their own;
``<run>`` a hash of the ids): every key of a thread has the same ``{…}`` hash
tag, so it lives in one Redis Cluster slot and no command ever spans two slots
(no ``CROSSSLOT``). Beside the stream: ``:run``
(the run exists), ``:worker`` (the id of the worker running it), ``:end``, ``:lost`` (``SET NX``: who ends a lost run) and ``:first`` (the first
entry's id: ``Last-Event-ID: 0`` is refused once it was trimmed). An event's id
is its stream entry's id and its place in the entry (``<ms>-<seq>:<n>``).

**Appends.** A flush of the worker is one ``XADD``: the flush's events as one
stream entry, their JSON joined by newlines in the field ``d`` with their count
in ``n`` (one command per flush, not per event; ``MAXLEN ~ max_run_entries``);
the end mark (field ``e``) in the last entry, with ``SET :end``. The keys
live ``1.1 x retention``; their expiry and the ``XTRIM MINID ~`` by age ride
along with an append only every ``retention / 10`` s (the heartbeat refreshes
an idle run's), so a log outlives its last append by ``retention`` at least and
a busy run costs one command per flush. The flushes (and run creations) of
all the process's runs share round trips: those made while one round trip is in
flight go together in the next pipeline (up to 512 callers'; up to 4 such
round trips in flight). (An entry whose
events are the fields ``0``, ``1``, ... is read as well: what a batch holding a
raw newline is written as.)

**Liveness per worker.** Each store instance is one worker (:attr:`worker_id`)
with one heartbeat key, ``agui:run:w:{<worker>}:hb`` (``PX lease``), renewed by
:meth:`heartbeat` a few times per lease, whatever the number of runs; a run
names its worker in ``:worker``. A run whose worker's heartbeat is gone before
its end mark was lost with its worker. A cancel asked through another process
goes to the worker's set ``:cancel``, and a reader in another process announces
itself in the worker's sorted set ``:att``; the heartbeat reads both. A Redis
stall shorter than ``lease`` minus one heartbeat interval never ends a run.

**Connections.** Every command goes through a gate of ``max_connections``
(the connection pool is as large and waits instead of failing), and no command
blocks on the server: a reader in another process follows a live tail by
polling ``XRANGE`` (every 10 ms, backing off to 100 ms while nothing comes), so
the connections a process holds do not depend on its runs or readers. Readers
in the process running the agent do not read Redis at all (the toolkit feeds
them in process).

**Faults.** A connection refused or lost, a timeout or a cluster that is down
is :class:`RunLogUnavailable`; a reader's position that was trimmed away is
:class:`LogTrimmed`.

Needs the ``redis`` extra (``pip install 'agui-sdk[redis]'``: redis-py's asyncio
client) and Redis 6.2 or newer (exclusive ``XRANGE`` bounds, ``XTRIM MINID``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any, TypedDict, Unpack

from agui._extras import needs_extra

try:
    import redis.asyncio as aioredis
    import redis.exceptions as redis_errors
    from redis.asyncio.cluster import RedisCluster
except ModuleNotFoundError as _missing:
    raise needs_extra(_missing, "redis", ("redis",), "RedisRunStore") from None
from agui.server._runlog.store import (
    LogBatch,
    LogSlice,
    LogTrimmed,
    RunInfo,
    RunLogUnavailable,
    RunRef,
    Signals,
)

__all__ = ["CLUSTER_SCHEMES", "RedisOptions", "RedisRunStore"]

_EVENT_ID = re.compile(r"^(([0-9]{1,20})-([0-9]{1,20})):([0-9]{1,9})$")
_UINT64 = 2**64 - 1


def _event_id(cursor: str) -> tuple[str, int] | None:
    """An event id as its stream entry id and its place in the entry; None unless
    it is ``<ms>-<seq>:<n>`` with ``ms`` and ``seq`` within Redis's 64-bit range."""
    match = _EVENT_ID.match(cursor) if cursor.isascii() else None
    if match is None or int(match[2]) > _UINT64 or int(match[3]) > _UINT64:
        return None
    return match[1], int(match[4])


_END = b"e"
_COUNT = b"n"
_DATA = b"d"
_WORKERS_KNOWN = 4096
"""Runs whose worker id a store remembers (a remote reader touches its run's
worker every fraction of a second)."""
_REFRESH_PER_BEAT = 256
"""Idle runs whose keys' expiry one heartbeat refreshes at most."""
_UNAVAILABLE: tuple[type[BaseException], ...] = (
    redis_errors.ConnectionError,
    redis_errors.TimeoutError,
    redis_errors.ClusterError,
    redis_errors.TryAgainError,
    redis_errors.RedisClusterException,
    OSError,
)

_BATCH = 512
"""Callers' commands (appends, creates) one shared round trip carries at most."""
_WRITERS = 4
"""Shared round trips in flight at once (another starts while more than an
eighth of a batch waits)."""

_Command = tuple[str, tuple[Any, ...], dict[str, Any]]
"""A pipeline method's name and its arguments."""

CLUSTER_SCHEMES = ("redis+cluster://", "rediss+cluster://")
"""URL schemes of a Redis Cluster (``redis+cluster://HOST:PORT``: any node)."""


class RedisOptions(TypedDict, total=False):
    """The keywords :meth:`RedisRunStore.from_url` passes on to :class:`RedisRunStore`."""

    retention: float
    max_run_entries: int
    prefix: str
    max_connections: int
    retry_after: float


class RedisRunStore:
    """Run logs in Redis Streams (see the module doc).

    ``RedisRunStore(client, *, retention=300.0, max_run_entries=10_000,
    prefix="agui:run:", max_connections=32, retry_after=1.0)``
    (``max_run_entries``: flushes kept per run, each up to the emitter's 256
    KiB buffer; ``max_connections``: commands in flight at once, the bound on
    the process's connections; ``retry_after``: the ``Retry-After`` of
    :class:`RunLogUnavailable`). ``client`` is a ``redis.asyncio.Redis`` or
    ``redis.asyncio.cluster.RedisCluster``; :meth:`from_url` builds it.
    """

    def __init__(
        self,
        client: aioredis.Redis | RedisCluster,
        *,
        retention: float = 300.0,
        max_run_entries: int = 10_000,
        prefix: str = "agui:run:",
        max_connections: int = 32,
        retry_after: float = 1.0,
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.client = client
        self.retention: float = retention
        self.max_run_entries = max_run_entries
        self.prefix = prefix
        self.max_connections = max_connections
        self.retry_after = retry_after
        self.worker_id: str = uuid.uuid4().hex[:16]
        self._retention_ms = max(int(retention * 1000), 1)
        self._refresh_every = retention / 10
        # keys live ``retention`` plus one refresh interval: refreshed that often,
        # a log outlives its last append by ``retention`` at least
        self._ttl_ms = max(int(retention * 1100), 1)
        self._beat_at = float("-inf")
        self._gate = asyncio.Semaphore(max_connections)
        self._first_known: set[RunRef] = set()
        self._mine: OrderedDict[RunRef, float] = OrderedDict()  # run -> last expiry refresh
        self._workers: OrderedDict[RunRef, str] = OrderedDict()
        self._queue: list[tuple[list[_Command], asyncio.Future[list[Any]]]] = []
        self._writers: set[asyncio.Task[None]] = set()
        self._active = 0  # writers whose loop has not returned
        wtag = f"{prefix}w:{{{self.worker_id}}}:"
        self._hb, self._cancels, self._attached = wtag + "hb", wtag + "cancel", wtag + "att"
        self._secret: bytes | None = None

    @classmethod
    def from_url(cls, url: str, **options: Unpack[RedisOptions]) -> RedisRunStore:
        """A store on the Redis at ``url``: ``redis://HOST:PORT/DB`` (or
        ``rediss://``, ``unix://``), or a Redis Cluster at
        ``redis+cluster://HOST:PORT`` (any node; ``rediss+cluster://`` for TLS).
        ``options`` as :class:`RedisRunStore` takes them."""
        size = options.get("max_connections", 32)
        client: aioredis.Redis | RedisCluster
        if url.startswith(CLUSTER_SCHEMES):
            plain = url.replace("+cluster", "", 1)
            # redis-py leaves from_url's **kwargs unannotated
            client = RedisCluster.from_url(  # pyright: ignore[reportUnknownMemberType]
                plain, decode_responses=False, max_connections=size, socket_connect_timeout=2.0
            )
        else:
            pool = aioredis.BlockingConnectionPool.from_url(  # pyright: ignore[reportUnknownMemberType]
                url, max_connections=size, timeout=None, socket_connect_timeout=2.0
            )
            client = aioredis.Redis(connection_pool=pool, decode_responses=False)
        return cls(client, **options)

    @contextlib.asynccontextmanager
    async def _io(self) -> AsyncGenerator[None, None]:
        """One use of a connection: through the gate; a fault is typed."""
        async with self._gate:
            try:
                yield
            except _UNAVAILABLE as exc:
                raise RunLogUnavailable(
                    f"the Redis run log is unreachable ({type(exc).__name__})", self.retry_after
                ) from exc

    def _key(self, run: RunRef, part: str) -> str:
        thread = _tag(run)
        digest = hashlib.blake2b(
            f"{len(run.thread_id)}:{run.thread_id}{run.run_id}".encode("utf-8", "surrogatepass"),
            digest_size=12,
        ).hexdigest()
        return f"{self.prefix}{{{thread}}}:{digest}:{part}"

    def _keys(self, run: RunRef) -> list[str]:
        """The keys whose expiry a refresh renews (``:end`` and ``:lost`` are set
        with theirs when a run ends)."""
        return [self._key(run, part) for part in ("log", "run", "worker", "first")]

    def _worker_keys(self, worker: str) -> tuple[str, str, str]:
        tag = f"{self.prefix}w:{{{worker}}}:"
        return tag + "hb", tag + "cancel", tag + "att"

    # ------------------------------------------------------------ the worker

    async def create(
        self, run: RunRef, lease: float, *, principal: str | None = None, nonce: str = ""
    ) -> bool:
        """``SET :run NX`` (its value: the principal) and ``SET :worker`` (and the
        worker's heartbeat unless it was renewed within half a lease), in the
        process's next shared round trip."""
        owner = b"1" if principal is None else b"p" + principal.encode("utf-8", "surrogatepass")
        owner = b"n" + nonce.encode("ascii") + b"\x00" + owner  # (a nonce is base64url)
        commands: list[_Command] = [
            ("set", (self._key(run, "run"), owner), {"nx": True, "px": self._ttl_ms}),
            (
                "set",
                (self._key(run, "worker"), self.worker_id.encode()),
                {"nx": True, "px": self._ttl_ms},
            ),
        ]
        now = time.monotonic()
        if now - self._beat_at > lease / 2:  # (else the heartbeat is fresh enough)
            commands.append(("set", (self._hb, b"1"), {"px": max(int(lease * 1000), 1)}))
            self._beat_at = now
        if not (await self._batched(commands))[0]:
            return False
        self._mine[run] = time.monotonic()
        return True

    async def append(
        self, run: RunRef, entries: Sequence[bytes], *, end: bool = False
    ) -> LogBatch | None:
        """One ``XADD`` of the batch (and the end mark); now and then trimming by
        age and the keys' expiry with it. The process's appends share round
        trips: those made while one is in flight go together in the next."""
        if not entries and not end:
            return None
        log = self._key(run, "log")
        fields = _fields(entries)
        if end:
            fields[_END] = b"1"
        now = time.monotonic()
        refreshed = self._mine.get(run)
        refresh = refreshed is None or now - refreshed >= self._refresh_every
        commands: list[_Command] = [
            ("xadd", (log, fields), {"maxlen": self.max_run_entries, "approximate": True})
        ]
        if end:
            commands.append(("set", (self._key(run, "end"), b"1"), {"px": self._ttl_ms}))
        if refresh:
            minid = max(int(time.time() * 1000) - self._retention_ms, 0)
            commands.append(("xtrim", (log,), {"minid": minid, "approximate": True}))
            commands += [("pexpire", (key, self._ttl_ms), {}) for key in self._keys(run)]
        results = await self._batched(commands)
        entry = bytes(results[0]).decode()
        if run not in self._first_known:
            self._first_known.add(run)
            first = f"{entry}:0".encode()
            await self._batched(
                [("set", (self._key(run, "first"), first), {"nx": True, "px": self._ttl_ms})]
            )
        if refresh and run in self._mine:
            self._mine[run] = now
            self._mine.move_to_end(run)
        if end:
            self._first_known.discard(run)
            self._mine.pop(run, None)
        return LogBatch(f"{entry}:", 0, list(entries)) if entries else None

    async def _batched(self, commands: list[_Command]) -> list[Any]:
        """``commands``' results, run in the process's next shared pipeline.

        Raises:
            RunLogUnavailable: the round trip failed, or Redis refused one of them.
        """
        future: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        self._queue.append((commands, future))
        active = self._active
        if not active or (active < _WRITERS and len(self._queue) > _BATCH // 8):
            self._active += 1  # (counted down by the writer itself, as it returns)
            writer = asyncio.create_task(self._write())
            self._writers.add(writer)
            writer.add_done_callback(self._writers.discard)
        return await future

    async def _write(self) -> None:
        """Send the queued commands, up to :data:`_BATCH` callers' per round trip."""
        try:
            await self._drain()
        finally:
            self._active -= 1

    async def _drain(self) -> None:
        queue = self._queue
        while queue:
            batch = queue[:_BATCH]
            del queue[:_BATCH]
            try:
                async with self._io():
                    pipe = self.client.pipeline(transaction=False)
                    for commands, _ in batch:
                        for name, args, kwargs in commands:
                            getattr(pipe, name)(*args, **kwargs)
                    results = await pipe.execute(raise_on_error=False)
            except Exception as exc:  # noqa: BLE001 - handed to every caller of the batch
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            at = 0
            for commands, future in batch:
                part = results[at : at + len(commands)]
                at += len(commands)
                if future.done():
                    continue
                refused = next((r for r in part if isinstance(r, Exception)), None)
                if refused is not None:
                    error = RunLogUnavailable(
                        f"the Redis run log refused a write ({type(refused).__name__}: "
                        f"{str(refused)[:200]})",
                        self.retry_after,
                    )
                    error.__cause__ = refused
                    future.set_exception(error)
                else:
                    future.set_result(part)

    async def heartbeat(self, lease: float) -> Signals:
        """One round trip for the whole worker: renew its heartbeat, take the
        cancels asked for its runs, read which of them readers elsewhere follow;
        refresh the expiry of runs idle for a while."""
        now = time.monotonic()
        due: list[RunRef] = []
        for run, refreshed in self._mine.items():
            if now - refreshed < self._refresh_every or len(due) >= _REFRESH_PER_BEAT:
                break
            due.append(run)
        now_ms = int(time.time() * 1000)
        async with self._io():
            pipe = self.client.pipeline(transaction=False)
            pipe.set(self._hb, b"1", px=max(int(lease * 1000), 1))
            pipe.spop(self._cancels, 4096)
            pipe.zremrangebyscore(self._attached, "-inf", now_ms)
            pipe.zrange(self._attached, 0, -1)  # pyright: ignore[reportUnknownMemberType]
            for run in due:
                for key in self._keys(run):
                    pipe.pexpire(key, self._ttl_ms)
            results = await pipe.execute()
        self._beat_at = now
        for run in due:
            if run in self._mine:
                self._mine[run] = now
                self._mine.move_to_end(run)
        return Signals(
            cancel=frozenset(map(_run_of, results[1] or ())),
            attached=frozenset(map(_run_of, results[3] or ())),
        )

    async def release(self, run: RunRef) -> None:
        """Forget the run's bookkeeping (its end mark carries the rest)."""
        self._first_known.discard(run)
        self._mine.pop(run, None)

    # ------------------------------------------------------------ readers

    async def read(
        self, run: RunRef, after: str, limit: int, block: float | None = None
    ) -> LogSlice:
        """``XRANGE`` from the cursor's entry; while there is nothing yet and
        ``block`` allows, again every 10 ms, backing off to 100 ms (no command
        blocks on the server). ``limit`` bounds the entries read (``limit //
        64``, at least 1), so the events are at most that many flushes.

        Raises:
            LogTrimmed: the cursor's entry was trimmed away.
        """
        log = self._key(run, "log")
        count = max(limit // 64, 1)
        if after == "0":
            sid, skip = "-", -1
        else:
            event = _event_id(after)
            if event is None:
                return LogSlice([], True)
            sid, skip = event
        deadline = time.monotonic() + (block or 0.0)
        delay = 0.01
        while True:
            async with self._io():
                # (one more than count: the first may be the cursor's own, used up)
                found: Any = await self.client.xrange(log, min=sid, max="+", count=count + 1)
            if sid != "-" and found:
                if bytes(found[0][0]).decode() != sid:
                    raise LogTrimmed(
                        f"the entry of cursor {after!r} of run {run.run_id!r} was trimmed "
                        "from the Redis run log"
                    )
                first_fields = found[0][1]
                if skip + 1 >= _events_in(first_fields) and _END not in first_fields:
                    found = found[1:]  # nothing left of the cursor's own entry
            found = found[:count]
            left = deadline - time.monotonic()
            if found or left <= 0:
                break
            await asyncio.sleep(min(delay, left))
            delay = min(delay * 2, 0.1)
        out: list[LogBatch] = []
        for entry_id, fields in found:
            name = bytes(entry_id).decode()
            first = skip + 1 if name == sid else 0
            events = _events_of(fields)
            if first < len(events):
                out.append(LogBatch(f"{name}:", first, events[first:] if first else events))
            if _END in fields:
                return LogSlice(out, True)
        return LogSlice(out, False)

    async def holds(self, run: RunRef, after: str) -> bool:
        """Whether event ``after`` (``"0"``: the run's first) is still in the stream."""
        log = self._key(run, "log")
        async with self._io():
            if after == "0":
                first: Any = await self.client.get(self._key(run, "first"))
                if first is None:
                    return bool(await self.client.exists(self._key(run, "run")))
                after = bytes(first).decode()
            event = _event_id(after)
            if event is None:
                return False
            found: Any = await self.client.xrange(log, min=event[0], max=event[0], count=1)
        return bool(found) and event[1] < max(_events_in(found[0][1]), 1)

    def written_at(self, after: str) -> float | None:
        """The time in the stream entry id of event ``after`` (``<ms>-<seq>:<n>``)."""
        event = _event_id(after)
        return None if event is None else int(event[0].split("-")[0]) / 1000

    async def info(self, run: RunRef) -> RunInfo | None:
        """``GET :run`` (the principal), ``EXISTS`` of ``:end``, the run's worker, and
        whether the worker's heartbeat is current: two round trips whatever the run."""
        async with self._io():
            pipe = self.client.pipeline(transaction=False)
            pipe.get(self._key(run, "run"))
            pipe.exists(self._key(run, "end"))
            pipe.get(self._key(run, "worker"))
            owner, ended, worker = await pipe.execute()
            # the second round trip always, also for an unknown or ended run: the time of
            # an answer must not tell a live run from one that does not exist
            live = owner is not None and not ended and worker is not None
            hb = (
                self._hb
                if worker is None or not live
                else self._worker_keys(bytes(worker).decode())[0]
            )
            beating = bool(await self.client.exists(hb))
        if owner is None:
            return None
        leased = live and beating
        nonce, owner = _owner_parts(bytes(owner))
        principal = owner[1:].decode("utf-8", "surrogatepass") if owner[:1] == b"p" else None
        return RunInfo(ended=bool(ended), leased=leased, principal=principal, nonce=nonce)

    async def last(self, run: RunRef) -> bytes | None:
        """The last event's JSON (``XREVRANGE``, skipping the end mark)."""
        async with self._io():
            found: Any = await self.client.xrevrange(self._key(run, "log"), count=2)
        for _, fields in found:
            events = _events_of(fields)
            if events:
                return events[-1]
        return None

    async def _worker_of(self, run: RunRef) -> str | None:
        known = self._workers.get(run)
        if known is not None:
            return known
        async with self._io():
            worker: Any = await self.client.get(self._key(run, "worker"))
        if worker is None:
            return None
        name = self._workers[run] = bytes(worker).decode()
        if len(self._workers) > _WORKERS_KNOWN:
            self._workers.popitem(last=False)
        return name

    async def touch(self, run: RunRef, ttl: float) -> None:
        """``ZADD`` the run to its worker's attached set until ``ttl`` s from now."""
        worker = await self._worker_of(run)
        if worker is None:
            return
        att = self._worker_keys(worker)[2]
        async with self._io():
            pipe = self.client.pipeline(transaction=False)
            pipe.zadd(att, {_member(run): int((time.time() + ttl) * 1000)})
            pipe.pexpire(att, self._ttl_ms)
            await pipe.execute()

    async def request_cancel(self, run: RunRef) -> bool:
        """``SADD`` the run to its worker's cancel set (read by the worker's next
        heartbeat), when the run exists."""
        async with self._io():
            pipe = self.client.pipeline(transaction=False)
            pipe.exists(self._key(run, "run"))
            pipe.get(self._key(run, "worker"))
            exists, worker = await pipe.execute()
            if not exists:
                return False
            if worker is not None:
                cancels = self._worker_keys(bytes(worker).decode())[1]
                pipe = self.client.pipeline(transaction=False)
                pipe.sadd(cancels, _member(run))
                pipe.pexpire(cancels, self._ttl_ms)
                await pipe.execute()
        return True

    async def claim_lost(self, run: RunRef) -> bool:
        """``SET :lost NX`` once the worker's heartbeat is gone and the end mark
        is not there."""
        info = await self.info(run)
        if info is None or info.ended or info.leased:
            return False
        async with self._io():
            return bool(
                await self.client.set(self._key(run, "lost"), b"1", nx=True, px=self._ttl_ms)
            )

    async def close(self) -> None:
        """Close the client's connections."""
        await self.client.aclose()

    async def secret(self) -> bytes:
        """The store's token key: ``SET <prefix>secret NX`` of 32 random bytes (the
        first process sets it, every other reads it), kept for good."""
        if self._secret is None:
            key = f"{self.prefix}secret"
            async with self._io():
                await self.client.set(key, os.urandom(32), nx=True)
                value: Any = await self.client.get(key)
            self._secret = bytes(value)
        return self._secret


def _owner_parts(value: bytes) -> tuple[str, bytes]:
    """A ``:run`` key's value as (nonce, ``1`` or ``p<principal>``)."""
    if value[:1] != b"n":
        return "", value
    nonce, _, owner = value[1:].partition(b"\x00")
    return nonce.decode("ascii", "replace"), owner


def _tag(run: RunRef) -> str:
    """The hash tag of a run's keys: a hash of its ``threadId``, and of its principal
    with a hook (another hash function: no thread id of a run without a principal has
    a principal's tag), so every key of one principal's thread is in one slot."""
    thread = run.thread_id.encode("utf-8", "surrogatepass")
    if run.principal is None:  # (the layout of every run before principals had tags)
        return hashlib.blake2b(thread, digest_size=12).hexdigest()
    principal = run.principal.encode("utf-8", "surrogatepass")
    scoped = b"%d:%s%s" % (len(principal), principal, thread)
    return hashlib.blake2b(scoped, digest_size=12, person=b"agui.principal").hexdigest()


def _member(run: RunRef) -> bytes:
    """A run as a member of a worker's sets, ``[threadId, runId]`` (and its principal when
    it has one), in the standard library's JSON, which escapes a lone surrogate an id may
    hold (RFC 8259 allows one, msgspec refuses to write it)."""
    ids = [run.thread_id, run.run_id]
    if run.principal is not None:
        ids.append(run.principal)
    return json.dumps(ids).encode("ascii")


def _run_of(member: Any) -> RunRef:
    ids = json.loads(bytes(member))
    principal = str(ids[2]) if len(ids) > 2 else None
    return RunRef(str(ids[0]), str(ids[1]), principal)


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
