"""Our A2UI schemas (schema/a2ui_v0*.schema.json) against the upstream catalogs and messages.

Structural checks only: the same component set, every upstream property present
in ours (we may add tolerated ones, listed in ALLOWED_EXTRA), the message kinds,
and the discriminator that makes the component union a msgspec tagged union.
"""

from __future__ import annotations

import json

from agui_generated import a2ui_v09
from support import ROOT, shared_path

V09 = json.loads((ROOT / "schema" / "a2ui_v09.schema.json").read_text(encoding="utf-8"))
V08 = json.loads((ROOT / "schema" / "a2ui_v08.schema.json").read_text(encoding="utf-8"))
# properties we accept beyond the upstream schema, and why
ALLOWED_EXTRA = {
    ("Button", "text"): "the protocol doc's examples label buttons with text (notes/a2ui.md 8.4)",
}


def upstream(*parts: str):
    return json.loads(shared_path("upstream", "a2ui", *parts).read_text(encoding="utf-8"))


def _upstream_props(component: dict) -> set[str]:
    props: set[str] = set()
    for part in component.get("allOf", []):
        props |= set(part.get("properties", {}))
        if part.get("$ref", "").endswith("/Checkable"):
            props.add("checks")
    return props | set(component.get("properties", {}))


def test_schemas_declare_2020_12_and_describe_agent_messages():
    for schema in (V09, V08):
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$ref"] == "#/$defs/AgentMessage"


def test_v09_component_union_is_discriminated_by_component():
    union = V09["$defs"]["AnyComponent"]
    names = [ref["$ref"].rsplit("/", 1)[1] for ref in union["oneOf"]]
    assert union["discriminator"]["propertyName"] == "component"
    assert union["discriminator"]["mapping"] == {n: f"#/$defs/{n}" for n in names}
    for name in names:
        assert V09["$defs"][name]["properties"]["component"]["const"] == name


def test_v09_components_match_the_upstream_basic_catalog():
    catalog = upstream("v0_9", "catalogs", "basic", "catalog.json")["components"]
    ours = {n: V09["$defs"][n] for n in V09["$defs"]["AnyComponent"]["discriminator"]["mapping"]}
    assert set(ours) == set(catalog)
    for name, component in catalog.items():
        theirs = _upstream_props(component) | {"id", "accessibility", "weight"}
        mine = set(ours[name]["properties"])
        assert theirs <= mine, (name, theirs - mine)
        extra = {(name, p) for p in mine - theirs}
        assert extra <= set(ALLOWED_EXTRA), extra


def test_v09_message_kinds_match_upstream():
    theirs = upstream("v0_9", "json", "server_to_client.json")["$defs"]
    for message in (
        "CreateSurfaceMessage",
        "UpdateComponentsMessage",
        "UpdateDataModelMessage",
        "DeleteSurfaceMessage",
    ):
        kind = next(k for k in theirs[message]["properties"] if k != "version")
        body_theirs = theirs[message]["properties"][kind]
        body_mine = V09["$defs"][message]["properties"][kind]["$ref"].rsplit("/", 1)[1]
        assert set(body_theirs["properties"]) == set(V09["$defs"][body_mine]["properties"])
        assert set(body_theirs["required"]) == set(V09["$defs"][body_mine]["required"])


def test_v08_components_and_messages_match_upstream():
    catalog = upstream("v0_8", "json", "standard_catalog_definition.json")["components"]
    wrapper = V08["$defs"]["ComponentWrapper"]["properties"]
    assert set(wrapper) == set(catalog)
    for name, component in catalog.items():
        assert set(V08["$defs"][f"{name}Props"]["properties"]) == set(component["properties"])
    messages = upstream("v0_8", "json", "server_to_client.json")["properties"]
    assert set(V08["$defs"]["AgentMessage"]["properties"]) == set(messages)


def test_generated_v09_types_decode_a_tagged_component_and_reject_unknown_fields():
    import msgspec

    comp = msgspec.json.decode(
        b'{"id":"t","component":"Text","text":{"path":"/x"}}', type=a2ui_v09.AnyComponent
    )
    assert isinstance(comp, a2ui_v09.Text) and comp.text == a2ui_v09.DynamicRef(path="/x")
    try:
        msgspec.json.decode(
            b'{"id":"t","component":"Text","text":"x","bogus":1}', type=a2ui_v09.AnyComponent
        )
    except msgspec.ValidationError as exc:
        assert "bogus" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("unknown field accepted")


# -- v0.9.1 and v1.0 (upstream folders v0_9_1 and v0_10) ------------------------------
V091 = json.loads((ROOT / "schema" / "a2ui_v09_1.schema.json").read_text(encoding="utf-8"))
V10 = json.loads((ROOT / "schema" / "a2ui_v10.schema.json").read_text(encoding="utf-8"))
# properties our v1.0 schema accepts beyond upstream v0_10's catalog, and why
ALLOWED_EXTRA_V10 = {
    ("Button", "text"): "the protocol doc's examples label buttons with text",
    ("TextField", "validationRegexp"): "v0.9's name, still sent by agents that moved up",
}


def test_upstream_v091_json_is_v09s_so_our_v091_schema_describes_the_same_messages():
    for part in (
        ("json", "server_to_client.json"),
        ("json", "common_types.json"),
        ("json", "client_to_server.json"),
        ("catalogs", "basic", "catalog.json"),
    ):
        assert upstream("v0_9_1", *part) == upstream("v0_9", *part), part
    assert V091["$defs"] == V09["$defs"]
    assert V091["$id"].endswith("a2ui_v09_1.schema.json") and "v0.9.1" in V091["title"]


def test_v10_components_match_the_upstream_v0_10_basic_catalog():
    catalog = upstream("v0_10", "catalogs", "basic", "catalog.json")["components"]
    mapping = V10["$defs"]["AnyComponent"]["discriminator"]["mapping"]
    assert set(mapping) == set(catalog)
    for name, component in catalog.items():
        theirs = _upstream_props(component) | {"id", "accessibility", "weight"}
        mine = set(V10["$defs"][name]["properties"])
        assert theirs <= mine, (name, theirs - mine)
        extra = {(name, p) for p in mine - theirs - {"catalogId"}}
        assert extra <= set(ALLOWED_EXTRA_V10), extra
        assert V10["$defs"][name]["properties"]["component"]["const"] == name


def test_v10_message_kinds_cover_upstream_v0_10_and_the_v1_0_names():
    theirs = upstream("v0_10", "json", "server_to_client.json")["$defs"]
    kinds = set()
    for message in theirs.values():
        kinds |= {k for k in message.get("properties", {}) if k != "version"}
    mine = set(V10["$defs"]["AgentMessage"]["properties"])
    assert kinds <= mine, kinds - mine
    assert {"callRendererFunction", "agentFunctionResponse"} <= mine
    client = set(V10["$defs"]["ClientMessage"]["properties"])
    assert {
        "action",
        "error",
        "callAgentFunction",
        "rendererFunctionResponse",
        "functionResponse",
    } <= client
    for message in (
        "CreateSurfaceMessage",
        "UpdateComponentsMessage",
        "UpdateDataModelMessage",
        "DeleteSurfaceMessage",
    ):
        kind = next(k for k in theirs[message]["properties"] if k != "version")
        body_theirs = theirs[message]["properties"][kind]
        body_mine = V10["$defs"][message]["properties"][kind]["$ref"].rsplit("/", 1)[1]
        assert set(body_theirs["properties"]) <= set(V10["$defs"][body_mine]["properties"])
    create = V10["$defs"]["CreateSurface"]
    assert {"components", "dataModel"} <= set(create["properties"])
    assert create["required"] == ["surfaceId"]  # v1.0: catalogId optional


def test_v10_version_is_v1_0_or_its_first_name_v0_10():
    version = V10["$defs"]["AgentMessage"]["properties"]["version"]
    assert version["enum"] == ["v1.0", "v0.10"]
    assert (
        upstream("v0_10", "json", "server_to_client.json")["$defs"]["CreateSurfaceMessage"][
            "properties"
        ]["version"]["const"]
        in version["enum"]
    )


def test_generated_v10_types_decode_inline_create_surface_and_function_messages():
    import msgspec
    from agui_generated import a2ui_v10

    decoder = msgspec.json.Decoder(a2ui_v10.AgentMessage)
    msg = decoder.decode(
        json.dumps(
            {
                "version": "v1.0",
                "createSurface": {
                    "surfaceId": "s",
                    "components": [
                        {"id": "root", "component": "Text", "text": "hi", "catalogId": "other"}
                    ],
                    "dataModel": {"a": 1},
                },
            }
        )
    )
    assert msg.create_surface.catalog_id is msgspec.UNSET
    assert msg.create_surface.components[0].catalog_id == "other"
    msg = decoder.decode(
        json.dumps(
            {
                "version": "v1.0",
                "callRendererFunction": {
                    "functionCallId": "f1",
                    "callFunction": {"call": "openUrl", "args": {"url": "x"}},
                },
            }
        )
    )
    assert msg.call_renderer_function.call_function.call == "openUrl"
    msg = decoder.decode(
        json.dumps(
            {
                "version": "v0.10",
                "functionCallId": "f2",
                "callFunction": {"call": "c", "returnType": "void", "callableFrom": "remoteOnly"},
            }
        )
    )
    assert msg.function_call_id == "f2"
    client = msgspec.json.decode(
        json.dumps(
            {
                "version": "v1.0",
                "callAgentFunction": {
                    "surfaceId": "s",
                    "functionCallId": "r1",
                    "callFunction": {"call": "get"},
                },
            }
        ),
        type=a2ui_v10.ClientMessage,
    )
    assert client.call_agent_function.function_call_id == "r1"
