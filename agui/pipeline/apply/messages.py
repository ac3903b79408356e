"""Streamed message events applied to a :class:`agui.pipeline.apply.Conversation`:
text, reasoning and tool-call assembly, encrypted values and tool results."""

from __future__ import annotations

from typing import Any

import msgspec

from agui.pipeline.apply.records import CallRecord, MessageRecord, opt
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

__all__ = ["MessageEvents"]


class MessageEvents:
    """The message handlers of :class:`agui.pipeline.apply.Conversation` (a mixin: the
    conversation owns the records they read and change). Each takes one
    event and returns the updates; none raises on bad data."""

    # the conversation's records (set by Conversation.__init__); it also defines
    # _append, _merge_metadata and _tagged, which these handlers call
    _list: list[MessageRecord]
    _by_id: dict[str, MessageRecord]
    _calls: dict[str, CallRecord]
    _run_calls: dict[str, None]
    _answered: set[str]

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
        out: list[Update] = [TextStarted(mid, role, opt(self._tagged(ev)))]
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
        out: list[Update] = [ReasoningStarted(mid, opt(self._tagged(ev)))]
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

    def _reasoning_span_start(self, ev: Any) -> list[Update]:
        return [ReasoningSpan(ev.message_id, True)]

    def _reasoning_span_end(self, ev: Any) -> list[Update]:
        return [ReasoningSpan(ev.message_id, False)]

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
        out.append(ToolCallStarted(cid, name, owner.id, opt(self._tagged(ev))))
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
        # the update carries plain JSON (a str, or the parts as wire dicts), not structs
        out.append(
            ToolResult(
                mid, cid, content if isinstance(content, str) else msgspec.to_builtins(content)
            )
        )
        self._merge_metadata(rec, ev, mid, out)
        return out

    def _insert_result(self, rec: MessageRecord, cid: str) -> None:
        """Place a new tool result after its calling message and the tool
        messages that already follow it (else at the end).

        Cost: O(1) amortised per result. The calling message remembers the last
        result placed after it and that result's index (``tail``/``tail_at``);
        the index only ever moves right (records are inserted, not removed,
        between snapshots), so the hint is checked and walked forward, and the
        full search (from the end) runs only when the hint is gone (after a
        MESSAGES_SNAPSHOT). Inserting shifts the pointers after it (a memmove).
        """
        call = self._calls.get(cid)
        lst = self._list
        if call is None or call.owner.id not in self._by_id:
            self._append(rec)
            return
        owner = call.owner
        n = len(lst)
        i = _locate(lst, owner.tail, owner.tail_at) if owner.tail is not None else -1
        if i < 0:
            # search from the end: the calling message is nearly always among the
            # last few, so this costs O(distance from the end)
            i = n - 1
            while i >= 0 and lst[i] is not owner:
                i -= 1
            if i < 0:
                self._append(rec)
                return
        i += 1
        while i < n and lst[i].role == "tool":
            i += 1
        if i == n:
            lst.append(rec)
        else:
            lst.insert(i, rec)
        self._by_id[rec.id] = rec
        owner.tail = rec
        owner.tail_at = i

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


def _locate(lst: list[MessageRecord], target: MessageRecord, hint: int) -> int:
    """Index of ``target`` in ``lst`` at or after ``hint`` (records only move
    right while results are inserted), or -1 when it is not there."""
    n = len(lst)
    i = hint if hint >= 0 else n
    while i < n:
        if lst[i] is target:
            return i
        i += 1
    return -1
