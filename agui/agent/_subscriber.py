"""Agent subscribers: the ``AgentSubscriber`` callbacks of ``@ag-ui/client``, in Python names.

A subscriber is any object with some of the ``on_*`` methods below (subclass
:class:`AgentSubscriber`, or pass callables to its constructor:
``AgentSubscriber(on_run_finished_event=fn)``). Every callback takes one
:class:`SubscriberParams` and may be a plain ``def`` or an ``async def``; it may
return an :class:`AgentStateMutation` (or None).

Per event, subscribers are called in registration order, each seeing the
messages and state as the previous one left them (fresh copies: mutating them
changes nothing). A callback that raises is skipped and the run goes on, as the
reference client does; the error is reported once per callback and run as a
:class:`agui.errors.SubscriberWarning` (a ``UserWarning``: Python prints it by
default, pointing at the line that raised), logged (logger ``agui.agent``, with
the traceback) and recorded on ``RunAgentResult.subscriber_errors``;
``AbstractAgent(subscriber_errors="raise")`` makes ``run_agent`` raise
:class:`agui.errors.SubscriberError` once the run is over. A mutation's ``messages`` / ``state``
replace the agent's at once (a mutation whose messages do not decode or share
an id is logged and refused, the run goes on); ``stop_propagation=True`` stops the remaining
subscribers and skips the event's default effect on messages and state.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import logging
import re
import warnings
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypedDict, TypeVar, Unpack, cast

from agui_generated.agui_callbacks import EVENT_CALLBACKS, EventCallbacks
from msgspec import UNSET

from agui._jsonvalue import is_json_object
from agui.errors import DecodeError, SubscriberFailure, SubscriberWarning

if TYPE_CHECKING:
    from agui._jsonvalue import JSONValue
    from agui.agent._agent import AbstractAgent
    from agui.types import Event, Interrupt, Message, RunAgentInput, ToolCall
    from agui.updates import Reconnected, Reconnecting

__all__ = [
    "CALLBACKS",
    "AgentStateMutation",
    "AgentSubscriber",
    "Callback",
    "MaybeMutation",
    "SubscriberErrors",
    "SubscriberFailure",
    "SubscriberExtras",
    "SubscriberParams",
    "callback_name",
    "check_subscriber",
]

logger: logging.Logger = logging.getLogger("agui.agent")

EventT = TypeVar("EventT")
"""The class of ``SubscriberParams.event`` (None for callbacks without an event)."""


@dataclasses.dataclass(frozen=True)
class AgentStateMutation:
    """What a subscriber callback may return (``AgentStateMutation`` of the reference).

    ``messages``: replace the agent's messages (structs or wire dicts; None: keep).
    ``state``: replace the agent's state (any JSON, ``None`` included; ``UNSET``: keep).
    ``stop_propagation``: later subscribers do not see the event and its default
    effect on messages and state is skipped.
    """

    messages: list[Any] | None = None
    state: Any = UNSET
    stop_propagation: bool = False


class SubscriberExtras(TypedDict, total=False):
    """The per-callback members of :class:`SubscriberParams`, by name (see there;
    each absent one reads None)."""

    event: Event | None
    text_message_buffer: str | None
    reasoning_message_buffer: str | None
    tool_call_buffer: str | None
    tool_call_name: str | None
    partial_tool_call_args: dict[str, Any] | None
    tool_call_args: dict[str, Any] | None
    outcome: str | None
    result: JSONValue
    pending_tool_call_ids: list[str] | None
    interrupts: list[Interrupt] | None
    error: Exception | None
    message: Message | None
    tool_call: ToolCall | None
    activity_message: Message | None
    existing_message: Message | None
    reconnecting: Reconnecting | None
    reconnected: Reconnected | None


class SubscriberParams(Generic[EventT]):
    """The one argument of every callback (``AgentSubscriberParams`` + the per-callback extras).

    Generic in the event's class: a typed event callback receives
    ``SubscriberParams[TextMessageContentEvent]`` (the declarations are generated from the
    event union), ``on_event`` any event, the others ``None``.

    Always: ``agent``, ``input`` (the ``RunAgentInput``; None outside a run, e.g.
    for :meth:`~agui.agent.AbstractAgent.add_message`), ``messages`` and ``state``
    (copies, made on first read). Per callback (None where it does not apply):
    ``event``; ``text_message_buffer`` (TEXT_MESSAGE_CONTENT: the text before this
    delta; TEXT_MESSAGE_END: the whole text); ``reasoning_message_buffer`` (the
    same for REASONING_MESSAGE_CONTENT / END); ``tool_call_buffer`` (TOOL_CALL_ARGS:
    the arguments text before this delta), ``tool_call_name`` (ARGS and END),
    ``partial_tool_call_args`` (ARGS: best-effort object of the arguments text
    before this delta, as the reference, by
    :func:`agui.client._partial_json.partial_tool_call_args`; the reference hands
    the repaired JSON as text, we the parsed object, ``{}`` when empty), ``tool_call_args``
    (END: the parsed arguments, ``{}`` when not a JSON object); ``outcome``
    (RUN_FINISHED: ``"success"`` | ``"interrupt"`` | ``"cancelled"``, as the
    reference flattens it); ``result`` and ``pending_tool_call_ids`` (RUN_FINISHED
    with a success outcome: the calls left for the client, by the rule of
    :attr:`agui.pipeline._apply.Conversation.pending_tool_call_ids`);
    ``interrupts`` (RUN_FINISHED with an interrupt outcome); ``error`` (``on_run_failed``);
    ``message`` (``on_new_message``); ``tool_call`` (``on_new_tool_call``);
    ``activity_message`` (ACTIVITY_SNAPSHOT and ACTIVITY_DELTA: the activity
    message with the event's id as it is before the event, None when there is
    none, as in the reference) and ``existing_message`` (ACTIVITY_SNAPSHOT: the
    message already holding that id, of any role); ``reconnected``
    (``on_run_reconnected``: the :class:`~agui.updates.Reconnected` of a cut
    response resumed, with ``attempt``, ``gap_ms`` and ``cursor``);
    ``reconnecting`` (``on_run_reconnecting``: the
    :class:`~agui.updates.Reconnecting` of a try about to be made).
    """

    __slots__ = (
        "_messages",
        "_read_messages",
        "_read_state",
        "_state",
        "activity_message",
        "agent",
        "error",
        "event",
        "existing_message",
        "input",
        "interrupts",
        "message",
        "outcome",
        "partial_tool_call_args",
        "pending_tool_call_ids",
        "reasoning_message_buffer",
        "reconnected",
        "reconnecting",
        "result",
        "text_message_buffer",
        "tool_call",
        "tool_call_args",
        "tool_call_buffer",
        "tool_call_name",
    )

    def __init__(
        self,
        agent: AbstractAgent,
        run_input: RunAgentInput | None,
        read_messages: Callable[[], list[Message]],
        read_state: Callable[[], Any],
        **extras: Unpack[SubscriberExtras],
    ) -> None:
        self.agent: AbstractAgent = agent
        self.input: RunAgentInput | None = run_input
        self._read_messages = read_messages
        self._read_state = read_state
        self._messages: list[Message] | None = None
        self._state: Any = UNSET
        self.event: EventT = cast("EventT", extras.pop("event", None))  # the callback's class
        self.text_message_buffer: str | None = extras.pop("text_message_buffer", None)
        self.reasoning_message_buffer: str | None = extras.pop("reasoning_message_buffer", None)
        self.tool_call_buffer: str | None = extras.pop("tool_call_buffer", None)
        self.tool_call_name: str | None = extras.pop("tool_call_name", None)
        self.partial_tool_call_args: dict[str, Any] | None = extras.pop(
            "partial_tool_call_args", None
        )
        self.tool_call_args: dict[str, Any] | None = extras.pop("tool_call_args", None)
        self.outcome: str | None = extras.pop("outcome", None)
        self.result: Any = extras.pop("result", None)
        self.pending_tool_call_ids: list[str] | None = extras.pop("pending_tool_call_ids", None)
        self.interrupts: list[Interrupt] | None = extras.pop("interrupts", None)
        self.error: Exception | None = extras.pop("error", None)
        self.message: Message | None = extras.pop("message", None)
        self.tool_call: ToolCall | None = extras.pop("tool_call", None)
        self.activity_message: Message | None = extras.pop("activity_message", None)
        self.existing_message: Message | None = extras.pop("existing_message", None)
        self.reconnected: Reconnected | None = extras.pop("reconnected", None)
        self.reconnecting: Reconnecting | None = extras.pop("reconnecting", None)
        if extras:
            raise TypeError(f"unknown subscriber params: {', '.join(sorted(extras))}")

    @property
    def messages(self) -> list[Message]:
        """A deep copy of the agent's messages as this callback is called."""
        if self._messages is None:
            self._messages = copy.deepcopy(self._read_messages())
        return self._messages

    @property
    def state(self) -> Any:
        """A deep copy of the agent's state as this callback is called."""
        if self._state is UNSET:
            self._state = copy.deepcopy(self._read_state())
        return self._state


MaybeMutation: TypeAlias = AgentStateMutation | None | Awaitable[AgentStateMutation | None]
"""What a callback returns: a mutation, None, or an awaitable of either."""

Callback: TypeAlias = Callable[[SubscriberParams[Any]], MaybeMutation]
"""``callback(params)``: sync or async; returns a mutation or None."""

_LIFECYCLE_CALLBACKS: tuple[str, ...] = (
    "on_run_initialized",
    "on_run_failed",
    "on_run_reconnecting",
    "on_run_reconnected",
    "on_run_finalized",
    "on_messages_changed",
    "on_state_changed",
    "on_new_message",
    "on_new_tool_call",
)

CALLBACKS: tuple[str, ...] = ("on_event", *EVENT_CALLBACKS.values(), *_LIFECYCLE_CALLBACKS)
"""Every callback name a subscriber may define."""


def callback_name(event_type: str) -> str:
    """The typed callback of an event type: ``TEXT_MESSAGE_START`` ->
    ``on_text_message_start_event`` (``RAW`` -> ``on_raw_event``)."""
    return EVENT_CALLBACKS.get(event_type) or f"on_{event_type.lower()}_event"


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def check_subscriber(subscriber: object) -> None:
    """Refuse a subscriber written the TypeScript way, naming the Python spelling.

    Raises:
        TypeError: ``subscriber`` is a dict (``{"onEvent": fn}``), a plain function,
            has a camelCase callback (``onTextMessageContentEvent``), or has none of
            :data:`CALLBACKS`.
    """
    if is_json_object(subscriber):
        keys = [_snake(str(k)) for k in subscriber]
        spelled = ", ".join(f"{k}=..." for k in keys if k in CALLBACKS) or "on_event=fn"
        raise TypeError(
            "a subscriber is an object with on_* methods, not a dict: "
            f"use AgentSubscriber({spelled})"
        )
    if inspect.isfunction(subscriber) or inspect.ismethod(subscriber):
        raise TypeError(
            "a plain function is not a subscriber: use AgentSubscriber(on_event=fn)"
            " (or the callback it is meant for, e.g. on_text_message_content_event=fn)"
        )
    names = [n for n in dir(subscriber) if n.startswith("on") and not n.startswith("on_")]
    camel = [(n, _snake(n)) for n in names if _snake(n) in CALLBACKS]
    if camel:
        spelled = ", ".join(f"{n} -> {p}" for n, p in camel)
        raise TypeError(f"subscriber callbacks are spelled in snake_case in Python: {spelled}")
    if not any(callable(getattr(subscriber, n, None)) for n in CALLBACKS):
        raise TypeError(
            f"{type(subscriber).__name__} has none of the subscriber callbacks"
            " (on_event, on_text_message_content_event, ...; see agui.agent.CALLBACKS)"
        )


class AgentSubscriber(EventCallbacks):
    """Base class of a subscriber: every callback a no-op. Override the ones you need,
    or give them as keyword arguments (``AgentSubscriber(on_event=fn)``).

    Raises:
        TypeError: a keyword argument that is not one of :data:`CALLBACKS`.
    """

    def __init__(self, **callbacks: Callback) -> None:
        unknown = set(callbacks) - set(CALLBACKS)
        if unknown:
            raise TypeError(f"not AgentSubscriber callbacks: {', '.join(sorted(unknown))}")
        for name, fn in callbacks.items():
            setattr(self, name, fn)

    def on_event(self, params: SubscriberParams[Event]) -> MaybeMutation:
        """Every event, before its typed callback (default: nothing)."""
        return None

    def on_run_initialized(self, params: SubscriberParams[None]) -> MaybeMutation:
        """See :class:`SubscriberParams` (default: nothing)."""
        return None

    def on_run_failed(self, params: SubscriberParams[None]) -> MaybeMutation:
        """See :class:`SubscriberParams` (default: nothing)."""
        return None

    def on_run_reconnecting(self, params: SubscriberParams[None]) -> MaybeMutation:
        """The run's response broke before its end and a try to resume it is about
        to be made (a resumable server): ``params.reconnecting`` is the
        :class:`~agui.updates.Reconnecting` (``attempt``, ``cursor``, ``reason``);
        once per try (default: nothing). Not in the reference."""
        return None

    def on_run_reconnected(self, params: SubscriberParams[None]) -> MaybeMutation:
        """The run's cut response was resumed from its last cursor (a resumable
        server): ``params.reconnected`` is the :class:`~agui.updates.Reconnected`
        (``attempt``, ``gap_ms``, ``cursor``); called before the resumed
        response's first event; the run goes on, nothing lost or repeated
        (default: nothing). Not in the reference, which does not resume."""
        return None

    def on_run_finalized(self, params: SubscriberParams[None]) -> MaybeMutation:
        """See :class:`SubscriberParams` (default: nothing)."""
        return None

    def on_messages_changed(self, params: SubscriberParams[None]) -> MaybeMutation:
        """See :class:`SubscriberParams` (default: nothing)."""
        return None

    def on_state_changed(self, params: SubscriberParams[None]) -> MaybeMutation:
        """See :class:`SubscriberParams` (default: nothing)."""
        return None

    def on_new_message(self, params: SubscriberParams[None]) -> MaybeMutation:
        """See :class:`SubscriberParams` (default: nothing)."""
        return None

    def on_new_tool_call(self, params: SubscriberParams[None]) -> MaybeMutation:
        """See :class:`SubscriberParams` (default: nothing)."""
        return None


class SubscriberErrors:
    """Where one run's callback exceptions go: each (subscriber, callback) pair is
    reported once -- a :class:`~agui.errors.SubscriberWarning` and a log record --
    and kept in :attr:`failures`; later raises of the same pair only count.

    ``label``: what the warning names (e.g. ``run 'r1'``)."""

    def __init__(self, label: str = "") -> None:
        self.label = label
        self.failures: list[SubscriberFailure] = []
        self._seen: dict[tuple[int, str], SubscriberFailure] = {}

    def report(self, subscriber: object, callback: str, error: Exception) -> None:
        """Record that ``subscriber.callback`` raised ``error`` (warns the first time)."""
        key = (id(subscriber), callback)
        known = self._seen.get(key)
        if known is not None:
            known.count += 1
            return
        failure = SubscriberFailure(callback, subscriber, error)
        self._seen[key] = failure
        self.failures.append(failure)
        where = f" ({self.label})" if self.label else ""
        text = (
            f"subscriber {subscriber!r} raised in {callback}{where}: "
            f"{type(error).__name__}: {error}; the run goes on "
            "(reported once per callback and run; subscriber_errors='raise' makes it fatal)"
        )
        logger.error("%s", text, exc_info=error)
        filename, lineno = _origin(error)
        warnings.warn_explicit(text, SubscriberWarning, filename, lineno)


def _origin(error: BaseException) -> tuple[str, int]:
    """File and line where ``error`` was raised (the innermost traceback frame)."""
    tb = error.__traceback__
    if tb is None:
        return __file__, 0
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename, tb.tb_lineno


async def call_subscribers(
    subscribers: Iterable[Any],
    name: str,
    make_params: Callable[[], SubscriberParams[Any]],
    apply: Callable[[AgentStateMutation], None] | None,
    errors: SubscriberErrors | None = None,
) -> bool:
    """Call ``name`` on each subscriber in order; apply each mutation with ``apply``
    (None: mutations are ignored) before the next subscriber runs; a mutation ``apply``
    refuses (``ValueError`` or ``DecodeError``) is logged and dropped. A callback that
    raises is skipped and reported to ``errors`` (None: a fresh
    :class:`SubscriberErrors`, so it warns). Returns True when one asked to stop
    propagation (the rest are not called)."""
    sink = errors if errors is not None else SubscriberErrors()
    for sub in list(subscribers):
        fn = getattr(sub, name, None)
        if fn is None:
            continue
        try:
            out = fn(make_params())
            if inspect.isawaitable(out):
                out = await out
        except Exception as exc:  # noqa: BLE001 - a user callback, as the reference: reported, skipped
            sink.report(sub, name, exc)
            continue
        if is_json_object(out):  # the TypeScript shape of a mutation
            keys = ", ".join(f"{_snake(str(k))}=..." for k in out)
            sink.report(
                sub,
                name,
                TypeError(
                    f"{name} returned a dict; return AgentStateMutation({keys}) instead"
                    " (the dict is ignored)"
                ),
            )
            continue
        if isinstance(out, AgentStateMutation):
            if apply is not None:
                try:
                    apply(out)
                except (ValueError, DecodeError) as exc:  # a bad mutation: refused, the run goes on
                    logger.error("subscriber %r: mutation from %s refused: %s", sub, name, exc)
            if out.stop_propagation:
                return True
    return False


def notify_now(
    subscribers: Iterable[Any], name: str, make_params: Callable[[], SubscriberParams[Any]]
) -> None:
    """Notification from synchronous code (``add_message`` ...): each callback is called
    now, in order; an async one's coroutine is scheduled on the running loop (or run to
    completion when there is none). Returned mutations are ignored, as in the reference."""
    for sub in list(subscribers):
        fn = getattr(sub, name, None)
        if fn is None:
            continue
        try:
            out = fn(make_params())
        except Exception as exc:  # noqa: BLE001 - a user callback: reported, skipped
            SubscriberErrors().report(sub, name, exc)
            continue
        if inspect.iscoroutine(out):
            _run_soon(out, sub, name)


async def _guarded(coro: Awaitable[object], sub: object, name: str) -> None:
    try:
        await coro
    except Exception as exc:  # noqa: BLE001 - a user callback: reported
        SubscriberErrors().report(sub, name, exc)


def _run_soon(coro: Coroutine[Any, Any, object], sub: object, name: str) -> None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(_guarded(coro, sub, name))
        return
    task = loop.create_task(_guarded(coro, sub, name))
    _PENDING.add(task)
    task.add_done_callback(_PENDING.discard)


_PENDING: set[asyncio.Task[Any]] = set()
