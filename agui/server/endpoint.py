"""ASGI endpoint that runs an agent function and streams its events as SSE.

An agent is ``async def agent(run_input, emit, cancel) -> None``:

* ``run_input`` — the decoded :class:`agui.types.RunAgentInput`;
* ``emit`` — an :class:`Emitter`; ``await emit(event)`` queues one event for
  the wire, after the guard (on by default) has checked it;
* ``cancel`` — a :class:`CancelToken`, tripped when the client disconnects,
  right before the agent's task is cancelled.

Lifecycle of one request (POST, body = RunAgentInput JSON):

1. body not JSON -> ``400``; JSON but not a valid RunAgentInput -> ``422``;
   both ``application/json`` ``{"error", "message", "path"}`` (``path`` is
   the JSON path of the offending value, e.g. ``$.messages[0].role``).
2. ``200 text/event-stream``; the agent runs as its own task; events are sent
   in the order they were admitted.
3. The agent returns -> the stream ends. If it raised, a ``RUN_ERROR``
   (``code="agent_error"``) is emitted when a run is open (or nothing was sent
   yet) and the guard allows it. With the guard on, an agent that returns
   with its run still open gets a ``RUN_ERROR`` (``code="run_not_finished"``)
   instead of a truncated stream, and one that returns without emitting
   anything a ``RUN_ERROR`` (``code="run_not_started"``) instead of an empty
   stream.
4. The client disconnects -> token tripped, agent task cancelled, stream
   dropped.
5. The server cancels the request (shutting down: uvicorn's
   ``timeout_graceful_shutdown`` ran out, or a forced exit) -> token tripped,
   agent task cancelled, the body ended; a normal end, no traceback logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agui.errors import DecodeError, GuardError
from agui.server.cancel import CancelToken
from agui.server.encoder import SSE_HEADERS, EventEncoder
from agui.server.guard import Guard
from agui.types import RunErrorEvent, event_type
from agui.wire import check_finite, decode_event, decode_event_lenient, decode_input, encode_event
from agui.wire.lenient import LEGACY_NULL

logger: logging.Logger = logging.getLogger("agui.server")

Agent = Callable[[Any, "Emitter", CancelToken], Awaitable[None]]
"""``async def agent(run_input: RunAgentInput, emit: Emitter, cancel: CancelToken) -> None``."""

_END = object()
_QUEUE_SIZE = 256


class Emitter:
    """``await emit(event)`` sends one event of the current response stream.

    ``event`` is a generated event struct (``agui.types``) or a plain dict in
    wire form (``{"type": "RUN_STARTED", "threadId": ...}``), decoded strictly.

    Raises:
        GuardError: the guard rejects the event (nothing is sent; the stream
            stays as it was, so the agent may correct itself and continue).
        agui.errors.DecodeError: a dict that is not a valid event (a
            ``None`` in an optional slot is read as absent, as in a struct);
            with the guard on, also a struct whose fields break the schema (a
            wrong type such as ``delta=5`` or ``timestamp=1.5``, a value
            outside a closed set, a ``None`` in an optional slot that is not
            open JSON, a malformed JSON Patch op): nothing is sent.
        agui.errors.EncodeError: a NaN or infinite float anywhere in the
            event (JSON has none); nothing is sent.
        TypeError: not an event struct.
        msgspec.EncodeError: the event holds a value JSON cannot carry
            (e.g. an arbitrary object); nothing is sent.
        asyncio.CancelledError: the client has gone away.

    Attributes: ``run_open`` (a run is open on this stream), ``count``
    (events sent or queued), ``guarded`` (the guard is on).
    """

    def __init__(
        self,
        queue: asyncio.Queue[Any],
        guard: Guard | None,
        token: CancelToken,
        encoder: EventEncoder | None = None,
    ) -> None:
        self._queue = queue
        self._guard = guard
        self._token = token
        self._encode = (encoder or EventEncoder()).encode
        self._lock = asyncio.Lock()
        self._count = 0
        self._run_open = False  # tracked here when the guard is off

    @property
    def guarded(self) -> bool:
        """True when the guard checks every emission."""
        return self._guard is not None

    @property
    def run_open(self) -> bool:
        """True while a run is open on this stream (RUN_STARTED sent, not ended)."""
        return self._guard.run_open if self._guard is not None else self._run_open

    @property
    def count(self) -> int:
        """Events admitted to the stream so far."""
        return self._count

    async def __call__(self, event: Any) -> None:
        if isinstance(event, dict):
            check_finite(event)  # (msgspec would write a NaN as null)
            try:
                data = msgspec.json.encode(event)
            except UnicodeEncodeError:  # a str holding a lone surrogate: escape it (as the wire)
                data = json.dumps(event, allow_nan=False).encode()
            event = _event_from_dict(data)
        elif self._guard is not None:
            # a struct is not validated when built (msgspec): check its fields
            # as a client's strict decoder will (delta=5, timestamp=1.5, ...)
            event = decode_event(encode_event(event), strict=True)
        frame = self._encode(event)  # fails before anything is admitted
        async with self._lock:
            self._token.raise_if_cancelled()
            if self._guard is not None:
                self._guard.admit(event)
            else:
                self._track(event)
            self._count += 1
            await self._queue.put(frame)

    def allows(self, event: Any) -> bool:
        """Would ``event`` be accepted now? Always True when the guard is off."""
        return True if self._guard is None else self._guard.allows(event)

    def _track(self, event: Any) -> None:
        etype = event_type(event)
        if etype == "RUN_STARTED":
            self._run_open = True
        elif etype in ("RUN_FINISHED", "RUN_ERROR"):
            self._run_open = False

    async def _fail(self, message: str, code: str) -> None:
        """Emit RUN_ERROR if a run is open (or nothing was sent) and it is legal."""
        if not (self.run_open or self._count == 0):
            return
        try:
            await self(RunErrorEvent(message=message, code=code))
        except GuardError as exc:  # pragma: no cover - RUN_ERROR is legal almost always
            logger.warning("could not report the agent failure: %s", exc)


def _event_from_dict(data: bytes) -> Any:
    """The event a dict emitted by an agent stands for, decoded strictly, except
    that a ``None`` in an optional slot means absent (as it does in an event
    struct, whose encoder leaves it out): such nulls are dropped, nothing else
    is repaired.

    Raises:
        DecodeError: the dict is not a valid event (the strict error).
    """
    try:
        return decode_event(data, strict=True)
    except DecodeError as strict_error:
        decoded = decode_event_lenient(data)  # (raises the real fault when it cannot repair)
        others = [w for w in decoded.warnings if w.code != LEGACY_NULL]
        if decoded.event is not None and not others:
            return decoded.event
        if others:  # name the fault itself, not a null beside it
            raise DecodeError(
                f"not a valid event: {others[0].message} (an emitted event is not repaired)",
                path=others[0].path or "$",
            ) from None
        raise strict_error from None


class AgentStreamResponse(Response):
    """The SSE response of one agent run (an ASGI app; see the module doc)."""

    media_type: str = EventEncoder.content_type

    def __init__(
        self,
        agent: Agent,
        run_input: Any,
        *,
        guard: bool = True,
        encoder: EventEncoder | None = None,
        headers: dict[str, str] | None = None,
        keepalive: float | None = None,
    ) -> None:
        self.agent = agent
        self.run_input = run_input
        self.guard = guard
        self.keepalive = keepalive
        self.encoder: EventEncoder = encoder or EventEncoder()
        self.status_code = 200
        self.background: BackgroundTask | None = None
        self.token: CancelToken = CancelToken()
        self.init_headers(
            {"content-type": self.encoder.content_type, **SSE_HEADERS, **(headers or {})}
        )

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        token = self.token
        queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=_QUEUE_SIZE)
        guard = Guard(_thread_of(self.run_input)) if self.guard else None
        emitter = Emitter(queue, guard, token, self.encoder)
        agent_task = asyncio.create_task(self._run_agent(emitter, token, queue))
        sender = asyncio.create_task(self._send_events(queue, send))
        watcher = asyncio.create_task(_wait_disconnect(receive))
        shutdown = False
        try:
            await asyncio.wait({sender, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if sender.done() and sender.exception() is None:
                # normal end: the agent returned and everything was written
                return
            token.cancel("client disconnected")
        except asyncio.CancelledError:
            # The server cancelled this request (uvicorn: graceful-shutdown timeout
            # or forced exit): a normal end of the stream, not an app failure, so
            # no traceback; the body is ended below (the client sees the stream
            # end without a terminal event and reports it as truncated).
            token.cancel("server shutting down")
            shutdown = True
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
        except BaseException:
            token.cancel("server shutting down")
            raise
        finally:
            if not agent_task.done():
                token.cancel("client disconnected")
                agent_task.cancel()
            for task in (sender, watcher):
                task.cancel()
            try:
                results = await asyncio.gather(agent_task, sender, watcher, return_exceptions=True)
            except asyncio.CancelledError:
                if not shutdown:
                    raise
                results = []  # cancelled again while the server's loop is torn down
            for result in results:
                if isinstance(result, Exception) and not _is_disconnect(result):
                    logger.error("agent stream failed", exc_info=result)
        if shutdown:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _run_agent(
        self, emitter: Emitter, token: CancelToken, queue: asyncio.Queue[Any]
    ) -> None:
        try:
            await self.agent(self.run_input, emitter, token)
        except asyncio.CancelledError:
            if token.cancelled:
                raise  # we cancelled it: the client is gone
            # the agent cancelled itself: a failure like any other
            logger.warning("agent task was cancelled from inside the agent")
            await emitter._fail("the agent was cancelled", "agent_cancelled")
        except Exception as exc:  # the agent failed: report it in-stream
            logger.warning("agent raised %s: %s", type(exc).__name__, exc, exc_info=exc)
            await emitter._fail(f"{type(exc).__name__}: {exc}", "agent_error")
        else:
            if emitter.guarded and emitter.run_open:
                await emitter._fail(
                    "the agent returned without finishing its run", "run_not_finished"
                )
            elif emitter.guarded and emitter.count == 0:
                await emitter._fail("the agent returned without emitting a run", "run_not_started")
        finally:
            if not token.cancelled:
                await queue.put(_END)

    async def _send_events(self, queue: asyncio.Queue[Any], send: Any) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        keepalive = self.keepalive
        while True:
            if keepalive is None:
                frame = await queue.get()
            else:
                try:
                    frame = await asyncio.wait_for(queue.get(), keepalive)
                except TimeoutError:
                    comment = self.encoder.comment("keep-alive")
                    await send({"type": "http.response.body", "body": comment, "more_body": True})
                    continue
            if frame is _END:
                break
            # batch whatever else is already queued into one write
            ended = False
            if not queue.empty():
                frames = [frame]
                size = len(frame)
                while size < 65536 and not queue.empty():
                    nxt = queue.get_nowait()
                    if nxt is _END:
                        ended = True
                        break
                    frames.append(nxt)
                    size += len(nxt)
                frame = b"".join(frames)
            await send({"type": "http.response.body", "body": frame, "more_body": True})
            if ended:
                break
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _thread_of(run_input: Any) -> str | None:
    thread_id = getattr(run_input, "thread_id", None)
    return thread_id if isinstance(thread_id, str) else None


async def _wait_disconnect(receive: Any) -> None:
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return


def _is_disconnect(exc: BaseException) -> bool:
    return isinstance(exc, OSError | ClientDisconnect | asyncio.CancelledError)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _is_json_with_lone_surrogates(body: bytes) -> bool:
    """True when ``body`` is UTF-8 JSON that msgspec refused only because a
    string holds a lone UTF-16 surrogate escape (``"\\udc9b"``): RFC 8259
    allows it, :func:`agui.wire.encode_input` writes it for a str holding a
    lone surrogate, and :func:`agui.wire.decode_input` reads it (stdlib
    fallback). Checked with the stdlib parser (NaN/Infinity still refused)."""
    if b"\\u" not in body:
        return False
    try:
        json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, RecursionError):  # (UnicodeDecodeError is a ValueError)
        return False
    return True


def _error_response(status: int, error: str, message: str, path: str) -> JSONResponse:
    return JSONResponse({"error": error, "message": message, "path": path}, status_code=status)


DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
"""Largest request body an endpoint reads by default (bytes): 16 MiB."""


async def _read_body(request: Request, limit: int) -> bytes | None:
    """The request body, or None once it grows past ``limit`` bytes (the rest is
    not read: a declared Content-Length over the limit is refused up front)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    parts: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
    return b"".join(parts)


async def decode_request(request: Request, *, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> Any:
    """Read and decode a RunAgentInput body; returns the struct or a JSONResponse.

    413 ``body_too_large`` when the body is over ``max_body_bytes`` bytes
    (reading stops there); 400 ``invalid_json`` when the body is empty, not
    JSON, or nested deeper than the decoder's recursion limit (about a thousand
    levels); 422 ``invalid_run_input`` (with the JSON ``path``) when it is JSON
    but not a valid RunAgentInput.
    """
    body = await _read_body(request, max_body_bytes)
    if body is None:
        return _error_response(
            413, "body_too_large",
            f"request body is larger than {max_body_bytes} bytes (max_body_bytes)", "$",
        )
    if not body.strip():
        return _error_response(
            400, "invalid_json", "empty request body: expected a RunAgentInput JSON object", "$"
        )
    try:
        msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        if not _is_json_with_lone_surrogates(body):
            return _error_response(400, "invalid_json", f"request body is not JSON: {exc}", "$")
    except RecursionError:
        return _error_response(400, "invalid_json", "request body is nested too deeply", "$")
    try:
        return decode_input(body)
    except DecodeError as exc:
        return _error_response(
            422, "invalid_run_input", f"invalid RunAgentInput: {exc.reason} at {exc.path}", exc.path
        )


def agent_route(
    agent: Agent,
    path: str = "/agent",
    *,
    guard: bool = True,
    name: str | None = None,
    keepalive: float | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> Route:
    """A starlette ``Route`` (POST ``path``) serving ``agent`` as AG-UI over SSE.

    Args:
        agent: ``async def agent(run_input, emit, cancel) -> None``.
        path: URL path, e.g. ``"/agent"``.
        guard: check every emission with the verifier (recommended; see
            :mod:`agui.server.guard`). ``False`` sends whatever the agent emits.
        name: the route name (``request.url_for``).
        keepalive: seconds of agent silence after which an SSE comment
            (``: keep-alive``) is sent, so proxies and client read timeouts do
            not cut a long-thinking agent; None (default) sends none.
        max_body_bytes: the largest request body read (default 16 MiB); a
            larger one is answered 413 ``body_too_large`` without reading it all.
    """

    async def endpoint(request: Request) -> Response:
        decoded = await decode_request(request, max_body_bytes=max_body_bytes)
        if isinstance(decoded, Response):
            return decoded
        return AgentStreamResponse(
            agent,
            decoded,
            guard=guard,
            encoder=EventEncoder(request.headers.get("accept")),
            keepalive=keepalive,
        )

    return Route(path, endpoint, methods=["POST"], name=name)


def create_app(
    agent: Agent,
    *,
    path: str = "/agent",
    guard: bool = True,
    debug: bool = False,
    keepalive: float | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> Starlette:
    """A Starlette app with one AG-UI endpoint (POST ``path``) serving ``agent``.

    ``guard``, ``keepalive`` and ``max_body_bytes``: see :func:`agent_route`;
    ``debug``: Starlette's.

    Serve it with :class:`agui.server.BackgroundServer` (tests, local tools) or
    any ASGI server (``uvicorn module:app --host 127.0.0.1``).
    """
    return Starlette(
        debug=debug,
        routes=[agent_route(agent, path, guard=guard, keepalive=keepalive,
                            max_body_bytes=max_body_bytes)],
    )
