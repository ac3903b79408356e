"""One run of a :class:`~agui.client._session.Session`: a request and its response, as updates.

:class:`Run` is the one owner of a run's life: nothing is sent until it is
iterated; each step of its :class:`RunCore` starts a round (takes the session's
slot, makes the pipeline, sends), reads one transport item, or hands out what a
job made; the run ends with one ``Done``. The response is fed through one
:class:`~agui.pipeline._pipeline.Pipeline` one frame at a time, so a consumer
leaving after update N leaves nothing of later frames applied.

The run's jobs live in the modules named for them, their functions bound as
methods of :class:`RunCore`: resuming a cut response and attaching
(:mod:`agui.client._resume`, one driver whether or not middleware is present),
the middleware chain over the response (:mod:`agui.client._middleware`),
client-tool rounds (:mod:`agui.client._tools`) and stopping and closing
(:mod:`agui.client._closing`: :meth:`Run.aclose` and :meth:`Run.cancel` work
from anywhere; a plain ``break`` without closing is finished when the
:class:`Run` is garbage-collected or, at the latest, when the next run of the
session starts).

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
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Iterator,
)
from functools import partial
from itertools import chain
from operator import length_hint
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, Self, overload

from agui.client import _closing as ending
from agui.client import _middleware as chained
from agui.client import _resume as resuming
from agui.client import _telemetry as telemetry
from agui.client import _tools as tool_rounds
from agui.client._closing import CANCELLED, absorbed, close_at_shutdown, running
from agui.client._idle import IdleClock
from agui.client._middleware import DETACHED, MiddlewareFn
from agui.client._resume import Handed
from agui.client._stream import EOF, NOTHING, as_transport_error, read_one
from agui.client._telemetry import LOGGERS
from agui.pipeline._lifecycle import RunLifecycle
from agui.pipeline._pipeline import Pipeline, VerifyMode
from agui.transports._reconnect import Cursor, ReconnectPolicy, is_start, start_cursor
from agui.updates import Done, ErrorUpdate, Update

if TYPE_CHECKING:
    from agui.client._session import RunSlot, Subscribers
    from agui.client._tools import ClientTools
    from agui.pipeline._apply import Conversation
    from agui.transports import Transport
    from agui.types import RunAgentInput, ToolCall

__all__ = ["Run", "RunCore", "RunHost"]

logger: logging.Logger = logging.getLogger("agui.client.run")


class RunHost(Protocol):
    """What a run reads of the session that started it (a
    :class:`~agui.client._session.Session` is one): where to send, what to
    update, how to judge the response, and how to build a follow-up request."""

    @property
    def transport(self) -> Transport: ...
    @property
    def middleware(self) -> list[MiddlewareFn]: ...
    @property
    def conversation(self) -> Conversation: ...
    @property
    def verify(self) -> VerifyMode: ...
    @property
    def max_frame_bytes(self) -> int: ...
    @property
    def idle_timeout(self) -> float | None: ...
    @property
    def client_tools(self) -> ClientTools | None: ...
    @property
    def max_tool_rounds(self) -> int: ...
    def build_input(self, **overrides: Any) -> RunAgentInput: ...


class RunCore:
    """A run's working parts, shared by the :class:`Run` and its update generator;
    holds no reference to the Run, so a Run dropped after ``break`` is freed at
    once and its stream closed.

    :meth:`step` moves the run on by one transport read (or one client tool
    call, or the start of a round) and returns the updates that produced, one
    list per frame; None when the run is over."""

    __slots__ = (
        "abort",
        "calls",
        "cancelled",
        "closing",
        "carry",
        "chain_read",
        "consumer",
        "cursor",
        "detached",
        "ended",
        "errors",
        "final",
        "gen",
        "guard",
        "handoff",
        "held",
        "held_head",
        "idle",
        "inputs",
        "ahead",
        "announced",
        "broke",
        "failure",
        "interrupted",
        "keep_read",
        "loop",
        "next",
        "pipeline",
        "policy",
        "read",
        "reading",
        "rest",
        "rounds",
        "run_ref",
        "session",
        "slot",
        "span",
        "started",
        "stopping",
        "stream",
        "tasks",
    )

    def __init__(
        self,
        session: RunHost,
        run_input: RunAgentInput,
        slot: RunSlot,
        carry: dict[str, Any],
        run_ref: weakref.ref[Run],
        cursor: str | None = None,
    ) -> None:
        self.session: RunHost = session
        self.run_ref: weakref.ref[Run] = run_ref
        self.slot: RunSlot = slot
        self.carry: dict[str, Any] = carry  # the overrides the follow-up rounds keep
        self.inputs: list[RunAgentInput] = [run_input]  # one per round
        self.pipeline: Pipeline | None = None  # the current round's
        self.stream: AsyncIterator[Any] | None = None  # the current round's response
        self.read: Callable[[], Awaitable[Any]] | None = None
        self.ahead: asyncio.Task[Any] | None = None  # a read begun by look_ahead
        self.rest: Iterator[Any] = _NO_FRAMES  # the current item's frames not yet fed
        self.calls: list[ToolCall] = []  # client tool calls still to run this round
        self.rounds: int = 0
        self.cancelled: Done | None = None  # a run closed before it started
        self.errors: list[ErrorUpdate] = []
        self.final: bool = False
        self.closing: bool = False  # finish() began: the stream is being closed
        self.started: bool = False  # the generator began (the request is being sent)
        self.ended: asyncio.Event | None = None
        # the update generator (weakly: a run left with ``break`` is freed at once) and
        # the task that closes it if the loop shuts down first (see close_at_shutdown)
        self.gen: weakref.ref[AsyncGenerator[object, None]] | None = None
        self.guard: asyncio.Task[None] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        # the task that last awaited inside the generator (set before each await),
        # for a stop from another task; whether a stop was asked; whether it
        # interrupted that task (cancelled it once)
        self.consumer: asyncio.Task[Any] | None = None
        self.stopping: bool = False
        self.reading: bool = False  # awaiting a transport (or middleware chain) read
        self.keep_read: bool = False  # stopped from inside that read: apply what it returns
        self.interrupted: bool = False
        self.tasks: set[asyncio.Task[Any]] = set()
        self.next: Callable[[], Awaitable[Iterable[list[Update]] | None]] = self.start
        # resuming a cut response (agui.transports._reconnect): the cursors processed, the
        # transport's policy (None: never resume), the first item of a resumed response
        self.cursor: Cursor = Cursor(cursor)
        self.policy: ReconnectPolicy | None = None
        self.held: Any = NOTHING
        # the response's first bytes while they may still be a ": run held <token>" comment
        # split across reads (None: decided)
        self.held_head: bytes | None = b""
        self.abort: bool = False  # stopped on purpose with a resumable run open: tell the server
        # the event idle clock (agui.client._idle; None: off): reads wait under it
        seconds = session.idle_timeout
        self.idle: IdleClock | None = IdleClock(seconds) if seconds else None
        # a resume below the middleware (see drive): the chain's own read, the future
        # its source awaits a new response on, the chain read suspended meanwhile
        self.chain_read: Callable[[], Awaitable[Any]] | None = None
        self.handoff: asyncio.Future[Handed] | None = None
        self.detached: Generator[Any, Any, Any] | None = None
        self.announced: bool = False  # resuming: the next try was announced (Reconnecting)
        self.broke: float = 0.0  # when the response broke (monotonic seconds)
        self.failure: Exception | None = None  # what broke it, or the last try's failure
        self.span: Any = None  # the round's agui.client._run span (agui.client._telemetry)

    # the jobs' functions, bound as methods (``Final``: each declared as the function it is)
    # resuming a cut response, attaching (agui.client._resume)
    continued: Final = resuming.continued
    unseen: Final = resuming.unseen
    resumable: Final = resuming.resumable
    complete: Final = resuming.complete
    resumes: Final = resuming.resumes
    note_held: Final = resuming.note_held
    may_resume: Final = resuming.may_resume
    resume: Final = resuming.resume
    retry: Final = resuming.retry
    give_up: Final = resuming.give_up
    next_try: Final = resuming.next_try
    attempt: Final = resuming.attempt
    tell: Final = resuming.tell
    transport_stream: Final = resuming.transport_stream
    hand_off: Final = resuming.hand_off
    # the middleware chain over the response (agui.client._middleware)
    open_response: Final = chained.open_response
    chain_source: Final = chained.chain_source
    read_chain: Final = chained.read_chain
    let_go: Final = chained.let_go
    # the end of a round, client-tool rounds (agui.client._tools)
    end_round: Final = tool_rounds.end_round
    over: Final = tool_rounds.over
    call_tool: Final = tool_rounds.call_tool
    # stopping, closing (agui.client._closing)
    stop_here: Final = ending.stop_here
    note_abort: Final = ending.note_abort
    interrupt: Final = ending.interrupt
    close_stream: Final = ending.close_stream
    cancel_on_server: Final = ending.cancel_on_server
    finish: Final = ending.finish
    look_ahead: Final = ending.look_ahead

    # ------------------------------------------------------------- stepping

    async def step(self) -> Iterable[list[Update]] | None:
        """The next updates (one list per frame), or None once the run is over."""
        if self.stopping:
            return None
        self.consumer = asyncio.current_task()
        return await self.next()

    async def start(self) -> Iterable[list[Update]] | None:
        """A round starts: take the session's slot, make its pipeline, send."""
        session = self.session
        run_input = self.inputs[-1]
        attaching = not self.rounds and self.cursor.last is not None
        kept = self.slot.lost if attaching else None
        await self.slot.take(self, self.run_ref)
        pipeline = self.continued(kept, run_input)
        if pipeline is None:
            pipeline = Pipeline(
                session.conversation,
                verify=session.verify,
                max_frame_bytes=session.max_frame_bytes,
                thread_id=run_input.thread_id,  # every run must answer the thread we sent
            )
            kept_cursor = self.cursor.last
            if attaching and kept_cursor is not None and not is_start(kept_cursor):
                # a cursor kept elsewhere: the run from its start (proven by the
                # cursor's token), its updates handed out after that cursor
                self.cursor = Cursor(start_cursor(kept_cursor), until=kept_cursor)
        self.pipeline = pipeline
        # the spec's pending-call rule: only calls to tools this run offered are the client's
        tools = run_input.tools
        session.conversation.offered_tools = frozenset(
            t.name for t in (tools if isinstance(tools, list) else ())
        )
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "sending run %r on thread %r: %d message(s), %d tool(s)%s",
                run_input.run_id,
                run_input.thread_id,
                len(run_input.messages),
                len(run_input.tools or ()),
                f" (client tool round {self.rounds})" if self.rounds else "",
            )
        self.next = self.read_item
        policy = getattr(session.transport, "reconnect", None)
        self.policy = policy if isinstance(policy, ReconnectPolicy) else None
        if self.rounds:
            self.cursor = Cursor()  # a follow-up round is a new run
        if self.idle is not None:
            self.idle.event()  # a new response: the full idle budget
        self.end_span()
        self.span = telemetry.run_started(
            run_input.thread_id, run_input.run_id, attached=self.cursor.last is not None
        )
        try:
            self.stream = self.open_response(run_input, pipeline)
            read = self.stream.__aiter__().__anext__
            if session.middleware and self.policy is not None:  # resumable below the chain
                self.chain_read, read = read, self.read_chain
            self.read = read
        except Exception as exc:  # noqa: BLE001 - nothing a transport raises escapes
            self.next = self.end_round
            return (pipeline.fail_transport(as_transport_error(exc)),)
        return ()

    async def read_item(self) -> Iterable[list[Update]] | None:
        """One transport read: its frames' updates, fed one frame at a time."""
        pipeline = self.pipeline
        assert pipeline is not None and self.read is not None
        if pipeline.finished:
            return await self.end_round()
        self.rest = _NO_FRAMES  # (the previous item's frames are not kept over the read)
        ahead, self.ahead = self.ahead, None
        item, self.held = self.held, NOTHING
        try:
            if item is NOTHING:
                read = ahead if ahead is not None else read_one(self.read)
                self.reading = True
                try:
                    item = await (read if self.idle is None else self.idle.wait(read))
                finally:
                    self.reading = False
        except Exception as exc:  # noqa: BLE001 - nothing a transport raises escapes
            if self.may_resume(pipeline, exc):
                return await self.resume(pipeline, exc)
            self.next = self.end_round
            if self.complete(pipeline):
                logger.debug("resumable response cut after its run's end: %s", exc)
                return (pipeline.close(),)
            return (pipeline.fail_transport(as_transport_error(exc)),)
        if item is DETACHED:  # the chain's source lost its response: resume it (retry)
            self.next = self.retry
            return await self.retry()
        if item is EOF:
            if self.may_resume(pipeline, None):
                return await self.resume(pipeline, None)
            self.next = self.end_round
            return (pipeline.close(),)
        if self.stopping:  # stopped from inside the read (a middleware, an agent callback)
            if self.keep_read:  # the event whose callback stopped the run is applied (as the
                self.keep_read = False  # reference's abortRun), not handed out; then stop
                for _ in self._frames(pipeline, item):
                    pass
                self.stop_here()
            return None
        if self.cursor.last is None and self.policy is not None:
            self.note_held(item)
        batches = self._frames(pipeline, item)
        return batches if self.cursor.until is None else self.unseen(batches)

    @property
    def item_done(self) -> bool:
        """Whether the list handed out is its transport item's last (no frame of
        the item is left to feed)."""
        return length_hint(self.rest) == 0

    def _frames(self, pipeline: Pipeline, item: Any) -> Iterable[list[Update]]:
        """The updates of one transport item, one list per frame: the item is
        split once iterated, and each frame fed only when the consumer asks for
        its list (:attr:`item_done` tells whether the list handed out is the
        item's last)."""
        return _Lazy(partial(self._split, pipeline, item))

    def _split(self, pipeline: Pipeline, item: object) -> Iterator[list[Update]]:
        """:meth:`_frames` once iterated."""
        head, frames = pipeline.frames(item)
        if self.idle is not None and (
            frames or not isinstance(item, bytes | bytearray | memoryview)
        ):
            self.idle.event()  # (comments and blank lines make no frame)
        rest = self.rest = iter(frames)
        ids = pipeline.frame_ids
        # (a frame after the stream finished is fed to no effect: [])
        fed = self.resumable(pipeline, rest, ids) if ids else map(pipeline.feed_frame, rest)
        return chain((head,), fed) if head else fed

    # ------------------------------------------------------------- telemetry

    def end_span(self) -> None:
        """Close the current round's ``agui.client._run`` span (idempotent)."""
        span, self.span = self.span, None
        if span is not None:
            telemetry.run_ended(span, self.pipeline.done if self.pipeline is not None else None)


class Run:
    """One run (one request/response): an async iterator of :mod:`agui.updates` values.

    Created by :meth:`Session.send`, :meth:`Session.run` and
    :meth:`Session.resume`; nothing is sent until it is iterated. Use it as
    ``async for u in run``, ``async with run: ...`` (closes on exit) or
    ``await run.collect()``.

    Leaving early: ``async with`` / :meth:`aclose` close the response at once
    (from the iterating task, another task, or a callback inside the run);
    :meth:`cancel` does it without awaiting (a signal handler); a bare
    ``break`` closes it as soon as the Run is no longer referenced (CPython
    frees it right after the loop when it was not bound to a name) or when the
    session's next run starts.

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

    Args:
        session: the session whose conversation the run updates (its
            transport, middleware, verify mode, frame cap and client tools).
        run_input: the first ``RunAgentInput`` to send.
        slot: the session's :class:`RunSlot` (one run streams at a time).
        subscribers: the session's :class:`Subscribers`.
        carry: the overrides follow-up rounds keep.
        cursor: join a run in progress on a resumable server instead of starting
            it, from this cursor (``"0"``: its first event), by the rule of
            :meth:`Session.attach`.

    Attributes:
        input: the first ``RunAgentInput`` sent (after the session's defaults
            and overrides; middleware may still change what goes on the wire);
            :attr:`inputs` has the follow-ups too.
    """

    def __init__(
        self,
        session: RunHost,
        run_input: RunAgentInput,
        *,
        slot: RunSlot,
        subscribers: Subscribers,
        carry: dict[str, Any] | None = None,
        cursor: str | None = None,
    ) -> None:
        self.input = run_input
        self._core = RunCore(session, run_input, slot, dict(carry or {}), weakref.ref(self), cursor)
        self._subscribers = subscribers
        self._gen: AsyncGenerator[Any, None] | None = None
        self._batched = False  # the generator yields lists (batches())
        self._closed = False

    @property
    def done(self) -> Done | None:
        """The last :class:`~agui.updates.Done` of this run's response: the final
        one once the run is over (``Done(cancelled)`` when it was left before it
        ended), None while running or before starting."""
        pipeline = self._core.pipeline
        return pipeline.done if pipeline is not None else self._core.cancelled

    @property
    def cursor(self) -> str | None:
        """The SSE cursor (``id:``) of the last frame this run processed (None
        before one, or on a stream without cursors): keep it to attach to the
        run later (:meth:`Session.attach`)."""
        return self._core.cursor.last

    @property
    def catching_up(self) -> bool:
        """True while an attach from a kept cursor replays the frames at or before
        it: applied, their updates not handed out (:meth:`Session.attach`)."""
        return self._core.cursor.until is not None

    @property
    def inputs(self) -> list[RunAgentInput]:
        """Every ``RunAgentInput`` sent so far: :attr:`input`, then one per
        client-tool round."""
        return list(self._core.inputs)

    @property
    def errors(self) -> list[ErrorUpdate]:
        """The ``ErrorUpdate`` s seen so far: the first :data:`MAX_KEPT_ERRORS` non-fatal
        ones and every fatal one (each is handed out by the iteration all the same)."""
        return self._core.errors

    @property
    def started(self) -> bool:
        """True once iteration began (the request was sent or is being sent)."""
        return self._core.started

    @property
    def finished(self) -> bool:
        """True once the response stream is over (completed, failed or cancelled)."""
        return self._core.final

    def __aiter__(self) -> AsyncIterator[Update]:
        # the run's one update generator itself: ``async for`` pays no wrapper
        # per update (every loop over the run continues the same stream)
        return self._updates()

    async def __anext__(self) -> Update:
        return await self._updates().__anext__()

    def batches(self) -> AsyncIterator[list[Update]]:
        """Opt-in: the run's updates one list per step instead of one at a time,
        ``async for batch in run.batches(): ...``, for a service that does not need
        an ``await`` per update (a step is one transport read, often hundreds of
        frames; a list is never empty).

        The same updates in the same order as ``async for u in run`` (subscribers
        are told each one, in order, before its list is handed out), but a list
        is handed out only once every frame of its read was applied: leaving
        after list N leaves the reads after it unapplied (update by update, a
        frame is fed only when the update before it was taken). Every other
        method (:meth:`aclose`, :attr:`done`, ``async with``) works as with the
        update iterator.

        Raises:
            RuntimeError: the run was already iterated update by update (a run
                has one stream: iterate it one way).
        """
        return self._stream(batched=True)

    def _updates(self) -> AsyncGenerator[Update, None]:
        return self._stream(batched=False)

    @overload
    def _stream(self, *, batched: Literal[False]) -> AsyncGenerator[Update, None]: ...
    @overload
    def _stream(self, *, batched: Literal[True]) -> AsyncGenerator[list[Update], None]: ...
    def _stream(self, *, batched: bool) -> AsyncGenerator[Any, None]:
        gen = self._gen
        if gen is None:
            if self._closed:
                gen = _nothing()
            else:
                core = self._core
                core.ended = asyncio.Event()
                gen = _execute(core, self._subscribers, batched)
                core.gen = weakref.ref(gen)
            self._gen, self._batched = gen, batched
        elif self._batched != batched:
            raise RuntimeError(
                "this run is already iterated "
                + ("with batches()" if self._batched else "update by update")
                + "; a run's updates are iterated one way"
            )
        return gen

    async def aclose(self) -> None:
        """Stop the run: close the transport stream; ``done`` becomes
        ``Done(cancelled)`` unless the run had already ended. Idempotent.

        From another task (a stop button): the pending read is interrupted,
        the iterating ``async for`` simply ends, and this call returns once
        the stream is closed. From inside the run (a subscriber, a middleware,
        a client tool): nothing more is applied, and the run ends as the
        callback returns, before the next frame is delivered.
        """
        self._closed = True
        core = self._core
        gen = self._gen
        if not core.started:  # never started: nothing was sent
            self._cancel_unstarted()
            if gen is not None:
                await gen.aclose()
            return
        assert gen is not None
        if core.final:
            if not running(gen):
                await gen.aclose()
            return
        core.stop_here()
        if running(gen):
            consumer = core.consumer
            if consumer is None or consumer is asyncio.current_task():
                return  # called from inside the run: it ends as the callback returns
            core.interrupt(gen)  # (no-op when it is closing already)
            if core.ended is not None:
                await core.ended.wait()
            return
        await gen.aclose()

    def cancel(self) -> None:
        """:meth:`aclose` without awaiting: safe from a signal handler
        (``signal.signal`` or ``loop.add_signal_handler``), a plain callback or
        another thread. The run ends ``Done(cancelled)`` before its next frame
        is delivered and its stream is closed on the run's event loop."""
        self._closed = True
        core = self._core
        if not core.started:
            self._cancel_unstarted()
            return
        core.stopping = True  # (atomic: the iterating task stops at its next step)
        loop = core.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._stop_on_loop)

    def _stop_on_loop(self) -> None:
        core = self._core
        if not core.final:
            core.stop_here()
            core.interrupt(self._gen)

    def _cancel_unstarted(self) -> None:
        core = self._core
        if not core.final:
            core.cancelled = RunLifecycle.never_started(CANCELLED)
        core.final = True

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


_NO_FRAMES: Iterator[Any] = iter(())


class _Lazy:
    """An iterable whose iterator ``make()`` builds once iterated (nothing runs before)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Iterator[list[Update]]]) -> None:
        self.make = make

    def __iter__(self) -> Iterator[list[Update]]:
        return self.make()


async def _nothing() -> AsyncGenerator[Update, None]:
    """The updates of a run closed before it started: none."""
    return
    yield  # (an async generator)


MAX_KEPT_ERRORS = 1000
"""Non-fatal errors a run keeps in :attr:`Run.errors` (the first ones; a fatal error is
always kept): a server sending undecodable frames without end costs bounded memory."""


async def _keep_error(core: RunCore, update: ErrorUpdate) -> None:
    if update.fatal or len(core.errors) < MAX_KEPT_ERRORS:
        core.errors.append(update)


async def _after_done(core: RunCore, update: Done) -> None:
    if core.item_done:  # the response usually ends right there: read on a little
        await core.look_ahead()


RUN_HOOKS: dict[type, Callable[[RunCore, Any], Awaitable[None]]] = {
    ErrorUpdate: _keep_error,
    Done: _after_done,
}
"""Update class -> what the run does with it before handing it out (keep an
error; after an item's last ``Done``, read ahead for the end of the response)."""


def _watched(debug: bool) -> frozenset[type]:
    """The update classes the run loop stops at (:data:`RUN_HOOKS`, and
    :data:`~agui.client._telemetry.LOGGERS` in a debug run); every other update passes with one set test."""
    return frozenset(RUN_HOOKS) | frozenset(LOGGERS) if debug else frozenset(RUN_HOOKS)


async def _watch(core: RunCore, update: Update, debug: bool) -> None:
    """What the run does with a watched update before handing it out: its
    :data:`RUN_HOOKS` hook, then its :data:`LOGGERS` line in a debug run."""
    cls = type(update)
    hook = RUN_HOOKS.get(cls)
    if hook is not None:
        await hook(core, update)
    if debug and (log := LOGGERS.get(cls)) is not None:
        log(update)


async def _execute(
    core: RunCore, subscribers: Subscribers, batched: bool
) -> AsyncGenerator[Any, None]:
    """The run's update stream (see the module doc), across client-tool rounds:
    each step's updates, frame by frame, each frame fed only once the updates
    before it were taken (so leaving after update N leaves later frames
    unapplied), each update recorded, logged (debug runs), told to the
    subscribers, then yielded.

    ``batched`` (:meth:`Run.batches`): one list per step (a transport read, a
    client tool call, a round's start) instead of one update at a time: every
    frame of the step is fed and its updates handled as above, then the list is
    yielded (never empty); leaving after list N leaves later steps unapplied."""
    if core.final:
        return
    _begin(core)
    notify = subscribers.notify
    live = subscribers.live
    current_task = asyncio.current_task
    debug = logger.isEnabledFor(logging.DEBUG)  # once per iteration, not per update
    watched = _watched(debug)
    try:
        while (batches := await core.step()) is not None:
            if batched:
                batch = await _take_step(core, batches, watched, debug, subscribers)
                if batch:
                    yield batch
                continue
            for updates in batches:  # the default path: no call per update
                if core.stopping:
                    break
                for update in updates:
                    if type(update) in watched:
                        await _watch(core, update, debug)
                    if live:
                        core.consumer = current_task()
                        await notify(update)
                    yield update
    except asyncio.CancelledError:
        if absorbed(core):
            return
        raise
    finally:
        await core.finish()


async def _take_step(
    core: RunCore,
    batches: Iterable[list[Update]],
    watched: frozenset[type],
    debug: bool,
    subscribers: Subscribers,
) -> list[Update]:
    """A batched run's step (:meth:`Run.batches`): every frame fed, each update
    watched and told to the subscribers in order, as :func:`_execute` does one
    by one; the step's updates in one list. (The per-update lines are also
    inline in :func:`_execute`: a call per update there costs ~5% of the default
    path by callgrind instructions; one call per step here costs nothing.)"""
    batch: list[Update] = []
    live = subscribers.live
    notify = subscribers.notify
    for updates in batches:
        if core.stopping:
            break
        for update in updates:
            if type(update) in watched:
                await _watch(core, update, debug)
            if live:
                core.consumer = asyncio.current_task()
                await notify(update)
        batch += updates
    return batch


def _begin(core: RunCore) -> None:
    """The run's generator starts: the request is being sent; the shutdown guard
    (:func:`close_at_shutdown`) watches it."""
    core.started = True
    core.loop = loop = asyncio.get_running_loop()
    if core.ended is not None:
        core.guard = loop.create_task(close_at_shutdown(core, core.ended))
