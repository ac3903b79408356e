"""Typed ``Update`` values: what a run reports to the caller, one per change.

The applier (:mod:`agui.pipeline.apply`) turns each verified event into zero or more
updates; the pipeline adds warnings, errors and the final ``Done``; a
``Session`` yields them. Contract: every event the wire delivers ends up either
applied and reported here, or reported as an :class:`ErrorUpdate`. Nothing is
silent.

All updates are frozen ``msgspec.Struct`` values (immutable, hashable, compared
by value, usable in ``match`` statements by field name). Every update except
:class:`ErrorUpdate` is created with ``gc=False``: updates hold only decoded
JSON and ids, which cannot form reference cycles, and leaving them untracked by
the cyclic garbage collector keeps the per-event cost flat as a conversation
grows (``nox -s bench``: pipeline scaling). ``ErrorUpdate`` holds an exception,
whose traceback can refer back to the frame holding the update, so it stays
tracked. Ids are the protocol's ids
(``messageId``, ``toolCallId`` ...) as plain ``str``. ``subagent_run_id`` is the
event's ``subagentRunId`` (None for the parent agent).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec

# --- run lifecycle -----------------------------------------------------------


class RunStarted(msgspec.Struct, frozen=True, gc=False):
    """RUN_STARTED was applied."""

    run_id: str
    thread_id: str
    parent_run_id: str | None = None


class StepChanged(msgspec.Struct, frozen=True, gc=False):
    """STEP_STARTED (``started=True``) or STEP_FINISHED (``started=False``)."""

    name: str
    started: bool
    subagent_run_id: str | None = None


class SubagentChanged(msgspec.Struct, frozen=True, gc=False):
    """SUBAGENT_STARTED / SUBAGENT_FINISHED / SUBAGENT_ERROR.

    ``status`` is ``started``, ``finished`` or ``error``; ``detail`` is the
    name (started), the outcome type (finished) or the error message (error).
    """

    subagent_run_id: str
    status: Literal["started", "finished", "error"]
    detail: str | None = None


# --- messages ----------------------------------------------------------------


class TextStarted(msgspec.Struct, frozen=True, gc=False):
    """A text message opened (TEXT_MESSAGE_START, or a reopened id)."""

    message_id: str
    role: str = "assistant"
    subagent_run_id: str | None = None


class TextDelta(msgspec.Struct, frozen=True, gc=False):
    """TEXT_MESSAGE_CONTENT: ``delta`` appended to message ``message_id``."""

    message_id: str
    delta: str


class TextEnded(msgspec.Struct, frozen=True, gc=False):
    """TEXT_MESSAGE_END. ``text`` is the message's whole content now."""

    message_id: str
    text: str


class ReasoningStarted(msgspec.Struct, frozen=True, gc=False):
    """REASONING_MESSAGE_START (a reasoning message with role ``reasoning``)."""

    message_id: str
    subagent_run_id: str | None = None


class ReasoningDelta(msgspec.Struct, frozen=True, gc=False):
    """REASONING_MESSAGE_CONTENT."""

    message_id: str
    delta: str


class ReasoningEnded(msgspec.Struct, frozen=True, gc=False):
    """REASONING_MESSAGE_END. ``text`` is the whole reasoning content."""

    message_id: str
    text: str


class ReasoningSpan(msgspec.Struct, frozen=True, gc=False):
    """REASONING_START (``started=True``) / REASONING_END (``started=False``)."""

    span_id: str
    started: bool


class EncryptedValue(msgspec.Struct, frozen=True, gc=False):
    """REASONING_ENCRYPTED_VALUE stored on a message or tool call."""

    subtype: str
    entity_id: str


class ToolCallStarted(msgspec.Struct, frozen=True, gc=False):
    """TOOL_CALL_START. ``parent_message_id`` is the assistant message that
    carries the call (resolved by the applier, never None once applied)."""

    tool_call_id: str
    name: str
    parent_message_id: str | None = None
    subagent_run_id: str | None = None


class ToolCallArgs(msgspec.Struct, frozen=True, gc=False):
    """TOOL_CALL_ARGS: ``delta`` is a raw fragment of the JSON arguments text."""

    tool_call_id: str
    delta: str


class ToolCallEnded(msgspec.Struct, frozen=True, gc=False):
    """TOOL_CALL_END. ``arguments`` is the reassembled arguments text (may be
    invalid JSON: the protocol never parses it)."""

    tool_call_id: str
    name: str
    arguments: str


class ToolResult(msgspec.Struct, frozen=True, gc=False):
    """TOOL_CALL_RESULT minted a tool message. ``content`` is a str or a list
    of content parts (plain JSON)."""

    message_id: str
    tool_call_id: str
    content: Any


class MessagesSnapshot(msgspec.Struct, frozen=True, gc=False):
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


class ActivityChanged(msgspec.Struct, frozen=True, gc=False):
    """ACTIVITY_SNAPSHOT / ACTIVITY_DELTA: the activity message's content now."""

    message_id: str
    activity_type: str
    content: Any


class MetadataChanged(msgspec.Struct, frozen=True, gc=False):
    """Event metadata was merged onto a message or tool call (last write wins)."""

    target_id: str
    metadata: dict[str, Any]


# --- state and passthrough ---------------------------------------------------


class StateChanged(msgspec.Struct, frozen=True, gc=False):
    """STATE_SNAPSHOT (``patch`` None) or STATE_DELTA (``patch`` the applied
    JSON Patch ops as plain JSON). ``state`` is the whole state after it, as
    of this update (later changes replace the conversation's state instead of
    mutating it); read-only: it shares subtrees with later states."""

    state: Any
    patch: list[Any] | None = None


class Custom(msgspec.Struct, frozen=True, gc=False):
    """CUSTOM event, passed through."""

    name: str
    value: Any


class Raw(msgspec.Struct, frozen=True, gc=False):
    """RAW event, passed through."""

    event: Any
    source: str | None = None


class EventReceived(msgspec.Struct, frozen=True, gc=False):
    """An event the applier passes on as it is: its class is one the applier
    keeps no record of on purpose (``agui.pipeline.apply.PASS_THROUGH``). ``event`` is
    the generated event struct (read its type with ``agui.types.event_type``)."""

    event: Any


# --- pauses, diagnostics, end ------------------------------------------------


class Paused(msgspec.Struct, frozen=True, gc=False):
    """RUN_FINISHED with an ``interrupt`` outcome. ``interrupts`` are the
    generated ``Interrupt`` structs, in wire order; answer every one with
    ``Session.resume``."""

    interrupts: tuple[Any, ...]


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


class Done(msgspec.Struct, frozen=True, gc=False):
    """The run ended. Always the last update of a run.

    ``outcome``: ``success`` | ``interrupted`` | ``cancelled`` | ``failed``.
    ``reason``: why it failed or was cancelled (None on success).
    ``result``: RUN_FINISHED ``result`` (any JSON) on success.
    ``pending_tool_call_ids``: from a success outcome (client-side tools to run).
    ``run_id``: the run that ended, when known.
    ``usage``: the ``TokenUsage`` structs RUN_FINISHED / RUN_ERROR reported
    (``()`` when none; absent is not zero).
    """

    outcome: Outcome
    reason: str | None = None
    result: Any = None
    pending_tool_call_ids: tuple[str, ...] = ()
    run_id: str | None = None
    usage: tuple[Any, ...] = ()


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
    | WarningUpdate
    | ErrorUpdate
    | Done
)
"""Every value a run reports."""
