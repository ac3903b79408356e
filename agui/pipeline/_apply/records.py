"""Mutable per-message and per-tool-call records behind :class:`Conversation`.

A producer may split a UTF-16 surrogate pair written as two ``\\u`` escapes
across two deltas (the reference client's strings are UTF-16, so it never
notices). Each half then decodes to a lone surrogate code point; a record
that received a fragment starting or ending with one re-pairs the halves when
it joins its fragments (lone halves that never get their partner are kept).

The conversation never keeps generated ``Message`` structs while it streams:
it keeps these small records, where text is a list of fragments joined only
when read (and then cached, collapsed to one fragment), and builds the
generated structs on demand, caching each until the record changes. So a
delta costs O(1) amortised and a read of ``Conversation.messages`` costs O(n)
for n messages plus the joins of the messages that changed since the last read.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from msgspec import UnsetType

from agui import types as T
from agui._jsonvalue import is_json_object
from agui.updates import edge_surrogate as _edge_surrogate
from agui.updates import join_deltas as join_fragments

UNSET = msgspec.UNSET
_V = TypeVar("_V")

# role -> generated class
ROLE_CLASSES: dict[str, type[msgspec.Struct]] = {
    "developer": T.DeveloperMessage,
    "system": T.SystemMessage,
    "assistant": T.AssistantMessage,
    "user": T.UserMessage,
    "tool": T.ToolMessage,
    "activity": T.ActivityMessage,
    "reasoning": T.ReasoningMessage,
}
_STRUCTS: tuple[type[msgspec.Struct], ...] = (*ROLE_CLASSES.values(), T.ToolCall)
_FIELDS: dict[type, frozenset[str]] = {
    cls: frozenset(f.name for f in msgspec.structs.fields(cls)) for cls in _STRUCTS
}
CLASS_ROLES: dict[type, str] = {cls: role for role, cls in ROLE_CLASSES.items()}


def opt(value: _V | UnsetType) -> _V | None:
    """``None`` for an absent (UNSET) value, else the value."""
    return None if value is UNSET else value


def struct_tag(value: object) -> Any:
    """The tag of a tagged msgspec struct (or ``value["type"]`` of a dict)."""
    if is_json_object(value):
        return value.get("type")
    cfg = getattr(value.__class__, "__struct_config__", None)
    tag = getattr(cfg, "tag", None) if cfg is not None else None
    if tag is None:
        tag = getattr(value, "type", None)
    return tag


def role_of(message: object) -> str | None:
    """Role of a generated message struct (its union tag)."""
    role = CLASS_ROLES.get(message.__class__)
    if role is not None:
        return role
    role = getattr(message, "role", None)
    if isinstance(role, str):
        return role
    cfg = getattr(message.__class__, "__struct_config__", None)
    return getattr(cfg, "tag", None)


_BLOCK = 512
"""Fragments appended since the last compaction that are joined into one block:
keeps a very long message's memory near its text size (one str object per
block, not per delta) at O(1) amortised cost per delta."""


def _compact(frags: list[str], mark: int) -> int:
    """Join ``frags[mark:]`` into one block in place; returns the new mark."""
    frags[mark:] = ["".join(frags[mark:])]
    return len(frags)


# A joined text is kept as a 1-tuple, turned back into a list by the next append:
# tuples of strings are untracked by the cyclic garbage collector, so the finished
# messages of a long conversation add nothing to its full collections.
#
# So a record's fragments are a list only between an append and the next join, and
# then its caches are stale: ``frags`` a list => ``text`` and ``built`` are None (and,
# for a call, its message's ``built``: building a message joins every call it carries).
# The slow path (:func:`_push`, the callers' lines after it) clears them when it
# thaws the tuple; the hot path of ``append`` (a list already) has nothing to clear.
def _joined(text: str) -> tuple[str, ...]:
    return (text,) if text else ()


def _push(rec: CallRecord | MessageRecord, delta: str) -> None:
    """Append a non-empty fragment to ``rec.frags`` (thawing a joined tuple),
    compacting every ``_BLOCK`` fragments and noting a split surrogate half.
    O(1) amortised; the one fragment buffer both record kinds use."""
    frags = rec.frags
    if type(frags) is not list:  # joined (see _joined); None never reaches here
        frags = list(frags or ())
        rec.frags = frags
    frags.append(delta)
    if len(frags) - rec.mark >= _BLOCK:
        rec.mark = _compact(frags, rec.mark)
    rec.text = None
    if not delta.isascii() and _edge_surrogate(delta):
        rec.split_pairs = True


def _join_cached(rec: CallRecord | MessageRecord) -> str:
    """Join ``rec.frags`` once (re-pairing split surrogates), keep the result
    as ``rec.text`` and collapse the fragments to it."""
    text = join_fragments(rec.frags or (), rec.split_pairs)
    rec.frags = _joined(text)
    rec.mark = len(rec.frags)
    rec.text = text
    return text


def _get(obj: object, name: str) -> Any:
    value = getattr(obj, name, UNSET)
    return UNSET if value is None and name != "content" else value


class CallRecord:
    """One tool call: ``frags`` are the raw argument text fragments."""

    __slots__ = (
        "built",
        "encrypted_value",
        "encrypted_value_type",
        "frags",
        "id",
        "mark",
        "metadata",
        "name",
        "owner",
        "split_pairs",
        "text",
    )

    def __init__(self, call_id: str, name: str, owner: MessageRecord) -> None:
        self.id: str = call_id
        self.name: str = name
        self.frags: list[str] | tuple[str, ...] = ()
        self.mark: int = 0
        self.text: str | None = ""
        self.metadata: dict[str, Any] | None = None
        self.encrypted_value: Any = UNSET
        self.encrypted_value_type: Any = UNSET
        self.owner: MessageRecord = owner
        self.split_pairs: bool = False
        self.built: Any = None

    @classmethod
    def from_struct(cls, call: T.ToolCall, owner: MessageRecord) -> CallRecord:
        """Record for a generated ``ToolCall`` struct inside ``owner``'s
        message (``function.arguments`` as one fragment; the struct is kept
        as the built cache)."""
        fn = getattr(call, "function", None)
        rec = cls(call.id, getattr(fn, "name", ""), owner)
        args = getattr(fn, "arguments", "")
        rec.frags = _joined(args)
        rec.text = args or ""
        md = _get(call, "metadata")
        rec.metadata = dict(md) if is_json_object(md) else None
        rec.encrypted_value = _get(call, "encrypted_value")
        rec.encrypted_value_type = _get(call, "encrypted_value_type")
        rec.built = call
        return rec

    @property
    def arguments(self) -> str:
        """The reassembled arguments text (joined once, then cached)."""
        text = self.text
        return _join_cached(self) if text is None else text

    def append(self, delta: str) -> None:
        """Append a TOOL_CALL_ARGS ``delta`` (raw text, may split a JSON token
        or a surrogate pair); O(1) amortised, joined lazily by :attr:`arguments`."""
        frags = self.frags
        if type(frags) is list and delta:  # the hot path: _push inlined (caches stale already)
            frags.append(delta)
            if len(frags) - self.mark >= _BLOCK:
                self.mark = _compact(frags, self.mark)
            if not delta.isascii() and _edge_surrogate(delta):
                self.split_pairs = True
            return
        if delta:
            _push(self, delta)
        self.built = None
        self.owner.built = None

    def touch(self) -> None:
        """Drop the built struct caches of this call and of its message."""
        self.built = None
        self.owner.built = None

    def build(self) -> Any:
        """The generated ``ToolCall`` struct (``type="function"``, ``function``
        = name + reassembled arguments, plus metadata / encryptedValue when
        set); cached until the next change."""
        built = self.built
        if built is None:
            kw: dict[str, Any] = {
                "id": self.id,
                "function": T.FunctionCall(name=self.name, arguments=self.arguments),
            }
            fields = _FIELDS[T.ToolCall]
            if "type" in fields:
                kw["type"] = "function"
            if self.metadata is not None:
                kw["metadata"] = dict(self.metadata)
            if self.encrypted_value is not UNSET:
                kw["encrypted_value"] = self.encrypted_value
                if self.encrypted_value_type is not UNSET and "encrypted_value_type" in fields:
                    kw["encrypted_value_type"] = self.encrypted_value_type
            built = self.built = T.ToolCall(**kw)
        return built


class MessageRecord:
    """One message of any role.

    Text content (``frags`` not None) is a fragment list (a 1-tuple once
    joined, see ``_joined``); any other content
    (a user/tool content-part list, an activity object, or absent) lives in
    ``content``.
    """

    __slots__ = (
        "activity_type",
        "built",
        "calls",
        "content",
        "encrypted_value",
        "encrypted_value_type",
        "error",
        "frags",
        "id",
        "mark",
        "metadata",
        "name",
        "role",
        "split_pairs",
        "subagent_run_id",
        "tail",
        "tail_at",
        "text",
        "tool_call_id",
    )

    def __init__(self, message_id: str, role: str) -> None:
        self.id: str = message_id
        self.role: str = role
        self.frags: list[str] | tuple[str, ...] | None = None
        self.mark: int = 0
        self.text: str | None = None
        self.content: Any = UNSET
        self.name: Any = UNSET
        self.calls: list[CallRecord] | None = None
        self.metadata: dict[str, Any] | None = None
        self.subagent_run_id: Any = UNSET
        self.encrypted_value: Any = UNSET
        self.encrypted_value_type: Any = UNSET
        self.tool_call_id: Any = UNSET
        self.error: Any = UNSET
        self.activity_type: Any = UNSET
        self.split_pairs: bool = False
        # the last tool result placed after this message and its index when placed:
        # a hint that makes placing many results after one message linear
        self.tail: MessageRecord | None = None
        self.tail_at: int = -1
        self.built: Any = None

    @classmethod
    def text_message(cls, message_id: str, role: str, text: str = "") -> MessageRecord:
        """A record with text content ``text`` (e.g. a user message, or the
        empty assistant message a TEXT_MESSAGE_START opens)."""
        rec = cls(message_id, role)
        rec.set_text(text)
        return rec

    @classmethod
    def from_struct(cls, message: T.Message) -> MessageRecord:
        """Record for a generated message struct (kept as the built cache)."""
        role = role_of(message) or "user"
        rec = cls(message.id, role)
        content = getattr(message, "content", UNSET)
        if isinstance(content, str):
            rec.frags = _joined(content)
            rec.text = content
        else:
            rec.content = content
        rec.name = _get(message, "name")
        md = _get(message, "metadata")
        rec.metadata = dict(md) if is_json_object(md) else None
        rec.subagent_run_id = _get(message, "subagent_run_id")
        rec.encrypted_value = _get(message, "encrypted_value")
        rec.encrypted_value_type = _get(message, "encrypted_value_type")
        rec.tool_call_id = _get(message, "tool_call_id")
        rec.error = _get(message, "error")
        rec.activity_type = _get(message, "activity_type")
        calls = _get(message, "tool_calls")
        if calls is not UNSET and calls:
            rec.calls = [CallRecord.from_struct(c, rec) for c in calls]
        rec.built = message
        return rec

    def set_text(self, text: str) -> None:
        """Make the content the text ``text`` (replacing any other content)."""
        self.frags = _joined(text)
        self.mark = 0
        self.text = text
        self.content = UNSET
        self.built = None

    @property
    def is_text(self) -> bool:
        """True when the content is text (a fragment list), not parts/objects."""
        return self.frags is not None

    def get_text(self) -> str:
        """Whole text content (joined once, then cached); "" when not text."""
        frags = self.frags
        if frags is None:
            return self.content if isinstance(self.content, str) else ""
        text = self.text
        return _join_cached(self) if text is None else text

    def append(self, delta: str) -> None:
        """Append a text fragment (non-text content is treated as "" and replaced)."""
        frags = self.frags
        if type(frags) is list and delta:  # the hot path: _push inlined (caches stale already)
            frags.append(delta)
            if len(frags) - self.mark >= _BLOCK:
                self.mark = _compact(frags, self.mark)
            if not delta.isascii() and _edge_surrogate(delta):
                self.split_pairs = True
            return
        if frags is None:
            self.set_text("")
        if delta:
            _push(self, delta)
        self.built = None

    def build(self) -> Any:
        """The generated ``Message`` struct for this record (cached)."""
        built = self.built
        if built is not None:
            return built
        cls = ROLE_CLASSES[self.role]
        fields = _FIELDS[cls]
        kw: dict[str, Any] = {"id": self.id}
        if self.frags is not None:
            kw["content"] = self.get_text()
        elif self.content is not UNSET:
            kw["content"] = self.content
        elif self.role == "activity":
            kw["content"] = {}
        elif self.role != "assistant":
            kw["content"] = ""
        if self.calls:
            kw["tool_calls"] = [c.build() for c in self.calls]
        if self.metadata is not None:
            kw["metadata"] = dict(self.metadata)
        for name in (
            "name",
            "subagent_run_id",
            "encrypted_value",
            "encrypted_value_type",
            "tool_call_id",
            "error",
            "activity_type",
        ):
            value = getattr(self, name)
            if value is not UNSET and name in fields:
                kw[name] = value
        if "role" in fields:
            kw["role"] = self.role
        built = self.built = cls(**{k: v for k, v in kw.items() if k in fields})
        return built
