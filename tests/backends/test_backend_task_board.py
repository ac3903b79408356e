"""task-board over a real socket: tools offered by the client, state carried
across runs, the A2UI board, and the RUN_ERROR for a missing tool."""

from __future__ import annotations

import json

import pytest

from agui.client._session import Session
from agui.errors import RunError
from agui.server import BackgroundServer
from agui.testing._agents import task_board
from agui.transports import HttpTransport
from agui.types import message_role
from agui.updates import ActivityChanged, Done, ErrorUpdate, StateChanged, TextEnded, ToolCallEnded


@pytest.fixture(scope="module")
def server():
    with BackgroundServer(task_board.create_app()) as srv:
        yield srv


def _session(server, tools=None) -> Session:
    offered = task_board.offered_tools() if tools is None else tools
    return Session(HttpTransport(server.url + "/agent"), thread_id="board", tools=offered)


async def _send(session, text) -> list:
    return [u async for u in session.send(text)]


def _of(updates, cls) -> list:
    return [u for u in updates if isinstance(u, cls)]


async def test_task_board_add_publishes_state_inside_each_call_and_answers(server):
    session = _session(server)
    updates = await _send(session, "add buy milk, call Ana")
    assert _of(updates, Done)[-1].outcome == "success"
    assert session.conversation.state == {
        "tasks": [
            {"id": 1, "title": "buy milk", "done": False},
            {"id": 2, "title": "call Ana", "done": False},
        ]
    }
    kinds = [type(u).__name__ for u in updates]
    for call in [
        u for u in updates if type(u).__name__ == "ToolCallStarted" and u.name == "add_task"
    ]:
        start = updates.index(call)
        end = kinds.index("ToolCallEnded", start)
        assert any(isinstance(u, StateChanged) for u in updates[start:end])
    assert [
        json.loads(e.arguments) for e in _of(updates, ToolCallEnded) if e.name == "add_task"
    ] == [{"title": "buy milk"}, {"title": "call Ana"}]
    assert "Added: buy milk, call Ana. 2 tasks, 0 done." in [
        t.text for t in _of(updates, TextEnded)
    ]


async def test_task_board_state_persists_across_runs_through_the_state_sent_back(server):
    session = _session(server)
    await _send(session, "add a, b")
    updates = await _send(session, "done 2")
    assert session.conversation.state["tasks"] == [
        {"id": 1, "title": "a", "done": False},
        {"id": 2, "title": "b", "done": True},
    ]
    assert [s.patch for s in _of(updates, StateChanged)] == [
        [{"op": "replace", "path": "/tasks/1/done", "value": True}]
    ]
    listing = await _send(session, "list")
    assert [t.text for t in _of(listing, TextEnded)] == [
        "Board (2 tasks, 1 done):\n1. [ ] a\n2. [x] b"
    ]


async def test_task_board_draws_the_board_as_an_a2ui_surface_activity(server):
    session = _session(server)
    updates = await _send(session, "add write tests")
    (activity,) = _of(updates, ActivityChanged)
    assert activity.activity_type == "a2ui-surface"
    ops = activity.content["a2ui_operations"]
    assert ops == task_board.board_operations([{"id": 1, "title": "write tests", "done": False}])
    render = [e for e in _of(updates, ToolCallEnded) if e.name == "render_a2ui"]
    assert json.loads(render[0].arguments) == {"surfaceId": "task-board", "a2ui_operations": ops}
    roles = [message_role(m) for m in session.conversation.messages]
    assert "activity" in roles
    # activity messages never go back to the agent
    assert "activity" not in [message_role(m) for m in session.conversation.input_messages()]


async def test_task_board_board_renders_as_text_from_its_a2ui_surface(server):
    a2ui = pytest.importorskip("agui.a2ui")
    session = _session(server)
    await _send(session, "add buy milk, call Ana")
    await _send(session, "done 1")
    surfaces = a2ui.surfaces_from_messages(session.conversation.messages)
    lines = a2ui.render_surface(surfaces["task-board"])
    text = "\n".join(lines)
    assert "Task board" in text and "2 tasks, 1 done" in text
    assert "buy milk" in text and "call Ana" in text


async def test_task_board_missing_tool_fails_with_a_run_error_naming_it(server):
    tools = [t for t in task_board.offered_tools() if t.name != "complete_task"]
    session = _session(server, tools=tools)
    updates = await _send(session, "add a")
    (error,) = [u.error for u in _of(updates, ErrorUpdate) if isinstance(u.error, RunError)]
    assert error.code == "missing_tool"
    assert "complete_task" in error.message and "add_task" not in error.message
    assert _of(updates, Done)[-1].outcome == "failed"
    assert session.conversation.state in (None, {})


async def test_task_board_done_for_an_unknown_task_answers_without_a_call(server):
    session = _session(server)
    updates = await _send(session, "done 9")
    assert [t.text for t in _of(updates, TextEnded)] == ["There is no task 9."]
    assert [e.name for e in _of(updates, ToolCallEnded)] == ["render_a2ui"]
    assert _of(updates, Done)[-1].outcome == "success"
