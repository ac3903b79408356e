"""Helpers shared by the verifier's modules: violation construction and the
small readers of event fields its messages use."""

from __future__ import annotations

from typing import Any

import msgspec

from agui import types as T
from agui.errors import ProtocolViolation

UNSET: Any = msgspec.UNSET
MISSING: Any = object()
"""An owner not recorded (distinct from None, the parent agent)."""


def violation(
    code: str, message: str, event: Any, position: int | None, id: str | None = None
) -> ProtocolViolation:
    """The :class:`~agui.errors.ProtocolViolation` of rule ``code`` for ``event``."""
    return ProtocolViolation(code, message, event=event, position=position, id=id)


def owner_label(owner: str | None) -> str:
    """An owner as a violation message names it (None: the parent agent)."""
    return "(the parent agent)" if owner is None else owner


def subagent_of(event: Any) -> str | None:
    """The event's subagentRunId, None when absent (the parent agent)."""
    tag = event.subagent_run_id
    return None if tag is UNSET else tag


def plain(value: Any) -> Any:
    """An enum member's value (else the value itself)."""
    return getattr(value, "value", value)


def type_name(event: Any) -> str:
    """The event's wire type (e.g. ``TEXT_MESSAGE_START``)."""
    try:
        return T.event_type(event)
    except Exception:  # noqa: BLE001 - diagnostics only, never fail on a message
        return type(event).__name__


_ID_ATTRS = ("message_id", "tool_call_id", "step_name", "subagent_run_id", "run_id", "entity_id")


def event_id(event: Any) -> str | None:
    """The id an event is about, for violation reports (None when it has none)."""
    for attr in _ID_ATTRS:
        value = getattr(event, attr, UNSET)
        if value is not UNSET and isinstance(value, str):
            return value
    return None
