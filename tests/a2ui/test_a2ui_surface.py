"""SurfaceStore rules: components, data model, root, lifecycle, v0.8 adapter, bad input."""

from __future__ import annotations

from agui.a2ui import BASIC_CATALOG_ID, SurfaceStore


def v09(kind: str, **body):
    return {"version": "v0.9", kind: body}


def store_with(*ops) -> SurfaceStore:
    store = SurfaceStore()
    for op in ops:
        store.apply(op)
    return store


def test_create_surface_records_catalog_theme_and_send_data_model():
    store = store_with(
        v09(
            "createSurface",
            surfaceId="s",
            catalogId="cat",
            theme={"primaryColor": "#112233"},
            sendDataModel=True,
        )
    )
    s = store.surfaces["s"]
    assert (s.version, s.catalog_id, s.theme, s.send_data_model) == (
        "v0.9",
        "cat",
        {"primaryColor": "#112233"},
        True,
    )
    assert s.root_id == "root" and s.rendering


def test_repeated_create_surface_is_ignored():
    store = store_with(
        v09("createSurface", surfaceId="s", catalogId="first"),
        v09("updateDataModel", surfaceId="s", value={"x": 1}),
        v09("createSurface", surfaceId="s", catalogId="second", sendDataModel=True),
    )
    s = store.surfaces["s"]
    assert s.catalog_id == "first" and s.send_data_model is False
    assert s.data_model == {"x": 1}
    assert s.problems == []


def test_update_components_upserts_by_id():
    store = store_with(
        v09(
            "updateComponents",
            surfaceId="s",
            components=[
                {"id": "root", "component": "Text", "text": "a", "variant": "h1"},
                {"id": "other", "component": "Text", "text": "b"},
            ],
        ),
        v09(
            "updateComponents",
            surfaceId="s",
            components=[
                {"id": "root", "component": "Text", "text": "A"},
            ],
        ),
    )
    comps = store.surfaces["s"].components
    assert comps["root"] == {"id": "root", "component": "Text", "text": "A"}  # replaced whole
    assert comps["other"]["text"] == "b"
    assert store.surfaces["s"].rebuilds == {}


def test_type_change_rebuilds_the_component():
    store = store_with(
        v09(
            "updateComponents",
            surfaceId="s",
            components=[{"id": "c", "component": "Text", "text": "a"}],
        ),
        v09("updateComponents", surfaceId="s", components=[{"id": "c", "component": "Divider"}]),
    )
    s = store.surfaces["s"]
    assert s.components["c"] == {"id": "c", "component": "Divider"}
    assert s.rebuilds == {"c": 1}


def test_update_data_model_upserts_by_pointer_and_deletes_without_value():
    store = store_with(
        v09("updateDataModel", surfaceId="s", value={"a": 1, "items": ["x", "y"]}),
        v09("updateDataModel", surfaceId="s", path="/b/c", value=True),
        v09("updateDataModel", surfaceId="s", path="/items/1"),
        v09("updateDataModel", surfaceId="s", path="/a"),
    )
    assert store.surfaces["s"].data_model == {"items": ["x", None], "b": {"c": True}}


def test_update_data_model_null_value_is_kept_in_v09_and_deletes_in_v010():
    store = store_with(
        v09("updateDataModel", surfaceId="s", value={"a": 1, "b": 2}),
        v09("updateDataModel", surfaceId="s", path="/a", value=None),
        {"version": "v0.10", "updateDataModel": {"surfaceId": "s", "path": "/b", "value": None}},
    )
    assert store.surfaces["s"].data_model == {"a": None}


def test_create_surface_with_embedded_components_and_data_model_v10():
    store = store_with(
        {
            "version": "v1.0",
            "createSurface": {
                "surfaceId": "s",
                "components": [{"id": "root", "component": "Text", "text": "hi"}],
                "dataModel": {"k": 1},
            },
        }
    )
    s = store.surfaces["s"]
    assert s.catalog_id == BASIC_CATALOG_ID
    assert "root" in s.components and s.data_model == {"k": 1}


def test_delete_surface_removes_it():
    store = store_with(
        v09("createSurface", surfaceId="s", catalogId="c"),
        v09("createSurface", surfaceId="t", catalogId="c"),
        v09("deleteSurface", surfaceId="s"),
    )
    assert list(store.surfaces) == ["t"]


def test_v08_surface_update_is_converted_to_the_flat_model():
    store = store_with(
        {
            "surfaceUpdate": {
                "surfaceId": "s",
                "components": [
                    {
                        "id": "root",
                        "weight": 2,
                        "component": {
                            "Column": {
                                "children": {"explicitList": ["t"]},
                                "distribution": "start",
                                "alignment": "center",
                            }
                        },
                    },
                    {
                        "id": "t",
                        "component": {"Text": {"text": {"literalString": "Hi"}, "usageHint": "h2"}},
                    },
                    {
                        "id": "l",
                        "component": {
                            "List": {
                                "children": {
                                    "template": {"componentId": "t", "dataBinding": "/items"}
                                }
                            }
                        },
                    },
                    {
                        "id": "b",
                        "component": {
                            "Button": {
                                "child": "t",
                                "primary": True,
                                "action": {
                                    "name": "go",
                                    "context": [{"key": "who", "value": {"path": "/user"}}],
                                },
                            }
                        },
                    },
                    {
                        "id": "m",
                        "component": {"Modal": {"entryPointChild": "b", "contentChild": "t"}},
                    },
                    {
                        "id": "mc",
                        "component": {
                            "MultipleChoice": {
                                "selections": {"literalArray": ["a"]},
                                "maxAllowedSelections": 1,
                                "options": [{"label": {"literalString": "A"}, "value": "a"}],
                            }
                        },
                    },
                ],
            }
        }
    )
    c = store.surfaces["s"].components
    assert c["root"] == {
        "id": "root",
        "component": "Column",
        "weight": 2,
        "children": ["t"],
        "justify": "start",
        "align": "center",
    }
    assert c["t"] == {"id": "t", "component": "Text", "text": "Hi", "variant": "h2"}
    assert c["l"]["children"] == {"componentId": "t", "path": "/items"}
    assert c["b"]["variant"] == "primary"
    assert c["b"]["action"] == {"event": {"name": "go", "context": {"who": {"path": "/user"}}}}
    assert (c["m"]["trigger"], c["m"]["content"]) == ("b", "t")
    assert c["mc"]["component"] == "ChoicePicker"
    assert c["mc"]["value"] == ["a"] and c["mc"]["variant"] == "mutuallyExclusive"
    assert c["mc"]["options"] == [{"label": "A", "value": "a"}]


def test_v08_bound_value_with_literal_and_path_initialises_the_model():
    store = store_with(
        {
            "surfaceUpdate": {
                "surfaceId": "s",
                "components": [
                    {
                        "id": "f",
                        "component": {
                            "TextField": {
                                "label": {"literalString": "Name"},
                                "text": {"literalString": "Ada", "path": "/name"},
                            }
                        },
                    }
                ],
            }
        }
    )
    s = store.surfaces["s"]
    assert s.components["f"]["value"] == {"path": "/name"}
    assert s.data_model == {"name": "Ada"}


def test_v08_data_model_update_converts_adjacency_list_contents():
    store = store_with(
        {
            "dataModelUpdate": {
                "surfaceId": "s",
                "contents": [
                    {"key": "title", "valueString": "T"},
                    {"key": "n", "valueNumber": 3},
                    {"key": "ok", "valueBoolean": False},
                    {"key": "user", "valueMap": [{"key": "name", "valueString": "Ada"}]},
                ],
            }
        },
        {
            "dataModelUpdate": {
                "surfaceId": "s",
                "path": "user/extra",
                "contents": [{"key": "x", "valueString": "y"}],
            }
        },
    )
    assert store.surfaces["s"].data_model == {
        "title": "T",
        "n": 3,
        "ok": False,
        "user": {"name": "Ada", "extra": {"x": "y"}},
    }


def test_v08_root_comes_from_begin_rendering():
    store = store_with(
        {
            "surfaceUpdate": {
                "surfaceId": "s",
                "components": [
                    {"id": "top", "component": {"Text": {"text": {"literalString": "x"}}}}
                ],
            }
        },
    )
    s = store.surfaces["s"]
    assert (s.version, s.root, s.rendering) == ("v0.8", None, False)
    store.apply({"beginRendering": {"surfaceId": "s", "root": "top", "styles": {"font": "x"}}})
    assert (s.root_id, s.rendering, s.theme) == ("top", True, {"font": "x"})


def test_v08_delete_surface_without_version():
    store = store_with(
        {"beginRendering": {"surfaceId": "s", "root": "r"}},
        {"deleteSurface": {"surfaceId": "s"}},
    )
    assert store.surfaces == {}


def test_bad_operations_are_skipped_and_recorded_never_raised():
    store = SurfaceStore()
    for bad in (
        None,
        3,
        "text",
        [],
        {},
        {"version": "v0.9"},
        {"createSurface": {"surfaceId": "a"}, "deleteSurface": {"surfaceId": "a"}},
        v09("createSurface"),
        v09("createSurface", surfaceId=7),
        {"version": "v0.9", "updateComponents": "nope"},
    ):
        assert store.apply(bad) is None
    assert len(store.problems) == 10
    assert store.surfaces == {}


def test_bad_parts_of_an_operation_are_recorded_on_the_surface():
    store = store_with(
        v09(
            "updateComponents",
            surfaceId="s",
            components=[
                {"id": "ok", "component": "Text", "text": "fine"},
                "not an object",
                {"component": "Text"},
                {"id": "notype"},
                {"id": 5, "component": "X"},
            ],
        ),
        v09("updateComponents", surfaceId="s", components="nope"),
        v09("updateDataModel", surfaceId="s", path=5, value=1),
        v09("updateDataModel", surfaceId="s", value={"list": []}),
        v09("updateDataModel", surfaceId="s", path="/list/name", value=1),
        {
            "surfaceUpdate": {
                "surfaceId": "s",
                "components": [
                    {"id": "w", "component": {"A": {}, "B": {}}},
                    {"id": "p", "component": {"Text": 3}},
                ],
            }
        },
        {
            "dataModelUpdate": {
                "surfaceId": "s",
                "path": "/v8",
                "contents": [{"key": "k"}, {"nokey": 1}, "x"],
            }
        },
        {"dataModelUpdate": {"surfaceId": "s", "path": "/v8b", "contents": "nope"}},
        {"beginRendering": {"surfaceId": "s", "root": 3}},
    )
    s = store.surfaces["s"]
    assert list(s.components) == ["ok"]
    assert s.problems == [
        "updateComponents: component #1 has no string id",
        "updateComponents: component #2 has no string id",
        "updateComponents: component 'notype' has no string type",
        "updateComponents: component #4 has no string id",
        "updateComponents: components must be a list",
        "updateDataModel: path must be a string",
        "data model write at '/list/name' skipped: array index expected, got 'name'",
        "surfaceUpdate: component 'w' must wrap exactly one type",
        "surfaceUpdate: component 'p' properties must be an object",
        "dataModelUpdate: entry 'k' has no value* property",
        "dataModelUpdate: skipped an entry without a string key",
        "dataModelUpdate: skipped an entry without a string key",
        "dataModelUpdate: contents must be a list",
        "beginRendering: root must be a string",
    ]
    assert s.data_model == {"list": [], "v8": {}, "v8b": {}}


def test_status_is_kept_on_the_surface():
    store = SurfaceStore()
    s = store.set_status("s", {"status": "retrying", "attempt": 2, "maxAttempts": 3})
    assert (s.status, s.status_detail) == ("retrying", {"attempt": 2, "maxAttempts": 3})
    store.set_status("s", {"status": "bogus"})
    assert s.status == "retrying" and s.problems == ["unknown activity status 'bogus' ignored"]


def test_surface_update_names_entries_without_an_id_and_a_components_that_is_no_list():
    store = store_with(
        v09("createSurface", surfaceId="s", catalogId="cat"),
        {
            "surfaceUpdate": {
                "surfaceId": "s",
                "components": [
                    {"id": "t", "component": {"Text": {"text": {"literalString": "hi"}}}},
                    {"component": {"Text": {}}},
                    "nope",
                ],
            }
        },
        {"surfaceUpdate": {"surfaceId": "s", "components": {"id": "x"}}},
    )
    s = store.surfaces["s"]
    assert list(s.components) == ["t"]
    assert s.problems == [
        "surfaceUpdate: component #1 has no string id",
        "surfaceUpdate: component #2 has no string id",
        "surfaceUpdate: components must be a list",
    ]
