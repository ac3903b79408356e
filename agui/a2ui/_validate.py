"""Validate one A2UI message against its version's schema and a catalog's functions.

:func:`validate` decodes a message with the generated types of its version (structure, closed
objects, member counts: ``agui_generated.a2ui_v09`` / ``a2ui_v09_1`` / ``a2ui_v10``), then
checks every function call in it against the catalog's function rules: the call names a
function of the catalog; its ``args`` and ``returnType`` are what that function states; and a
call's result fits where it stands (a check's ``condition`` needs a boolean, a ``Text.text`` a
string). The default catalog is the basic catalog as our schemas state it
(``BASIC_CATALOG_FUNCTIONS``, generated); pass ``catalog=`` a catalog document
(``{"catalogId", "functions": {name: JSON Schema of a call}}``) to use another one.

The function rules are JSON Schema; the keywords a catalog states are checked: ``type``,
``const``, ``enum``, ``properties``, ``required``, ``additionalProperties``/
``unevaluatedProperties`` false (closed at that level), ``anyOf``/``oneOf``/``allOf``,
``minimum``/``maximum``, ``minItems``/``maxItems``, ``items``, ``minLength``/``maxLength``,
``format: uri`` and ``$ref`` to the dynamic types (``DynamicString``, ``DynamicNumber``,
``DynamicBoolean``, ``DynamicStringList``, ``DynamicValue``: a literal of the type, a
``{path}`` binding, or a nested call checked the same way). Other keywords and other
references are not checked. Nothing is raised but :class:`A2uiValidationError`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from types import ModuleType
from typing import Any, Literal, cast

import msgspec
from agui_generated import a2ui_v09, a2ui_v09_1, a2ui_v10
from msgspec import UNSET, Struct
from msgspec import inspect as mi

from agui.errors import DecodeError

__all__ = ["A2uiValidationError", "FunctionCatalog", "validate"]

#: ``version`` member (or a folder-style name) -> the generated module that reads it.
MODULES: dict[str, ModuleType] = {
    "v0.9": a2ui_v09,
    "v0.9.1": a2ui_v09_1,
    "v0.10": a2ui_v10,
    "v1.0": a2ui_v10,
}

#: Deepest nesting of function calls inside one another that is checked.
MAX_CALL_DEPTH = 64

#: A dynamic type's name -> the result type a call standing in for it must return.
DYNAMIC_RESULTS: dict[str, str | None] = {
    "DynamicString": "string",
    "DynamicNumber": "number",
    "DynamicBoolean": "boolean",
    "DynamicStringList": "array",
    "DynamicValue": None,
}

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")
_CALL_MEMBERS = ("call", "args", "returnType", "callableFrom", "catalogId")


class A2uiValidationError(DecodeError):
    """An A2UI message that breaks a rule of its schema or catalog.

    ``rule`` names the rule (a JSON Schema keyword such as ``required``, ``returnType``,
    ``catalog`` for a function the catalog lacks, ``schema`` for the generated types'
    verdict); ``path`` is where (``$.updateComponents.components[0].checks[0].condition``).
    """

    def __init__(self, message: str, rule: str, path: str) -> None:
        super().__init__(f"{message} ({rule})", path=path)
        self.rule = rule


def _type_ok(value: object, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "array":
        return isinstance(value, list)
    if name == "object":
        return isinstance(value, dict)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return name == "number" or (name == "integer" and float(value).is_integer())


def _member(node: object, key: str) -> object:
    """``node[key]`` when ``node`` is a JSON object holding it, else None."""
    return cast("dict[str, object]", node).get(key) if isinstance(node, dict) else None


def _type_name(value: object) -> str:
    return type(value).__name__


def _literal_ok(value: object, kind: str) -> bool:
    """Whether ``value`` is a literal of the ``Dynamic*`` ``kind``: one of its result type
    (:data:`DYNAMIC_RESULTS`), a list of strings, or for ``DynamicValue`` any but null."""
    if kind == "DynamicStringList":
        items = cast("list[object]", value) if isinstance(value, list) else None
        return items is not None and all(isinstance(item, str) for item in items)
    name = DYNAMIC_RESULTS.get(kind)
    if name is None:
        return isinstance(value, str | bool | int | float | list)
    return _type_ok(value, name)


_ITEM_BOUNDS = ("minItems", "needs at least {} item(s)", "maxItems", "allows at most {} item(s)")
_LENGTH_BOUNDS = ("minLength", "shorter than {}", "maxLength", "longer than {}")


def _check_size(
    size: int, schema: Mapping[str, Any], path: str, bounds: tuple[str, str, str, str]
) -> None:
    """Refuse a ``size`` under the schema's minimum or over its maximum; ``bounds`` names
    the two keywords (``minItems``, ``maxItems`` ...), each with its message."""
    low_keyword, too_small, high_keyword, too_large = bounds
    low: object = schema.get(low_keyword)
    if isinstance(low, int) and size < low:
        raise A2uiValidationError(too_small.format(low), low_keyword, path)
    high: object = schema.get(high_keyword)
    if isinstance(high, int) and size > high:
        raise A2uiValidationError(too_large.format(high), high_keyword, path)


class FunctionCatalog:
    """The functions one catalog defines: name -> JSON Schema of a call ``{call, args,
    returnType, ...}``. :meth:`check` raises :class:`A2uiValidationError` for a call that
    breaks them."""

    def __init__(self, functions: Mapping[str, Any], catalog_id: str | None = None) -> None:
        self.functions: dict[str, dict[str, Any]] = {
            name: cast("dict[str, Any]", body)
            for name, body in functions.items()
            if isinstance(body, dict)
        }
        self.catalog_id = catalog_id

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> FunctionCatalog:
        """A catalog document (``{"catalogId": ..., "functions": {...}}``) as a catalog.

        Raises A2uiValidationError (rule ``catalog``) when ``functions`` is not an object.
        """
        functions: object = document.get("functions", {})
        if not isinstance(functions, dict):
            raise A2uiValidationError("a catalog's functions must be an object", "catalog", "$")
        catalog_id: object = document.get("catalogId")
        return cls(
            cast("dict[str, Any]", functions),
            catalog_id if isinstance(catalog_id, str) else None,
        )

    def check(self, call: Mapping[str, Any], expect: str | None, path: str, depth: int = 0) -> None:
        """Check one call (its wire members) standing where a ``expect`` result is needed
        (``None``: any). Raises A2uiValidationError naming the rule and path."""
        if depth > MAX_CALL_DEPTH:
            raise A2uiValidationError(
                f"function calls nest deeper than {MAX_CALL_DEPTH}", "depth", path
            )
        name: object = call.get("call")
        rule = self.functions.get(name) if isinstance(name, str) else None
        if rule is None:
            where = f"catalog {self.catalog_id}" if self.catalog_id else "the catalog"
            raise A2uiValidationError(f"{name!r} is not a function of {where}", "catalog", path)
        body = {key: value for key, value in call.items() if key != "catalogId"}
        self._match(body, rule, path, depth)
        stated: object = call.get("returnType")
        returns = _member(_member(_member(rule, "properties"), "returnType"), "const")
        result: object = stated if isinstance(stated, str) else returns
        if expect is not None and isinstance(result, str) and result not in (expect, "any"):
            raise A2uiValidationError(
                f"{name} returns {result} where a {expect} is needed", "returnType", path
            )

    def _dynamic(self, value: object, kind: str, path: str, depth: int) -> None:
        label = _type_name(value)
        if isinstance(value, dict):
            node = cast("dict[str, Any]", value)
            if "call" in node:
                self.check(node, DYNAMIC_RESULTS[kind], path, depth + 1)
                return
            if set(node) == {"path"} and isinstance(node["path"], str):
                return
        elif _literal_ok(value, kind):
            return
        raise A2uiValidationError(
            f"{label} is not a {kind} (a literal, a binding or a call)",
            "type",
            path,
        )

    def _match(self, value: object, schema: Mapping[str, Any], path: str, depth: int) -> None:
        """Check ``value`` against one JSON Schema node (the keywords the module doc lists)."""
        ref: object = schema.get("$ref")
        if isinstance(ref, str):
            kind = ref.rsplit("/", 1)[-1]
            if kind in DYNAMIC_RESULTS:
                self._dynamic(value, kind, path, depth)
        if "const" in schema and value != schema["const"]:
            raise A2uiValidationError(f"must be {schema['const']!r}", "const", path)
        enum: object = schema.get("enum")
        if isinstance(enum, list) and value not in cast("list[object]", enum):
            raise A2uiValidationError(f"{value!r} is not one of {enum}", "enum", path)
        kinds: object = schema.get("type")
        if isinstance(kinds, str | list):
            names = [kinds] if isinstance(kinds, str) else cast("list[str]", kinds)
            if not any(_type_ok(value, name) for name in names):
                raise A2uiValidationError(
                    f"{_type_name(value)} is not {' or '.join(names)}", "type", path
                )
        self._combinators(value, schema, path, depth)
        if isinstance(value, dict):
            self._object(cast("dict[str, Any]", value), schema, path, depth)
        elif isinstance(value, list):
            self._array(cast("list[object]", value), schema, path, depth)
        elif isinstance(value, str):
            self._string(value, schema, path)
        elif _type_ok(value, "number"):
            number = cast("float", value)
            low: object = schema.get("minimum")
            if isinstance(low, int | float) and number < low:
                raise A2uiValidationError(f"{number} is below {low}", "minimum", path)
            high: object = schema.get("maximum")
            if isinstance(high, int | float) and number > high:
                raise A2uiValidationError(f"{number} is above {high}", "maximum", path)

    def _combinators(self, value: object, schema: Mapping[str, Any], path: str, depth: int) -> None:
        for branch in cast("list[Any]", schema.get("allOf") or []):
            if isinstance(branch, dict):
                self._match(value, cast("dict[str, Any]", branch), path, depth)
        for keyword in ("anyOf", "oneOf"):
            branches = [
                cast("dict[str, Any]", b)
                for b in cast("list[Any]", schema.get(keyword) or [])
                if isinstance(b, dict)
            ]
            if not branches:
                continue
            errors: list[A2uiValidationError] = []
            for branch in branches:
                try:
                    self._match(value, branch, path, depth)
                except A2uiValidationError as exc:
                    errors.append(exc)
            passed = len(branches) - len(errors)
            if passed == 0 or (keyword == "oneOf" and passed > 1):
                wanted = [
                    "/".join(cast("list[str]", b.get("required", []))) or "a branch"
                    for b in branches
                ]
                raise A2uiValidationError(
                    f"needs {'exactly' if keyword == 'oneOf' else 'at least'} one of "
                    f"{', '.join(wanted)}",
                    keyword,
                    path,
                )

    def _object(
        self, value: dict[str, Any], schema: Mapping[str, Any], path: str, depth: int
    ) -> None:
        missing = [
            name for name in cast("list[str]", schema.get("required") or []) if name not in value
        ]
        if missing:
            raise A2uiValidationError(f"missing {', '.join(missing)}", "required", path)
        properties = cast("dict[str, Any]", schema.get("properties") or {})
        for keyword in ("additionalProperties", "unevaluatedProperties"):
            if schema.get(keyword) is False:
                extra = [name for name in value if name not in properties]
                if extra:
                    raise A2uiValidationError(
                        f"unexpected member(s) {', '.join(extra)}", keyword, path
                    )
        for name, sub in properties.items():
            if name in value and isinstance(sub, dict):
                self._match(value[name], cast("dict[str, Any]", sub), f"{path}.{name}", depth)

    def _array(self, value: list[object], schema: Mapping[str, Any], path: str, depth: int) -> None:
        _check_size(len(value), schema, path, _ITEM_BOUNDS)
        items: object = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                self._match(item, cast("dict[str, Any]", items), f"{path}[{index}]", depth)

    def _string(self, value: str, schema: Mapping[str, Any], path: str) -> None:
        _check_size(len(value), schema, path, _LENGTH_BOUNDS)
        if schema.get("format") == "uri" and not _URI.match(value):
            raise A2uiValidationError(f"{value!r} is not an absolute URI", "format", path)


# -- finding the calls in a decoded message ---------------------------------------------


def _unwrap(t: mi.Type) -> mi.Type:
    while isinstance(t, mi.Metadata):
        t = t.type
    return t


def _members(t: mi.Type) -> tuple[mi.Type, ...]:
    t = _unwrap(t)
    return tuple(_unwrap(m) for m in t.types) if isinstance(t, mi.UnionType) else (t,)


#: The wire members a struct carrying a call may have (a call, a binding-or-call, the flat
#: form of a check); a struct with others (a function response) only names a function.
_CALL_CARRIER = frozenset((*_CALL_MEMBERS, "path", "condition", "message"))


@functools.cache
def _carries_call(cls: type[Any]) -> bool:
    names = frozenset(cast("tuple[str, ...]", cls.__struct_encode_fields__))
    return "call" in names and names <= _CALL_CARRIER


def _result_kind(t: mi.Type) -> str | None:
    """The result a call must return where a value of type ``t`` stands: the one literal type
    of a dynamic union (``str | DynamicRef`` -> string); None for any or for no call slot."""
    members = _members(t)
    if not any(isinstance(m, mi.StructType) and _carries_call(m.cls) for m in members):
        return None
    kinds: set[str] = set()
    for member in members:
        if isinstance(member, mi.StrType | mi.LiteralType):
            kinds.add("string")
        elif isinstance(member, mi.BoolType):
            kinds.add("boolean")
        elif isinstance(member, mi.FloatType | mi.IntType):
            kinds.add("number")
        elif isinstance(member, mi.ListType):
            kinds.add("array")
        elif isinstance(member, mi.AnyType | mi.DictType):
            kinds.add("any")
    return kinds.pop() if len(kinds) == 1 else None


@functools.cache
def _fields(cls: type[Any]) -> tuple[tuple[str, str, mi.Type], ...]:
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    return tuple((f.name, f.encode_name, f.type) for f in info.fields)


def _item_type(t: mi.Type, container: type[Any]) -> mi.Type:
    for member in _members(t):
        if container is list and isinstance(member, mi.ListType):
            return member.item_type
        if container is dict and isinstance(member, mi.DictType):
            return member.value_type
    return mi.AnyType()


def _calls(
    value: object, t: mi.Type, path: str, out: list[tuple[dict[str, Any], str | None, str]]
) -> None:
    """Append ``(call members, result needed, path)`` for every call inside ``value``."""
    if isinstance(value, Struct):
        fields = _fields(type(value))
        slots = {name: (wire, ft) for name, wire, ft in fields}
        if _carries_call(type(value)) and getattr(value, "call", UNSET) is not UNSET:
            members = cast("dict[str, Any]", msgspec.to_builtins(value))
            call = {key: members[key] for key in _CALL_MEMBERS if key in members}
            condition = slots.get("condition")
            expect = _result_kind(condition[1]) if condition else _result_kind(t)
            out.append((call, expect, path))
            return
        for name, wire, ft in fields:
            member = getattr(value, name)
            if member is not UNSET:
                _calls(member, ft, f"{path}.{wire}", out)
    elif isinstance(_unwrap(t), mi.AnyType):
        return  # free JSON (a data model value, call arguments): no typed call slot inside
    elif isinstance(value, list):
        item = _item_type(t, list)
        for index, element in enumerate(cast("list[object]", value)):
            _calls(element, item, f"{path}[{index}]", out)
    elif isinstance(value, dict):
        item = _item_type(t, dict)
        for key, element in cast("dict[str, object]", value).items():
            _calls(element, item, f"{path}.{key}", out)


def _module(data: Mapping[str, Any], version: str | None) -> ModuleType:
    name: object = version if version is not None else data.get("version")
    module = MODULES.get(name.replace("_", ".")) if isinstance(name, str) else None
    if module is None:
        raise A2uiValidationError(
            f"no A2UI schema for version {name!r} (known: {', '.join(MODULES)})",
            "version",
            "$.version",
        )
    return module


def validate(
    message: bytes | str | Mapping[str, Any],
    *,
    version: str | None = None,
    direction: Literal["agent", "client"] = "agent",
    catalog: Mapping[str, Any] | FunctionCatalog | None = None,
) -> Struct:
    """Decode one A2UI message (``direction`` ``agent``: AgentMessage, ``client``:
    ClientMessage) and check its function calls against ``catalog`` (a catalog document or
    :class:`FunctionCatalog`; default the version's basic catalog as our schema states it).

    ``version`` picks the schema (``v0.9``, ``v0.9.1``, ``v0.10``/``v1.0``, or ``v0_9_1``);
    by default the message's own ``version``. Returns the decoded message struct. Raises
    A2uiValidationError naming the rule and the path; never anything else.
    """
    try:
        raw = message if isinstance(message, bytes | str) else json.dumps(message)
        data: object = json.loads(raw)
    except (TypeError, ValueError) as exc:
        raise A2uiValidationError(f"not JSON: {exc}", "json", "$") from None
    except RecursionError:
        raise A2uiValidationError("JSON nests too deeply", "json", "$") from None
    if not isinstance(data, dict):
        raise A2uiValidationError("an A2UI message is a JSON object", "type", "$")
    body = cast("dict[str, Any]", data)
    module = _module(body, version)
    root = module.AgentMessage if direction == "agent" else module.ClientMessage
    try:
        decoded = msgspec.json.decode(raw, type=root)
    except msgspec.ValidationError as exc:
        text = str(exc)
        where = text.rsplit(" - at `", 1)
        path = where[1].rstrip("`") if len(where) == 2 else "$"
        raise A2uiValidationError(where[0], "schema", path) from None
    if isinstance(catalog, FunctionCatalog):
        functions = catalog
    elif catalog is not None:
        functions = FunctionCatalog.from_document(catalog)
    else:
        functions = _basic_catalog(module)
    found: list[tuple[dict[str, Any], str | None, str]] = []
    _calls(decoded, mi.type_info(root), "$", found)
    for call, expect, path in found:
        functions.check(call, expect, path)
    return cast("Struct", decoded)


@functools.cache
def _basic_catalog(module: ModuleType) -> FunctionCatalog:
    functions = cast("dict[str, Any]", getattr(module, "BASIC_CATALOG_FUNCTIONS", {}))
    return FunctionCatalog(functions, "basic")
