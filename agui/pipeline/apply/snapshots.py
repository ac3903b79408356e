"""State, MESSAGES_SNAPSHOT and activity events applied to a
:class:`agui.pipeline.apply.Conversation`: JSON Patch on the state and on activity
content, and the snapshot reconciliation of the message list."""

from __future__ import annotations

from typing import Any

import msgspec

from agui.pipeline.apply.patch import (
    MAX_STATE_DEPTH,
    PatchFailed,
    apply_patch,
    clone_json,
    json_depth,
    patched_copy,
    plain_ops,
)
from agui.pipeline.apply.records import MessageRecord, opt
from agui.updates import ActivityChanged, MessagesSnapshot, StateChanged, Update, WarningUpdate

UNSET = msgspec.UNSET
_CLIENT_META_KEY = "@ag-ui/client"


def _shown(rec: MessageRecord) -> tuple[Any, ...]:
    """What a reader sees of a message, to tell whether a snapshot changed it: role,
    content (absent as ""), tool calls (id, name, arguments), answered call, error
    and activity type. Metadata and encrypted values are not compared."""
    content = rec.get_text() if rec.is_text else rec.content
    calls = tuple((c.id, c.name, c.arguments) for c in rec.calls or ())
    return (
        rec.role,
        "" if content is UNSET or content is None else content,
        calls,
        opt(rec.tool_call_id),
        opt(rec.error),
        opt(rec.activity_type),
    )


__all__ = ["SnapshotEvents"]


class SnapshotEvents:
    """The state, snapshot and activity handlers of
    :class:`agui.pipeline.apply.Conversation` (a mixin: the conversation owns the state
    and records they change). Each takes one event and returns the updates;
    none raises on bad data."""

    # the conversation's state and records (set by Conversation.__init__); it
    # also defines _append, _merge_metadata and _tagged, which these handlers call
    _state: Any
    _state_absent: bool
    _list: list[MessageRecord]
    _by_id: dict[str, MessageRecord]
    _calls: dict[str, Any]

    # -- state ---------------------------------------------------------------

    def _state_snapshot(self, ev: Any) -> list[Update]:
        if json_depth(ev.snapshot) > MAX_STATE_DEPTH:
            return [
                WarningUpdate(
                    "apply_state_too_deep",
                    f"STATE_SNAPSHOT nested deeper than {MAX_STATE_DEPTH} levels (state unchanged)",
                    "snapshot",
                )
            ]
        self._state = clone_json(ev.snapshot)
        self._state_absent = False
        return [StateChanged(self._state, None)]

    def _state_delta(self, ev: Any) -> list[Update]:
        try:
            ops = plain_ops(ev.delta)
            base = {} if self._state_absent and self._state is None else self._state
            self._state = patched_copy(base, ops)  # copy-on-write: updates keep theirs
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
        before = self._by_id
        kept = {r.id for r in new_list}
        removed = tuple(r.id for r in self._list if r.id not in kept)
        self._list = []
        self._by_id = {}
        self._calls = {}
        for rec in new_list:
            self._append(rec)
        changed: list[Any] = []
        replaced: set[str] = set()
        for rec in new_list:
            old = before.get(rec.id)
            if old is rec:
                continue  # kept as it was (an activity or reasoning record)
            if old is not None:
                if _shown(old) == _shown(rec):
                    continue
                replaced.add(rec.id)
            changed.append(rec.build())
        return [MessagesSnapshot(len(self._list), tuple(changed), frozenset(replaced), removed)]

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
