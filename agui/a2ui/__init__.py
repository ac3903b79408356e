"""A2UI surfaces carried over AG-UI: recover, hold, render as text, act.

Public API::

    surfaces_from_messages(messages) -> dict[str, Surface]
    SurfaceStore().apply(operation: dict) -> Surface | None
    render_surface(surface) -> list[str]
    render_surfaces(surfaces) -> dict[str, list[str]]  (one output budget for all)
    user_action(name, surface_id, source_component_id, context, timestamp=None) -> dict
    action_for(surface, component_id, scope=None, timestamp=None) -> dict | None
    call_agent_function(surface_id, call, args, catalog_id=None) -> dict  (v1.0)
    renderer_function_response(function_call_id, call, value) -> dict    (v1.0)
    client_data_model(surfaces) -> dict | None      (sendDataModel surfaces)
    is_basic_catalog(catalog_id) -> bool             (catalog-id aliases)
    validate(message, catalog=None) -> AgentMessage  (schema + catalog functions; raises
                                                      A2uiValidationError)

A2UI v0.8, v0.9, v0.9.1 and v1.0 (also under its first name v0.10) feed one
internal model, the version detected per operation; bad input is skipped and
recorded in ``Surface.problems`` / ``SurfaceStore.problems``, never raised.
"""

from agui.a2ui._actions import (
    action_for,
    call_agent_function,
    client_data_model,
    renderer_function_response,
    user_action,
)
from agui.a2ui._bindings import format_string, resolve, to_text
from agui.a2ui._from_messages import (
    ACTIVITY_TYPE,
    RENDER_TOOL,
    add_message,
    operations_from_render_args,
    surfaces_from_messages,
)
from agui.a2ui._surface import BASIC_CATALOG_ID, Surface, SurfaceStore, is_basic_catalog
from agui.a2ui._surface_text import render_surface, render_surfaces
from agui.a2ui._validate import A2uiValidationError, FunctionCatalog, validate

__all__ = [
    "ACTIVITY_TYPE",
    "A2uiValidationError",
    "BASIC_CATALOG_ID",
    "FunctionCatalog",
    "RENDER_TOOL",
    "Surface",
    "SurfaceStore",
    "action_for",
    "add_message",
    "call_agent_function",
    "client_data_model",
    "format_string",
    "is_basic_catalog",
    "operations_from_render_args",
    "render_surface",
    "render_surfaces",
    "renderer_function_response",
    "resolve",
    "surfaces_from_messages",
    "to_text",
    "user_action",
    "validate",
]
