"""CrewAI's AG-UI endpoint (``ag-ui-crewai``, a Flow) on loopback, the LLM mocked by
LiteLLM's own offline mock (``crewai_peer``), consumed by agui's Session and by board-watch.

``ag-ui-crewai`` requires ``fastapi<0.116`` and ``pydantic<2.13`` through crewai, which conflict
with the ``interop`` pins; it has its own extra, ``interop-crewai``, and ``nox -s
interop_crewai`` runs this module in a venv of its own; anywhere else it is skipped.
"""

from __future__ import annotations

import io

import pytest

try:
    import ag_ui_crewai  # noqa: F401
except ImportError as exc:
    pytest.skip(
        f"ag-ui-crewai is not installed ({exc}); `nox -s interop_crewai` runs this module in "
        "its own venv (pip install -e '.[interop-crewai]')",
        allow_module_level=True,
    )

from agui.errors import RunError
from agui.updates import Done, ErrorUpdate, MessagesSnapshot, StepChanged, WarningUpdate
from tests.interop.interop_helpers import (
    CONFIRM,
    conversation,
    only_done,
    outcomes,
    raw_events,
    run_input,
    serve,
    session_for,
)


@pytest.fixture(scope="module")
def url():
    from tests.interop.crewai_peer import app

    with serve(app()) as base:
        yield base + "/agent"


async def test_crewai_streamed_text_is_one_assistant_message(url):
    session = session_for(url)
    updates = await session.send("text").collect()
    assert only_done(updates).outcome == "success"
    # the closing MESSAGES_SNAPSHOT gives the streamed message a new id: merged, not doubled
    assert conversation(session.messages) == [
        {"role": "user", "id": "m1", "content": "text"},
        {"role": "assistant", "id": "m2", "content": "Hello from the crew"},
    ]
    assert [u.count for u in updates if isinstance(u, MessagesSnapshot)] == [2]
    assert StepChanged("chat", True) in updates and StepChanged("chat", False) in updates
    # the whole flow state is published, LiteLLM-shaped messages included
    assert session.state["messages"][-1]["content"] == "Hello from the crew"
    assert session.state["tasks"] == []


async def test_crewai_server_tool_runs_changes_state_and_the_model_answers(url):
    session = session_for(url)
    updates = await session.send("tool").collect()
    done = only_done(updates)
    assert done.outcome == "success" and done.pending_tool_call_ids == ()
    assert conversation(session.messages) == [
        {"role": "user", "id": "m1", "content": "tool"},
        {
            "role": "assistant",
            "id": "m2",
            "content": "",
            "toolCalls": [
                {
                    "id": "crew-call-1",
                    "type": "function",
                    "function": {"name": "add_task", "arguments": '{"title": "write tests"}'},
                },
            ],
        },
        {"role": "tool", "id": "m3", "content": "added write tests", "toolCallId": "crew-call-1"},
        {"role": "assistant", "id": "m4", "content": "done: added write tests"},
    ]
    assert session.state["tasks"] == ["write tests"]


async def test_crewai_client_tool_round_trip_through_the_closing_snapshot(url):
    """A call the flow does not stream reaches the client only in the closing
    MESSAGES_SNAPSHOT; RUN_FINISHED names no pending call and none is inferred (the
    pending-call rule reads streamed calls): the client answers it with add_tool_result."""
    session = session_for(url, tools=[CONFIRM])
    first = only_done(await session.send("client").collect())
    assert (first.outcome, first.pending_tool_call_ids) == ("success", ())
    [call] = session.messages[-1].tool_calls
    assert (call.id, call.function.name) == ("crew-call-2", "confirm")
    session.add_tool_result("crew-call-2", "yes")
    second = only_done(await session.run().collect())
    assert (second.outcome, second.pending_tool_call_ids) == ("success", ())
    assert conversation(session.messages)[2:] == [
        {"role": "tool", "id": "m3", "content": "yes", "toolCallId": "crew-call-2"},
        {"role": "assistant", "id": "m4", "content": "done: yes"},
    ]


async def test_crewai_flow_failure_is_a_failed_run_with_extra_ids_stripped(url):
    session = session_for(url)
    judged = outcomes(await session.send("error").collect())
    # RUN_ERROR carries threadId and runId, which the schema does not have
    assert [(type(u), getattr(u, "code", None)) for u in judged] == [
        (WarningUpdate, "unknown_property"),
        (WarningUpdate, "unknown_property"),
        (ErrorUpdate, None),
        (Done, None),
    ]
    error = judged[2].error
    assert isinstance(error, RunError) and judged[2].fatal
    assert error.code == "AGUI_CREWAI_FLOW_ERROR_RUNTIMEERROR"
    assert error.message.endswith("CrewAI flow failed; see server logs")
    assert judged[3].outcome == "failed"
    assert conversation(session.messages) == [{"role": "user", "id": "m1", "content": "error"}]


async def test_crewai_wire_quirks_we_accept(url):
    content_type, events = await raw_events(url, run_input("client", threadId="quirks"))
    assert content_type == "text/event-stream; charset=utf-8"
    assert events[0]["protocolVersion"] == "1.0" and "outcome" not in events[-1]
    # a non-streamed tool call has no TOOL_CALL_* events: only the closing snapshot has it
    assert [e["type"] for e in events] == [
        "RUN_STARTED",
        "STEP_STARTED",
        "MESSAGES_SNAPSHOT",
        "STATE_SNAPSHOT",
        "STEP_FINISHED",
        "RUN_FINISHED",
    ]
    _, failed = await raw_events(url, run_input("error", threadId="quirks-error"))
    assert failed[-1]["type"] == "RUN_ERROR" and {"threadId", "runId"} <= failed[-1].keys()


def test_board_watch_shows_the_crewai_tool_turn(url):
    from agui._cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["watch", "--url", url, "--thread", "crewai-bw"],
        stdin=io.StringIO("tool\n"),
        stdout=out,
        stderr=err,
    )
    assert (code, err.getvalue()) == (0, "")
    lines = out.getvalue().splitlines()
    assert "text    done: added write tests" in lines
    assert [line for line in lines if line.startswith("done ")] == ["done    success"]
