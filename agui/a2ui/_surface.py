"""Surfaces: the A2UI state a client keeps, built from agent-to-client operations.

One internal model for every protocol version: v0.8 (through
:mod:`agui.a2ui._v08` first), v0.9 and v0.9.1 (the same messages, both say
``"version": "v0.9"``) and v1.0 (``"v1.0"``, or ``"v0.10"`` from agents
written against the candidate's first name):

* ``components``: id -> flat component ``{id, component: "<Type>", ...props}``;
  ``updateComponents`` / ``surfaceUpdate`` upsert by id (the new definition
  replaces the old one whole; a changed type counts as a rebuild);
* ``data_model``: plain JSON; ``updateDataModel`` upserts at a JSON Pointer
  (``value`` absent deletes), v0.8 ``dataModelUpdate`` converts its
  adjacency-list ``contents`` and writes it at ``path`` (absent = whole model);
* ``root``: ``"root"`` in v0.9 and v1.0, ``beginRendering.root`` in v0.8;
* v1.0 ``createSurface`` may carry ``components`` and ``dataModel`` (applied as
  updateComponents / updateDataModel at ``/``) and needs no ``catalogId``; a
  component may name its own ``catalogId`` (:meth:`Surface.catalog_of`);
  ``updateDataModel`` with ``value: null`` deletes (v1.0 only: in v0.9 null is
  a value);
* v1.0 function messages (``callRendererFunction``, v0.10 ``callFunction``)
  and answers (``agentFunctionResponse``, v0.10 ``actionResponse``) are kept,
  in arrival order, in ``SurfaceStore.function_calls`` / ``SurfaceStore.responses``
  as plain dicts ``{"kind", "version", ...body}``: a terminal runs no agent
  function, but the caller can see and answer them;
* ``createSurface`` for a surface already held is ignored (AG-UI snapshots
  repeat it), ``deleteSurface`` removes the surface;
* ``status``: the AG-UI activity lifecycle (``building`` / ``retrying`` /
  ``failed``) of a surface still being generated.

Bad input never raises: :meth:`SurfaceStore.apply` skips a malformed
operation (or the malformed part of it) and appends a sentence to
``Surface.problems`` (or ``SurfaceStore.problems`` when no surface can be named).

Hostile input is bounded: an operation nested deeper than :data:`MAX_JSON_DEPTH`
is refused whole, and a data-model write that would pad a list far past its
end (or use a path of too many segments, see :mod:`agui.a2ui._pointer`) is
refused; the surface keeps its state and gains a problem.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from agui._jsonvalue import JSONObject, JSONValue, is_json_array, is_json_object
from agui.a2ui import _pointer as pointer
from agui.a2ui import _v08 as v08

__all__ = [
    "BASIC_CATALOG_ID",
    "MAX_JSON_DEPTH",
    "V08_KINDS",
    "V09_KINDS",
    "V10_CALL_KINDS",
    "V10_RESPONSE_KINDS",
    "Surface",
    "SurfaceStore",
    "is_basic_catalog",
]

BASIC_CATALOG_ID = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
V09_KINDS = ("createSurface", "updateComponents", "updateDataModel", "deleteSurface")
V08_KINDS = ("surfaceUpdate", "dataModelUpdate", "beginRendering")
V10_CALL_KINDS = ("callRendererFunction", "callFunction")
V10_RESPONSE_KINDS = ("agentFunctionResponse", "actionResponse")
V10_VERSIONS = ("v1.0", "v0.10")
STATUSES = ("building", "retrying", "failed")
MAX_JSON_DEPTH = 100
"""Deepest nesting of objects and arrays accepted in one operation."""


def too_deep(value: JSONValue, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when ``value`` nests dicts/lists more than ``limit`` levels (iterative)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        children: Iterable[object]
        if is_json_object(node):
            children = node.values()
        elif is_json_array(node):
            children = node
        elif isinstance(node, tuple):
            children = cast("tuple[object, ...]", node)
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def is_basic_catalog(catalog_id: object) -> bool:
    """True when ``catalog_id`` names the A2UI basic/standard catalog.

    Aliases the spec id, the drifted ``.../v0_9/basic_catalog.json`` still used by
    the AG-UI toolkit, the v0.8 standard catalog, an absent id, and any other id
    mentioning ``basic``.
    """
    if catalog_id is None:
        return True
    if not isinstance(catalog_id, str):
        return False
    return "basic" in catalog_id or catalog_id.endswith("standard_catalog_definition.json")


@dataclass
class Surface:
    """One A2UI surface as the client holds it.

    Attributes:
        surface_id: the protocol ``surfaceId``.
        version: ``"v0.8"``, ``"v0.9"`` (also v0.9.1) or ``"v1.0"`` (also v0.10),
            from the first operation seen; None for a status-only surface.
        catalog_id: ``createSurface.catalogId`` / ``beginRendering.catalogId``.
        theme: v0.9 ``theme`` or v0.8 ``styles`` (plain JSON), or None.
        send_data_model: ``createSurface.sendDataModel``.
        root: explicit root id (v0.8 ``beginRendering.root``); None means ``"root"``.
        rendering: True once the surface may be drawn (v0.9 createSurface or
            any v0.9 update; v0.8 beginRendering).
        created: True once a createSurface was applied (a repeat is then ignored).
        components: id -> flat component dict (see module docs).
        data_model: the data model (plain JSON, normally a dict).
        status: ``"building"``, ``"retrying"``, ``"failed"`` or None.
        status_detail: the rest of the activity content that carried the status
            (``attempt``, ``maxAttempts``, ``error``, ``errors``...).
        rebuilds: id -> how many times the component was rebuilt by a type change.
        problems: human-readable notes on skipped bad input, in arrival order.
    """

    surface_id: str
    version: str | None = None
    catalog_id: str | None = None
    theme: Any = None
    send_data_model: bool = False
    root: str | None = None
    rendering: bool = False
    created: bool = False
    components: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    data_model: Any = field(default_factory=dict[str, Any])
    status: str | None = None
    status_detail: dict[str, Any] = field(default_factory=dict[str, Any])
    rebuilds: dict[str, int] = field(default_factory=dict[str, int])
    problems: list[str] = field(default_factory=list[str])

    @property
    def root_id(self) -> str:
        """The id the tree is drawn from: ``root`` when set, else ``"root"``."""
        return self.root if isinstance(self.root, str) else "root"

    def catalog_of(self, component_id: str) -> str | None:
        """Catalog id of a component: its own ``catalogId`` (v1.0), else the surface's."""
        own = self.components.get(component_id, {}).get("catalogId")
        return own if isinstance(own, str) else self.catalog_id

    def get(self, path: str, scope: str | None = None, default: JSONValue = None) -> JSONValue:
        """Read the data model at ``path`` (absolute, or relative to ``scope``)."""
        try:
            return pointer.get(self.data_model, pointer.absolute(path, scope), default)
        except pointer.PointerError:
            return default

    def upsert_component(self, component: dict[str, Any]) -> None:
        """Insert or replace one flat component (caller has checked id and type)."""
        cid = component["id"]
        old = self.components.get(cid)
        if old is not None and old.get("component") != component.get("component"):
            self.rebuilds[cid] = self.rebuilds.get(cid, 0) + 1
        self.components[cid] = component

    def write(self, path: str, value: JSONValue) -> None:
        """Upsert ``value`` at ``path`` in the data model (records a problem on a bad path)."""
        try:
            self.data_model = pointer.put(self.data_model, path, value)
        except pointer.PointerError as exc:
            self.problems.append(f"data model write at {path!r} skipped: {exc}")

    def remove(self, path: str) -> None:
        """Delete the value at ``path`` (array slots become holes)."""
        try:
            self.data_model = pointer.delete(self.data_model, path)
        except pointer.PointerError as exc:
            self.problems.append(f"data model delete at {path!r} skipped: {exc}")


_ALL_KINDS = (*V09_KINDS, *V08_KINDS, *V10_CALL_KINDS, *V10_RESPONSE_KINDS)


def _identified(surface: Surface, body: dict[str, Any], kind: str) -> Iterator[JSONObject]:
    """The entries of ``body["components"]`` that are objects with a string ``id``, in order;
    each other entry (or a ``components`` that is not a list) adds a problem to ``surface``
    naming the operation ``kind`` instead."""
    components = body.get("components")
    if not is_json_array(components):
        surface.problems.append(f"{kind}: components must be a list")
        return
    for n, component in enumerate(components):
        if is_json_object(component) and isinstance(component.get("id"), str):
            yield component
        else:
            surface.problems.append(f"{kind}: component #{n} has no string id")


def _kind_of(operation: dict[str, Any]) -> tuple[str | None, str]:
    kinds = [k for k in _ALL_KINDS if k in operation]
    if len(kinds) != 1:
        return None, "none" if not kinds else "several: " + ", ".join(kinds)
    return kinds[0], ""


class SurfaceStore:
    """All surfaces of one conversation, fed one A2UI operation at a time.

    ``apply(operation)`` takes one agent-to-client message as plain JSON (a v0.9
    envelope ``{"version": "v0.9", "<kind>": {...}}`` or a v0.8 message
    ``{"<kind>": {...}}``); the version is detected per operation. See
    :mod:`agui.a2ui._from_messages` for feeding whole AG-UI messages.

    Attributes:
        surfaces: surfaceId -> Surface, in creation order (deleted ones removed).
        problems: notes on input that could not be tied to any surface.
        function_calls: v1.0 agent-to-renderer function calls, in arrival order:
            ``{"kind": "callRendererFunction" | "callFunction", "version", ...}``
            (the body's keys; for v0.10 ``callFunction`` the envelope's
            ``functionCallId`` and ``wantResponse`` beside ``callFunction``).
        responses: v1.0 answers (``agentFunctionResponse``; v0.10
            ``actionResponse`` with its ``actionId``), the same way.
    """

    def __init__(self) -> None:
        self.surfaces: dict[str, Surface] = {}
        self.problems: list[str] = []
        self.function_calls: list[dict[str, Any]] = []
        self.responses: list[dict[str, Any]] = []

    # -- helpers --------------------------------------------------------------
    def _surface(self, surface_id: str) -> Surface:
        surface = self.surfaces.get(surface_id)
        if surface is None:
            surface = self.surfaces[surface_id] = Surface(surface_id)
        return surface

    def set_status(self, surface_id: str, content: dict[str, Any]) -> Surface:
        """Record an activity lifecycle status (``content["status"]``) on a surface."""
        surface = self._surface(surface_id)
        status = content.get("status")
        if status in STATUSES:
            surface.status = status
            surface.status_detail = {k: v for k, v in content.items() if k != "status"}
        else:
            surface.problems.append(f"unknown activity status {status!r} ignored")
        return surface

    # -- operations -------------------------------------------------------------
    def apply(self, operation: JSONValue) -> Surface | None:
        """Apply one A2UI operation; return the surface it touched (None if skipped or deleted).

        Never raises: a non-object, a message with zero or several kinds, a body
        without a string ``surfaceId``, an operation nested deeper than
        :data:`MAX_JSON_DEPTH`, or bad parts inside a body are skipped and
        described in ``problems`` (the surface's when it can be named). A
        failure stays inside its operation: other surfaces are untouched.
        """
        try:
            return self._apply(operation)
        except Exception as exc:  # noqa: BLE001 - last defence; a surprise must not escape
            self.problems.append(f"operation skipped ({type(exc).__name__})")
            return None

    def _apply(self, operation: JSONValue) -> Surface | None:
        if not is_json_object(operation):
            self.problems.append(f"operation is not an object: {type(operation).__name__}")
            return None
        kind, why = _kind_of(operation)
        if kind is None:
            self.problems.append(f"operation has {why} message kind(s); keys {sorted(operation)}")
            return None
        if kind in V10_CALL_KINDS or kind in V10_RESPONSE_KINDS:
            return self._function_message(kind, operation)
        body = operation[kind]
        sid = body.get("surfaceId") if is_json_object(body) else None
        if not isinstance(sid, str):
            self.problems.append(f"{kind}: surfaceId missing or not a string")
            return None
        if too_deep(operation):
            target = self.surfaces.get(sid)
            where = target.problems if target is not None else self.problems
            where.append(f"{kind}: skipped, nested deeper than {MAX_JSON_DEPTH} levels")
            return target
        version = operation.get("version")
        legacy = kind in V08_KINDS or (kind == "deleteSurface" and version is None)
        if kind == "deleteSurface":
            self.surfaces.pop(sid, None)
            return None
        surface = self._surface(sid)
        if surface.version is None:
            surface.version = "v0.8" if legacy else "v1.0" if version in V10_VERSIONS else "v0.9"
        try:
            getattr(self, "_" + kind)(surface, body, version)
        except Exception as exc:  # noqa: BLE001 - a surprise shape must not escape
            surface.problems.append(f"{kind}: skipped ({type(exc).__name__}: {exc})")
        return surface

    def _function_message(self, kind: str, operation: dict[str, Any]) -> Surface | None:
        if too_deep(operation):
            self.problems.append(f"{kind}: skipped, nested deeper than {MAX_JSON_DEPTH} levels")
            return None
        if kind == "callFunction":  # v0.10: the call's id and flag sit on the envelope
            body: Any = {
                k: operation[k] for k in ("functionCallId", "wantResponse") if k in operation
            }
            body["callFunction"] = operation[kind]
        elif kind == "actionResponse":
            body = {k: operation[k] for k in ("actionId",) if k in operation}
            body["actionResponse"] = operation[kind]
        else:
            body = operation[kind]
        if not is_json_object(body):
            self.problems.append(f"{kind}: body must be an object")
            return None
        entry = {"kind": kind, "version": operation.get("version"), **body}
        call = entry.get("callFunction")
        if kind in V10_CALL_KINDS and not (
            is_json_object(call) and isinstance(call.get("call"), str)
        ):
            self.problems.append(f"{kind}: callFunction needs a string call")
            return None
        (self.function_calls if kind in V10_CALL_KINDS else self.responses).append(entry)
        sid = entry.get("surfaceId")
        return self.surfaces.get(sid) if isinstance(sid, str) else None

    def _createSurface(self, surface: Surface, body: dict[str, Any], version: JSONValue) -> None:
        if surface.created:
            return  # repeated createSurface (cumulative AG-UI snapshots): ignored
        surface.created = surface.rendering = True
        catalog = body.get("catalogId")
        surface.catalog_id = catalog if isinstance(catalog, str) else BASIC_CATALOG_ID
        if "theme" in body:
            surface.theme = body["theme"]
        surface.send_data_model = body.get("sendDataModel") is True
        # v0.10 / v1.0: components and data may ride inside createSurface
        if isinstance(body.get("components"), list):
            self._updateComponents(surface, body, version)
        if "dataModel" in body:
            surface.write("/", body["dataModel"])

    def _updateComponents(self, surface: Surface, body: dict[str, Any], version: JSONValue) -> None:
        surface.rendering = True
        for comp in _identified(surface, body, "updateComponents"):
            if isinstance(comp.get("component"), dict):  # v0.8 wrapper inside v0.9: accept
                self._surfaceUpdate(surface, {"components": [comp]}, version)
                continue
            if not isinstance(comp.get("component"), str):
                surface.problems.append(
                    f"updateComponents: component {comp['id']!r} has no string type"
                )
                continue
            surface.upsert_component(dict(comp))

    def _updateDataModel(self, surface: Surface, body: dict[str, Any], version: JSONValue) -> None:
        path = body.get("path", "/")
        if not isinstance(path, str):
            surface.problems.append("updateDataModel: path must be a string")
            return
        deletes_on_null = version not in (None, "v0.9")  # v0.10 / v1.0
        if "value" not in body or (deletes_on_null and body["value"] is None):
            surface.remove(path)
        else:
            surface.write(path, body["value"])

    def _surfaceUpdate(self, surface: Surface, body: dict[str, Any], version: JSONValue) -> None:
        for entry in _identified(surface, body, "surfaceUpdate"):
            flat, inits = v08.convert_component(entry, surface.problems)
            if flat is None:
                continue
            for path, literal in inits:
                surface.write(path, literal)
            surface.upsert_component(flat)

    def _dataModelUpdate(self, surface: Surface, body: dict[str, Any], version: JSONValue) -> None:
        path = body.get("path", "/")
        if not isinstance(path, str):
            surface.problems.append("dataModelUpdate: path must be a string")
            return
        value = v08.contents_to_json(body.get("contents"), surface.problems)
        surface.write(path, value)

    def _beginRendering(self, surface: Surface, body: dict[str, Any], version: JSONValue) -> None:
        root = body.get("root")
        if not isinstance(root, str):
            surface.problems.append("beginRendering: root must be a string")
            return
        surface.root = root
        surface.rendering = True
        catalog = body.get("catalogId")
        if isinstance(catalog, str):
            surface.catalog_id = catalog
        if "styles" in body:
            surface.theme = body["styles"]
