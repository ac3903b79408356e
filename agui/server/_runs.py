"""Resumable runs: the agent runs in a task owned by the run, its events go to a
run log (:mod:`agui.server._runlog`), and each request attaches to the log.

The wire contract (SSE binding):

* every frame of a run carries ``id: <cursor>``: opaque, unique within the
  thread, ordered within the run;
* a re-POST of the same ``RunAgentInput`` (same ``threadId`` and ``runId``) with
  ``Last-Event-ID: <cursor>`` streams every event after the cursor, then the
  live tail to the run's end, with the same content type and ``id:`` lines;
  ``Last-Event-ID: 0`` streams the run from its first event. The agent is never
  started twice;
* a cursor the server does not hold (unknown run, trimmed, expired, of another
  run) is ``410`` with a one-line JSON reason (``cursor_unknown``); a re-POST
  without ``Last-Event-ID`` of a run that exists is ``409`` (``run_exists``);
* a run nobody is attached to is cancelled after ``detach_timeout`` seconds
  (its log then ends with ``RUN_ERROR`` ``run_detached``); ``DELETE
  <path>/runs/{threadId}/{runId}`` (each id percent-encoded) cancels it at once
  (``RUN_ERROR`` ``run_cancelled``; ``204``, or ``404`` ``unknown_run``);
* a run whose worker died (its lease lapsed) is ended by whichever process
  notices, with ``RUN_ERROR`` ``worker_lost``;
* the protobuf binding has no cursor: its frames are as without a log.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import msgspec
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from agui._jsonvalue import is_json_object
from agui.server import _telemetry as telemetry
from agui.server._cancel import CancelToken
from agui.server._emitter import Emitter, Outbox
from agui.server._encoder import SSE_HEADERS, EventEncoder
from agui.server._guard import Guard
from agui.server._request import error_response, is_disconnect
from agui.server._response import Agent, run_agent, thread_of
from agui.server._runlog.store import RunLogFull, RunRef, RunStore
from agui.server._versions import stream_version
from agui.types import RunAgentInput

__all__ = [
    "CANCEL_CODES",
    "DEFAULT_DETACH_TIMEOUT",
    "DEFAULT_LEASE",
    "START_CURSOR",
    "RunHub",
    "cursor_tag",
]

logger: logging.Logger = logging.getLogger("agui.server")

DEFAULT_DETACH_TIMEOUT = 10.0
"""Seconds a run may have nobody attached before its agent is cancelled."""

DEFAULT_LEASE = 5.0
"""Seconds a worker's lease on a running run lasts unless renewed (it is renewed
several times a second); a worker gone this long is taken for lost."""

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

READ_BATCH = 512
"""Entries read from the log per write to one client (bounds its memory)."""

_TERMINAL = frozenset({"RUN_FINISHED", "RUN_ERROR"})


def cursor_tag(run_id: str) -> str:
    """The run part of a cursor: 12 hex digits of a hash of ``run_id``."""
    return hashlib.blake2b(run_id.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


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
    extra: dict[str, Any] = field(default_factory=dict[str, Any])


class RunHub:
    """The runs of one endpoint in this process, and the requests attached to them.

    ``RunHub(agent, store, *, guard=True, detach_timeout=10.0, lease=5.0,
    keepalive=None, buffer_limit=262144, owns_store=False)``. :meth:`respond`
    answers a decoded POST; :meth:`cancel` is the DELETE; :meth:`shutdown` cancels
    every run this process runs (and closes the store when ``owns_store``: it was
    built from a URL for this hub).
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
    ) -> None:
        if detach_timeout <= 0 or lease <= 0:
            raise ValueError("detach_timeout and lease must be positive")
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

    # ------------------------------------------------------------ requests

    async def respond(
        self, request: Request, run_input: RunAgentInput, encoder: EventEncoder
    ) -> Response:
        """The response to a decoded POST: a new run, a resume, or a refusal."""
        run = RunRef(run_input.thread_id, run_input.run_id)
        last_event_id = request.headers.get("last-event-id", "").strip()
        if not last_event_id:
            try:
                created = await self.store.create(run, self.lease)
            except RunLogFull as exc:
                return error_response(503, "run_log_full", str(exc))
            if not created:
                return error_response(
                    409,
                    "run_exists",
                    "this threadId/runId is a run already; resume it with Last-Event-ID",
                    "$.runId",
                )
            self._start(run, run_input)
            return _Attachment(self, run, START_CURSOR, encoder, resumed=False)
        after = self._entry_of(last_event_id, run)
        if after is None or not await self.store.holds(run, after):
            info = None if after is None else await self.store.info(run)
            what = "run" if info is None else "cursor"
            return error_response(
                410,
                "cursor_unknown",
                f"the server does not hold this {what} (unknown, trimmed or expired)",
                "Last-Event-ID",
            )
        return _Attachment(self, run, after, encoder, resumed=True)

    @staticmethod
    def _entry_of(cursor: str, run: RunRef) -> str | None:
        if cursor == START_CURSOR:
            return START_CURSOR
        tag, dot, entry = cursor.partition(".")
        if not dot or tag != cursor_tag(run.run_id) or not entry:
            return None
        return entry

    async def cancel(self, run: RunRef, reason: str = "cancel requested") -> bool:
        """Cancel ``run``'s agent: at once when it runs here, else through the
        store (its worker reads the request within a fraction of a second).
        False when the run is unknown."""
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
        if self.owns_store:
            with contextlib.suppress(Exception):
                await self.store.close()

    # ------------------------------------------------------------ the worker

    def _start(self, run: RunRef, run_input: RunAgentInput) -> None:
        token = CancelToken()
        live = _LiveRun(run, token)
        self.live[run] = live
        buffer = Outbox(self.buffer_limit)
        guard = Guard(thread_of(run_input)) if self.guard else None
        emitter = Emitter(buffer, guard, token, version=stream_version(run_input), raw=True)
        live.owner_task = asyncio.create_task(self._own(live, run_input, emitter, buffer))

    async def _own(
        self, live: _LiveRun, run_input: RunAgentInput, emitter: Emitter, buffer: Outbox
    ) -> None:
        run = live.run
        span = telemetry.run_started(run)
        flusher = asyncio.create_task(self._flush(live, buffer))
        supervisor = asyncio.create_task(self._supervise(live))
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
            supervisor.cancel()
            with contextlib.suppress(BaseException):
                await flusher
            with contextlib.suppress(Exception):
                await self.store.release(run)
            with contextlib.suppress(BaseException):
                await supervisor
            self.live.pop(run, None)
            live.events = emitter.count
            telemetry.run_ended(span, outcome, emitter.count)

    async def _flush(self, live: _LiveRun, buffer: Outbox) -> None:
        """Move admitted events to the log, everything pending as one append."""
        run = live.run
        while True:
            frames = await buffer.take_frames()
            end = buffer.closed  # (no event can follow: the agent is done)
            try:
                await self.store.append(run, frames or [], end=end)
            except Exception as exc:  # the log is unreachable: the run cannot go on
                logger.error("run log append failed (run %r)", run.run_id, exc_info=exc)
                self.cancel_live(live, "run log failed")
                if end:
                    return
                continue
            if end:
                return

    async def _supervise(self, live: _LiveRun) -> None:
        """Renew the lease; cancel on request, or once nobody was attached for
        ``detach_timeout`` seconds."""
        run = live.run
        last_seen = time.monotonic()
        while True:
            await asyncio.sleep(self.tick)
            try:
                signals = await self.store.renew(run, self.lease)
            except Exception as exc:
                logger.warning("run lease renewal failed (run %r)", run.run_id, exc_info=exc)
                continue
            now = time.monotonic()
            if signals.cancel:
                self.cancel_live(live, "cancel requested")
            elif live.attached > 0 or signals.attached:
                last_seen = now
            elif now - last_seen >= self.detach_timeout:
                logger.info(
                    "run %r had nobody attached for %g s: cancelled",
                    run.run_id,
                    self.detach_timeout,
                )
                self.cancel_live(live, "detached")

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
                    "the server process running this run stopped (its lease expired)",
                    "worker_lost",
                )
            )
        logger.warning("run %r lost its worker: ended with worker_lost", run.run_id)
        await self.store.append(run, entries, end=True)


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
        self, hub: RunHub, run: RunRef, after: str, encoder: EventEncoder, *, resumed: bool
    ) -> None:
        self.hub = hub
        self.run = run
        self.after = after
        self.encoder = encoder
        self.resumed = resumed
        self.sent = 0  # events written to this request so far
        self.status_code = 200
        self.background = None
        self.init_headers({"content-type": encoder.content_type, **SSE_HEADERS})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        hub, run = self.hub, self.run
        span = telemetry.attached(run, resumed=self.resumed, cursor=self.after)
        live = hub.live.get(run)
        if live is not None:
            live.attached += 1
        pump = asyncio.create_task(self._pump(send, live is None))
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
                if isinstance(result, Exception) and not is_disconnect(result):
                    logger.error("run stream failed", exc_info=result)
            telemetry.detached(span, self.sent)
        if shutdown:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _pump(self, send: Send, remote: bool) -> None:
        hub, run, store, encoder = self.hub, self.run, self.hub.store, self.encoder
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        tag = cursor_tag(run.run_id)
        after = self.after
        keepalive = hub.keepalive
        last_write = last_touch = time.monotonic()
        if remote:
            await store.touch(run, 4 * hub.tick)
        while True:
            piece = await store.read(run, after, READ_BATCH, block=hub.tick)
            now = time.monotonic()
            batches = piece.batches
            if batches:
                frames = encoder.frames_with_ids
                body = b"".join([frames(b.events, f"{tag}.{b.prefix}", b.start) for b in batches])
                await send({"type": "http.response.body", "body": body, "more_body": True})
                after = batches[-1].last_id
                self.sent += piece.count
                last_write = now
            if piece.ended:
                break
            if remote and now - last_touch >= hub.tick:
                await store.touch(run, 4 * hub.tick)
                last_touch = now
            if not batches:
                if run not in hub.live:
                    info = await store.info(run)
                    if info is None:
                        break  # expired under us
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


def cancel_endpoint(hub: RunHub, prefix: str) -> Any:
    """The ``DELETE <prefix>/{threadId}/{runId}`` endpoint (ids percent-encoded,
    read from the raw path so an id may hold ``/`` as ``%2F``)."""

    async def endpoint(request: Request) -> Response:
        raw = request.scope.get("raw_path") or request.url.path.encode()
        rest = raw.decode("latin-1").split("?", 1)[0]
        marker = prefix.rstrip("/") + "/"
        index = rest.find(marker)
        parts = rest[index + len(marker) :].split("/") if index >= 0 else []
        if len(parts) != 2 or not all(parts):
            return error_response(404, "unknown_run", "expected /runs/{threadId}/{runId}")
        run = RunRef(unquote(parts[0]), unquote(parts[1]))
        if await hub.cancel(run):
            return Response(status_code=204)
        return error_response(404, "unknown_run", "no such run")

    return endpoint


def capabilities_document(hub: RunHub | None, path: str) -> dict[str, Any]:
    """The ``AgentCapabilities`` JSON (wire form) an endpoint at ``path`` serves."""
    doc: dict[str, Any] = {"transport": {"streaming": True, "resumable": hub is not None}}
    if hub is not None:
        doc["custom"] = {
            "resumable": {
                "cursor": "SSE id: line; resume with Last-Event-ID (0 = from the start)",
                "retentionSeconds": hub.store.retention,
                "detachTimeoutSeconds": hub.detach_timeout,
                "leaseSeconds": hub.lease,
                "cancel": {"method": "DELETE", "path": f"{path}/runs/{{threadId}}/{{runId}}"},
                "protobufCursor": False,
            }
        }
    return doc


def capabilities_endpoint(hub: RunHub | None, path: str) -> Any:
    """The ``GET <path>/capabilities`` endpoint."""
    doc = capabilities_document(hub, path)

    async def endpoint(request: Request) -> Response:
        return JSONResponse(doc)

    return endpoint
