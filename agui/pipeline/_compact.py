"""Compacting a recorded event stream: fewer events, the same conversation.

:func:`compact_events` is the Python counterpart of ``@ag-ui/client``'s ``compactEvents``: a
stream recorded for storage or replay is rewritten so that applying it gives the same messages
and state as applying the original, with far fewer events:

* the TEXT_MESSAGE_CONTENT deltas of one message become one delta (joined in order), emitted
  just before its TEXT_MESSAGE_END; likewise the TOOL_CALL_ARGS deltas of one tool call, and
  (beyond the reference, which leaves them alone) the REASONING_MESSAGE_CONTENT deltas of one
  reasoning message;
* CUSTOM, RAW, STEP_STARTED and STEP_FINISHED events that arrive while a message or tool call
  is streaming are moved after that stream's END, so a stream's events stay together;
* the STATE_SNAPSHOT / STATE_DELTA events between two run boundaries (RUN_STARTED,
  RUN_FINISHED, RUN_ERROR, the end of the input) become one STATE_SNAPSHOT of the resulting
  state, emitted at the boundary (before a RUN_FINISHED / RUN_ERROR).

Where the reference's rewrite could change the conversation, this one keeps it:

* a START stays where it was (the reference emits it with its END, which reorders messages
  created while it was open, and can put a TOOL_CALL_START before the message it is parented
  to);
* events whose effect depends on what has been streamed so far or on the events around them
  (MESSAGES_SNAPSHOT, the ``*_CHUNK`` events, SUBAGENT_*, and the run boundaries) first flush
  every open stream: its deltas so far, then the events held for it; the stream goes on after;
  after such a flush, a TOOL_CALL_START parented to a still open message flushes that
  message's deltas again (the snapshot may have dropped the message, which the call recreates);
* deltas are only folded into a snapshot once the state is known (after a STATE_SNAPSHOT in
  the input): before that a delta applies to a state the input does not show (the
  conversation's initial state), so it is kept as it is. A delta that does not apply to the
  known state is kept too, after a snapshot of the state so far, so applying the output
  reports the same failure and leaves the same state.

The merged events keep the first delta's ``timestamp`` and ``subagentRunId`` and carry the
deltas' ``metadata`` merged in order (as the applier merges it); ``rawEvent`` of merged events
is dropped. Every other event is passed through as the same object. Compaction is for streams
that the applier accepts; on a stream it rejects (say, content for a message that never
started) the result is still well formed but not guaranteed to fail in the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from msgspec import UNSET

from agui import types as T
from agui._jsonvalue import is_json_object
from agui.pipeline._apply.patch import PatchFailed, apply_patch, clone_json, plain_ops

__all__ = ["compact_events"]

#: events moved after the END of the stream open when they arrive (reference behaviour)
_HELD = frozenset({T.CustomEvent, T.RawEvent, T.StepStartedEvent, T.StepFinishedEvent})
#: events before which every open stream is flushed
_BARRIERS = frozenset(
    {
        T.MessagesSnapshotEvent,
        T.TextMessageChunkEvent,
        T.ToolCallChunkEvent,
        T.ReasoningMessageChunkEvent,
        T.SubagentStartedEvent,
        T.SubagentFinishedEvent,
        T.SubagentErrorEvent,
    }
)
_RUN_BOUNDARIES = frozenset({T.RunStartedEvent, T.RunFinishedEvent, T.RunErrorEvent})
_STATE: frozenset[type[Any]] = frozenset((T.StateSnapshotEvent, T.StateDeltaEvent))


class _Stream:
    """One message's or tool call's deltas not emitted yet, and the events held for it."""

    __slots__ = ("barrier", "deltas", "first", "held", "metadata", "started")

    def __init__(self) -> None:
        self.started = False
        self.barrier = False  # a barrier (a MESSAGES_SNAPSHOT ...) came since the START
        self.deltas: list[str] = []
        self.first: Any = None  # the first pending delta event
        self.metadata: dict[str, Any] | None = None
        self.held: list[Any] = []


class _Compactor:
    __slots__ = ("known", "out", "state", "state_events", "streams")

    def __init__(self) -> None:
        self.out: list[Any] = []
        self.streams: dict[tuple[str, str], _Stream] = {}
        self.state_events: list[Any] = []
        self.known = False  # whether self.state is the state (a snapshot has been seen)
        self.state: Any = None

    # -- streams ---------------------------------------------------------------------------

    def start(self, key: tuple[str, str], ev: Any) -> None:
        stream = self.streams.pop(key, None) or _Stream()
        stream.started = True
        self.streams[key] = stream  # (re)inserted last: held events go to the oldest open one
        self.out.append(ev)

    def delta(self, key: tuple[str, str], ev: Any) -> None:
        stream = self.streams.get(key)
        if stream is None:
            stream = self.streams[key] = _Stream()
        elif stream.first is not None and stream.first.subagent_run_id != ev.subagent_run_id:
            self.emit_deltas(key, stream)
        if stream.first is None:
            stream.first = ev
        stream.deltas.append(ev.delta)
        md = ev.metadata
        if md is not UNSET and is_json_object(md):
            if stream.metadata is None:
                stream.metadata = {}
            stream.metadata.update(md)

    def end(self, key: tuple[str, str], ev: Any) -> None:
        stream = self.streams.pop(key, None)
        if stream is not None:
            self.emit_deltas(key, stream)
        self.out.append(ev)
        if stream is not None and stream.held:
            self.out.extend(stream.held)

    def emit_deltas(self, key: tuple[str, str], stream: _Stream) -> None:
        first = stream.first
        if first is None:
            return
        if len(stream.deltas) == 1:
            self.out.append(first)  # nothing to merge: the event itself
        else:
            fields: dict[str, Any] = {"delta": "".join(stream.deltas)}
            if first.timestamp is not UNSET:
                fields["timestamp"] = first.timestamp
            if first.subagent_run_id is not UNSET:
                fields["subagent_run_id"] = first.subagent_run_id
            if stream.metadata is not None:
                fields["metadata"] = stream.metadata
            if key[0] == "text":
                self.out.append(T.TextMessageContentEvent(message_id=key[1], **fields))
            elif key[0] == "reasoning":
                self.out.append(T.ReasoningMessageContentEvent(message_id=key[1], **fields))
            else:
                self.out.append(T.ToolCallArgsEvent(tool_call_id=key[1], **fields))
        stream.deltas = []
        stream.first = None
        stream.metadata = None

    def hold(self, ev: Any) -> None:
        for stream in self.streams.values():
            if stream.started:
                stream.held.append(ev)
                return
        self.out.append(ev)

    def flush_streams(self) -> None:
        for key, stream in self.streams.items():
            stream.barrier = True
            self.emit_deltas(key, stream)
            if stream.held:
                self.out.extend(stream.held)
                stream.held = []

    # -- state -----------------------------------------------------------------------------

    def flush_state(self) -> None:
        if not self.state_events:
            return
        pending = False  # self.state differs from what the output so far sets
        for ev in self.state_events:
            pending = STATE_FOLDS[type(ev)](self, ev, pending)
        if pending:
            self.out.append(T.StateSnapshotEvent(snapshot=clone_json(self.state)))
        self.state_events = []

    def fold_snapshot(self, ev: Any, pending: bool) -> bool:
        """A STATE_SNAPSHOT sets the state (nothing is output yet)."""
        self.state = clone_json(ev.snapshot)
        self.known = True
        return True

    def fold_delta(self, ev: Any, pending: bool) -> bool:
        """A STATE_DELTA patches the known state; True while it differs from the output."""
        if not self.known:
            self.out.append(ev)  # a delta against a state the input does not show
            return pending
        try:
            self.state = apply_patch(self.state, plain_ops(ev.delta))
        except PatchFailed:
            if pending:
                self.out.append(T.StateSnapshotEvent(snapshot=clone_json(self.state)))
            self.out.append(ev)  # fails again on the same state: same report
            return False
        return True

    def feed(self, ev: T.Event) -> None:
        handler = HANDLERS.get(type(ev))
        if handler is None:
            self.out.append(ev)  # (PASS_THROUGH, or a type the schema gained since)
        else:
            handler(self, ev)

    def finish(self) -> list[Any]:
        self.flush_streams()
        self.flush_state()
        return self.out


def _tool_start(c: _Compactor, ev: Any) -> None:
    # after a barrier (a MESSAGES_SNAPSHOT may have dropped the parent message), the call
    # may create its parent: the parent's deltas so far go first, so they land where they
    # did (or are skipped where they were) in the original
    parent = ev.parent_message_id
    stream = c.streams.get(("text", parent)) if isinstance(parent, str) else None
    if stream is not None and stream.barrier:
        c.emit_deltas(("text", parent), stream)
    c.start(("tool", ev.tool_call_id), ev)


def _boundary(c: _Compactor, ev: Any) -> None:
    c.flush_streams()
    c.flush_state()
    c.out.append(ev)


def _barrier(c: _Compactor, ev: Any) -> None:
    c.flush_streams()
    c.out.append(ev)


_Handler = Callable[[_Compactor, Any], None]

STATE_FOLDS: dict[type[Any], Callable[[_Compactor, Any, bool], bool]] = {
    T.StateSnapshotEvent: _Compactor.fold_snapshot,
    T.StateDeltaEvent: _Compactor.fold_delta,
}
"""How a held state event folds into the compacted state (the classes of ``_STATE``):
``(compactor, event, pending) -> pending``, pending meaning the state differs from
what the output so far sets."""

HANDLERS: dict[type[Any], _Handler] = {
    T.TextMessageContentEvent: lambda c, ev: c.delta(("text", ev.message_id), ev),
    T.ToolCallArgsEvent: lambda c, ev: c.delta(("tool", ev.tool_call_id), ev),
    T.ReasoningMessageContentEvent: lambda c, ev: c.delta(("reasoning", ev.message_id), ev),
    T.TextMessageStartEvent: lambda c, ev: c.start(("text", ev.message_id), ev),
    T.TextMessageEndEvent: lambda c, ev: c.end(("text", ev.message_id), ev),
    T.ToolCallStartEvent: _tool_start,
    T.ToolCallEndEvent: lambda c, ev: c.end(("tool", ev.tool_call_id), ev),
    T.ReasoningMessageStartEvent: lambda c, ev: c.start(("reasoning", ev.message_id), ev),
    T.ReasoningMessageEndEvent: lambda c, ev: c.end(("reasoning", ev.message_id), ev),
    **dict.fromkeys(_STATE, lambda c, ev: c.state_events.append(ev)),
    **dict.fromkeys(_HELD, _Compactor.hold),
    **dict.fromkeys(_RUN_BOUNDARIES, _boundary),
    **dict.fromkeys(_BARRIERS, _barrier),
}
"""What compaction does per event class (merge deltas, open/close a stream, hold, flush)."""

PASS_THROUGH: frozenset[type[Any]] = frozenset(
    {
        T.ActivityDeltaEvent,
        T.ActivitySnapshotEvent,
        T.ReasoningEncryptedValueEvent,
        T.ReasoningEndEvent,
        T.ReasoningStartEvent,
        T.ToolCallResultEvent,
    }
)
"""Event classes passed through unchanged, in place, on purpose."""


def compact_events(events: Iterable[T.Event]) -> list[T.Event]:
    """A shorter list of events that applies to the same messages and state (see module doc).

    Args:
        events: AG-UI event structs (:data:`agui.types.Event` members) in stream order, e.g.
            the delivered events of a :class:`~agui.pipeline._pipeline.Pipeline` made with
            ``keep_events=True``.

    Returns:
        A new list; the input and its events are not modified (events that need no change are
        the same objects).
    """
    compactor = _Compactor()
    feed = compactor.feed
    for ev in events:
        feed(ev)
    return compactor.finish()
