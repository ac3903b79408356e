"""The backends' event streams, without a server: legal, deterministic, awkward
where they should be. (The over-the-socket tests are in test_backend_fake.py,
test_backend_raw.py and test_backend_task_board.py.)"""

from __future__ import annotations

import json

import msgspec
import pytest

from agui import types as T
from agui.pipeline._normalize import Normalizer
from agui.pipeline._verify import Verifier
from agui.testing._agents import fake, task_board
from agui.testing._agents.raw import RAW_STREAMS, SPLIT_UTF8_TEXT, stream_bytes

SCENARIO_LINES = {
    "chunks": "chunks",
    "call": "call",
    "parallel": "parallel",
    "mixed": "mixed",
    "approve": "approve",
    "busy": "busy write report, review PR",
    "fail": "fail",
    "default": "hello there",
}


def _input(line: str, run_id: str = "run-1", **extra) -> dict:
    return {
        "threadId": "thread-1",
        "runId": run_id,
        "messages": [{"id": "u1", "role": "user", "content": line}],
        **extra,
    }


def _violations(events: list[dict]) -> list[str]:
    """Feed wire-form events through the normalizer and verifier; rule codes found."""
    norm, verifier, found = Normalizer(), Verifier(), []
    for position, raw in enumerate(events):
        result = norm.feed(msgspec.convert(raw, T.Event))
        found += [v.code for v in result.violations]
        for event in result.events:
            violation = verifier.check(event, position)
            if violation is not None:
                found.append(violation.code)
    end = verifier.finish()
    return found + ([end.code] if end else [])


@pytest.mark.parametrize("name", sorted(SCENARIO_LINES))
async def test_every_scenario_is_a_legal_stream(name):
    events = await fake.scenario_events(_input(SCENARIO_LINES[name]))
    assert fake.scenario_name(_input(SCENARIO_LINES[name])) == name
    assert _violations(events) == []
    assert all("timestamp" not in e for e in events)


async def test_scenarios_are_deterministic_given_the_run_id():
    first = await fake.scenario_events(_input("mixed", "run-7"))
    again = await fake.scenario_events(_input("mixed", "run-7"))
    assert first == again
    ids = {e.get("messageId") for e in first} | {e.get("toolCallId") for e in first}
    assert {i for i in ids if i} <= {i for i in ids if i and i.startswith("run-7-")}


def test_scenario_is_the_first_word_of_the_last_user_message_case_insensitive():
    inp = {
        "threadId": "t",
        "runId": "r",
        "messages": [
            {"id": "u1", "role": "user", "content": "chunks"},
            {"id": "a1", "role": "assistant", "content": "ok"},
            {"id": "u2", "role": "user", "content": [{"type": "text", "text": "CALL: now"}]},
        ],
    }
    assert fake.scenario_name(inp) == "call"
    assert fake.scenario_name(_input("whatever chunks")) == "default"
    assert fake.scenario_name(_input("")) == "default"


async def test_chunks_scenario_puts_the_id_only_on_the_first_fragment():
    events = await fake.scenario_events(_input("chunks"))
    chunks = [e for e in events if e["type"] == "TEXT_MESSAGE_CHUNK"]
    assert [("messageId" in c) for c in chunks] == [True] + [False] * (len(chunks) - 1)
    assert "" in [c["delta"] for c in chunks]
    # the ZWJ sequence is cut between its parts
    assert chunks[0]["delta"].endswith("\U0001f468") and chunks[1]["delta"].startswith("\u200d")


def test_call_arguments_are_cut_between_a_backslash_and_what_it_escapes():
    fragments = fake._call_fragments()
    assert "".join(fragments) == fake.CALL_ARGUMENTS
    assert any(f.endswith("C:\\") for f in fragments)  # "\\" split in two
    assert any(f.endswith("\\") and not f.endswith("C:\\") for f in fragments)  # before \"
    assert any(f.endswith("\\ud8") for f in fragments)  # inside a \u escape
    assert json.loads(fake.CALL_ARGUMENTS)["smile"] == "\U0001f600"


async def test_approve_resume_with_unknown_interrupt_fails_with_a_run_error():
    events = await fake.scenario_events(
        _input("approve", resume=[{"interruptId": "nope", "status": "resolved"}])
    )
    assert events[-1] == {
        "type": "RUN_ERROR",
        "message": "resume names unknown interrupt 'nope'",
        "code": "unknown_interrupt",
    }


async def test_busy_resume_without_state_fails_with_missing_state():
    events = await fake.scenario_events(
        _input("busy", resume=[{"interruptId": "run-1-continue", "status": "resolved"}])
    )
    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "missing_state"


def _board_input(line: str, **extra) -> dict:
    return _input(line, tools=task_board.TOOLS, **extra)


@pytest.mark.parametrize("line", ["add a, b", "done 1", "list", "help me"])
def test_every_task_board_run_is_a_legal_stream(line):
    state = {"tasks": [{"id": 1, "title": "a", "done": False}]}
    events = list(task_board.board_events(_board_input(line, state=state)))
    assert _violations(events) == []
    assert events[-2]["type"] == "ACTIVITY_SNAPSHOT"


def test_task_board_publishes_state_between_tool_call_start_and_end():
    events = list(task_board.board_events(_board_input("add a, b")))
    types = [e["type"] for e in events]
    first = types.index("TOOL_CALL_START")
    assert types[first : first + 4] == [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "STATE_SNAPSHOT",
        "TOOL_CALL_END",
    ]
    second = types.index("TOOL_CALL_START", first + 1)
    assert types[second + 2] == "STATE_DELTA"
    assert events[second + 2]["delta"] == [
        {"op": "add", "path": "/tasks/-", "value": {"id": 2, "title": "b", "done": False}}
    ]


def test_task_board_surface_is_sent_as_tool_call_and_activity_with_the_same_operations():
    events = list(task_board.board_events(_board_input("add a")))
    render = next(e for e in events if e.get("toolCallName") == "render_a2ui")
    args = "".join(
        e["delta"]
        for e in events
        if e["type"] == "TOOL_CALL_ARGS" and e["toolCallId"] == render["toolCallId"]
    )
    activity = next(e for e in events if e["type"] == "ACTIVITY_SNAPSHOT")
    assert activity["activityType"] == "a2ui-surface"
    assert activity["messageId"] == f"a2ui-surface-{render['toolCallId']}"
    assert json.loads(args) == {
        "surfaceId": "task-board",
        "a2ui_operations": activity["content"]["a2ui_operations"],
    }
    ops = activity["content"]["a2ui_operations"]
    assert [next(k for k in op if k != "version") for op in ops] == [
        "createSurface",
        "updateComponents",
        "updateDataModel",
    ]
    assert all(op["version"] == "v0.9" for op in ops)
    assert ops[2]["updateDataModel"]["value"] == {
        "tasks": [{"id": 1, "title": "a", "done": False}],
        "summary": "1 task, 0 done",
    }


def test_task_board_missing_tool_fails_with_a_run_error_naming_it():
    tools = [t for t in task_board.TOOLS if t["name"] != "render_a2ui"]
    events = list(task_board.board_events(_input("list", tools=tools)))
    assert [e["type"] for e in events] == ["RUN_STARTED", "RUN_ERROR"]
    assert "render_a2ui" in events[1]["message"] and "add_task" not in events[1]["message"]
    assert events[1]["code"] == "missing_tool"


def test_raw_split_utf8_cuts_inside_multibyte_sequences():
    writes = list(RAW_STREAMS["split-utf8"].writes("t", "r"))
    undecodable = 0
    for w in writes:
        try:
            w.decode("utf-8")
        except UnicodeDecodeError:
            undecodable += 1
    assert undecodable >= 3
    assert SPLIT_UTF8_TEXT in b"".join(writes).decode("utf-8")


def test_raw_oversized_frame_goes_past_the_cap_lazily():
    writes = RAW_STREAMS["oversized-frame"].writes("t", "r")
    total = sum(len(w) for w in writes)
    assert total > 10 * 1024 * 1024


def test_raw_streams_carry_the_requested_ids():
    body = stream_bytes("crlf-framing", "T-1", "R-1")
    assert b'"threadId":"T-1","runId":"R-1"' in body and b"\r\n\r\n" in body


def test_task_board_operations_are_valid_a2ui_v09_messages():
    from agui_generated import a2ui_v09 as A

    tasks = [{"id": 1, "title": "a", "done": True}, {"id": 2, "title": "b", "done": False}]
    create, update, data = task_board.board_operations(tasks)
    surface = msgspec.convert(create, A.CreateSurfaceMessage).create_surface
    assert (surface.surface_id, surface.catalog_id) == ("task-board", task_board.BASIC_CATALOG_ID)
    components = msgspec.convert(update, A.UpdateComponentsMessage).update_components.components
    assert [type(c).__name__ for c in components] == ["Column", "Text", "Text", "List", "CheckBox"]
    assert components[0].id == "root"
    model = msgspec.convert(data, A.UpdateDataModelMessage).update_data_model
    assert (model.path, model.value["summary"]) == ("/", "2 tasks, 1 done")
