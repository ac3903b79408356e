"""tools/capture.py and the recorded fixtures; tools/drift_tools.py (the
task-board tools drift check)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from agui.client._session import Session
from agui.testing._agents import fake
from agui.transports import HttpTransport, ReplayTransport
from agui.updates import Done, ErrorUpdate

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"

#: recorded fixture -> the user line it was captured with (capture's default ids)
RECORDED = {
    "chunked-run.json": "chunks",
    "call-run.json": "call",
    "approve-run.json": "approve",
    "mixed-run.json": "mixed",
}


def _tool(name: str):
    """Import tools/<name>.py (tools/ is not a package)."""
    if name in sys.modules:
        return sys.modules[name]
    sys.path.insert(0, str(ROOT / "tools"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


capture = _tool("capture")
drift_tools = _tool("drift_tools")


@pytest.fixture(scope="module")
def server(serve):
    # no run log: these tests post capture's fixed runId several times on
    # purpose (a recording names its ids); a resumable server refuses a re-POST
    return serve(fake.create_app(store=None))


async def test_capture_records_exactly_the_events_the_server_sent(server):
    events = capture.capture(server.url + "/agent", "call", run_id="rec-1")
    expected = await fake.scenario_events(capture.request_body("call", run_id="rec-1"))
    assert events == expected
    assert events[0] == {"type": "RUN_STARTED", "threadId": "capture-thread", "runId": "rec-1"}


@pytest.mark.parametrize("fixture", sorted(RECORDED))
async def test_recorded_fixture_matches_what_serve_fake_sends_today(fixture):
    recorded = json.loads((FIXTURES / fixture).read_text(encoding="utf-8"))
    fresh = await fake.scenario_events(capture.request_body(RECORDED[fixture]))
    assert recorded == fresh, (
        f"fixtures/{fixture} is stale: re-record with "
        f"python tools/capture.py URL {RECORDED[fixture]!r} -o fixtures/{fixture}"
    )


@pytest.mark.parametrize("fixture", sorted(RECORDED))
async def test_replaying_a_recorded_run_gives_the_same_updates_as_the_live_run(server, fixture):
    line = RECORDED[fixture]
    ids = {"thread_id": capture.DEFAULT_THREAD}
    live = Session(HttpTransport(server.url + "/agent"), **ids)
    replay = Session(ReplayTransport(FIXTURES / fixture), **ids)
    live_updates = [u async for u in live.send(line, run_id=capture.DEFAULT_RUN)]
    replay_updates = [u async for u in replay.send(line, run_id=capture.DEFAULT_RUN)]
    assert [u for u in live_updates if isinstance(u, ErrorUpdate)] == []
    assert replay_updates == live_updates
    assert live.conversation.messages[1:] == replay.conversation.messages[1:]
    assert live.conversation.state == replay.conversation.state
    assert isinstance(replay_updates[-1], Done)


def test_capture_cli_writes_a_replayable_fixture(server, tmp_path):
    out = tmp_path / "parallel.json"
    assert capture.main([server.url + "/agent", "parallel", "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    events = json.loads(text)
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"
    assert text.count("\n") == len(events) + 2  # one event per line


def test_capture_fails_cleanly_on_an_http_error(server, capsys):
    assert capture.main([server.url + "/raw/http-500", "x"]) == 1
    assert "answered 500" in capsys.readouterr().err


def test_capture_against_a_resumable_server_holding_the_run_says_to_pick_another_run_id(
    serve, capsys
):
    resumable = serve(fake.create_app())  # the default store: a runId runs once
    url = resumable.url + "/agent"
    assert capture.main([url, "chunks", "--run-id", "held-1"]) == 0
    capsys.readouterr()
    assert capture.main([url, "chunks", "--run-id", "held-1"]) == 1
    err = capsys.readouterr().err
    assert "answered 409" in err and "run_exists" in err and "pass --run-id" in err
    assert capture.main([url, "chunks", "--run-id", "held-2"]) == 0


def test_capture_refuses_a_frame_that_is_not_json(server):
    with pytest.raises(capture.CaptureError, match="not JSON"):
        capture.capture(server.url + "/raw/malformed-json", "x")


# --- drift: fixtures/task-board-tools.json vs task_board.TOOLS ----------------------


def test_task_board_tools_fixture_matches_the_agent():
    assert drift_tools.task_board_tool_differences() == []


def test_drift_check_reports_a_tool_the_fixture_lacks_and_a_changed_schema(tmp_path):
    tools = json.loads((FIXTURES / "task-board-tools.json").read_text(encoding="utf-8"))
    tools = [t for t in tools if t["name"] != "render_a2ui"]
    tools[0]["parameters"]["required"] = []
    tools.append({"name": "delete_task", "description": "x", "parameters": {}})
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(tools), encoding="utf-8")
    assert drift_tools.task_board_tool_differences(path) == [
        "tool 'delete_task': in the fixture, the agent does not need it",
        "tool 'render_a2ui': the agent needs it, the fixture lacks it",
        '$.add_task.parameters.required: fixture [] != agent ["title"]',
    ]


def test_drift_check_reports_an_unreadable_fixture_instead_of_raising(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text("{not json", encoding="utf-8")
    (line,) = drift_tools.task_board_tool_differences(path)
    assert line.startswith("tools.json: cannot read the fixture")
    path.write_text('{"name": "add_task"}', encoding="utf-8")
    assert drift_tools.task_board_tool_differences(path) == [
        "tools.json: expected a JSON list of tool objects with a string name"
    ]


def test_drift_check_is_registered_with_nox_drift():
    drift = _tool("drift")
    names = [check.__name__ for check in drift.CHECKS]
    assert "task_board_tools_check" in names
    result = drift_tools.task_board_tools_check()
    assert (result.name, result.differences, result.unexplained) == (
        "task-board tools fixture vs agent",
        [],
        [],
    )


def test_nox_drift_fails_when_the_fixture_and_the_agent_disagree(tmp_path, monkeypatch, capsys):
    drift = _tool("drift")
    bad = tmp_path / "task-board-tools.json"
    bad.write_text(json.dumps([{"name": "add_task", "description": "x"}]), encoding="utf-8")
    monkeypatch.setattr(drift_tools, "FIXTURE", bad)
    assert drift.run_checks([drift_tools.task_board_tools_check]) == 1
    out = capsys.readouterr().out
    assert "DRIFT" in out and "'complete_task': the agent needs it, the fixture lacks it" in out
    monkeypatch.undo()
    assert drift.run_checks([drift_tools.task_board_tools_check]) == 0
