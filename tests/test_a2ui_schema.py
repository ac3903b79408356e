"""Our A2UI schemas (schema/a2ui_v0*.schema.json) against the upstream catalogs and messages.

Structural checks only: the same component set, every upstream property present
in ours (we may add tolerated ones, listed in ALLOWED_EXTRA), the message kinds,
and the discriminator that makes the component union a msgspec tagged union.
"""

from __future__ import annotations

import json

from agui_generated import a2ui_v09
from conftest import ROOT, shared_path

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
    for message in ("CreateSurfaceMessage", "UpdateComponentsMessage", "UpdateDataModelMessage",
                    "DeleteSurfaceMessage"):
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

    comp = msgspec.json.decode(b'{"id":"t","component":"Text","text":{"path":"/x"}}',
                               type=a2ui_v09.AnyComponent)
    assert isinstance(comp, a2ui_v09.Text) and comp.text == a2ui_v09.DynamicRef(path="/x")
    try:
        msgspec.json.decode(b'{"id":"t","component":"Text","text":"x","bogus":1}',
                            type=a2ui_v09.AnyComponent)
    except msgspec.ValidationError as exc:
        assert "bogus" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("unknown field accepted")
