"""One run of a :class:`~agui.client.session.Session`: a request and its response, as updates.

The response is fed through one :class:`~agui.pipeline.core.Pipeline` one frame at
a time, so a consumer leaving after update N leaves nothing of later frames
applied. With middleware, the pipeline's wire stage (:meth:`Pipeline.decode`)
turns the transport's output into events, the middleware chain transforms
them, and the pipeline takes them back (:meth:`Pipeline.feed_event`).

Cancellation: leaving a run early (``break`` then ``aclose()`` / ``async
with``, or cancelling the task) closes the transport stream (the HTTP
response); the run ends ``Done(cancelled)`` locally (:attr:`Run.done`) unless
it had already ended (its ``Done`` stands), and nothing that arrives later is
applied. A plain ``break`` without closing is finished when the :class:`Run`
is garbage-collected or, at the latest, when the next run of the session
starts. The session stays usable.

Transport failures (:class:`agui.errors.TransportError`) are reported as
``ErrorUpdate(error, fatal=True)`` followed by ``Done(failed)``; they are
never raised from the iterator. Any other exception a transport (or a
middleware) raises is reported the same way, as a ``TransportError`` of
kind ``transport_raised`` whose ``__cause__`` is the exception.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any, Self

from agui.client.middleware import compose
from agui.errors import EncodeError, ToolError, TransportError
from agui.pipeline.core import Pipeline
from agui.updates import Done, ErrorUpdate, Update, WarningUpdate

if TYPE_CHECKING:
    from agui.client.session import Session
    from agui.types import RunAgentInput

__all__ = ["Run"]

logger: logging.Logger = logging.getLogger(__name__)


class _RunState:
    """What a run's generator shares with its :class:`Run`; holds no reference
    to the Run, so a Run dropped after ``break`` is freed at once and its stream
    closed."""

    __slots__ = (
        "cancelled",
        "carry",
        "consumer",
        "ended",
        "errors",
        "final",
        "inputs",
        "pipeline",
        "started",
        "stop_requested",
    )

    def __init__(self) -> None:
        self.pipeline: Pipeline | None = None  # set when the run (round) starts
        self.inputs: list[Any] = []  # every RunAgentInput sent, one per round
        self.carry: dict[str, Any] = {}  # overrides the follow-up rounds keep
        self.cancelled: Done | None = None  # a run closed before it started
        self.errors: list[ErrorUpdate] = []
        self.final = False
        self.ended: asyncio.Event | None = None
        self.started = False  # the generator began (the request is being sent)
        # the task that last awaited inside the generator (set before each await),
        # for aclose() from another task; and whether aclose() cancelled it
        self.consumer: asyncio.Task[Any] | None = None
        self.stop_requested = False


class Run:
    """One run (one request/response): an async iterator of :mod:`agui.updates` values.

    Created by :meth:`Session.send`, :meth:`Session.run` and
    :meth:`Session.resume`; nothing is sent until it is iterated. Use it as
    ``async for u in run``, ``async with run: ...`` (closes on exit) or
    ``await run.collect()``.

    Leaving early: ``async with`` / ``aclose()`` close the response at once
    (also from another task); a bare ``break`` closes it as soon as the Run
    is no longer referenced (CPython frees it right after the loop when it
    was not bound to a name) or when the session's next run starts.

    Client tools (``Session(client_tools=...)``): when a run ends
    ``Done(success)`` with pending calls to registered tools, the iteration
    goes on: each call is run, its result appended (a ``ToolResult`` update;
    a failed call is an ``ErrorUpdate(ToolError, fatal=False)`` first) and a
    follow-up run is sent, whose updates and ``Done`` follow, up to
    ``max_tool_rounds`` follow-ups (then
    ``ErrorUpdate(ToolError(kind="max_tool_rounds"))`` ends it). Follow-ups
    keep this run's overrides except ``run_id``, ``resume``, ``messages``,
    ``state`` and ``parent_run_id``. Calls to unregistered tools end the
    iteration, left to the caller.

    Attributes:
        input: the first ``RunAgentInput`` sent (after the session's defaults
            and overrides; middleware may still change what goes on the wire);
            :attr:`inputs` has the follow-ups too.
    """

    def __init__(self, session: Session, run_input: RunAgentInput) -> None:
        self._session = session
        self.input = run_input
        self._state = _RunState()
        self._state.inputs.append(run_input)
        self._gen: AsyncGenerator[Update, None] | None = None
        self._closed = False

    @property
    def done(self) -> Done | None:
        """The last :class:`~agui.updates.Done` of this run's response: the final
        one once the run is over (``Done(cancelled)`` when it was left before it
        ended), None while running or before starting."""
        pipeline = self._state.pipeline
        return pipeline.done if pipeline is not None else self._state.cancelled

    @property
    def inputs(self) -> list[RunAgentInput]:
        """Every ``RunAgentInput`` sent so far: :attr:`input`, then one per
        client-tool round."""
        return list(self._state.inputs)

    @property
    def errors(self) -> list[ErrorUpdate]:
        """Every ``ErrorUpdate`` seen so far."""
        return self._state.errors

    @property
    def started(self) -> bool:
        """True once iteration began (the request was sent or is being sent)."""
        return self._state.started

    @property
    def finished(self) -> bool:
        """True once the response stream is over (completed, failed or cancelled)."""
        return self._state.final

    def __aiter__(self) -> AsyncIterator[Update]:
        # the run's one update generator itself: ``async for`` pays no wrapper
        # per update (every loop over the run continues the same stream)
        return self._updates()

    async def __anext__(self) -> Update:
        return await self._updates().__anext__()

    def _updates(self) -> AsyncGenerator[Update, None]:
        gen = self._gen
        if gen is None:
            if self._closed:
                gen = _nothing()
            else:
                self._state.ended = asyncio.Event()
                gen = _execute(self._session, self.input, self._state, weakref.ref(self))
            self._gen = gen
        return gen

    async def aclose(self) -> None:
        """Stop the run: close the transport stream; ``done`` becomes
        ``Done(cancelled)`` unless the run had already ended. Idempotent.

        May be called from another task than the one iterating (e.g. a stop
        button): the pending read is interrupted, the iterating ``async for``
        simply ends, and this call returns once the stream is closed.
        """
        self._closed = True
        state = self._state
        gen = self._gen
        if not state.started:  # never started: nothing was sent
            if not state.final:
                state.cancelled = Done("cancelled", reason="cancelled by client")
            state.final = True
            if gen is not None:
                await gen.aclose()
            return
        assert gen is not None
        consumer = state.consumer
        if gen.ag_running and consumer is not None and consumer is not asyncio.current_task():
            # another task is awaiting inside the generator (a read, a subscriber)
            if not state.stop_requested:
                state.stop_requested = True
                consumer.cancel()
            if state.ended is not None:
                await state.ended.wait()
            return
        await gen.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def collect(self) -> list[Update]:
        """Iterate to the end; return every update (Done last)."""
        return [u async for u in self]

    async def wait(self) -> Done | None:
        """Iterate to the end, discarding updates; return the final ``Done``."""
        async for _ in self:
            pass
        return self.done

    def __repr__(self) -> str:
        return f"Run(run_id={self.input.run_id!r}, done={self.done!r})"


async def _nothing() -> AsyncGenerator[Update, None]:
    """The updates of a run closed before it started: none."""
    return
    yield  # (an async generator)


async def _execute(
    session: Session, run_input: Any, state: _RunState, run_ref: weakref.ref[Run]
) -> AsyncGenerator[Update, None]:
    """The run's update stream (see the module doc), across client-tool rounds.
    Each transport read is split into frames and each frame is fed to the
    pipeline only once the updates before it were taken, so leaving after
    update N leaves later frames unapplied. Holds its Run only weakly, so a
    Run dropped mid-stream can be collected (and its stream closed)."""
    state.started = True
    errors = state.errors
    subscribers = session._subscribers  # the live list: (un)subscribing mid-run works
    notify = session._notify
    tools = session.client_tools
    current_task = asyncio.current_task
    debug = logger.isEnabledFor(logging.DEBUG)  # once per iteration, not per update
    rounds = 0
    try:
        while True:
            state.consumer = current_task()
            pipeline = await session._begin(run_input, state, run_ref)
            if debug:
                logger.debug(
                    "sending run %r on thread %r: %d message(s), %d tool(s)%s",
                    run_input.run_id,
                    run_input.thread_id,
                    len(run_input.messages),
                    len(run_input.tools or ()),
                    f" (client tool round {rounds})" if rounds else "",
                )
            split = pipeline._split_item
            frame = pipeline._frame
            stream: Any = None
            calls: list[Any] | None = None
            try:
                try:
                    stream = _open(session, run_input, pipeline)
                    read = stream.__aiter__().__anext__
                    while True:
                        state.consumer = current_task()
                        try:
                            item = await read()
                        except StopAsyncIteration:
                            tail = pipeline.close()
                            for update in tail:
                                if update.__class__ is ErrorUpdate:
                                    errors.append(update)  # type: ignore[arg-type]
                                    if debug:
                                        _log_update(update)
                                if subscribers:
                                    state.consumer = current_task()
                                    await notify(update)
                                yield update
                            break
                        head, frames = split(item)
                        if head:
                            if debug:
                                _log_all(head)
                            for update in head:
                                if update.__class__ is ErrorUpdate:
                                    errors.append(update)  # type: ignore[arg-type]
                                if subscribers:
                                    state.consumer = current_task()
                                    await notify(update)
                                yield update
                        for data in frames:  # the hot loop
                            updates = frame(data)
                            if debug:
                                _log_all(updates)
                            for update in updates:
                                if update.__class__ is ErrorUpdate:
                                    errors.append(update)  # type: ignore[arg-type]
                                if subscribers:
                                    state.consumer = current_task()
                                    await notify(update)
                                yield update
                        if pipeline.finished:
                            break
                except Exception as exc:  # noqa: BLE001 - nothing a transport raises escapes
                    # EncodeError: the request could not be written (a NaN in the
                    # state, say): nothing was sent, the run fails like a transport.
                    # Anything else a (custom) transport or middleware raised is a
                    # TransportError of kind transport_raised, its cause the exception.
                    if not isinstance(exc, TransportError | EncodeError):
                        exc = _raised(exc)
                    for update in pipeline.fail_transport(exc):
                        if type(update) is ErrorUpdate:
                            errors.append(update)
                            if debug:
                                _log_update(update)
                        state.consumer = current_task()
                        await notify(update)
                        yield update
            except BaseException:
                state.final = True
                raise
            else:
                if tools is not None:
                    calls = _calls_to_run(session, pipeline.done)
                if not calls:
                    state.final = True
            finally:
                try:
                    aclose = getattr(stream, "aclose", None)
                    if aclose is not None:
                        state.consumer = current_task()
                        await aclose()
                finally:
                    pipeline.cancel("cancelled by client")  # no-op when the stream ended
            if not calls or tools is None:
                break
            if rounds >= session.max_tool_rounds:
                ids = ", ".join(c.id for c in calls)
                error = ToolError(
                    f"{len(calls)} client tool call(s) left unanswered after {rounds} round(s)"
                    f" (max_tool_rounds={session.max_tool_rounds}): {ids}",
                    kind="max_tool_rounds",
                    tool_name=calls[0].function.name,
                    tool_call_id=calls[0].id,
                )
                update = ErrorUpdate(error, fatal=False)
                errors.append(update)
                if debug:
                    _log_update(update)
                state.consumer = current_task()
                await notify(update)
                yield update
                break
            rounds += 1
            for call in calls:
                state.consumer = current_task()
                result = await tools.call(call.function.name, call.function.arguments, call.id)
                if debug:
                    logger.debug(
                        "ran client tool %r for call %r: %s",
                        call.function.name,
                        call.id,
                        "ok" if result.error is None else result.error.kind,
                    )
                if result.error is not None:
                    update = ErrorUpdate(result.error, fatal=False)
                    errors.append(update)
                    if debug:
                        _log_update(update)
                    state.consumer = current_task()
                    await notify(update)
                    yield update
                for update in session._apply_tool_result(call.id, result.content, None)[1]:
                    state.consumer = current_task()
                    await notify(update)
                    yield update
            if session.conversation.unanswered_tool_call_ids():
                break  # calls to tools nobody registered: left to the caller
            run_input = session.build_input(**state.carry)
            state.inputs.append(run_input)
    except asyncio.CancelledError:
        # aclose() from another task interrupts the pending await by cancelling
        # the iterating task once; absorb exactly that request: the loop ends
        task = current_task()
        if state.stop_requested and task is not None and task.uncancel() == 0:
            return
        raise
    finally:
        state.final = True
        session._end(state)
        if state.ended is not None:
            state.ended.set()


def _calls_to_run(session: Session, done: Done | None) -> list[Any] | None:
    """The pending, unanswered ``ToolCall`` structs of a successful run that
    name a registered client tool (None when there are none)."""
    tools = session.client_tools
    if tools is None or done is None or done.outcome != "success":
        return None
    if not done.pending_tool_call_ids:
        return None
    conv = session.conversation
    unanswered = set(conv.unanswered_tool_call_ids())
    calls = []
    for cid in done.pending_tool_call_ids:
        call = conv.tool_call(cid) if cid in unanswered else None
        if call is not None and call.function.name in tools:
            calls.append(call)
    return calls or None


def _log_all(updates: list[Update]) -> None:
    """Log each warning and error update (debug runs only)."""
    for update in updates:
        if type(update) is WarningUpdate or type(update) is ErrorUpdate:
            _log_update(update)


def _log_update(update: Any) -> None:
    if type(update) is WarningUpdate:
        logger.debug(
            "warning %s: %r%s",
            update.code,
            update.message,
            f" at {update.path!r}" if update.path else "",
        )
    else:
        error = update.error
        logger.debug(
            "%s error %s: %r",
            "fatal" if update.fatal else "non-fatal",
            type(error).__name__,
            str(error),
        )


def _raised(exc: Exception) -> TransportError:
    """A TransportError (``transport_raised``) for what a transport raised."""
    error = TransportError(
        f"the transport raised {type(exc).__name__}: {exc}", kind="transport_raised"
    )
    error.__cause__ = exc
    return error


def _open(session: Session, run_input: Any, pipeline: Pipeline) -> AsyncIterator[Any]:
    """The transport's response; with middleware, the chain over the
    pipeline's wire stage (event structs in, event structs out)."""
    transport = session.transport
    if not session.middleware:
        return transport.stream(run_input)

    async def events(inp: Any) -> AsyncIterator[Any]:
        stream = transport.stream(inp)
        try:
            async for item in stream:
                for event in pipeline.decode(item):
                    yield event
                if pipeline.finished:  # an oversized frame: cannot resynchronise
                    return
            for event in pipeline.decode_end():
                yield event
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()

    return compose(session.middleware, events)(run_input)
