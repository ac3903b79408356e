"""Resumable runs: the agent runs in a task owned by the run, its events go to a
run log (:mod:`agui.server._runlog`), and each request attaches to the log.

The wire contract (SSE binding):

* every frame of a run carries ``id: <cursor>``, ``<token>.<entry>``: unique
  within the thread, ordered within the run; ``<token>`` (22 characters of
  base64url) is a keyed MAC of the run's ids and its nonce under the server secret
  (:mod:`agui.server._access`), also sent as the ``AGUI-Run-Token`` header of
  every ``200`` of the run: a cursor cannot be forged from the ids; a new run's
  stream opens with the comment ``: run held`` (the server holds the run from
  then on: a client cut before the first frame resumes from the start with
  ``Last-Event-ID: <token>.0``, the token from the response's header);
* a re-POST of the same ``RunAgentInput`` (same ``threadId`` and ``runId``) with
  ``Last-Event-ID: <cursor>`` streams every event after the cursor, then the
  live tail to the run's end, with the same content type and ``id:`` lines;
  ``Last-Event-ID: <token>.0`` streams the run from its first event (plain
  ``Last-Event-ID: 0`` does too for the run's principal when the application
  has an ``authorize`` hook). The agent is never started twice;
* who may: with an ``authorize`` hook, the principal that started the run; without
  one, whoever proves the run (its token). Anyone else, and any cursor the server
  does not hold (unknown run, trimmed, expired, of another run, malformed,
  forged, longer than 512 characters, not ASCII), gets the same ``410`` with a
  one-line JSON reason (``cursor_unknown``); a re-POST without
  ``Last-Event-ID`` of a run that exists is ``409`` (``run_exists``). With a hook
  the runs of each principal are their own namespace: another principal's POST
  with the same ids starts a separate run (answered as any new run), so the
  ``409`` only ever tells a principal of their own run;
* a run nobody is attached to is cancelled after ``detach_timeout`` seconds
  (its log then ends with ``RUN_ERROR`` ``run_detached``); ``DELETE
  <path>/runs/{threadId}/{runId}`` (each id percent-encoded; with the
  ``AGUI-Run-Token`` header, or as the run's principal) cancels it at once
  (``RUN_ERROR`` ``run_cancelled``; ``204``, or ``404`` ``unknown_run`` for
  a run that is unknown or not the caller's);
* a run whose worker died (its heartbeat lapsed) is ended by whichever process
  notices, with ``RUN_ERROR`` ``worker_lost``;
* the protobuf binding has no cursor: its frames are as without a log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from agui._jsonvalue import is_json_object
from agui.server import _telemetry as telemetry
from agui.server._access import (
    RUN_TOKEN_HEADER,
    Authorize,
    RunKeys,
    configured_secret,
    parse_cursor,
)
from agui.server._cancel import CancelToken
from agui.server._emitter import Emitter, Outbox
from agui.server._encoder import SSE_HEADERS, EventEncoder
from agui.server._guard import Guard
from agui.server._limits import RunSlots, busy
from agui.server._request import error_response, is_disconnect
from agui.server._response import Agent, run_agent, thread_of
from agui.server._runlog.feed import LiveFeed
from agui.server._runlog.store import (
    LogBatch,
    LogTrimmed,
    RunLogFull,
    RunLogUnavailable,
    RunRef,
    RunStore,
)
from agui.server._versions import stream_version
from agui.types import RunAgentInput
from agui.wire._sse import RUN_HELD

__all__ = [
    "CANCEL_CODES",
    "DEFAULT_DETACH_TIMEOUT",
    "DEFAULT_LEASE",
    "START_CURSOR",
    "RunHub",
]

logger: logging.Logger = logging.getLogger("agui.server")

DEFAULT_DETACH_TIMEOUT = 10.0
"""Seconds a run may have nobody attached before its agent is cancelled."""

DEFAULT_LEASE = 5.0
"""Seconds a worker's heartbeat lasts unless renewed (one per process, renewed
four times a second for all its runs); a worker gone this long is taken for
lost. A store stall shorter than this minus one renewal interval ends no run."""

START_CURSOR = "0"
"""The ``Last-Event-ID`` that replays a run from its first event."""

CANCEL_CODES: dict[str, str] = {
    "cancel requested": "run_cancelled",
    "detached": "run_detached",
    "server shutting down": "server_shutdown",
    "run log failed": "run_log_failed",
}
"""The ``RUN_ERROR`` code that closes a run's log when its agent was cancelled,
by the cancel token's reason."""

RETRY_AFTER = 1
"""``Retry-After`` seconds of a 503 ``run_log_full``."""

READ_BATCH = 512
"""Entries read from the log per write to one client (bounds its memory)."""

_TERMINAL = frozenset({"RUN_FINISHED", "RUN_ERROR"})

_LOST = "!lost"  # not an entry id: the run the store lost (see RunHub._entry_of)

_PROBE = RunRef("agui-probe", "agui-probe")
"""The run whose state a probe of the store asks for (it never exists)."""

_UNLOGGED_PREFIX = "x"
"""The id prefix of a terminal event a request got that the store does not hold
(``run_log_failed``, ``log_trimmed``): a resume from it is refused."""


def _run_error(message: str, code: str) -> bytes:
    return msgspec.json.encode({"type": "RUN_ERROR", "message": message, "code": code})


@dataclass(slots=True, eq=False)
class _LiveRun:
    """A run whose agent this process runs."""

    run: RunRef
    token: CancelToken
    attached: int = 0
    agent_task: asyncio.Task[None] | None = None
    owner_task: asyncio.Task[None] | None = None
    events: int = 0
    slots: RunSlots | None = None  # the slot its agent holds (given back when it ends)
    feed: LiveFeed = field(default_factory=LiveFeed)
    last_seen: float = field(default_factory=time.monotonic)  # a reader was attached
    failed: BaseException | None = None  # an append failed: the log is broken
    extra: dict[str, Any] = field(default_factory=dict[str, Any])


class RunHub:
    """The runs of one endpoint in this process, and the requests attached to them.

    ``RunHub(agent, store, *, guard=True, detach_timeout=10.0, lease=5.0,
    keepalive=None, buffer_limit=262144, owns_store=False, authorize=None,
    secret=None)``. :meth:`respond` answers a decoded POST; :meth:`cancel_request`
    the DELETE; :meth:`shutdown` cancels every run this process runs (and closes
    the store when ``owns_store``: it was built from a URL for this hub).
    ``authorize``: the application's hook (:mod:`agui.server._access`; the routes
    call it, the hub checks its principal); ``secret``: the key of the run
    tokens (else ``AGUI_RUN_SECRET``, else the store's).

    One heartbeat task per hub (not per run) keeps the store's worker alive,
    delivers cancels asked through other processes and ends runs nobody was
    attached to for ``detach_timeout``. Requests attached in this process read
    a live run's :class:`~agui.server._runlog.feed.LiveFeed`, not the store.
    """

    def __init__(
        self,
        agent: Agent,
        store: RunStore,
        *,
        guard: bool = True,
        detach_timeout: float = DEFAULT_DETACH_TIMEOUT,
        lease: float = DEFAULT_LEASE,
        keepalive: float | None = None,
        buffer_limit: int = 262144,
        owns_store: bool = False,
        authorize: Authorize | None = None,
        secret: bytes | str | None = None,
    ) -> None:
        if detach_timeout <= 0 or lease <= 0:
            raise ValueError("detach_timeout and lease must be positive")
        self.authorize: Authorize | None = authorize
        configured = configured_secret(secret)
        self._keys: RunKeys | None = None if configured is None else RunKeys(configured)
        self.agent = agent
        self.store = store
        self.guard = guard
        self.detach_timeout = detach_timeout
        self.lease = lease
        self.keepalive = keepalive
        self.buffer_limit = buffer_limit
        self.owns_store = owns_store
        self.tick: float = min(0.25, lease / 4, detach_timeout / 4)
        self.live: dict[RunRef, _LiveRun] = {}
        self.unavailable_since: float | None = None
        """Monotonic time the store was last found unreachable (None: it answers)."""
        self._unlogged: dict[RunRef, bytes] = {}  # terminal events the store did not take yet
        self._beat_task: asyncio.Task[None] | None = None
        self._probed = float("-inf")

    # ------------------------------------------------------------ requests

    async def keys(self) -> RunKeys:
        """The run tokens' keys: the configured secret's, else the store's."""
        if self._keys is None:
            self._keys = RunKeys(await self.store.secret())
        return self._keys

    async def respond(
        self,
        request: Request,
        run_input: RunAgentInput,
        encoder: EventEncoder,
        *,
        principal: str | None = None,
        slots: RunSlots | None = None,
    ) -> Response:
        """The response to a decoded POST of ``principal`` (what the ``authorize``
        hook returned; None without one): a new run (holding one of ``slots`` while
        its agent runs), an attachment, or a refusal."""
        # a principal's runs are their own: the same ids of another principal name another run
        run = RunRef(run_input.thread_id, run_input.run_id, principal)
        try:
            keys = await self.keys()
        except RunLogUnavailable as exc:
            return self.unavailable(exc)
        last_event_id = request.headers.get("last-event-id", "").strip()
        if not last_event_id:
            nonce = secrets.token_urlsafe(12)  # binds the run's token to this run alone
            refused = await self._claim(run, principal, slots, nonce)
            if refused is not None:
                return refused
            self._start(run, run_input, slots)
            return _Attachment(
                self, run, START_CURSOR, encoder, keys.token(run, nonce), resumed=False, new=True
            )
        try:
            found = await self._entry_of(last_event_id, run, principal, keys)
        except RunLogUnavailable as exc:
            return self.unavailable(exc)
        self._store_up()
        after, nonce = found if found is not None else (None, "")
        if after == _LOST:
            return error_response(
                410,
                "run_log_lost",
                "the run log lost this run before its retention ended (the store "
                "restarted empty?): it cannot be resumed",
                "Last-Event-ID",
            )
        if after is None:
            return _cursor_unknown()
        return _Attachment(
            self, run, after, encoder, keys.token(run, nonce), resumed=after != START_CURSOR
        )

    def _lost(self, run: RunRef, entry: str) -> bool:
        """Whether a run the store does not hold should still be there: it runs
        here, or its cursor's entry was written less than ``retention`` ago."""
        if run in self.live:
            return True
        written = self.store.written_at(entry)
        return written is not None and time.time() - written < self.store.retention - 1.0

    def unavailable(self, exc: RunLogUnavailable) -> Response:
        """503 ``run_log_unavailable`` with ``Retry-After``."""
        self._store_down(exc)
        response = error_response(
            503, "run_log_unavailable", f"{exc}; retry in {exc.retry_after:g} s"
        )
        response.headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after)))
        return response

    async def available(self) -> bool:
        """Whether the run log answers (asked at most once a second)."""
        now = time.monotonic()
        if now - self._probed >= 1.0:
            self._probed = now
            try:
                await self.store.info(_PROBE)
            except RunLogUnavailable as exc:
                self._store_down(exc)
            else:
                self._store_up()
        return self.unavailable_since is None

    def _store_down(self, exc: BaseException) -> None:
        if self.unavailable_since is None:
            self.unavailable_since = time.monotonic()
            logger.warning("the run log is unreachable: %s", exc)

    def _store_up(self) -> None:
        if self.unavailable_since is not None:
            self.unavailable_since = None
            logger.warning("the run log answers again")

    async def _claim(
        self, run: RunRef, principal: str | None, slots: RunSlots | None, nonce: str
    ) -> Response | None:
        """Take a slot for a new run's agent, then create the run in the store
        (``principal`` its owner); None, or the refusal (503 with ``Retry-After``
        when no slot or no room is left, 409 for a run that exists) with the slot
        given back: a refused request starts no agent and holds nothing."""
        if slots is None:
            slots = RunSlots(None)  # (no limit: taking and giving back count nothing)
        refused = slots.take()
        if refused is not None:
            return refused
        try:
            created = await self.store.create(run, self.lease, principal=principal, nonce=nonce)
        except RunLogFull as exc:
            refused = busy("run_log_full", str(exc), RETRY_AFTER)
        except RunLogUnavailable as exc:
            refused = self.unavailable(exc)
        except BaseException:
            slots.release()
            raise
        else:
            self._store_up()
            if created:
                return None
            refused = error_response(
                409,
                "run_exists",
                "this threadId/runId is a run already; resume it with Last-Event-ID",
                "$.runId",
            )
        slots.release()
        return refused

    async def _entry_of(
        self, header: str, run: RunRef, principal: str | None, keys: RunKeys
    ) -> tuple[str, str] | None:
        """The log entry a ``Last-Event-ID`` attaches after and the run's nonce, or None
        when the caller may not attach there: a malformed cursor (refused before the
        store is asked), a token not of this run (of another run, or of an earlier run
        with the same ids: the token is bound to the run's nonce), a replay from the start
        with no proof of the run and no ``authorize`` hook, a run the store does
        not hold or that another principal started, an entry no longer held.
        ``(_LOST, "")`` when the caller's token was made for these ids but the store lost
        the run before its retention ended.

        Raises:
            RunLogUnavailable: the store cannot be reached."""
        cursor = parse_cursor(header)
        if cursor is None:
            return None
        token, entry = cursor
        if token is None and self.authorize is None:  # "0" alone proves nothing
            return None
        info = await self.store.info(run)
        if info is None:
            if token is not None and keys.valid_ids(run, token) and self._lost(run, entry):
                return _LOST, ""
            return None
        if token is not None and not keys.valid(run, token, info.nonce):
            return None  # forged, or of an earlier run with these ids
        if info.principal != principal or not await self.store.holds(run, entry):
            return None
        return entry, info.nonce

    async def cancel_request(self, run: RunRef, principal: str | None, token: str | None) -> bool:
        """The ``DELETE`` of ``principal`` carrying ``token`` (the ``AGUI-Run-Token``
        header, or None): cancel the run when the caller may (its principal with an
        ``authorize`` hook; the run's token without one). False, exactly as for an
        unknown run, otherwise."""
        keys = await self.keys()
        info = await self.store.info(run)
        if info is None or info.principal != principal:
            return False
        proven = token is not None and token.isascii() and keys.valid(run, token, info.nonce)
        if self.authorize is None and not proven:
            return False
        return await self.cancel(run)

    async def cancel(self, run: RunRef, reason: str = "cancel requested") -> bool:
        """Cancel ``run``'s agent: at once when it runs here, else through the
        store (its worker reads the request at its next heartbeat, within a
        fraction of a second). False when the run is unknown.

        Raises:
            RunLogUnavailable: the run is not here and the store cannot be reached.
        """
        live = self.live.get(run)
        if live is not None:
            self.cancel_live(live, reason)
            return True
        return await self.store.request_cancel(run)

    def cancel_live(self, live: _LiveRun, reason: str) -> None:
        """Trip ``live``'s token with ``reason`` and cancel its agent task."""
        live.token.cancel(reason)
        if live.agent_task is not None and not live.agent_task.done():
            live.agent_task.cancel()

    async def shutdown(self) -> None:
        """Cancel every run this process runs and wait until their logs end."""
        tasks = [live.owner_task for live in self.live.values() if live.owner_task]
        for live in list(self.live.values()):
            self.cancel_live(live, "server shutting down")
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        beat = self._beat_task
        if beat is not None and not beat.done():
            beat.cancel()
            with contextlib.suppress(BaseException):
                await beat
        if self.owns_store:
            with contextlib.suppress(Exception):
                await self.store.close()

    # ------------------------------------------------------------ the worker

    def _start(self, run: RunRef, run_input: RunAgentInput, slots: RunSlots | None) -> None:
        token = CancelToken()
        live = _LiveRun(run, token, slots=slots)
        self.live[run] = live
        buffer = Outbox(self.buffer_limit)
        guard = Guard(thread_of(run_input)) if self.guard else None
        emitter = Emitter(buffer, guard, token, version=stream_version(run_input), raw=True)
        live.owner_task = asyncio.create_task(self._own(live, run_input, emitter, buffer))
        if self._beat_task is None or self._beat_task.done():
            self._beat_task = asyncio.create_task(self._beat())

    async def _own(
        self, live: _LiveRun, run_input: RunAgentInput, emitter: Emitter, buffer: Outbox
    ) -> None:
        run = live.run
        span = telemetry.run_started(run)
        flusher = asyncio.create_task(self._flush(live, buffer))
        agent_task = live.agent_task = asyncio.create_task(
            run_agent(self.agent, run_input, emitter, live.token)
        )
        outcome = "finished"
        try:
            try:
                await asyncio.shield(agent_task)
            except asyncio.CancelledError:
                if not agent_task.done():  # the owner itself is cancelled: loop teardown
                    self.cancel_live(live, "server shutting down")
                    with contextlib.suppress(BaseException):
                        await agent_task
                    raise
            if agent_task.cancelled():
                reason = live.token.reason or "cancel requested"
                outcome = CANCEL_CODES.get(reason, "run_cancelled")
                if emitter.run_open or emitter.count == 0:
                    buffer.put(_run_error(f"the run was cancelled ({reason})", outcome))
            elif agent_task.exception() is not None:  # pragma: no cover - run_agent reports
                outcome = "agent_error"
        finally:
            buffer.close()
            with contextlib.suppress(BaseException):
                await flusher
            with contextlib.suppress(Exception):
                await self.store.release(run)
            self.live.pop(run, None)
            if live.slots is not None:
                live.slots.release()
            live.events = emitter.count
            telemetry.run_ended(span, outcome, emitter.count)

    async def _flush(self, live: _LiveRun, buffer: Outbox) -> None:
        """Move admitted events to the log, everything pending as one append, and
        to the run's in-process feed. Once an append failed the log is broken:
        nothing more is appended (a gap would pass for a whole log), the agent
        is cancelled, and the run ends ``RUN_ERROR`` ``run_log_failed``, on the
        feed at once and in the log once the store takes it."""
        run, feed = live.run, live.feed
        while True:
            frames = await buffer.take_frames()
            end = buffer.closed  # (no event can follow: the agent is done)
            if live.failed is None:
                try:
                    batch = await self.store.append(run, frames or [], end=end)
                except Exception as exc:  # noqa: BLE001 - the log is broken: the run cannot go on
                    live.failed = exc
                    logger.error("run log append failed (run %r): %s", run.run_id, exc)
                    self._store_down(exc)
                    self.cancel_live(live, "run log failed")
                else:
                    feed.push(batch, end=end)
                    if end:
                        return
                    continue
            if end:
                terminal = _run_error(
                    "the run log could not be written: the run was stopped", "run_log_failed"
                )
                feed.push(LogBatch(_UNLOGGED_PREFIX, 0, [terminal]), end=True)
                self._unlogged[run] = terminal
                return

    async def _beat(self) -> None:
        """The worker's heartbeat, while this hub runs anything: renew it, act on
        its signals (cancels, readers elsewhere), end runs nobody was attached to
        for ``detach_timeout``, log the terminal events the store missed."""
        while self.live or self._unlogged:
            attached: frozenset[RunRef] = frozenset()
            try:
                signals = await self.store.heartbeat(self.lease)
            except Exception as exc:  # noqa: BLE001 - a failed beat never ends the loop
                self._store_down(exc)
            else:
                self._store_up()
                attached = signals.attached
                for run in signals.cancel:
                    live = self.live.get(run)
                    if live is not None:
                        self.cancel_live(live, "cancel requested")
            now = time.monotonic()
            for live in list(self.live.values()):
                if live.attached > 0 or live.run in attached:
                    live.last_seen = now
                elif now - live.last_seen >= self.detach_timeout and not live.token.cancelled:
                    logger.info(
                        "run %r had nobody attached for %g s: cancelled",
                        live.run.run_id,
                        self.detach_timeout,
                    )
                    self.cancel_live(live, "detached")
            for run, terminal in list(self._unlogged.items()):
                try:
                    await self.store.append(run, [terminal], end=True)
                except RunLogUnavailable:  # still unreachable: next beat
                    break
                del self._unlogged[run]
            await asyncio.sleep(self.tick)

    async def end_lost(self, run: RunRef) -> None:
        """End the log of a run whose worker is gone (``RUN_ERROR`` ``worker_lost``,
        unless the log already holds a terminal event); once, whoever calls."""
        if run in self.live or not await self.store.claim_lost(run):
            return
        last = await self.store.last(run)
        entries: list[bytes] = []
        if last is None or _event_type(last) not in _TERMINAL:
            entries.append(
                _run_error(
                    "the server process running this run stopped (its heartbeat expired)",
                    "worker_lost",
                )
            )
        logger.warning("run %r lost its worker: ended with worker_lost", run.run_id)
        await self.store.append(run, entries, end=True)


def _cursor_unknown() -> Response:
    """The one answer to every cursor a caller may not attach after."""
    return error_response(
        410,
        "cursor_unknown",
        "the server does not hold this cursor (unknown run, trimmed or expired)",
        "Last-Event-ID",
    )


def _event_type(data: bytes) -> str | None:
    try:
        obj = msgspec.json.decode(data)
    except msgspec.DecodeError:
        return None
    kind = obj.get("type") if is_json_object(obj) else None
    return kind if isinstance(kind, str) else None


class _Attachment(Response):
    """One request attached to a run's log from entry ``after``: the entries as
    frames (``id:`` lines on SSE), then the live tail, until the end mark."""

    def __init__(
        self,
        hub: RunHub,
        run: RunRef,
        after: str,
        encoder: EventEncoder,
        token: str,
        *,
        resumed: bool,
        new: bool = False,
    ) -> None:
        self.hub = hub
        self.run = run
        self.after = after
        self.encoder = encoder
        self.token = token
        self.resumed = resumed
        self.new = new  # a new run: its stream opens with ": run held <token>"
        self.sent = 0  # events written to this request so far
        self.status_code = 200
        self.background = None
        self.init_headers(
            {"content-type": encoder.content_type, **SSE_HEADERS, RUN_TOKEN_HEADER: token}
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        hub, run = self.hub, self.run
        span = telemetry.attached(run, resumed=self.resumed, cursor=self.after)
        live = hub.live.get(run)
        if live is not None:
            live.attached += 1
        pump = asyncio.create_task(self._pump(send, live))
        watcher = asyncio.create_task(_wait_disconnect(receive))
        shutdown = False
        try:
            await asyncio.wait({pump, watcher}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            # the server cancelled this request: it is shutting down (uvicorn's
            # graceful timeout ran out); the runs here go with it
            shutdown = True
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
            live = hub.live.get(run)
            if live is not None:
                hub.cancel_live(live, "server shutting down")
        finally:
            if live is not None:
                live.attached -= 1
                live.last_seen = time.monotonic()
            for task in (pump, watcher):
                task.cancel()
            results: list[BaseException | None]
            try:
                results = list(await asyncio.gather(pump, watcher, return_exceptions=True))
            except asyncio.CancelledError:
                if not shutdown:
                    raise
                results = []  # cancelled again while the server's loop is torn down
            for result in results:
                if isinstance(result, RunLogUnavailable):
                    logger.warning("run stream cut: %s", result)
                elif isinstance(result, Exception) and not is_disconnect(result):
                    logger.error("run stream failed", exc_info=result)
            telemetry.detached(span, self.sent)
        if shutdown:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _pump(self, send: Send, live: _LiveRun | None) -> None:
        """Write the run's frames: from the run's in-process feed when it runs
        here (the store only to catch up from behind the feed's window), else
        from the store. A trimmed position ends the stream ``log_trimmed``; a
        store that cannot be reached cuts it (the client resumes later)."""
        hub, run, store, encoder = self.hub, self.run, self.hub.store, self.encoder
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        # (with the run's token: the starter resumes a cut before the first frame with it)
        held = encoder.comment(f"{RUN_HELD} {self.token}") if self.new else b""
        if held:  # the server holds the run from here: a cut before a frame is resumable
            await send({"type": "http.response.body", "body": held, "more_body": True})
        tag = self.token
        after = self.after
        keepalive = hub.keepalive
        last_write = last_check = time.monotonic()
        last_touch = float("-inf")  # (a reader elsewhere: touched after its first write)
        feed = live.feed if live is not None else None
        while True:
            ended = False
            batches: list[LogBatch] = []
            got = feed.after(after, READ_BATCH) if feed is not None else None
            try:
                if got is not None and feed is not None:
                    batches, at_end = got
                    ended = at_end and feed.ended
                    if not batches and not ended:
                        await feed.wait(hub.tick)
                else:  # behind the window, or the run is not here
                    piece = await store.read(
                        run, after, READ_BATCH, block=None if feed is not None else hub.tick
                    )
                    batches, ended = piece.batches, piece.ended
                    if feed is not None and not batches and not ended:
                        if (
                            feed.ended
                            and feed.batches
                            and feed.batches[-1].prefix == _UNLOGGED_PREFIX
                        ):
                            batches, ended = [feed.batches[-1]], True  # the log broke behind us
                        else:
                            await feed.wait(hub.tick)
            except LogTrimmed as exc:
                logger.warning("run %r: %s", run.run_id, exc)
                error = _run_error(
                    f"events of this run were trimmed from the run log: {exc}", "log_trimmed"
                )
                batches, ended = [LogBatch(_UNLOGGED_PREFIX, 0, [error])], True
            now = time.monotonic()
            if batches:
                frames = encoder.frames_with_ids
                body = b"".join([frames(b.events, f"{tag}.{b.prefix}", b.start) for b in batches])
                await send({"type": "http.response.body", "body": body, "more_body": True})
                after = batches[-1].last_id
                self.sent += sum(len(b.events) for b in batches)
                last_write = now
            if ended:
                break
            if feed is None and now - last_touch >= hub.tick:
                await store.touch(run, 4 * hub.tick)
                last_touch = now
            if not batches:
                if feed is None and now - last_check >= hub.tick:
                    last_check = now
                    info = await store.info(run)
                    if info is None:
                        break  # expired (or lost) under us
                    if not info.ended and not info.leased:
                        await hub.end_lost(run)
                if keepalive is not None and now - last_write >= keepalive:
                    comment = encoder.comment("keep-alive")
                    if comment:
                        await send(
                            {"type": "http.response.body", "body": comment, "more_body": True}
                        )
                    last_write = now
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _wait_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return
