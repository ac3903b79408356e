"""Microsoft Agent Framework's own AG-UI endpoint (``agent-framework-ag-ui``) on loopback,
driven by an offline scripted chat client (``agent_framework_peer``), consumed by agui's
Session and by board-watch.

agent-framework-ag-ui (every release, 1.0.0 to 1.7.0) requires ``ag-ui-protocol<0.2`` and
``fastapi<0.142``; the ``interop`` extra pins ``ag-ui-protocol==1.0.0`` and
``fastapi==0.165.0`` for the other peers, so it cannot share their environment. It has
its own extra, ``interop-maf``, and ``nox -s interop`` runs this module in a venv of its
own (session ``interop_maf``); anywhere else the module is skipped, saying so.
"""

from __future__ import annotations

import io

import pytest

try:
    import agent_framework_ag_ui  # noqa: F401
except ImportError as exc:
    pytest.skip(
        f"agent-framework-ag-ui is not installed ({exc}): it needs ag-ui-protocol<0.2, which "
        "conflicts with the interop extra; `nox -s interop` runs this module in its own venv "
        "(pip install -e '.[interop-maf]')",
        allow_module_level=True,
    )

from agui.updates import MessagesSnapshot, StateChanged, ToolCallArgs
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


@pytest.fixture(scope="module")
def url():
    from tests.interop.agent_framework_peer import app

    with serve(app()) as base:
        yield base + "/agent"


async def test_agent_framework_streamed_text_is_one_assistant_message(url):
    session = session_for(url)
    updates = await session.send("text").collect()
    assert only_done(updates).outcome == "success"
    assert conversation(session.messages) == [
        {"role": "user", "id": "m1", "content": "text"},
        {"role": "assistant", "id": "m2", "content": "Hello from MAF"},
    ]
    # every run ends with a MESSAGES_SNAPSHOT of the thread, repeating what was streamed
    assert MessagesSnapshot(count=2) in updates
    assert session.state is None  # no state unless a tool publishes one


async def test_agent_framework_server_tool_runs_publishes_state_and_the_model_answers(url):
    session = session_for(url)
    updates = await session.send("tool").collect()
    done = only_done(updates)
    assert done.outcome == "success" and done.pending_tool_call_ids == ()
    assert [u.delta for u in updates if isinstance(u, ToolCallArgs)] == [
        '{"title": ',
        '"write tests"}',
    ]
    assert conversation(session.messages) == [
        {"role": "user", "id": "m1", "content": "tool"},
        {
            "role": "assistant",
            "id": "m2",
            "toolCalls": [
                {
                    "id": "call-maf-1",
                    "type": "function",
                    "function": {"name": "add_task", "arguments": '{"title": "write tests"}'},
                },
            ],
        },
        {"role": "tool", "id": "m3", "content": "added write tests", "toolCallId": "call-maf-1"},
        {"role": "assistant", "id": "m4", "content": "done: added write tests"},
    ]
    # the tool's state_update is published as a STATE_SNAPSHOT after its result
    assert [u.state for u in updates if isinstance(u, StateChanged)] == [{"tasks": ["write tests"]}]
    assert session.state == {"tasks": ["write tests"]}


async def test_agent_framework_client_tool_round_trip_is_inferred_pending_then_answers(url):
    session = session_for(url, tools=[CONFIRM])
    first = only_done(await session.send("client").collect())
    # the endpoint speaks AG-UI 0.x: RUN_FINISHED names no pending calls, we infer the
    # unanswered call to a tool this client offered
    assert (first.outcome, first.pending_tool_call_ids) == ("success", ("call-confirm",))
    session.add_tool_result("call-confirm", "yes")
    second = only_done(await session.run().collect())
    assert (second.outcome, second.pending_tool_call_ids) == ("success", ())
    assert conversation(session.messages)[2:] == [
        {"role": "tool", "id": "m3", "content": "yes", "toolCallId": "call-confirm"},
        {"role": "assistant", "id": "m4", "content": "done: yes"},
    ]


async def test_agent_framework_model_failure_is_a_failed_run_with_its_generic_message(url):
    # the endpoint hides the exception's text and sends its class name as the code
    message = "An internal error has occurred while streaming events."
    await fails_with(url, "fail", message, "RuntimeError")


async def test_agent_framework_wire_quirks_we_accept(url):
    content_type, events = await raw_events(url, run_input("tool", threadId="quirks"))
    assert content_type == "text/event-stream; charset=utf-8"
    assert all("timestamp" not in e for e in events)  # no timestamps at all
    assert "protocolVersion" not in events[0] and "outcome" not in events[-1]  # AG-UI 0.x
    types = [e["type"] for e in events]
    # the call's parent text message stays open around the call, its result and the state
    assert types[1:9] == [
        "TEXT_MESSAGE_START",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "STATE_SNAPSHOT",
        "TEXT_MESSAGE_END",
    ]
    assert types[-2:] == ["MESSAGES_SNAPSHOT", "RUN_FINISHED"]


def test_board_watch_shows_the_agent_framework_tool_turn(url):
    from agui._cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = main(["watch", "--url", url], stdin=io.StringIO("tool\n"), stdout=out, stderr=err)
    assert (code, err.getvalue()) == (0, "")
    lines = out.getvalue().splitlines()
    body = [line for line in lines if line.split(" ", 1)[0] in ("call", "result", "text", "state")]
    assert body[:4] == [
        'call    (1) add_task {"title": "write tests"}',
        "result  (1) add_task → added write tests",
        'state   {"tasks": ["write tests"]}',
        "text    done: added write tests",
    ]
    assert "event   messages snapshot: 4 messages" in lines
    assert [line for line in lines if line.startswith("done ")] == ["done    success"]
    assert lines[-1] == "tasks   [ ] write tests"  # the board panel draws the published state


def test_the_check_battery_is_microsoft_agent_frameworks_row_of_the_conformance_table(url):
    from tests.interop.check_table import assert_row, battery

    server = "Microsoft Agent Framework"
    assert_row(server, battery(url, server))
