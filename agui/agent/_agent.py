"""``AbstractAgent`` and ``HttpAgent``: the ``@ag-ui/client`` agent API over one :class:`Session`.

An agent owns a :class:`~agui.client._session.Session` (its conversation, thread,
pipeline) and is a thin face over it: :meth:`AbstractAgent.run_agent` starts a
session run whose transport is the agent's own :meth:`~AbstractAgent.run`,
with the subscriber stage (:mod:`agui.agent._subscriber_stage`) as the outermost
middleware, and consumes the run's updates.

Run lifecycle, in the reference's order: ``on_run_initialized`` (mutations
land before the input is built, so they are sent), the events (per event:
``on_event``, the typed callback, application, ``on_new_message`` /
``on_new_tool_call``, ``on_messages_changed``, ``on_state_changed``), then on
an unrecoverable failure ``on_run_failed`` (the error is raised from
``run_agent`` unless a subscriber returns ``stop_propagation=True``), and
always ``on_run_finalized``. A RUN_ERROR event is the agent's answer, not a
failure of the client: ``run_agent`` returns (``result.done.outcome ==
"failed"``).
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

import msgspec

from agui._log import enable_debug
from agui.agent._edit import ConversationEditor
from agui.agent._subscriber import (
    SubscriberErrors,
    SubscriberFailure,
    SubscriberParams,
    call_subscribers,
    check_subscriber,
    notify_now,
)
from agui.agent._subscriber_stage import SubscriberStage
from agui.client._capabilities import decode_capabilities
from agui.client._idle import DEFAULT_IDLE_TIMEOUT, idle_seconds
from agui.client._input import convert_list
from agui.client._interrupts import build_resume
from agui.client._middleware import MiddlewareFn
from agui.client._session import Session
from agui.errors import RunError, SubscriberError
from agui.transports import HttpTransport, default_transport
from agui.transports._document import get_document
from agui.types import AgentCapabilities, Context, Message, RunAgentInput, Tool
from agui.updates import Done

if TYPE_CHECKING:
    from agui.client._run import Run
    from agui.client._tools import ClientTool, ClientTools
    from agui.transports import AiohttpTransport
    from agui.types import AgentCapabilities, Interrupt, RunAgentInput

__all__ = ["AbstractAgent", "AgentOptions", "HttpAgent", "RunAgentResult", "Subscription"]


class AgentOptions(TypedDict, total=False):
    """The keywords of :class:`AbstractAgent` (see there), as an agent subclass such as
    :class:`HttpAgent` takes and hands them on: ``**options: Unpack[AgentOptions]``."""

    agent_id: str | None
    description: str
    thread_id: str | None
    initial_messages: Iterable[Any]
    initial_state: Any
    debug: bool
    verify: str
    client_tools: ClientTools | Iterable[ClientTool | Callable[..., Any]] | None
    max_tool_rounds: int
    idle_timeout: float | None
    subscriber_errors: str


class RunAgentResult(msgspec.Struct, frozen=True):
    """What :meth:`AbstractAgent.run_agent` returns.

    ``result``: RUN_FINISHED ``result`` of a success outcome (else None).
    ``new_messages``: messages whose ids were not held before the run, in order.
    ``done``: the run's final :class:`~agui.updates.Done` (outcome, reason, usage).
    ``subscriber_errors``: the callbacks that raised during the run (one
    :class:`~agui.agent._subscriber.SubscriberFailure` per subscriber and callback,
    ``on_run_finalized`` included), in the order they first raised.
    ``cursor``: the SSE cursor of the last frame processed (None on a stream
    without cursors), for a later :meth:`AbstractAgent.connect_agent`.
    """

    result: Any
    new_messages: list[Message]
    done: Done | None = None
    subscriber_errors: list[SubscriberFailure] = []
    cursor: str | None = None


class Subscription:
    """Returned by :meth:`AbstractAgent.subscribe`; call it or :meth:`unsubscribe`."""

    def __init__(self, agent: AbstractAgent, subscriber: Any) -> None:
        self._agent = agent
        self.subscriber: Any = subscriber

    def unsubscribe(self) -> None:
        """Stop notifying the subscriber (idempotent)."""
        subs = self._agent.subscribers
        if self.subscriber in subs:
            subs.remove(self.subscriber)

    def __call__(self) -> None:
        self.unsubscribe()


class _AgentTransport:
    """The session's transport: the agent's own ``run(input)``, or its
    ``connect(input, last_event_id=...)`` when a run is resumed or joined; the
    reconnect policy, URL and headers of the agent's HTTP transport, if any."""

    def __init__(self, agent: AbstractAgent) -> None:
        self.agent = agent

    def stream(
        self, run_input: RunAgentInput, *, last_event_id: str | None = None
    ) -> AsyncIterator[Any]:
        if last_event_id is None:
            return self.agent.run(run_input)
        return self.agent.connect(run_input, last_event_id=last_event_id)

    @property
    def reconnect(self) -> Any:
        return getattr(getattr(self.agent, "transport", None), "reconnect", None)

    @property
    def url(self) -> Any:
        return getattr(getattr(self.agent, "transport", None), "url", None)

    @property
    def headers(self) -> Any:
        return getattr(getattr(self.agent, "transport", None), "headers", None)


class AbstractAgent:
    """Base of every agent: conversation, subscribers, middleware, runs.

    Subclasses implement :meth:`run` (the transport part): ``run(input) ->
    AsyncIterator[bytes | str | Event]``, what an :class:`agui.transports.Transport`
    ``stream`` yields (SSE bytes, one event's JSON text, or event structs).

    Args (all keyword): ``agent_id``, ``description``, ``thread_id`` (default a
    new uuid4), ``initial_messages`` (structs or wire dicts), ``initial_state``
    (any JSON), ``debug`` (True: :func:`agui._log.enable_debug`), ``verify``
    (``strict`` | ``tolerant`` | ``off``, see :mod:`agui.pipeline._pipeline`),
    ``client_tools`` / ``max_tool_rounds`` (Python functions the SDK runs when
    the agent calls them, offered on every run, as
    :class:`~agui.client._session.Session` takes them: one ``run_agent`` answers the
    calls and continues the conversation until no call to them is pending),
    ``idle_timeout`` (seconds without an AG-UI event before a run ends with
    ``TransportError(kind="idle_timeout")``; default
    :data:`~agui.client._idle.DEFAULT_IDLE_TIMEOUT`, 300 s; ``None`` or 0: off;
    keep-alive comments do not count; ``run_agent(idle_timeout=...)`` overrides it
    for one run), ``subscriber_errors`` (``"warn"``, the default: a callback that raises is
    skipped, the run goes on, and the error is reported once per callback and
    run as a :class:`~agui.errors.SubscriberWarning` and on
    ``RunAgentResult.subscriber_errors``; ``"raise"``: the same, then
    ``run_agent`` raises :class:`~agui.errors.SubscriberError` -- for tests).

    Raises:
        agui.errors.DecodeError: an initial message does not fit ``Message``.
        ValueError: ``verify`` is not one of the three modes,
            ``max_tool_rounds`` is negative, ``idle_timeout`` is negative, NaN or
            infinite, or ``subscriber_errors`` is not ``"warn"`` or ``"raise"``.
    """

    def __init__(
        self,
        *,
        agent_id: str | None = None,
        description: str = "",
        thread_id: str | None = None,
        initial_messages: Iterable[Any] = (),
        initial_state: Any = msgspec.UNSET,
        debug: bool = False,
        verify: str = "tolerant",
        client_tools: ClientTools | Iterable[ClientTool | Callable[..., Any]] | None = None,
        max_tool_rounds: int = 8,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        subscriber_errors: str = "warn",
    ) -> None:
        if subscriber_errors not in ("warn", "raise"):
            raise ValueError(
                f"subscriber_errors must be 'warn' or 'raise', not {subscriber_errors!r}"
            )
        self.subscriber_errors: str = subscriber_errors
        self.agent_id: str | None = agent_id
        self.description: str = description
        self.debug: bool = debug
        if debug:
            enable_debug()
        self.subscribers: list[Any] = []
        self.middleware: list[MiddlewareFn] = []
        self.session: Session = Session(
            _AgentTransport(self),
            thread_id=thread_id,
            state=initial_state,
            messages=initial_messages,
            verify=verify,
            client_tools=client_tools,
            max_tool_rounds=max_tool_rounds,
            idle_timeout=idle_timeout,
        )
        self._editor = ConversationEditor(self.session)
        self._active: Run | None = None
        self._is_running = False
        self._connect_cursor: str | None = None  # set by connect_agent for its run_agent

    # ----------------------------------------------------------- transport

    def run(self, run_input: RunAgentInput) -> AsyncIterator[Any]:
        """The transport part: the response to ``run_input`` as SSE bytes, JSON
        text or event structs. Subclasses must implement it."""
        raise NotImplementedError(f"{type(self).__name__} must implement run(input)")

    def connect(self, run_input: RunAgentInput, *, last_event_id: str) -> AsyncIterator[Any]:
        """The transport part of a resumed or joined run (the reference's
        ``connect()``): the rest of run ``run_input.run_id`` after cursor
        ``last_event_id`` (``"0"``: from its first event), as :meth:`run`
        returns a response. Default: not supported (NotImplementedError, which
        the run reports as a failed transport); ``HttpAgent`` re-POSTs with
        ``Last-Event-ID``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement connect()")

    async def fetch_capabilities(self) -> Any:
        """The capabilities retrieval hook: the raw ``AgentCapabilities`` (JSON
        text/bytes, a dict or the struct), or None when the agent advertises none.
        Default: None. Override it (``HttpAgent`` GETs ``capabilities_url``)."""
        return None

    # ----------------------------------------------------------- read

    @property
    def thread_id(self) -> str:
        """The conversation thread id."""
        return self.session.thread_id

    @property
    def idle_timeout(self) -> float | None:
        """Seconds a run may go without an AG-UI event (None: no limit); set it to
        change later runs (0 or None: off; ValueError when negative, NaN or infinite)."""
        return self.session.idle_timeout

    @idle_timeout.setter
    def idle_timeout(self, value: float | None) -> None:
        self.session.idle_timeout = idle_seconds(value)

    @property
    def messages(self) -> list[Message]:
        """The current message history (generated structs; treat as read-only)."""
        return self.session.messages

    @property
    def state(self) -> Any:
        """The agent state as of this read: ``{}`` before the agent has a state
        (as the reference's ``agent.state``), else any JSON value (copy-on-write: a
        later change replaces it, so a value read here keeps showing the state of
        then; treat it as read-only)."""
        return self._editor.state

    @property
    def pending_interrupts(self) -> list[Interrupt]:
        """Interrupts the latest run paused on (answer with ``run_agent(resume=...)``)."""
        return self.session.pending_interrupts

    @property
    def is_running(self) -> bool:
        """True while :meth:`run_agent` is running."""
        return self._is_running

    # ----------------------------------------------------------- edit

    def _params(self, **extras: Any) -> SubscriberParams[Any]:
        editor = self._editor
        return SubscriberParams(
            self, None, lambda: editor.conversation.messages, lambda: editor.state, **extras
        )

    def add_message(self, message: Any) -> None:
        """Append one message; notifies ``on_new_message``, ``on_new_tool_call``
        (each call of an assistant message), then ``on_messages_changed``.

        Raises: as :meth:`add_messages`.
        """
        self.add_messages([message])

    def add_messages(self, messages: Iterable[Any]) -> None:
        """Append messages (structs or wire dicts); notifies as :meth:`add_message`.

        Raises:
            agui.errors.DecodeError: a dict does not fit ``Message``.
            ValueError: an id is already in the conversation or given twice
                (nothing is added).
        """
        added = self._editor.add_messages(messages)
        for message in added:
            notify_now(self.subscribers, "on_new_message", partial(self._params, message=message))
            for call in getattr(message, "tool_calls", None) or ():
                notify_now(
                    self.subscribers, "on_new_tool_call", partial(self._params, tool_call=call)
                )
        notify_now(self.subscribers, "on_messages_changed", self._params)

    def set_messages(self, messages: Iterable[Any]) -> None:
        """Replace the messages (structs or wire dicts; the new list is the whole
        list); notifies ``on_messages_changed``.

        Raises:
            agui.errors.DecodeError: a dict does not fit ``Message``.
            ValueError: two messages share an id (nothing is changed).
        """
        self._editor.set_messages(messages)
        notify_now(self.subscribers, "on_messages_changed", self._params)

    def set_state(self, state: Any) -> None:
        """Replace the state (any JSON; a private copy is kept); notifies
        ``on_state_changed``."""
        self._editor.set_state(state)
        notify_now(self.subscribers, "on_state_changed", self._params)

    # ----------------------------------------------------------- subscribe

    def subscribe(self, subscriber: Any) -> Subscription:
        """Register a subscriber (an :class:`~agui.agent.AgentSubscriber` or any
        object with ``on_*`` callbacks) for every later run.

        Raises:
            TypeError: a subscriber written the TypeScript way (a dict, a plain
                function, camelCase callbacks), naming the Python spelling; see
                :func:`agui.agent._subscriber.check_subscriber`.
        """
        check_subscriber(subscriber)
        self.subscribers.append(subscriber)
        return Subscription(self, subscriber)

    def use(self, *middleware: MiddlewareFn) -> AbstractAgent:
        """Add :mod:`agui.client._middleware` callables (first = outermost); returns the agent."""
        self.middleware.extend(middleware)
        return self

    # ----------------------------------------------------------- capabilities

    async def get_capabilities(self) -> AgentCapabilities | None:
        """The agent's ``AgentCapabilities`` (decoded leniently by
        :func:`agui.client._capabilities.decode_capabilities`), or None when
        :meth:`fetch_capabilities` finds none.

        Raises:
            agui.errors.DecodeError: the advertised capabilities do not decode.
            agui.errors.TransportError: retrieval failed (``HttpAgent``).
        """

        raw = await self.fetch_capabilities()
        if raw is None or isinstance(raw, AgentCapabilities):
            return raw
        return decode_capabilities(raw)

    # ----------------------------------------------------------- runs

    async def run_agent(
        self,
        *,
        run_id: str | None = None,
        tools: Iterable[Any] | None = None,
        context: Iterable[Any] | None = None,
        forwarded_props: Any = None,
        resume: Mapping[str, Any] | None = None,
        subscriber: Any = None,
        idle_timeout: float | None | msgspec.UnsetType = msgspec.UNSET,
    ) -> RunAgentResult:
        """Run the agent once (see the module doc for the notification order).

        ``tools`` / ``context``: ``Tool`` / ``Context`` structs or wire dicts for
        this run; ``resume``: answers to :attr:`pending_interrupts` by interrupt
        id (as :meth:`agui.client._session.Session.resume` takes them); ``subscriber``:
        notified for this run only, after the agent's; ``idle_timeout``: this
        run's event idle timeout in seconds (None or 0: off; default: the
        agent's :attr:`idle_timeout`).

        Raises:
            RuntimeError: a run of this agent is already running.
            TypeError: ``subscriber`` is written the TypeScript way (see :meth:`subscribe`).
            agui.errors.ResumeError: interrupts are pending and ``resume`` does
                not answer every one (nothing is sent).
            ValueError: ``idle_timeout`` is negative, NaN or infinite.
            agui.errors.TransportError, agui.errors.ProtocolViolation, ...: the
                run failed (as the ``ErrorUpdate`` reported it), unless an
                ``on_run_failed`` subscriber returned ``stop_propagation=True``.
            agui.errors.SubscriberError: ``subscriber_errors="raise"`` and a
                callback raised (after the run and ``on_run_finalized``).
        """

        if self._is_running:
            raise RuntimeError("this agent is already running (await abort_run() first)")
        if subscriber is not None:
            check_subscriber(subscriber)
        idle = self.idle_timeout if idle_timeout is msgspec.UNSET else idle_seconds(idle_timeout)
        subscribers = [*self.subscribers, *([subscriber] if subscriber is not None else [])]
        overrides: dict[str, Any] = {"run_id": run_id or str(uuid.uuid4())}
        errors = SubscriberErrors(f"run {overrides['run_id']!r}")
        stage = SubscriberStage(self, subscribers, self._editor, errors)
        if tools is not None:
            overrides["tools"] = convert_list(tools, Tool, "tools")
        if context is not None:
            overrides["context"] = convert_list(context, Context, "context")
        if forwarded_props is not None:
            overrides["forwarded_props"] = forwarded_props
        if resume is not None:
            overrides["resume"] = build_resume(self.session.pending_interrupts, resume)
        known = {m.id for m in self.session.messages}
        self._is_running = True
        try:
            stage.input = self.session.build_input(**overrides)
            await stage.notify("on_run_initialized")
            await stage.flush()
            self.session.middleware = [stage, *self.middleware]
            agent_idle, self.session.idle_timeout = self.session.idle_timeout, idle
            cursor, self._connect_cursor = self._connect_cursor, None
            try:  # (a run takes its idle timeout as it is made)
                if cursor is None:
                    run = self._active = self.session.run(**overrides)
                else:  # connect_agent: join the run from the cursor
                    run = self._active = self.session.attach(cursor=cursor, **overrides)
            finally:
                self.session.idle_timeout = agent_idle
            stage.input, stage.run = run.input, run
            async for update in run:
                stage.saw(update)
            await stage.flush()
            done = run.done
            failure: Exception | None = next(
                (e.error for e in run.errors if e.fatal and not isinstance(e.error, RunError)),
                None,
            )
            if failure is not None:
                failed = stage.params(error=failure)
                stopped = await call_subscribers(
                    subscribers, "on_run_failed", lambda: failed, stage.apply_mutation, errors
                )
                await stage.flush()
                if not stopped:
                    raise failure
            messages = self.session.messages
            new = [copy.deepcopy(m) for m in messages if m.id not in known]
            outcome = RunAgentResult(stage.result, new, done, errors.failures, run.cursor)
        finally:
            self.session.middleware = list(self.middleware)  # no stale stage for session.run()
            self._active = None
            self._is_running = False
            await stage.notify("on_run_finalized")
            await stage.flush()
        if self.subscriber_errors == "raise" and errors.failures:
            raise SubscriberError(list(errors.failures)) from errors.failures[0].error
        return outcome

    async def connect_agent(
        self, run_id: str, *, cursor: str = "0", subscriber: Any = None
    ) -> RunAgentResult:
        """Join run ``run_id`` of this agent's thread in progress (the reference's
        ``connectAgent``; after a restart of the client, say): as
        :meth:`run_agent`, with the same subscriber callbacks in the same order,
        but the agent is not started again. ``cursor`` follows the rule of
        :meth:`agui.client._session.Session.attach`: an agent whose last run was
        this one and lost its stream continues it from where its state ends; any
        other replays the run's log from the first event (``"0"``, the default:
        every event told) and, for a cursor the caller kept
        (:attr:`RunAgentResult.cursor`, :attr:`agui.client._run.Run.cursor`), applies the events at or before it
        without calling the subscribers' event callbacks (the caller saw them).
        A cut response is resumed as any run's is (``on_run_reconnected``).

        Raises: as :meth:`run_agent`; a server that does not hold the run
        answers ``410``, raised as :class:`~agui.errors.TransportError`
        (``status`` 410) after ``on_run_failed``.
        """
        if self._is_running:
            raise RuntimeError("this agent is already running (await abort_run() first)")
        self._connect_cursor = cursor
        try:
            return await self.run_agent(run_id=run_id, subscriber=subscriber)
        finally:
            self._connect_cursor = None

    async def abort_run(self) -> None:
        """Abort the current run: the response is closed and the run ends
        ``Done(cancelled)``; ``run_agent`` returns. No-op when nothing runs.

        Works from anywhere: from another task (returns once the response is
        closed), and from inside a subscriber callback (returns at once; no
        frame after the current one is delivered and the response is closed as
        the callback returns). From a signal handler, call the run's
        :meth:`~agui.client._run.Run.cancel`.

        Deliberate difference: the reference synthesizes a RUN_ERROR (code
        ``abort``); the agent sent none, so none is reported (spec: a run
        stopped on purpose is cancelled, not failed)."""
        run = self._active
        if run is not None:
            await run.aclose()

    async def detach_active_run(self) -> None:
        """Stop processing the current run's stream (closing it: Python has no way
        to stop reading an HTTP response but to close it); finalizers run."""
        await self.abort_run()

    # ----------------------------------------------------------- clone

    def clone(self) -> AbstractAgent:
        """A copy with the same configuration, middleware, thread, messages and
        state (its own copy), and no subscribers, no run and nothing pending:
        :meth:`agui.client._session.Session.fork` of the agent's session on the same
        thread, running through the copy's :meth:`run`."""
        new = copy.copy(self)
        new.subscribers = []
        new.middleware = list(self.middleware)
        new.session = self.session.fork(self.session.thread_id)
        new.session.transport = _AgentTransport(new)
        new.session.set_state(self.session.state)  # a private copy, not a shared one
        new._editor = ConversationEditor(new.session)
        new._active = None
        new._is_running = False
        return new


class HttpAgent(AbstractAgent):
    """An agent behind an HTTP endpoint (POST ``RunAgentInput``, SSE back), via
    :func:`agui.transports.default_transport`: ``AiohttpTransport`` when the
    ``fast`` extra is installed (and no proxy is set), ``HttpTransport`` otherwise.

    Args: ``url``, ``headers`` (extra request headers), ``capabilities_url``
    (where :meth:`fetch_capabilities` GETs ``AgentCapabilities`` JSON, with the
    same headers; None: the agent advertises none), ``timeout`` (as
    ``HttpTransport`` takes it), then the :class:`AbstractAgent` keywords
    (:class:`AgentOptions`).

    Raises:
        ValueError: a header name or value that is not ASCII.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        capabilities_url: str | None = None,
        timeout: float | None = None,
        **options: Unpack[AgentOptions],
    ) -> None:

        self.transport: HttpTransport | AiohttpTransport = default_transport(url, headers, timeout)
        self.capabilities_url: str | None = capabilities_url
        super().__init__(**options)

    @property
    def url(self) -> str:
        """The agent endpoint URL."""
        return self.transport.url

    @property
    def headers(self) -> dict[str, str]:
        """Custom request headers (edit in place to change later runs)."""
        return self.transport.headers

    def run(self, run_input: RunAgentInput) -> AsyncIterator[Any]:
        """POST ``run_input`` to :attr:`url`; the response's SSE bytes."""
        return self.transport.stream(run_input)

    def connect(self, run_input: RunAgentInput, *, last_event_id: str) -> AsyncIterator[Any]:
        """Re-POST ``run_input`` to :attr:`url` with ``Last-Event-ID:
        last_event_id`` (the resumable-run contract); the response's SSE bytes."""
        return self.transport.stream(run_input, last_event_id=last_event_id)

    async def fetch_capabilities(self) -> Any:
        """GET :attr:`capabilities_url` (None when not configured): its body, read in
        bounded memory (:func:`agui.transports._document.get_document`: at most 1 MiB,
        inflated under the transports' bounds).

        Raises:
            agui.errors.TransportError: the request failed, answered non-2xx or sent a
                body past the bound.
        """
        if self.capabilities_url is None:
            return None
        return await get_document(
            self.capabilities_url, self.headers, self.transport.timeout, what="capabilities"
        )

    def clone(self) -> HttpAgent:
        """As :meth:`AbstractAgent.clone`, with its own copy of the headers."""

        new = super().clone()
        assert isinstance(new, HttpAgent)
        new.transport = default_transport(self.url, dict(self.headers), self.transport.timeout)
        return new
