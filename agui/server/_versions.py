"""What protocol version a response stream may use, and 1.0 output for a 1.0 client.

The SDK's types are AG-UI 1.0 plus one optional field of 1.1,
``encryptedValueType`` (next to every ``encryptedValue``: on
REASONING_ENCRYPTED_VALUE, on messages, on tool calls). A client that declared
``protocolVersion: "1.0"`` in its RunAgentInput must receive nothing 1.0 does
not define, so the endpoint leaves that field out of every event it sends such
a client (:func:`strip_newer_fields`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, cast

import msgspec

from agui.types import RunAgentInput

UNSET: Any = msgspec.UNSET

NEWEST_VERSION = "1.1"
"""The newest protocol version the server toolkit sends (1.0 plus ``encryptedValueType``)."""

OLDEST_VERSION = "1.0"

NEWER_FIELDS: frozenset[str] = frozenset({"encrypted_value_type"})
"""Struct attributes added after 1.0 (1.1: ``encryptedValueType``)."""

NEWER_WIRE_NAME = b'"encryptedValueType"'
"""Their wire name as it appears in encoded JSON (a cheap pre-check; it may
also be a key inside open JSON, which :func:`strip_newer_fields` keeps)."""

_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)?$")


def stream_version(run_input: RunAgentInput) -> str:
    """The protocol version to speak on the response to ``run_input``:
    ``"1.1"`` or ``"1.0"``.

    * ``protocolVersion`` declared ``"1.1"`` or newer -> ``"1.1"`` (the newest
      we have; a newer client reads a 1.1 stream);
    * declared ``"1.0"`` (what ``@ag-ui/client`` 1.0 sends) or any 0.x version
      -> ``"1.0"``;
    * **not declared** -> ``"1.0"``: a client that omits the field predates it
      (0.x clients never send it, and a 1.0 client leaves it out only when
      pinned to talk to an older peer), so it cannot know any field newer than
      1.0; a client that does know 1.1 says so. Sending such a client 1.1 fields
      could make a strict reader refuse the event, while leaving them out only
      drops an optional, opaque label;
    * declared but not ``MAJOR.MINOR`` (unreadable) -> ``"1.0"``, for the same
      reason.
    """
    declared = getattr(run_input, "protocol_version", UNSET)
    if not isinstance(declared, str):
        return OLDEST_VERSION
    match = _VERSION.match(declared.strip())
    if match is None:
        return OLDEST_VERSION
    major, minor = int(match.group(1)), int(match.group(2))
    return NEWEST_VERSION if (major, minor) >= (1, 1) else OLDEST_VERSION


def strip_newer_fields(value: object) -> Any:
    """``value`` (a generated struct) without the post-1.0 fields, at any depth
    of typed structs (events, messages, tool calls, RUN_STARTED's input); open
    JSON (state, ``value``, ``rawEvent``, metadata ...) is data and left as it
    is. Returns ``value`` itself when nothing was set, else a copy (the agent's
    objects are never changed)."""
    if isinstance(value, msgspec.Struct):
        changes: dict[str, Any] = {}
        for name in value.__struct_fields__:
            item = getattr(value, name)
            if name in NEWER_FIELDS:
                if item is not UNSET:
                    changes[name] = UNSET
                continue
            stripped = strip_newer_fields(item)
            if stripped is not item:
                changes[name] = stripped
        return msgspec.structs.replace(value, **changes) if changes else value
    if isinstance(value, list | tuple):
        old_items = cast("Sequence[object]", value)  # the items are structs or open JSON
        items = [strip_newer_fields(item) for item in old_items]
        if any(new is not old for new, old in zip(items, old_items, strict=True)):
            return items if isinstance(old_items, list) else tuple(items)
        return old_items  # unchanged: the value itself
    return value
