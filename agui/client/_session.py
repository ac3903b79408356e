"""Session: one conversation (thread) with an agent, across runs, over any transport.

::

    session = Session("http://127.0.0.1:8000/agent", tools=[...])
    async with session.send("add a task: buy milk") as run:
        async for update in run:
            ...                      # typed agui.updates values, Done last
    if session.pending_interrupts:
        async for update in session.resume({"i1": resolved({"approved": True})}):
            ...

A session builds each request (:mod:`agui.client._input`) and runs it as a
:class:`~agui.client._run.Run`, whose response one :class:`~agui.pipeline._pipeline.Pipeline`
applies to the session's :class:`~agui.pipeline._apply.Conversation`: several runs in one
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
from typing import TYPE_CHECKING, Any, Unpack, cast

from msgspec import UNSET

from agui._jsonvalue import JSONObject, JSONValue, is_json_object
from agui._log import enable_debug
from agui.client._closing import CANCELLED
from agui.client._idle import DEFAULT_IDLE_TIMEOUT, idle_seconds
from agui.client._input import (
    RunOverrides,
    ToolResultContent,
    UserContent,
    build_run_input,
    convert_list,
    tool_result_event,
)
from agui.client._interrupts import build_resume, is_expired
from agui.client._middleware import MiddlewareFn
from agui.client._run import Run
from agui.errors import ResumeError
from agui.pipeline._apply.patch import clone_json
from agui.updates import Update
from agui.wire._sse import DEFAULT_MAX_FRAME_BYTES

if TYPE_CHECKING:
    from datetime import datetime

    from msgspec import UnsetType

    from agui.client._interrupts import Answer
    from agui.client._run import RunCore
    from agui.client._tools import ClientTool, ClientTools
    from agui.pipeline._pipeline import VerifyMode
    from agui.transports import Transport
    from agui.types import Context, Interrupt, Message, ResumeEntry, RunAgentInput, Tool

__all__ = ["Run", "RunSlot", "Session", "Subscriber", "Subscribers"]

_VERIFY_MODES: dict[str, VerifyMode] = {"strict": "strict", "tolerant": "tolerant", "off": "off"}
"""``verify=`` -> the pipeline's verify mode (any other value is refused)."""

logger: logging.Logger = logging.getLogger("agui.client.session")


Subscriber = Callable[[Update], Any]
"""``callback(update)``, sync or async (see :meth:`Subscribers.add`)."""


class Subscribers:
    """The update callbacks of a session, called for every update of its runs."""

    __slots__ = ("live",)

    def __init__(self) -> None:
        self.live: list[Subscriber] = []
        """The callbacks themselves (read-only; change them with :meth:`add`): a
        run loop tests this list, not the object, per update (no call)."""

    def add(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(update)`` (sync, or async and awaited) for every
        update, before it is yielded; returns an unsubscribe function."""
        self.live.append(callback)

        def unsubscribe() -> None:
            if callback in self.live:
                self.live.remove(callback)

        return unsubscribe

    def __bool__(self) -> bool:
        return bool(self.live)

    async def notify(self, update: Update) -> None:
        """Call every callback with ``update``; one that raises is logged
        (logger ``agui.client.session``) and skipped, as the reference client does."""
        for callback in list(self.live):
            try:
                result = callback(update)
                if asyncio.iscoroutine(result):
                    await result
            except Exception:  # as the reference client: logged, skipped
                logger.exception("session subscriber %r failed on %r", callback, update)


class RunSlot:
    """Which run of a session is streaming: one at a time. A run takes the slot
    when it starts sending (ending the previous run if it is still open) and
    gives it back when its stream is over.

    ``lost``: the session's latest run while its response was lost with the run
    open (a resumable stream; out of tries, refused, or idle): attaching to that
    run continues it (:meth:`Session.attach`); any run taking the slot clears it."""

    __slots__ = ("_core", "_run", "lost")

    def __init__(self) -> None:
        self._run: weakref.ref[Run] | None = None
        self._core: RunCore | None = None
        self.lost: RunCore | None = None

    @property
    def active(self) -> Run | None:
        """The run being streamed, while something references it."""
        return self._run() if self._run is not None else None

    @property
    def busy(self) -> bool:
        """True while a run is streaming."""
        core = self._core
        return core is not None and not core.final

    async def take(self, core: RunCore, run: weakref.ref[Run]) -> None:
        """``core`` becomes the active run; the previous one, if still open, is
        closed first (one response applies to the conversation at a time)."""
        previous = self._core
        if previous is not None and previous is not core and not previous.final:
            prior = self.active  # (the Run of ``previous``, while something references it)
            if prior is not None:
                await prior.aclose()
            if previous.pipeline is not None:  # (a dropped Run closes its stream later)
                previous.pipeline.cancel(CANCELLED)
        self._run, self._core = run, core
        self.lost = None

    def release(self, core: RunCore) -> None:
        """``core``'s stream is over: the slot is free (unless another run took it)."""
        if self._core is core:
            self._run = self._core = None


class Session:
    """A conversation with one agent over a :class:`agui.transports.Transport`.

    Args:
        transport: the agent's URL (a ``str``: the transport is
            :func:`agui.transports.default_transport`'s, ``AiohttpTransport``
            when the ``fast`` extra is installed and no proxy is set, else
            ``HttpTransport``), or any transport, e.g.
            :class:`~agui.transports.HttpTransport` or
            :class:`~agui.transports.ReplayTransport`.
        headers: request headers sent with every request to that URL (credentials:
            ``{"Authorization": "Bearer ..."}``; never logged, and dropped on a
            redirect to another origin); only with a URL.
        thread_id: the thread (default: a new uuid4).
        tools: ``Tool`` structs or wire dicts offered on every run.
        context: ``Context`` structs or wire dicts sent on every run.
        state: the initial agent state (any JSON; default: none, which is
            sent as ``{}``, as is ``None``).
        forwarded_props: ``forwardedProps`` sent on every run (default ``{}``,
            as is ``None``; see :mod:`agui.client._input`).
        verify: ``"tolerant"`` (default) | ``"strict"`` | ``"off"``; see
            :mod:`agui.pipeline._pipeline`.
        middleware: :mod:`agui.client._middleware` callables, outermost first.
        messages: initial messages (structs or wire dicts).
        max_frame_bytes: SSE frame cap (bytes).
        idle_timeout: seconds a run may go without an AG-UI event before it
            ends with ``TransportError(kind="idle_timeout")`` (default
            :data:`~agui.client._idle.DEFAULT_IDLE_TIMEOUT`, 300 s; ``None`` or 0:
            no limit). SSE comments, blank lines and keep-alives do not count,
            unlike the transport's read timeout, which any byte resets; see
            :mod:`agui.client._idle`. An idle run is not resumed by a reconnect.
        client_tools: Python functions (or :class:`~agui.client._tools.ClientTool`
            objects, or a :class:`~agui.client._tools.ClientTools`) the SDK
            runs itself when the agent calls them: their ``Tool`` definitions
            are offered on every run (after ``tools``), and a run that ends
            with pending calls to them is continued (see :class:`~agui.client._run.Run`).
        max_tool_rounds: how many follow-up runs one iteration may start to
            answer client tool calls (default 8); past it the calls are left
            pending and an ``ErrorUpdate(ToolError(kind="max_tool_rounds"))``
            ends the iteration.
        debug: turn on :func:`agui._log.enable_debug` (the ``agui`` logger at
            DEBUG to stderr, for the whole process): each request sent, each
            warning and each error update is logged.

    Raises:
        agui.errors.DecodeError: a tool, context entry or message given as a
            dict does not fit its type (``path`` e.g. ``tools[0].description``).
        ValueError: ``verify`` is not one of the three modes, two tools
            share a name, ``max_tool_rounds`` is negative, or ``idle_timeout``
            is negative, NaN or infinite.

    Attributes: ``conversation`` (:class:`agui.pipeline._apply.Conversation`),
    ``thread_id``, ``tools``, ``context``, ``forwarded_props``, ``verify``,
    ``middleware``, ``client_tools`` (a ``ClientTools`` or None),
    ``max_tool_rounds``, ``idle_timeout`` (seconds or None; a change applies to
    the next run), :attr:`last_run`.
    """

    def __init__(
        self,
        transport: Transport | str,
        *,
        headers: Mapping[str, str] | None = None,
        thread_id: str | None = None,
        tools: Iterable[Tool | JSONObject] = (),
        context: Iterable[Context | JSONObject] = (),
        state: JSONValue = UNSET,
        forwarded_props: JSONValue = UNSET,
        verify: str = "tolerant",
        middleware: Iterable[MiddlewareFn] = (),
        messages: Iterable[Message | JSONObject] = (),
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        client_tools: ClientTools | Iterable[ClientTool | Callable[..., Any]] | None = None,
        max_tool_rounds: int = 8,
        debug: bool = False,
    ) -> None:
        from agui.client._tools import ClientTools
        from agui.pipeline._apply import Conversation
        from agui.types import Context, Message, Tool

        mode = _VERIFY_MODES.get(verify)
        if mode is None:
            raise ValueError(f"verify must be strict, tolerant or off, got {verify!r}")
        if max_tool_rounds < 0:
            raise ValueError(f"max_tool_rounds must be >= 0, got {max_tool_rounds}")
        if isinstance(transport, str):
            from agui.transports import default_transport

            transport = default_transport(transport, headers)
        elif headers is not None:
            raise ValueError("headers go with a URL; a transport takes its own headers")
        self.transport: Transport = transport
        self.thread_id: str = thread_id or str(uuid.uuid4())
        self.tools: list[Tool] = convert_list(tools, Tool, "tools")
        self.context: list[Context] = convert_list(context, Context, "context")
        self.forwarded_props = forwarded_props
        self.verify: VerifyMode = mode
        self.middleware: list[MiddlewareFn] = list(middleware)
        self.max_frame_bytes = max_frame_bytes
        self.idle_timeout: float | None = idle_seconds(idle_timeout)
        if client_tools is not None and not isinstance(client_tools, ClientTools):
            client_tools = ClientTools(client_tools)
        self.client_tools: ClientTools | None = client_tools or None
        self.max_tool_rounds = max_tool_rounds
        self.debug = debug
        if client_tools:
            names = [t.name for t in self.tools]
            twice = sorted({t.name for t in client_tools if t.name in names})
            if twice:
                raise ValueError(f"tools and client_tools both name {', '.join(twice)}")
        if debug:
            enable_debug()
        self.conversation: Conversation = Conversation(
            convert_list(messages, Message, "messages"), state=None if state is UNSET else state
        )
        self._last_ref: weakref.ref[Run] | None = None
        self._slot = RunSlot()  # the run being streamed
        self._subscribers = Subscribers()

    # ----------------------------------------------------------------- read

    @property
    def messages(self) -> list[Message]:
        """The conversation's messages (generated structs)."""
        return self.conversation.messages

    @property
    def state(self) -> Any:
        """The agent state as of the latest applied event (read-only: a change
        replaces it, so a value read here keeps showing the state of then)."""
        return self.conversation.state

    @property
    def pending_interrupts(self) -> list[Interrupt]:
        """Interrupts the latest run paused on (answer them with :meth:`resume`)."""
        return self.conversation.pending_interrupts

    @property
    def is_streaming(self) -> bool:
        """True while a run of this session is streaming (its edits between
        runs, :meth:`set_messages` and the like, are refused then)."""
        return self._slot.busy

    @property
    def active_run(self) -> Run | None:
        """The run being streamed (None between runs, or once it was dropped)."""
        return self._slot.active

    @property
    def last_run(self) -> Run | None:
        """The most recently created :class:`Run`, while something references it
        (the session keeps runs only weakly, so a dropped run can close)."""
        return self._last_ref() if self._last_ref is not None else None

    # ------------------------------------------------------------ subscribe

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(update)`` (sync, or async and awaited) for every
        update of every run, before the update is yielded. A callback that
        raises is logged (logger ``agui.client.session``) and skipped, as the
        reference client does: the run and the other subscribers go on.
        Returns an unsubscribe function."""
        return self._subscribers.add(callback)

    # ------------------------------------------------------------- messages

    def add_user_message(self, text: UserContent, message_id: str | None = None) -> str:
        """Append a user message without starting a run; returns its id."""
        return self.conversation.add_user_message(text, message_id)

    def add_tool_result(
        self, tool_call_id: str, content: ToolResultContent, *, message_id: str | None = None
    ) -> str:
        """Answer a client-side tool call (one of ``Done.pending_tool_call_ids``).

        Appends a tool message (``content``: str or content parts; a dict or
        list of non-parts is sent as its JSON text) placed after the call, to
        be sent with the next run (``session.run()``). Returns the message id.

        Raises:
            ValueError: ``tool_call_id`` is no tool call of the conversation
                (the message names the pending ids).
        """
        conv = self.conversation
        if conv.tool_call(tool_call_id) is None and tool_call_id not in conv.pending_tool_call_ids:
            pending = ", ".join(conv.unanswered_tool_call_ids()) or "none"
            raise ValueError(
                f"no tool call {tool_call_id!r} in the conversation (pending: {pending})"
            )

        event = tool_result_event(tool_call_id, content, message_id)
        conv.apply(event)
        return event.message_id

    def set_messages(self, messages: Iterable[Message | JSONObject]) -> None:
        """Replace the conversation's messages (structs or wire dicts), between runs.

        Raises:
            RuntimeError: a run is streaming.
            agui.errors.DecodeError: a dict does not fit (``path`` ``messages[i]...``).
            ValueError: two messages share an id.
        """
        from agui.types import Message

        self._check_idle("set_messages")
        self.conversation.replace_messages(convert_list(messages, Message, "messages"))

    def add_message(self, message: Message | JSONObject) -> str:
        """Append one message (a struct or a wire dict), between runs; returns its id.

        Raises: as :meth:`add_messages`.
        """
        return self.add_messages([message])[0]

    def add_messages(self, messages: Iterable[Message | JSONObject]) -> list[str]:
        """Append messages (structs or wire dicts) at the end, between runs;
        returns their ids. All or nothing.

        Raises:
            RuntimeError: a run is streaming.
            agui.errors.DecodeError: a dict does not fit (``path`` ``messages[i]...``).
            ValueError: an id is already in the conversation or given twice.
        """
        from agui.types import Message

        self._check_idle("add_messages")
        return self.conversation.add_messages(convert_list(messages, Message, "messages"))

    def set_state(self, state: JSONValue) -> None:
        """Replace the agent state (any JSON; ``None``: absent, sent as ``{}``),
        between runs. A private copy is kept.

        Raises:
            RuntimeError: a run is streaming.
        """
        self._check_idle("set_state")
        self.conversation.replace_state(clone_json(state))

    def fork(self, thread_id: str | None = None) -> Session:
        """A new Session with a copy of this one's messages and state and the
        same transport and configuration, on a new thread (``thread_id``
        None: a new uuid4) or on the one given (``fork(session.thread_id)``
        to stay on this thread). It has its own subscribers (none), runs and
        conversation: what either does later does not change the other. It
        starts with no pending interrupts or tool calls. Cost: O(messages);
        the state is shared, as the conversation never mutates it.
        """
        return Session(
            self.transport,
            thread_id=thread_id,
            tools=self.tools,
            context=self.context,
            state=self.conversation.state,
            forwarded_props=self.forwarded_props,
            verify=self.verify,
            middleware=self.middleware,
            messages=self.conversation.messages,
            max_frame_bytes=self.max_frame_bytes,
            idle_timeout=self.idle_timeout,
            client_tools=self.client_tools,
            max_tool_rounds=self.max_tool_rounds,
        )

    def _check_idle(self, what: str) -> None:
        if self._slot.busy:
            raise RuntimeError(
                f"{what}() while a run is streaming: finish it or close it"
                " (await run.aclose(), or leave its async with) first"
            )

    # ----------------------------------------------------------------- runs

    def build_input(self, **overrides: object) -> RunAgentInput:
        """The RunAgentInput the next run would send (a fresh ``runId`` each call).

        ``overrides``: any RunAgentInput field by its snake_case name
        (``run_id``, ``tools``, ``state``, ``forwarded_props``, ``resume`` ...);
        a ``state`` or ``forwarded_props`` of ``None`` (or ``UNSET``) is sent as
        ``{}``, the spec's meaning of an absent one.

        ``tools``, ``context`` and ``messages`` overrides may hold wire dicts,
        as the constructor's arguments may. The client tools' definitions are
        always offered, after ``tools`` (the session's or the override's),
        unless a tool there has the same name.

        Raises:
            TypeError: an override that is not a RunAgentInput field.
            agui.errors.DecodeError: a dict in ``tools``, ``context`` or
                ``messages`` does not fit its type (``path`` e.g. ``tools[0].name``).
        """
        fields = _convert_overrides(overrides)
        run_input: RunAgentInput = build_run_input(
            thread_id=self.thread_id,
            run_id=str(uuid.uuid4()),
            messages=self.conversation.input_messages(),
            state=self.conversation.input_state(),
            tools=self.tools,
            context=self.context,
            forwarded_props=self.forwarded_props,
            overrides=fields,
            extra_tools=self.client_tools.definitions if self.client_tools else (),
        )
        return run_input

    def run(self, **overrides: Unpack[RunOverrides]) -> Run:
        """Start a run with the conversation as it is (see :meth:`build_input`).

        Raises:
            ResumeError: interrupts are pending and ``resume`` does not answer
                every one of them (use :meth:`resume`), or answers an expired
                one other than cancelled.
        """
        self._check_resume(overrides.get("resume", UNSET))
        return self._new_run(self.build_input(**overrides), overrides)

    def attach(self, run_id: str, *, cursor: str = "0", **overrides: object) -> Run:
        """Join run ``run_id`` of this session's thread in progress on a resumable
        server: the run's input is re-sent with ``Last-Event-ID``, the agent is
        not started again, and the run's events update the conversation as a
        live run's do. Where the request asks from, one rule:

        * this session holds the run's state: its latest run was ``run_id`` and
          lost its stream with the run open (out of tries, refused, idle; its
          ``Done(failed)`` kept the partial messages): the run continues from
          the last cursor the session processed, its verification state (open
          messages, tool calls, steps) carried on; ``cursor`` is not needed.
        * otherwise (a new session after a restart of the client, or another run
          since): the run's log is replayed from its first event, so the
          conversation gets the run whole; with ``cursor`` other than ``"0"`` (a
          :attr:`Run.cursor` the caller kept) the updates of the frames up to and
          including that cursor are applied but not handed out (nor told to
          the subscribers: the caller saw them), except a ``Done``; a cursor the
          log never reaches comes out as ``WarningUpdate(attach_cursor_unseen)``
          before the ``Done``. Middleware sees the whole replay. Give such a
          session the thread's messages from before the run, not the run's own.

        Either way no event is lost or applied twice. A server that does not hold
        the run answers ``410`` (``ErrorUpdate`` + ``Done(failed)``); the transport
        must take ``last_event_id`` (HttpTransport and AiohttpTransport do)."""
        run_input = self.build_input(run_id=run_id, **overrides)
        run = Run(self, run_input, slot=self._slot, subscribers=self._subscribers, cursor=cursor)
        self._last_ref = weakref.ref(run)
        return run

    def send(
        self, text: UserContent, *, message_id: str | None = None, **overrides: Unpack[RunOverrides]
    ) -> Run:
        """Add a user message (``text``: str or content parts) and start a run.

        Raises:
            ResumeError: interrupts are pending (answer them with
                :meth:`resume`, which can also carry a user message), or
                client tool calls of the latest run are unanswered (answer
                them with :meth:`add_tool_result`, then :meth:`run`).
        """
        self._check_resume(overrides.get("resume", UNSET))
        unanswered = self.conversation.unanswered_tool_call_ids()
        if unanswered:
            raise ResumeError(
                f"the thread has {len(unanswered)} unanswered tool call(s): "
                f"{', '.join(unanswered)} (answer each with session.add_tool_result(id, content),"
                " then continue with session.run())"
            )
        fields = _convert_overrides(overrides)  # a bad override adds no message
        return self._new_run(self._input_with_user(text, message_id, fields), fields)

    def _input_with_user(
        self, text: UserContent, message_id: str | None, overrides: Mapping[str, object]
    ) -> RunAgentInput:
        """Add the user message and build the input; when building fails (a
        state the request cannot carry, say) the message is taken back, so a
        failed ``send`` leaves no stray message."""
        conversation = self.conversation
        conversation.add_user_message(text, message_id)
        try:
            return self.build_input(**overrides)
        except BaseException:
            conversation.replace_messages(conversation.messages[:-1])
            raise

    def resume(
        self,
        answers: Mapping[str, Answer | ResumeEntry | JSONValue],
        *,
        text: UserContent | None = None,
        now: datetime | None = None,
        **overrides: Unpack[RunOverrides],
    ) -> Run:
        """Answer every pending interrupt in ONE request and start that run.

        Args:
            answers: interrupt id -> answer: :func:`agui.client._interrupts.resolved`
                ``(payload)``, :func:`agui.client._interrupts.cancelled` ``()``, a
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
        if "resume" in overrides:
            raise TypeError("resume() builds the resume itself: pass answers, not resume=")
        fields: dict[str, object] = {"resume": resume, **overrides}
        if text is not None:
            return self._new_run(self._input_with_user(text, None, fields), overrides)
        return self._new_run(self.build_input(**fields), overrides)

    def _check_resume(self, resume: Iterable[ResumeEntry | JSONObject] | UnsetType | None) -> None:
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
            (e.get("interruptId") if is_json_object(e) else e.interrupt_id): e for e in resume
        }
        missing = [i.id for i in pending if i.id not in answered]
        if missing:
            raise ResumeError(
                f"{len(missing)} pending interrupt(s) not addressed by resume: {', '.join(missing)}"
            )
        for interrupt in pending:
            entry = answered[interrupt.id]
            status = entry.get("status") if is_json_object(entry) else entry.status
            if status != "cancelled" and is_expired(interrupt):
                raise ResumeError(
                    f"interrupt {interrupt.id} expired at {interrupt.expires_at} and can no longer"
                    " be answered; cancel it to continue the thread"
                )

    def _new_run(self, run_input: RunAgentInput, overrides: Mapping[str, object]) -> Run:
        # follow-up (client tool) rounds keep the overrides that configure the
        # thread, not those of this one request
        carry = {k: v for k, v in overrides.items() if k not in _PER_REQUEST}
        run = Run(self, run_input, slot=self._slot, subscribers=self._subscribers, carry=carry)
        self._last_ref = weakref.ref(run)
        return run


_PER_REQUEST = frozenset({"run_id", "resume", "messages", "state", "parent_run_id"})


def _convert_overrides(overrides: Mapping[str, object]) -> dict[str, object]:
    """The overrides with wire dicts in ``tools`` / ``context`` / ``messages``
    made structs (DecodeError naming the path when one does not fit)."""
    from agui.types import Context, Message, Tool

    fields = dict(overrides)
    for name, kind in (("tools", Tool), ("context", Context), ("messages", Message)):
        value = fields.get(name)
        if value is not None and value is not UNSET:
            items = cast("Iterable[object]", value)  # not iterable: TypeError, as ever
            fields[name] = convert_list(items, kind, name)
    return fields
