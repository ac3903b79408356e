"""The applier: a :class:`Conversation` that AG-UI events update in place.

Implements the reducer of the spec and the reference client
(``defaultApplyEvents``, and the spec's interrupt rules):
text/reasoning/tool-call assembly, state snapshots and JSON Patch deltas,
activity messages, MESSAGES_SNAPSHOT reconciliation, RUN_STARTED input
messages, run outcomes and interrupts.

It expects events that already went through the normalizer (no ``*_CHUNK``)
and, normally, the verifier; but it never raises on bad data: anything it
cannot apply becomes a :class:`~agui.updates.WarningUpdate` and the
conversation keeps what was valid.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

import msgspec

from agui import types as T
from agui.apply.patch import PatchFailed, apply_patch, clone_json, plain_ops
from agui.apply.records import CallRecord, MessageRecord, role_of, struct_tag
from agui.errors import RunError
from agui.lifecycle import RunLifecycle
from agui.updates import (
    ActivityChanged,
    Custom,
    EncryptedValue,
    ErrorUpdate,
    MessagesSnapshot,
    MetadataChanged,
    Paused,
    Raw,
    ReasoningDelta,
    ReasoningEnded,
    ReasoningSpan,
    ReasoningStarted,
    RunStarted,
    StateChanged,
    StepChanged,
    SubagentChanged,
    TextDelta,
    TextEnded,
    TextStarted,
    ToolCallArgs,
    ToolCallEnded,
    ToolCallStarted,
    ToolResult,
    Update,
    WarningUpdate,
)

UNSET = msgspec.UNSET
_CLIENT_META_KEY = "@ag-ui/client"


def _opt(value: Any) -> Any:
    """``None`` for absent (UNSET) values, else the value."""
    return None if value is UNSET else value


class Conversation:
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
    :mod:`agui.apply.patch`); O(distance from the end) for TOOL_CALL_RESULT
    placement; O(n messages) for MESSAGES_SNAPSHOT and reads of :attr:`messages`.

    Read side: :attr:`messages`, :attr:`state`, :attr:`pending_interrupts`,
    :attr:`pending_tool_call_ids`, :attr:`outcome`, :attr:`result`,
    :attr:`run_error`, :attr:`run_id`, :attr:`thread_id`, :meth:`message`,
    :meth:`input_messages`, :meth:`input_state`. The state object is live:
    updates and reads return the same object the next patch mutates, so copy
    it if you keep it (``ActivityChanged.content`` is a copy: activity content
    is small).

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
        self._pending_tool_call_ids: list[str] = []
        self._run_calls: dict[str, None] = {}
        self._answered: set[str] = set()
        self._lifecycle = RunLifecycle()
        for m in messages:
            if isinstance(m, dict):
                m = msgspec.convert(m, T.Message)
            self._append(MessageRecord.from_struct(m))
        self._dispatch = self._build_dispatch()

    # ------------------------------------------------------------------ read

    @property
    def lifecycle(self) -> RunLifecycle:
        """The thread's :class:`~agui.lifecycle.RunLifecycle` (the one record of
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
    def pending_interrupts(self) -> list[T.Interrupt]:
        """Interrupts of the latest RUN_FINISHED with an interrupt outcome (else [])."""
        return list(self._pending_interrupts)

    @property
    def pending_tool_call_ids(self) -> list[str]:
        """Tool calls left for the client by the latest successful run: the
        producer's ``pendingToolCallIds`` when non-empty, else the calls started
        in that run without a TOOL_CALL_RESULT, in start order."""
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

    def __len__(self) -> int:
        return len(self._list)

    # ----------------------------------------------------------------- apply

    def apply(self, event: T.Event) -> list[Update]:
        """Apply one event; return the updates describing what changed.

        Never raises on bad data: an event that cannot be applied yields a
        WarningUpdate (code ``apply_*``) and leaves the conversation as it was.
        """
        handler = self._dispatch.get(type(event))
        if handler is None:
            tag = struct_tag(event)
            if isinstance(tag, str) and tag.endswith("_CHUNK"):
                return [
                    WarningUpdate(
                        "apply_chunk_not_normalized",
                        f"{tag} must be expanded by the normalizer before it is applied",
                    )
                ]
            return [WarningUpdate("apply_unknown_event", f"cannot apply event {tag!r}")]
        try:
            return handler(event)
        except Exception as exc:  # noqa: BLE001 - last line of defence: bad data never crashes a run
            return [
                WarningUpdate(
                    "apply_failed",
                    f"could not apply {struct_tag(event)}: {type(exc).__name__}: {exc}",
                )
            ]

    def _build_dispatch(self) -> dict[type, Any]:
        table = {
            "TEXT_MESSAGE_START": self._text_start,
            "TEXT_MESSAGE_CONTENT": self._text_content,
            "TEXT_MESSAGE_END": self._text_end,
            "REASONING_MESSAGE_START": self._reasoning_start,
            "REASONING_MESSAGE_CONTENT": self._reasoning_content,
            "REASONING_MESSAGE_END": self._reasoning_end,
            "REASONING_START": self._reasoning_span,
            "REASONING_END": self._reasoning_span,
            "REASONING_ENCRYPTED_VALUE": self._encrypted_value,
            "TOOL_CALL_START": self._tool_start,
            "TOOL_CALL_ARGS": self._tool_args,
            "TOOL_CALL_END": self._tool_end,
            "TOOL_CALL_RESULT": self._tool_result,
            "STATE_SNAPSHOT": self._state_snapshot,
            "STATE_DELTA": self._state_delta,
            "MESSAGES_SNAPSHOT": self._messages_snapshot,
            "ACTIVITY_SNAPSHOT": self._activity_snapshot,
            "ACTIVITY_DELTA": self._activity_delta,
            "RAW": self._raw,
            "CUSTOM": self._custom,
            "RUN_STARTED": self._run_started,
            "RUN_FINISHED": self._run_finished,
            "RUN_ERROR": self._run_error,
            "STEP_STARTED": self._step,
            "STEP_FINISHED": self._step,
            "SUBAGENT_STARTED": self._subagent,
            "SUBAGENT_FINISHED": self._subagent,
            "SUBAGENT_ERROR": self._subagent,
        }
        return {T.EVENT_TYPES[tag]: fn for tag, fn in table.items() if tag in T.EVENT_TYPES}

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

    # -- text ------------------------------------------------------------

    def _text_start(self, ev: Any) -> list[Update]:
        mid = ev.message_id
        rec = self._by_id.get(mid)
        role = ev.role if ev.role is not UNSET and ev.role is not None else "assistant"
        if rec is None:
            rec = MessageRecord.text_message(mid, role)
            if ev.name is not UNSET and ev.name is not None:
                rec.name = ev.name
            rec.subagent_run_id = self._tagged(ev)
            self._append(rec)
        elif rec.role == "activity":
            return [self._activity_guard("TEXT_MESSAGE_START", mid)]
        else:
            role = rec.role
        out: list[Update] = [TextStarted(mid, role, _opt(self._tagged(ev)))]
        self._merge_metadata(rec, ev, mid, out)
        return out

    def _text_content(self, ev: Any) -> list[Update]:
        mid = ev.message_id
        rec = self._by_id.get(mid)
        if rec is None:
            return [self._unknown("TEXT_MESSAGE_CONTENT", "message", mid)]
        if rec.role == "activity":
            return [self._activity_guard("TEXT_MESSAGE_CONTENT", mid)]
        rec.append(ev.delta)
        out: list[Update] = [TextDelta(mid, ev.delta)]
        if ev.metadata is not UNSET:
            self._merge_metadata(rec, ev, mid, out)
        return out

    def _text_end(self, ev: Any) -> list[Update]:
        mid = ev.message_id
        rec = self._by_id.get(mid)
        if rec is None:
            return [self._unknown("TEXT_MESSAGE_END", "message", mid)]
        if rec.role == "activity":
            return [self._activity_guard("TEXT_MESSAGE_END", mid)]
        out: list[Update] = []
        self._merge_metadata(rec, ev, mid, out)
        out.append(TextEnded(mid, rec.get_text()))
        return out

    # -- reasoning ---------------------------------------------------------

    def _reasoning_start(self, ev: Any) -> list[Update]:
        mid = ev.message_id
        rec = self._by_id.get(mid)
        if rec is None:
            rec = MessageRecord.text_message(mid, "reasoning")
            rec.subagent_run_id = self._tagged(ev)
            self._append(rec)
        elif rec.role == "activity":
            return [self._activity_guard("REASONING_MESSAGE_START", mid)]
        out: list[Update] = [ReasoningStarted(mid, _opt(self._tagged(ev)))]
        self._merge_metadata(rec, ev, mid, out)
        return out

    def _reasoning_content(self, ev: Any) -> list[Update]:
        mid = ev.message_id
        rec = self._by_id.get(mid)
        if rec is None:
            return [self._unknown("REASONING_MESSAGE_CONTENT", "message", mid)]
        if rec.role == "activity":
            return [self._activity_guard("REASONING_MESSAGE_CONTENT", mid)]
        rec.append(ev.delta)
        out: list[Update] = [ReasoningDelta(mid, ev.delta)]
        if ev.metadata is not UNSET:
            self._merge_metadata(rec, ev, mid, out)
        return out

    def _reasoning_end(self, ev: Any) -> list[Update]:
        mid = ev.message_id
        rec = self._by_id.get(mid)
        if rec is None:
            return [self._unknown("REASONING_MESSAGE_END", "message", mid)]
        if rec.role == "activity":
            return [self._activity_guard("REASONING_MESSAGE_END", mid)]
        out: list[Update] = []
        self._merge_metadata(rec, ev, mid, out)
        out.append(ReasoningEnded(mid, rec.get_text()))
        return out

    def _reasoning_span(self, ev: Any) -> list[Update]:
        return [ReasoningSpan(ev.message_id, struct_tag(ev) == "REASONING_START")]

    def _encrypted_value(self, ev: Any) -> list[Update]:
        subtype = ev.subtype
        subtype = getattr(subtype, "value", subtype)
        eid = ev.entity_id
        target: Any = None
        if subtype == "tool-call":
            call = self._calls.get(eid)
            if call is not None and call.owner.role == "assistant":
                target = call
        elif subtype == "message":
            rec = self._by_id.get(eid)
            if rec is not None and rec.role != "activity":
                target = rec
        if target is None:
            return [
                WarningUpdate(
                    "apply_unknown_entity",
                    f"REASONING_ENCRYPTED_VALUE: no {subtype} with id {eid!r} to carry the value",
                )
            ]
        target.encrypted_value = ev.encrypted_value
        evt = getattr(ev, "encrypted_value_type", UNSET)
        target.encrypted_value_type = UNSET if evt is None else evt
        target.built = None
        if isinstance(target, CallRecord):
            target.owner.built = None
        return [EncryptedValue(str(subtype), eid)]

    # -- tool calls ----------------------------------------------------------

    def _tool_start(self, ev: Any) -> list[Update]:
        cid = ev.tool_call_id
        name = ev.tool_call_name
        out: list[Update] = []
        call = self._calls.get(cid)
        if call is not None:
            # idempotent: a replayed START creates nothing and keeps the arguments
            self._run_calls.setdefault(cid, None)
            if call.name != name:
                out.append(
                    WarningUpdate(
                        "apply_tool_call_renamed",
                        f"TOOL_CALL_START for existing tool call {cid!r} renames it "
                        f"from {call.name!r} to {name!r}",
                    )
                )
                call.name = name
                call.touch()
            self._merge_metadata(call, ev, cid, out)
            return out
        parent_id = ev.parent_message_id
        owner: MessageRecord | None = None
        if parent_id is not UNSET and parent_id is not None:
            rec = self._by_id.get(parent_id)
            if rec is None:
                owner = self._new_assistant(parent_id, ev)
            elif rec.role == "assistant":
                owner = rec
            else:
                out.append(
                    WarningUpdate(
                        "apply_parent_not_assistant",
                        f"TOOL_CALL_START {cid!r}: parentMessageId {parent_id!r} names a "
                        f"{rec.role} message; the call gets its own assistant message",
                    )
                )
        if owner is None:
            rec = self._by_id.get(cid)
            if rec is not None and rec.role == "assistant":
                owner = rec
            else:
                owner = self._new_assistant(cid if rec is None else f"{cid}:assistant", ev)
        call = CallRecord(cid, name, owner)
        if owner.calls is None:
            owner.calls = []
        owner.calls.append(call)
        owner.built = None
        self._calls[cid] = call
        self._run_calls.setdefault(cid, None)
        out.append(ToolCallStarted(cid, name, owner.id, _opt(self._tagged(ev))))
        self._merge_metadata(call, ev, cid, out)
        return out

    def _new_assistant(self, mid: str, ev: Any) -> MessageRecord:
        rec = MessageRecord(mid, "assistant")
        rec.subagent_run_id = self._tagged(ev)
        self._append(rec)
        return rec

    def _tool_args(self, ev: Any) -> list[Update]:
        cid = ev.tool_call_id
        call = self._calls.get(cid)
        if call is None:
            return [self._unknown("TOOL_CALL_ARGS", "tool call", cid)]
        call.append(ev.delta)
        out: list[Update] = [ToolCallArgs(cid, ev.delta)]
        if ev.metadata is not UNSET:
            self._merge_metadata(call, ev, cid, out)
        return out

    def _tool_end(self, ev: Any) -> list[Update]:
        cid = ev.tool_call_id
        call = self._calls.get(cid)
        if call is None:
            return [self._unknown("TOOL_CALL_END", "tool call", cid)]
        out: list[Update] = []
        self._merge_metadata(call, ev, cid, out)
        out.append(ToolCallEnded(cid, call.name, call.arguments))
        return out

    def _tool_result(self, ev: Any) -> list[Update]:
        mid = ev.message_id
        cid = ev.tool_call_id
        content = ev.content
        out: list[Update] = []
        rec = self._by_id.get(mid)
        if rec is not None:
            if rec.role != "tool":
                return [
                    WarningUpdate(
                        "apply_duplicate_message_id",
                        f"TOOL_CALL_RESULT messageId {mid!r} is already a {rec.role} message",
                    )
                ]
            out.append(
                WarningUpdate(
                    "apply_duplicate_message_id",
                    f"TOOL_CALL_RESULT messageId {mid!r} already exists; its content is replaced",
                )
            )
        else:
            rec = MessageRecord(mid, "tool")
            rec.subagent_run_id = self._tagged(ev)
            self._insert_result(rec, cid)
        if isinstance(content, str):
            rec.frags = [content] if content else []
            rec.text = content
            rec.content = UNSET
        else:
            rec.frags = None
            rec.text = None
            rec.content = content
        rec.tool_call_id = cid
        rec.built = None
        self._answered.add(cid)
        out.append(ToolResult(mid, cid, content))
        self._merge_metadata(rec, ev, mid, out)
        return out

    def _insert_result(self, rec: MessageRecord, cid: str) -> None:
        call = self._calls.get(cid)
        lst = self._list
        if call is None or call.owner.id not in self._by_id:
            self._append(rec)
            return
        # search from the end: the calling message is nearly always among the last
        # few, so placement costs O(distance from the end), not O(conversation)
        owner = call.owner
        i = len(lst) - 1
        while i >= 0 and lst[i] is not owner:
            i -= 1
        if i < 0:
            self._append(rec)
            return
        i += 1
        n = len(lst)
        while i < n and lst[i].role == "tool":
            i += 1
        lst.insert(i, rec)
        self._by_id[rec.id] = rec

    # -- state ---------------------------------------------------------------

    def _state_snapshot(self, ev: Any) -> list[Update]:
        self._state = clone_json(ev.snapshot)
        self._state_absent = False
        return [StateChanged(self._state, None)]

    def _state_delta(self, ev: Any) -> list[Update]:
        try:
            ops = plain_ops(ev.delta)
            base = {} if self._state_absent and self._state is None else self._state
            self._state = apply_patch(base, ops)
            self._state_absent = False
        except PatchFailed as exc:
            return [
                WarningUpdate(
                    "apply_state_patch_failed",
                    f"Failed to apply state patch (state unchanged): {exc.reason}",
                    "delta",
                )
            ]
        return [StateChanged(self._state, ops)]

    # -- messages snapshot ---------------------------------------------------

    def _messages_snapshot(self, ev: Any) -> list[Update]:
        snap = [MessageRecord.from_struct(m) for m in ev.messages]
        snap_ids = {r.id: r for r in snap}
        has_reasoning = any(r.role == "reasoning" for r in snap)
        owns_activity = self._activity_ownership(ev, snap)
        new_list: list[MessageRecord] = []
        placed: set[str] = set()
        for rec in self._list:
            s = snap_ids.get(rec.id)
            if s is not None:
                if rec.id not in placed:
                    new_list.append(s)
                    placed.add(rec.id)
            elif (
                rec.role == "activity"
                and not owns_activity(rec.activity_type)
                or rec.role == "reasoning"
                and not has_reasoning
            ):
                new_list.append(rec)
        for s in snap:
            if s.id not in placed:
                new_list.append(s)
                placed.add(s.id)
        self._list = []
        self._by_id = {}
        self._calls = {}
        for rec in new_list:
            self._append(rec)
        return [MessagesSnapshot(len(self._list))]

    @staticmethod
    def _activity_ownership(ev: Any, snap: list[MessageRecord]) -> Any:
        """Which activity types the snapshot is authoritative for (1.0 client rule)."""
        md = ev.metadata if ev.metadata is not UNSET else None
        if isinstance(md, dict) and isinstance(md.get(_CLIENT_META_KEY), dict):
            client_md = md[_CLIENT_META_KEY]
            if "authoritativeActivityTypes" in client_md:
                owned = client_md["authoritativeActivityTypes"]
                if owned is None:
                    return lambda _t: True
                if isinstance(owned, list) and all(isinstance(t, str) for t in owned):
                    owned_set = frozenset(owned)
                    return lambda t: t in owned_set
                return lambda _t: False
        any_activity = any(r.role == "activity" for r in snap)
        return lambda _t: any_activity

    # -- activity --------------------------------------------------------------

    def _activity_snapshot(self, ev: Any) -> list[Update]:
        mid = ev.message_id
        replace = ev.replace is UNSET or ev.replace is None or bool(ev.replace)
        rec = self._by_id.get(mid)
        out: list[Update] = []
        if rec is None:
            rec = self._new_activity(mid, ev)
            self._append(rec)
        elif rec.role == "activity":
            if replace:
                rec.content = clone_json(ev.content)
                rec.activity_type = ev.activity_type
                rec.subagent_run_id = self._tagged(ev)
                rec.built = None
        elif replace:
            new = self._new_activity(mid, ev)
            i = self._list.index(rec)
            self._list[i] = new
            self._by_id[mid] = new
            if rec.calls:
                for c in rec.calls:
                    if self._calls.get(c.id) is c:
                        del self._calls[c.id]
            rec = new
        else:
            out.append(
                WarningUpdate(
                    "apply_activity_target_not_activity",
                    f"ACTIVITY_SNAPSHOT with replace=false for {rec.role} message {mid!r}: "
                    "left untouched",
                )
            )
            return out
        self._merge_metadata(rec, ev, mid, out)
        out.insert(0, ActivityChanged(mid, rec.activity_type, clone_json(rec.content)))
        return out

    def _new_activity(self, mid: str, ev: Any) -> MessageRecord:
        rec = MessageRecord(mid, "activity")
        rec.content = clone_json(ev.content)
        rec.activity_type = ev.activity_type
        rec.subagent_run_id = self._tagged(ev)
        return rec

    def _activity_delta(self, ev: Any) -> list[Update]:
        mid = ev.message_id
        rec = self._by_id.get(mid)
        if rec is None:
            return [
                WarningUpdate(
                    "apply_unknown_activity",
                    f"ACTIVITY_DELTA for unknown activity message {mid!r}: skipped",
                )
            ]
        if rec.role != "activity":
            return [
                WarningUpdate(
                    "apply_activity_target_not_activity",
                    f"ACTIVITY_DELTA for {rec.role} message {mid!r}: skipped",
                )
            ]
        out: list[Update] = []
        self._merge_metadata(rec, ev, mid, out)
        try:
            ops = plain_ops(ev.patch)
            rec.content = apply_patch(rec.content, ops)
        except PatchFailed as exc:
            out.append(
                WarningUpdate(
                    "apply_activity_patch_failed",
                    f"Failed to apply ACTIVITY_DELTA patch to {mid!r} (content unchanged): "
                    f"{exc.reason}",
                    "patch",
                )
            )
            return out
        rec.activity_type = ev.activity_type
        rec.built = None
        out.insert(0, ActivityChanged(mid, rec.activity_type, clone_json(rec.content)))
        return out

    # -- passthrough -------------------------------------------------------------

    def _raw(self, ev: Any) -> list[Update]:
        return [Raw(ev.event, _opt(ev.source))]

    def _custom(self, ev: Any) -> list[Update]:
        return [Custom(ev.name, ev.value)]

    def _step(self, ev: Any) -> list[Update]:
        return [StepChanged(ev.step_name, struct_tag(ev) == "STEP_STARTED", _opt(self._tagged(ev)))]

    def _subagent(self, ev: Any) -> list[Update]:
        tag = struct_tag(ev)
        if tag == "SUBAGENT_STARTED":
            return [SubagentChanged(ev.subagent_run_id, "started", ev.name)]
        if tag == "SUBAGENT_ERROR":
            return [SubagentChanged(ev.subagent_run_id, "error", ev.message)]
        outcome = getattr(ev, "outcome", UNSET)
        kind = "success" if outcome is UNSET or outcome is None else struct_tag(outcome)
        return [SubagentChanged(ev.subagent_run_id, "finished", kind)]

    # -- run lifecycle -------------------------------------------------------------

    def _run_started(self, ev: Any) -> list[Update]:
        self._lifecycle.started(ev.run_id, ev.thread_id)
        self._run_calls = {}
        self._answered = set()
        inp = ev.input
        if inp is not UNSET and inp is not None:
            msgs = getattr(inp, "messages", None) or ()
            for m in msgs:
                if m.id not in self._by_id:
                    self._append(MessageRecord.from_struct(m))
        return [RunStarted(ev.run_id, ev.thread_id, _opt(ev.parent_run_id))]

    def _run_finished(self, ev: Any) -> list[Update]:
        life = self._lifecycle
        ids = {"run_id": ev.run_id, "thread_id": ev.thread_id}
        outcome = ev.outcome
        kind = "success" if outcome is UNSET or outcome is None else struct_tag(outcome)
        self._pending_tool_call_ids = []
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
        declared = (
            getattr(outcome, "pending_tool_call_ids", UNSET) if outcome is not UNSET else UNSET
        )
        if declared is not UNSET and declared:
            self._pending_tool_call_ids = list(declared)
        else:
            self._pending_tool_call_ids = [c for c in self._run_calls if c not in self._answered]
        return []

    def _run_error(self, ev: Any) -> list[Update]:
        err = RunError(ev.message, code=_opt(ev.code))
        self._lifecycle.errored(err)
        return [ErrorUpdate(err, fatal=True)]

    # -- diagnostics ------------------------------------------------------------------

    @staticmethod
    def _unknown(event_type: str, kind: str, ident: str) -> WarningUpdate:
        return WarningUpdate(
            "apply_unknown_target", f"{event_type}: no {kind} with id {ident!r}; skipped"
        )

    @staticmethod
    def _activity_guard(event_type: str, ident: str) -> WarningUpdate:
        return WarningUpdate(
            "apply_activity_target",
            f"{event_type} for activity message {ident!r}: an activity message carries no text",
        )


__all__ = ["Conversation", "role_of"]
