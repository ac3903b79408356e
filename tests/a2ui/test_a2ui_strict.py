"""The generated A2UI types enforce what their schemas state, "exactly one of" included.

Member counts (``minProperties``/``maxProperties``) are checked after decoding by a
``__post_init__`` that codegen writes from the schema (tools/codegen_a2ui.py); the rest is in
the msgspec types. The specification's own test cases (../shared, skipped when absent) are
the verdicts ``agui.a2ui._validate`` (these types plus the catalog's function rules) agrees with,
every one of them.
"""

from __future__ import annotations

import json
import re
import sys
from types import ModuleType
from typing import Any

import msgspec
import pytest
from agui_generated import a2ui_v08, a2ui_v09, a2ui_v09_1, a2ui_v10
from support import ROOT, SHARED

sys.path.insert(0, str(ROOT / "tools"))
import codegen_a2ui

from agui.a2ui._validate import A2uiValidationError, validate


def refusal(module: ModuleType, type_name: str, data: Any) -> str:
    """The ValidationError text for ``data`` decoded as ``module.type_name`` ('' if accepted)."""
    try:
        msgspec.json.decode(json.dumps(data), type=getattr(module, type_name))
    except msgspec.ValidationError as exc:
        return str(exc)
    return ""


SURFACE = {"surfaceId": "s", "catalogId": "c"}


@pytest.mark.parametrize("module", [a2ui_v09, a2ui_v09_1])
def test_a_v09_message_with_only_a_version_is_refused_naming_min_properties(module):
    assert "(minProperties)" in refusal(module, "AgentMessage", {"version": "v0.9"})
    assert "(minProperties)" in refusal(module, "ClientMessage", {"version": "v0.9"})


def test_a_v10_message_with_only_a_version_is_refused_naming_min_properties():
    assert "(minProperties)" in refusal(a2ui_v10, "AgentMessage", {"version": "v1.0"})
    assert "(minProperties)" in refusal(a2ui_v10, "ClientMessage", {"version": "v1.0"})


@pytest.mark.parametrize("module", [a2ui_v09, a2ui_v09_1])
def test_a_message_carrying_two_operations_is_refused_naming_max_properties(module):
    both = {"version": "v0.9", "createSurface": SURFACE, "deleteSurface": {"surfaceId": "s"}}
    text = refusal(module, "AgentMessage", both)
    assert "(maxProperties)" in text and "createSurface, deleteSurface" in text
    assert refusal(module, "AgentMessage", {"version": "v0.9", "createSurface": SURFACE}) == ""


@pytest.mark.parametrize("module", [a2ui_v09, a2ui_v09_1, a2ui_v10])
def test_an_action_needs_exactly_one_of_event_or_function_call_and_the_error_has_its_path(
    module,
):
    comp = {"id": "b", "component": "Button", "child": "t"}
    version = "v1.0" if module is a2ui_v10 else "v0.9"

    def message(action: dict[str, Any]) -> dict[str, Any]:
        body = {"surfaceId": "s", "components": [{**comp, "action": action}]}
        return {"version": version, "updateComponents": body}

    neither = refusal(module, "AgentMessage", message({}))
    assert "Action needs at least 1" in neither and "(minProperties)" in neither
    assert "$.updateComponents.components[0].action" in neither
    both = refusal(
        module, "AgentMessage", message({"event": {"name": "go"}, "functionCall": {"call": "f"}})
    )
    assert "(maxProperties)" in both and "event, functionCall" in both
    assert refusal(module, "AgentMessage", message({"event": {"name": "go"}})) == ""


def test_v08_children_and_component_wrapper_hold_exactly_one_kind():
    assert "(minProperties)" in refusal(a2ui_v08, "Children", {})
    two = {"explicitList": ["a"], "template": {"componentId": "a", "dataBinding": "/x"}}
    assert "(maxProperties)" in refusal(a2ui_v08, "Children", two)
    text_and_image = {
        "Text": {"text": {"literalString": "x"}},
        "Image": {"url": {"literalString": "u"}},
    }
    assert "(maxProperties)" in refusal(a2ui_v08, "ComponentWrapper", text_and_image)
    # the wrapper is open (other catalogs' types are further keys): one custom type decodes
    assert refusal(a2ui_v08, "ComponentWrapper", {"Custom": {"x": 1}}) == ""
    assert "(maxProperties)" in refusal(
        a2ui_v08,
        "AgentMessage",
        {"deleteSurface": {"surfaceId": "s"}, "beginRendering": {"surfaceId": "s", "root": "r"}},
    )


def test_constructing_a_struct_that_breaks_a_member_count_raises_value_error():
    with pytest.raises(ValueError, match="maxProperties"):
        a2ui_v09.Action(
            event=a2ui_v09.ActionEvent(name="a"), function_call=a2ui_v09.FunctionCall(call="f")
        )
    assert a2ui_v09.Action(event=a2ui_v09.ActionEvent(name="a")).function_call is msgspec.UNSET


def test_member_count_rules_come_from_the_schema_and_open_objects_keep_only_the_maximum():
    schema = {
        "$defs": {
            "Closed": {
                "type": "object",
                "minProperties": 1,
                "maxProperties": 1,
                "additionalProperties": False,
            },
            "Open": {"type": "object", "minProperties": 1, "maxProperties": 2},
            "OpenMinOnly": {"type": "object", "minProperties": 1},
            "Plain": {"type": "object", "additionalProperties": False},
            "Scalar": {"type": "string", "minLength": 1},
        }
    }
    assert codegen_a2ui.member_count_rules(schema) == {"Closed": (1, 1), "Open": (None, 2)}
    for name, schema_path in (
        ("a2ui_v09", "a2ui_v09.schema.json"),
        ("a2ui_v10", "a2ui_v10.schema.json"),
    ):
        defs = json.loads((ROOT / "schema" / schema_path).read_text(encoding="utf-8"))
        rules = codegen_a2ui.member_count_rules(defs)
        assert {"AgentMessage", "ClientMessage", "Action"} <= set(rules), name


def test_exactly_one_of_and_dependent_required_come_from_the_schema_and_leave_the_generator():
    body = {
        "type": "object",
        "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
        "dependentRequired": {"c": ["a"]},
    }
    mixed = {"type": "object", "oneOf": [{"required": ["a"]}, {"type": "string"}]}
    schema = {"$defs": {"Linked": body, "Mixed": mixed}}
    assert codegen_a2ui.member_rules(schema) == {
        "Linked": (None, None, ("a", "b"), (("c", ("a",)),))
    }
    stripped = codegen_a2ui.without_member_keywords(schema)["$defs"]
    assert stripped["Linked"] == {"type": "object"} and stripped["Mixed"] == mixed
    assert schema["$defs"]["Linked"] == body  # the input is not modified


def test_a_v10_error_concerns_exactly_one_of_a_surface_or_a_function_call():
    base = {"code": "FUNCTION_FAILED", "message": "m"}
    for extra in ({}, {"surfaceId": "s", "functionCallId": "c"}):
        text = refusal(a2ui_v10, "ClientMessage", {"version": "v1.0", "error": {**base, **extra}})
        assert "exactly one of surfaceId, functionCallId" in text and "(oneOf)" in text
        assert "$.error" in text
    for extra in ({"surfaceId": "s"}, {"functionCallId": "c"}):
        assert (
            refusal(a2ui_v10, "ClientMessage", {"version": "v1.0", "error": {**base, **extra}})
            == ""
        )


def test_a_v010_call_function_and_its_function_call_id_come_together():
    call = {
        "call": "openUrl",
        "args": {"url": "u"},
        "returnType": "void",
        "callableFrom": "remoteOnly",
    }
    alone = refusal(a2ui_v10, "AgentMessage", {"version": "v0.10", "callFunction": call})
    assert "callFunction needs functionCallId (dependentRequired)" in alone
    bare = refusal(a2ui_v10, "AgentMessage", {"version": "v0.10", "functionCallId": "c"})
    assert "functionCallId needs callFunction (dependentRequired)" in bare
    both = {"version": "v0.10", "callFunction": call, "functionCallId": "c"}
    assert refusal(a2ui_v10, "AgentMessage", both) == ""


def test_a_v010_function_response_carries_the_call_its_id_and_a_value():
    ok = {"functionCallId": "c", "call": "f", "value": None}
    assert refusal(a2ui_v10, "ClientMessage", {"version": "v0.10", "functionResponse": ok}) == ""
    for drop in ("functionCallId", "call", "value"):
        body = {k: v for k, v in ok.items() if k != drop}
        text = refusal(a2ui_v10, "ClientMessage", {"version": "v0.10", "functionResponse": body})
        assert f"missing required field `{drop}`" in text


def test_a_v010_call_function_names_a_remote_callable_function_and_its_return_type():
    call = {"call": "ping", "returnType": "void", "callableFrom": "clientOrRemote"}
    message = {"version": "v0.10", "functionCallId": "c", "callFunction": call}
    assert refusal(a2ui_v10, "AgentMessage", message) == ""
    local = {**message, "callFunction": {**call, "callableFrom": "clientOnly"}}
    assert "$.callFunction.callableFrom" in refusal(a2ui_v10, "AgentMessage", local)
    for drop in ("returnType", "callableFrom"):
        body = {k: v for k, v in call.items() if k != drop}
        text = refusal(a2ui_v10, "AgentMessage", {**message, "callFunction": body})
        assert f"missing required field `{drop}`" in text


def test_add_member_count_checks_refuses_a_rule_without_a_class():
    with pytest.raises(ValueError, match="no generated class"):
        codegen_a2ui.add_member_count_checks(
            "class Other(Struct):\n    x: int\n",
            {"$defs": {"Missing": {"type": "object", "maxProperties": 1}}},
        )
    untouched = "class Other(Struct):\n    x: int\n"
    assert codegen_a2ui.add_member_count_checks(untouched, {"$defs": {}}) == untouched


# -- the A2UI specification's own test cases -------------------------------------------
CASES = SHARED / "upstream" / "a2ui" / "examples"
MODULES = {"v0_9": a2ui_v09, "v0_9_1": a2ui_v09_1, "v0_10": a2ui_v10}
ROOTS = {"server_to_client.json": "AgentMessage", "client_to_server.json": "ClientMessage"}

#: (version, file) -> the catalog document its cases are written against, when it is not the
#: basic catalog. The v0.10 remote-call cases call ``pingServer`` (only the testing catalog
#: has it) and state ``callableFrom``, which the basic catalog's functions do not declare
#: (its functions are client-only, so a basic-catalog call carrying it is refused, and the
#: valid cases could not be valid); the testing catalog declares both.
CASE_CATALOGS = {("v0_10", "call_function_message.json"): "testing_catalog.json"}


def _cases() -> list[Any]:
    params: list[Any] = []
    for version in MODULES:
        for path in sorted((CASES / version / "test" / "cases").glob("*.json")):
            spec = json.loads(path.read_text(encoding="utf-8"))
            catalog_name = CASE_CATALOGS.get((version, path.name))
            catalog = (
                json.loads((CASES / version / "test" / catalog_name).read_text(encoding="utf-8"))
                if catalog_name
                else None
            )
            for index, case in enumerate(spec["tests"]):
                params.append(
                    pytest.param(
                        version, spec["schema"], catalog, case, id=f"{version}/{path.stem}/{index}"
                    )
                )
    return params or [pytest.param(None, None, None, None, id="absent")]


PARAMS = _cases()


def test_the_specification_test_cases_are_present_for_every_version():
    if not CASES.exists():
        pytest.skip(f"reference data not available: {CASES} (clone ../shared beside the repo)")
    counts = {v: len([p for p in PARAMS if p.values[0] == v]) for v in MODULES}
    assert all(n >= 70 for n in counts.values()), counts


@pytest.mark.upstream
@pytest.mark.parametrize(("version", "schema", "catalog", "case"), PARAMS)
def test_validate_agrees_with_the_specification_test_case(version, schema, catalog, case):
    if version is None:
        pytest.skip(f"reference data not available: {CASES} (clone ../shared beside the repo)")
    direction = "agent" if ROOTS[schema] == "AgentMessage" else "client"
    try:
        validate(case["data"], version=version, direction=direction, catalog=catalog)
    except A2uiValidationError as exc:
        text = str(exc)
    else:
        text = ""
    if case["valid"]:
        assert text == "", f"{case['description']}: refused: {text}"
    else:
        assert text, f"{case['description']}: accepted"
        assert re.search(r"\(\w+\) at \$", text), text  # names the rule and where


@pytest.mark.upstream
def test_the_remote_call_cases_need_the_testing_catalog_as_the_basic_one_refuses_their_valid_ones():
    if not CASES.exists():
        pytest.skip(f"reference data not available: {CASES} (clone ../shared beside the repo)")
    path = CASES / "v0_10" / "test" / "cases" / "call_function_message.json"
    valid = [c for c in json.loads(path.read_text(encoding="utf-8"))["tests"] if c["valid"]]
    rules = set()
    for case in valid:
        with pytest.raises(A2uiValidationError) as caught:
            validate(case["data"], version="v0_10")
        rules.add(caught.value.rule)
    # openUrl carrying callableFrom (undeclared in the basic catalog) and pingServer (absent)
    assert rules == {"unevaluatedProperties", "catalog"}


#: (version folder, example folder) -> the upstream catalog its surfaces are written for
#: (under ``upstream/a2ui/<version>/catalogs``)
EXAMPLE_SURFACES = {
    ("v0_9", "catalogs/basic/examples"): "basic",
    ("v0_9", "catalogs/minimal/examples"): "minimal",
    ("v0_9_1", "catalogs/basic/examples"): "basic",
    ("v0_9_1", "catalogs/minimal/examples"): "minimal",
    ("v0_10", "surfaces/basic"): "basic",
    ("v0_10", "surfaces/minimal"): "minimal",
}


@pytest.mark.upstream
@pytest.mark.parametrize(("version", "folder"), list(EXAMPLE_SURFACES))
def test_every_example_surface_message_validates_against_its_own_catalog(version, folder):
    if not CASES.exists():
        pytest.skip(f"reference data not available: {CASES} (clone ../shared beside the repo)")
    kind = EXAMPLE_SURFACES[(version, folder)]
    catalog_path = SHARED / "upstream" / "a2ui" / version / "catalogs" / kind / "catalog.json"
    catalog = json.loads(catalog_path.read_text(encoding="utf-8")) if kind == "minimal" else None
    messages = [
        message
        for path in sorted((CASES / version / folder).glob("*.json"))
        for message in json.loads(path.read_text(encoding="utf-8"))["messages"]
    ]
    assert len(messages) >= 15
    for message in messages:
        validate(message, version=version, catalog=catalog)
    if catalog is not None:  # the minimal catalog's own function is not the basic catalog's
        calls = [m for m in messages if '"capitalize"' in json.dumps(m)]
        assert calls
        with pytest.raises(A2uiValidationError, match="'capitalize' is not a function"):
            validate(calls[0], version=version)
