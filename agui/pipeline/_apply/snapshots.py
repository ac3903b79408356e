"""State, MESSAGES_SNAPSHOT and activity events applied to a
:class:`agui.pipeline._apply.Conversation`: JSON Patch on the state and on activity
content, and the snapshot reconciliation of the message list.

:class:`Snapshots` is the conversation's component for them: it owns the agent
state and changes the shared :class:`~agui.pipeline._apply.message_store.MessageStore`;
:data:`HANDLERS` maps each event class it applies to its method.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import msgspec
from msgspec import UnsetType

from agui import types as T
from agui._jsonvalue import JSONValue, is_json_array, is_json_object
from agui.pipeline._apply.message_store import MessageStore, merge_metadata, subagent_tag
from agui.pipeline._apply.patch import (
    MAX_STATE_DEPTH,
    PatchFailed,
    StateHistory,
    apply_patch,
    clone_json,
    json_depth,
    plain_ops,
)
from agui.pipeline._apply.records import MessageRecord, opt
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


__all__ = ["HANDLERS", "Snapshots"]


class Snapshots:
    """The agent state and the appliers of state, MESSAGES_SNAPSHOT and activity
    events of a :class:`agui.pipeline._apply.Conversation`: each method takes one
    event and returns the updates; none raises on bad data.

    ``Snapshots(store, state)``: ``store`` holds the message records (shared
    with the conversation's other components); ``state`` is the initial state,
    ``None`` for absent (see :attr:`state`, :attr:`state_absent`).
    """

    def __init__(self, store: MessageStore, state: JSONValue = None) -> None:
        self.store = store
        self._history = StateHistory(state)
        self.state_absent: bool = state is None
        """True until a state is given or received (absent reads as ``{}`` for a
        STATE_DELTA; a STATE_SNAPSHOT of ``null`` makes it False)."""

    @property
    def state(self) -> Any:
        """The agent state: any JSON value (``None`` while absent or null); a
        value that never changes afterwards (copy-on-write, O(1) to read)."""
        return self._history.current()

    @property
    def state_is_none(self) -> bool:
        """True while the state is ``None`` (absent or null); reads nothing out."""
        return self._history.doc is None

    def replace_state(self, state: JSONValue) -> None:
        """Replace the state (``None``: absent), kept as given."""
        self._history.reset(state)
        self.state_absent = state is None

    # -- state ---------------------------------------------------------------

    def state_snapshot(self, ev: T.StateSnapshotEvent) -> list[Update]:
        """STATE_SNAPSHOT: replace the state (refused when nested too deep)."""
        if json_depth(ev.snapshot) > MAX_STATE_DEPTH:
            return [
                WarningUpdate(
                    "apply_state_too_deep",
                    f"STATE_SNAPSHOT nested deeper than {MAX_STATE_DEPTH} levels (state unchanged)",
                    "snapshot",
                )
            ]
        version = self._history.reset(clone_json(ev.snapshot))
        self.state_absent = False
        return [StateChanged(version.resolve(), None, ev)]

    def state_delta(self, ev: T.StateDeltaEvent) -> list[Update]:
        """STATE_DELTA: JSON Patch the state, all or nothing. The state is
        patched in place where it owns what it changes (O(size of the patch +
        depth of its paths)); the update gets a :class:`StateVersion
        <agui.pipeline._apply.patch.StateVersion>`, worked out on its first read,
        so a state handed out never changes and a batch of updates keeps no
        copy of the state per update."""
        try:
            ops = plain_ops(ev.delta)
            base: JSONValue = {} if self.state_absent else None
            version = self._history.apply(ops, base)
            self.state_absent = False
        except PatchFailed as exc:
            return [
                WarningUpdate(
                    "apply_state_patch_failed",
                    f"Failed to apply state patch (state unchanged): {exc.describe('delta')}",
                    "delta",
                )
            ]
        return [StateChanged(version, ops, ev)]

    # -- messages snapshot ---------------------------------------------------

    def messages_snapshot(self, ev: T.MessagesSnapshotEvent) -> list[Update]:
        """MESSAGES_SNAPSHOT: reconcile the message list with the snapshot."""
        snap = [MessageRecord.from_struct(m) for m in ev.messages]
        snap_ids = {r.id: r for r in snap}
        has_reasoning = any(r.role == "reasoning" for r in snap)
        owns_activity = self._activity_ownership(ev, snap)
        new_list: list[MessageRecord] = []
        placed: set[str] = set()
        for rec in self.store.records:
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
        before = self.store.by_id
        kept = {r.id for r in new_list}
        removed = tuple(r.id for r in self.store.records if r.id not in kept)
        self.store.reset(new_list)
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
        return [
            MessagesSnapshot(len(self.store.records), tuple(changed), frozenset(replaced), removed)
        ]

    @staticmethod
    def _activity_ownership(
        ev: T.MessagesSnapshotEvent, snap: list[MessageRecord]
    ) -> Callable[[Any], bool]:
        """Which activity types the snapshot is authoritative for (1.0 client rule)."""
        md: object = ev.metadata if ev.metadata is not UNSET else None
        client_md = md.get(_CLIENT_META_KEY) if is_json_object(md) else None
        if is_json_object(client_md) and "authoritativeActivityTypes" in client_md:
            owned = client_md["authoritativeActivityTypes"]
            if owned is None:
                return lambda _t: True
            if is_json_array(owned) and all(isinstance(t, str) for t in owned):
                owned_set = frozenset(owned)
                return lambda t: t in owned_set
            return lambda _t: False
        any_activity = any(r.role == "activity" for r in snap)
        return lambda _t: any_activity

    # -- activity --------------------------------------------------------------

    def activity_snapshot(self, ev: T.ActivitySnapshotEvent) -> list[Update]:
        """ACTIVITY_SNAPSHOT: create or replace an activity message."""
        mid = ev.message_id
        given = cast("bool | UnsetType | None", ev.replace)  # (a built struct may hold None)
        replace = given is UNSET or given is None or bool(given)
        rec = self.store.by_id.get(mid)
        out: list[Update] = []
        if rec is None:
            rec = self._new_activity(mid, ev)
            self.store.append(rec)
        elif rec.role == "activity":
            if replace:
                rec.content = clone_json(ev.content)
                rec.activity_type = ev.activity_type
                rec.subagent_run_id = subagent_tag(ev)
                rec.built = None
        elif replace:
            new = self._new_activity(mid, ev)
            self.store.replace(rec, new)
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
        merge_metadata(rec, ev, mid, out)
        out.insert(0, ActivityChanged(mid, rec.activity_type, clone_json(rec.content)))
        return out

    def _new_activity(self, mid: str, ev: T.ActivitySnapshotEvent) -> MessageRecord:
        rec = MessageRecord(mid, "activity")
        rec.content = clone_json(ev.content)
        rec.activity_type = ev.activity_type
        rec.subagent_run_id = subagent_tag(ev)
        return rec

    def activity_delta(self, ev: T.ActivityDeltaEvent) -> list[Update]:
        """ACTIVITY_DELTA: JSON Patch an activity message's content."""
        mid = ev.message_id
        rec = self.store.by_id.get(mid)
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
        merge_metadata(rec, ev, mid, out)
        try:
            ops = plain_ops(ev.patch)
            rec.content = apply_patch(rec.content, ops)
        except PatchFailed as exc:
            out.append(
                WarningUpdate(
                    "apply_activity_patch_failed",
                    f"Failed to apply ACTIVITY_DELTA patch to {mid!r} (content unchanged): "
                    f"{exc.describe('patch')}",
                    "patch",
                )
            )
            return out
        rec.activity_type = ev.activity_type
        rec.built = None
        out.insert(0, ActivityChanged(mid, rec.activity_type, clone_json(rec.content)))
        return out


HANDLERS: dict[type, Callable[[Snapshots, Any], list[Update]]] = {
    T.StateSnapshotEvent: Snapshots.state_snapshot,
    T.StateDeltaEvent: Snapshots.state_delta,
    T.MessagesSnapshotEvent: Snapshots.messages_snapshot,
    T.ActivitySnapshotEvent: Snapshots.activity_snapshot,
    T.ActivityDeltaEvent: Snapshots.activity_delta,
}
"""Event class -> the :class:`Snapshots` method that applies it."""
