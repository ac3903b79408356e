"""Building user actions to send back to the agent (client -> agent).

AG-UI carries an A2UI user action as a new run whose
``forwardedProps.a2uiAction`` is ``{"userAction": {name, surfaceId,
sourceComponentId, timestamp, context}}`` -- the v0.8 key name, used by the
AG-UI middleware (``@ag-ui/a2ui-middleware``) even for v0.9 surfaces.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from agui.a2ui.bindings import resolve
from agui.a2ui.surface import Surface

__all__ = ["action_for", "client_data_model", "user_action"]


def _timestamp(value: str | datetime | None) -> str:
    if isinstance(value, str):
        return value
    moment = value if isinstance(value, datetime) else datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def user_action(
    name: str,
    surface_id: str,
    source_component_id: str,
    context: dict[str, Any] | None = None,
    timestamp: str | datetime | None = None,
) -> dict[str, Any]:
    """The value for ``forwardedProps.a2uiAction``.

    Returns ``{"userAction": {"name", "surfaceId", "sourceComponentId",
    "timestamp", "context"}}``. ``timestamp`` is an ISO 8601 string (kept as
    given), a datetime (converted to UTC, ``Z`` suffix, milliseconds; naive
    means UTC) or None for now. ``context`` must be the *resolved* context
    (plain JSON); None gives ``{}``. Non-string ids are converted with ``str``
    so the result is always well-formed; nothing is raised.
    """
    return {
        "userAction": {
            "name": str(name),
            "surfaceId": str(surface_id),
            "sourceComponentId": str(source_component_id),
            "timestamp": _timestamp(timestamp),
            "context": dict(context) if isinstance(context, dict) else {},
        }
    }


def action_for(
    surface: Surface,
    component_id: str,
    scope: str | None = None,
    timestamp: str | datetime | None = None,
) -> dict[str, Any] | None:
    """The ``a2uiAction`` for activating component ``component_id`` (e.g. a Button).

    Reads the component's ``action.event`` (v0.9; v0.8 actions are converted
    on arrival), resolves every context value against the surface's data model
    (``scope``: the template item pointer for components inside a template),
    and returns :func:`user_action`'s shape. Returns None when the component is
    absent or has no server event (e.g. a local ``functionCall`` action).
    """
    comp = surface.components.get(component_id)
    action = comp.get("action") if comp else None
    event = action.get("event") if isinstance(action, dict) else None
    if not isinstance(event, dict) or not isinstance(event.get("name"), str):
        return None
    raw = event.get("context")
    context = (
        {k: resolve(v, surface, scope) for k, v in raw.items()} if isinstance(raw, dict) else {}
    )
    return user_action(event["name"], surface.surface_id, component_id, context, timestamp)


def client_data_model(surfaces: Iterable[Surface]) -> dict[str, Any] | None:
    """The data models the client owes the agent, or None when none is owed.

    Surfaces created with ``sendDataModel: true`` ship their whole model with
    every message to the agent. A2UI names this ``a2uiClientDataModel``
    ``{"version": "v0.9", "surfaces": {surfaceId: model}}``; the AG-UI binding
    has no standard slot for it, so we suggest ``forwardedProps.a2uiClientDataModel``
    beside ``a2uiAction``.
    """
    owed = {s.surface_id: s.data_model for s in surfaces if s.send_data_model}
    return {"version": "v0.9", "surfaces": owed} if owed else None
