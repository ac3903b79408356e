"""A run's transcript: board-watch's text rendering with stable placeholders for ids.

The lines are :mod:`agui._lines.render`'s (grouped view, nothing cut), the form
``board-watch watch`` prints and our own syrupy snapshots pin. Ids a server or the
client generates change on every run, so each one is replaced by a placeholder
named after what it identifies and numbered in order of first appearance:
``<thread-1>``, ``<run-1>``, ``<msg-1>``, ``<call-1>``, ``<interrupt-1>``,
``<cursor-1>``, and any other UUID in the text (inside a RAW payload, say) ``<uuid-1>``;
the same id is always the same placeholder. ISO 8601 timestamps
become ``<time>``, the time a reconnect took ``<ms>``. An id is replaced only where it stands alone (not inside a
longer word), longest first, so ``run-1`` inside ``run-1-approve`` is left to the
interrupt id that contains it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from typing import Any, cast

import msgspec

from agui import types as T

__all__ = ["Placeholders", "render_transcript"]

_KIND_OF_FIELD: dict[str, str] = {
    "thread_id": "thread",
    "run_id": "run",
    "parent_run_id": "run",
    "subagent_run_id": "run",
    "message_id": "msg",
    "parent_message_id": "msg",
    "tool_call_id": "call",
    "interrupt_id": "interrupt",
    "cursor": "cursor",
}
_KIND_OF_ID: tuple[tuple[type, str], ...] = (
    (T.Interrupt, "interrupt"),
    (T.ToolCall, "call"),
)
_LISTS_OF_IDS: dict[str, str] = {"pending_tool_call_ids": "call"}
_TIMESTAMP = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b"
)
_MAX_DEPTH = 12
_UUID = re.compile(r"(?<![\w-])[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}(?![\w-])")
_ELAPSED = re.compile(r"\b(reconnected after) \d+(?:\.\d+)? ms\b")


def _is_dataclass(value: object) -> bool:
    """True for a dataclass instance (``StateChanged``, the one update not a Struct)."""
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _field_names(value: object) -> Iterable[str]:
    """The field names of a Struct or a dataclass instance."""
    if isinstance(value, msgspec.Struct):
        return value.__struct_fields__
    return [f.name for f in dataclasses.fields(cast("Any", value))]


class Placeholders:
    """Names generated ids ``<kind-N>`` in order of first appearance (see module doc)."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}
        self._counts: dict[str, int] = {}

    @property
    def names(self) -> Mapping[str, str]:
        """id -> placeholder, in the order the ids were seen."""
        return self._names

    def add(self, kind: str, value: object) -> None:
        """Give ``value`` (a non-empty str) a ``<kind-N>`` name unless it has one."""
        if not isinstance(value, str) or not value or value in self._names:
            return
        count = self._counts.get(kind, 0) + 1
        self._counts[kind] = count
        self._names[value] = f"<{kind}-{count}>"

    def collect(self, value: object, depth: int = 0) -> None:
        """Name every id found in ``value`` (updates, events, messages, inputs; walked
        through struct fields, lists and dicts of structs, at most 12 levels deep)."""
        if depth > _MAX_DEPTH:
            return
        if isinstance(value, msgspec.Struct) or _is_dataclass(value):
            for kind_class, kind in _KIND_OF_ID:
                if isinstance(value, kind_class):
                    self.add(kind, getattr(value, "id", None))
            if isinstance(value, T.Message):
                self.add("msg", getattr(value, "id", None))
            for name in _field_names(value):
                item = getattr(value, name, None)
                field_kind = _KIND_OF_FIELD.get(name)
                if field_kind is not None:
                    self.add(field_kind, item)
                elif name in _LISTS_OF_IDS and isinstance(item, list | tuple):
                    for one in cast("Iterable[object]", item):
                        self.add(_LISTS_OF_IDS[name], one)
                elif isinstance(item, msgspec.Struct | list | tuple):
                    self.collect(cast("object", item), depth + 1)
        elif isinstance(value, list | tuple):
            for item in cast("Iterable[object]", value):
                self.collect(item, depth + 1)

    def apply(self, text: str) -> str:
        """``text`` with every named id replaced (whole tokens only, longest first),
        other UUIDs as ``<uuid-N>`` and ISO 8601 timestamps as ``<time>``."""
        text = _ELAPSED.sub(r"\1 <ms> ms", _TIMESTAMP.sub("<time>", text))
        if self._names:
            ids = sorted(self._names, key=len, reverse=True)
            alternatives = "|".join(re.escape(i) for i in ids)
            pattern = re.compile(r"(?<![\w-])(?:" + alternatives + r")(?![\w-])")
            text = pattern.sub(lambda m: self._names[m.group(0)], text)
        return _UUID.sub(self._uuid, text)

    def _uuid(self, match: re.Match[str]) -> str:
        """A UUID no event names as an id (one inside a RAW or CUSTOM payload, say):
        ``<uuid-N>``, numbered as the others."""
        self.add("uuid", match.group(0))
        return self._names[match.group(0)]


def render_transcript(
    updates: Iterable[Any], *, seen: Iterable[Any] = (), placeholders: Placeholders | None = None
) -> str:
    """The transcript of ``updates`` (one run or several, in order): rendered lines,
    ids as placeholders, one ``\\n``-terminated line each. ``seen``: values whose ids
    are named first (the request inputs, so the thread and run are ``<thread-1>`` and
    ``<run-1>`` in the order the client made them)."""
    from agui._lines.render import RenderOptions, render_all

    items = list(updates)
    names = placeholders if placeholders is not None else Placeholders()
    for value in seen:
        names.collect(value)
    names.collect(items)
    lines = render_all(items, RenderOptions(max_chars=0))
    return "".join(names.apply(line) + "\n" for line in lines)
