"""``serve-task-board``: a small deterministic agent (no model) with state, tools
and an A2UI v0.9 board.

Commands (the last user message, case-insensitive):

``add X, Y``  adds one task per comma-separated title (one ``add_task`` call each);
``done N``    completes task ``N`` (its ``id``) with a ``complete_task`` call;
``list``      lists the board;
anything else a short help text.

AG-UI has no tool discovery, so the client must offer every tool in
:data:`TOOLS` in ``RunAgentInput.tools``; when one is missing the run fails with
``RUN_ERROR`` (code ``missing_tool``) naming it.

State is ``{"tasks": [{"id": 1, "title": "X", "done": false}, ...]}``, published
from inside each call (STATE_SNAPSHOT when the client sent no task list, else
STATE_DELTA between TOOL_CALL_START and TOOL_CALL_END). It persists across runs
only through the ``RunAgentInput.state`` the client sends back. Other state keys
are kept.

Every run ends by drawing the board as an A2UI v0.9 surface (``surfaceId``
``task-board``), sent twice: as a ``render_a2ui`` tool call whose arguments are
``{"surfaceId": "task-board", "a2ui_operations": [...]}`` (result
``{"status": "rendered"}``), and as an ACTIVITY_SNAPSHOT (``activityType``
``a2ui-surface``, ``messageId`` ``a2ui-surface-<toolCallId>``, content
``{"a2ui_operations": [...]}``).

Ids are ``<runId>-msg-<n>``, ``<runId>-call-<n>``, ``<runId>-result-<n>``; no
timestamps.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Unpack

from agui._jsonvalue import JSONValue, is_json_object
from agui.testing._agents.events import (
    Ids,
    JsonObj,
    input_as_json,
    last_user_text,
    run_error,
    run_finished,
    run_started,
    text_message,
    tool_call,
    tool_result,
)
from agui.types import RunAgentInput, Tool

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from agui.server import CancelToken, Emitter
    from agui.testing._agents import ResumableOptions

__all__ = [
    "BASIC_CATALOG_ID",
    "SURFACE_ID",
    "TOOLS",
    "board_events",
    "board_operations",
    "create_app",
    "offered_tools",
    "task_board_agent",
]

SURFACE_ID = "task-board"
BASIC_CATALOG_ID = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"

#: The tool set the agent needs (wire-form AG-UI ``Tool`` objects, JSON-Schema
#: ``parameters``). ``fixtures/task-board-tools.json`` must hold exactly this.
TOOLS: list[JsonObj] = [
    {
        "name": "add_task",
        "description": "Add one task to the board.",
        "parameters": {
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 1, "description": "The task's title."}
            },
            "required": ["title"],
            "additionalProperties": False,
        },
    },
    {
        "name": "complete_task",
        "description": "Mark the task with this id as done.",
        "parameters": {
            "type": "object",
            "properties": {
                "id": {"type": "integer", "minimum": 1, "description": "The task's id."}
            },
            "required": ["id"],
            "additionalProperties": False,
        },
    },
    {
        "name": "render_a2ui",
        "description": "Draw an A2UI v0.9 surface from a list of A2UI operations.",
        "parameters": {
            "type": "object",
            "properties": {
                "surfaceId": {"type": "string", "description": "The surface to draw."},
                "a2ui_operations": {
                    "type": "array",
                    "description": "A2UI v0.9 messages (createSurface, updateComponents, "
                    "updateDataModel, deleteSurface), applied in order.",
                    "items": {"type": "object"},
                },
            },
            "required": ["surfaceId", "a2ui_operations"],
            "additionalProperties": False,
        },
    },
]

_ADD = re.compile(r"^\s*add\b[:\s]*(?P<titles>.*)$", re.IGNORECASE | re.DOTALL)
_DONE = re.compile(r"^\s*done\s+#?(?P<id>\d+)\s*\.?\s*$", re.IGNORECASE)
_LIST = re.compile(r"^\s*list\b", re.IGNORECASE)
HELP = "I understand: add X, Y · done N · list."


def offered_tools() -> list[Tool]:
    """:data:`TOOLS` as generated ``agui.types.Tool`` structs (to pass as a
    ``Session``'s ``tools``)."""
    import msgspec

    return [msgspec.convert(tool, Tool) for tool in TOOLS]


def _tasks_from_state(state: JSONValue) -> list[JsonObj] | None:
    """The task list of the client's state (deep copy), or None when absent/invalid."""
    if not is_json_object(state) or not isinstance(state.get("tasks"), list):
        return None
    return [copy.deepcopy(t) for t in state["tasks"] if is_json_object(t)]


def _summary(tasks: list[JsonObj]) -> str:
    done = sum(1 for t in tasks if t.get("done"))
    noun = "task" if len(tasks) == 1 else "tasks"
    return f"{len(tasks)} {noun}, {done} done"


def board_operations(tasks: list[JsonObj]) -> list[JsonObj]:
    """The A2UI v0.9 operations drawing ``tasks``: createSurface (basic catalog),
    updateComponents (root Column: title, summary, a List templated over
    ``/tasks`` whose rows are CheckBoxes bound to ``title`` / ``done``) and
    updateDataModel at ``/`` with ``{"tasks": [...], "summary": "N tasks, M done"}``.
    Cumulative: each render repeats createSurface (renderers ignore a repeat)."""
    components = [
        {"id": "root", "component": "Column", "children": ["title", "summary", "tasks"]},
        {"id": "title", "component": "Text", "text": "Task board", "variant": "h2"},
        {"id": "summary", "component": "Text", "text": {"path": "/summary"}, "variant": "caption"},
        {
            "id": "tasks",
            "component": "List",
            "children": {"componentId": "task-row", "path": "/tasks"},
        },
        {
            "id": "task-row",
            "component": "CheckBox",
            "label": {"path": "title"},
            "value": {"path": "done"},
        },
    ]
    model = {
        "tasks": [
            {"id": t.get("id"), "title": t.get("title"), "done": bool(t.get("done"))} for t in tasks
        ],
        "summary": _summary(tasks),
    }
    return [
        {
            "version": "v0.9",
            "createSurface": {"surfaceId": SURFACE_ID, "catalogId": BASIC_CATALOG_ID},
        },
        {
            "version": "v0.9",
            "updateComponents": {"surfaceId": SURFACE_ID, "components": components},
        },
        {
            "version": "v0.9",
            "updateDataModel": {"surfaceId": SURFACE_ID, "path": "/", "value": model},
        },
    ]


class _Board:
    """One run's view of the board: tasks, and whether the client has a task list."""

    def __init__(self, inp: JsonObj) -> None:
        state = inp.get("state")
        self.base: JsonObj = dict(state) if is_json_object(state) else {}
        tasks = _tasks_from_state(state)
        self.client_has_tasks = tasks is not None
        self.tasks: list[JsonObj] = tasks or []

    def publish(self, patch: list[JsonObj]) -> JsonObj:
        """A STATE_DELTA with ``patch``, or a STATE_SNAPSHOT of the whole state the
        first time when the client sent no task list."""
        if self.client_has_tasks:
            return {"type": "STATE_DELTA", "delta": copy.deepcopy(patch)}
        self.client_has_tasks = True
        return {
            "type": "STATE_SNAPSHOT",
            "snapshot": copy.deepcopy({**self.base, "tasks": self.tasks}),
        }

    def find(self, task_id: int) -> int | None:
        for i, task in enumerate(self.tasks):
            if task.get("id") == task_id:
                return i
        return None


def _call_with_state(
    ids: Ids,
    name: str,
    args: JsonObj,
    state_event_after: Callable[[], JsonObj],
    result: JSONValue,
    parent: str,
) -> Iterator[JsonObj]:
    """START, ARGS, <state event>, END, RESULT (state published from inside the call)."""
    call_id = ids.tool_call()
    start, *rest = tool_call(call_id, name, [json.dumps(args)], parent_message_id=parent)
    yield start
    yield rest[0]  # ARGS
    yield state_event_after()
    yield rest[1]  # END
    yield tool_result(ids.result(), call_id, json.dumps(result))


def _add(board: _Board, ids: Ids, titles: list[str], parent: str) -> Iterator[JsonObj]:
    for title in titles:
        task = {
            "id": max(
                (t.get("id", 0) for t in board.tasks if isinstance(t.get("id"), int)), default=0
            )
            + 1,
            "title": title,
            "done": False,
        }

        def publish(task: JsonObj = task) -> JsonObj:
            board.tasks.append(task)
            return board.publish([{"op": "add", "path": "/tasks/-", "value": task}])

        yield from _call_with_state(ids, "add_task", {"title": title}, publish, task, parent)


def _reply(ids: Ids, text: str) -> Iterator[JsonObj]:
    yield from text_message(ids.message(), text)


def _render(ids: Ids, tasks: list[JsonObj]) -> Iterator[JsonObj]:
    ops = board_operations(tasks)
    call_id = ids.tool_call()
    args = json.dumps({"surfaceId": SURFACE_ID, "a2ui_operations": ops}, ensure_ascii=False)
    yield from tool_call(call_id, "render_a2ui", [args])
    yield tool_result(ids.result(), call_id, json.dumps({"status": "rendered"}))
    yield {
        "type": "ACTIVITY_SNAPSHOT",
        "messageId": f"a2ui-surface-{call_id}",
        "activityType": "a2ui-surface",
        "content": {"a2ui_operations": ops},
        "replace": True,
    }


def _listing(tasks: list[JsonObj]) -> str:
    if not tasks:
        return "The board is empty."
    lines = [f"{t.get('id')}. [{'x' if t.get('done') else ' '}] {t.get('title')}" for t in tasks]
    return "\n".join([f"Board ({_summary(tasks)}):", *lines])


def board_events(run_input: RunAgentInput) -> Iterator[JsonObj]:
    """Every event of one task-board run, in order (``run_input``: a
    ``RunAgentInput`` struct or its wire JSON). Deterministic; no I/O."""
    inp = input_as_json(run_input)
    ids = Ids(str(inp.get("runId", "run")))
    yield run_started(inp)
    offered = {t.get("name") for t in inp.get("tools") or () if is_json_object(t)}
    missing = [t["name"] for t in TOOLS if t["name"] not in offered]
    if missing:
        yield run_error(
            "task-board needs the client to offer the tool(s) "
            + ", ".join(missing)
            + " in RunAgentInput.tools (AG-UI has no tool discovery)",
            "missing_tool",
        )
        return
    board = _Board(inp)
    text = last_user_text(inp).strip()
    if (m := _ADD.match(text)) is not None:
        titles = [t.strip() for t in m["titles"].split(",") if t.strip()]
        if titles:
            parent = ids.message()
            noun = "task" if len(titles) == 1 else "tasks"
            yield from text_message(parent, f"Adding {len(titles)} {noun}.")
            yield from _add(board, ids, titles, parent)
            yield from _reply(ids, f"Added: {', '.join(titles)}. {_summary(board.tasks)}.")
        else:
            yield from _reply(ids, "Add what? Try: add buy milk, call Ana.")
    elif (m := _DONE.match(text)) is not None:
        task_id = int(m["id"])
        index = board.find(task_id)
        if index is None:
            yield from _reply(ids, f"There is no task {task_id}.")
        elif board.tasks[index].get("done"):
            yield from _reply(ids, f"Task {task_id} is already done.")
        else:
            parent = ids.message()
            yield from text_message(parent, f"Completing task {task_id}.")

            def publish(i: int = index) -> JsonObj:
                op = "replace" if "done" in board.tasks[i] else "add"
                board.tasks[i]["done"] = True
                return board.publish([{"op": op, "path": f"/tasks/{i}/done", "value": True}])

            yield from _call_with_state(
                ids,
                "complete_task",
                {"id": task_id},
                publish,
                board.tasks[index] | {"done": True},
                parent,
            )
            title = board.tasks[index].get("title")
            yield from _reply(ids, f"Done: {title}. {_summary(board.tasks)}.")
    elif _LIST.match(text):
        yield from _reply(ids, _listing(board.tasks))
    else:
        yield from _reply(ids, HELP)
    yield from _render(ids, board.tasks)
    yield run_finished(inp)


async def task_board_agent(run_input: RunAgentInput, emit: Emitter, cancel: CancelToken) -> None:
    """The ``/agent`` handler: emits :func:`board_events` in order."""
    for event in board_events(run_input):
        await emit(event)


def create_app(*, guard: bool = True, **resumable: Unpack[ResumableOptions]) -> Starlette:
    """The serve-task-board ASGI app (Starlette), endpoint ``POST /agent``;
    ``resumable``: ``store``, ``detach_timeout``, ``lease``, ``authorize``,
    ``secret``, ``max_runs`` as :func:`agui.server.create_app` takes them."""
    # lazy: the server extra (starlette, uvicorn) is optional
    from agui import server

    return server.create_app(task_board_agent, path="/agent", guard=guard, **resumable)
