"""Recovering A2UI surfaces from AG-UI conversation messages.

Two carriers are read, in message order:

* **activity messages** (``role: "activity"``) whose ``activityType`` is
  ``"a2ui-surface"``: ``content.a2ui_operations`` (current middleware) or
  ``content.operations`` (older streams), a list of A2UI operations, possibly
  double-encoded as a JSON string; a content without operations but with a
  ``status`` (``building`` / ``retrying`` / ``failed``) marks the surface
  named by ``content.surfaceId`` -- or, lacking one, by the message id -- as
  still being generated. ACTIVITY_DELTA patches have already been applied by
  the conversation, so the final content is what is read here.
* **assistant tool calls** named ``render_a2ui`` whose JSON ``arguments`` are
  ``{surfaceId, components: [v0.9 flat components], data?: {...}, catalogId?}``
  (read as createSurface + updateComponents + updateDataModel at ``/``) or
  carry an explicit ``a2ui_operations`` list, and the older
  ``send_a2ui_json_to_client`` ``{a2ui_json: str | list}``.

Snapshots are cumulative (each repeats createSurface and the components),
which the store's upsert rules absorb. Messages may be generated msgspec
structs (converted with ``msgspec.to_builtins``, wire names) or plain dicts in
wire (camelCase) form. Nothing here raises on bad input.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import msgspec

from agui._jsonvalue import JSONValue, is_json_array, is_json_object
from agui.a2ui._surface import BASIC_CATALOG_ID, Surface, SurfaceStore

__all__ = [
    "ACTIVITY_TYPE",
    "RENDER_TOOL",
    "add_message",
    "operations_from_render_args",
    "surfaces_from_messages",
]

ACTIVITY_TYPE = "a2ui-surface"
RENDER_TOOL = "render_a2ui"
LEGACY_TOOL = "send_a2ui_json_to_client"


def _as_dict(message: object) -> dict[str, Any] | None:
    if is_json_object(message):
        return message
    try:
        data = msgspec.to_builtins(message)
    except Exception:  # noqa: BLE001 - unreadable struct
        return None
    return data if is_json_object(data) else None


def _parse_json(raw: str | bytes) -> tuple[Any, str | None]:
    """``(value, None)``, or ``(None, reason)`` when ``raw`` is not usable JSON.

    Too deep for the parser (RecursionError) and integers past Python's
    4300-digit limit (a plain ValueError) are reasons like any syntax error.
    """
    try:
        return json.loads(raw), None
    except RecursionError:
        return None, "nested too deeply"
    except ValueError as exc:  # JSONDecodeError, or the int -> str digit limit
        return None, getattr(exc, "msg", None) or str(exc)[:200]


def _maybe_json(value: JSONValue) -> JSONValue:
    if isinstance(value, (str, bytes)):
        parsed, error = _parse_json(value)
        return value if error else parsed
    return value


def operations_from_render_args(args: JSONValue) -> list[Any]:
    """The A2UI operations a ``render_a2ui`` call's parsed arguments stand for.

    Two argument shapes are read:

    * the middleware's ``{surfaceId, components, data?, catalogId?}`` ->
      createSurface (catalog: ``catalogId`` or the basic catalog),
      updateComponents, and, when ``data`` is present, updateDataModel at ``/``;
    * an explicit operation list ``{a2ui_operations: [...]}`` (or
      ``operations``), as the task-board agent sends -> that list as is.

    Returns ``[]`` when neither shape applies (not an object, or no operation
    list and no string ``surfaceId``).
    """
    if not is_json_object(args):
        return []
    explicit = _maybe_json(args.get("a2ui_operations", args.get("operations")))
    if is_json_array(explicit):
        return list(explicit)
    if not isinstance(args.get("surfaceId"), str):
        return []
    sid = args["surfaceId"]
    catalog = args.get("catalogId")
    create: dict[str, Any] = {
        "surfaceId": sid,
        "catalogId": catalog if isinstance(catalog, str) else BASIC_CATALOG_ID,
    }
    ops: list[dict[str, Any]] = [{"version": "v0.9", "createSurface": create}]
    if "components" in args:
        ops.append(
            {
                "version": "v0.9",
                "updateComponents": {"surfaceId": sid, "components": args["components"]},
            }
        )
    if "data" in args:
        ops.append(
            {
                "version": "v0.9",
                "updateDataModel": {"surfaceId": sid, "path": "/", "value": args["data"]},
            }
        )
    return ops


def _apply_all(store: SurfaceStore, ops: JSONValue, where: str) -> list[Surface]:
    ops = _maybe_json(ops)
    if not is_json_array(ops):
        store.problems.append(f"{where}: operations must be a list")
        return []
    touched: list[Surface] = []
    for op in ops:
        surface = store.apply(op)
        if surface is not None:
            touched.append(surface)
    return touched


def _activity(store: SurfaceStore, msg: dict[str, Any]) -> None:
    mid = msg.get("id")
    content = _maybe_json(msg.get("content"))
    where = f"activity {mid!r}"
    if not is_json_object(content):
        store.problems.append(f"{where}: content is not an object")
        return
    ops = content.get("a2ui_operations", content.get("operations"))
    status = content.get("status")
    if ops is not None:
        touched = _apply_all(store, ops, where)
        if status is not None:
            for surface in touched:
                store.set_status(surface.surface_id, content)
        return
    if status is not None:
        key = content.get("surfaceId")
        key = key if isinstance(key, str) else mid
        if isinstance(key, str):
            store.set_status(key, content)
        else:
            store.problems.append(f"{where}: status without a surfaceId or message id")


def _tool_calls(store: SurfaceStore, msg: dict[str, Any]) -> None:
    calls = msg.get("toolCalls")
    if not is_json_array(calls):
        return
    for call in calls:
        function = call.get("function") if is_json_object(call) else None
        if not is_json_object(function) or function.get("name") not in (RENDER_TOOL, LEGACY_TOOL):
            continue
        where = f"tool call {call.get('id')!r} ({function['name']})"
        raw = function.get("arguments")
        args, error = _parse_json(raw) if isinstance(raw, (str, bytes)) else (raw, None)
        if error:
            store.problems.append(f"{where}: arguments are not JSON ({error})")
            continue
        if function["name"] == LEGACY_TOOL:
            payload = args.get("a2ui_json") if is_json_object(args) else None
            payload = _maybe_json(payload)
            _apply_all(store, payload if is_json_array(payload) else [payload], where)
            continue
        ops = operations_from_render_args(args)
        if not ops:
            store.problems.append(f"{where}: arguments need a2ui_operations or a string surfaceId")
            continue
        _apply_all(store, ops, where)


def add_message(store: SurfaceStore, message: object) -> None:
    """Feed one conversation message (struct or wire dict) to ``store``; never raises.

    A message that cannot be read is noted in ``store.problems`` and skipped;
    every surface built so far is kept.
    """
    try:
        _add_message(store, message)
    except Exception as exc:  # noqa: BLE001 - last defence: one bad message loses nothing else
        store.problems.append(f"message skipped ({type(exc).__name__})")


def _add_message(store: SurfaceStore, message: object) -> None:
    msg = _as_dict(message)
    if msg is None:
        store.problems.append(f"message of type {type(message).__name__} is not readable")
        return
    role = msg.get("role")
    if role == "activity" and msg.get("activityType") in (ACTIVITY_TYPE, "a2ui"):
        _activity(store, msg)
    elif role == "assistant":
        _tool_calls(store, msg)


def surfaces_from_messages(messages: Iterable[Any]) -> dict[str, Surface]:
    """All live A2UI surfaces in a conversation: surfaceId -> Surface.

    ``messages`` are AG-UI messages (generated ``Message`` structs such as
    ``ActivityMessage`` / ``AssistantMessage``, or wire-form dicts) in
    conversation order. Deleted surfaces are absent; problems met on the way
    are on each ``Surface.problems`` (use :class:`SurfaceStore` and
    :func:`add_message` to also see problems tied to no surface).
    """
    store = SurfaceStore()
    for message in messages:
        add_message(store, message)
    return store.surfaces
