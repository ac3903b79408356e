"""Building user actions to send back to the agent (client -> agent).

AG-UI carries an A2UI user action as a new run whose
``forwardedProps.a2uiAction`` is ``{"userAction": {name, surfaceId,
sourceComponentId, timestamp, context}}`` -- the v0.8 key name, used by the
AG-UI middleware even for v0.9 surfaces.

A2UI v1.0 adds two renderer-to-agent messages, carried the same way (as the
value of ``forwardedProps.a2uiAction``): ``callAgentFunction`` (a component
whose action is a function call the renderer may not run itself, ``callableFrom:
"remoteOnly"``) and ``rendererFunctionResponse`` (the renderer's answer to the
agent's ``callRendererFunction``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from agui._jsonvalue import JSONValue, is_json_object
from agui.a2ui._bindings import resolve
from agui.a2ui._surface import Surface

__all__ = [
    "action_for",
    "call_agent_function",
    "client_data_model",
    "renderer_function_response",
    "user_action",
]


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
            "context": dict(context) if is_json_object(context) else {},
        }
    }


def call_agent_function(
    surface_id: str,
    call: str,
    args: dict[str, Any] | None = None,
    catalog_id: str | None = None,
    function_call_id: str | None = None,
) -> dict[str, Any]:
    """The ``a2uiAction`` value asking the agent to run function ``call`` (A2UI v1.0).

    Returns ``{"callAgentFunction": {"surfaceId", "functionCallId", "callFunction":
    {"call", "args", "catalogId"?}}}``. ``args`` must be resolved (plain JSON);
    ``function_call_id`` defaults to a fresh random id (the agent's
    ``agentFunctionResponse`` carries it back). Nothing is raised.
    """
    function: dict[str, Any] = {
        "call": str(call),
        "args": dict(args) if is_json_object(args) else {},
    }
    if isinstance(catalog_id, str):
        function["catalogId"] = catalog_id
    return {
        "callAgentFunction": {
            "surfaceId": str(surface_id),
            "functionCallId": function_call_id or f"renderer-{uuid.uuid4().hex}",
            "callFunction": function,
        }
    }


def renderer_function_response(
    function_call_id: str,
    call: str,
    value: JSONValue = None,
    error: tuple[str, str] | None = None,
    surface_id: str | None = None,
) -> dict[str, Any]:
    """The ``a2uiAction`` value answering the agent's ``callRendererFunction`` (A2UI v1.0).

    Returns ``{"rendererFunctionResponse": {"functionCallId", "call", "value"}}``,
    or with ``"error": {"code", "message"}`` instead of ``value`` when ``error``
    (a ``(code, message)`` pair) is given; ``surfaceId`` is added when known.
    """
    body: dict[str, Any] = {"functionCallId": str(function_call_id), "call": str(call)}
    if surface_id is not None:
        body["surfaceId"] = str(surface_id)
    if error is not None:
        body["error"] = {"code": str(error[0]), "message": str(error[1])}
    else:
        body["value"] = value
    return {"rendererFunctionResponse": body}


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
    and returns :func:`user_action`'s shape. A v1.0 ``functionCall`` action
    marked ``callableFrom: "remoteOnly"`` gives :func:`call_agent_function`'s
    shape instead (arguments resolved, the component's catalog named). Returns
    None when the component is absent or its action runs locally (any other
    ``functionCall``, e.g. ``openUrl``).
    """
    comp = surface.components.get(component_id)
    action = comp.get("action") if comp else None
    event = action.get("event") if is_json_object(action) else None
    function = action.get("functionCall") if is_json_object(action) else None
    if (
        is_json_object(function)
        and function.get("callableFrom") == "remoteOnly"
        and isinstance(function.get("call"), str)
    ):
        raw_args = function.get("args")
        args = (
            {k: resolve(v, surface, scope) for k, v in raw_args.items()}
            if is_json_object(raw_args)
            else {}
        )
        catalog = function.get("catalogId")
        catalog = catalog if isinstance(catalog, str) else surface.catalog_of(component_id)
        return call_agent_function(surface.surface_id, function["call"], args, catalog)
    if not is_json_object(event) or not isinstance(event.get("name"), str):
        return None
    raw = event.get("context")
    context = {k: resolve(v, surface, scope) for k, v in raw.items()} if is_json_object(raw) else {}
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
