"""surfaces_from_messages: activity messages and render_a2ui tool calls, structs and dicts."""

from __future__ import annotations

import json

from agui.a2ui import SurfaceStore, add_message, render_surface, surfaces_from_messages
from agui.types import (
    ActivityMessage,
    AssistantMessage,
    FunctionCall,
    ToolCall,
    ToolMessage,
    UserMessage,
)

COMPONENTS = [
    {"id": "root", "component": "Column", "children": ["title", "items"]},
    {"id": "title", "component": "Text", "text": {"path": "/title"}, "variant": "h2"},
    {"id": "items", "component": "List", "children": {"componentId": "item", "path": "/items"}},
    {"id": "item", "component": "CheckBox", "label": {"path": "title"}, "value": {"path": "done"}},
]
DATA = {
    "title": "Groceries",
    "items": [{"title": "Milk", "done": True}, {"title": "Eggs", "done": False}],
}
EXPECTED = ["## Groceries", "- [x] Milk", "- [ ] Eggs"]


def ops(sid: str = "list"):
    return [
        {"version": "v0.9", "createSurface": {"surfaceId": sid, "catalogId": "basic"}},
        {"version": "v0.9", "updateComponents": {"surfaceId": sid, "components": COMPONENTS}},
        {"version": "v0.9", "updateDataModel": {"surfaceId": sid, "path": "/", "value": DATA}},
    ]


def render_call(args, name="render_a2ui", call_id="t1") -> AssistantMessage:
    text = args if isinstance(args, str) else json.dumps(args)
    return AssistantMessage(
        id="a1",
        tool_calls=[
            ToolCall(id=call_id, type="function", function=FunctionCall(name=name, arguments=text))
        ],
    )


def test_activity_struct_with_a2ui_operations():
    msg = ActivityMessage(id="m1", activity_type="a2ui-surface", content={"a2ui_operations": ops()})
    surfaces = surfaces_from_messages([UserMessage(id="u", content="hi"), msg])
    assert list(surfaces) == ["list"]
    assert render_surface(surfaces["list"]) == EXPECTED


def test_activity_wire_dict_with_older_operations_key():
    msg = {
        "role": "activity",
        "id": "m1",
        "activityType": "a2ui-surface",
        "content": {"operations": ops()},
    }
    assert render_surface(surfaces_from_messages([msg])["list"]) == EXPECTED


def test_activity_double_encoded_operations():
    msg = {
        "role": "activity",
        "id": "m1",
        "activityType": "a2ui-surface",
        "content": {"a2ui_operations": json.dumps(ops())},
    }
    assert render_surface(surfaces_from_messages([msg])["list"]) == EXPECTED


def test_other_activity_types_are_ignored():
    msg = ActivityMessage(id="m1", activity_type="progress", content={"a2ui_operations": ops()})
    assert surfaces_from_messages([msg]) == {}


def test_cumulative_snapshots_repeat_create_surface_harmlessly():
    first = ops()[:2]
    second = ops()
    second[2]["updateDataModel"]["value"] = {"title": "Later", "items": []}
    messages = [
        ActivityMessage(id="m1", activity_type="a2ui-surface", content={"a2ui_operations": first}),
        ActivityMessage(id="m2", activity_type="a2ui-surface", content={"a2ui_operations": second}),
    ]
    s = surfaces_from_messages(messages)["list"]
    assert render_surface(s) == ["## Later"]
    assert s.problems == []


def test_status_only_activity_is_keyed_by_message_id():
    msg = ActivityMessage(
        id="a2ui-surface-t9",
        activity_type="a2ui-surface",
        content={"status": "building", "progressTokens": 12},
    )
    surfaces = surfaces_from_messages([msg])
    s = surfaces["a2ui-surface-t9"]
    assert (s.status, s.status_detail) == ("building", {"progressTokens": 12})
    assert render_surface(s) == ["[building]"]


def test_status_with_surface_id_marks_that_surface():
    msg = {
        "role": "activity",
        "id": "m",
        "activityType": "a2ui-surface",
        "content": {"status": "failed", "surfaceId": "list", "error": "timeout", "attempts": 3},
    }
    assert render_surface(surfaces_from_messages([msg])["list"]) == ["[failed: timeout]"]


def test_render_a2ui_middleware_arguments():
    msg = render_call({"surfaceId": "list", "components": COMPONENTS, "data": DATA})
    s = surfaces_from_messages([msg])["list"]
    assert s.catalog_id == "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
    assert render_surface(s) == EXPECTED


def test_render_a2ui_arguments_with_an_operation_list():
    msg = render_call({"surfaceId": "list", "a2ui_operations": ops()})
    assert render_surface(surfaces_from_messages([msg])["list"]) == EXPECTED


def test_render_a2ui_wire_dict_and_legacy_tool():
    wire = {
        "role": "assistant",
        "id": "a",
        "toolCalls": [
            {
                "id": "t",
                "type": "function",
                "function": {
                    "name": "send_a2ui_json_to_client",
                    "arguments": json.dumps({"a2ui_json": json.dumps(ops())}),
                },
            }
        ],
    }
    assert render_surface(surfaces_from_messages([wire])["list"]) == EXPECTED


def test_other_tool_calls_and_tool_messages_are_ignored():
    messages = [
        render_call({"x": 1}, name="add_task"),
        ToolMessage(id="r", tool_call_id="t1", content='{"status":"rendered"}'),
    ]
    assert surfaces_from_messages(messages) == {}


def test_bad_render_arguments_become_store_problems():
    store = SurfaceStore()
    add_message(store, render_call('{"surfaceId": "list", "comp', call_id="t1"))
    add_message(store, render_call("[1, 2]", call_id="t2"))
    add_message(
        store, {"role": "activity", "id": "m", "activityType": "a2ui-surface", "content": 5}
    )
    add_message(
        store,
        {
            "role": "activity",
            "id": "m2",
            "activityType": "a2ui-surface",
            "content": {"a2ui_operations": {"not": "a list"}},
        },
    )
    add_message(store, object())
    add_message(store, {"role": "assistant", "toolCalls": [None, {"function": 3}]})
    assert store.surfaces == {}
    assert store.problems == [
        "tool call 't1' (render_a2ui): arguments are not JSON (Unterminated string starting at)",
        "tool call 't2' (render_a2ui): arguments need a2ui_operations or a string surfaceId",
        "activity 'm': content is not an object",
        "activity 'm2': operations must be a list",
        "message of type object is not readable",
    ]


def test_delete_surface_in_a_later_message_removes_it():
    messages = [
        ActivityMessage(id="m1", activity_type="a2ui-surface", content={"a2ui_operations": ops()}),
        ActivityMessage(
            id="m2",
            activity_type="a2ui-surface",
            content={
                "a2ui_operations": [{"version": "v0.9", "deleteSurface": {"surfaceId": "list"}}]
            },
        ),
    ]
    assert surfaces_from_messages(messages) == {}


def test_task_board_surface_renders_as_text():
    from agui.testing._agents.task_board import board_operations

    ops_ = board_operations(
        [{"id": 1, "title": "Write docs", "done": True}, {"id": 2, "title": "Ship", "done": False}]
    )
    call = render_call({"surfaceId": "task-board", "a2ui_operations": ops_})
    activity = ActivityMessage(
        id="a2ui-surface-t1", activity_type="a2ui-surface", content={"a2ui_operations": ops_}
    )
    s = surfaces_from_messages([call, activity])["task-board"]
    assert s.problems == []
    assert render_surface(s) == [
        "## Task board",
        "2 tasks, 1 done",
        "- [x] Write docs",
        "- [ ] Ship",
    ]


def test_task_board_run_through_the_pipeline_renders_its_board():
    from agui.pipeline._pipeline import Pipeline
    from agui.testing._agents.task_board import board_events, offered_tools
    from agui.types import RunAgentInput

    run_input = RunAgentInput(
        thread_id="t",
        run_id="r",
        messages=[UserMessage(id="u1", content="add milk, eggs")],
        tools=offered_tools(),
        context=[],
        state={},
        forwarded_props={},
    )
    pipeline = Pipeline()
    for event in board_events(run_input):
        pipeline.feed_data(json.dumps(event))
    pipeline.close()
    surfaces = surfaces_from_messages(pipeline.conversation.messages)
    assert list(surfaces) == ["task-board"]
    assert surfaces["task-board"].problems == []
    assert render_surface(surfaces["task-board"]) == [
        "## Task board",
        "2 tasks, 0 done",
        "- [ ] milk",
        "- [ ] eggs",
    ]
