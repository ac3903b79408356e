"""``agui.a2ui._validate``: the generated types plus every function call checked against a catalog.

The basic catalog's rules are our schemas' ``functions``, generated into the modules as
``BASIC_CATALOG_FUNCTIONS`` (tools/codegen_a2ui.py); a catalog document given at run time
replaces them. The specification's own cases run in tests/test_a2ui_strict.py.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from agui_generated import a2ui_v09, a2ui_v09_1, a2ui_v10
from support import ROOT

from agui.a2ui import A2uiValidationError, FunctionCatalog, validate
from agui.a2ui._validate import MAX_CALL_DEPTH
from agui.errors import DecodeError

sys.path.insert(0, str(ROOT / "tools"))
import codegen_a2ui


def text_message(text: Any, version: str = "v0.9") -> dict[str, Any]:
    component = {"id": "t", "component": "Text", "text": text}
    return {"version": version, "updateComponents": {"surfaceId": "s", "components": [component]}}


def checked_field(condition: Any) -> dict[str, Any]:
    field = {"id": "f", "component": "TextField", "label": "L"}
    field["checks"] = [{"condition": condition, "message": "m"}]
    return {"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [field]}}


def refusal(message: Any, **options: Any) -> A2uiValidationError:
    with pytest.raises(A2uiValidationError) as caught:
        validate(message, **options)
    return caught.value


@pytest.mark.parametrize(
    ("module", "schema"),
    [(a2ui_v09, "a2ui_v09"), (a2ui_v09_1, "a2ui_v09_1"), (a2ui_v10, "a2ui_v10")],
)
def test_the_generated_basic_catalog_functions_are_the_schemas_functions(module, schema):
    doc = json.loads((ROOT / "schema" / f"{schema}.schema.json").read_text(encoding="utf-8"))
    assert module.BASIC_CATALOG_FUNCTIONS == doc["functions"]
    assert {"required", "regex", "formatString", "openUrl", "and"} <= set(doc["functions"])


def test_codegen_refuses_a_function_whose_call_constant_is_not_its_name():
    wrong = {"functions": {"a": {"type": "object", "properties": {"call": {"const": "b"}}}}}
    with pytest.raises(ValueError, match="call: {const: 'a'}"):
        codegen_a2ui.catalog_functions(wrong)
    with pytest.raises(ValueError, match="object of function schemas"):
        codegen_a2ui.catalog_functions({"functions": []})


def test_codegen_appends_the_functions_as_a_literal_only_when_the_schema_has_some():
    assert codegen_a2ui.add_function_catalog("x = 1\n", {"$defs": {}}) == "x = 1\n"
    rule = {"type": "object", "properties": {"call": {"const": "f"}}, "required": ["call"]}
    text = codegen_a2ui.add_function_catalog("from typing import Any\n", {"functions": {"f": rule}})
    namespace: dict[str, Any] = {}
    exec(text, namespace)
    assert namespace[codegen_a2ui.FUNCTIONS_CONSTANT] == {"f": rule}


def test_a_call_to_a_function_the_basic_catalog_lacks_is_refused_naming_the_catalog():
    exc = refusal(text_message({"call": "shout", "args": {"value": "x"}}))
    assert exc.rule == "catalog" and "'shout' is not a function of catalog basic" in str(exc)
    assert exc.path == "$.updateComponents.components[0].text"
    assert isinstance(exc, DecodeError)


def test_a_call_whose_function_returns_a_string_cannot_stand_where_a_boolean_is_needed():
    # stricter than the specification's schema on purpose: with no stated returnType the
    # function's own (formatString returns a string) is what must fit the check's condition
    exc = refusal(checked_field({"call": "formatString", "args": {"value": "hi"}}))
    assert exc.rule == "returnType" and "formatString returns string where a boolean" in str(exc)
    assert exc.path.endswith(".checks[0].condition")
    validate(checked_field({"call": "email", "args": {"value": {"path": "/e"}}}))
    assert refusal(text_message({"call": "not", "args": {"value": True}})).rule == "returnType"
    validate(text_message({"call": "formatNumber", "args": {"value": 2, "decimals": 1}}))


def test_a_nested_call_is_checked_against_the_catalog_with_its_own_path():
    inner = {"call": "regex", "args": {"value": {"path": "/v"}}}
    condition = {"call": "and", "args": {"values": [True, inner]}}
    exc = refusal(checked_field(condition))
    assert exc.rule == "required" and "missing pattern" in str(exc)
    assert exc.path.endswith(".checks[0].condition.args.values[1].args")
    inner["args"]["pattern"] = "^a$"
    validate(checked_field(condition))
    wrong_kind = {
        "call": "and",
        "args": {"values": [True, {"call": "formatString", "args": {"value": "x"}}]},
    }
    assert refusal(checked_field(wrong_kind)).rule == "returnType"


def test_argument_types_bounds_and_formats_come_from_the_function_rules():
    def length(**args: Any) -> dict[str, Any]:
        return checked_field({"call": "length", "args": {"value": "abc", **args}})

    assert refusal(length()).rule == "anyOf"
    assert refusal(length(min=-1)).rule == "minimum"
    assert refusal(length(min="1")).rule == "type"
    assert refusal(length(min=1, extra=2)).rule == "unevaluatedProperties"
    validate(length(min=1, max=5))
    button = {"id": "b", "component": "Button", "child": "t"}
    button["action"] = {"functionCall": {"call": "openUrl", "args": {"url": "not a uri"}}}
    label = {"id": "t", "component": "Text", "text": "go"}
    message = {
        "version": "v0.9",
        "updateComponents": {"surfaceId": "s", "components": [button, label]},
    }
    exc = refusal(message)
    assert exc.rule == "format" and exc.path.endswith(".action.functionCall.args.url")
    button["action"]["functionCall"]["args"]["url"] = "https://example.com/x"
    validate(message)


def test_a_catalog_document_given_at_run_time_replaces_the_basic_catalog():
    capitalize = {
        "type": "object",
        "properties": {
            "call": {"const": "capitalize"},
            "args": {
                "type": "object",
                "properties": {"value": {"$ref": "common_types.json#/$defs/DynamicString"}},
                "required": ["value"],
                "additionalProperties": False,
            },
            "returnType": {"const": "string"},
        },
        "required": ["call", "args"],
        "unevaluatedProperties": False,
    }
    catalog = {"catalogId": "https://example.com/mine", "functions": {"capitalize": capitalize}}
    message = text_message({"call": "capitalize", "args": {"value": {"path": "/n"}}})
    validate(message, catalog=catalog)
    validate(message, catalog=FunctionCatalog.from_document(catalog))
    assert refusal(message).rule == "catalog"  # the basic catalog has no capitalize
    bad = text_message({"call": "capitalize", "args": {"value": 3}})
    assert refusal(bad, catalog=catalog).rule == "type"
    other = refusal(text_message({"call": "email", "args": {"value": "a"}}), catalog=catalog)
    assert "catalog https://example.com/mine" in str(other)


def test_a_function_response_only_names_its_function_and_is_not_checked_as_a_call():
    response = {"functionCallId": "c", "call": "anything", "value": {"k": 1}}
    validate({"version": "v0.10", "functionResponse": response}, direction="client")


def test_the_version_picks_the_schema_and_an_unknown_one_is_refused():
    message = text_message({"call": "formatString", "args": {"value": "x"}})
    assert isinstance(validate(message), a2ui_v09.AgentMessage)
    assert isinstance(validate(message, version="v0_9_1"), a2ui_v09_1.AgentMessage)
    assert isinstance(validate(text_message("x", "v1.0")), a2ui_v10.AgentMessage)
    assert refusal(text_message("x", "v2.0")).rule == "version"


def test_bad_input_is_an_a2ui_validation_error_and_nothing_else():
    assert refusal(b"{not json").rule == "json"
    assert refusal("[1, 2]").rule == "type"
    assert refusal({"version": "v0.9"}).rule == "schema"
    assert "(minProperties)" in str(refusal({"version": "v0.9"}))
    assert refusal(text_message("x"), catalog={"functions": []}).rule == "catalog"
    deep: Any = True
    for _ in range(MAX_CALL_DEPTH + 5):
        deep = {"call": "not", "args": {"value": deep}}
    assert refusal(checked_field(deep)).rule == "depth"


def test_json_nested_too_deeply_is_refused_and_a_deep_data_model_value_is_not_walked():
    assert refusal("[" * 100_000).rule == "json"
    deep = "[" * 900 + "]" * 900
    model = f'{{"version":"v0.9","updateDataModel":{{"surfaceId":"s","value":{deep}}}}}'
    assert isinstance(validate(model), a2ui_v09.AgentMessage)


@pytest.mark.parametrize(
    ("kind", "accepted", "refused"),
    [
        ("DynamicString", ["x", ""], [3, True, None, ["x"]]),
        ("DynamicBoolean", [True, False], [1, "true", None]),
        ("DynamicNumber", [3, 2.5], [True, "3", None, [1]]),
        ("DynamicStringList", [["a", "b"], []], [["a", 1], "a", None]),
        ("DynamicValue", ["x", 1, 2.5, False, [1, "a"]], [None]),
    ],
)
def test_a_literal_argument_is_checked_against_the_type_its_dynamic_kind_names(
    kind: str, accepted: list[Any], refused: list[Any]
) -> None:
    rule = {
        "type": "object",
        "properties": {
            "call": {"const": "f"},
            "args": {
                "type": "object",
                "properties": {"value": {"$ref": f"common_types.json#/$defs/{kind}"}},
            },
        },
    }
    catalog = FunctionCatalog({"f": rule})
    for value in accepted:
        catalog.check({"call": "f", "args": {"value": value}}, None, "$")
    for value in refused:
        with pytest.raises(A2uiValidationError) as caught:
            catalog.check({"call": "f", "args": {"value": value}}, None, "$")
        assert caught.value.rule == "type" and kind in str(caught.value), value


@pytest.mark.parametrize(
    ("bounds", "value", "rule", "message"),
    [
        ({"type": "array", "minItems": 2}, [1], "minItems", "needs at least 2 item(s)"),
        ({"type": "array", "maxItems": 1}, [1, 2], "maxItems", "allows at most 1 item(s)"),
        ({"type": "string", "minLength": 2}, "a", "minLength", "shorter than 2"),
        ({"type": "string", "maxLength": 1}, "ab", "maxLength", "longer than 1"),
    ],
)
def test_an_argument_outside_its_size_bounds_is_refused_naming_the_bound(
    bounds: dict[str, Any], value: Any, rule: str, message: str
) -> None:
    catalog = FunctionCatalog(
        {"f": {"type": "object", "properties": {"args": {"properties": {"value": bounds}}}}}
    )
    with pytest.raises(A2uiValidationError) as caught:
        catalog.check({"call": "f", "args": {"value": value}}, None, "$")
    assert (caught.value.rule, caught.value.path) == (rule, "$.args.value")
    assert str(caught.value).startswith(message)
    catalog.check(
        {"call": "f", "args": {"value": value[:1] if rule[:3] == "max" else value * 2}}, None, "$"
    )
