"""Chunk normalizer: ``*_CHUNK`` events become START / CONTENT / END triads.

AG-UI lets a producer send a streamed item as a run of chunk events
(``TEXT_MESSAGE_CHUNK``, ``TOOL_CALL_CHUNK``, ``REASONING_MESSAGE_CHUNK``)
instead of the explicit triad. The rest of the client (verifier, applier)
only understands triads, so :class:`Normalizer` expands chunks first, exactly
as the spec's streaming pattern describes (``docs/spec/1.1/basic/patterns/
streaming.mdx``; the reference client's ``chunks/transform.ts``):

* **Opening.** A chunk opens a new item when its lane has no open stream of
  its kind, or when it names an id different from the open one. Opening first
  closes whatever the lane had open (a synthetic ``*_END``, possibly of
  another kind). The opening chunk must carry the id (``chunk_missing_id``)
  and, for a tool call, the ``toolCallName`` (``chunk_missing_tool_call_name``).
* **Continuing.** A chunk with no id, or the open id, continues the open
  stream. It may repeat ``role`` / ``name`` (text) or ``toolCallName`` /
  ``parentMessageId`` (tool call) only with the value the opener established
  (the opener's absent role establishes ``"assistant"``); anything else is a
  ``chunk_conflicting_*`` violation (spec MUST, 1.0).
* **What is emitted.** The START carries the id, role (text; default
  ``"assistant"``), name, toolCallName, parentMessageId (tool), role
  ``"reasoning"`` (reasoning), the chunk's ``subagentRunId``, ``metadata`` and
  ``timestamp``. A CONTENT / ARGS is emitted when the chunk has a ``delta``
  (an empty delta included: it is content, not a close) or a ``rawEvent``; it
  carries the delta, ``metadata``, ``rawEvent``, ``timestamp`` and the
  chunk's ``subagentRunId`` (else the opener's). A continuation carrying only
  ``metadata`` yields a zero-length CONTENT / ARGS holding it. ``rawEvent``
  never rides on the START; ``metadata`` never rides on a synthetic END.
* **Lanes.** One open chunk stream per lane; a lane is the
  ``subagentRunId`` (``None`` = the parent agent), so subagents may stream
  concurrently. A chunk naming an open id continues that id's lane (a
  disagreeing tag is ``chunk_subagent_mismatch``); an id-less chunk goes to
  its tag's lane, else the parent lane when it has a stream of that kind,
  else the sole lane that does (several: ``chunk_ambiguous_lane``).
* **Closing.** Explicit text / tool-call / reasoning events, ``STEP_*``,
  ``STATE_*``, ``CUSTOM`` and ``TOOL_CALL_RESULT`` close their own lane
  (their ``subagentRunId``; absent = parent). ``RUN_STARTED``,
  ``RUN_FINISHED``, ``RUN_ERROR`` and ``MESSAGES_SNAPSHOT`` close every lane
  (in opening order). ``SUBAGENT_FINISHED`` / ``SUBAGENT_ERROR`` close that
  subagent's lane. ``RAW``, ``ACTIVITY_SNAPSHOT``, ``ACTIVITY_DELTA``,
  ``REASONING_ENCRYPTED_VALUE`` and ``SUBAGENT_STARTED`` close nothing. The
  synthetic END is emitted before the closing event and carries the lane's
  ``subagentRunId``.
* **End of stream** emits nothing (as the spec and the reference client):
  a chunk stream still open when the source ends has no END; the verifier's
  ``finish()`` reports the missing terminal event (``truncated_stream``).

Input events are never mutated: every synthesized event is a new generated
struct and pass-through events are returned as the same object.

A chunk that violates a rule produces no events and leaves the normalizer's
state untouched (tolerant mode drops it and continues).

The rules above are one table keyed by event class, :data:`HANDLERS`, and
:data:`PASS_THROUGH`, the classes that close nothing; rule codes come from
:mod:`agui._rules`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Final, NamedTuple, Protocol, TypeAlias, cast

from msgspec import UNSET, UnsetType

from agui import _rules as R
from agui import types as T
from agui.errors import ProtocolViolation

__all__ = ["HANDLERS", "PASS_THROUGH", "NormalizeResult", "Normalizer"]

_Tag: TypeAlias = str | UnsetType
"""A ``subagentRunId`` as a struct holds it (UNSET = the parent agent)."""


class _Tagged(Protocol):
    """An event that closes its own lane: it carries a ``subagentRunId``."""

    @property
    def subagent_run_id(self) -> _Tag: ...


class _Closing(Protocol):
    """SUBAGENT_FINISHED / SUBAGENT_ERROR: the subagent whose lane they close."""

    @property
    def subagent_run_id(self) -> str: ...


_Chunk: TypeAlias = T.TextMessageChunkEvent | T.ToolCallChunkEvent | T.ReasoningMessageChunkEvent

_NO_VIOLATIONS: tuple[ProtocolViolation, ...] = ()
_TEXT = 0
_TOOL = 1
_REASONING = 2

_KIND_LABEL = ("text message", "tool call", "reasoning message")
_CHUNK_TYPE = ("TEXT_MESSAGE_CHUNK", "TOOL_CALL_CHUNK", "REASONING_MESSAGE_CHUNK")
_ID_FIELD = ("messageId", "toolCallId", "messageId")


# role literals the synthesized openers carry (the generated role fields are Literal[str])
_ASSISTANT: Final = "assistant"
_REASONING_ROLE: Final = "reasoning"


class NormalizeResult(NamedTuple):
    """What one :meth:`Normalizer.feed` produced.

    Attributes:
        events: the events to pass on, in order (generated structs): the
            synthesized END of a closed chunk stream, then the event itself
            (non-chunk events) or the START / CONTENT events it expands to.
            Empty when the chunk violated a rule.
        violations: the rule violations of this event (``ProtocolViolation``
            with a code from :mod:`agui._rules`); an immutable empty
            tuple in the common case.
    """

    events: list[Any]
    violations: Sequence[ProtocolViolation] = _NO_VIOLATIONS


# NamedTuple construction without the generated Python-level __new__ (hot path)
_new_result = tuple[Any, ...].__new__


class _Pending:
    """The chunk stream a lane is assembling (the opener's established fields)."""

    __slots__ = ("id", "kind", "name", "parent_message_id", "role", "tag")

    def __init__(
        self,
        kind: int,
        id: str,
        tag: _Tag,
        role: object = UNSET,
        name: object = UNSET,
        parent_message_id: object = UNSET,
    ) -> None:
        self.kind = kind
        self.id = id
        self.tag = tag  # the opener's subagentRunId, UNSET for the parent agent
        self.role = role  # text: established role
        self.name = name  # text: name; tool call: toolCallName
        self.parent_message_id = parent_message_id


_NO_PENDING = _Pending(-1, "", UNSET)
"""A lane with nothing open (its kind is no chunk kind's)."""


class _ChunkKind:
    """What differs between the three chunk kinds: the id's attribute and wire name, the
    fields a continuation must agree on, how an opener becomes a START event and how a
    delta becomes a CONTENT/ARGS event (:meth:`Normalizer._chunk` does the rest)."""

    __slots__ = ("agree", "content", "id_attr", "id_field", "kind", "name_field", "open")

    def __init__(
        self,
        kind: int,
        id_attr: str,
        agree: tuple[tuple[str, str, str, str], ...],
        open: Callable[[Any, str, _Tag], tuple[_Pending, Any] | str],
        content: Callable[[str, str, _Tag, Any, Any, Any], Any],
        name_field: str = "",
    ) -> None:
        self.kind = kind
        self.id_attr = id_attr
        self.id_field = _ID_FIELD[kind]
        #: (chunk attribute, the opener's attribute, rule code, wire field) per field
        self.agree = agree
        self.open = open  # -> (pending, START event), or the rule code of a missing field
        self.content = content  # (id, delta, subagentRunId, metadata, rawEvent, timestamp)
        self.name_field = name_field


def _open_text(chunk: T.TextMessageChunkEvent, message_id: str, tag: _Tag) -> tuple[_Pending, Any]:
    role = _ASSISTANT if chunk.role is UNSET else chunk.role
    start = T.TextMessageStartEvent(
        message_id=message_id,
        role=role,
        name=chunk.name,
        subagent_run_id=tag,
        metadata=chunk.metadata,
        timestamp=chunk.timestamp,
    )
    return _Pending(_TEXT, message_id, tag, role=role, name=chunk.name), start


def _open_tool(
    chunk: T.ToolCallChunkEvent, tool_call_id: str, tag: _Tag
) -> tuple[_Pending, Any] | str:
    name = chunk.tool_call_name
    if name is UNSET:
        return R.CHUNK_MISSING_TOOL_CALL_NAME
    parent = chunk.parent_message_id
    start = T.ToolCallStartEvent(
        tool_call_id=tool_call_id,
        tool_call_name=name,
        parent_message_id=parent,
        subagent_run_id=tag,
        metadata=chunk.metadata,
        timestamp=chunk.timestamp,
    )
    return _Pending(_TOOL, tool_call_id, tag, name=name, parent_message_id=parent), start


def _open_reasoning(
    chunk: T.ReasoningMessageChunkEvent, message_id: str, tag: _Tag
) -> tuple[_Pending, Any]:
    start = T.ReasoningMessageStartEvent(
        message_id=message_id,
        role=_REASONING_ROLE,
        subagent_run_id=tag,
        metadata=chunk.metadata,
        timestamp=chunk.timestamp,
    )
    return _Pending(_REASONING, message_id, tag), start


_TEXT_CHUNK = _ChunkKind(
    _TEXT,
    "message_id",
    (
        ("role", "role", R.CHUNK_CONFLICTING_ROLE, "role"),
        ("name", "name", R.CHUNK_CONFLICTING_NAME, "name"),
    ),
    _open_text,
    lambda i, d, s, m, r, t: T.TextMessageContentEvent(
        message_id=i, delta=d, subagent_run_id=s, metadata=m, raw_event=r, timestamp=t
    ),
)
_TOOL_CHUNK = _ChunkKind(
    _TOOL,
    "tool_call_id",
    (
        ("tool_call_name", "name", R.CHUNK_CONFLICTING_TOOL_CALL_NAME, "toolCallName"),
        (
            "parent_message_id",
            "parent_message_id",
            R.CHUNK_CONFLICTING_PARENT_MESSAGE_ID,
            "parentMessageId",
        ),
    ),
    _open_tool,
    lambda i, d, s, m, r, t: T.ToolCallArgsEvent(
        tool_call_id=i, delta=d, subagent_run_id=s, metadata=m, raw_event=r, timestamp=t
    ),
    name_field="toolCallName",
)
_REASONING_CHUNK = _ChunkKind(
    _REASONING,
    "message_id",
    (),
    _open_reasoning,
    lambda i, d, s, m, r, t: T.ReasoningMessageContentEvent(
        message_id=i, delta=d, subagent_run_id=s, metadata=m, raw_event=r, timestamp=t
    ),
)


def _end_of(
    pending: _Pending,
) -> T.TextMessageEndEvent | T.ToolCallEndEvent | T.ReasoningMessageEndEvent:
    """The synthetic END closing ``pending`` (carries the opener's subagentRunId only)."""
    kind = pending.kind
    if kind == _TEXT:
        return T.TextMessageEndEvent(message_id=pending.id, subagent_run_id=pending.tag)
    if kind == _TOOL:
        return T.ToolCallEndEvent(tool_call_id=pending.id, subagent_run_id=pending.tag)
    return T.ReasoningMessageEndEvent(message_id=pending.id, subagent_run_id=pending.tag)


def _shown(value: object) -> str:
    if value is UNSET:
        return "(absent)"
    return f"'{getattr(value, 'value', value)}'"


class Normalizer:
    """Incremental chunk expander: feed events one at a time, in stream order.

    ``Normalizer().feed(event)`` returns a :class:`NormalizeResult`. Non-chunk
    events pass through unchanged (after any END they force); chunk events are
    expanded as described in the module docstring. Never raises on
    protocol-level faults: they are returned as violations. Not thread-safe;
    one instance per stream.
    """

    __slots__ = ("_lanes",)

    def __init__(self) -> None:
        # lane (subagentRunId, None = parent) -> pending stream; insertion order = opening order
        self._lanes: dict[str | None, _Pending] = {}

    @property
    def open_streams(self) -> dict[str | None, tuple[str, str]]:
        """Open chunk streams per lane: ``{lane: (kind, id)}``; kind is
        ``"text"``, ``"tool"`` or ``"reasoning"``; lane ``None`` = parent."""
        kinds = ("text", "tool", "reasoning")
        return {lane: (kinds[p.kind], p.id) for lane, p in self._lanes.items()}

    @property
    def idle(self) -> bool:
        """True when no chunk stream is open (every event passes unchanged
        until the next ``*_CHUNK``)."""
        return not self._lanes

    def save(self) -> object:
        """The normalizer's state, for :meth:`restore` (an undo, as the server's
        guard makes when a later check refuses an event the normalizer took): a
        copy of its lanes; the pending streams in them are never changed once
        stored, so they are shared."""
        return self._lanes.copy()

    def restore(self, saved: object) -> None:
        """Go back to the state :meth:`save` returned (each saved state once)."""
        self._lanes = cast("dict[str | None, _Pending]", saved)

    def feed(self, event: T.Event, position: int | None = None) -> NormalizeResult:
        """Normalize one event.

        Args:
            event: a generated AG-UI event struct (``agui.types.Event``).
            position: the event's 0-based index in the stream, copied into
                any violation (optional).

        Returns:
            NormalizeResult: ``events`` to pass downstream and ``violations``.
            A violating chunk yields no events and changes no state.
        """
        cls = type(event)
        kind = _KINDS.get(cls)
        if kind is not None:  # (the chunk handlers of HANDLERS, without their wrapper call)
            chunk: Any = event  # (a chunk of that kind)
            return self._chunk(kind, chunk, position)
        if not self._lanes:  # no chunk stream open: only chunks do anything
            return _new_result(NormalizeResult, ([event], _NO_VIOLATIONS))
        handler = HANDLERS.get(cls)
        if handler is None:
            return _new_result(NormalizeResult, ([event], _NO_VIOLATIONS))
        return handler(self, event, position)

    # --- non-chunk events ---------------------------------------------------------

    def _close_own(self, event: _Tagged, position: int | None) -> NormalizeResult:
        lanes = self._lanes
        if not lanes:
            return _new_result(NormalizeResult, ([event], _NO_VIOLATIONS))
        tag = event.subagent_run_id
        pending = lanes.pop(None if tag is UNSET else tag, None)
        if pending is None:
            return _new_result(NormalizeResult, ([event], _NO_VIOLATIONS))
        return _new_result(NormalizeResult, ([_end_of(pending), event], _NO_VIOLATIONS))

    def _close_all(self, event: T.Event, position: int | None) -> NormalizeResult:
        lanes = self._lanes
        if not lanes:
            return _new_result(NormalizeResult, ([event], _NO_VIOLATIONS))
        out: list[T.Event] = [_end_of(p) for p in lanes.values()]
        lanes.clear()
        out.append(event)
        return _new_result(NormalizeResult, (out, _NO_VIOLATIONS))

    def _close_subagent(self, event: _Closing, position: int | None) -> NormalizeResult:
        lanes = self._lanes
        if not lanes:
            return _new_result(NormalizeResult, ([event], _NO_VIOLATIONS))
        pending = lanes.pop(event.subagent_run_id, None)
        if pending is None:
            return _new_result(NormalizeResult, ([event], _NO_VIOLATIONS))
        return _new_result(NormalizeResult, ([_end_of(pending), event], _NO_VIOLATIONS))

    # --- lane resolution ------------------------------------------------------------

    def _resolve_lane(
        self, kind: int, entity_id: _Tag, tag: _Tag, chunk: _Chunk, position: int | None
    ) -> tuple[str | None, ProtocolViolation | None]:
        lanes = self._lanes
        if entity_id is not UNSET:
            for lane, pending in lanes.items():
                if pending.kind == kind and pending.id == entity_id:
                    if tag is not UNSET and tag != lane:
                        return None, ProtocolViolation(
                            R.CHUNK_SUBAGENT_MISMATCH,
                            f"Cannot continue {_KIND_LABEL[kind]} '{entity_id}': "
                            f"{_CHUNK_TYPE[kind]} subagentRunId '{tag}' does not match the open "
                            f"stream's subagent "
                            f"{_shown(lane) if lane is not None else '(the parent agent)'}.",
                            event=chunk,
                            position=position,
                            id=entity_id,
                        )
                    return lane, None
            return (None if tag is UNSET else tag), None
        if tag is not UNSET:
            return tag, None
        parent = lanes.get(None)
        if parent is not None and parent.kind == kind:
            return None, None
        candidates = [lane for lane, p in lanes.items() if p.kind == kind]
        if len(candidates) == 1:
            return candidates[0], None
        if candidates:
            return None, ProtocolViolation(
                R.CHUNK_AMBIGUOUS_LANE,
                f"Ambiguous {_CHUNK_TYPE[kind]}: it carries neither a {_ID_FIELD[kind]} nor a "
                f"subagentRunId, but {len(candidates)} lanes have an open {_KIND_LABEL[kind]} "
                f"({', '.join(repr(c) for c in candidates)}).",
                event=chunk,
                position=position,
            )
        return None, None

    def _missing(
        self,
        code: str,
        kind: int,
        field: str,
        chunk: _Chunk,
        position: int | None,
        entity_id: str | None = None,
    ) -> NormalizeResult:
        return NormalizeResult(
            [],
            (
                ProtocolViolation(
                    code,
                    f"First {_CHUNK_TYPE[kind]} must have a {field}: no {_KIND_LABEL[kind]} is "
                    f"open to continue in its lane, and a consumer must not invent one.",
                    event=chunk,
                    position=position,
                    id=entity_id,
                ),
            ),
        )

    @staticmethod
    def _conflict(
        code: str,
        kind: int,
        entity_id: str,
        field: str,
        incoming: object,
        established: object,
        chunk: _Chunk,
        position: int | None,
    ) -> NormalizeResult:
        return NormalizeResult(
            [],
            (
                ProtocolViolation(
                    code,
                    f"Cannot continue {_KIND_LABEL[kind]} '{entity_id}': {_CHUNK_TYPE[kind]} "
                    f"{field} {_shown(incoming)} does not match the open stream's {field} "
                    f"{_shown(established)}.",
                    event=chunk,
                    position=position,
                    id=entity_id,
                ),
            ),
        )

    # --- chunk events ------------------------------------------------------------------

    def _chunk(self, kind: _ChunkKind, chunk: _Chunk, position: int | None) -> NormalizeResult:
        """One ``*_CHUNK`` event of ``kind``, expanded: it continues its lane's open item
        (its established fields must agree) or opens one (closing what its lane held), then
        becomes a CONTENT/ARGS event when it carries a delta (or a raw event, or metadata
        on a continuation)."""
        item_id = getattr(chunk, kind.id_attr)
        tag = chunk.subagent_run_id
        lanes = self._lanes
        number = kind.kind
        # first the chunk's own lane: when it continues that lane's open stream, that is
        # what lane resolution would decide (a (kind, id) is open in at most one lane)
        lane = None if tag is UNSET else tag
        pending = lanes.get(lane, _NO_PENDING)
        continues = pending.kind == number and (item_id is UNSET or item_id == pending.id)
        if not continues:
            lane, violation = self._resolve_lane(number, item_id, tag, chunk, position)
            if violation is not None:
                return NormalizeResult([], (violation,))
            pending = lanes.get(lane, _NO_PENDING)
            continues = pending.kind == number and (item_id is UNSET or item_id == pending.id)
        if continues:
            for attr, established, code, field in kind.agree:
                value = getattr(chunk, attr)
                if value is not UNSET and value != getattr(pending, established):
                    return self._conflict(
                        code,
                        number,
                        pending.id,
                        field,
                        value,
                        getattr(pending, established),
                        chunk,
                        position,
                    )
            out: list[Any] = []
        else:
            if item_id is UNSET:
                return self._missing(R.CHUNK_MISSING_ID, number, kind.id_field, chunk, position)
            opened = kind.open(chunk, item_id, tag)
            if isinstance(opened, str):  # a field the opener must carry is missing
                return self._missing(opened, number, kind.name_field, chunk, position, item_id)
            out = [] if pending is _NO_PENDING else [_end_of(lanes.pop(lane))]
            pending, start = opened
            lanes[lane] = pending
            out.append(start)
        delta = chunk.delta
        raw = chunk.raw_event
        if delta is not UNSET or raw is not UNSET or (not out and chunk.metadata is not UNSET):
            out.append(
                kind.content(
                    pending.id,
                    "" if delta is UNSET else delta,
                    pending.tag if tag is UNSET else tag,
                    chunk.metadata,
                    raw,
                    chunk.timestamp,
                )
            )
        return _new_result(NormalizeResult, (out, _NO_VIOLATIONS))

    def _text_chunk(self, chunk: T.TextMessageChunkEvent, position: int | None) -> NormalizeResult:
        return self._chunk(_TEXT_CHUNK, chunk, position)

    def _tool_chunk(self, chunk: T.ToolCallChunkEvent, position: int | None) -> NormalizeResult:
        return self._chunk(_TOOL_CHUNK, chunk, position)

    def _reasoning_chunk(
        self, chunk: T.ReasoningMessageChunkEvent, position: int | None
    ) -> NormalizeResult:
        return self._chunk(_REASONING_CHUNK, chunk, position)

    #: the chunks, expanded (feed calls _chunk for them directly: see _KINDS)
    CHUNK_HANDLERS: ClassVar[
        dict[type, Callable[[Normalizer, Any, int | None], NormalizeResult]]
    ] = {
        T.TextMessageChunkEvent: _text_chunk,
        T.ToolCallChunkEvent: _tool_chunk,
        T.ReasoningMessageChunkEvent: _reasoning_chunk,
    }
    #: Event class -> handler ``(normalizer, event, position)`` (:data:`HANDLERS`)
    HANDLERS: ClassVar[dict[type, Callable[[Normalizer, Any, int | None], NormalizeResult]]] = {
        # close their own lane (their subagentRunId; absent = the parent agent)
        T.TextMessageStartEvent: _close_own,
        T.TextMessageContentEvent: _close_own,
        T.TextMessageEndEvent: _close_own,
        T.ToolCallStartEvent: _close_own,
        T.ToolCallArgsEvent: _close_own,
        T.ToolCallEndEvent: _close_own,
        T.ToolCallResultEvent: _close_own,
        T.StateSnapshotEvent: _close_own,
        T.StateDeltaEvent: _close_own,
        T.CustomEvent: _close_own,
        T.StepStartedEvent: _close_own,
        T.StepFinishedEvent: _close_own,
        T.ReasoningStartEvent: _close_own,
        T.ReasoningMessageStartEvent: _close_own,
        T.ReasoningMessageContentEvent: _close_own,
        T.ReasoningMessageEndEvent: _close_own,
        T.ReasoningEndEvent: _close_own,
        # close every lane, in opening order
        T.RunStartedEvent: _close_all,
        T.RunFinishedEvent: _close_all,
        T.RunErrorEvent: _close_all,
        T.MessagesSnapshotEvent: _close_all,
        # close the subagent's lane
        T.SubagentFinishedEvent: _close_subagent,
        T.SubagentErrorEvent: _close_subagent,
        **CHUNK_HANDLERS,
    }


HANDLERS = Normalizer.HANDLERS
"""Event class -> the normalizer's handler ``(normalizer, event, position)``:
every event class the normalizer acts on (closing lanes or expanding chunks)."""

PASS_THROUGH: frozenset[type] = frozenset(
    {
        T.RawEvent,
        T.ActivitySnapshotEvent,
        T.ActivityDeltaEvent,
        T.ReasoningEncryptedValueEvent,
        T.SubagentStartedEvent,
    }
)
"""Event classes the normalizer passes on untouched on purpose (they close no
lane). A class in neither table (a type the schema gained since) passes through
by rule; handling it specially is one entry in :data:`HANDLERS`."""

_KINDS: dict[type, _ChunkKind] = {
    T.TextMessageChunkEvent: _TEXT_CHUNK,
    T.ToolCallChunkEvent: _TOOL_CHUNK,
    T.ReasoningMessageChunkEvent: _REASONING_CHUNK,
}
"""The chunk classes (:attr:`Normalizer.CHUNK_HANDLERS`) and their kinds, for :meth:`Normalizer.feed`."""
