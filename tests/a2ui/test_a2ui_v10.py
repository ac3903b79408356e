"""A2UI v1.0 (and its first name v0.10) in the one model, beside v0.8 and v0.9 surfaces."""

from __future__ import annotations

from agui.a2ui import (
    BASIC_CATALOG_ID,
    SurfaceStore,
    action_for,
    call_agent_function,
    render_surface,
    renderer_function_response,
)


def v10(kind: str, version: str = "v1.0", **body):
    return {"version": version, kind: body}


def store_with(*ops) -> SurfaceStore:
    store = SurfaceStore()
    for op in ops:
        store.apply(op)
    return store


def test_inline_components_and_data_in_create_surface_render_without_a_catalog_id():
    store = store_with(
        v10(
            "createSurface",
            surfaceId="s",
            components=[
                {"id": "root", "component": "Text", "text": {"path": "/greeting"}, "variant": "h2"}
            ],
            dataModel={"greeting": "Hello"},
        )
    )
    s = store.surfaces["s"]
    assert (s.version, s.catalog_id, s.created, s.problems) == ("v1.0", BASIC_CATALOG_ID, True, [])
    assert render_surface(s) == ["## Hello"]


def test_every_version_lives_in_one_store():
    store = store_with(
        {
            "surfaceUpdate": {
                "surfaceId": "old",
                "components": [
                    {"id": "r", "component": {"Text": {"text": {"literalString": "eight"}}}}
                ],
            }
        },
        {"beginRendering": {"surfaceId": "old", "root": "r"}},
        {"version": "v0.9", "createSurface": {"surfaceId": "nine", "catalogId": "basic"}},
        {
            "version": "v0.9",
            "updateComponents": {
                "surfaceId": "nine",
                "components": [{"id": "root", "component": "Text", "text": "nine"}],
            },
        },
        v10(
            "createSurface",
            surfaceId="ten",
            components=[{"id": "root", "component": "Text", "text": "ten"}],
        ),
        v10(
            "createSurface",
            version="v0.10",
            surfaceId="ten-b",
            catalogId="basic",
            components=[{"id": "root", "component": "Text", "text": "ten b"}],
        ),
    )
    assert {sid: s.version for sid, s in store.surfaces.items()} == {
        "old": "v0.8",
        "nine": "v0.9",
        "ten": "v1.0",
        "ten-b": "v1.0",
    }
    assert [render_surface(s) for s in store.surfaces.values()] == [
        ["eight"],
        ["nine"],
        ["ten"],
        ["ten b"],
    ]


def test_null_deletes_in_v10_but_is_a_value_in_v09():
    store = store_with(
        v10("updateDataModel", surfaceId="ten", path="/", value={"a": 1, "b": 2}),
        v10("updateDataModel", surfaceId="ten", path="/a", value=None),
        {
            "version": "v0.9",
            "updateDataModel": {"surfaceId": "nine", "path": "/", "value": {"a": 1}},
        },
        {"version": "v0.9", "updateDataModel": {"surfaceId": "nine", "path": "/a", "value": None}},
    )
    assert store.surfaces["ten"].data_model == {"b": 2}
    assert store.surfaces["nine"].data_model == {"a": None}


def test_a_component_may_name_its_own_catalog():
    store = store_with(
        v10(
            "createSurface",
            surfaceId="s",
            catalogId="https://example.com/main",
            components=[
                {"id": "root", "component": "Column", "children": ["a", "b"]},
                {"id": "a", "component": "Text", "text": "x"},
                {
                    "id": "b",
                    "component": "Text",
                    "text": "y",
                    "catalogId": "https://example.com/other",
                },
            ],
        )
    )
    s = store.surfaces["s"]
    assert s.catalog_of("a") == "https://example.com/main"
    assert s.catalog_of("b") == "https://example.com/other"
    assert s.catalog_of("missing") == "https://example.com/main"


def test_call_renderer_function_and_v010_call_function_are_kept_in_order():
    store = store_with(
        v10("createSurface", surfaceId="s"),
        v10(
            "callRendererFunction",
            surfaceId="s",
            functionCallId="f1",
            wantResponse=True,
            callFunction={"call": "openUrl", "args": {"url": "https://a2ui.org"}},
        ),
        {
            "version": "v0.10",
            "functionCallId": "f2",
            "callFunction": {
                "call": "capitalize",
                "args": {"value": "x"},
                "callableFrom": "remoteOnly",
            },
        },
    )
    assert store.function_calls == [
        {
            "kind": "callRendererFunction",
            "version": "v1.0",
            "surfaceId": "s",
            "functionCallId": "f1",
            "wantResponse": True,
            "callFunction": {"call": "openUrl", "args": {"url": "https://a2ui.org"}},
        },
        {
            "kind": "callFunction",
            "version": "v0.10",
            "functionCallId": "f2",
            "callFunction": {
                "call": "capitalize",
                "args": {"value": "x"},
                "callableFrom": "remoteOnly",
            },
        },
    ]
    assert store.problems == [] and store.surfaces["s"].problems == []


def test_agent_function_response_and_v010_action_response_are_kept():
    store = store_with(
        v10("agentFunctionResponse", functionCallId="r1", call="get", value={"t": 21}),
        {"version": "v0.10", "actionId": "a1", "actionResponse": {"value": "ok"}},
    )
    assert store.responses == [
        {
            "kind": "agentFunctionResponse",
            "version": "v1.0",
            "functionCallId": "r1",
            "call": "get",
            "value": {"t": 21},
        },
        {
            "kind": "actionResponse",
            "version": "v0.10",
            "actionId": "a1",
            "actionResponse": {"value": "ok"},
        },
    ]


def test_a_function_call_without_a_call_name_is_a_problem():
    store = store_with(
        v10("callRendererFunction", functionCallId="f", callFunction={"args": {}}),
        {"version": "v1.0", "callRendererFunction": 5},
    )
    assert store.function_calls == []
    assert store.problems == [
        "callRendererFunction: callFunction needs a string call",
        "callRendererFunction: body must be an object",
    ]


def test_a_remote_only_function_action_is_a_call_agent_function():
    store = store_with(
        v10(
            "createSurface",
            surfaceId="s",
            catalogId="https://example.com/cat",
            components=[
                {
                    "id": "go",
                    "component": "Button",
                    "child": "l",
                    "action": {
                        "functionCall": {
                            "call": "lookup",
                            "callableFrom": "remoteOnly",
                            "args": {"q": {"path": "/q"}},
                        }
                    },
                },
                {
                    "id": "open",
                    "component": "Button",
                    "child": "l",
                    "action": {"functionCall": {"call": "openUrl", "args": {"url": "u"}}},
                },
            ],
            dataModel={"q": "weather"},
        )
    )
    action = action_for(store.surfaces["s"], "go")
    call = action["callAgentFunction"]
    assert call["functionCallId"].startswith("renderer-")
    assert call == {
        "surfaceId": "s",
        "functionCallId": call["functionCallId"],
        "callFunction": {
            "call": "lookup",
            "args": {"q": "weather"},
            "catalogId": "https://example.com/cat",
        },
    }
    assert action_for(store.surfaces["s"], "open") is None  # runs locally


def test_call_agent_function_and_renderer_function_response_shapes():
    assert call_agent_function("s", "get", {"a": 1}, "cat", function_call_id="r9") == {
        "callAgentFunction": {
            "surfaceId": "s",
            "functionCallId": "r9",
            "callFunction": {"call": "get", "args": {"a": 1}, "catalogId": "cat"},
        }
    }
    assert renderer_function_response("f1", "openUrl", True) == {
        "rendererFunctionResponse": {"functionCallId": "f1", "call": "openUrl", "value": True}
    }
    assert renderer_function_response(
        "f1", "x", error=("UNSUPPORTED", "no such function"), surface_id="s"
    ) == {
        "rendererFunctionResponse": {
            "functionCallId": "f1",
            "call": "x",
            "surfaceId": "s",
            "error": {"code": "UNSUPPORTED", "message": "no such function"},
        }
    }
