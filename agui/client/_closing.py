"""Stopping and closing a run: a stop from anywhere, the response closed, the run's end.

Leaving a run early (``break`` then ``aclose()`` / ``async with``, or cancelling
the task) closes the transport stream (the HTTP response); the run ends
``Done(cancelled)`` locally unless it had already ended (its ``Done`` stands),
and nothing that arrives later is applied. A stop works from anywhere
(:func:`stop_here`, then :func:`interrupt` from another task or a loop
callback): from inside the run (a subscriber, a middleware, an agent subscriber
callback, a client tool) it cannot wait, and the run stops as the callback
returns, before the next frame is delivered. A deliberate stop of a resumable
run still open tells the server (:func:`cancel_on_server`). However the run
ended, :func:`finish` closes its response, ends its pipeline and frees the
session's slot; a response that ends right after a run's ``Done`` is closed
before that ``Done`` is handed out (:func:`look_ahead`), so a consumer leaving at
the ``Done`` leaves nothing open; :func:`close_at_shutdown` closes a run left open when the event
loop shuts down, innermost generator first.

The functions taking ``self`` are methods of :class:`agui.client._run.RunCore`,
bound in its class body.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from agui.client._stream import EOF, read_one
from agui.transports._reconnect import send_cancel

if TYPE_CHECKING:
    from agui.client._run import RunCore

__all__ = [
    "CANCELLED",
    "CLOSE_GRACE_SECONDS",
    "LOOK_AHEAD_SECONDS",
    "absorbed",
    "cancel_on_server",
    "close_at_shutdown",
    "close_fully",
    "close_stream",
    "finish",
    "interrupt",
    "look_ahead",
    "note_abort",
    "retrieve",
    "running",
    "stop_here",
]

CANCELLED = "cancelled by client"
"""The reason of a run's ``Done(cancelled)`` when the client stopped it."""


CLOSE_GRACE_SECONDS = 2.0
"""How long closing a response may go on after the closing task was cancelled."""


LOOK_AHEAD_SECONDS = 0.25
"""How long a run reads on after a transport item that ended a run of the
response (the response usually ends right there), before it hands out that
run's ``Done`` anyway."""


def retrieve(task: asyncio.Task[Any]) -> None:
    """Mark a read-ahead's outcome as seen (the run reports it, or was left)."""
    if not task.cancelled():
        task.exception()


def absorbed(core: RunCore) -> bool:
    """A ``CancelledError`` in the run's generator: True when it is the one
    request a stop from another task made (it interrupts the pending await by
    cancelling the iterating task once; the loop then ends), False to re-raise."""
    task = asyncio.current_task()
    return core.interrupted and task is not None and task.uncancel() == 0


async def close_at_shutdown(core: RunCore, ended: asyncio.Event) -> None:
    """Waits for the run's end. Cancelled first (``asyncio.run`` cancels every
    task before it closes the async generators it tracks, all at once): closes
    the run's update generator, so the response is closed in order, innermost
    generator first, before the loop closes them concurrently."""
    try:
        await ended.wait()
    except asyncio.CancelledError:
        gen = core.gen() if core.gen is not None else None
        if gen is not None and not core.final and not running(gen):
            await gen.aclose()
        raise


async def close_fully(aclose: Callable[[], Awaitable[object]]) -> None:
    """Await ``aclose()`` to its end even when the awaiting task is cancelled
    meanwhile (then re-raise, after at most :data:`CLOSE_GRACE_SECONDS`): a
    response left half-closed (``asyncio.run`` cancels the task that closes a
    run a user left with ``break``) prints finalizer noise at exit."""
    closing = asyncio.ensure_future(aclose())
    try:
        await asyncio.shield(closing)
    except asyncio.CancelledError:
        await asyncio.wait((closing,), timeout=CLOSE_GRACE_SECONDS)
        if closing.done() and not closing.cancelled():
            closing.exception()  # (seen: the cancellation is what the caller gets)
        raise


def running(gen: AsyncGenerator[object, None]) -> bool:
    """True while ``gen`` executes (an await inside it is pending)."""
    return bool(getattr(gen, "ag_running", False))


def stop_here(self: RunCore) -> None:
    """Stop the run now (on the loop's thread, between two frames): nothing
    more is applied; the run's ``Done`` becomes ``cancelled`` unless it ended."""
    self.stopping = True
    if self.reading and self.consumer is asyncio.current_task():
        self.keep_read = True  # from a callback inside the read: the read's event applies
        return
    pipeline = self.pipeline
    if pipeline is not None:
        self.note_abort()
        pipeline.cancel(CANCELLED)


def note_abort(self: RunCore) -> None:
    """A deliberate stop with a resumable run still open is an abort to tell
    the server about (:meth:`cancel_on_server`)."""
    pipeline = self.pipeline
    if pipeline is not None and self.policy is not None and self.cursor.last is not None:
        self.abort = self.abort or pipeline.lifecycle.open


def interrupt(self: RunCore, gen: AsyncGenerator[object, None] | None) -> None:
    """After :meth:`stop_here`, from outside the run (another task, a loop
    callback): a consumer awaiting inside the run is cancelled once, so its
    ``async for`` ends; a run waiting at an update has its stream closed."""
    if self.final or self.closing or gen is None:
        return  # (a run already closing its stream is not interrupted)
    consumer = self.consumer
    if running(gen):
        if consumer is not None and consumer is not asyncio.current_task():
            if not self.interrupted:
                self.interrupted = True
                consumer.cancel()
    elif self.stream is not None and self.loop is not None:
        task = self.loop.create_task(self.close_stream())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


async def close_stream(self: RunCore) -> None:
    """Close the current round's response (idempotent); a read ahead still
    pending is cancelled first, a chain read left suspended ended."""
    if self.detached is not None:
        await self.let_go()
    ahead = self.ahead
    if ahead is not None and not ahead.done():
        self.ahead = None
        ahead.cancel()
        await asyncio.wait((ahead,))
    stream, self.stream = self.stream, None
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        self.consumer = asyncio.current_task()
        await close_fully(aclose)


async def cancel_on_server(self: RunCore) -> None:
    """A deliberate abort of a resumable run still open: the contract's cancel
    request (``DELETE <url>/runs/{threadId}/{runId}``) before the stream closes,
    so the server stops the agent at once instead of waiting for its detach
    timeout."""
    if not self.abort:
        return
    self.abort = False
    transport = self.session.transport
    url = getattr(transport, "url", None)
    headers: object = getattr(transport, "headers", None)
    if isinstance(url, str) and isinstance(headers, dict):
        sent: dict[str, str] = dict(headers)  # pyright: ignore[reportUnknownArgumentType]
        run_input = self.inputs[-1]
        self.consumer = asyncio.current_task()
        await send_cancel(url, sent, run_input.thread_id, run_input.run_id, cursor=self.cursor.last)


async def finish(self: RunCore) -> None:
    """The run's stream is over, however it ended: close the response, end
    the pipeline (``Done(cancelled)`` unless the run ended), free the slot."""
    self.closing = True
    if self.idle is not None:
        self.idle.close()
    if self.stopping:  # (Run.cancel: the iterating task may see the stop first)
        self.note_abort()
    try:
        await self.cancel_on_server()
        await self.close_stream()
    finally:
        if self.pipeline is not None:
            self.pipeline.cancel(CANCELLED)  # no-op when the stream ended
        self.end_span()
        self.final = True
        self.slot.release(self)
        if self.ended is not None:
            self.ended.set()


async def look_ahead(self: RunCore) -> None:
    """A run of the response ended with the transport item just fed: read on
    for up to :data:`LOOK_AHEAD_SECONDS`, so that a response which ends there
    is closed before its ``Done`` is handed out (a consumer that leaves at the
    ``Done`` without closing the run leaves nothing open). What was read is
    the next step's."""
    pipeline = self.pipeline
    read = self.read
    if (
        read is None
        or self.stream is None
        or self.ahead is not None
        or self.loop is None
        or pipeline is None
        or pipeline.finished
        or pipeline.lifecycle.open
    ):
        return
    task = self.loop.create_task(read_one(read))
    task.add_done_callback(retrieve)
    self.ahead = task
    self.consumer = asyncio.current_task()
    await asyncio.wait((task,), timeout=LOOK_AHEAD_SECONDS)
    if task.done() and not task.cancelled() and task.exception() is None:
        if task.result() is EOF:
            await self.close_stream()
