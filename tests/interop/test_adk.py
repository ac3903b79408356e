"""Google ADK's AG-UI endpoint (``ag-ui-adk``) on loopback, driven by an offline scripted
model (``adk_peer``), consumed by agui's Session and by board-watch.

``ag-ui-adk`` pulls in google-adk and its dependencies (about 80 packages); it has its own
extra, ``interop-adk``, and ``nox -s interop_adk`` runs this module in a venv of its own;
anywhere else the module is skipped, saying so.
"""

from __future__ import annotations

import io

import pytest

try:
    import ag_ui_adk  # noqa: F401
except ImportError as exc:
    pytest.skip(
        f"ag-ui-adk is not installed ({exc}); `nox -s interop_adk` runs this module in its own "
        "venv (pip install -e '.[interop-adk]')",
        allow_module_level=True,
    )

from agui.updates import StateChanged, TextDelta
from tests.interop.interop_helpers import (
    CONFIRM,
    conversation,
    fails_with,
    only_done,
    raw_events,
    run_input,
    serve,
    session_for,
)

#: what ag-ui-adk adds to every state it publishes (the ADK session's own keys)
ADK_KEYS = {"_ag_ui_app_name": "board", "_ag_ui_user_id": "tester"}


@pytest.fixture(scope="module")
def url():
    from tests.interop.adk_peer import app

    with serve(app()) as base:
        yield base + "/agent"


async def test_adk_streamed_text_is_one_assistant_message(url):
    session = session_for(url)
    updates = await session.send("text").collect()
    assert only_done(updates).outcome == "success"
    assert [u.delta for u in updates if isinstance(u, TextDelta)] == ["Hello ", "from ADK"]
    assert conversation(session.messages) == [
        {"role": "user", "id": "m1", "content": "text"},
        {"role": "assistant", "id": "m2", "content": "Hello from ADK"},
    ]
    # every run ends with a STATE_SNAPSHOT of the ADK session state, its own keys included
    assert session.state == {"_ag_ui_thread_id": session.thread_id, **ADK_KEYS}


async def test_adk_server_tool_runs_changes_state_and_the_model_answers(url):
    session = session_for(url)
    updates = await session.send("tool").collect()
    done = only_done(updates)
    assert done.outcome == "success" and done.pending_tool_call_ids == ()
    result = '{"added": "write tests", "count": 1}'
    assert conversation(session.messages) == [
        {"role": "user", "id": "m1", "content": "tool"},
        {
            "role": "assistant",
            "id": "m2",
            "toolCalls": [
                {
                    "id": "adk-call-1",
                    "type": "function",
                    "function": {"name": "add_task", "arguments": '{"title":"write tests"}'},
                },
            ],
        },
        {"role": "tool", "id": "m3", "content": result, "toolCallId": "adk-call-1"},
        {"role": "assistant", "id": "m4", "content": f"done: {result}"},
    ]
    tasks = [{"title": "write tests", "done": False}]
    # a STATE_DELTA after the result (on the empty client state), then the whole session state
    assert [u.state for u in updates if isinstance(u, StateChanged)] == [
        {"tasks": tasks},
        {"_ag_ui_thread_id": session.thread_id, **ADK_KEYS, "tasks": tasks},
    ]


async def test_adk_client_tool_round_trip_is_inferred_pending_then_answers(url):
    session = session_for(url, tools=[CONFIRM])
    first = only_done(await session.send("client").collect())
    # RUN_STARTED declares protocol 1.0, yet RUN_FINISHED names no pending calls: we infer
    # the unanswered call to a tool this client offered
    assert (first.outcome, first.pending_tool_call_ids) == ("success", ("adk-call-2",))
    session.add_tool_result("adk-call-2", "yes")
    second = only_done(await session.run().collect())
    assert (second.outcome, second.pending_tool_call_ids) == ("success", ())
    assert conversation(session.messages)[1:] == [
        {
            "role": "assistant",
            "id": "m2",
            "toolCalls": [
                {
                    "id": "adk-call-2",
                    "type": "function",
                    "function": {"name": "confirm", "arguments": '{"question":"Ship it?"}'},
                },
            ],
        },
        {"role": "tool", "id": "m3", "content": "yes", "toolCallId": "adk-call-2"},
        # ADK wraps the client's result before the model sees it
        {
            "role": "assistant",
            "id": "m4",
            "content": 'done: {"result": "yes", "status": "completed", "success": true}',
        },
    ]


async def test_adk_model_failure_is_a_failed_run_with_its_message(url):
    await fails_with(url, "error", "the scripted model failed", "BACKGROUND_EXECUTION_ERROR")


async def test_adk_wire_quirks_we_accept(url):
    content_type, events = await raw_events(url, run_input("tool", threadId="quirks"))
    assert content_type == "text/event-stream; charset=utf-8"
    assert events[0]["protocolVersion"] == "1.0" and "outcome" not in events[-1]
    types = [e["type"] for e in events]
    assert types == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "STATE_DELTA",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STATE_SNAPSHOT",
        "RUN_FINISHED",
    ]


def test_board_watch_shows_the_adk_tool_turn(url):
    from agui._cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = main(["watch", "--url", url], stdin=io.StringIO("tool\n"), stdout=out, stderr=err)
    assert (code, err.getvalue()) == (0, "")
    lines = out.getvalue().splitlines()
    body = [line for line in lines if line.split(" ", 1)[0] in ("call", "result", "text")]
    assert body[:3] == [
        'call    (1) add_task {"title": "write tests"}',
        'result  (1) add_task → {"added": "write tests", "count": 1}',
        'text    done: {"added": "write tests", "count": 1}',
    ]
    assert [line for line in lines if line.startswith("done ")] == ["done    success"]


async def test_adk_confirmation_is_an_interrupt_outcome_resumed_through_resume():
    """``emit_interrupt_outcome=True``: a tool that requires confirmation pauses the run on
    the spec's interrupt (reason ``confirmation``, the hint as its message); the answer goes
    back as ``RunAgentInput.resume`` and the confirmed tool runs."""
    from agui.client._interrupts import resolved
    from agui.updates import Paused, ToolResult
    from tests.interop.adk_peer import app

    with serve(app(interrupts=True)) as base:
        session = session_for(base + "/agent")
        updates = await session.send("delete").collect()
        assert only_done(updates).outcome == "interrupted"
        [paused] = [u for u in updates if isinstance(u, Paused)]
        [interrupt] = paused.interrupts
        assert interrupt.reason == "confirmation" and interrupt.tool_call_id == interrupt.id
        assert interrupt.message.startswith("Please approve or reject the tool call delete_task()")
        assert interrupt.metadata["adk"]["originalFunctionCall"]["name"] == "delete_task"
        resumed = await session.resume({interrupt.id: resolved({"confirmed": True})}).collect()
    assert only_done(resumed).outcome == "success" and session.pending_interrupts == []
    assert [u.content for u in resumed if isinstance(u, ToolResult)] == ['{"deleted": "old"}']
    assert session.messages[-1].content == 'done: {"deleted": "old"}'


async def test_adk_confirmation_without_the_outcome_is_a_tool_call_nobody_offered(url):
    """The default (``emit_interrupt_outcome=False``): the pause is only a call to
    ``adk_request_confirmation``, a tool the client did not offer, and RUN_FINISHED names no
    interrupt: the run is a success with nothing pending (as for the reference client)."""
    session = session_for(url)
    updates = await session.send("delete").collect()
    done = only_done(updates)
    assert (done.outcome, done.pending_tool_call_ids) == ("success", ())
    calls = [
        c.function.name for m in session.messages for c in (getattr(m, "tool_calls", None) or [])
    ]
    assert calls == ["delete_task", "adk_request_confirmation"]
    assert session.pending_interrupts == []


def test_board_watch_shows_the_adk_confirmation_question_before_asking():
    from agui._cli.main import main
    from tests.interop.adk_peer import app

    with serve(app(interrupts=True)) as base:
        out, err = io.StringIO(), io.StringIO()
        code = main(
            # a thread of its own: ag-ui-adk's default session manager is shared by every
            # ADKAgent of the process, and the process's default thread met another server
            ["watch", "--url", base + "/agent", "--thread", "adk-confirm"],
            stdin=io.StringIO("delete\nn\n"),
            stdout=out,
            stderr=err,
        )
    assert (code, err.getvalue()) == (0, "")
    lines = out.getvalue().splitlines()
    [pause] = [line for line in lines if line.startswith("pause ")]
    assert " confirmation on (2) adk_request_confirmation: Please approve or reject" in pause
    kinds = [line.split(" ", 1)[0] for line in lines]
    assert kinds.index("pause") < kinds.index("answer")
