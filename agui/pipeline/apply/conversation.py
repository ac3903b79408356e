"""The applier: a :class:`Conversation` that AG-UI events update in place.

Implements the reducer of the spec and the reference client
(``defaultApplyEvents``, and the spec's interrupt rules):
text/reasoning/tool-call assembly, state snapshots and JSON Patch deltas,
activity messages, MESSAGES_SNAPSHOT reconciliation, RUN_STARTED input
messages, run outcomes and interrupts.

Dispatch is one table keyed by the generated event class, :data:`HANDLERS`
(the handlers live here for the run lifecycle, steps, subagents, RAW and
CUSTOM, in :mod:`agui.pipeline.apply.messages` for streamed messages and in
:mod:`agui.pipeline.apply.snapshots` for state, snapshots and activity), plus
:data:`PASS_THROUGH`, the classes delivered as they are.

It expects events that already went through the normalizer (no ``*_CHUNK``)
and, normally, the verifier; but it never raises on bad data: anything it
cannot apply becomes a :class:`~agui.updates.WarningUpdate` and the
conversation keeps what was valid.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import msgspec
from msgspec.structs import force_setattr

from agui import types as T
from agui.errors import RunError
from agui.pipeline import profiles
from agui.pipeline.apply.messages import MessageEvents
from agui.pipeline.apply.patch import clone_json
from agui.pipeline.apply.records import CallRecord, MessageRecord, opt, role_of, struct_tag
from agui.pipeline.apply.snapshots import SnapshotEvents
from agui.pipeline.lifecycle import RunLifecycle
from agui.updates import (
    CARRIES_EVENT,
    Custom,
    ErrorUpdate,
    EventReceived,
    MetadataChanged,
    Paused,
    Raw,
    RunStarted,
    StepChanged,
    SubagentChanged,
    Update,
    WarningUpdate,
)

__all__ = ["HANDLERS", "PASS_THROUGH", "Conversation", "role_of"]

UNSET = msgspec.UNSET


class Conversation(MessageEvents, SnapshotEvents):
    """Messages, state, activity messages, interrupts and run outcome of a thread.

    ``Conversation(messages=(), state=None)``: ``messages`` are generated
    ``Message`` structs (or plain dicts in wire shape, converted); ``state``
    the initial agent state -- ``None`` means absent (:attr:`state` reads None),
    which the spec reads as ``{}`` (``RunAgentInput.state``): a STATE_DELTA
    before any snapshot applies to ``{}``, as in the reference client (a
    STATE_SNAPSHOT of ``null`` is a real null, and a patch on it fails);
    otherwise any JSON value (kept as given: do not mutate it afterwards).

    Write side: :meth:`apply` one event at a time (events from the
    normalizer; ``*_CHUNK`` events are refused with a warning). It mutates
    the conversation in place and returns the :mod:`agui.updates` values
    describing what changed; it never raises on bad data.

    Cost: O(1) amortised per TEXT/REASONING CONTENT and TOOL_CALL_ARGS delta
    (fragment lists joined lazily); STATE_DELTA/ACTIVITY_DELTA in place for
    single-op patches, O(state) for multi-op patches (see
    :mod:`agui.pipeline.apply.patch`); O(distance from the end) for TOOL_CALL_RESULT
    placement; O(n messages) for MESSAGES_SNAPSHOT and reads of :attr:`messages`.

    Read side: :attr:`messages`, :attr:`state`, :attr:`pending_interrupts`,
    :attr:`pending_tool_call_ids`, :attr:`outcome`, :attr:`result`,
    :attr:`run_error`, :attr:`run_id`, :attr:`thread_id`, :meth:`message`,
    :meth:`input_messages`, :meth:`input_state`. :attr:`offered_tools`: the
    names of the tools the client offered in ``RunAgentInput.tools`` for the
    current run (a frozenset; ``None`` while unknown), set by the session that
    sends the run, or from a RUN_STARTED ``input``; it decides which calls are
    the client's (:attr:`pending_tool_call_ids`). The state is copy-on-write:
    the conversation never mutates a state object it handed out; each change
    replaces it (a STATE_DELTA copies the containers on its path and shares
    the rest, see :func:`agui.pipeline.apply.patch.patched_copy`), so a
    ``StateChanged.state`` or an earlier read of :attr:`state` keeps showing
    the state as it was then. Treat them as read-only: they share subtrees
    with the current state (``ActivityChanged.content`` is a private copy).

    Example::

        conv = Conversation()
        for event in events:          # normalized, verified events
            for update in conv.apply(event):
                ...
        conv.messages[-1].content     # "Hello, world"

    """

    def __init__(self, messages: Iterable[Any] = (), state: Any = None) -> None:
        self._list: list[MessageRecord] = []
        self._by_id: dict[str, MessageRecord] = {}
        self._calls: dict[str, CallRecord] = {}
        self._state: Any = state
        self._state_absent = state is None  # absent reads as {} for a patch
        self._pending_interrupts: list[Any] = []
        self._legacy = profiles.LegacyInterrupts()  # agui.pipeline.profiles: LangGraph on_interrupt
        self._pending_tool_call_ids: list[str] = []
        self._run_calls: dict[str, None] = {}
        self._answered: set[str] = set()
        self._lifecycle = RunLifecycle()
        self.offered_tools: frozenset[str] | None = None
        for m in messages:
            if isinstance(m, dict):
                m = msgspec.convert(m, T.Message)
            self._append(MessageRecord.from_struct(m))

    # ------------------------------------------------------------------ read

    @property
    def lifecycle(self) -> RunLifecycle:
        """The thread's :class:`~agui.pipeline.lifecycle.RunLifecycle` (the one record of
        run state; the properties below read it)."""
        return self._lifecycle

    @property
    def outcome(self) -> str | None:
        """Outcome of the latest run: ``None`` while running (or before any run),
        ``success`` | ``interrupted`` | ``cancelled`` | ``failed``."""
        return self._lifecycle.outcome

    @property
    def result(self) -> Any:
        """RUN_FINISHED ``result`` of the latest successful run (any JSON)."""
        return self._lifecycle.result

    @property
    def run_error(self) -> RunError | None:
        """The latest run's RUN_ERROR, if it failed."""
        return self._lifecycle.run_error

    @property
    def run_id(self) -> str | None:
        """``runId`` of the latest run (None before any)."""
        return self._lifecycle.run_id

    @property
    def thread_id(self) -> str | None:
        """``threadId`` of the latest run (None before any)."""
        return self._lifecycle.thread_id

    @property
    def messages(self) -> list[T.Message]:
        """Generated ``Message`` structs, in conversation order (built on demand).

        Each struct is cached until its message changes, so reading this after
        every event costs O(n) plus the messages that changed. The structs are
        shared with the cache (and, for messages from a snapshot or run input,
        with the delivered event): treat them as read-only.
        """
        return [r.build() for r in self._list]

    @property
    def state(self) -> Any:
        """The agent state: any JSON value (``None`` while absent, or after a
        null snapshot)."""
        return self._state

    @property
    def state_absent(self) -> bool:
        """True while there is no state: none given, none received (a STATE_SNAPSHOT
        of ``null`` is a state; a STATE_DELTA makes one from ``{}``)."""
        return self._state_absent and self._state is None

    @property
    def pending_interrupts(self) -> list[T.Interrupt]:
        """Interrupts of the latest RUN_FINISHED with an interrupt outcome (else [])."""
        return list(self._pending_interrupts)

    @property
    def pending_tool_call_ids(self) -> list[str]:
        """Tool calls left for the client by the latest successful run, in start order.

        The producer's ``pendingToolCallIds`` when it sends one (an empty list
        means none). When it is absent: the calls started in that run with no
        TOOL_CALL_RESULT and no ``tool`` message in the conversation (a
        MESSAGES_SNAPSHOT may bring it), to a tool in :attr:`offered_tools`
        -- a call to a tool nobody offered is the server's. While
        :attr:`offered_tools` is unknown (``None``) every such call counts, as
        in the reference client."""
        return list(self._pending_tool_call_ids)

    def message(self, message_id: str) -> T.Message | None:
        """The message with this id as a generated struct, or None."""
        rec = self._by_id.get(message_id)
        return rec.build() if rec is not None else None

    def text_of(self, message_id: str) -> str | None:
        """Text content of a message (None when unknown); no struct is built."""
        rec = self._by_id.get(message_id)
        return rec.get_text() if rec is not None else None

    def input_messages(self) -> list[T.Message]:
        """Messages to send back in ``RunAgentInput.messages``: activity
        messages are client-only and stripped (spec ``messages``)."""
        return [r.build() for r in self._list if r.role != "activity"]

    def input_state(self) -> Any:
        """The state to send in ``RunAgentInput.state``: the current state, or
        ``{}`` while there is none (spec: absent state is ``{}``; a null state
        reads as absent), as the reference client sends. Live object: encode it
        or copy it, do not mutate it."""
        return {} if self._state is None else self._state

    def add_user_message(self, text: Any, message_id: str | None = None) -> str:
        """Append a user message (``text``: str or content-part list); returns its id
        (a new uuid4 when not given)."""
        mid = message_id or str(uuid.uuid4())
        if isinstance(text, str):
            rec = MessageRecord.text_message(mid, "user", text)
        else:
            rec = MessageRecord(mid, "user")
            rec.content = text
        self._append(rec)
        return mid

    def tool_call(self, tool_call_id: str) -> T.ToolCall | None:
        """The tool call with this id as a generated ``ToolCall`` struct (name
        and reassembled arguments), or None."""
        call = self._calls.get(tool_call_id)
        return call.build() if call is not None else None

    def unanswered_tool_call_ids(self) -> list[str]:
        """:attr:`pending_tool_call_ids` that no tool message answers yet
        (O(n messages) when any are pending)."""
        pending = self._pending_tool_call_ids
        if not pending:
            return []
        answered = {r.tool_call_id for r in self._list if r.role == "tool"}
        return [c for c in pending if c not in answered]

    # ---------------------------------------------------------------- edit

    def replace_messages(self, messages: Iterable[Any]) -> None:
        """Replace the whole message list (``Message`` structs or wire dicts).
        Pending tool calls whose call is no longer in the list are dropped.

        Raises:
            ValueError: two messages share an id (nothing is changed).
            msgspec.ValidationError: a dict does not fit ``Message``.
        """
        records = self._records(messages, {})
        self._list, self._by_id, self._calls = [], {}, {}
        for rec in records:
            self._append(rec)
        self._pending_tool_call_ids = [c for c in self._pending_tool_call_ids if c in self._calls]

    def add_messages(self, messages: Iterable[Any]) -> list[str]:
        """Append messages (structs or wire dicts) at the end; returns their ids.

        Raises:
            ValueError: an id is already in the conversation or given twice
                (nothing is added).
            msgspec.ValidationError: a dict does not fit ``Message``.
        """
        records = self._records(messages, self._by_id)
        for rec in records:
            self._append(rec)
        return [rec.id for rec in records]

    def replace_state(self, state: Any) -> None:
        """Replace the agent state (``None``: absent). Kept as given (the
        conversation never mutates it; do not mutate it afterwards)."""
        self._state = state
        self._state_absent = state is None

    @staticmethod
    def _records(messages: Iterable[Any], taken: Mapping[str, Any]) -> list[MessageRecord]:
        records: list[MessageRecord] = []
        seen: set[str] = set()
        for m in messages:
            if isinstance(m, dict):
                m = msgspec.convert(m, T.Message)
            rec = MessageRecord.from_struct(m)
            if rec.id in taken or rec.id in seen:
                raise ValueError(f"message id {rec.id!r} is already in the conversation")
            seen.add(rec.id)
            records.append(rec)
        return records

    def __len__(self) -> int:
        return len(self._list)

    # ----------------------------------------------------------------- apply

    def apply(self, event: T.Event) -> list[Update]:
        """Apply one event; return the updates describing what changed.

        Never raises on bad data: an event that cannot be applied yields a
        WarningUpdate (code ``apply_*``) and leaves the conversation as it was.
        """
        handler = _DISPATCH.get(type(event))
        if handler is None:
            if isinstance(struct_tag(event), str):  # an event type the schema gained: by rule
                return [EventReceived(event)]
            return [
                WarningUpdate("apply_unknown_event", f"cannot apply event {struct_tag(event)!r}")
            ]
        try:
            updates = handler(self, event)
        except Exception as exc:  # noqa: BLE001 - last line of defence: bad data never crashes a run
            return [
                WarningUpdate(
                    "apply_failed",
                    f"could not apply {struct_tag(event)}: {type(exc).__name__}: {exc}",
                )
            ]
        for update in updates:
            if type(update) in CARRIES_EVENT:  # each update carries the event it reports
                force_setattr(update, "from_event", event)
        return updates

    # ------------------------------------------------------------- internals

    def _append(self, rec: MessageRecord) -> None:
        self._list.append(rec)
        self._by_id[rec.id] = rec
        if rec.calls:
            for c in rec.calls:
                self._calls.setdefault(c.id, c)

    def _merge_metadata(self, target: Any, event: Any, target_id: str, out: list[Update]) -> None:
        md = event.metadata
        if md is UNSET or not isinstance(md, dict):
            return
        md = clone_json(md)
        if target.metadata is None:
            target.metadata = md
        else:
            target.metadata.update(md)
        target.built = None
        if isinstance(target, CallRecord):
            target.owner.built = None
        out.append(MetadataChanged(target_id, dict(target.metadata)))

    @staticmethod
    def _tagged(event: Any) -> Any:
        sub = getattr(event, "subagent_run_id", UNSET)
        return UNSET if sub is None else sub

    # -- passthrough -------------------------------------------------------------

    def _raw(self, ev: T.RawEvent) -> list[Update]:
        return [Raw(ev.event, opt(ev.source))]

    def _custom(self, ev: T.CustomEvent) -> list[Update]:
        self._legacy.see(ev)
        return [Custom(ev.name, ev.value)]

    def _step_started(self, ev: T.StepStartedEvent) -> list[Update]:
        return [StepChanged(ev.step_name, True, opt(self._tagged(ev)))]

    def _step_finished(self, ev: T.StepFinishedEvent) -> list[Update]:
        return [StepChanged(ev.step_name, False, opt(self._tagged(ev)))]

    def _subagent_started(self, ev: T.SubagentStartedEvent) -> list[Update]:
        return [SubagentChanged(ev.subagent_run_id, "started", ev.name)]

    def _subagent_error(self, ev: T.SubagentErrorEvent) -> list[Update]:
        return [SubagentChanged(ev.subagent_run_id, "error", ev.message)]

    def _subagent_finished(self, ev: T.SubagentFinishedEvent) -> list[Update]:
        outcome = getattr(ev, "outcome", UNSET)
        kind = "success" if outcome is UNSET or outcome is None else struct_tag(outcome)
        return [SubagentChanged(ev.subagent_run_id, "finished", kind)]

    def _passed_through(self, ev: Any) -> list[Update]:
        return [EventReceived(ev)]

    def _chunk_not_normalized(
        self, ev: T.ReasoningMessageChunkEvent | T.TextMessageChunkEvent | T.ToolCallChunkEvent
    ) -> list[Update]:
        tag = struct_tag(ev)
        return [
            WarningUpdate(
                "apply_chunk_not_normalized",
                f"{tag} must be expanded by the normalizer before it is applied",
            )
        ]

    # -- run lifecycle -------------------------------------------------------------

    def _run_started(self, ev: T.RunStartedEvent) -> list[Update]:
        self._lifecycle.started(ev.run_id, ev.thread_id)
        self._run_calls = {}
        self._answered = set()
        self._legacy.start()
        inp = ev.input
        if inp is not UNSET and inp is not None:
            tools = getattr(inp, "tools", UNSET)
            if isinstance(tools, list):  # the input this run answers names the offered tools
                self.offered_tools = frozenset(t.name for t in tools)
            msgs = getattr(inp, "messages", None) or ()
            for m in msgs:
                if m.id not in self._by_id:
                    self._append(MessageRecord.from_struct(m))
        return [RunStarted(ev.run_id, ev.thread_id, opt(ev.parent_run_id))]

    def _run_finished(self, ev: T.RunFinishedEvent) -> list[Update]:
        life = self._lifecycle
        ids = {"run_id": ev.run_id, "thread_id": ev.thread_id}
        outcome = ev.outcome
        kind = "success" if outcome is UNSET or outcome is None else struct_tag(outcome)
        self._pending_tool_call_ids = []
        legacy = self._legacy.finish(outcome)
        if legacy:
            # agui.pipeline.profiles compat_langgraph_on_interrupt: no outcome, the CUSTOM is the question
            self._pending_interrupts = legacy
            life.finished("interrupted", **ids)
            return [
                WarningUpdate(
                    profiles.LANGGRAPH_ON_INTERRUPT, profiles.legacy_interrupt_warning(legacy)
                ),
                Paused(tuple(legacy)),
            ]
        if kind == "interrupt":
            interrupts = list(getattr(outcome, "interrupts", None) or ())
            self._pending_interrupts = interrupts
            life.finished("interrupted", **ids)
            return [Paused(tuple(interrupts))]
        self._pending_interrupts = []
        if kind == "cancelled":
            life.finished("cancelled", **ids)
            return []
        result = ev.result
        life.finished("success", None if result is UNSET else result, **ids)
        self._pending_tool_call_ids = self.pending_after(outcome)
        return []

    def pending_after(self, outcome: Any) -> list[str]:
        """The tool calls a RUN_FINISHED with this success ``outcome`` (or
        ``UNSET``/None) leaves for the client, as of now (the rule of
        :attr:`pending_tool_call_ids`; a subscriber asks before the event is applied)."""
        declared = UNSET if outcome is UNSET or outcome is None else outcome
        declared = getattr(declared, "pending_tool_call_ids", UNSET)
        if declared is not UNSET and declared is not None:  # explicit, even []: it wins
            return list(declared)
        return self._derived_pending()

    def _derived_pending(self) -> list[str]:
        """The calls this run started that are left for the client: no
        TOOL_CALL_RESULT, no ``tool`` message in the conversation (one may
        arrive in a MESSAGES_SNAPSHOT), and -- when the offered tools are
        known -- to a tool the client offered. O(n messages) once per run."""
        candidates = [c for c in self._run_calls if c not in self._answered]
        if not candidates:
            return []
        answered = {r.tool_call_id for r in self._list if r.role == "tool"}
        offered = self.offered_tools
        pending: list[str] = []
        for cid in candidates:
            call = self._calls.get(cid)
            if cid in answered or call is None:
                continue
            if offered is not None and call.name not in offered:
                continue  # a tool nobody offered: the server runs it
            pending.append(cid)
        return pending

    def _run_error(self, ev: T.RunErrorEvent) -> list[Update]:
        err = RunError(ev.message, code=opt(ev.code))
        self._lifecycle.errored(err)
        return [ErrorUpdate(err, fatal=True)]


_C = Conversation
HANDLERS: dict[type, Callable[[Conversation, Any], list[Update]]] = {
    T.TextMessageStartEvent: _C._text_start,
    T.TextMessageContentEvent: _C._text_content,
    T.TextMessageEndEvent: _C._text_end,
    T.ReasoningMessageStartEvent: _C._reasoning_start,
    T.ReasoningMessageContentEvent: _C._reasoning_content,
    T.ReasoningMessageEndEvent: _C._reasoning_end,
    T.ReasoningStartEvent: _C._reasoning_span_start,
    T.ReasoningEndEvent: _C._reasoning_span_end,
    T.ReasoningEncryptedValueEvent: _C._encrypted_value,
    T.ToolCallStartEvent: _C._tool_start,
    T.ToolCallArgsEvent: _C._tool_args,
    T.ToolCallEndEvent: _C._tool_end,
    T.ToolCallResultEvent: _C._tool_result,
    T.StateSnapshotEvent: _C._state_snapshot,
    T.StateDeltaEvent: _C._state_delta,
    T.MessagesSnapshotEvent: _C._messages_snapshot,
    T.ActivitySnapshotEvent: _C._activity_snapshot,
    T.ActivityDeltaEvent: _C._activity_delta,
    T.RawEvent: _C._raw,
    T.CustomEvent: _C._custom,
    T.RunStartedEvent: _C._run_started,
    T.RunFinishedEvent: _C._run_finished,
    T.RunErrorEvent: _C._run_error,
    T.StepStartedEvent: _C._step_started,
    T.StepFinishedEvent: _C._step_finished,
    T.SubagentStartedEvent: _C._subagent_started,
    T.SubagentFinishedEvent: _C._subagent_finished,
    T.SubagentErrorEvent: _C._subagent_error,
    # refused: the normalizer expands chunks before anything is applied
    T.TextMessageChunkEvent: _C._chunk_not_normalized,
    T.ToolCallChunkEvent: _C._chunk_not_normalized,
    T.ReasoningMessageChunkEvent: _C._chunk_not_normalized,
}
"""Event class -> the applier's handler ``(conversation, event) -> updates``.
The three ``*_CHUNK`` classes are handled by refusing them with an
``apply_chunk_not_normalized`` warning."""
del _C

PASS_THROUGH: frozenset[type] = frozenset()
"""Event classes the applier keeps no record of, on purpose: each is delivered
as it is, in one :class:`~agui.updates.EventReceived` update. Empty today
(every 1.1 event type is applied). An event class in neither table (a type the
schema gained since) is passed through by rule the same way; an object that is
not a tagged event yields an ``apply_unknown_event`` warning."""

_DISPATCH: dict[type, Callable[[Conversation, Any], list[Update]]] = {
    **HANDLERS,
    **dict.fromkeys(PASS_THROUGH, Conversation._passed_through),
}
