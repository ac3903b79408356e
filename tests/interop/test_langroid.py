"""Langroid's AG-UI endpoint (``ag-ui-langroid``) on loopback, on Langroid's own mock model
with tiktoken's download avoided (``langroid_peer``), consumed by agui's Session and by
board-watch.

``ag-ui-langroid`` pulls in langroid (about 180 packages, onnxruntime and qdrant-client among
them, which dev has no other use for); it has its own extra, ``interop-langroid``, and ``nox -s
interop_langroid`` runs this module in a venv of its own; anywhere else it is skipped.
"""

from __future__ import annotations

import io
import re

import pytest

try:
    import ag_ui_langroid  # noqa: F401
except ImportError as exc:
    pytest.skip(
        f"ag-ui-langroid is not installed ({exc}); `nox -s interop_langroid` runs this module "
        "in its own venv (pip install -e '.[interop-langroid]')",
        allow_module_level=True,
    )

from agui.updates import StateChanged, ToolCallEnded, ToolResult
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

ANSWER = 'I\'ve successfully executed the add_task tool. Here\'s the result: {\n  "result": "added write tests"\n}'


@pytest.fixture(scope="module")
def url():
    from tests.interop.langroid_peer import app

    with serve(app()) as base:
        yield base + "/agent"


async def test_langroid_text_is_one_assistant_message(url):
    session = session_for(url)
    updates = await session.send("text").collect()
    assert only_done(updates).outcome == "success"
    assert conversation(session.messages) == [
        {"role": "user", "id": "m1", "content": "text"},
        {"role": "assistant", "id": "m2", "content": "Hello from Langroid"},
    ]


async def test_langroid_state_sent_is_echoed_as_a_snapshot(url):
    session = session_for(url)
    session.set_state({"tasks": ["old"]})
    updates = await session.send("text").collect()
    assert [u.state for u in updates if isinstance(u, StateChanged)] == [{"tasks": ["old"]}]
    assert session.state == {"tasks": ["old"]}


async def test_langroid_server_tool_result_before_its_call_ends_is_kept_in_place(url):
    """ag-ui-langroid sends TOOL_CALL_RESULT before TOOL_CALL_END (the spec puts a result
    after its call ends); tolerant, we keep the result after its call, no error."""
    session = session_for(url)
    updates = await session.send("tool").collect()
    done = only_done(updates)
    assert done.outcome == "success" and done.pending_tool_call_ids == ()
    kinds = [type(u) for u in updates if isinstance(u, ToolResult | ToolCallEnded)]
    assert kinds == [ToolResult, ToolCallEnded]  # as sent
    messages = conversation(session.messages)
    call_id = messages[1]["toolCalls"][0]["id"]
    assert messages == [
        {"role": "user", "id": "m1", "content": "tool"},
        {
            "role": "assistant",
            "id": "m2",
            "toolCalls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "add_task", "arguments": '{"title": "write tests"}'},
                },
            ],
        },
        {"role": "tool", "id": "m3", "content": "added write tests", "toolCallId": call_id},
        {"role": "assistant", "id": "m4", "content": ANSWER},
    ]


async def test_langroid_client_tool_round_trip_is_inferred_pending_then_answers(url):
    session = session_for(url, tools=[CONFIRM])
    first = only_done(await session.send("client").collect())
    [call] = session.messages[-1].tool_calls
    assert (call.function.name, call.function.arguments) == ("confirm", '{"question": "Ship it?"}')
    # RUN_FINISHED names no pending calls (0.x style) although RUN_STARTED declares 1.0
    assert (first.outcome, first.pending_tool_call_ids) == ("success", (call.id,))
    session.add_tool_result(call.id, "yes")
    second = only_done(await session.run().collect())
    assert (second.outcome, second.pending_tool_call_ids) == ("success", ())
    assert conversation(session.messages)[2] == {
        "role": "tool",
        "id": "m3",
        "content": "yes",
        "toolCallId": call.id,
    }
    last = conversation(session.messages)[-1]
    assert last["role"] == "assistant" and last["content"]


async def test_langroid_model_failure_is_a_failed_run_with_its_message(url):
    await fails_with(url, "error", "Agent error: the mock model failed", "LANGROID_ERROR")


async def test_langroid_wire_quirks_we_accept(url):
    content_type, events = await raw_events(url, run_input("tool", threadId="quirks"))
    assert content_type == "text/event-stream; charset=utf-8"
    assert events[0]["protocolVersion"] == "1.0" and "outcome" not in events[-1]
    types = [e["type"] for e in events]
    assert types[:5] == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_RESULT",  # before its call's END
        "TOOL_CALL_END",
    ]
    # the call names a parent message that is never sent
    parent = events[1]["parentMessageId"]
    assert all(e.get("messageId") != parent for e in events)


def test_board_watch_prints_the_langroid_result_after_its_call(url):
    from agui._cli.main import main

    out, err = io.StringIO(), io.StringIO()
    code = main(
        ["watch", "--url", url, "--thread", "langroid-bw"],
        stdin=io.StringIO("tool\n"),
        stdout=out,
        stderr=err,
    )
    assert (code, err.getvalue()) == (0, "")
    lines = out.getvalue().splitlines()
    body = [line for line in lines if line.split(" ", 1)[0] in ("call", "result")]
    assert body == [
        'call    (1) add_task {"title": "write tests"}',
        "result  (1) add_task → added write tests",
    ]
    assert [line for line in lines if line.startswith("done ")] == ["done    success"]
    assert not [line for line in lines if re.match(r"(error|warn) ", line)]
