"""The message records of a :class:`agui.pipeline._apply.Conversation`, in order and
by id, with the tool calls they carry: the one store the appliers share.

:class:`MessageStore` owns the list and its indexes (every insertion, removal
and replacement goes through it, so the indexes never drift); :func:`merge_metadata`
and :func:`subagent_tag` are the two event readings every applier needs, and
:func:`stamped` the one place updates are given the event they report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, cast

import msgspec
from msgspec import UnsetType
from msgspec.structs import force_setattr

from agui.pipeline._apply.patch import clone_json
from agui.pipeline._apply.records import CallRecord, MessageRecord
from agui.updates import CARRIES_EVENT, MetadataChanged, StateChanged, Update

__all__ = ["MessageStore", "merge_metadata", "stamped", "subagent_tag"]

UNSET = msgspec.UNSET


class MessageStore:
    """Message records in conversation order (:attr:`records`), by message id
    (:attr:`by_id`) and their tool calls by call id (:attr:`calls`).

    Read the three attributes freely; change them only through the methods.
    """

    def __init__(self) -> None:
        self.records: list[MessageRecord] = []
        self.by_id: dict[str, MessageRecord] = {}
        self.calls: dict[str, CallRecord] = {}

    def append(self, rec: MessageRecord) -> None:
        """Add ``rec`` at the end (its calls are indexed; a call id already
        known keeps its first record)."""
        self.records.append(rec)
        self.by_id[rec.id] = rec
        if rec.calls:
            for c in rec.calls:
                self.calls.setdefault(c.id, c)

    def reset(self, records: Iterable[MessageRecord]) -> None:
        """Replace every record by ``records``, in that order."""
        self.records, self.by_id, self.calls = [], {}, {}
        for rec in records:
            self.append(rec)

    def replace(self, old: MessageRecord, new: MessageRecord) -> None:
        """Put ``new`` in ``old``'s place (same id); ``old``'s calls are forgotten.
        O(n) to find the place."""
        i = self.records.index(old)
        self.records[i] = new
        self.by_id[new.id] = new
        if old.calls:
            for c in old.calls:
                if self.calls.get(c.id) is c:
                    del self.calls[c.id]

    def insert_result(self, rec: MessageRecord, cid: str) -> None:
        """Place a new tool result after its calling message and the tool
        messages that already follow it (else at the end).

        Cost: O(1) amortised per result. The calling message remembers the last
        result placed after it and that result's index (``tail``/``tail_at``);
        the index only ever moves right (records are inserted, not removed,
        between snapshots), so the hint is checked and walked forward, and the
        full search (from the end) runs only when the hint is gone (after a
        MESSAGES_SNAPSHOT). Inserting shifts the pointers after it (a memmove).
        """
        call = self.calls.get(cid)
        lst = self.records
        if call is None or call.owner.id not in self.by_id:
            self.append(rec)
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
                self.append(rec)
                return
        i += 1
        while i < n and lst[i].role == "tool":
            i += 1
        if i == n:
            lst.append(rec)
        else:
            lst.insert(i, rec)
        self.by_id[rec.id] = rec
        owner.tail = rec
        owner.tail_at = i


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


def merge_metadata(
    target: MessageRecord | CallRecord, event: object, target_id: str, out: list[Update]
) -> None:
    """Merge an event's ``metadata`` object (a copy) into ``target``'s and append
    a :class:`~agui.updates.MetadataChanged` to ``out``; nothing when the event
    carries none (or not an object)."""
    md: Any = getattr(event, "metadata", UNSET)
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


def subagent_tag(event: object) -> str | UnsetType:
    """The event's ``subagentRunId``, ``UNSET`` when absent or null."""
    sub = getattr(event, "subagent_run_id", UNSET)
    return UNSET if sub is None else sub


_STAMPED: frozenset[type] = CARRIES_EVENT - {StateChanged}
"""The update classes :func:`stamped` gives their event: the Structs of
:data:`~agui.updates.CARRIES_EVENT`. A ``StateChanged`` (a dataclass whose fields are
read-only) is made with its event (:mod:`~agui.pipeline._apply.snapshots`)."""

_force_setattr = cast("Callable[[object, str, object], None]", force_setattr)
"""``msgspec.structs.force_setattr``, typed for the updates of :data:`_STAMPED` (Structs)."""


def stamped(updates: list[Update], event: object) -> list[Update]:
    """``updates``, each update that reports an event (a class in
    :data:`~agui.updates.CARRIES_EVENT`) given ``event`` as its ``from_event``
    (set in place: the updates are new, frozen for their readers)."""
    for update in updates:
        if type(update) in _STAMPED:
            _force_setattr(update, "from_event", event)
    return updates
