"""Streamed message events applied to a :class:`agui.pipeline._apply.Conversation`:
text, reasoning and tool-call assembly, encrypted values and tool results.

:class:`MessageAppliers` is the conversation's component for them (it changes the
shared :class:`~agui.pipeline._apply.message_store.MessageStore` and records the tool calls
of the current run); :data:`HANDLERS` maps each event class it applies to its method.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import msgspec
from msgspec import UnsetType

from agui import types as T
from agui.pipeline._apply.message_store import MessageStore, merge_metadata, stamped, subagent_tag
from agui.pipeline._apply.records import CallRecord, MessageRecord, opt
from agui.updates import (
    EncryptedValue,
    ReasoningDelta,
    ReasoningEnded,
    ReasoningSpan,
    ReasoningStarted,
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

__all__ = ["HANDLERS", "MessageAppliers"]


class MessageAppliers:
    """The message appliers of a :class:`agui.pipeline._apply.Conversation`: each
    method takes one event and returns the updates; none raises on bad data.

    ``MessageAppliers(store)``: the records they change live in ``store``
    (shared with the conversation's other components). :attr:`run_calls` (the
    tool calls started in the current run, in start order) and :attr:`answered`
    (the calls of this run a TOOL_CALL_RESULT answered) are cleared by
    :meth:`new_run`.
    """

    def __init__(self, store: MessageStore) -> None:
        self.store = store
        self.run_calls: dict[str, None] = {}
        self.answered: set[str] = set()

    def new_run(self) -> None:
        """Forget the previous run's calls (at RUN_STARTED)."""
        self.run_calls = {}
        self.answered = set()

    # -- text ------------------------------------------------------------

    def text_start(self, ev: T.TextMessageStartEvent) -> list[Update]:
        """TEXT_MESSAGE_START: a new text message (default role ``assistant``), or the existing one reopened."""
        mid = ev.message_id
        rec = self.store.by_id.get(mid)
        given = cast("str | UnsetType | None", ev.role)  # (a struct built in Python may hold None)
        role: str = given if given is not UNSET and given is not None else "assistant"
        if rec is None:
            rec = MessageRecord.text_message(mid, role)
            name = cast("str | UnsetType | None", ev.name)
            if name is not UNSET and name is not None:
                rec.name = name
            rec.subagent_run_id = subagent_tag(ev)
            self.store.append(rec)
        elif rec.role == "activity":
            return [self._activity_guard("TEXT_MESSAGE_START", mid)]
        else:
            role = rec.role
        out: list[Update] = [TextStarted(mid, role, opt(subagent_tag(ev)))]
        merge_metadata(rec, ev, mid, out)
        return out

    def text_content(self, ev: T.TextMessageContentEvent) -> list[Update]:
        """TEXT_MESSAGE_CONTENT: append the delta (O(1) amortised)."""
        mid = ev.message_id
        rec = self.store.by_id.get(mid)
        if rec is None:
            return [self._unknown("TEXT_MESSAGE_CONTENT", "message", mid)]
        if rec.role == "activity":
            return [self._activity_guard("TEXT_MESSAGE_CONTENT", mid)]
        rec.append(ev.delta)
        out: list[Update] = [TextDelta(mid, ev.delta, ev)]
        if ev.metadata is not UNSET:
            merge_metadata(rec, ev, mid, out)
            return stamped(out, ev)
        return out

    def text_end(self, ev: T.TextMessageEndEvent) -> list[Update]:
        """TEXT_MESSAGE_END: the message is complete (its full text in the update)."""
        mid = ev.message_id
        rec = self.store.by_id.get(mid)
        if rec is None:
            return [self._unknown("TEXT_MESSAGE_END", "message", mid)]
        if rec.role == "activity":
            return [self._activity_guard("TEXT_MESSAGE_END", mid)]
        out: list[Update] = []
        merge_metadata(rec, ev, mid, out)
        out.append(TextEnded(mid, rec.get_text()))
        return out

    # -- reasoning ---------------------------------------------------------

    def reasoning_start(self, ev: T.ReasoningMessageStartEvent) -> list[Update]:
        """REASONING_MESSAGE_START: a new reasoning message (or the existing one)."""
        mid = ev.message_id
        rec = self.store.by_id.get(mid)
        if rec is None:
            rec = MessageRecord.text_message(mid, "reasoning")
            rec.subagent_run_id = subagent_tag(ev)
            self.store.append(rec)
        elif rec.role == "activity":
            return [self._activity_guard("REASONING_MESSAGE_START", mid)]
        out: list[Update] = [ReasoningStarted(mid, opt(subagent_tag(ev)))]
        merge_metadata(rec, ev, mid, out)
        return out

    def reasoning_content(self, ev: T.ReasoningMessageContentEvent) -> list[Update]:
        """REASONING_MESSAGE_CONTENT: append the delta (O(1) amortised)."""
        mid = ev.message_id
        rec = self.store.by_id.get(mid)
        if rec is None:
            return [self._unknown("REASONING_MESSAGE_CONTENT", "message", mid)]
        if rec.role == "activity":
            return [self._activity_guard("REASONING_MESSAGE_CONTENT", mid)]
        rec.append(ev.delta)
        out: list[Update] = [ReasoningDelta(mid, ev.delta, ev)]
        if ev.metadata is not UNSET:
            merge_metadata(rec, ev, mid, out)
            return stamped(out, ev)
        return out

    def reasoning_end(self, ev: T.ReasoningMessageEndEvent) -> list[Update]:
        """REASONING_MESSAGE_END: the reasoning message is complete."""
        mid = ev.message_id
        rec = self.store.by_id.get(mid)
        if rec is None:
            return [self._unknown("REASONING_MESSAGE_END", "message", mid)]
        if rec.role == "activity":
            return [self._activity_guard("REASONING_MESSAGE_END", mid)]
        out: list[Update] = []
        merge_metadata(rec, ev, mid, out)
        out.append(ReasoningEnded(mid, rec.get_text()))
        return out

    def reasoning_span_start(self, ev: T.ReasoningStartEvent) -> list[Update]:
        """REASONING_START: a reasoning span opens."""
        return [ReasoningSpan(ev.message_id, True)]

    def reasoning_span_end(self, ev: T.ReasoningEndEvent) -> list[Update]:
        """REASONING_END: the reasoning span closes."""
        return [ReasoningSpan(ev.message_id, False)]

    def encrypted_value(self, ev: T.ReasoningEncryptedValueEvent) -> list[Update]:
        """REASONING_ENCRYPTED_VALUE: attach the value to its tool call or message."""
        subtype = ev.subtype
        subtype = getattr(subtype, "value", subtype)
        eid = ev.entity_id
        target: Any = None
        if subtype == "tool-call":
            call = self.store.calls.get(eid)
            if call is not None and call.owner.role == "assistant":
                target = call
        elif subtype == "message":
            rec = self.store.by_id.get(eid)
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

    def tool_start(self, ev: T.ToolCallStartEvent) -> list[Update]:
        """TOOL_CALL_START: a new call in its parent assistant message (a replayed START is idempotent)."""
        cid = ev.tool_call_id
        name = ev.tool_call_name
        out: list[Update] = []
        call = self.store.calls.get(cid)
        if call is not None:
            # idempotent: a replayed START creates nothing and keeps the arguments
            self.run_calls.setdefault(cid, None)
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
            merge_metadata(call, ev, cid, out)
            return out
        parent_id = cast("str | UnsetType | None", ev.parent_message_id)
        owner: MessageRecord | None = None
        if parent_id is not UNSET and parent_id is not None:
            rec = self.store.by_id.get(parent_id)
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
            rec = self.store.by_id.get(cid)
            if rec is not None and rec.role == "assistant":
                owner = rec
            else:
                owner = self._new_assistant(cid if rec is None else f"{cid}:assistant", ev)
        call = CallRecord(cid, name, owner)
        if owner.calls is None:
            owner.calls = []
        owner.calls.append(call)
        owner.built = None
        self.store.calls[cid] = call
        self.run_calls.setdefault(cid, None)
        out.append(ToolCallStarted(cid, name, owner.id, opt(subagent_tag(ev))))
        merge_metadata(call, ev, cid, out)
        return out

    def _new_assistant(self, mid: str, ev: T.ToolCallStartEvent) -> MessageRecord:
        rec = MessageRecord(mid, "assistant")
        rec.subagent_run_id = subagent_tag(ev)
        self.store.append(rec)
        return rec

    def tool_args(self, ev: T.ToolCallArgsEvent) -> list[Update]:
        """TOOL_CALL_ARGS: append the arguments delta (O(1) amortised)."""
        cid = ev.tool_call_id
        call = self.store.calls.get(cid)
        if call is None:
            return [self._unknown("TOOL_CALL_ARGS", "tool call", cid)]
        call.append(ev.delta)
        out: list[Update] = [ToolCallArgs(cid, ev.delta, ev)]
        if ev.metadata is not UNSET:
            merge_metadata(call, ev, cid, out)
            return stamped(out, ev)
        return out

    def tool_end(self, ev: T.ToolCallEndEvent) -> list[Update]:
        """TOOL_CALL_END: the call is complete (its arguments in the update)."""
        cid = ev.tool_call_id
        call = self.store.calls.get(cid)
        if call is None:
            return [self._unknown("TOOL_CALL_END", "tool call", cid)]
        out: list[Update] = []
        merge_metadata(call, ev, cid, out)
        out.append(ToolCallEnded(cid, call.name, call.arguments))
        return out

    def tool_result(self, ev: T.ToolCallResultEvent) -> list[Update]:
        """TOOL_CALL_RESULT: a ``tool`` message placed after its calling message."""
        mid = ev.message_id
        cid = ev.tool_call_id
        content = ev.content
        out: list[Update] = []
        rec = self.store.by_id.get(mid)
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
            rec.subagent_run_id = subagent_tag(ev)
            self.store.insert_result(rec, cid)
        if isinstance(content, str):
            rec.set_text(content)
        else:
            rec.frags = None
            rec.text = None
            rec.content = content
        rec.tool_call_id = cid
        rec.built = None
        self.answered.add(cid)
        # the update carries plain JSON (a str, or the parts as wire dicts), not structs
        out.append(
            ToolResult(
                mid, cid, content if isinstance(content, str) else msgspec.to_builtins(content)
            )
        )
        merge_metadata(rec, ev, mid, out)
        return out

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


HANDLERS: dict[type, Callable[[MessageAppliers, Any], list[Update]]] = {
    T.TextMessageStartEvent: MessageAppliers.text_start,
    T.TextMessageContentEvent: MessageAppliers.text_content,
    T.TextMessageEndEvent: MessageAppliers.text_end,
    T.ReasoningMessageStartEvent: MessageAppliers.reasoning_start,
    T.ReasoningMessageContentEvent: MessageAppliers.reasoning_content,
    T.ReasoningMessageEndEvent: MessageAppliers.reasoning_end,
    T.ReasoningStartEvent: MessageAppliers.reasoning_span_start,
    T.ReasoningEndEvent: MessageAppliers.reasoning_span_end,
    T.ReasoningEncryptedValueEvent: MessageAppliers.encrypted_value,
    T.ToolCallStartEvent: MessageAppliers.tool_start,
    T.ToolCallArgsEvent: MessageAppliers.tool_args,
    T.ToolCallEndEvent: MessageAppliers.tool_end,
    T.ToolCallResultEvent: MessageAppliers.tool_result,
}
"""Event class -> the :class:`MessageAppliers` method that applies it."""

STAMPED: frozenset[type] = frozenset(
    (T.TextMessageContentEvent, T.ReasoningMessageContentEvent, T.ToolCallArgsEvent)
)
"""The classes (the streamed deltas, most of a stream) whose method gives every update
it returns its ``from_event`` itself (:func:`~agui.pipeline._apply.message_store.stamped`),
so the conversation does not go over them again."""
