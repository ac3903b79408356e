"""The SSE response of one agent run (a starlette ``StreamingResponse``).

The agent runs as its own task and puts SSE frames in an
:class:`agui.server._emitter.Outbox` (through its :class:`agui.server.Emitter`;
an agent faster than the client waits once 256 KiB are pending); the
response's body iterator takes everything pending as one write, and
starlette's ``stream_response`` writes it. A third task watches the receive
channel, so a client that goes away is noticed even while the agent is silent.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from starlette.background import BackgroundTask
from starlette.responses import AsyncContentStream, StreamingResponse
from starlette.types import Receive, Scope, Send

from agui.server._cancel import CancelToken
from agui.server._emitter import Emitter, Outbox
from agui.server._encoder import SSE_CONTENT_TYPE, SSE_HEADERS, EventEncoder
from agui.server._guard import Guard
from agui.server._request import is_disconnect
from agui.server._versions import stream_version
from agui.types import RunAgentInput

logger: logging.Logger = logging.getLogger("agui.server")

Agent = Callable[[RunAgentInput, Emitter, CancelToken], Awaitable[None]]
"""``async def agent(run_input: RunAgentInput, emit: Emitter, cancel: CancelToken) -> None``."""


class AgentStreamResponse(StreamingResponse):
    """The SSE response of one agent run (an ASGI app; see :mod:`agui.server._endpoint`).

    ``AgentStreamResponse(agent, run_input, *, guard=True, encoder=None,
    headers=None, keepalive=None)``. The events are sent in the version
    :func:`agui.server._versions.stream_version` picks for ``run_input``.
    ``.token`` is the run's :class:`CancelToken`.

    An agent that raises gets a ``RUN_ERROR`` with ``code="agent_error"`` and a
    generic message naming an error id; the exception itself (its text may hold
    paths, secrets, internals) goes only to the ``agui.server`` log, with the
    same id.
    """

    media_type = SSE_CONTENT_TYPE

    def __init__(
        self,
        agent: Agent,
        run_input: RunAgentInput,
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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = self.token
        outbox = Outbox()
        guard = Guard(thread_of(self.run_input)) if self.guard else None
        emitter = Emitter(
            outbox, guard, token, self.encoder, version=stream_version(self.run_input)
        )
        self.body_iterator: AsyncContentStream = self._frames(outbox)
        agent_task = asyncio.create_task(self._run_agent(emitter, token, outbox))
        sender = asyncio.create_task(self.stream_response(send))
        watcher = asyncio.create_task(_wait_disconnect(receive))
        shutdown = False
        try:
            await asyncio.wait({sender, watcher}, return_when=asyncio.FIRST_COMPLETED)
            if sender.done() and sender.exception() is None:
                return  # normal end: the agent returned and everything was written
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
            results: Sequence[object]
            try:
                results = await asyncio.gather(agent_task, sender, watcher, return_exceptions=True)
            except asyncio.CancelledError:
                if not shutdown:
                    raise
                results = []  # cancelled again while the server's loop is torn down
            for result in results:
                if isinstance(result, Exception) and not is_disconnect(result):
                    logger.error("agent stream failed", exc_info=result)
        if shutdown:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _run_agent(self, emitter: Emitter, token: CancelToken, outbox: Outbox) -> None:
        try:
            await run_agent(self.agent, self.run_input, emitter, token)
        finally:
            outbox.close()

    async def _frames(self, outbox: Outbox) -> AsyncIterator[bytes]:
        """The body: everything pending as one write, until the agent is done;
        keep-alive comments after ``keepalive`` seconds of silence."""
        keepalive = self.keepalive
        while True:
            data = await outbox.take(keepalive)
            if data is None:
                yield self.encoder.comment("keep-alive")
            elif data:
                yield data
            else:
                return


#: What an agent is, as the errors about a wrong one say it.
SHAPE = "an agent is `async def agent(run_input, emit, cancel) -> None` that awaits emit(event)"


def check_agent(agent: object) -> None:
    """Refuse, before any request, what cannot be an agent: not callable, or an (async)
    generator function (an agent awaits ``emit(event)``; it does not yield events).

    Raises:
        TypeError: naming what was given and what an agent is.
    """
    if not callable(agent):
        raise TypeError(f"not an agent: {type(agent).__name__}; {SHAPE}")
    target = inspect.unwrap(agent) if inspect.isfunction(agent) else agent
    if inspect.isasyncgenfunction(target) or inspect.isgeneratorfunction(target):
        raise TypeError(
            f"{getattr(agent, '__name__', 'the agent')} is a generator function; {SHAPE}"
        )


async def run_agent(
    agent: Agent, run_input: RunAgentInput, emitter: Emitter, token: CancelToken
) -> None:
    """Run ``agent`` to its end, reporting its failures in the stream.

    An exception becomes a ``RUN_ERROR`` ``agent_error`` (a generic message with
    an error id; the exception goes to the ``agui.server`` log); a cancel from
    inside the agent ``agent_cancelled``; with the guard on, a return with the
    run open ``run_not_finished`` and a return without any event
    ``run_not_started``.

    Raises:
        asyncio.CancelledError: the token was tripped and the task cancelled.
    """
    try:
        pending = agent(run_input, emitter, token)
        if not inspect.isawaitable(pending):
            raise TypeError(
                f"the agent returned {type(pending).__name__}, not an awaitable: {SHAPE}"
            )
        await pending
    except asyncio.CancelledError:
        if token.cancelled:
            raise  # we cancelled it: the client is gone
        # the agent cancelled itself: a failure like any other
        logger.warning("agent task was cancelled from inside the agent")
        await emitter.fail("the agent was cancelled", "agent_cancelled")
    except Exception as exc:  # the agent failed: report it in-stream, detail in the log
        error_id = secrets.token_hex(4)
        logger.error(
            "agent raised %s (error %s, run %s)",
            type(exc).__name__,
            error_id,
            getattr(run_input, "run_id", "?"),
            exc_info=exc,
        )
        await emitter.fail(
            f"the agent failed (error {error_id}); the server log has the details",
            "agent_error",
        )
    else:
        if emitter.guarded and emitter.run_open:
            await emitter.fail("the agent returned without finishing its run", "run_not_finished")
        elif emitter.guarded and emitter.count == 0:
            await emitter.fail("the agent returned without emitting a run", "run_not_started")


def thread_of(run_input: RunAgentInput) -> str | None:
    """``run_input.thread_id`` when it is a str, else None."""
    thread_id = getattr(run_input, "thread_id", None)
    return thread_id if isinstance(thread_id, str) else None


async def _wait_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message.get("type") == "http.disconnect":
            return
