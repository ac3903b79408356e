"""Middleware: wrap a run to inspect/modify its input and filter/transform its events.

A middleware is any callable ``mw(run_input, next) -> AsyncIterator[Event]``
(typically an async generator function) where ``next(run_input)`` is the
rest of the chain (ending at the transport) and yields decoded event
structs as they came (``*_CHUNK`` events unexpanded, as the reference's
``next.run(input)``). The session composes ``middleware=[a, b]`` as
``a(b(transport))``: ``a`` sees the input first and the events last. Events a
middleware yields go through the normalizer, verifier and conversation like
any others.

:func:`run_next` is the reference's ``runNext``: the rest of the chain with
``*_CHUNK`` events expanded into START / CONTENT (ARGS) / END, so a middleware
that transforms ``TEXT_MESSAGE_CONTENT`` works against a producer that sends
only chunks. :func:`run_next_with_state` (``runNextWithState``) also gives the
messages and state after each event. :class:`Middleware` hands its
``on_event`` the events of :func:`run_next`.

A cut response of a resumable server is resumed below the chain: the chain
is not called again, every middleware sees one uninterrupted run (no event
lost or repeated), and a middleware with an ``on_reconnecting(update)`` method
(a :class:`~agui.updates.Reconnecting`) is told before each try, one with an
``on_reconnected(update)`` method (a :class:`~agui.updates.Reconnected`) before
the resumed response's first event; outermost first.

:class:`Middleware` is a convenience base class with per-input and per-event
hooks; :class:`FilterToolCallsMiddleware` drops tool calls by tool name, as
the reference client's middleware of the same name does.

The run's side of the chain is here too: :func:`open_response` puts the chain
over :func:`chain_source` (the transport's response as event structs, the
pipeline's wire stage); when that source loses its response it hands the loss
to the run's one resume driver (:func:`agui.client._resume.hand_off`) and the
chain read it was in is left suspended (:func:`drive`) while the run hands out
the resume's updates; :func:`read_chain` continues it. These functions are
methods of :class:`agui.client._run.RunCore` (their ``self``), bound in its
class body.
"""

from __future__ import annotations

import asyncio
import inspect
import types
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Sequence,
)
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, cast

import msgspec
from msgspec import UNSET

from agui import types as T
from agui.client._resume import is_terminal
from agui.client._stream import EOF, NOTHING, aclose_stream, read_one
from agui.pipeline._apply import Conversation
from agui.pipeline._normalize import Normalizer
from agui.types import EVENT_TYPES, Message, RunAgentInput

if TYPE_CHECKING:
    from agui.client._run import RunCore
    from agui.pipeline._pipeline import Pipeline
    from agui.types import Event
    from agui.updates import Reconnected, Reconnecting

Next = Callable[[RunAgentInput], AsyncIterator[Any]]
"""``next(run_input) -> AsyncIterator[Event]``: the rest of the chain."""

MiddlewareFn = Callable[[RunAgentInput, Next], AsyncIterator[Any]]
"""``mw(run_input, next) -> AsyncIterator[Event]``."""


_EVENT_CLASSES = frozenset(EVENT_TYPES.values())


async def run_next(run_input: RunAgentInput, next: Next) -> AsyncGenerator[Any, None]:
    """``next(run_input)`` with ``*_CHUNK`` events expanded (the reference's
    ``runNext``): a chunk becomes the START / CONTENT (ARGS) / END events it
    stands for, every other event passes unchanged. A chunk the expansion
    rejects (a protocol fault) is passed on as it came, so the pipeline reports it."""
    norm = Normalizer()
    stream = next(run_input)
    try:
        position = 0
        async for raw in stream:
            if type(cast(object, raw)) in _EVENT_CLASSES:
                events, violations = norm.feed(raw, position)
                if violations:
                    events = [raw]
            else:  # not an event struct: the pipeline reports it
                events = [raw]
            position += 1
            for event in events:
                yield event
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


class EventWithState(msgspec.Struct, frozen=True):
    """One event of :func:`run_next_with_state` with the messages and state after it."""

    event: Any
    messages: list[Message]
    state: Any


async def run_next_with_state(
    run_input: RunAgentInput, next: Next
) -> AsyncIterator[EventWithState]:
    """:func:`run_next`, each event with the messages and state after it is
    applied (the reference's ``runNextWithState``), starting from the input's
    messages and state. The tracking is the middleware's own: what it yields
    still goes through the session's pipeline."""
    conversation = Conversation(messages=run_input.messages, state=run_input.state)
    stream = run_next(run_input, next)
    try:
        async for event in stream:
            if type(cast(object, event)) in _EVENT_CLASSES:
                conversation.apply(event)
            yield EventWithState(event, conversation.messages, conversation.state)
    finally:
        await stream.aclose()


class Middleware:
    """Base class: override :meth:`on_input`, :meth:`on_event` and/or :meth:`on_end`.

            ``on_input(run_input) -> RunAgentInput`` (default: unchanged);
        ``on_event`` sees the rest of the chain through :func:`run_next` (chunks expanded);
        ``on_reconnecting(update)`` / ``on_reconnected(update)``: a cut response is being / was
    resumed under the chain (default: nothing);
            ``on_event(event) -> Event | list[Event] | tuple[Event, ...] | None`` (None drops it;
            default: unchanged); ``on_end() -> Iterable[Event]`` events to append when
            the stream ends normally (default: none). Each hook may be a plain
            ``def`` or an ``async def`` (its result is awaited). Override
            :meth:`__call__` for full control (e.g. retries).
    """

    def on_input(self, run_input: RunAgentInput) -> Any:
        """Return the (possibly modified) input passed down the chain."""
        return run_input

    def on_event(self, event: Event) -> Any:
        """Return the event, a replacement, several events (a list or tuple), or None."""
        return event

    def on_end(self) -> Iterable[Any]:
        """Events to yield after the last one (normal end of stream only)."""
        return ()

    def on_reconnecting(self, update: Reconnecting) -> Any:
        """A cut response of the run is about to be resumed below the chain (one
        call per try, before it is made; default: nothing; may be ``async``)."""
        return None

    def on_reconnected(self, update: Reconnected) -> Any:
        """The run's cut response was resumed (a resumable server, ``Last-Event-ID``)
        below the chain, before the resumed response's first event: the chain
        goes on as one uninterrupted run (default: nothing; may be ``async``)."""
        return None

    async def __call__(self, run_input: RunAgentInput, next: Next) -> AsyncIterator[Any]:
        run_input = self.on_input(run_input)
        if inspect.isawaitable(run_input):  # an ``async def on_input``
            run_input = await run_input
        stream = run_next(run_input, next)
        try:
            async for event in stream:
                out = self.on_event(event)
                if inspect.isawaitable(out):  # an ``async def on_event``
                    out = await out
                if out is None:
                    continue
                if isinstance(out, list | tuple):
                    for item in cast("Sequence[Any]", out):  # events, as on_event returned them
                        yield item
                else:
                    yield out
            tail = self.on_end()
            if inspect.isawaitable(tail):  # an ``async def on_end``
                tail = await tail
            for item in tail:
                yield item
        finally:
            await stream.aclose()


class FilterToolCallsMiddleware(Middleware):
    """Drop tool calls by name before the client sees them.

    Give exactly one of ``allowed`` (only these tool names pass) or
    ``disallowed`` (these are dropped). A blocked call's TOOL_CALL_START,
    ARGS, END and RESULT are all removed (tracked by ``toolCallId``);
    ``TOOL_CALL_CHUNK`` events are judged by the ``toolCallName`` of the chunk
    that opens the call (a chunk without an id continues the last chunked
    call). Other events pass unchanged. The outgoing input is not modified.

    Raises:
        ValueError: both or neither of ``allowed`` / ``disallowed`` given.

    Attributes:
        blocked_ids: tool call ids dropped so far (kept across runs).
    """

    def __init__(
        self, *, allowed: Iterable[str] | None = None, disallowed: Iterable[str] | None = None
    ) -> None:
        if (allowed is None) == (disallowed is None):
            raise ValueError("give exactly one of allowed= or disallowed=")
        self.allowed: frozenset[str] | None = None if allowed is None else frozenset(allowed)
        self.disallowed: frozenset[str] | None = (
            None if disallowed is None else frozenset(disallowed)
        )
        self.blocked_ids: set[str] = set()
        self._chunk_blocked = False

    def blocks(self, tool_name: str) -> bool:
        """True when calls to ``tool_name`` are dropped."""
        if self.allowed is not None:
            return tool_name not in self.allowed
        return tool_name in (self.disallowed or ())

    def on_event(self, event: Event) -> Event | None:
        """The event, or None when it belongs to a blocked tool call."""
        judge = TOOL_CALL_FILTERS.get(type(cast(object, event)))
        return event if judge is None else judge(self, event)

    def _on_start(self, event: T.ToolCallStartEvent) -> T.ToolCallStartEvent | None:
        if self.blocks(event.tool_call_name):
            self.blocked_ids.add(event.tool_call_id)
            return None
        return event

    def _on_call_event(
        self, event: T.ToolCallArgsEvent | T.ToolCallEndEvent | T.ToolCallResultEvent
    ) -> Event | None:
        return None if event.tool_call_id in self.blocked_ids else event

    def _on_chunk(self, event: T.ToolCallChunkEvent) -> T.ToolCallChunkEvent | None:
        call_id = event.tool_call_id
        name = event.tool_call_name
        if isinstance(name, str):  # neither UNSET nor a hand-built None
            self._chunk_blocked = self.blocks(name)
            if self._chunk_blocked and call_id is not UNSET:
                self.blocked_ids.add(call_id)
        elif isinstance(call_id, str):
            self._chunk_blocked = call_id in self.blocked_ids
        return None if self._chunk_blocked else event

    #: Event class -> how the filter judges it (:data:`TOOL_CALL_FILTERS`)
    FILTERS: ClassVar[dict[type, Callable[[FilterToolCallsMiddleware, Any], Any]]] = {
        T.ToolCallStartEvent: _on_start,
        T.ToolCallArgsEvent: _on_call_event,
        T.ToolCallEndEvent: _on_call_event,
        T.ToolCallResultEvent: _on_call_event,
        T.ToolCallChunkEvent: _on_chunk,
    }


TOOL_CALL_FILTERS = FilterToolCallsMiddleware.FILTERS
"""Event class -> how :class:`FilterToolCallsMiddleware` judges it: the event, or None
(dropped); any other class passes unchanged."""


def compose(middleware: Iterable[MiddlewareFn], last: Next) -> Next:
    """Chain ``middleware`` (outermost first) in front of ``last``."""
    chain = last
    for mw in reversed(list(middleware)):
        chain = _bind(mw, chain)
    return chain


def _bind(mw: MiddlewareFn, nxt: Next) -> Next:
    def call(run_input: RunAgentInput) -> AsyncIterator[Any]:
        return mw(run_input, nxt)

    return call


DETACHED: Any = object()
"""What :func:`drive` returns for a chain read left suspended by a resume below the chain."""


@types.coroutine
def drive(core: RunCore, step: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
    """Await one read of the middleware chain (``step``: its ``__await__``) in
    the awaiting task, as ``await`` would, but let go of it when the chain's
    source awaits :attr:`RunCore.handoff` (a resume below the chain): the read
    stays suspended in :attr:`RunCore.detached`, this returns ``DETACHED``, and
    the run's driver hands out the resume's updates before the next read
    continues it. Costs one generator step per suspension of the read."""
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            yielded = step.send(value) if error is None else step.throw(error)
        except StopIteration as stop:
            return stop.value
        handoff = core.handoff
        if handoff is not None and yielded is handoff:
            core.detached = step
            return DETACHED
        try:
            value, error = (yield yielded), None
        except GeneratorExit:
            step.close()
            raise
        except BaseException as exc:  # noqa: BLE001 - (a cancellation) thrown into the read
            value, error = None, exc


def open_response(
    self: RunCore, run_input: RunAgentInput, pipeline: Pipeline
) -> AsyncIterator[Any]:
    """The round's response: the transport's; with middleware, the chain over
    :meth:`chain_source` (event structs in, event structs out)."""
    if not self.session.middleware:
        return self.transport_stream(run_input, self.cursor.last)
    return compose(self.session.middleware, partial(self.chain_source, pipeline))(run_input)


async def chain_source(self: RunCore, pipeline: Pipeline, run_input: Any) -> AsyncIterator[Any]:
    """The end of the middleware chain: the transport's response as event
    structs (the pipeline's wire stage). A cut response of a resumable run
    is resumed below the chain, so every middleware sees one uninterrupted
    run: the source hands the loss to the run's driver (:meth:`hand_off`)
    and reads on from the response it gets back; frames at or before the
    cursor are dropped."""
    cursor = self.cursor
    stream = self.transport_stream(run_input, cursor.last)
    read = stream.__aiter__().__anext__
    item: Any = NOTHING
    terminal = False
    try:
        while True:
            error: Exception | None = None
            try:
                while (item := await read_one(read) if item is NOTHING else item) is not EOF:
                    current, item = item, NOTHING
                    if not isinstance(current, bytes | bytearray | memoryview | str):
                        terminal = is_terminal(current)
                        if pipeline.finished:
                            return
                        yield current  # an event struct (an agent's own run())
                        continue
                    frames = pipeline.split(cast("bytes | str", current))
                    ids = list(pipeline.frame_ids)
                    for i, data in enumerate(frames):
                        frame_id = ids[i] if ids else None
                        if cursor.repeat(frame_id):
                            continue
                        events = list(pipeline.decode(data))
                        cursor.advance(frame_id)
                        if pipeline.finished:  # an oversized frame: cannot resynchronise
                            return
                        for event in events:
                            terminal = is_terminal(event)
                            yield event
                    if pipeline.finished:
                        return
            except Exception as exc:  # noqa: BLE001 - judged: resumed or raised
                error = exc
            if not self.resumes(pipeline, error, not terminal):
                if error is not None:
                    raise error
                break
            await aclose_stream(stream)
            reopened = await self.hand_off(error)
            if reopened is None:  # out of tries after the response ended
                return
            stream, read, item = reopened
        for event in pipeline.decode_end():
            yield event
    finally:
        await aclose_stream(stream)


def read_chain(self: RunCore) -> Awaitable[Any]:
    """One read of the middleware chain, driven in the run's task by
    :func:`drive`: the read a resume below the chain left suspended (its
    source has a new response, or the verdict, by now), else a new one."""
    step, self.detached = self.detached, None
    if step is None:
        assert self.chain_read is not None
        step = self.chain_read().__await__()
    return drive(self, step)


async def let_go(self: RunCore) -> None:
    """The run closes while a chain read is suspended (stopped during a
    resume below the chain): the source's wait is cancelled and the read
    driven to its end, so the source closes and each middleware sees the
    cancellation, as at any close."""
    step, self.detached = self.detached, None
    handoff = self.handoff
    if step is None:
        return
    if handoff is not None:
        handoff.cancel()
    try:
        await drive(self, step)
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise  # (the closing task itself is being cancelled)
    except (Exception, StopAsyncIteration):  # noqa: BLE001 - the chain ends, however
        pass


__all__ = [
    "EventWithState",
    "FilterToolCallsMiddleware",
    "Middleware",
    "MiddlewareFn",
    "Next",
    "compose",
    "run_next",
    "run_next_with_state",
]
