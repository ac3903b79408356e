"""Typed ``Update`` values: what a run reports to the caller, one per change.

The applier (:mod:`agui.pipeline._apply`) turns each verified event into zero or more
updates; the pipeline adds warnings, errors and the final ``Done``; a
``Session`` yields them. Contract: every event the wire delivers ends up either
applied and reported here, or reported as an :class:`ErrorUpdate`. Nothing is
silent.

All updates are frozen ``msgspec.Struct`` values (immutable, hashable, compared
by value, usable in ``match`` statements by field name), except
:class:`StateChanged`, a frozen slots dataclass that behaves the same (so that
encoding works out its deferred state). Every Struct update except
:class:`ErrorUpdate` is created with ``gc=False``: updates hold only decoded
JSON and ids, which cannot form reference cycles, and leaving them untracked by
the cyclic garbage collector keeps the per-event cost flat as a conversation
grows (``nox -s bench``: pipeline scaling). ``ErrorUpdate`` holds an exception,
whose traceback can refer back to the frame holding the update, so it stays
tracked. Ids are the protocol's ids
(``messageId``, ``toolCallId`` ...) as plain ``str``. ``subagent_run_id`` is the
event's ``subagentRunId`` (None for the parent agent).

Every update made from an event carries it as ``from_event`` (the generated event struct; None
for an update built by hand), so a member the schema gains reaches the caller with no change
here: ``update.from_event.index`` on a ``ToolCallStarted`` once TOOL_CALL_START has ``index``.
``from_event`` takes no part in equality and hashing (:class:`FromEvent`).
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from agui._jsonvalue import JSONValue
from agui.types import Event, TokenUsage

__all__ = [
    "CARRIES_EVENT",
    "ActivityChanged",
    "Custom",
    "DeferredState",
    "Done",
    "EncryptedValue",
    "ErrorUpdate",
    "EventReceived",
    "FromEvent",
    "MessagesSnapshot",
    "MetadataChanged",
    "Outcome",
    "Paused",
    "Raw",
    "ReasoningDelta",
    "ReasoningEnded",
    "ReasoningSpan",
    "ReasoningStarted",
    "Reconnected",
    "Reconnecting",
    "RunStarted",
    "StateChanged",
    "StepChanged",
    "SubagentChanged",
    "TextDelta",
    "TextEnded",
    "TextStarted",
    "ToolCallArgs",
    "ToolCallEnded",
    "ToolCallStarted",
    "ToolResult",
    "Update",
    "WarningUpdate",
    "edge_surrogate",
    "enc_hook",
    "join_deltas",
]

# --- run lifecycle -----------------------------------------------------------


class _ByValue:
    """Equality and hashing by ``_value()`` (each update says which members count), for
    the msgspec updates and the one dataclass alike; placed before ``msgspec.Struct`` in
    the bases, so that its methods, not the Struct's own, compare."""

    __slots__ = ()

    def _value(self) -> tuple[object, ...]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, _ByValue)
        return self._value() == other._value()

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash((type(self), self._value()))


class FromEvent(_ByValue, msgspec.Struct, frozen=True, gc=False, eq=False):
    """Base of the updates made from one event: their ``from_event`` member is that event.

    Equality and hashing compare every member but ``from_event``: two updates that report
    the same change are equal whichever event carried it (its timestamp, say), and an update
    holding a (mutable, unhashable) event struct stays hashable.
    """

    def _value(self) -> tuple[object, ...]:
        return tuple(getattr(self, f) for f in self.__struct_fields__ if f != "from_event")


class RunStarted(FromEvent, frozen=True, gc=False):
    """RUN_STARTED was applied."""

    run_id: str
    thread_id: str
    parent_run_id: str | None = None
    from_event: Event | None = None


class StepChanged(FromEvent, frozen=True, gc=False):
    """STEP_STARTED (``started=True``) or STEP_FINISHED (``started=False``)."""

    name: str
    started: bool
    subagent_run_id: str | None = None
    from_event: Event | None = None


class SubagentChanged(FromEvent, frozen=True, gc=False):
    """SUBAGENT_STARTED / SUBAGENT_FINISHED / SUBAGENT_ERROR.

    ``status`` is ``started``, ``finished`` or ``error``; ``detail`` is the
    name (started), the outcome type (finished) or the error message (error).
    """

    subagent_run_id: str
    status: Literal["started", "finished", "error"]
    detail: str | None = None
    from_event: Event | None = None


# --- messages ----------------------------------------------------------------


class TextStarted(FromEvent, frozen=True, gc=False):
    """A text message opened (TEXT_MESSAGE_START, or a reopened id)."""

    message_id: str
    role: str = "assistant"
    subagent_run_id: str | None = None
    from_event: Event | None = None


class TextDelta(FromEvent, frozen=True, gc=False):
    """TEXT_MESSAGE_CONTENT: ``delta`` appended to message ``message_id``."""

    message_id: str
    delta: str
    from_event: Event | None = None


class TextEnded(FromEvent, frozen=True, gc=False):
    """TEXT_MESSAGE_END. ``text`` is the message's whole content now."""

    message_id: str
    text: str
    from_event: Event | None = None


class ReasoningStarted(FromEvent, frozen=True, gc=False):
    """REASONING_MESSAGE_START (a reasoning message with role ``reasoning``)."""

    message_id: str
    subagent_run_id: str | None = None
    from_event: Event | None = None


class ReasoningDelta(FromEvent, frozen=True, gc=False):
    """REASONING_MESSAGE_CONTENT."""

    message_id: str
    delta: str
    from_event: Event | None = None


class ReasoningEnded(FromEvent, frozen=True, gc=False):
    """REASONING_MESSAGE_END. ``text`` is the whole reasoning content."""

    message_id: str
    text: str
    from_event: Event | None = None


class ReasoningSpan(FromEvent, frozen=True, gc=False):
    """REASONING_START (``started=True``) / REASONING_END (``started=False``)."""

    span_id: str
    started: bool
    from_event: Event | None = None


class EncryptedValue(FromEvent, frozen=True, gc=False):
    """REASONING_ENCRYPTED_VALUE stored on a message or tool call."""

    subtype: str
    entity_id: str
    from_event: Event | None = None


class ToolCallStarted(FromEvent, frozen=True, gc=False):
    """TOOL_CALL_START. ``parent_message_id`` is the assistant message that
    carries the call (resolved by the applier, never None once applied)."""

    tool_call_id: str
    name: str
    parent_message_id: str | None = None
    subagent_run_id: str | None = None
    from_event: Event | None = None


class ToolCallArgs(FromEvent, frozen=True, gc=False):
    """TOOL_CALL_ARGS: ``delta`` is a raw fragment of the JSON arguments text."""

    tool_call_id: str
    delta: str
    from_event: Event | None = None


class ToolCallEnded(FromEvent, frozen=True, gc=False):
    """TOOL_CALL_END. ``arguments`` is the reassembled arguments text (may be
    invalid JSON: the protocol never parses it)."""

    tool_call_id: str
    name: str
    arguments: str
    from_event: Event | None = None


class ToolResult(FromEvent, frozen=True, gc=False):
    """TOOL_CALL_RESULT minted a tool message. ``content`` is a str or a list
    of content parts (plain JSON)."""

    message_id: str
    tool_call_id: str
    content: Any
    from_event: Event | None = None


class MessagesSnapshot(FromEvent, frozen=True, gc=False):
    """MESSAGES_SNAPSHOT reconciled the message list; ``count`` messages now.

    What the snapshot brought, compared with the list before it:
    ``changed`` holds the generated ``Message`` structs it added (an id the
    conversation did not hold) or replaced (an id it held, whose role, content,
    tool calls and their arguments, answered ``toolCallId``, error or activity
    type differ), in list order; ``replaced`` names the ids among them that
    were replaced; ``removed`` the ids the list no longer holds. A message the
    snapshot repeats unchanged is in none of them (metadata is not compared).
    """

    count: int
    changed: tuple[Any, ...] = ()
    replaced: frozenset[str] = frozenset()
    removed: tuple[str, ...] = ()
    from_event: Event | None = None


class ActivityChanged(FromEvent, frozen=True, gc=False):
    """ACTIVITY_SNAPSHOT / ACTIVITY_DELTA: the activity message's content now."""

    message_id: str
    activity_type: str
    content: Any
    from_event: Event | None = None


class MetadataChanged(FromEvent, frozen=True, gc=False):
    """Event metadata was merged onto a message or tool call (last write wins)."""

    target_id: str
    metadata: dict[str, Any]
    from_event: Event | None = None


# --- state and passthrough ---------------------------------------------------


class DeferredState:
    """A state that :class:`StateChanged` works out on its first read of ``state``
    (the applier hands one out so that a batch of updates costs what its
    patches touch, not a copy of the state per update). ``resolve()`` returns
    the state; its ``repr`` is the state's."""

    __slots__ = ()

    def resolve(self) -> JSONValue:
        """The state this stands for (a value nobody mutates afterwards)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return repr(self.resolve())


@dataclasses.dataclass(init=False, eq=False)
class StateChanged(_ByValue):
    """STATE_SNAPSHOT (``patch`` None) or STATE_DELTA (``patch`` the applied
    JSON Patch ops as plain JSON). ``state`` is the whole state after it, as
    of this update: a value that never changes afterwards (later changes
    never mutate it); read-only: it shares subtrees with other states.

    The applier builds it with a :class:`DeferredState`: the state is worked
    out on the first read of ``state`` (O(width of the containers the patches
    since the last worked-out state touch), the same value on every read), so
    updates nobody reads cost nothing. Encoding reads it too: plain
    ``msgspec.json.encode``, ``msgspec.msgpack.encode`` and
    ``msgspec.to_builtins`` give the state whether or not it was read.

    The one update that is a slots dataclass rather than a ``msgspec.Struct``
    (``msgspec`` encodes a Struct's members without reading them, a
    dataclass's fields by reading them): its fields are read-only properties,
    so it is frozen (``AttributeError`` on assignment); compared and hashed by
    value ignoring ``from_event`` (as :class:`FromEvent`), matched by field
    name; ``dataclasses.replace`` / ``asdict`` / ``fields`` work on it, the
    ``msgspec.structs`` functions do not. Tracked by the cyclic garbage
    collector (a slots class always is; the other updates are not)."""

    __slots__ = ("_from_event", "_patch", "_state")

    state: JSONValue
    patch: list[JSONValue] | None = None
    from_event: Event | None = None

    def __init__(
        self,
        state: JSONValue | DeferredState,
        patch: list[JSONValue] | None = None,
        from_event: Event | None = None,
    ) -> None:
        self._state = state
        self._patch = patch
        self._from_event = from_event

    def _read_state(self) -> JSONValue:
        """The whole state after this update (a :class:`DeferredState` is worked out
        on the first read, then kept). ``msgspec`` encodes a dataclass by reading
        each field, so this runs on encoding too."""
        value = self._state
        if isinstance(value, DeferredState):
            value = self._state = value.resolve()  # worked out once
        return value

    def _value(self) -> tuple[object, ...]:
        return (self.state, self._patch)

    def __reduce__(self) -> tuple[type[StateChanged], tuple[object, ...]]:
        # pickle, copy.copy and copy.deepcopy: the state worked out
        return (StateChanged, (self.state, self._patch, self._from_event))


# The fields as read-only properties over the slots (set once, by ``__init__``). Set after
# the decorator, which takes the class attributes of the fields as their defaults.
for _name, _getter in (
    ("state", vars(StateChanged)["_read_state"]),
    ("patch", operator.attrgetter("_patch")),
    ("from_event", operator.attrgetter("_from_event")),
):
    setattr(StateChanged, _name, property(_getter, doc=f"The update's ``{_name}`` (read-only)."))
del _name, _getter


def enc_hook(obj: object) -> JSONValue:
    """``enc_hook`` for ``msgspec`` encoders and ``msgspec.to_builtins``: a
    :class:`DeferredState` becomes the state it stands for; anything else is
    refused as ``msgspec`` refuses it (``NotImplementedError``). Not needed to
    encode updates: a :class:`StateChanged` encodes its state whether or not it
    was read (kept for code that passes it)."""
    if isinstance(obj, DeferredState):
        return obj.resolve()
    raise NotImplementedError(f"Encoding objects of type {type(obj).__name__} is unsupported")


class Custom(FromEvent, frozen=True, gc=False):
    """CUSTOM event, passed through."""

    name: str
    value: Any
    from_event: Event | None = None


class Raw(FromEvent, frozen=True, gc=False):
    """RAW event, passed through."""

    event: Any
    source: str | None = None
    from_event: Event | None = None


class EventReceived(msgspec.Struct, frozen=True, gc=False):
    """An event the applier passes on as it is: its class is one the applier
    keeps no record of on purpose (``agui.pipeline._apply.PASS_THROUGH``). ``event`` is
    the generated event struct (read its type with ``agui.types.event_type``)."""

    event: Any


# --- pauses, diagnostics, end ------------------------------------------------


class Paused(FromEvent, frozen=True, gc=False):
    """RUN_FINISHED with an ``interrupt`` outcome. ``interrupts`` are the
    generated ``Interrupt`` structs, in wire order; answer every one with
    ``Session.resume``. ``from_event``: that RUN_FINISHED."""

    interrupts: tuple[Any, ...]
    from_event: Event | None = None


class Reconnecting(msgspec.Struct, frozen=True, gc=False):
    """The response stream broke before its run ended and the client is about to
    resume it (``Last-Event-ID``, the resumable-run contract): ``attempt`` = the
    try about to be made since the last progress (1 = the first), ``cursor`` =
    the last event ID processed, ``reason`` = what broke (``"end of stream"``, or
    the transport error's kind: ``reset``, ``timeout`` ...). A
    :class:`Reconnected` follows once a try succeeds; out of tries, the run fails
    as it would have without resuming. (With middleware, told with the run's
    next updates.)"""

    attempt: int
    cursor: str
    reason: str


class Reconnected(msgspec.Struct, frozen=True, gc=False):
    """The response stream broke before its run ended and the client resumed it
    (``Last-Event-ID``, the resumable-run contract): ``attempt`` = which attempt
    since the last progress succeeded (1 = the first), ``gap_ms`` = milliseconds
    from the break to the resumed response; ``cursor`` = the last event ID
    processed before the break. The run goes on; nothing was lost or repeated."""

    attempt: int
    gap_ms: float
    cursor: str


class WarningUpdate(msgspec.Struct, frozen=True, gc=False):
    """Something was repaired, stripped or dropped (decode or apply), or a
    violation was tolerated. ``code`` is stable; ``path`` is a JSON path or
    None."""

    code: str
    message: str
    path: str | None = None


class ErrorUpdate(msgspec.Struct, frozen=True, gc=True):
    """An error the caller should see: a :class:`agui.errors.ProtocolViolation`,
    :class:`agui.errors.RunError`, :class:`agui.errors.TransportError`,
    :class:`agui.errors.DecodeError`, or :class:`agui.errors.EncodeError` (the
    request could not be written, e.g. a NaN in the state: nothing was sent).
    ``fatal`` is True when it ends the run."""

    error: Exception
    fatal: bool = False


Outcome = Literal["success", "interrupted", "cancelled", "failed"]


class Done(FromEvent, frozen=True, gc=False):
    """The run ended. Always the last update of a run.

    ``outcome``: ``success`` | ``interrupted`` | ``cancelled`` | ``failed``.
    ``reason``: why it failed or was cancelled (None on success).
    ``result``: RUN_FINISHED ``result`` (any JSON) on success.
    ``pending_tool_call_ids``: from a success outcome (client-side tools to run).
    ``run_id``: the run that ended, when known.
    ``usage``: the ``TokenUsage`` structs RUN_FINISHED / RUN_ERROR reported
    (``()`` when none; absent is not zero).
    ``from_event``: the RUN_FINISHED / RUN_ERROR it was made from (its
    ``timestamp``, any member the schema gains); None for a ``Done`` the client
    made itself (cancelled, a lost stream, a fatal error).
    """

    outcome: Outcome
    reason: str | None = None
    result: JSONValue = None
    pending_tool_call_ids: tuple[str, ...] = ()
    run_id: str | None = None
    usage: tuple[TokenUsage, ...] = ()
    from_event: Event | None = None

    def raise_for_outcome(self) -> Done:
        """Raise :class:`~agui.errors.RunFailedError` (with the ``reason``) when the run
        failed; return this ``Done`` otherwise (``success``, ``interrupted``, ``cancelled``)."""
        if self.outcome == "failed":
            from agui.errors import RunFailedError

            raise RunFailedError(self.reason or "no reason given", run_id=self.run_id)
        return self


# --- joining deltas ------------------------------------------------------------


def edge_surrogate(delta: str) -> bool:
    """True when a non-empty delta starts or ends with half a UTF-16 surrogate
    pair (a producer split a pair written as two ``\\u`` escapes across
    deltas). Callers skip ASCII deltas first (``str.isascii`` is a flag test)."""
    return "\ud800" <= delta[0] <= "\udfff" or "\ud800" <= delta[-1] <= "\udfff"


def join_deltas(deltas: Sequence[str], repair: bool | None = None) -> str:
    """Join the deltas of one message or tool call (``TextDelta.delta``,
    ``ReasoningDelta.delta``, ``ToolCallArgs.delta``) as the applier joins them
    into ``TextEnded.text`` / ``ToolCallEnded.arguments``: a UTF-16 surrogate
    pair a producer split across two deltas becomes the one character it
    encodes; a lone half is kept. ``repair``: whether any delta has a split
    half at an edge (None: look). For code that shows the deltas it was given,
    such as a renderer."""
    text = "".join(deltas)
    if repair is None:
        repair = any(d and not d.isascii() and edge_surrogate(d) for d in deltas)
    if repair:
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text


Update = (
    RunStarted
    | StepChanged
    | SubagentChanged
    | TextStarted
    | TextDelta
    | TextEnded
    | ReasoningStarted
    | ReasoningDelta
    | ReasoningEnded
    | ReasoningSpan
    | EncryptedValue
    | ToolCallStarted
    | ToolCallArgs
    | ToolCallEnded
    | ToolResult
    | MessagesSnapshot
    | ActivityChanged
    | MetadataChanged
    | StateChanged
    | Custom
    | Raw
    | EventReceived
    | Paused
    | Reconnecting
    | Reconnected
    | WarningUpdate
    | ErrorUpdate
    | Done
)
"""Every value a run reports."""

CARRIES_EVENT: frozenset[type] = frozenset(
    cls
    for cls in Update.__args__
    if "from_event"
    in (
        cls.__struct_fields__
        if issubclass(cls, msgspec.Struct)
        else [f.name for f in dataclasses.fields(cls)]
    )
)
"""The update classes with a ``from_event`` member (set by the applier)."""
