"""Session: one conversation (thread) with an agent, across runs, over any transport.

::

    session = Session(HttpTransport("http://127.0.0.1:8000/agent"), tools=[...])
    async with session.send("add a task: buy milk") as run:
        async for update in run:
            ...                      # typed agui.updates values, Done last
    if session.pending_interrupts:
        async for update in session.resume({"i1": resolved({"approved": True})}):
            ...

A session builds each request (:mod:`agui.request`) and runs it as a
:class:`~agui.run.Run`, whose response one :class:`~agui.pipeline.Pipeline`
applies to the session's :class:`~agui.apply.Conversation`: several runs in one
response are applied in order, each ending with its own ``Done``. Every run
must carry the request's ``threadId``: a RUN_STARTED on another thread is the
protocol violation ``run_started_thread_mismatch`` (tolerant: reported and not
applied, nor is anything of that run; strict: the run fails). One run streams
at a time: starting a run ends the session's previous one if it is still open.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET

from agui.apply.records import MessageRecord
from agui.errors import ResumeError
from agui.interrupts import build_resume, is_expired
from agui.middleware import MiddlewareFn
from agui.pipeline import Pipeline
from agui.request import build_run_input, convert_list, is_parts
from agui.run import Run, _RunState
from agui.updates import Update
from agui.wire.sse import MAX_FRAME_BYTES

if TYPE_CHECKING:
    from agui.transports import Transport
    from agui.types import Interrupt, Message, RunAgentInput

__all__ = ["Run", "Session", "SyncRun", "SyncSession"]

logger: logging.Logger = logging.getLogger(__name__)

Subscriber = Callable[[Update], Any]
"""``callback(update)``, sync or async (see :meth:`Session.subscribe`)."""


class Session:
    """A conversation with one agent over a :class:`agui.transports.Transport`.

    Args:
        transport: e.g. :class:`~agui.transports.HttpTransport` or
            :class:`~agui.transports.ReplayTransport`.
        thread_id: the thread (default: a new uuid4).
        tools, context: ``Tool`` / ``Context`` structs or wire dicts offered
            on every run.
        state: the initial agent state (any JSON; default: none, which is
            sent as ``{}``, as is ``None``).
        forwarded_props: ``forwardedProps`` sent on every run (default ``{}``,
            as is ``None``; see :mod:`agui.request`).
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
        max_frame_bytes: int = MAX_FRAME_BYTES,
    ) -> None:
        from agui.apply import Conversation
        from agui.types import Context, Message, Tool

        if verify not in ("strict", "tolerant", "off"):
            raise ValueError(f"verify must be strict, tolerant or off, got {verify!r}")
        self.transport = transport
        self.thread_id: str = thread_id or str(uuid.uuid4())
        self.tools: list[Tool] = convert_list(tools, Tool, "tools")
        self.context: list[Context] = convert_list(context, Context, "context")
        self.forwarded_props = forwarded_props
        self.verify = verify
        self.middleware: list[MiddlewareFn] = list(middleware)
        self.max_frame_bytes = max_frame_bytes
        messages = convert_list(messages, Message, "messages")
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

        if not isinstance(content, str) and not is_parts(content):
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
        return self._build_input(overrides)

    def _build_input(
        self, overrides: dict[str, Any], user: Any = None, mid: str = ""
    ) -> RunAgentInput:
        # with ``user``: the input as if that user message were added (it is added
        # only once the input is built, so a failure leaves no stray message)
        messages = self.conversation.input_messages()
        if user is not None:
            messages.append(_user_record(mid, user).build())
        return build_run_input(
            thread_id=self.thread_id,
            run_id=str(uuid.uuid4()),
            messages=messages,
            state=self.conversation.input_state(),
            tools=self.tools,
            context=self.context,
            forwarded_props=self.forwarded_props,
            overrides=overrides,
        )

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
        mid = message_id or str(uuid.uuid4())
        run_input = self._build_input(overrides, text, mid)
        self.conversation.add_user_message(text, mid)
        return self._new_run(run_input)

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
        if text is None:
            return self._new_run(self.build_input(resume=resume, **overrides))
        mid = str(uuid.uuid4())
        run_input = self._build_input({"resume": resume, **overrides}, text, mid)
        self.conversation.add_user_message(text, mid)
        return self._new_run(run_input)

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

    def _active_run(self) -> Run | None:
        """The run being streamed, while something references it."""
        return self._active_ref() if self._active_ref is not None else None

    async def _begin(
        self, run_input: Any, state: _RunState, run_ref: weakref.ref[Run]
    ) -> Pipeline:
        """A run starts streaming: end the previous one if it is still open (one
        response applies to the conversation at a time); its pipeline."""
        previous = self._active_state
        if previous is not None and previous is not state and not previous.final:
            run = self._active_run()
            if run is not None and run._state is previous:
                await run.aclose()
            if previous.pipeline is not None:  # (a dropped Run closes its stream later)
                previous.pipeline.cancel("cancelled by client")
        pipeline = Pipeline(
            self.conversation,
            verify=self.verify,  # type: ignore[arg-type]
            max_frame_bytes=self.max_frame_bytes,
            thread_id=run_input.thread_id,  # every run must answer the thread we sent
        )
        state.pipeline = pipeline
        self._active_ref, self._active_state = run_ref, state
        return pipeline

    def _end(self, state: _RunState) -> None:
        """A run's stream is over."""
        if self._active_state is state:
            self._active_ref = self._active_state = None


def _user_record(mid: str, text: Any) -> MessageRecord:
    """The record ``Conversation.add_user_message(text, mid)`` would add."""
    if isinstance(text, str):
        return MessageRecord.text_message(mid, "user", text)
    rec = MessageRecord(mid, "user")
    rec.content = text
    return rec


# the blocking facade lives in agui.sync; importable from here as before
from agui.sync import SyncRun, SyncSession
