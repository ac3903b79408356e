"""The A2UI v0.8 input adapter: v0.8 shapes -> our one internal (v0.9-style) model.

v0.8 differs from v0.9 in three ways that matter to a renderer:

* a component is ``{id, weight?, component: {"<Type>": {props}}}`` (a wrapper
  keyed by type) instead of the flat ``{id, component: "<Type>", ...props}``;
* bound values are ``{literalString|literalNumber|literalBoolean|literalArray, path}``
  instead of a plain literal or ``{path}``;
* some properties have other names (``usageHint`` -> ``variant``,
  ``explicitList`` / ``template.dataBinding`` child lists, ``tabItems``,
  ``entryPointChild``/``contentChild``, ``MultipleChoice`` -> ``ChoicePicker``...);
* the data model arrives as an adjacency list of ``{key, valueString|valueNumber|
  valueBoolean|valueMap}`` entries.

Everything here is a pure function over plain JSON; bad pieces are reported
through the ``problems`` list passed in and left out, never raised.
"""

from __future__ import annotations

from typing import Any

from agui._jsonvalue import JSONValue, is_json_array, is_json_object

__all__ = ["contents_to_json", "convert_bound", "convert_component"]

_LITERAL_KEYS = ("literalString", "literalNumber", "literalBoolean", "literalArray")

# per type: v0.8 property name -> v0.9 property name
_RENAMES: dict[str, dict[str, str]] = {
    "Text": {"usageHint": "variant"},
    "Image": {"altText": "description", "usageHint": "variant"},
    "Row": {"distribution": "justify", "alignment": "align"},
    "Column": {"distribution": "justify", "alignment": "align"},
    "List": {"alignment": "align"},
    "Tabs": {"tabItems": "tabs"},
    "Modal": {"entryPointChild": "trigger", "contentChild": "content"},
    "TextField": {"text": "value", "textFieldType": "variant"},
    "MultipleChoice": {"selections": "value", "variant": "displayStyle"},
    "Slider": {"minValue": "min", "maxValue": "max"},
}
_TYPE_RENAMES = {"MultipleChoice": "ChoicePicker"}


def is_bound_value(value: JSONValue) -> bool:
    """True for a v0.8 BoundValue object (a literal* key and/or a lone ``path``)."""
    return is_json_object(value) and (
        any(k in value for k in _LITERAL_KEYS) or (set(value) == {"path"})
    )


def convert_bound(value: JSONValue, inits: list[tuple[str, Any]]) -> JSONValue:
    """A v0.8 BoundValue as a v0.9 dynamic value.

    Literal only -> the literal; path only -> ``{"path": p}``; both -> the
    binding ``{"path": p}`` and ``(p, literal)`` appended to ``inits`` (the
    v0.8 rule: the literal is first written into the model at the path).
    Anything that is not a BoundValue is returned unchanged.
    """
    if not is_bound_value(value):
        return value
    literal_key = next((k for k in _LITERAL_KEYS if k in value), None)
    path = value.get("path")
    if literal_key is None:
        return {"path": path}
    literal = value[literal_key]
    if isinstance(path, str):
        inits.append((path, literal))
        return {"path": path}
    return literal


def _convert_children(value: JSONValue) -> JSONValue:
    if is_json_object(value):
        if isinstance(value.get("explicitList"), list):
            return list(value["explicitList"])
        template = value.get("template")
        if is_json_object(template):
            return {"componentId": template.get("componentId"), "path": template.get("dataBinding")}
    return value


def _convert_action(action: JSONValue, inits: list[tuple[str, Any]]) -> JSONValue:
    if not is_json_object(action) or "name" not in action:
        return action
    context: dict[str, Any] = {}
    entries = action.get("context")
    if is_json_array(entries):
        for entry in entries:
            if is_json_object(entry) and isinstance(entry.get("key"), str):
                context[entry["key"]] = convert_bound(entry.get("value"), inits)
    event: dict[str, Any] = {"name": action["name"]}
    if context:
        event["context"] = context
    return {"event": event}


def convert_component(
    entry: dict[str, Any], problems: list[str]
) -> tuple[dict[str, Any] | None, list[tuple[str, Any]]]:
    """One v0.8 ``surfaceUpdate`` entry as a flat v0.9-style component.

    Returns ``(component, inits)`` where ``inits`` lists the ``(path, literal)``
    writes implied by BoundValues carrying both; ``(None, [])`` (and a line in
    ``problems``) when the wrapper is not an object with exactly one type key.
    """
    cid = entry.get("id")
    wrapper = entry.get("component")
    if not is_json_object(wrapper) or len(wrapper) != 1:
        problems.append(f"surfaceUpdate: component {cid!r} must wrap exactly one type")
        return None, []
    ((ctype, props),) = wrapper.items()
    if not is_json_object(props):
        problems.append(f"surfaceUpdate: component {cid!r} properties must be an object")
        return None, []
    inits: list[tuple[str, Any]] = []
    renames = _RENAMES.get(ctype, {})
    flat: dict[str, Any] = {"id": cid, "component": _TYPE_RENAMES.get(ctype, ctype)}
    if "weight" in entry:
        flat["weight"] = entry["weight"]
    for key, value in props.items():
        if key == "children":
            value = _convert_children(value)
        elif key == "action":
            value = _convert_action(value, inits)
        elif key in ("tabItems", "options") and is_json_array(value):
            value = [
                {k: convert_bound(v, inits) for k, v in item.items()}
                if is_json_object(item)
                else item
                for item in value
            ]
        else:
            value = convert_bound(value, inits)
        flat[renames.get(key, key)] = value
    if ctype == "Button" and flat.pop("primary", False) is True:
        flat["variant"] = "primary"
    if ctype == "MultipleChoice" and "variant" not in flat:
        most = props.get("maxAllowedSelections")
        flat["variant"] = "mutuallyExclusive" if most == 1 else "multipleSelection"
    return flat, inits


def _entry_value(entry: dict[str, Any], problems: list[str], where: str) -> tuple[bool, Any]:
    for key in ("valueString", "valueNumber", "valueBoolean"):
        if key in entry:
            return True, entry[key]
    if "valueMap" in entry:
        return True, contents_to_json(entry["valueMap"], problems, where)
    for key in ("valueArray", "valueList"):  # not in the schema; seen in the field
        if key in entry and is_json_array(entry[key]):
            return True, list(entry[key])
    problems.append(f"{where}: entry {entry.get('key')!r} has no value* property")
    return False, None


def contents_to_json(
    contents: JSONValue, problems: list[str], where: str = "dataModelUpdate"
) -> JSONValue:
    """A v0.8 adjacency list (``[{key, value*}]``, nested through ``valueMap``) as a dict.

    Entries that are not objects with a string ``key`` and one ``value*``
    property are skipped with a line in ``problems``. A non-list input gives
    ``{}`` and a problem.
    """
    if not is_json_array(contents):
        problems.append(f"{where}: contents must be a list")
        return {}
    out: dict[str, Any] = {}
    for entry in contents:
        if not is_json_object(entry) or not isinstance(entry.get("key"), str):
            problems.append(f"{where}: skipped an entry without a string key")
            continue
        ok, value = _entry_value(entry, problems, where)
        if ok:
            out[entry["key"]] = value
    return out
