"""Session: one conversation (thread) with an agent, across runs, over any transport.

::

    session = Session(HttpTransport("http://127.0.0.1:8000/agent"), tools=[...])
    async with session.send("add a task: buy milk") as run:
        async for update in run:
            ...                      # typed agui.updates values, Done last
    if session.pending_interrupts:
        async for update in session.resume({"i1": resolved({"approved": True})}):
            ...

Outgoing ``RunAgentInput`` (as ``prepareRunAgentInput`` builds it): same ``threadId`` for
every run, a fresh ``runId``, ``protocolVersion`` "1.0", ``messages`` = the
conversation minus activity messages, ``tools``/``context`` as configured
(``[]`` by default), ``state`` = the conversation's current state (``{}``
until one is given or published, as the reference client sends),
``forwardedProps`` as configured (``{}`` by default, as the reference client
sends and as Python ``ag-ui-protocol`` 0.1.20 servers require), ``resume``
only when resuming.

Each run's updates come from an :class:`agui.pipeline.Pipeline` feeding the
session's :class:`agui.apply.Conversation`: several runs in one response are
applied in order, each ending with its own ``Done``. Every run must carry the
request's ``threadId``: a RUN_STARTED on another thread is the protocol
violation ``run_started_thread_mismatch`` (tolerant: reported and not applied,
nor is anything of that run; strict: the run fails).

Cancellation: leaving a run early (``break`` then ``aclose()`` / ``async
with``, or cancelling the task) closes the transport stream (the HTTP
response); the run ends ``Done(cancelled)`` locally (:attr:`Run.done`) and
nothing that arrives later is applied. A plain ``break`` without closing is
finished when the :class:`Run` is garbage-collected or, at the latest, when
the next run of the session starts. The session stays usable.

Transport failures (:class:`agui.errors.TransportError`) are reported as
``ErrorUpdate(error, fatal=True)`` followed by ``Done(failed)``; they are
never raised from the iterator.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Self

import msgspec
from msgspec import UNSET

from agui.errors import DecodeError, EncodeError, ResumeError, TransportError
from agui.interrupts import build_resume, is_expired
from agui.middleware import MiddlewareFn, compose
from agui.updates import Done, ErrorUpdate, RunStarted, Update, WarningUpdate

if TYPE_CHECKING:  # (imported lazily at run time)
    from agui.apply import Conversation
    from agui.transports import Transport
    from agui.types import Interrupt, Message, RunAgentInput

__all__ = ["Run", "Session", "SyncRun", "SyncSession"]

PROTOCOL_VERSION = "1.0"
logger: logging.Logger = logging.getLogger(__name__)
_INPUT_FIELDS = frozenset(
    {
        "thread_id",
        "run_id",
        "messages",
        "protocol_version",
        "parent_run_id",
        "state",
        "tools",
        "context",
        "forwarded_props",
        "resume",
    }
)

Subscriber = Callable[[Update], Any]


def _convert_list(items: Iterable[Any], struct_type: Any, where: str) -> list[Any]:
    """Structs pass; wire dicts are converted. Raises DecodeError naming
    ``where[i]`` and the offending field."""
    out = []
    for index, item in enumerate(items):
        if isinstance(item, msgspec.Struct):
            out.append(item)
            continue
        try:
            out.append(msgspec.convert(item, struct_type))
        except msgspec.ValidationError as exc:
            raise _validation_error(exc, f"{where}[{index}]") from exc
    return out


def _validation_error(exc: msgspec.ValidationError, where: str) -> DecodeError:
    text = str(exc)
    reason, _, sub = text.partition(" - at `$")
    return DecodeError(reason, path=where + sub.rstrip("`"))


def _is_parts(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(p, dict) and "type" in p or hasattr(p, "__struct_fields__") for p in value
        )
    )


def _snapshot(value: Any) -> Any:
    """A private copy of a JSON value (the conversation's state is live).

    Copied through JSON, which is what the request will carry anyway. Where
    that would change the value, ``copy.deepcopy`` keeps it as it is for the
    request encoder to judge: a str with a lone UTF-16 surrogate (an agent may
    send one; the encoder escapes it) and a NaN or infinite float (which JSON
    would make ``null``; the encoder refuses it, and the run fails with an
    ``EncodeError`` instead of sending changed data)."""
    from agui.wire import check_finite

    try:
        data = msgspec.json.encode(value)
    except UnicodeEncodeError:
        return copy.deepcopy(value)
    if data.find(b"null") != -1:
        try:
            check_finite(value)
        except EncodeError:
            return copy.deepcopy(value)
    return msgspec.json.decode(data)


class _RunState:
    """What a run's generator reports back; holds no reference to the Run, so
    a Run dropped after ``break`` is freed at once and its stream closed."""

    __slots__ = ("done", "ended", "errors", "final")

    def __init__(self) -> None:
        self.done: Done | None = None
        self.errors: list[ErrorUpdate] = []
        self.final = False
        self.ended: asyncio.Event | None = None

    def record(self, update: Update) -> None:
        if isinstance(update, Done):
            self.done = update
        elif isinstance(update, ErrorUpdate):
            self.errors.append(update)


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

    Attributes:
        input: the ``RunAgentInput`` sent (after the session's defaults and
            overrides; middleware may still change what goes on the wire).
    """

    def __init__(self, session: Session, run_input: RunAgentInput) -> None:
        self._session = session
        self.input = run_input
        self._state = _RunState()
        self._gen: Any = None
        self._closed = False
        self._consumer: asyncio.Task[Any] | None = None  # task inside __anext__, if any
        self._stop_requested = False

    @property
    def done(self) -> Done | None:
        """The last :class:`~agui.updates.Done` seen: the final one once the
        run is over (``Done(cancelled)`` when it was left early), None while
        running or before starting."""
        return self._state.done

    @property
    def errors(self) -> list[ErrorUpdate]:
        """Every ``ErrorUpdate`` seen so far."""
        return self._state.errors

    @property
    def started(self) -> bool:
        """True once iteration began (the request was sent or is being sent)."""
        return self._gen is not None

    @property
    def finished(self) -> bool:
        """True once the response stream is over (completed, failed or cancelled)."""
        return self._state.final

    def __aiter__(self) -> Run:
        return self

    async def __anext__(self) -> Update:
        if self._gen is None:
            if self._closed:
                raise StopAsyncIteration
            self._state.ended = asyncio.Event()
            self._gen = self._session._execute(self.input, self._state, weakref.ref(self))
        task = asyncio.current_task()
        self._consumer = task
        try:
            return await self._gen.__anext__()
        except asyncio.CancelledError:
            # aclose() from another task interrupts the pending read by
            # cancelling this task once; absorb exactly that request.
            if self._stop_requested and task is not None and task.uncancel() == 0:
                raise StopAsyncIteration from None
            raise
        finally:
            self._consumer = None

    async def aclose(self) -> None:
        """Stop the run: close the transport stream; ``done`` becomes
        ``Done(cancelled)`` unless the run had already finished. Idempotent.

        May be called from another task than the one iterating (e.g. a stop
        button): the pending read is interrupted, the iterating ``async for``
        simply ends, and this call returns once the stream is closed.
        """
        self._closed = True
        if self._gen is None:  # never started: nothing was sent
            if not self._state.final:
                self._state.done = Done("cancelled", reason="cancelled by client")
            self._state.final = True
            return
        consumer = self._consumer
        if consumer is not None and consumer is not asyncio.current_task():
            if not self._stop_requested:
                self._stop_requested = True
                consumer.cancel()
            if self._state.ended is not None:
                await self._state.ended.wait()
            return
        await self._gen.aclose()

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


class Session:
    """A conversation with one agent over a :class:`agui.transports.Transport`.

    Args:
        transport: e.g. :class:`~agui.transports.HttpTransport` or
            :class:`~agui.transports.ReplayTransport`.
        thread_id: the thread (default: a new uuid4).
        tools, context: ``Tool`` / ``Context`` structs or wire dicts offered
            on every run.
        state: the initial agent state (any JSON; default: none, which is
            sent as ``{}``, as is ``None``: absent state means ``{}``).
        forwarded_props: ``forwardedProps`` sent on every run (default ``{}``,
            as is ``None``; see the module doc).
        verify: ``"tolerant"`` (default) | ``"strict"`` | ``"off"``; see
            :mod:`agui.pipeline`.
        middleware: :mod:`agui.middleware` callables, outermost first.
        messages: initial messages (structs or wire dicts).
        max_frame_bytes: SSE frame cap (bytes).

    Raises:
        agui.errors.DecodeError: a tool, context entry or message given as a
            dict does not fit its type (``path`` e.g. ``tools[0].description``).
        ValueError: ``verify`` is not one of the three modes.

    Attributes: ``conversation`` (:class:`agui.apply.Conversation`),
    ``thread_id``, ``tools``, ``context``, ``forwarded_props``, ``verify``,
    ``middleware``, :attr:`last_run`.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        thread_id: str | None = None,
        tools: Iterable[Any] = (),
        context: Iterable[Any] = (),
        state: Any = UNSET,
        forwarded_props: Any = UNSET,
        verify: str = "tolerant",
        middleware: Iterable[MiddlewareFn] = (),
        messages: Iterable[Any] = (),
        max_frame_bytes: int = 10 * 1024 * 1024,
    ) -> None:
        from agui.apply import Conversation
        from agui.types import Context, Message, Tool

        if verify not in ("strict", "tolerant", "off"):
            raise ValueError(f"verify must be strict, tolerant or off, got {verify!r}")
        self.transport = transport
        self.thread_id: str = thread_id or str(uuid.uuid4())
        self.tools: list[Tool] = _convert_list(tools, Tool, "tools")
        self.context: list[Context] = _convert_list(context, Context, "context")
        self.forwarded_props = forwarded_props
        self.verify = verify
        self.middleware: list[MiddlewareFn] = list(middleware)
        self.max_frame_bytes = max_frame_bytes
        messages = _convert_list(messages, Message, "messages")
        self.conversation: Conversation = Conversation(
            messages, state=None if state is UNSET else state
        )
        self._last_ref: weakref.ref[Run] | None = None
        self._active_ref: weakref.ref[Run] | None = None  # the run being streamed
        self._active_state: _RunState | None = None
        self._subscribers: list[Subscriber] = []

    # ----------------------------------------------------------------- read

    @property
    def messages(self) -> list[Message]:
        """The conversation's messages (generated structs)."""
        return self.conversation.messages

    @property
    def state(self) -> Any:
        """The agent state as of the latest applied event (live; copy to keep)."""
        return self.conversation.state

    @property
    def pending_interrupts(self) -> list[Interrupt]:
        """Interrupts the latest run paused on (answer them with :meth:`resume`)."""
        return self.conversation.pending_interrupts

    @property
    def last_run(self) -> Run | None:
        """The most recently created :class:`Run`, while something references it
        (the session keeps runs only weakly, so a dropped run can close)."""
        return self._last_ref() if self._last_ref is not None else None

    # ------------------------------------------------------------ subscribe

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(update)`` (sync, or async and awaited) for every
        update of every run, before the update is yielded. A callback that
        raises is logged (logger ``agui.session``) and skipped, as the
        reference client does: the run and the other subscribers go on.
        Returns an unsubscribe function."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    # ------------------------------------------------------------- messages

    def add_user_message(self, text: Any, message_id: str | None = None) -> str:
        """Append a user message without starting a run; returns its id."""
        return self.conversation.add_user_message(text, message_id)

    def add_tool_result(
        self, tool_call_id: str, content: Any, *, message_id: str | None = None
    ) -> str:
        """Answer a client-side tool call (one of ``Done.pending_tool_call_ids``).

        Appends a tool message (``content``: str or content parts; a dict or
        list of non-parts is sent as its JSON text) placed after the call, to
        be sent with the next run (``session.run()``). Returns the message id.
        """
        from agui.types import ToolCallResultEvent

        if not isinstance(content, str) and not _is_parts(content):
            content = msgspec.json.encode(content).decode()
        mid = message_id or str(uuid.uuid4())
        event = msgspec.convert(
            {"messageId": mid, "toolCallId": tool_call_id, "content": content, "role": "tool"},
            ToolCallResultEvent,
        )
        self.conversation.apply(event)
        return mid

    # ----------------------------------------------------------------- runs

    def build_input(self, **overrides: Any) -> RunAgentInput:
        """The RunAgentInput the next run would send (a fresh ``runId`` each call).

        ``overrides``: any RunAgentInput field by its snake_case name
        (``run_id``, ``tools``, ``state``, ``forwarded_props``, ``resume`` ...);
        a ``state`` or ``forwarded_props`` of ``None`` (or ``UNSET``) is sent as
        ``{}``, the spec's meaning of an absent one.

        Raises:
            TypeError: an override that is not a RunAgentInput field.
        """
        from agui.types import ResumeEntry, RunAgentInput

        unknown = set(overrides) - _INPUT_FIELDS
        if unknown:
            raise TypeError(f"not RunAgentInput fields: {', '.join(sorted(unknown))}")
        fields: dict[str, Any] = {
            "thread_id": self.thread_id,
            "run_id": str(uuid.uuid4()),
            "messages": self.conversation.input_messages(),
            "protocol_version": PROTOCOL_VERSION,
            "tools": list(self.tools),
            "context": list(self.context),
        }
        # absent state means {} (RunAgentInput.state), and {} is what the reference
        # client sends by default (prepareRunAgentInput)
        fields["state"] = _snapshot(self.conversation.input_state())
        props = self.forwarded_props
        fields["forwarded_props"] = props if props is UNSET or props is None else _snapshot(props)
        fields.update(overrides)
        for name in ("state", "forwarded_props"):  # null is read as absent, and absent is {}
            if fields[name] is None or fields[name] is UNSET:
                fields[name] = {}
        if "resume" in overrides and overrides["resume"] is not UNSET:
            fields["resume"] = _convert_list(overrides["resume"], ResumeEntry, "resume")
        return RunAgentInput(**fields)

    def run(self, **overrides: Any) -> Run:
        """Start a run with the conversation as it is (see :meth:`build_input`).

        Raises:
            ResumeError: interrupts are pending and ``resume`` does not answer
                every one of them (use :meth:`resume`), or answers an expired
                one other than cancelled.
        """
        self._check_resume(overrides.get("resume", UNSET))
        return self._new_run(self.build_input(**overrides))

    def send(self, text: Any, *, message_id: str | None = None, **overrides: Any) -> Run:
        """Add a user message (``text``: str or content parts) and start a run.

        Raises:
            ResumeError: interrupts are pending (answer them with
                :meth:`resume`, which can also carry a user message).
        """
        self._check_resume(overrides.get("resume", UNSET))
        self.conversation.add_user_message(text, message_id)
        return self._new_run(self.build_input(**overrides))

    def resume(
        self,
        answers: Mapping[str, Any],
        *,
        text: Any = None,
        now: Any = None,
        **overrides: Any,
    ) -> Run:
        """Answer every pending interrupt in ONE request and start that run.

        Args:
            answers: interrupt id -> answer: :func:`agui.interrupts.resolved`
                ``(payload)``, :func:`agui.interrupts.cancelled` ``()``, a
                ``ResumeEntry``, or any JSON value (= resolved with that payload).
            text: optional user message added before resuming.
            now: expiry reference time (default: now, UTC).

        Raises:
            ResumeError: before anything is sent, when nothing is pending, an
                interrupt is unanswered, an answer names an unknown id, or an
                expired interrupt is answered other than cancelled.
            TypeError: ``answers`` is not a mapping.
        """
        resume = build_resume(self.conversation.pending_interrupts, answers, now=now)
        if text is not None:
            self.conversation.add_user_message(text)
        return self._new_run(self.build_input(resume=resume, **overrides))

    def _check_resume(self, resume: Any) -> None:
        pending = self.conversation.pending_interrupts
        if not pending:
            return
        if resume is UNSET or resume is None:
            ids = ", ".join(i.id for i in pending)
            raise ResumeError(
                f"the thread has {len(pending)} pending interrupt(s) not addressed by resume: {ids}"
                " (answer them with session.resume({...}))"
            )
        answered = {
            (e.interrupt_id if hasattr(e, "interrupt_id") else e.get("interruptId")): e
            for e in resume
        }
        missing = [i.id for i in pending if i.id not in answered]
        if missing:
            raise ResumeError(
                f"{len(missing)} pending interrupt(s) not addressed by resume: {', '.join(missing)}"
            )
        for interrupt in pending:
            entry = answered[interrupt.id]
            status = entry.status if hasattr(entry, "status") else entry.get("status")
            if status != "cancelled" and is_expired(interrupt):
                raise ResumeError(
                    f"interrupt {interrupt.id} expired at {interrupt.expires_at} and can no longer"
                    " be answered; cancel it to continue the thread"
                )

    def _new_run(self, run_input: Any) -> Run:
        run = Run(self, run_input)
        self._last_ref = weakref.ref(run)
        return run

    # ------------------------------------------------------------ execution

    async def _notify(self, update: Update) -> None:
        for callback in list(self._subscribers):
            try:
                result = callback(update)
                if asyncio.iscoroutine(result):
                    await result
            except Exception:  # as the reference client: logged, skipped
                logger.exception("session subscriber %r failed on %r", callback, update)

    async def _execute(
        self, run_input: Any, state: _RunState, run_ref: weakref.ref[Run]
    ) -> AsyncIterator[Update]:
        """The run's update stream. SSE bytes are split into frames here and
        fed one frame at a time, so that a consumer leaving after update N
        leaves nothing of later frames applied."""
        from agui.pipeline import Pipeline
        from agui.wire import SseReader

        previous = self._active_ref() if self._active_ref is not None else None
        if previous is not None and previous._state is not state and not previous.finished:
            await previous.aclose()
        self._active_ref, self._active_state = run_ref, state
        pipeline = Pipeline(
            self.conversation,
            verify=self.verify,
            max_frame_bytes=self.max_frame_bytes,
            thread_id=run_input.thread_id,  # every run must answer the thread we sent
        )
        reader = SseReader(self.max_frame_bytes)
        side: list[tuple[str, Any]] = []
        stream = self._open(run_input, side)
        run_open = False
        run_id: str | None = None
        ended = 0  # runs of this response that reached their Done
        subscribers = self._subscribers  # the live list: (un)subscribing mid-run works
        feed_data, feed_event = pipeline.feed_data, pipeline.feed_event
        try:
            try:
                async for item in stream:
                    if isinstance(item, bytes | bytearray | memoryview):
                        try:
                            pieces: Any = reader.feed(bytes(item))
                        except DecodeError as exc:  # FrameTooLarge: cannot resynchronise
                            side.append(("fatal", exc))
                            pieces = ()
                    else:
                        pieces = (item,)
                    if side:
                        pieces = [None, *pieces]  # report side-channel news first
                    for piece in pieces:
                        if piece is None:
                            updates = self._drain(pipeline, side)
                        elif type(piece) is str:
                            updates = feed_data(piece)
                        else:
                            updates = feed_event(piece)
                        for update in updates:
                            cls = type(update)
                            if cls is RunStarted:
                                run_open = True
                                run_id = update.run_id
                            elif cls is Done:
                                run_open = False
                                ended += 1
                                state.done = update
                            elif cls is ErrorUpdate:
                                state.errors.append(update)
                            if subscribers:
                                await self._notify(update)
                            yield update
                        if pipeline.finished:
                            break
                    if pipeline.finished:
                        break
                else:
                    updates = self._drain(pipeline, side)
                    try:
                        for data in reader.close():
                            updates += feed_data(data)
                    except DecodeError as exc:
                        updates += self._fail(pipeline, exc)
                    updates += pipeline.close()
                    for update in updates:
                        state.record(update)
                        if subscribers:
                            await self._notify(update)
                        yield update
            except (TransportError, EncodeError) as exc:
                # EncodeError: the request could not be written (a NaN in the
                # state, say): nothing was sent, the run fails like a transport
                for update in self._transport_failure(pipeline, exc, run_open, ended):
                    state.record(update)
                    await self._notify(update)
                    yield update
        finally:
            state.final = True
            try:
                aclose = getattr(stream, "aclose", None)
                if aclose is not None:
                    await aclose()
            finally:
                active = self._active_state is state
                if not pipeline.finished:
                    if active:
                        for update in pipeline.cancel("cancelled by client"):
                            state.record(update)
                    else:  # finalized late, a newer run owns the conversation now
                        state.done = Done("cancelled", reason="cancelled by client", run_id=run_id)
                if active:
                    self._active_ref = self._active_state = None
                if state.ended is not None:
                    state.ended.set()

    def _fail(self, pipeline: Any, error: Exception) -> list[Update]:
        """End the response as failed on a stream-level error (no-op if over)."""
        if pipeline.finished:
            return []
        pipeline.cancel("stream failed")
        self.conversation.outcome = "failed"
        return [
            ErrorUpdate(error, fatal=True),
            Done("failed", reason=str(error), run_id=self.conversation.run_id),
        ]

    def _transport_failure(
        self, pipeline: Any, exc: TransportError | EncodeError, run_open: bool, ended: int
    ) -> list[Update]:
        """Updates for a transport error (or a request that could not be encoded).

        Fatal (``ErrorUpdate(fatal=True)`` + ``Done(failed)``) while a run is
        open or before any run of this response ended; after the response's
        runs have all ended only the tail was lost: a non-fatal ErrorUpdate.
        """
        conversation = self.conversation
        pipeline.cancel("transport failed")
        if run_open or ended == 0:
            conversation.outcome = "failed"
            run_id = conversation.run_id if run_open else None
            return [ErrorUpdate(exc, fatal=True), Done("failed", reason=str(exc), run_id=run_id)]
        return [ErrorUpdate(exc, fatal=False)]

    def _open(self, run_input: Any, side: list[tuple[str, Any]]) -> AsyncIterator[Any]:
        if not self.middleware:
            return self.transport.stream(run_input)
        return compose(self.middleware, lambda inp: self._decoded(inp, side))(run_input)

    async def _decoded(self, run_input: Any, side: list[tuple[str, Any]]) -> AsyncIterator[Any]:
        """Transport output as event structs, for middleware. Decode warnings
        and undecodable frames go to ``side`` and are reported by the session
        in stream order."""
        from agui.wire import SseReader, decode_event_lenient

        reader = SseReader(self.max_frame_bytes)
        stream = self.transport.stream(run_input)
        try:
            async for item in stream:
                if not isinstance(item, bytes | bytearray | memoryview):
                    yield item
                    continue
                try:
                    frames = reader.feed(bytes(item))
                except DecodeError as exc:  # FrameTooLarge: cannot resynchronise
                    side.append(("fatal", exc))
                    return
                for data in frames:
                    event = _decode_into(decode_event_lenient, data, side)
                    if event is not None:
                        yield event
            try:
                frames = reader.close()
            except DecodeError as exc:
                side.append(("fatal", exc))
                return
            for data in frames:
                event = _decode_into(decode_event_lenient, data, side)
                if event is not None:
                    yield event
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()

    def _drain(self, pipeline: Any, side: list[tuple[str, Any]]) -> list[Update]:
        out: list[Update] = []
        while side:
            kind, value = side.pop(0)
            if kind == "warning":
                out.append(value)
            elif kind == "data":
                out += pipeline.feed_data(value)
            elif kind == "fatal":
                out += self._fail(pipeline, value)
        return out


def _decode_into(decode: Any, data: str, side: list[tuple[str, Any]]) -> Any:
    try:
        decoded = decode(data)
    except DecodeError:
        side.append(("data", data))  # the pipeline reports it under its policy
        return None
    for w in decoded.warnings:
        side.append(("warning", WarningUpdate(w.code, w.message, w.path)))
    return decoded.event


# ---------------------------------------------------------------- sync facade


class SyncRun:
    """Blocking iterator over a :class:`Run` (see :class:`SyncSession`)."""

    def __init__(self, session: SyncSession, run: Run) -> None:
        self._session = session
        self.run = run

    @property
    def input(self) -> RunAgentInput:
        """The RunAgentInput sent."""
        return self.run.input

    @property
    def done(self) -> Done | None:
        """The final Done (see :attr:`Run.done`)."""
        return self.run.done

    def __iter__(self) -> Iterator[Update]:
        return self

    def __next__(self) -> Update:
        try:
            return self._session._call(self.run.__anext__())
        except StopAsyncIteration:
            raise StopIteration from None

    def close(self) -> None:
        """Stop the run and close the connection (idempotent)."""
        self._session._call(self.run.aclose())

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def collect(self) -> list[Update]:
        """Every update to the end (Done last)."""
        return list(self)

    def wait(self) -> Done | None:
        """Run to the end; return the final Done."""
        for _ in self:
            pass
        return self.run.done


class SyncSession:
    """Blocking facade over :class:`Session`, for scripts and REPLs.

    Same constructor arguments as :class:`Session`. ``send`` / ``run`` /
    ``resume`` return a :class:`SyncRun` (a plain iterator of updates; use
    ``with`` or ``.close()`` to stop early). Runs on a private event loop, so
    do not call it from inside a running event loop. ``close()`` (or ``with
    SyncSession(...)``) releases that loop.
    """

    def __init__(self, transport: Transport, **kwargs: Any) -> None:
        self.session: Session = Session(transport, **kwargs)
        self._runner = asyncio.Runner()
        self._closed = False

    def _call(self, coro: Any) -> Any:
        """Run ``coro`` on the private loop.

        Raises:
            RuntimeError: called from inside a running event loop (async code,
                a notebook: use :class:`Session` there), or after ``close()``.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            coro.close()
            raise RuntimeError(
                "SyncSession cannot be used inside a running event loop "
                "(async code, Jupyter): use agui.session.Session there"
            )
        if self._closed:
            coro.close()
            raise RuntimeError("this SyncSession is closed")
        return self._runner.run(coro)

    @property
    def conversation(self) -> Conversation:
        """The session's Conversation."""
        return self.session.conversation

    @property
    def messages(self) -> list[Message]:
        """Messages so far."""
        return self.session.messages

    @property
    def state(self) -> Any:
        """Agent state so far."""
        return self.session.state

    @property
    def pending_interrupts(self) -> list[Interrupt]:
        """Interrupts waiting for :meth:`resume`."""
        return self.session.pending_interrupts

    def send(self, text: Any, **overrides: Any) -> SyncRun:
        """See :meth:`Session.send`."""
        return SyncRun(self, self.session.send(text, **overrides))

    def run(self, **overrides: Any) -> SyncRun:
        """See :meth:`Session.run`."""
        return SyncRun(self, self.session.run(**overrides))

    def resume(self, answers: Mapping[str, Any], **kwargs: Any) -> SyncRun:
        """See :meth:`Session.resume`."""
        return SyncRun(self, self.session.resume(answers, **kwargs))

    def close(self) -> None:
        """Close any open run and the private event loop."""
        ref = self.session._active_ref
        active = ref() if ref is not None else None
        if self._closed:
            return
        if active is not None:
            self._call(active.aclose())
        self._closed = True
        self._runner.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
