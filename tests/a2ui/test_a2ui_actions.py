"""user_action / action_for: the forwardedProps.a2uiAction shape."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from agui.a2ui import SurfaceStore, action_for, user_action


def test_user_action_shape_with_explicit_timestamp():
    assert user_action("submit", "form", "btn", {"email": "a@b.c"}, "2025-01-01T00:00:00Z") == {
        "userAction": {
            "name": "submit",
            "surfaceId": "form",
            "sourceComponentId": "btn",
            "timestamp": "2025-01-01T00:00:00Z",
            "context": {"email": "a@b.c"},
        }
    }


def test_user_action_converts_datetimes_to_utc_z():
    tz = timezone(timedelta(hours=2))
    action = user_action("x", "s", "c", None, datetime(2025, 1, 1, 12, 0, 0, 123456, tzinfo=tz))
    assert action["userAction"]["timestamp"] == "2025-01-01T10:00:00.123Z"
    assert action["userAction"]["context"] == {}
    naive = user_action("x", "s", "c", {}, datetime(2025, 1, 1))
    assert naive["userAction"]["timestamp"] == "2025-01-01T00:00:00.000Z"


def test_user_action_defaults_to_now():
    stamp = user_action("x", "s", "c", {})["userAction"]["timestamp"]
    assert stamp.endswith("Z") and datetime.fromisoformat(stamp).tzinfo is not None


def test_user_action_never_raises_on_odd_input():
    action = user_action(1, None, 2.5, ["not", "a", "dict"], "t")["userAction"]
    assert action == {
        "name": "1",
        "surfaceId": "None",
        "sourceComponentId": "2.5",
        "timestamp": "t",
        "context": {},
    }


def _store():
    store = SurfaceStore()
    store.apply(
        {
            "version": "v0.9",
            "updateComponents": {
                "surfaceId": "s",
                "components": [
                    {
                        "id": "send",
                        "component": "Button",
                        "child": "l",
                        "action": {
                            "event": {
                                "name": "send",
                                "context": {
                                    "to": {"path": "/to"},
                                    "fixed": 3,
                                    "who": {"path": "name"},
                                },
                            }
                        },
                    },
                    {
                        "id": "open",
                        "component": "Button",
                        "child": "l",
                        "action": {
                            "functionCall": {"call": "openUrl", "args": {"url": "http://x"}}
                        },
                    },
                ],
            },
        }
    )
    store.apply(
        {
            "version": "v0.9",
            "updateDataModel": {
                "surfaceId": "s",
                "value": {"to": "ada@example.com", "people": [{"name": "Bob"}]},
            },
        }
    )
    return store.surfaces["s"]


def test_action_for_resolves_the_event_context():
    action = action_for(_store(), "send", scope="/people/0", timestamp="T")
    assert action == {
        "userAction": {
            "name": "send",
            "surfaceId": "s",
            "sourceComponentId": "send",
            "timestamp": "T",
            "context": {"to": "ada@example.com", "fixed": 3, "who": "Bob"},
        }
    }


def test_action_for_local_function_or_missing_component_is_none():
    s = _store()
    assert action_for(s, "open") is None
    assert action_for(s, "nope") is None


def test_action_for_v08_button_context():
    store = SurfaceStore()
    store.apply(
        {
            "surfaceUpdate": {
                "surfaceId": "s",
                "components": [
                    {
                        "id": "b",
                        "component": {
                            "Button": {
                                "child": "l",
                                "action": {
                                    "name": "login",
                                    "context": [
                                        {"key": "user", "value": {"path": "/u"}},
                                        {"key": "n", "value": {"literalNumber": 2}},
                                    ],
                                },
                            }
                        },
                    }
                ],
            }
        }
    )
    store.apply(
        {"dataModelUpdate": {"surfaceId": "s", "contents": [{"key": "u", "valueString": "ada"}]}}
    )
    action = action_for(store.surfaces["s"], "b", timestamp="T")
    assert action["userAction"]["context"] == {"user": "ada", "n": 2}


def test_client_data_model_lists_only_surfaces_that_asked_for_it():
    from agui.a2ui import client_data_model

    store = SurfaceStore()
    store.apply(
        {
            "version": "v0.9",
            "createSurface": {"surfaceId": "a", "catalogId": "c", "sendDataModel": True},
        }
    )
    store.apply({"version": "v0.9", "createSurface": {"surfaceId": "b", "catalogId": "c"}})
    store.apply({"version": "v0.9", "updateDataModel": {"surfaceId": "a", "value": {"x": 1}}})
    assert client_data_model(store.surfaces.values()) == {
        "version": "v0.9",
        "surfaces": {"a": {"x": 1}},
    }
    assert client_data_model([store.surfaces["b"]]) is None


def test_is_basic_catalog_aliases_drifted_ids():
    from agui.a2ui import BASIC_CATALOG_ID, is_basic_catalog

    assert is_basic_catalog(BASIC_CATALOG_ID)
    assert is_basic_catalog("https://a2ui.org/specification/v0_9/basic_catalog.json")
    assert is_basic_catalog("https://a2ui.org/specification/v0_8/standard_catalog_definition.json")
    assert is_basic_catalog(None)
    assert not is_basic_catalog("mycompany.com:fancy")
    assert not is_basic_catalog(3)
